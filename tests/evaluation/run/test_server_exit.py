"""A server that goes away mid-run ends the run with one message naming its exit (issue 29),
not one "could not be run" line per remaining episode.

The real CLI runs in a subprocess with a spawned server (or ``--server``); once the first
episode is on disk the server is stopped with a signal.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from mcpgym.evaluation.run.executors import describe_exit
from tests.conftest import ROOT, spawn_http_server

RUN = [sys.executable, "-m", "mcpgym.evaluation.cli", "run", "--suite", "smoke", "--trials", "3", "--quiet"]


def wait_for_first_episode(out: Path, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 120
    traj = out / "trajectories.jsonl.zst"
    while not (traj.exists() and traj.stat().st_size > 0):
        assert proc.poll() is None, proc.communicate()[0]
        assert time.monotonic() < deadline, "no episode finished in 120 s"
        time.sleep(0.05)


def children(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True, check=False).stdout
    return [int(p) for p in out.split()]


def test_a_spawned_server_that_exits_ends_the_run_with_one_message(tmp_path: Path) -> None:
    """SIGINT, as in the issue (SIGKILL and other exits are named by :func:`describe_exit`)."""
    sig, says = signal.SIGINT, "128 + SIGINT"
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [*RUN, "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT
    )
    try:
        wait_for_first_episode(out, proc)
        [server] = children(proc.pid)
        os.kill(server, sig)
        text, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    lines = [ln for ln in text.splitlines() if ln.strip()]
    assert proc.returncode == 2 and len(lines) == 1, text
    assert "the mcpgym server exited during the run" in lines[0] and says in lines[0], text
    assert "could not be run" not in text
    assert (out / "trajectories.jsonl.zst").stat().st_size > 0  # what finished is kept


def test_a_given_server_that_goes_away_ends_the_run_with_one_message(tmp_path: Path) -> None:
    server, url, token = spawn_http_server()
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [*RUN, "--out", str(out), "--server", url, "--token", token],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=ROOT,
    )
    try:
        wait_for_first_episode(out, proc)
        server.kill()
        server.wait(timeout=10)
        text, _ = proc.communicate(timeout=120)
    finally:
        for p in (proc, server):
            if p.poll() is None:
                p.kill()
    lines = [ln for ln in text.splitlines() if ln.strip()]
    assert proc.returncode == 2 and len(lines) == 1, text
    assert f"the mcpgym server at {url} stopped accepting connections" in lines[0], text


def test_exit_statuses_in_words() -> None:
    assert describe_exit(3) == "exit code 3"
    assert describe_exit(-9) == "killed by SIGKILL"
    assert describe_exit(130).startswith("exit code 130: 128 + SIGINT")
    assert describe_exit(-200) == "killed by signal 200"
