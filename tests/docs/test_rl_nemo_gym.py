"""docs/rl.md's NeMo Gym snippet runs as written in ``.venv-nemo`` (it cannot run in mcpgym's
venv: NeMo Gym 0.4 needs mcp<2) against the ``mcpgym serve`` of the block before it, and
prints what its comments say. Skips without ``.venv-nemo`` (fails under ``MCPGYM_REQUIRE_NEMO=1``)."""

from __future__ import annotations

import os
import re
import subprocess

from tests.conftest import ROOT, spawn_http_server
from tests.support.nemo_venv import nemo_python

MARKER = "<!-- not-run: runs in .venv-nemo against a live server; tests/docs/test_rl_nemo_gym.py runs it there -->"


def _snippet() -> str:
    text = (ROOT / "docs" / "rl.md").read_text(encoding="utf-8")
    after = text.split(MARKER, 1)[1]
    match = re.match(r"\s*```python\n(.*?)^```", after, re.S | re.M)
    assert match, "the NeMo Gym block follows its marker"
    return match.group(1)


def test_the_nemo_gym_snippet_prints_what_it_says() -> None:
    python = nemo_python()
    code = _snippet()
    wanted = [line.split("#", 1)[1].split(":")[0].strip() for line in code.splitlines() if "print(" in line]
    proc, url, token = spawn_http_server("--faults", "harsh", "--max-episodes", "64")
    try:
        done = subprocess.run(
            [str(python), "-c", code.replace("http://127.0.0.1:8765", url)],
            env={**os.environ, "MCPGYM_TOKEN": token},
            capture_output=True,
            text=True,
            timeout=300,
            cwd=ROOT,
        )
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == wanted
