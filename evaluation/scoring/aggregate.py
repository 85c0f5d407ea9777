"""Aggregate episode scores per agent (docs/design.md §7, "Aggregates").

:func:`aggregate` returns a :class:`~mcpgym.evaluation.records.scores.Scoreboard`, whose JSON
form is ``scores.json`` (and the ``agents`` of ``mcpgym score --json``)::

    {"agents": {NAME: {"episodes": ..., "success_rate": ..., "success_ci95": [low, high],
                       "pass_k": {"1": ..., "2": ...}, "verification_rate": ...,
                       "precheck_rate": ..., "recovery_attempt_rate": ..., "recovery_rate": ...,
                       "defeatism_rate": ..., ..., "by_level": {"1": {...}}, "by_app": {...}}}}

Rates pool counts over episodes (e.g. ``verification_rate`` = total verified writes / total
writes) and are None when their denominator is 0. The fields are documented on
:class:`~mcpgym.evaluation.records.scores.Metrics` (each part's aggregate rule is
declared on its model there).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from mcpgym.evaluation.records.condition import condition_key
from mcpgym.evaluation.records.scores import AgentMetrics, EpisodeScores, Metrics, Scoreboard
from mcpgym.evaluation.records.statistics import Z_95, pass_hat_k, pass_k_table, wilson_interval
from mcpgym.evaluation.records.trajectory import Trajectory
from mcpgym.evaluation.scoring.scorer import DEFAULT_K, score_episode
from mcpgym.evaluation.scoring.tool_catalog import Catalog
from mcpgym.kernel.app import shared_apps


def metrics(episodes: list[EpisodeScores]) -> Metrics:
    """Aggregate metrics of a group of episodes (no breakdowns); docs/design.md §7, "Aggregates".

    Each part of :class:`EpisodeScores` fills its fields by its own aggregate rule
    (:meth:`Metrics.of <mcpgym.evaluation.records.scores.Metrics.of>`): ``pass_k`` groups
    episodes by ``task_id`` (an episode without one is its own task) and counts only episodes
    whose ``success`` is known; success figures leave out episodes with status ``errored``
    (provider or harness failures, counted in ``errored_episodes``); ``defeatism_rate`` is over
    episodes that met at least one recoverable error; ``false_success_rate`` over episodes whose
    false success is known (not errored); ``tokens`` sums the episodes that report tokens. The
    fields are documented on :class:`Metrics`.
    """
    return Metrics.of(episodes)


def counted_apps(apps: Iterable[str], shared: Iterable[str] | None = None) -> list[str]:
    """The apps an episode counts under in the ``by_app`` breakdown (docs/design.md §7,
    "Aggregates"): the apps of its task besides those every world holds (``system``,
    :func:`mcpgym.kernel.app.shared_apps`), or, for a task of those apps only, those. Every
    world holds ``system``, so counting each episode under it would make its row the whole run.

    Example: ``["system", "talk", "weather"]`` -> ``["talk", "weather"]``; ``["system"]`` ->
    ``["system"]``; an app no registry knows (a foreign trajectory's) is an app of its own.

    Args:
        apps: the episode's apps (duplicates are counted once).
        shared: the apps every world holds (default: :func:`~mcpgym.kernel.app.shared_apps`).
    """
    names = list(dict.fromkeys(apps))
    common = set(shared_apps() if shared is None else shared)
    own = [a for a in names if a not in common]
    return own or names


def as_scores(
    item: EpisodeScores | Trajectory | dict[str, Any], catalog: Catalog | None = None, k: int | None = DEFAULT_K
) -> EpisodeScores:
    """Return the :class:`EpisodeScores` of ``item``.

    Args:
        item: scores, a scores dict, or a trajectory (its ``scores`` when present, else it is
            scored with ``catalog``; its ``condition`` is the scores' too).
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
            scored = item.scores
        elif catalog is None:
            raise ValueError(f"trajectory {item.episode_id} has no scores and no catalog was given to score it")
        else:
            scored = score_episode(item, catalog, k=k)
        if item.condition is not None and scored.condition != item.condition:
            scored = scored.model_copy(update={"condition": item.condition})
        return scored
    return EpisodeScores.model_validate(item)


def aggregate(
    items: Iterable[EpisodeScores | Trajectory | dict[str, Any]],
    *,
    catalog: Catalog | None = None,
    k: int | None = DEFAULT_K,
    breakdowns: bool = True,
) -> Scoreboard:
    """Aggregate per agent, with breakdowns by level and by app (docs/design.md §7, "Aggregates").

    Args:
        items: episode scores, scores dicts or trajectories (see :func:`as_scores`).
        catalog: to score trajectories that carry no scores.
        k: recovery window when scoring.
        breakdowns: add ``by_level`` (levels as strings; episodes without a level are left
            out) and ``by_app`` (an episode counts under each app of :func:`counted_apps`:
            its task's apps besides ``system``, or ``system`` for a system-only task) to every
            agent.

    Returns:
        A :class:`Scoreboard`: agents sorted by name; an episode with an empty agent name
        groups under ``external``; an episode with a ``condition`` groups under its agent and
        condition (:func:`~mcpgym.evaluation.records.condition.condition_key`). See :func:`metrics` and :class:`AgentMetrics`.
    """
    groups: dict[str, list[EpisodeScores]] = defaultdict(list)
    for item in items:
        sc = as_scores(item, catalog, k)
        groups[condition_key(sc.agent or "external", sc.condition)].append(sc)
    out: dict[str, AgentMetrics] = {}
    for name in sorted(groups):
        eps = groups[name]
        row = AgentMetrics.model_validate(dict(metrics(eps)))
        if eps[0].condition is not None:
            row.agent, row.condition = eps[0].agent or "external", eps[0].condition
        if breakdowns:
            levels: dict[int, list[EpisodeScores]] = defaultdict(list)
            apps: dict[str, list[EpisodeScores]] = defaultdict(list)
            shared = shared_apps()
            for e in eps:
                if e.level is not None:
                    levels[e.level].append(e)
                for a in counted_apps(e.apps, shared):
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
    "counted_apps",
    "metrics",
    "pass_hat_k",
    "pass_k_table",
    "wilson_interval",
]
