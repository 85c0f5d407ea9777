"""Figures ``server_truth`` and ``server_truth_no_catalog``: real harnesses' saved transcripts
scored by ``mcpgym score`` against the server's own trajectory of the same episodes.

``tests/data/harness/<harness>/<episode>/`` holds episodes played through real agent harnesses
from PyPI (the OpenAI Agents SDK over Chat Completions and over Responses, pydantic-ai,
LangGraph with langchain-mcp-adapters), each harness's transcript saved the way its users save
it, beside the server's trajectory (recorded by ``scripts/record_harness_episodes.py``; the
comparison is :mod:`mcpgym.evaluation.formats.server_truth`). ``server_truth`` is the share of
(transcript, field) pairs equal with mcpgym's catalog (target 100%: every field of every
episode); ``server_truth_no_catalog`` the same without it, as for an unknown server, whose
every harness must reach at least 95% on every field (a harness's field under it fails the
figure, ``details["failed_subtargets"]``). ``details`` has the share per harness and field and
every difference; ``ledger_gap`` lists what only the fault ledger knows (scored with and
without it), which no transcript can show. The figures are no timings: their baseline is the
server's record.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mcpgym.benchmarks.harness import Figure, Settings

HARNESS_ENV = "MCPGYM_HARNESS_DIR"
"""Environment variable naming another folder of harness episodes (default: the repository's)."""


def harness_dir() -> Path:
    """The harness episodes' folder: ``$MCPGYM_HARNESS_DIR``, else ``tests/data/harness``."""
    env = os.environ.get(HARNESS_ENV)
    return Path(env) if env else Path(__file__).resolve().parent.parent / "tests" / "data" / "harness"


def _figure(name: str, catalog: bool) -> Figure:
    from mcpgym.evaluation.formats.server_truth import (
        CATALOG_TARGET,
        FIELDS,
        NO_CATALOG_TARGET,
        agreement,
        compare_tree,
        episode_folders,
        ledger_gap,
    )

    folder = harness_dir()
    title = "harness transcripts vs the server's trajectory" + (" (mcpgym's catalog)" if catalog else " (no catalog)")
    target = CATALOG_TARGET if catalog else NO_CATALOG_TARGET
    if not folder.is_dir() or not episode_folders(folder):
        return Figure(
            name=name,
            title=title,
            value=None,
            unit="% pairs",
            target=target,
            op=">=",
            available=False,
            note=f"no episode folders in {folder} (set {HARNESS_ENV})",
        )
    comparisons = compare_tree(folder, catalog=catalog)
    per = agreement(comparisons)
    pairs = [c.agree.get(f, False) for c in comparisons for f in FIELDS]
    value = round(100 * sum(pairs) / len(pairs), 1)
    failed: dict[str, Any] = {}
    for harness, a in per.items():
        low = {f: v for f, v in a.per_field.items() if v < target}
        if low:
            failed[harness] = low
    gap = {
        Path(f).parent.name + "/" + Path(f).name: [d.model_dump() for d in ledger_gap(f)]
        for f in episode_folders(folder)
    }
    return Figure(
        name=name,
        title=title,
        value=value,
        unit="% pairs",
        target=target,
        op=">=",
        baseline="the server's call log of the same episodes (its faults inferred as a transcript's)",
        ratio=round(value / 100, 3),
        details={
            "transcripts": len(comparisons),
            "per_harness": {
                h: {"episodes": a.episodes, "readable": a.readable, "overall": a.overall} for h, a in per.items()
            },
            "per_field": {h: a.per_field for h, a in per.items()},
            "failed_subtargets": failed,
            "differences": {h: a.differences for h, a in per.items() if a.differences},
            "ledger_gap": {k: v for k, v in gap.items() if v},
        },
        note="" if not failed else "under target: " + ", ".join(sorted(failed)),
    )


def server_truth(settings: Settings) -> Figure:
    """Figure: share of (transcript, field) pairs equal to the server's, with mcpgym's catalog."""
    return _figure("server_truth", catalog=True)


def server_truth_no_catalog(settings: Settings) -> Figure:
    """Figure: the same without a catalog; every harness at least 95% on every field."""
    return _figure("server_truth_no_catalog", catalog=False)


__all__ = ["HARNESS_ENV", "harness_dir", "server_truth", "server_truth_no_catalog"]
