"""The commands of docs/complexmcp.md, run as written.

Its shell blocks are marked ``not-run`` for tests/docs (they need ComplexMCP's tree, and its
apps start in about 30 s), naming this file, which runs each block whose reason names it: in
an empty directory where ``cmcp`` is the session's set-up folder (so ``setup --dir cmcp``
finds it set up and the run starts the apps from it). Commands are ``mcpgym ...`` or
``python -m mcpgym...`` lines; the run's output is checked for the replay's solved task and
for the summary of their judge beside mcpgym's scores.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT
from tests.docs.test_doc_blocks import ALL, commands

DOC = ROOT / "docs" / "complexmcp.md"
THIS = "tests/evaluation/complexmcp/test_complexmcp_docs.py"
COMMAND_TIMEOUT = 600


def blocks() -> list:
    return [b for b in ALL if b.id.startswith("docs/complexmcp.md") and b.marker == "not-run" and THIS in b.reason]


def test_the_page_has_commands_for_this_test() -> None:
    assert len(blocks()) >= 1


def test_the_commands_of_the_page_run(complexmcp_folder: Path, tmp_path: Path) -> None:
    (tmp_path / "cmcp").symlink_to(complexmcp_folder)
    outputs = []
    for block in blocks():
        for line in commands(block.body):
            argv = shlex.split(line)
            if argv[0] == "mcpgym":
                argv = [sys.executable, "-m", "mcpgym.evaluation.cli", *argv[1:]]
            elif argv[:2] == ["python", "-m"]:
                argv = [sys.executable, *argv[1:]]
            else:
                raise AssertionError(f"{block.id}: {line!r} is no mcpgym command")
            out = subprocess.run(
                argv,
                cwd=tmp_path,
                capture_output=True,
                text=True,
                timeout=COMMAND_TIMEOUT,
                env={**os.environ, "COLUMNS": "120"},
            )
            assert out.returncode == 0, (line, out.stdout[-1500:], out.stderr[-1500:])
            outputs.append(out.stdout)
    text = "\n".join(outputs)
    assert "is set up already" in text
    assert "complexmcp_03 complexmcp-replay trial 0: completed, solved True" in text
    assert "| accuracy | completion | misbehave rate | verification | recovery | defeatism" in text
