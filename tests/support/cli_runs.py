"""Helpers for tests that run ``mcpgym`` commands in process: the exit code and output of one
command, and the arguments of the smallest real run (one scripted episode against a server)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from mcpgym.evaluation.cli import main


def cli_at_width(
    args: list[str], width: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> tuple[int, str, str]:
    """Run ``mcpgym ARGS`` at a terminal width of ``width`` columns; return (exit code, stdout, stderr)."""
    monkeypatch.setenv("COLUMNS", str(width))
    with pytest.raises(SystemExit) as exc:
        main(args)
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def one_episode_args(server: tuple[str, str], out: Path, *extra: str) -> list[str]:
    """The arguments of ``mcpgym run`` for one episode (careful, ``system.dark_mode``, 1 trial,
    no faults) against ``server`` (base URL, token), written to ``out``; ``extra`` appended."""
    url, token = server
    return [
        "run",
        "--task",
        "system.dark_mode",
        "--agent",
        "careful",
        "--trials",
        "1",
        "--faults",
        "none",
        "--server",
        url,
        "--token",
        token,
        "-q",
        "--out",
        str(out),
        *extra,
    ]


def mcpgym_process(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the installed ``mcpgym`` console script with ``args`` in ``cwd`` (a process of its
    own, as a user runs it); its exit code, stdout and stderr, within ``timeout`` seconds."""
    exe = shutil.which("mcpgym")
    assert exe, "the mcpgym console script is installed with the package"
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=timeout, check=False, cwd=cwd)
