"""The replay tables of docs/complexmcp.md: per task, whether the human transcript's replay
solved it faults off and under each fault profile, and why not.

``python -m mcpgym.evaluation.complexmcp.report NONE_DIR DEFAULT_DIR HARSH_DIR`` prints them
from three output directories of ``mcpgym run --suite complexmcp --agent complexmcp-replay``
(``--faults none``, ``default``, ``harsh``).
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

PROFILES = ("none", "default", "harsh")
"""The columns, in order."""
NOT_APPLIED = {"transient", "rate_limited", "auth_challenge", "unavailable"}
"""Fault kinds whose call never reaches the app (docs/proxy.md): a write so faulted is not made."""


def read_run(folder: Path) -> dict[str, Any]:
    """Task id -> trajectory of an output directory (its ``trajectories.jsonl``).

    Raises:
        ValueError: a directory without trajectories (naming it).
    """
    from mcpgym.evaluation.records.trajectory import read_trajectories

    path = folder / "trajectories.jsonl"
    if not path.is_file():
        raise ValueError(f"{folder}: no trajectories.jsonl (an output directory of mcpgym run --suite complexmcp)")
    return {t.task_id: t for t in read_trajectories(path) if t.task_id}


def _kinds() -> dict[str, str]:
    """Tool name -> kind (``read``, ``write``...) by mcpgym's built-in ``complexmcp`` catalog."""
    from mcpgym.evaluation.scoring.foreign_catalogs import builtin_catalog_path
    from mcpgym.evaluation.scoring.tool_catalog import Catalog

    catalog = Catalog.from_file(builtin_catalog_path("complexmcp"))
    return {e.name: str(e.kind) for e in catalog.entries()}


SHIFTED = (
    "no write was kept from the app: a call kept from it shifted the app's own random stream "
    "(LightTalk draws its network errors and new ids from one stream per session, advanced by every call), "
    "so later recorded calls met other answers"
)
"""Why a replay with no write kept from the app still fails."""


def why_unsolved(traj: Any, kinds: dict[str, str] | None = None) -> str:
    """Why a replay did not solve its task, from its ledger: the writes of the transcript that
    a fault kept from the app (the replay makes each call once and never retries), else
    :data:`SHIFTED`; then every fault it met. ``kinds``: tool -> kind (default :func:`_kinds`)."""
    kinds = kinds if kinds is not None else _kinds()
    met: Counter[str] = Counter()
    kept: Counter[str] = Counter()
    for e in traj.ledger or []:
        tool, kind = str(e.get("tool")), str(e.get("kind"))
        met[f"{kind} on {tool}" + ("" if kind in NOT_APPLIED else " (applied)")] += 1
        if kind in NOT_APPLIED and kinds.get(tool) == "write":
            kept[tool] += 1
    if not met:
        return "no fault: the apps answered otherwise than when the transcript was recorded"
    head = f"write kept from the app: {', '.join(sorted(kept))}" if kept else SHIFTED
    return f"{head}; faults: " + ", ".join(k + (f" x{n}" if n > 1 else "") for k, n in sorted(met.items()))


def cell(traj: Any | None) -> str:
    """One profile's cell: ``yes``, or ``no r/t`` (recall of total) with ``+m`` misbehaviours."""
    if traj is None or traj.scores is None:
        return "not run"
    s = traj.scores
    if s.success:
        return "yes"
    extra = f" +{s.misbehave} misbehave" if s.misbehave else ""
    return f"no {s.recall}/{s.total}{extra}"


def tables(runs: dict[str, dict[str, Any]]) -> str:
    """The Markdown tables: accuracy per profile, then one row per task, then the reasons."""
    ids = sorted({t for run in runs.values() for t in run})
    lines = ["| profile | solved | accuracy | injected faults |", "| --- | ---: | ---: | ---: |"]
    for p in PROFILES:
        run = runs.get(p, {})
        solved = sum(bool(t.scores and t.scores.success) for t in run.values())
        faults = sum(len(t.ledger or []) for t in run.values())
        acc = f"{100 * solved / len(run):.0f}%" if run else "n/a"
        lines.append(f"| {p} | {solved} / {len(run)} | {acc} | {faults} |")
    lines += [
        "",
        "| task | level | apps | calls | none | default | harsh |",
        "| --- | ---: | --- | ---: | --- | --- | --- |",
    ]
    for tid in ids:
        first = next(run[tid] for run in runs.values() if tid in run)
        calls = first.scores.tool_calls if first.scores else 0
        cells = " | ".join(cell(runs.get(p, {}).get(tid)) for p in PROFILES)
        lines.append(f"| {tid} | {first.level} | {', '.join(first.apps)} | {calls} | {cells} |")
    lines += ["", "| task | profile | why the replay did not solve it |", "| --- | --- | --- |"]
    kinds = _kinds()
    for tid in ids:
        for p in PROFILES:
            traj = runs.get(p, {}).get(tid)
            if traj is not None and traj.scores is not None and not traj.scores.success:
                lines.append(f"| {tid} | {p} | {why_unsolved(traj, kinds)} |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    """Print the tables of the three directories ``argv`` (none, default, harsh); 2 on bad input."""
    if len(argv) != len(PROFILES):
        print("usage: python -m mcpgym.evaluation.complexmcp.report NONE_DIR DEFAULT_DIR HARSH_DIR", file=sys.stderr)
        return 2
    try:
        runs = {p: read_run(Path(a)) for p, a in zip(PROFILES, argv, strict=True)}
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(tables(runs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
