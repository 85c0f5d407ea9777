"""Figure ``tool_kinds``: how often the no-catalog tool classifier gets a real server's tool kind right.

``tests/data/tool_kinds/`` holds the ``tools/list`` answers of public MCP servers installable
from PyPI and npm (``<server>.json``: ``{"server", "package", "registry", "version",
"licence", "tools": [{"name", "description", "input_schema", "annotations"}]}``, captured by
``scripts/capture_tool_lists.py``) and ``labels.jsonl``: one line per tool, ``{"server",
"tool", "kind", "reason"}``, the kind (:class:`mcpgym.kernel.spec.ToolKind`) labelled by hand
from the name, description and schema before any classifier ran on them (docs/labelling.md,
"Tool kinds of real servers"). mcpgym's own tools count too, under the server ``mcpgym``,
their catalog hidden: each is classified as an unknown server's tool would be, and its true
kind is the one its ``@tool`` declares (mcpgym's catalog: ground truth nobody wrote by hand).

Each tool is classified by :func:`classify_listed` (the classifier of
:mod:`mcpgym.evaluation.scoring.tool_catalog` with no catalog entry, given every piece of
evidence its signature takes: the description, and the annotations and input schema when it
accepts them). The figure is the share of tools whose kind equals the label, in percent
(target at least :data:`TARGET`); ``details`` has the share per server, the confusion counts
and every miss. A read classified as a write invents a verification duty, so
``read_as_write`` must be 0 (:data:`MAX_READ_AS_WRITE`): it fails the figure like a missed
target. ``unknown`` is never right, but it is no read-as-write.
"""

from __future__ import annotations

import inspect
import json
import os
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from mcpgym.benchmarks.harness import Figure, Settings

TARGET = 95.0
"""Overall share of tools classified right, percent."""
MAX_READ_AS_WRITE = 0
"""Most reads the classifier may call writes."""
TOOL_KINDS_ENV = "MCPGYM_TOOL_KINDS_DIR"
"""Environment variable naming another tool-kinds folder (default: the repository's)."""


def tool_kinds_dir() -> Path:
    """The folder of captured lists and labels: ``$MCPGYM_TOOL_KINDS_DIR``, else the
    repository's ``tests/data/tool_kinds``."""
    env = os.environ.get(TOOL_KINDS_ENV)
    return Path(env) if env else Path(__file__).resolve().parent.parent / "tests" / "data" / "tool_kinds"


def classify_listed(tool: dict[str, Any]) -> str:
    """The kind the no-catalog classifier gives one listed tool (``{"name", "description",
    "input_schema", "annotations"}``), as a :class:`~mcpgym.kernel.spec.ToolKind` value.
    Annotations and the input schema are passed when the classifier's signature takes them
    (keywords ``annotations`` / ``input_schema``)."""
    from mcpgym.evaluation.scoring.tool_catalog import classify_tool

    params = inspect.signature(classify_tool).parameters
    extra: dict[str, Any] = {}
    if "annotations" in params:
        extra["annotations"] = tool.get("annotations")
    if "input_schema" in params:
        extra["input_schema"] = tool.get("input_schema")
    entry = classify_tool(str(tool["name"]), tool.get("description") or None, **extra)
    return str(entry.kind)


def labelled_tools(folder: Path) -> list[dict[str, Any]]:
    """Every labelled tool of ``folder``: ``{"server", "tool", "kind", "listed": {...}}``.

    Raises:
        FileNotFoundError: without ``labels.jsonl``. ValueError: a label naming a server or
            tool that no captured list holds, or a listed tool without a label.
    """
    labels = [json.loads(line) for line in (folder / "labels.jsonl").read_text(encoding="utf-8").splitlines() if line]
    listed: dict[tuple[str, str], dict[str, Any]] = {}
    for path in sorted(folder.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        for t in doc["tools"]:
            listed[(str(doc["server"]), str(t["name"]))] = t
    out = []
    seen = set()
    for rec in labels:
        key = (str(rec["server"]), str(rec["tool"]))
        if key not in listed:
            raise ValueError(f"labels.jsonl: {key[0]}/{key[1]} is labelled but no captured list holds it")
        seen.add(key)
        out.append({"server": key[0], "tool": key[1], "kind": str(rec["kind"]), "listed": listed[key]})
    missing = sorted(set(listed) - seen)
    if missing:
        raise ValueError(f"labels.jsonl: {len(missing)} listed tool(s) without a label, e.g. {missing[0]}")
    return out


def mcpgym_tools() -> list[dict[str, Any]]:
    """mcpgym's own tools as ``tools/list`` shows them, less ``_meta`` (which names the kind),
    each with its true kind from the catalog (server ``mcpgym``)."""
    from mcpgym.kernel.app import get_app, load_apps
    from mcpgym.kernel.world import normalise_apps
    from mcpgym.tools.mcp_bridge import mcp_tool

    out = []
    for app in normalise_apps(sorted(load_apps())):
        for spec in get_app(app).tools.values():
            wire = mcp_tool(spec).model_dump(by_alias=True, exclude_none=True)
            listed = {
                "name": wire["name"],
                "description": wire.get("description", ""),
                "input_schema": wire.get("inputSchema"),
                "annotations": wire.get("annotations"),
            }
            out.append({"server": "mcpgym", "tool": spec.name, "kind": str(spec.kind), "listed": listed})
    return out


def compare(tools: list[dict[str, Any]]) -> dict[str, Any]:
    """Classify every tool and compare with its label (module docstring).

    Returns:
        ``{"tools", "right", "share", "read_as_write", "per_server": {server: {"tools",
        "right", "share", "read_as_write", "unknown"}}, "confusion": {"label->got": n},
        "misses": [{"server", "tool", "label", "got"}]}``; shares in percent.
    """
    per: dict[str, Counter[str]] = defaultdict(Counter)
    confusion: Counter[str] = Counter()
    misses = []
    for t in tools:
        got = classify_listed(t["listed"])
        want = t["kind"]
        c = per[t["server"]]
        c["tools"] += 1
        c["right"] += got == want
        c["read_as_write"] += want == "read" and got == "write"
        c["unknown"] += got == "unknown"
        confusion[f"{want}->{got}"] += 1
        if got != want:
            misses.append({"server": t["server"], "tool": t["tool"], "label": want, "got": got})

    def share(right: int, n: int) -> float:
        return round(100 * right / n, 1) if n else 0.0

    n = sum(c["tools"] for c in per.values())
    right = sum(c["right"] for c in per.values())
    return {
        "tools": n,
        "right": right,
        "share": share(right, n),
        "read_as_write": sum(c["read_as_write"] for c in per.values()),
        "per_server": {
            s: {
                "tools": c["tools"],
                "right": c["right"],
                "share": share(c["right"], c["tools"]),
                "read_as_write": c["read_as_write"],
                "unknown": c["unknown"],
            }
            for s, c in sorted(per.items())
        },
        "confusion": dict(sorted(confusion.items())),
        "misses": misses,
    }


def tool_kinds(settings: Settings) -> Figure:
    """Figure: the share of real servers' tools (and mcpgym's own, catalog hidden) whose
    no-catalog kind equals the hand label; a read classified as a write fails it.
    Unavailable, saying why, without ``labels.jsonl`` (an installed wheel has no ``tests/``)."""
    folder = tool_kinds_dir()
    title = "tool kinds without a catalog vs hand labels (real MCP servers + mcpgym's own)"
    if not (folder / "labels.jsonl").is_file():
        return Figure(
            name="tool_kinds",
            title=title,
            value=None,
            unit="% tools",
            target=TARGET,
            op=">=",
            available=False,
            note=f"no labels.jsonl in {folder} (set {TOOL_KINDS_ENV})",
        )
    res = compare(labelled_tools(folder) + mcpgym_tools())
    failed = {"read_as_write": res["read_as_write"]} if res["read_as_write"] > MAX_READ_AS_WRITE else {}
    return Figure(
        name="tool_kinds",
        title=title,
        value=res["share"],
        unit="% tools",
        target=TARGET,
        op=">=",
        baseline=f"hand labels ({len(res['per_server']) - 1} servers) and mcpgym's catalog",
        ratio=round(res["share"] / 100, 3),
        details={
            "tools": res["tools"],
            "right": res["right"],
            "read_as_write": res["read_as_write"],
            "per_server": res["per_server"],
            "confusion": res["confusion"],
            "failed_subtargets": failed,
            "misses": res["misses"],
        },
        note="" if not failed else f"{res['read_as_write']} read(s) classified as write(s)",
    )


__all__ = [
    "MAX_READ_AS_WRITE",
    "TARGET",
    "TOOL_KINDS_ENV",
    "classify_listed",
    "compare",
    "labelled_tools",
    "mcpgym_tools",
    "tool_kinds_dir",
    "tool_kinds",
]
