"""Faults by kind: per agent and injected fault kind, how often the agent met it, recovered,
gave up, and claimed success falsely after it (report.md, report.html and ``mcpgym run``'s
summary).

Rules (docs/design.md §7, "Faults by kind"), over episodes that did not error:

- **met**: fault-ledger rows of the kind that were injected afresh (a call refused by an earlier
  fault still in force, ``persisting``, is the same fault met again and not counted again). A
  trajectory without a ledger (recorded elsewhere) counts its recovery records whose fault was
  inferred.
- **recovered** / **gave up**: of the recoverable-error records of that fault kind (docs/design.md
  §7, Recovery), those later recovered / those with no recovery attempt within K calls. The
  kinds the agent sees as a success (``lost_write``, ``stale_read``) leave no error to recover
  from: their cells are ``–`` (not zero), and "false success after it" is what tells.
- **false success after it**: episodes that met the kind and whose final message claims the task
  done while it is not (docs/design.md §7, False success).
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, Field

from mcpgym.evaluation.records.scores import EpisodeScores
from mcpgym.evaluation.records.status import EpisodeStatus
from mcpgym.evaluation.records.trajectory import Trajectory
from mcpgym.kernel.fault_kinds import FAULTS, FaultKind


class FaultKindRow(BaseModel):
    """One agent's figures for one fault kind (see the module docstring); ``recovered`` and
    ``gave_up`` are None for a kind the agent sees as a success."""

    agent: str
    kind: str
    met: int = Field(0, ge=0)
    episodes: int = Field(0, ge=0, description="episodes that met the kind")
    errors: int = Field(0, ge=0, description="recoverable-error records of the kind")
    recovered: int | None = None
    gave_up: int | None = None
    false_success_after: int = Field(0, ge=0)


def _silent(kind: str) -> bool:
    facts = FAULTS.get(FaultKind(kind)) if kind in FaultKind.__members__.values() else None
    return facts is not None and not facts.is_error


def _order(kind: str) -> tuple[int, str]:
    names = [k.value for k in FaultKind]
    return (names.index(kind), kind) if kind in names else (len(names), kind)


def fault_kind_rows(episodes: Iterable[tuple[Trajectory, EpisodeScores]]) -> list[FaultKindRow]:
    """The rows of every (agent, fault kind) met, agents sorted, kinds in :class:`FaultKind` order."""
    rows: dict[tuple[str, str], FaultKindRow] = {}
    for traj, sc in episodes:
        if sc.status == EpisodeStatus.ERRORED:
            continue
        agent = sc.agent or "external"
        met: dict[str, int] = {}
        if traj.ledger is not None:
            for entry in traj.ledger:
                if not entry.get("persisting", False):
                    met[entry["kind"]] = met.get(entry["kind"], 0) + 1
        else:
            for r in sc.recoverable_error_detail:
                if r.fault:
                    met[r.fault] = met.get(r.fault, 0) + 1
        kinds = set(met) | {r.fault for r in sc.recoverable_error_detail if r.fault}
        for kind in kinds:
            row = rows.setdefault((agent, kind), FaultKindRow(agent=agent, kind=kind))
            row.met += met.get(kind, 0)
            row.episodes += 1
            row.false_success_after += int(bool(sc.false_success))
        for r in sc.recoverable_error_detail:
            if not r.fault:
                continue
            row = rows[(agent, r.fault)]
            row.errors += 1
            row.recovered = (row.recovered or 0) + int(r.recovered_step is not None)
            row.gave_up = (row.gave_up or 0) + int(r.attempt is None)
    for row in rows.values():
        if not _silent(row.kind) and row.recovered is None:  # met, yet never seen as an error record
            row.recovered, row.gave_up = 0, 0
    return sorted(rows.values(), key=lambda r: (r.agent, _order(r.kind)))


FAULT_KIND_HEADER = ["Agent", "Fault kind", "Met", "Recovered", "Gave up", "False success after it"]
"""Columns of :func:`fault_kind_table`."""

FAULT_KIND_NOTE = (
    "Met: injected faults of the kind (a call refused again by a fault still in force is not counted again). "
    "Recovered / Gave up: of its recoverable errors, those later recovered / those with no attempt within K "
    "calls. –: the kind looks like a success to the agent (lost_write, stale_read): no error to recover from. "
    "False success after it: episodes that met the kind and claimed the task done while it was not. "
    "Definitions: docs/design.md §7, Faults by kind."
)
"""What the faults-by-kind table's columns mean."""


def _of(n: int | None, errors: int) -> str:
    return "–" if n is None else f"{n}/{errors}"


def fault_kind_table(rows: list[FaultKindRow]) -> list[list[str]]:
    """The rows as table cells (recovered and gave up as ``n/errors``; false success as
    ``n/episodes``)."""
    return [
        [
            r.agent,
            r.kind,
            str(r.met),
            _of(r.recovered, r.errors),
            _of(r.gave_up, r.errors),
            f"{r.false_success_after}/{r.episodes}",
        ]
        for r in rows
    ]


__all__ = ["FAULT_KIND_HEADER", "FAULT_KIND_NOTE", "FaultKindRow", "fault_kind_rows", "fault_kind_table"]
