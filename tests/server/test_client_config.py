"""The README's ``mcpServers`` snippet works as written (issue 16): the server is launched the
way Claude Desktop or an IDE would launch it, with the snippet's args, the absolute path of
the ``mcpgym`` console script, cwd ``/`` and an empty environment, and a tool is called
through the SDK client."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import mcp.client.stdio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.conftest import ROOT

CONSOLE_SCRIPT = Path(sys.executable).parent / "mcpgym"


def readme_snippet() -> dict:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Use mcpgym from an MCP client", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```json\n(.*?)```", section, flags=re.S)
    configs = [json.loads(b) for b in blocks if '"mcpServers"' in b]
    assert len(configs) == 1, "the section must hold exactly one mcpServers snippet"
    return configs[0]["mcpServers"]["mcpgym"]


def children_environ() -> list[bytes]:
    """The environments of this process's children that run ``mcpgym serve``."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
            if ppid == os.getpid() and str(CONSOLE_SCRIPT).encode() in cmdline and b"serve" in cmdline:
                found.append((proc / "environ").read_bytes())
        except (OSError, IndexError, ValueError):
            continue
    return found


def test_snippet_is_well_formed():
    entry = readme_snippet()
    assert set(entry) == {"command", "args"}
    assert entry["command"].startswith("/") and entry["command"].endswith("/bin/mcpgym")
    assert entry["args"][:3] == ["serve", "--transport", "stdio"]
    assert all(isinstance(a, str) for a in entry["args"])


async def test_server_starts_from_the_snippet_with_empty_environment(monkeypatch):
    entry = readme_snippet()
    assert CONSOLE_SCRIPT.is_file(), f"no console script at {CONSOLE_SCRIPT}: install with pip install -e ."
    # The SDK adds HOME, PATH, ... to the child's environment; a client may not. Launch with none.
    monkeypatch.setattr(mcp.client.stdio, "get_default_environment", lambda: {})
    params = StdioServerParameters(command=str(CONSOLE_SCRIPT), args=entry["args"], cwd="/", env={})
    async with Client(params) as client:
        assert children_environ() == [b""]
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"shop_get_item", "talk_send_message", "system_get_wallet_balance"} <= names
        # the snippet's fault profile may fail a call (seeded): a retryable error, then success
        for _ in range(6):
            wallet = await client.call_tool("system_get_wallet_balance", {})
            if not wallet.is_error:
                break
            error = json.loads(wallet.content[0].text)["error"]
            assert error["retryable"] is True, error
            if error["retry_after"]:
                await client.call_tool("system_wait", {"seconds": error["retry_after"]})
        assert not wallet.is_error and wallet.structured_content["balance_cents"] > 0
        missing = await client.call_tool("shop_get_item", {"item_id": "no-such-item"})
        assert missing.is_error
