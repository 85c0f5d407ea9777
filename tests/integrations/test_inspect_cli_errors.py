"""The README's Inspect command line as a newcomer meets it (issue 37): a typo in a ``-T``
argument is one clear error line and exit 2, not Inspect's 253-line traceback; the ``inspect``
extra brings what the line's ``--model openai/...`` needs."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_a_mistyped_suite_is_one_line(tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai", reason="needs the [inspect] extra")
    inspect = Path(sys.executable).parent / "inspect"
    assert inspect.is_file(), "the inspect extra installs Inspect's console script next to Python"
    done = subprocess.run(
        [str(inspect), "eval", "mcpgym/mcpgym_task", "-T", "suite=smok", "--model", "mockllm/model"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert lines == [
        "error: mcpgym/mcpgym_task: unknown suite 'smok'; known suites: smoke, baseline, core, full "
        "(-T NAME=VALUE sets an argument)"
    ], done.stderr[-2000:]


def test_the_inspect_extra_has_the_openai_package() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert any(req.split(">")[0].split("=")[0].strip() == "openai" for req in extras["inspect"])
