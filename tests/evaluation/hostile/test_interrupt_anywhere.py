"""Ctrl-C (SIGINT) at any moment of a ``mcpgym`` command, from its first imports on, prints one
line, ``interrupted``, and exits 130: never a Python traceback (the hostile pass of issue 36
found one while the command line was still being imported)."""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def before_mcpgym(err: str) -> bool:
    """The interrupt landed before mcpgym's first line ran: in Python's own start-up (its
    ``site`` import: "Fatal Python error: init_import_site") or pip's console script, a
    traceback with no frame of this repository's code (a loaded machine starts Python slowly,
    so even 0.1 s can be that early). Nothing of mcpgym's can answer it."""
    frames = re.findall(r'File "([^"]+)"', err)
    ours = [f for f in frames if f.startswith(str(ROOT)) and "/.venv" not in f and "/bin/" not in f]
    return "init_import_site" in err or (bool(frames) and not ours)


# Seconds after start: the command line's imports (about 2 s), then the command. The first
# ~0.05 s are Python's own start-up and pip's two-line console script, before any line of mcpgym.
DELAYS = (0.1, 0.2, 0.3, 0.6, 1.0, 1.5)


@pytest.mark.parametrize("command", [["tasks"], ["tools", "--app", "shop"]])
def test_an_interrupt_at_any_moment_is_one_line_and_exit_130(command: list[str]) -> None:
    exe = shutil.which("mcpgym")
    assert exe, "the mcpgym console script is installed with the package"
    seen = []
    for delay in DELAYS:
        proc = subprocess.Popen([exe, *command], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(delay)
        if proc.poll() is not None:
            continue  # done before the interrupt: nothing to check at this delay
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        if before_mcpgym(err):
            continue  # Python's own start-up: no line of mcpgym had run
        assert "Traceback" not in err, (delay, err)
        if proc.returncode == 130:
            assert err.strip().splitlines() == ["interrupted"], (delay, err)
            seen.append(delay)
        else:  # only once the command is done: then it may exit as it ends
            assert proc.returncode in (0, -signal.SIGINT), (delay, proc.returncode, err)
    assert seen, "no delay interrupted the command"


def test_an_interrupt_while_typer_builds_the_command_is_one_line(monkeypatch, capsys) -> None:
    """CI once sent the SIGINT while typer was building the command from the functions' type
    hints, before ``main``'s handlers: the traceback reached the user."""
    import typer

    from mcpgym.evaluation.cli import main

    def interrupted(_app: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(typer.main, "get_command", interrupted)
    with pytest.raises(SystemExit) as exc:
        main(["tasks"])
    assert exc.value.code == 130
    assert capsys.readouterr().err.strip().splitlines() == ["interrupted"]


FINALIZER_INTERRUPTED = """
import time
from mcpgym.evaluation.cli import main

class Finalized:
    def __del__(self):
        raise KeyboardInterrupt  # what a SIGINT landing inside a finalizer looks like

def command():
    Finalized()  # collected at once: Python cannot raise from __del__ and calls the unraisable hook
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # the interrupt is raised again here, in the main thread
        time.sleep(0.01)
    print("not interrupted")

from mcpgym.evaluation.cli import app
app.command(name="finalized")(command)
main(["finalized"])
"""


def test_an_interrupt_inside_a_finalizer_is_one_line_and_exit_130() -> None:
    """A Ctrl-C inside a finalizer (CI saw "Exception ignored in: ... KeyboardInterrupt" with a
    traceback) is raised again in the main thread: one line, ``interrupted``, exit 130."""
    import sys

    proc = subprocess.run([sys.executable, "-c", FINALIZER_INTERRUPTED], capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "not interrupted" not in proc.stdout
    assert proc.returncode == 130, (proc.returncode, proc.stderr)
    assert proc.stderr.strip().splitlines() == ["interrupted"], proc.stderr


def test_only_an_interrupt_before_mcpgyms_first_line_is_passed_over() -> None:
    site = "\n".join(
        [
            "Fatal Python error: init_import_site: Failed to import the site module",
            "Traceback (most recent call last):",
            '  File "<frozen importlib._bootstrap>", line 1176, in _find_and_load',
            "KeyboardInterrupt",
        ]
    )
    ours = "\n".join(
        [
            "Traceback (most recent call last):",
            f'  File "{ROOT}/.venv/bin/mcpgym", line 6, in <module>',
            f'  File "{ROOT}/evaluation/cli/app.py", line 130, in main',
            "KeyboardInterrupt",
        ]
    )
    assert before_mcpgym(site)
    assert not before_mcpgym(ours)
    assert not before_mcpgym("interrupted\n")
