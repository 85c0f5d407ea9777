"""Aggregate episode scores per agent (docs/design.md §7, "Aggregates").

:func:`aggregate` returns a :class:`~mcpgym.evaluation.scoring.metrics.Scoreboard`, whose JSON
form is ``scores.json`` (and the ``agents`` of ``mcpgym score --json``)::

    {"agents": {NAME: {"episodes": ..., "success_rate": ..., "success_ci95": [low, high],
                       "pass_k": {"1": ..., "2": ...}, "verification_rate": ...,
                       "precheck_rate": ..., "recovery_attempt_rate": ..., "recovery_rate": ...,
                       "defeatism_rate": ..., ..., "by_level": {"1": {...}}, "by_app": {...}}}}

Rates pool counts over episodes (e.g. ``verification_rate`` = total verified writes / total
writes) and are None when their denominator is 0. The fields are documented on
:class:`~mcpgym.evaluation.scoring.metrics.Metrics`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from mcpgym.evaluation.records.status import EpisodeStatus
from mcpgym.evaluation.records.trajectory import Trajectory
from mcpgym.evaluation.scoring.metrics import AgentMetrics, Metrics, Scoreboard, TokenTotals
from mcpgym.evaluation.scoring.scorer import DEFAULT_K, EpisodeScores, score_episode
from mcpgym.evaluation.scoring.tool_catalog import Catalog

Z_95 = 1.96
"""z for a two-sided 95% interval."""


def wilson_interval(successes: int, n: int, z: float = Z_95) -> list[float] | None:
    """Wilson score interval of a binomial proportion.

    ``center = (p + z²/2n) / (1 + z²/n)``, ``half = z·sqrt(p(1-p)/n + z²/4n²) / (1 + z²/n)``
    with ``p = successes / n`` (E. B. Wilson, 1927).

    Args:
        successes: number of successes (0 <= successes <= n).
        n: number of trials.
        z: the normal quantile (1.96 for 95%).

    Returns:
        ``[low, high]``, or None when ``n == 0``.

    Raises:
        ValueError: when ``successes`` is outside ``[0, n]``.
    """
    if n == 0:
        return None
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be in [0, {n}], got {successes}")
    p = successes / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return [max(0.0, center - half), min(1.0, center + half)]


def pass_hat_k(results_by_task: dict[str, list[bool]], k: int) -> float | None:
    """tau-bench's pass^k: mean over tasks of ``C(c, k) / C(n, k)``.

    For a task with ``n`` trials and ``c`` successes, ``C(c, k) / C(n, k)`` is the chance
    that ``k`` trials drawn without replacement all succeed.

    Args:
        results_by_task: task id -> success of each trial.
        k: 1 <= k <= every task's number of trials.

    Returns:
        The mean, or None when there are no tasks.

    Raises:
        ValueError: when ``k < 1`` or a task has fewer than ``k`` trials.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if not results_by_task:
        return None
    total = 0.0
    for task, results in results_by_task.items():
        n, c = len(results), sum(bool(r) for r in results)
        if n < k:
            raise ValueError(f"task {task!r} has {n} trials, fewer than k={k}")
        total += math.comb(c, k) / math.comb(n, k)
    return total / len(results_by_task)


def pass_k_table(results_by_task: dict[str, list[bool]]) -> dict[str, float]:
    """``{"1": pass^1, ..., "n_min": pass^n_min}`` with ``n_min`` the fewest trials of any task."""
    if not results_by_task:
        return {}
    n_min = min(len(r) for r in results_by_task.values())
    return {str(k): pass_hat_k(results_by_task, k) for k in range(1, n_min + 1)}  # type: ignore[misc]


def _rate(num: int, den: int) -> float | None:
    return num / den if den else None


def metrics(episodes: list[EpisodeScores]) -> Metrics:
    """Aggregate metrics of a group of episodes (no breakdowns); docs/design.md §7, "Aggregates".

    ``pass_k`` groups episodes by ``task_id`` (an episode without one is its own task) and
    counts only episodes whose ``success`` is known; success figures leave out episodes with
    status ``errored`` (provider or harness failures, counted in ``errored_episodes``);
    ``defeatism_rate`` is over episodes that met at least one recoverable error;
    ``false_success_rate`` over episodes whose false success is known (not errored); ``tokens`` sums
    the episodes that report tokens. The fields are documented on :class:`Metrics`.
    """
    # An episode the provider or harness broke (status ``errored``) says nothing about the
    # agent: it is counted apart (``errored_episodes``), not as a failure.
    errored = [e for e in episodes if e.status == EpisodeStatus.ERRORED]
    scored = [e for e in episodes if e.success is not None and e.status != EpisodeStatus.ERRORED]
    wins = sum(bool(e.success) for e in scored)
    by_task: dict[str, list[bool]] = defaultdict(list)
    for e in scored:
        by_task[e.task_id if e.task_id is not None else f"episode:{e.episode_id}"].append(bool(e.success))

    def total(key: str) -> int:
        return sum(int(getattr(e, key) or 0) for e in episodes)

    met = [e for e in episodes if e.recoverable_errors > 0]
    with_tokens = [e.tokens for e in episodes if e.tokens is not None]
    ep_rates = [e.verification_rate for e in episodes if e.verification_rate is not None]
    # what the agent said counts only where it said something: not in errored episodes
    infeasible = [e for e in episodes if e.feasible is False and e.status != "errored"]
    judged_claims = [e for e in episodes if e.false_success is not None]
    return Metrics(
        episodes=len(episodes),
        scored_episodes=len(scored),
        errored_episodes=len(errored),
        successes=wins,
        success_rate=_rate(wins, len(scored)),
        success_ci95=wilson_interval(wins, len(scored)),
        pass_k=pass_k_table(dict(by_task)),
        writes=total("writes"),
        verified_writes=total("verified_writes"),
        verification_rate=_rate(total("verified_writes"), total("writes")),
        mean_episode_verification_rate=sum(ep_rates) / len(ep_rates) if ep_rates else None,
        precheck_writes=total("precheck_writes"),
        prechecked_writes=total("prechecked_writes"),
        precheck_rate=_rate(total("prechecked_writes"), total("precheck_writes")),
        blind_retries=total("blind_retries"),
        duplicate_side_effects=total("duplicate_side_effects"),
        recoverable_errors=total("recoverable_errors"),
        recovery_attempts=total("recovery_attempts"),
        recoveries=total("recoveries"),
        recovery_attempt_rate=_rate(total("recovery_attempts"), total("recoverable_errors")),
        recovery_rate=_rate(total("recoveries"), total("recoverable_errors")),
        episodes_with_recoverable_errors=len(met),
        defeatist_episodes=sum(e.defeatism for e in met),
        defeatism_rate=_rate(sum(e.defeatism for e in met), len(met)),
        claimed_success_episodes=sum(e.claimed_success for e in episodes),
        false_success_episodes=sum(bool(e.false_success) for e in judged_claims),
        false_success_rate=_rate(sum(bool(e.false_success) for e in judged_claims), len(judged_claims)),
        declared_impossible=sum(e.declared_impossible for e in episodes if e.status != "errored"),
        infeasible_episodes=len(infeasible),
        infeasible_declared_impossible=sum(e.declared_impossible for e in infeasible),
        impatience=total("impatience"),
        recall=total("recall"),
        total=total("total"),
        recall_rate=_rate(total("recall"), total("total")),
        misbehave=total("misbehave"),
        tool_calls=total("tool_calls"),
        valid_calls=total("valid_calls"),
        invalid_calls=total("invalid_calls"),
        error_calls=total("error_calls"),
        tokens=TokenTotals(input=sum(t.input for t in with_tokens), output=sum(t.output for t in with_tokens))
        if with_tokens
        else None,
        user_questions=total("user_questions"),
        clarification_skip_steps=sum(len(e.clarification_skips) for e in episodes),
        unconfirmed_write_steps=sum(len(e.unconfirmed_writes) for e in episodes),
        user_burden=total("user_burden"),
    )


def as_scores(
    item: EpisodeScores | Trajectory | dict[str, Any], catalog: Catalog | None = None, k: int = DEFAULT_K
) -> EpisodeScores:
    """Return the :class:`EpisodeScores` of ``item``.

    Args:
        item: scores, a scores dict, or a trajectory (its ``scores`` when present, else it is
            scored with ``catalog``).
        catalog: needed for trajectories without scores.
        k: recovery window when scoring.

    Raises:
        ValueError: for an unscored trajectory without a catalog; pydantic ``ValidationError``
            for a malformed scores dict.
    """
    if isinstance(item, EpisodeScores):
        return item
    if isinstance(item, Trajectory):
        if item.scores is not None:
            return EpisodeScores.model_validate(item.scores)
        if catalog is None:
            raise ValueError(f"trajectory {item.episode_id} has no scores and no catalog was given to score it")
        return score_episode(item, catalog, k=k)
    return EpisodeScores.model_validate(item)


def aggregate(
    items: Iterable[EpisodeScores | Trajectory | dict[str, Any]],
    *,
    catalog: Catalog | None = None,
    k: int = DEFAULT_K,
    breakdowns: bool = True,
) -> Scoreboard:
    """Aggregate per agent, with breakdowns by level and by app (docs/design.md §7, "Aggregates").

    Args:
        items: episode scores, scores dicts or trajectories (see :func:`as_scores`).
        catalog: to score trajectories that carry no scores.
        k: recovery window when scoring.
        breakdowns: add ``by_level`` (levels as strings; episodes without a level are left
            out) and ``by_app`` (an episode counts under each of its apps, ``system``
            included) to every agent.

    Returns:
        A :class:`Scoreboard`: agents sorted by name; an episode with an empty agent name
        groups under ``external``. See :func:`metrics` and :class:`AgentMetrics`.
    """
    groups: dict[str, list[EpisodeScores]] = defaultdict(list)
    for item in items:
        sc = as_scores(item, catalog, k)
        groups[sc.agent or "external"].append(sc)
    out: dict[str, AgentMetrics] = {}
    for name in sorted(groups):
        eps = groups[name]
        row = AgentMetrics.model_validate(dict(metrics(eps)))
        if breakdowns:
            levels: dict[int, list[EpisodeScores]] = defaultdict(list)
            apps: dict[str, list[EpisodeScores]] = defaultdict(list)
            for e in eps:
                if e.level is not None:
                    levels[e.level].append(e)
                for a in dict.fromkeys(e.apps):
                    apps[a].append(e)
            row.by_level = {str(lv): metrics(levels[lv]) for lv in sorted(levels)}
            row.by_app = {a: metrics(apps[a]) for a in sorted(apps)}
        out[name] = row
    return Scoreboard(agents=out)


__all__ = [
    "AgentMetrics",
    "Metrics",
    "Scoreboard",
    "Z_95",
    "aggregate",
    "as_scores",
    "metrics",
    "pass_hat_k",
    "pass_k_table",
    "wilson_interval",
]
