"""The outcome rule ``complexmcp``: ComplexMCP's judge (:mod:`mcpgym.evaluation.complexmcp.judge`)
as an mcpgym :class:`~mcpgym.evaluation.records.scores.Outcome`.

A trajectory of ``mcpgym run --suite complexmcp`` has ``metadata.outcome == "complexmcp"`` and
keeps their states in its snapshots: ``initial_snapshot`` / ``final_snapshot`` /
``gold_snapshot`` are ``{"complexmcp": {app: envelope}}`` (the ``login`` answers, the
``logout`` answers, the task's ``gt_env``). Success is their accuracy (everything recalled,
nothing misbehaved); recall, total and misbehave are their counts.
"""

from __future__ import annotations

from typing import Any

from mcpgym.evaluation.complexmcp.judge import judge_complexmcp
from mcpgym.evaluation.records.scores import Outcome

STATE_KEY = "complexmcp"
"""The key of a snapshot that holds ComplexMCP app states."""


def wrap_states(states: dict[str, Any]) -> dict[str, Any]:
    """A snapshot holding ComplexMCP's per-app states ``states``."""
    return {STATE_KEY: states}


def complexmcp_outcome(traj: Any) -> Outcome:
    """The rule's verdict on a trajectory's three states (module docstring); an outcome
    whose ``outcome_unavailable`` says which state is missing when one is."""
    states = {}
    for name in ("initial_snapshot", "final_snapshot", "gold_snapshot"):
        snap = getattr(traj, name)
        if not isinstance(snap, dict) or not isinstance(snap.get(STATE_KEY), dict):
            return Outcome(outcome_unavailable=f"ComplexMCP outcome: the trajectory has no {name} of the apps")
        states[name] = snap[STATE_KEY]
    verdict = judge_complexmcp(states["initial_snapshot"], states["final_snapshot"], states["gold_snapshot"])
    return Outcome(
        success=verdict.solved,
        recall=verdict.recall,
        total=verdict.total,
        misbehave=verdict.misbehave,
        missed=verdict.missed,
        misbehaved=verdict.misbehaved,
    )
