"""``mcpgym score FILE...``: score trajectory files recorded anywhere and print the report.

A thin adapter: :func:`mcpgym.evaluation.formats.score.score_files` reads and scores,
:func:`mcpgym.evaluation.report.score_text.render_text` renders; this module picks the output
and the exit code.
"""

from __future__ import annotations

import json
import sys
from typing import IO

from mcpgym.evaluation.formats.score import score_files
from mcpgym.evaluation.report.score_text import render_text


def run_score(
    paths: list[str],
    fmt: str = "auto",
    catalog: str | None = None,
    as_json: bool = False,
    out: IO[str] | None = None,
    *,
    k: int = 3,
    strict: bool = False,
    err: IO[str] | None = None,
) -> int:
    """What ``mcpgym score FILE... [--format F] [--catalog C] [--json] [--strict]`` does.

    Prints :func:`render_text` (or the report as JSON) to ``out`` (stdout); with ``--json``
    the scorability warnings are also written to ``err`` (stderr), so they are never silent.

    Returns:
        The exit code: 0 when every file was read cleanly, 1 when some input was malformed
        (what could be scored is still printed) or, with ``strict``, when the scorability
        summary carries a warning (most call blocks failed to parse, most tools guessed, a
        file read in a format that finds no call while another finds some), 2 when nothing
        could be scored (1 with ``strict`` when another format would have read calls).

    Raises:
        ValueError: for an unknown format or a bad catalog (a usage error: exit 2).
    """
    out = out or sys.stdout
    report = score_files(paths, fmt, catalog, k=k)
    if as_json:
        out.write(json.dumps(report.model_dump(mode="json"), indent=2) + "\n")
        for w in report.scorability.warnings:
            (err or sys.stderr).write(f"WARNING: {w}\n")
    else:
        out.write(render_text(report))
    if strict and report.format_mismatches:
        return 1  # read in the wrong format: the fix is named, whether or not anything scored
    if not report.episodes:
        return 2
    if strict and report.scorability.warnings:
        return 1
    return 0 if report.ok else 1


__all__ = ["run_score"]
