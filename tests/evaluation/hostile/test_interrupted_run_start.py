"""Ctrl-C early in ``mcpgym run`` (the hostile pass of issue 36): the interrupted run's
directory can be used again. Interrupted once its directory is claimed, once its server's log
exists, or once its manifest is written, the rerun into the same ``-o`` works; the interrupt's
message names ``--resume`` only when a resume can work (the manifest, the run's plan, exists),
and a ``--resume`` refused for want of one says what to do. Nothing is left that the next run
takes for a file mcpgym did not write (a ``scores.json`` written before the manifest was)."""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.cli_runs import mcpgym_process

ARGS = ["run", "--task", "system.dark_mode", "--agent", "careful", "--trials", "1", "--faults", "none", "-q"]


def _interrupt_when(out: Path, name: str) -> tuple[int, str]:
    """Start a run into ``out`` and send SIGINT as soon as ``out/name`` exists."""
    exe = shutil.which("mcpgym")
    assert exe
    proc = subprocess.Popen([exe, *ARGS, "-o", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (out / name).exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    return proc.returncode, err


@pytest.mark.parametrize("moment", [".mcpgym-run", "server.log", "manifest.json"])
def test_a_run_interrupted_at_its_start_can_be_run_again_into_the_same_out(tmp_path: Path, moment: str) -> None:
    out = tmp_path / "run"
    code, err = _interrupt_when(out, moment)
    if code == 0:
        pytest.skip(f"the run finished before the interrupt at {moment}")  # a very fast machine
    assert code == 130 and "Traceback" not in err, err
    planned = (out / "manifest.json").is_file()
    assert ("--resume" in err) == planned, err  # named only when a resume can work
    assert not (out / "scores.json").exists() or planned, "a scores.json written before the run's plan"
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    again = mcpgym_process(*ARGS, "-o", str(copy), *(["--resume"] if planned else []))  # what the interrupt said to do
    assert again.returncode == 0, again.stderr
    resumed = mcpgym_process(*ARGS, "-o", str(out), "--resume")
    if resumed.returncode != 0:  # a run dir with files but no plan: refused, saying what to do
        assert not planned and resumed.returncode == 2 and "has no manifest.json" in resumed.stderr, resumed.stderr
        assert "Start it again with the options it was started with" in resumed.stderr
    for done in (copy, out) if resumed.returncode == 0 else (copy,):
        assert (done / "trajectories.jsonl.zst").is_file() and (done / "scores.json").is_file()
