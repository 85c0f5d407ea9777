"""docs/rl.md's OpenEnv snippet runs as written (it is marked not-run for
tests/docs/test_doc_blocks.py, which has no server to give it) against a ``mcpgym serve
--openenv`` on a free port, with OpenEnv's own client."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

MARK = "tests/docs/test_rl_openenv_snippet.py runs it as written against one -->\n```python\n"


def test_the_openenv_snippet_prints_the_reward_and_its_terms(tmp_path) -> None:
    pytest.importorskip("openenv", reason="needs the [openenv] extra (pip install 'mcpgym[openenv]')")
    from mcpgym.integrations.openenv_process import openenv_server

    text = (ROOT / "docs" / "rl.md").read_text(encoding="utf-8")
    assert MARK in text
    block = text.split(MARK, 1)[1].split("\n```", 1)[0]
    (tmp_path / "snippet.py").write_text(block, encoding="utf-8")
    with openenv_server("--max-episodes", "2") as url:
        run = subprocess.run(
            [sys.executable, "snippet.py"],
            cwd=tmp_path,
            env={**os.environ, "OPENENV_URL": url},
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert run.returncode == 0, run.stderr[-3000:]
    reward, terms = run.stdout.strip().splitlines()[-1].split(" ", 1)
    assert float(reward) == 0.0  # nothing booked: the outcome profile's 0.0
    assert "outcome" in terms
