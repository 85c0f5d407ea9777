"""Crash safety of ``mcpgym run``: SIGKILL at random points, then ``--resume``.

The runner is killed ten times at seeded random moments (start-up, mid-episode, while
writing scores or the report), each time resumed in the same ``--out``. After every kill
``trajectories.jsonl.zst`` holds only whole lines (whole zstd frames) (each a complete JSON trajectory, no
duplicate episode) and ``scores.json``, when present, is complete JSON. A last ``--resume``
completes the run, and its ``scores.json`` equals that of an uninterrupted run of the same
plan. A runner that spawned its own server leaves no orphan server behind when killed.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpgym.evaluation.records.compressed import decompress_frames
from tests.conftest import ROOT
from tests.support.servers import HttpServer, spawn_server

TASKS = ("news.bookmark_latest_tech", "office.label_invoice_important")
AGENTS = ("careful", "overconfident")
TRIALS = 2
EPISODES = len(TASKS) * len(AGENTS) * TRIALS
KILLS = 10
SEED = 20240601


def run_args(out: Path, *, resume: bool, server: HttpServer | None) -> list[str]:
    """``mcpgym run`` for the fixed plan into ``out``."""
    args = [
        sys.executable,
        "-m",
        "mcpgym.evaluation.cli",
        "run",
        "--trials",
        str(TRIALS),
        "--faults",
        "default",
        "--concurrency",
        "2",
        "--out",
        str(out),
        "--quiet",
    ]
    for agent in AGENTS:
        args += ["--agent", agent]
    for task in TASKS:
        args += ["--task", task]
    if server is not None:
        args += ["--server", server.url, "--token", server.token]
    if resume:
        args.append("--resume")
    return args


def whole_lines(path: Path) -> list[dict[str, Any]]:
    """The trajectories of ``path``, asserting the file holds only whole lines of JSON."""
    if not path.exists():
        return []
    data, _, torn = decompress_frames(path.read_bytes())  # one zstd frame per line
    assert not torn, "torn last frame"
    assert not data or data.endswith(b"\n"), f"torn last line: ...{data[-80:]!r}"
    rows = [json.loads(line) for line in data.splitlines()]
    keys = [(r["agent"], r["task_id"], r["trial"]) for r in rows]
    assert len(keys) == len(set(keys)), "an episode was written twice"
    assert all(isinstance(r.get("scores"), dict) and r.get("steps") is not None for r in rows)
    return rows


@pytest.fixture(scope="module")
def server() -> Iterator[HttpServer]:
    """One server for every run of this module (the runner's ``--server``): no start-up per run."""
    srv = spawn_server()
    try:
        yield srv
    finally:
        srv.stop()


def test_sigkill_ten_times_then_resume_gives_the_uninterrupted_scores(
    server: HttpServer, tmp_path: Path, figures: dict[str, str]
) -> None:
    started = time.perf_counter()
    reference = tmp_path / "reference"
    # The uninterrupted run goes on alongside the killed ones (episodes are independent).
    uninterrupted = subprocess.Popen(
        run_args(reference, resume=False, server=server),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    rng = random.Random(SEED)
    out = tmp_path / "killed"
    kills: list[str] = []
    attempts, written_after_kill, upper = 0, [], 2.5
    while len(kills) < KILLS:
        attempts += 1
        assert attempts <= 3 * KILLS, "the runs kept finishing before the kill"
        on_disk = count_lines(out / "trajectories.jsonl.zst")
        # Half the kills right after the k-th new trajectory line (mid-run, other episodes in
        # flight), half at a random time (start-up, oracle runs, scores and report writing).
        if on_disk < EPISODES - 1 and rng.random() < 0.5:
            trigger = ("line", min(EPISODES - 1, on_disk + rng.randint(1, 3)), rng.uniform(0.0, 0.15))
        else:
            trigger = ("time", rng.uniform(0.2, upper), 0.0)
        proc = subprocess.Popen(
            run_args(out, resume=attempts > 1, server=server),
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if kill_when(proc, out / "trajectories.jsonl.zst", trigger):
            kills.append(f"{trigger[0]}:{trigger[1]:.4g}")
            rows = whole_lines(out / "trajectories.jsonl.zst")
            assert {(r["agent"], r["task_id"], r["trial"]) for r in rows} <= set(planned_episodes())
            if len(rows) == on_disk and len(rows) < EPISODES and trigger[0] == "time":
                upper = min(upper * 1.5, 15.0)  # a slow machine: give the next run longer
            written_after_kill.append(len(rows))
            if (out / "scores.json").exists():
                json.loads((out / "scores.json").read_text())  # atomic: old or new, never torn
        elif trigger[0] == "time":
            upper = max(0.5, 0.7 * trigger[1])  # it finished first: kill the next one sooner
    final = subprocess.run(
        run_args(out, resume=True, server=server), cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert final.returncode == 0, final.stderr[-2000:]
    assert uninterrupted.wait(timeout=600) == 0, uninterrupted.stderr.read()[-2000:]
    expected = json.loads((reference / "scores.json").read_text())
    assert {(r["agent"], r["task_id"], r["trial"]) for r in whole_lines(reference / "trajectories.jsonl.zst")} == set(
        planned_episodes()
    )
    rows = whole_lines(out / "trajectories.jsonl.zst")
    figures["crash safety"] = (
        f"{len(kills)} SIGKILLs ({', '.join(kills)}; {attempts - len(kills)} runs finished first); "
        f"episodes on disk after each kill: {written_after_kill}; {time.perf_counter() - started:.1f} s in all"
    )
    assert {(r["agent"], r["task_id"], r["trial"]) for r in rows} == set(planned_episodes())
    assert json.loads((out / "scores.json").read_text()) == expected
    assert len(kills) == KILLS
    assert max(written_after_kill) > 0  # some kills landed after episodes had been written...
    assert min(written_after_kill) < EPISODES  # ...and some before the run was complete


def count_lines(path: Path) -> int:
    """Newlines in ``path`` (0 when it does not exist)."""
    try:
        return decompress_frames(path.read_bytes())[0].count(b"\n")
    except FileNotFoundError:
        return 0


def kill_when(proc: subprocess.Popen, trajectories: Path, trigger: tuple[str, float, float]) -> bool:
    """SIGKILL ``proc`` on ``trigger`` and return True; False when it exits first.

    ``("time", seconds, _)``: after that many seconds. ``("line", n, extra)``: ``extra`` seconds
    after ``trajectories`` holds ``n`` lines.
    """
    kind, value, extra = trigger
    started = time.monotonic()
    while proc.poll() is None:
        if kind == "time" and time.monotonic() - started >= value:
            break
        if kind == "line" and count_lines(trajectories) >= value:
            time.sleep(extra)
            break
        assert time.monotonic() - started < 300, "the run neither progressed nor finished"
        time.sleep(0.01)
    if proc.poll() is not None:
        return False
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    return True


def planned_episodes() -> list[tuple[str, str, int]]:
    """(agent, task, trial) of every episode of the plan."""
    return [(a, t, i) for a in AGENTS for t in TASKS for i in range(TRIALS)]


def _cmdline(pid: int) -> bytes:
    """The command line of ``pid`` (empty once it is gone)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _children(pid: int) -> list[int]:
    """Pids of the live processes whose parent is ``pid`` (from /proc/PID/stat)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ")"
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 1 and fields[1] == str(pid):
            found.append(int(proc.name))
    return found


def test_a_killed_runner_leaves_no_orphan_server(tmp_path: Path) -> None:
    out = tmp_path / "spawned"
    proc = subprocess.Popen(
        run_args(out, resume=False, server=None), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 120
    server_pids: list[int] = []
    while not server_pids:  # the server the runner spawned: its child running `serve`
        assert time.monotonic() < deadline and proc.poll() is None, "the runner never started its server"
        time.sleep(0.05)
        # ...once it has exec'd the server (PR_SET_PDEATHSIG is set between fork and exec).
        server_pids = [p for p in _children(proc.pid) if b"serve" in _cmdline(p)]
    time.sleep(1.0)  # let the run get under way: episodes in flight when the runner dies
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    deadline = time.monotonic() + 15
    while [p for p in server_pids if b"serve" in _cmdline(p)]:
        assert time.monotonic() < deadline, f"orphan server(s) {server_pids} outlived the killed runner"
        time.sleep(0.1)
    whole_lines(out / "trajectories.jsonl.zst")
