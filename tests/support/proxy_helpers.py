"""Helpers for the ``mcpgym proxy`` tests: spawning the proxy, reading what it recorded."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from mcp.client.stdio import StdioServerParameters

from tests.conftest import ROOT


def proxy_params(record: Path, *options: str, upstream: list[str] | None = None, url: str | None = None):
    """Parameters that spawn ``mcpgym proxy --record RECORD OPTIONS... --upstream UPSTREAM...``."""
    target = ["--upstream-url", url] if url is not None else ["--upstream", *(upstream or [])]
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcpgym.evaluation.cli", "proxy", "--record", str(record), *options, *target],
        cwd=str(ROOT),
    )


def profile_file(folder: Path, name: str, data: dict[str, Any]) -> str:
    """Write a JSON fault profile and return its path."""
    path = folder / f"{name}.json"
    path.write_text(json.dumps(data))
    return str(path)


def recorded(record: Path) -> list[dict[str, Any]]:
    """The trajectory lines the proxy appended to RECORD/trajectories.jsonl."""
    path = record / "trajectories.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def text_of(result: Any) -> str:
    """The first text block of a CallToolResult."""
    return result.content[0].text if result.content else ""


def score_json(record: Path, *, explicit: bool = True) -> dict[str, Any]:
    """``mcpgym score RECORD --catalog RECORD/catalog.json --json`` (``explicit=False``: without
    ``--catalog``, which then defaults to the recorded one): the JSON report."""
    catalog = ["--catalog", str(record / "catalog.json")] if explicit else []
    out = subprocess.run(
        [sys.executable, "-m", "mcpgym.evaluation.cli", "score", str(record), *catalog, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)
