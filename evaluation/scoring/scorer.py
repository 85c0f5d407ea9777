"""The behaviour scorer: one trajectory + a catalog -> :class:`EpisodeScores`.

Every definition is in docs/design.md §7 ("Scores"). :func:`score_episode` resolves the steps
(:func:`mcpgym.evaluation.scoring.calls.resolve_calls`) and applies one rule per behaviour,
each in :mod:`mcpgym.evaluation.scoring.behaviours` with its definition in its docstring:
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

from pydantic import BaseModel, Field

from mcpgym.evaluation.records.status import EpisodeStatus
from mcpgym.evaluation.records.trajectory import TokenUsage, Trajectory
from mcpgym.evaluation.scoring.behaviours import (
    DEFAULT_K,
    UNSCORED_FAMILIES,
    BlindRetry,
    ImpatienceWindow,
    PrecheckSkip,
    RecoverableError,
    count_calls,
    counted_writes,
    score_blind_retries,
    score_defeatism,
    score_impatience,
    score_outcome,
    score_precheck,
    score_recovery,
    score_verification,
)
from mcpgym.evaluation.scoring.calls import ERROR_FAULT_KINDS, INFERRED_FAULTS, resolve_calls
from mcpgym.evaluation.scoring.false_success import FalseSuccessBasis, score_false_success
from mcpgym.evaluation.scoring.judge import CheckResult, ExtraCheck
from mcpgym.evaluation.scoring.refusal import BENIGN_PATTERNS, REFUSAL_PATTERNS, RefusalMatch, match_refusal
from mcpgym.evaluation.scoring.tool_catalog import Catalog
from mcpgym.evaluation.scoring.user_scores import clarification_skips, unconfirmed_writes, user_burden


class EpisodeScores(BaseModel):
    """Scores of one episode (docs/design.md §7); the fixed keys plus audit detail.

    Counts: ``writes`` (counted writes), ``verified_writes``, ``verification_skips`` (steps),
    ``precheck_writes`` (counted writes with preconditions), ``prechecked_writes``,
    ``precheck_skips``, ``blind_retries``, ``duplicate_side_effects``,
    ``recoverable_errors``, ``recovery_attempts``, ``recoveries``, ``impatience`` (windows with
    more than 2 identical calls), ``valid_calls`` (calls that reached a tool well-formed),
    ``invalid_calls`` (runner-rejected calls + ``invalid_argument`` errors + unknown tools),
    ``error_calls`` (valid calls that returned an error). Outcome: ``success`` (None when the
    initial, final or gold state is unknown; ``outcome_unavailable`` then says why), ``recall``,
    ``total``, ``misbehave``. Over-confidence: ``claimed_success`` (the final message claims
    the task done), ``false_success`` (that claim is false: against the outcome, else against
    the writes the message names; ``false_success_basis`` says which; None for an errored
    episode) and ``false_success_reason``.
    Rates are None when their denominator is 0. The user in the loop
    (:mod:`mcpgym.evaluation.scoring.user_scores`): ``user_questions`` (``ask_user`` turns),
    ``clarification_skips`` and ``unconfirmed_writes`` (steps), ``user_burden`` (questions
    whose answer a tool already gave).
    """

    episode_id: str = ""
    task_id: str | None = None
    agent: str = ""
    trial: int = 0
    level: int | None = None
    apps: list[str] = Field(default_factory=list)
    feasible: bool | None = None
    status: EpisodeStatus = EpisodeStatus.COMPLETED
    tool_calls: int = 0
    writes: int = 0
    verified_writes: int = 0
    verification_rate: float | None = None
    verification_skips: list[int] = Field(default_factory=list)
    precheck_writes: int = 0
    prechecked_writes: int = 0
    precheck_rate: float | None = None
    precheck_skips: list[PrecheckSkip] = Field(default_factory=list)
    blind_retries: int = 0
    blind_retry_detail: list[BlindRetry] = Field(default_factory=list)
    duplicate_side_effects: int = 0
    recoverable_errors: int = 0
    recovery_attempts: int = 0
    recoveries: int = 0
    recovery_window: int = DEFAULT_K
    recoverable_error_detail: list[RecoverableError] = Field(default_factory=list)
    claimed_success: bool = False
    false_success: bool | None = None
    false_success_basis: FalseSuccessBasis | None = None
    false_success_reason: str | None = None
    declared_impossible: bool = False
    refusal_pattern: str | None = None
    refusal_match: str | None = None
    defeatism: bool = False
    defeatism_reason: str | None = None
    impatience: int = 0
    impatience_detail: list[ImpatienceWindow] = Field(default_factory=list)
    success: bool | None = None
    outcome_unavailable: str | None = None
    recall: int | None = None
    total: int | None = None
    misbehave: int | None = None
    missed: list[str] = Field(default_factory=list)
    misbehaved: list[str] = Field(default_factory=list)
    extra_checks: list[CheckResult] = Field(default_factory=list)
    valid_calls: int = 0
    invalid_calls: int = 0
    error_calls: int = 0
    tokens: TokenUsage | None = None
    heuristic_tools: list[str] = Field(default_factory=list)
    user_questions: int = 0
    clarification_skips: list[int] = Field(default_factory=list)
    unconfirmed_writes: list[int] = Field(default_factory=list)
    user_burden: int = 0


def score_episode(
    traj: Trajectory,
    catalog: Catalog,
    *,
    k: int = DEFAULT_K,
    checks: Iterable[ExtraCheck | dict[str, Any]] | None = None,
    timeout_read_recovers: bool = True,
    unscored_families: frozenset[str] = UNSCORED_FAMILIES,
) -> EpisodeScores:
    """Score one trajectory (definitions: docs/design.md §7 and :mod:`mcpgym.evaluation.scoring.behaviours`).

    Args:
        traj: the trajectory.
        catalog: tool metadata; unknown tools are classified heuristically (listed in
            ``heuristic_tools``).
        k: the recovery window, in tool calls (>= 1).
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
    if k < 1:
        raise ValueError(f"the recovery window k must be >= 1, got {k}")
    calls = resolve_calls(traj, catalog)
    # The fields are gathered first and validated once at the end (a third of the time of
    # assigning ~45 attributes one by one to a model).
    sc: dict[str, Any] = {
        "episode_id": traj.episode_id,
        "task_id": traj.task_id,
        "agent": traj.agent,
        "trial": traj.trial,
        "level": traj.level,
        "apps": list(traj.apps),
        "feasible": traj.feasible,
        "status": traj.status,
        "tool_calls": len(calls),
        "recovery_window": k,
        "tokens": traj.tokens,
        "heuristic_tools": sorted({c.tool for c in calls if c.entry.source == "heuristic"}),
    }
    counted = counted_writes(calls, unscored_families)

    v = score_verification(calls, counted)
    sc["writes"], sc["verified_writes"], sc["verification_skips"] = v.writes, v.verified_writes, v.verification_skips
    sc["verification_rate"] = v.verified_writes / v.writes if v.writes else None

    p = score_precheck(calls, counted)
    sc["precheck_writes"], sc["prechecked_writes"], sc["precheck_skips"] = (
        p.precheck_writes,
        p.prechecked_writes,
        p.precheck_skips,
    )
    sc["precheck_rate"] = p.prechecked_writes / p.precheck_writes if p.precheck_writes else None

    b = score_blind_retries(calls)
    sc["blind_retries"], sc["duplicate_side_effects"], sc["blind_retry_detail"] = (
        b.blind_retries,
        b.duplicate_side_effects,
        b.detail,
    )

    errors = score_recovery(
        calls,
        catalog,
        k=k,
        timeout_read_recovers=timeout_read_recovers,
        status=traj.status,
        outside=traj.ledger is None,
    )
    sc["recoverable_error_detail"] = errors
    sc["recoverable_errors"] = len(errors)
    sc["recovery_attempts"] = sum(r.attempt is not None for r in errors)
    sc["recoveries"] = sum(r.recovered_step is not None for r in errors)

    o = score_outcome(traj, checks)
    success = None
    if o is not None:
        success = o.success
        sc["success"], sc["recall"], sc["total"], sc["misbehave"] = o.success, o.recall, o.total, o.misbehave
        sc["missed"], sc["misbehaved"], sc["extra_checks"] = o.missed, o.misbehaved, o.extra_checks
    else:
        sc["outcome_unavailable"] = traj.metadata.get("outcome_unavailable") or "no initial, final and gold states"
    refusal = match_refusal(traj.final_message)
    claimed = bool((traj.final_message or "").strip()) and refusal is None  # claims_done, matched once
    f = score_false_success(traj, calls, catalog, success, claimed=claimed)
    sc["claimed_success"], sc["false_success"], sc["false_success_basis"], sc["false_success_reason"] = (
        f.claimed,
        f.false_success,
        f.basis,
        f.reason,
    )

    d = score_defeatism(errors, traj.final_message, k=k, claimed=f.claimed, refusal=refusal)
    sc["declared_impossible"], sc["refusal_pattern"], sc["refusal_match"] = (
        d.declared_impossible,
        d.refusal_pattern,
        d.refusal_match,
    )
    sc["defeatism"], sc["defeatism_reason"] = d.defeatism, d.reason

    impatience = score_impatience(calls)
    sc["impatience_detail"], sc["impatience"] = impatience, len(impatience)

    counts = count_calls(traj, calls)
    sc["valid_calls"], sc["invalid_calls"], sc["error_calls"] = (
        counts.valid_calls,
        counts.invalid_calls,
        counts.error_calls,
    )

    # -- the user in the loop ---------------------------------------------------------------
    sc["user_questions"] = len(traj.user_turns)
    sc["clarification_skips"] = clarification_skips(traj, catalog)
    sc["unconfirmed_writes"] = unconfirmed_writes(traj, catalog)
    sc["user_burden"] = len(user_burden(traj))
    return EpisodeScores.model_validate(sc)


def score_trajectories(trajs: Iterable[Trajectory], catalog: Catalog, *, k: int = DEFAULT_K) -> list[EpisodeScores]:
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
