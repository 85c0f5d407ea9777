"""The README's ``mcpServers`` entry for ``mcpgym proxy`` works as written (issue 28): launched
the way Claude Desktop launches a server (the entry's command and args, cwd ``/``, an empty
environment), with the placeholder paths under ``/home/you`` pointed at this virtual
environment and a temporary repository; a tool is called through the SDK client, and the
README's ``mcpgym score`` line scores the session it recorded."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import mcp.client.stdio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.conftest import ROOT
from tests.server.test_proxy_git import make_repo

BIN = Path(sys.executable).parent
SECTION = "## Faults in front of your own server"


def section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return text.split(SECTION, 1)[1].split("\n## ", 1)[0]


def readme_entry() -> dict:
    blocks = re.findall(r"```json\n(.*?)```", section(), flags=re.S)
    configs = [json.loads(b) for b in blocks if '"mcpServers"' in b]
    assert len(configs) == 1, "the section must hold exactly one mcpServers snippet"
    (entry,) = configs[0]["mcpServers"].values()
    return entry


def localise(text: str, repo: Path, runs: Path) -> str:
    """The README's placeholder paths pointed at this machine."""
    return (
        text.replace("/home/you/mcpgym/.venv/bin", str(BIN))
        .replace("/home/you/mcpgym-runs", str(runs))
        .replace("/home/you/project", str(repo))
    )


def test_the_entry_is_well_formed():
    entry = readme_entry()
    assert set(entry) == {"command", "args"} and entry["command"].endswith("/bin/mcpgym")
    args = entry["args"]
    assert args[0] == "proxy" and "--upstream" in args and args.index("--record") < args.index("--upstream")
    assert args[args.index("--upstream") + 1].endswith("/bin/mcp-server-git")


@pytest.mark.skipif(shutil.which("mcp-server-git") is None, reason="mcp-server-git is not installed")
async def test_the_entry_runs_from_root_with_an_empty_environment_and_its_session_scores(tmp_path, monkeypatch):
    repo, runs = make_repo(tmp_path / "project"), tmp_path / "runs"
    entry = readme_entry()
    command = localise(entry["command"], repo, runs)
    args = [localise(a, repo, runs) for a in entry["args"]]
    monkeypatch.setattr(mcp.client.stdio, "get_default_environment", lambda: {})
    async with Client(StdioServerParameters(command=command, args=args, cwd="/", env={})) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"git_status", "git_commit", "git_log"} <= names
        for _ in range(4):  # the entry's default profile may fault a call (seeded): retry it
            status = await client.call_tool("git_status", {"repo_path": str(repo)})
            if not status.is_error:
                break
        assert not status.is_error and "working tree clean" in status.content[0].text
    (score_line,) = re.findall(r"```bash\n(mcpgym score .*?)\n```", section())
    argv = shlex.split(localise(score_line, repo, runs))
    out = subprocess.run([str(BIN / "mcpgym"), *argv[1:], "--json"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    (episode,) = json.loads(out.stdout)["episodes"]
    assert episode["faults"] == "ledger" and episode["scores"]["tool_calls"] >= 1
    assert episode["scores"]["heuristic_tools"] == []  # every git tool classified by its annotations
