"""Progress when stderr is no terminal: one plain line at most every interval (done/total,
errored, elapsed, estimate), through the real ``mcpgym run`` (issue 37: a run printed nothing
for 46 s, then the table)."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcpgym.evaluation.run import progress_lines
from mcpgym.evaluation.run.progress_lines import duration_text, progress_line
from tests.support.cli_runs import cli_at_width

LINE = re.compile(
    r"^progress: (\d+)/(\d+) episodes done \((\d+) errored\), ([\d a-z]+) elapsed, "
    r"(about [\d a-z]+ left|time left unknown)$"
)


def test_the_line_and_its_estimate() -> None:
    assert progress_line(0, 72, 0, 4.2) == "progress: 0/72 episodes done (0 errored), 4 s elapsed, time left unknown"
    # 12 done in 34 s: 60 left at 34/12 s each = 170 s
    assert progress_line(12, 72, 1, 34.0) == (
        "progress: 12/72 episodes done (1 errored), 34 s elapsed, about 2 min 50 s left"
    )
    assert duration_text(3725) == "1 h 02 min" and duration_text(59.6) == "1 min 0 s"


def test_a_run_writes_progress_lines_to_a_stream_that_is_no_terminal(
    http_server: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setattr(progress_lines, "PLAIN_INTERVAL", 0.25)
    url, token = http_server
    args = ["run", "--task", "system.dark_mode", "--task", "flights.book_cheapest_berlin_paris", "--agent", "careful"]
    args += ["--agent", "overconfident", "--trials", "3", "--concurrency", "1", "--faults", "default"]
    args += ["--server", url, "--token", token, "--out", str(tmp_path / "run")]  # no -q: progress on
    start = time.monotonic()
    code, _, err = cli_at_width(args, 120, monkeypatch, capsys)
    elapsed = time.monotonic() - start
    assert code == 0, err
    lines = [ln for ln in err.splitlines() if ln.startswith("progress:")]
    assert lines, err
    assert len(lines) <= elapsed / 0.25 + 1  # at most one per interval
    parsed = [LINE.match(ln) for ln in lines]
    assert all(parsed), lines
    done = [int(m.group(1)) for m in parsed if m]
    assert done == sorted(done) and all(int(m.group(2)) == 12 for m in parsed if m)
    assert "\x1b[" not in err  # no terminal codes in a log


def test_the_default_interval_holds_in_a_subprocess_with_a_piped_stderr(tmp_path: Path) -> None:
    # the real console script, stderr a pipe: nothing before 10 s (a run this small ends sooner)
    proc = subprocess.run(
        [sys.executable, "-m", "mcpgym.evaluation.cli", "run", "--task", "system.dark_mode", "--agent", "careful"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert progress_lines.PLAIN_INTERVAL == 10.0
    assert all(LINE.match(ln) for ln in proc.stderr.splitlines() if ln.startswith("progress:"))
    assert "\x1b[" not in proc.stderr and "━" not in proc.stderr  # no live bar in a pipe
