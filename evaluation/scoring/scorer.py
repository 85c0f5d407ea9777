"""The behaviour scorer: one trajectory + a catalog -> :class:`EpisodeScores`.

Every definition is in docs/design.md §7 ("Scores"). :func:`score_episode` resolves the steps
(:func:`mcpgym.evaluation.scoring.calls.resolve_calls`) and applies the rule registered for each
part of :class:`~mcpgym.evaluation.records.scores.EpisodeScores` (one per behaviour, each with
its definition in its docstring):
:func:`~mcpgym.evaluation.scoring.behaviours.score_verification`,
:func:`~mcpgym.evaluation.scoring.behaviours.score_precheck`,
:func:`~mcpgym.evaluation.scoring.behaviours.score_blind_retries`,
:func:`~mcpgym.evaluation.scoring.recovery.score_recovery`,
:func:`~mcpgym.evaluation.scoring.behaviours.score_defeatism`,
:func:`~mcpgym.evaluation.scoring.false_success.score_false_success`,
:func:`~mcpgym.evaluation.scoring.behaviours.score_impatience`,
:func:`~mcpgym.evaluation.scoring.behaviours.count_calls` and
:func:`~mcpgym.evaluation.scoring.behaviours.score_outcome`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mcpgym.evaluation.records.scores import EpisodeFacts, EpisodeScores, ErrorRuleHit
from mcpgym.evaluation.records.trajectory import Trajectory

# the rule modules register the rules of their parts when imported
from mcpgym.evaluation.scoring import false_success, user_scores  # noqa: F401
from mcpgym.evaluation.scoring.behaviours import (
    DEFAULT_K,
    UNSCORED_FAMILIES,
    BlindRetry,
    ImpatienceWindow,
    PrecheckSkip,
    RecoverableError,
    counted_writes,
)
from mcpgym.evaluation.scoring.calls import ERROR_FAULT_KINDS, INFERRED_FAULTS, resolve_calls
from mcpgym.evaluation.scoring.judge import ExtraCheck
from mcpgym.evaluation.scoring.refusal import BENIGN_PATTERNS, REFUSAL_PATTERNS, RefusalMatch, match_refusal
from mcpgym.evaluation.scoring.registry import EpisodeInput, scores
from mcpgym.evaluation.scoring.tool_catalog import Catalog
from mcpgym.kernel.spec import ToolKind


@scores(EpisodeFacts)
def facts_part(ep: EpisodeInput) -> EpisodeFacts:
    """What the trajectory says of the episode, and the tools the catalog classified by heuristic."""
    t = ep.traj
    return EpisodeFacts(
        episode_id=t.episode_id,
        task_id=t.task_id,
        agent=t.agent,
        trial=t.trial,
        level=t.level,
        apps=list(t.apps),
        feasible=t.feasible,
        status=t.status,
        tokens=t.tokens,
        heuristic_tools=sorted({c.tool for c in ep.calls if c.entry.source == "heuristic"}),
        error_rules=[
            ErrorRuleHit(step=s.step, tool=s.tool, rule=s.error_rule)
            for s in t.server_calls
            if s.is_error and s.error_rule is not None and s.step is not None
        ],
        unknown_kind_calls=sum(c.entry.kind == ToolKind.UNKNOWN for c in ep.calls),
        condition=t.condition,
    )


def score_episode(
    traj: Trajectory,
    catalog: Catalog,
    *,
    k: int | None = DEFAULT_K,
    checks: Iterable[ExtraCheck | dict[str, Any]] | None = None,
    timeout_read_recovers: bool = True,
    unscored_families: frozenset[str] = UNSCORED_FAMILIES,
) -> EpisodeScores:
    """Score one trajectory (definitions: docs/design.md §7 and :mod:`mcpgym.evaluation.scoring.behaviours`).

    Runs the registered rule of every part of :class:`EpisodeScores`
    (:mod:`mcpgym.evaluation.scoring.registry`) and composes their results.

    Args:
        traj: the trajectory.
        catalog: tool metadata; unknown tools are classified heuristically (listed in
            ``heuristic_tools``).
        k: the recovery window, in tool calls (>= 1); None (the default): no window.
        checks: task-defined checks on the final message; None = ``traj.metadata
            ["extra_checks"]`` if present.
        timeout_read_recovers: a read matching a timed-out call is a recovery attempt (and
            recovers an applied timeout); see :func:`~mcpgym.evaluation.scoring.recovery.score_recovery`.
        unscored_families: families whose writes are not counted as writes.

    Returns:
        :class:`EpisodeScores`.

    Raises:
        ValueError: for ``k < 1``; snapshot restore errors propagate from the judge.
    """
    if k is not None and k < 1:
        raise ValueError(f"the recovery window k must be >= 1, got {k}")
    calls = resolve_calls(traj, catalog)
    ep = EpisodeInput(
        traj,
        catalog,
        calls,
        counted_writes(calls, unscored_families),
        k,
        checks=checks,
        timeout_read_recovers=timeout_read_recovers,
    )
    return EpisodeScores.compose([ep.result(part) for part in EpisodeScores.parts()])


def score_trajectories(
    trajs: Iterable[Trajectory], catalog: Catalog, *, k: int | None = DEFAULT_K
) -> list[EpisodeScores]:
    """Score each trajectory with :func:`score_episode` (same ``catalog`` and ``k``)."""
    return [score_episode(t, catalog, k=k) for t in trajs]


__all__ = [
    "BENIGN_PATTERNS",
    "BlindRetry",
    "DEFAULT_K",
    "ERROR_FAULT_KINDS",
    "EpisodeScores",
    "INFERRED_FAULTS",
    "ImpatienceWindow",
    "PrecheckSkip",
    "REFUSAL_PATTERNS",
    "RecoverableError",
    "RefusalMatch",
    "UNSCORED_FAMILIES",
    "match_refusal",
    "score_episode",
    "score_trajectories",
]
