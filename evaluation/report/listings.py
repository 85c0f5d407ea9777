"""What ``mcpgym tools`` and ``mcpgym tasks`` print: the tool catalog and a suite's tasks,
fitted to the terminal width (:mod:`mcpgym.evaluation.report.tables`).

``tools`` prints one line per tool by default (name, kind, the first sentence of its
description cut at a word to fit the line) and, with ``--full``, one block per tool with
its whole description, arguments, resources, preconditions, remedies and alternatives.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from rich.cells import cell_len
from rich.console import Console

from mcpgym.evaluation.report.tables import Column, pack_fields, print_table, wrap_words
from mcpgym.kernel.wording import counted

ELLIPSIS = "…"


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` (up to the first ``. `` / ``: `` followed by more text), on one line."""
    flat = " ".join((text or "").split())
    match = re.search(r"(?<=[.!?])\s", flat)
    return flat[: match.start()] if match else flat


def cut_at_word(text: str, width: int) -> str:
    """``text`` if it fits ``width`` cells, else its longest prefix ending at a word followed by ``…``
    ("" when not even one word fits)."""
    if cell_len(text) <= width:
        return text
    out = ""
    for word in text.split():
        candidate = f"{out} {word}" if out else word
        if cell_len(candidate) + 1 > width:
            break
        out = candidate
    return out.rstrip(",;:") + ELLIPSIS if out else ""


def print_tools_compact(console: Console, rows: Sequence[dict[str, Any]], width: int | None = None) -> None:
    """One line per tool: name, kind and as much of the description's first sentence as fits.

    Args:
        rows: catalog rows (:func:`mcpgym.tools.catalog.catalog`).
        width: line width in cells (default: the console's).
    """
    width = width or console.width
    name_w = max((cell_len(r["name"]) for r in rows), default=4)
    kind_w = max((cell_len(r["kind"]) for r in rows), default=4)
    room = width - name_w - kind_w - 4
    console.print(
        f"{counted(len(rows), 'tool')} (mcpgym tools --full for arguments, remedies and more)",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    for r in rows:
        line = f"{r['name']:<{name_w}}  {r['kind']:<{kind_w}}"
        summary = cut_at_word(first_sentence(r.get("description") or ""), room) if room >= 12 else ""
        console.print(f"{line}  {summary}".rstrip(), markup=False, highlight=False, soft_wrap=True)


def _arguments(schema: dict[str, Any] | None) -> list[str]:
    props = (schema or {}).get("properties") or {}
    required = set((schema or {}).get("required") or [])
    out = []
    for name, spec in props.items():
        kind = spec.get("type") if isinstance(spec, dict) else None
        kind = "/".join(kind) if isinstance(kind, list) else (kind or "any")
        out.append(f"{name} ({kind}{', required' if name in required else ''})")
    return out


def print_tools_full(console: Console, rows: Sequence[dict[str, Any]], width: int | None = None) -> None:
    """One block per tool: ``name (app, kind)``, its description wrapped, then its arguments,
    resources, preconditions, remedies (per error code) and alternatives as packed fields."""
    width = width or console.width

    def out(line: str) -> None:
        console.print(line, markup=False, highlight=False, soft_wrap=True)

    out(counted(len(rows), "tool"))
    for r in rows:
        out("")
        out(f"{r['name']} ({r['app']}, {r['kind']})")
        for line in wrap_words(r.get("description") or "", width, "  "):
            out(line)
        remedies = "; ".join(f"{code} -> {', '.join(tools)}" for code, tools in (r.get("remedies") or {}).items())
        fields = [
            f"arguments: {', '.join(_arguments(r.get('input_schema'))) or 'none'}",
            f"resources: {', '.join(r.get('resources') or []) or '-'}",
            f"preconditions: {', '.join(r.get('preconditions') or []) or '-'}",
            f"remedies: {remedies or '-'}",
            f"alternatives: {', '.join(r.get('alternatives') or []) or '-'}",
        ]
        for field_text in fields:
            for line in pack_fields([field_text], width, indent="  "):
                out(line)


TASK_COLUMNS: tuple[Column, ...] = (
    Column("Task id"),
    Column("Apps", wrap=True),
    Column("Level", "Lv", "level 1-3", justify="right"),
    Column("Tags", wrap=True),
    Column("Feasible", "Feas", "whether the task can be done"),
)
"""Columns of ``mcpgym tasks`` (task ids are never wrapped)."""


def print_tasks(console: Console, suite: str, rows: Sequence[dict[str, Any]], width: int | None = None) -> str:
    """The tasks of a suite as a table fitted to ``width``; returns the layout used."""
    cells = [
        [r["id"], ", ".join(r["apps"]), str(r["level"]), ", ".join(r["tags"]) or "-", "yes" if r["feasible"] else "no"]
        for r in rows
    ]
    return print_table(console, TASK_COLUMNS, cells, title=f"suite {suite}: {counted(len(rows), 'task')}", width=width)


__all__ = ["TASK_COLUMNS", "cut_at_word", "first_sentence", "print_tasks", "print_tools_compact", "print_tools_full"]
