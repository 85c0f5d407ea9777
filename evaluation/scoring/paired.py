"""Paired differences of two agents' scores over the same (task, trial) episodes
(docs/design.md §7, "Comparing runs").

Each behaviour score of an episode is a ratio part ``(numerator, denominator)``: success is
``(1 or 0, 1)``, verification ``(verified_writes, writes)``, recovery ``(recoveries,
recoverable_errors)``, and so on (:data:`PAIRED_METRICS`). A group's score is the pooled ratio
``sum(numerators) / sum(denominators)``, the rule of the aggregates (docs/design.md §7,
"Aggregates"), so the paired difference of a metric is ``pooled(B) - pooled(A)`` over the
pairs where both episodes define it.

Its 95% interval comes from a **paired percentile bootstrap**: :data:`BOOTSTRAP_RESAMPLES`
resamples of the pairs with replacement (``random.Random(BOOTSTRAP_SEED)``: the same input
gives the same interval in any process), the statistic recomputed on each; the interval is
the ``ceil(0.025 m)``-th and ``ceil(0.975 m)``-th smallest of the ``m`` resamples in which
both pooled ratios are defined (Efron & Tibshirani, *An Introduction to the Bootstrap*, 1993,
ch. 13). Success also gets the **exact McNemar test** (two-sided binomial test on the
discordant pairs; McNemar 1947): its p-value is shown beside the interval. The verdict is
"no detectable difference" whenever the interval contains 0, and for success also whenever
the McNemar p-value is :data:`MCNEMAR_ALPHA` or more.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from pydantic import BaseModel, Field

from mcpgym.evaluation.records.scores import EpisodeScores
from mcpgym.evaluation.records.status import EpisodeStatus

BOOTSTRAP_RESAMPLES = 2000
"""Resamples of the paired bootstrap (the percentile interval's 2.5% and 97.5% points rest on
the 50th and 1,950th of them)."""

BOOTSTRAP_SEED = 37
"""Seed of the bootstrap's ``random.Random``: fixed, so that an interval is reproducible."""

MCNEMAR_ALPHA = 0.05
"""Success is called different only when its interval excludes 0 *and* the exact McNemar
p-value is below this: at a few pairs the percentile bootstrap is too narrow (six pairs of
which four are discordant give an interval excluding 0 but p = 0.125)."""

MIN_DEFINED_SHARE = 0.5
"""Below this share of resamples with the statistic defined (both denominators above 0), the
interval is not given: too few pairs carry the metric."""

Part = tuple[float, float]
"""One episode's ``(numerator, denominator)`` of a metric."""


class Verdict(StrEnum):
    """What a paired difference's interval says."""

    NONE = "no detectable difference"
    HIGHER = "higher"
    LOWER = "lower"
    UNKNOWN = "not computable"


@dataclass(frozen=True)
class PairedMetric:
    """One score compared pairwise: its key (an aggregate's field name, or a per-episode count),
    label, whether lower is better, and how an episode's ``(numerator, denominator)`` is read
    (None: the episode does not define it)."""

    key: str
    label: str
    lower_is_better: bool
    part: Callable[[EpisodeScores], Part | None]
    per_episode: bool = False


def _success(e: EpisodeScores) -> Part | None:
    return None if e.success is None else (float(e.success), 1.0)


def _tokens(e: EpisodeScores) -> Part | None:
    return None if e.tokens is None else (float(e.tokens.input + e.tokens.output), 1.0)


PAIRED_METRICS: tuple[PairedMetric, ...] = (
    PairedMetric("success_rate", "Success", False, _success),
    PairedMetric("recall_rate", "Recall", False, lambda e: None if e.total is None else (e.recall or 0, e.total)),
    PairedMetric("verification_rate", "Verification", False, lambda e: (e.verified_writes, e.writes)),
    PairedMetric(
        "false_success_rate",
        "False success",
        True,
        lambda e: None if e.false_success is None else (float(e.false_success), 1.0),
    ),
    PairedMetric("precheck_rate", "Pre-check", False, lambda e: (e.prechecked_writes, e.precheck_writes)),
    PairedMetric(
        "recovery_attempt_rate", "Recovery attempt", False, lambda e: (e.recovery_attempts, e.recoverable_errors)
    ),
    PairedMetric("recovery_rate", "Recovery", False, lambda e: (e.recoveries, e.recoverable_errors)),
    PairedMetric("defeatism_rate", "Defeatism", True, lambda e: (float(e.defeatism), float(e.recoverable_errors > 0))),
    PairedMetric("blind_retries", "Blind retries / episode", True, lambda e: (e.blind_retries, 1.0), True),
    PairedMetric("impatience", "Impatience / episode", True, lambda e: (e.impatience, 1.0), True),
    PairedMetric("invalid_calls", "Invalid calls / episode", True, lambda e: (e.invalid_calls, 1.0), True),
    PairedMetric("tool_calls", "Tool calls / episode", True, lambda e: (e.tool_calls, 1.0), True),
    PairedMetric("tokens", "Tokens / episode", True, _tokens, True),
)
"""Every score :func:`compare_pairs` compares, in report order. Rates are pooled as in the
aggregates; ``per_episode`` ones are means per episode (lower is better for them)."""


class PairedDifference(BaseModel):
    """One metric's paired difference ``B - A`` over the pairs that define it.

    ``a`` and ``b`` are the pooled values over those pairs (not the whole run's), ``difference``
    is ``b - a``, ``ci95`` the paired bootstrap interval (None when not computable), ``pairs``
    the pairs used; for success, ``mcnemar_p`` is the exact McNemar p-value and ``a_only`` /
    ``b_only`` the discordant pairs (A succeeded and B failed / the reverse).
    """

    metric: str
    label: str
    lower_is_better: bool
    per_episode: bool = False
    pairs: int = Field(ge=0)
    a: float | None = None
    b: float | None = None
    difference: float | None = None
    ci95: list[float] | None = None
    verdict: Verdict = Verdict.UNKNOWN
    mcnemar_p: float | None = None
    a_only: int | None = None
    b_only: int | None = None


def pooled(parts: Sequence[Part]) -> float | None:
    """``sum(numerators) / sum(denominators)``, None when the denominators sum to 0."""
    den = sum(d for _, d in parts)
    return sum(n for n, _ in parts) / den if den else None


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value: ``min(1, 2 * P(X <= min(b, c)))`` for ``X ~ Binomial(b + c, 1/2)``,
    with ``b``, ``c`` the discordant pair counts (McNemar 1947; the exact binomial form). 1.0
    when there is no discordant pair.

    Raises:
        ValueError: for a negative count.
    """
    if a_only < 0 or b_only < 0:
        raise ValueError(f"discordant counts must be >= 0, got {a_only} and {b_only}")
    n = a_only + b_only
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(a_only, b_only) + 1)) / float(2**n)
    return min(1.0, 2 * tail)


def bootstrap_interval(
    pairs: Sequence[tuple[Part, Part]], *, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> list[float] | None:
    """The paired percentile bootstrap 95% interval of ``pooled(B) - pooled(A)``.

    Args:
        pairs: ``((num_a, den_a), (num_b, den_b))`` per (task, trial) pair.
        resamples: bootstrap resamples (each draws ``len(pairs)`` pairs with replacement).
        seed: the seed of the ``random.Random`` that draws them.

    Returns:
        ``[low, high]`` (the ``ceil(0.025 m)``-th and ``ceil(0.975 m)``-th smallest of the
        ``m`` defined resamples), or None when there is no pair or fewer than
        :data:`MIN_DEFINED_SHARE` of the resamples define the statistic.
    """
    n = len(pairs)
    if n == 0 or resamples < 1:
        return None
    rng = random.Random(seed)
    num_a = [p[0][0] for p in pairs]
    den_a = [p[0][1] for p in pairs]
    num_b = [p[1][0] for p in pairs]
    den_b = [p[1][1] for p in pairs]
    index = range(n)
    stats: list[float] = []
    for _ in range(resamples):
        draw = rng.choices(index, k=n)
        da = sum(den_a[i] for i in draw)
        db = sum(den_b[i] for i in draw)
        if da and db:
            stats.append(sum(num_b[i] for i in draw) / db - sum(num_a[i] for i in draw) / da)
    m = len(stats)
    if m == 0 or m < MIN_DEFINED_SHARE * resamples:
        return None
    stats.sort()
    return [stats[math.ceil(0.025 * m) - 1], stats[math.ceil(0.975 * m) - 1]]


def verdict(ci: list[float] | None) -> Verdict:
    """ "no detectable difference" when ``ci`` contains 0, else higher or lower; unknown without one."""
    if ci is None:
        return Verdict.UNKNOWN
    if ci[0] <= 0 <= ci[1]:
        return Verdict.NONE
    return Verdict.HIGHER if ci[0] > 0 else Verdict.LOWER


def pair_episodes(
    a: Sequence[EpisodeScores], b: Sequence[EpisodeScores]
) -> tuple[list[tuple[EpisodeScores, EpisodeScores]], int]:
    """Match two agents' episodes on ``(task_id, trial)``; leave out pairs in which either
    episode errored (a provider or harness failure: in no figure, docs/design.md §7).

    Returns:
        The pairs, sorted by task and trial, and the number of matched pairs left out because
        an episode errored. An episode matched by no other is not compared.
    """
    theirs = {(e.task_id or e.episode_id, e.trial): e for e in b}
    out: list[tuple[EpisodeScores, EpisodeScores]] = []
    errored = 0
    for e in sorted(a, key=lambda x: (x.task_id or x.episode_id, x.trial)):
        other = theirs.get((e.task_id or e.episode_id, e.trial))
        if other is None:
            continue
        if EpisodeStatus.ERRORED in (e.status, other.status):
            errored += 1
            continue
        out.append((e, other))
    return out, errored


def compare_pairs(
    pairs: Sequence[tuple[EpisodeScores, EpisodeScores]],
    *,
    metrics: Sequence[PairedMetric] = PAIRED_METRICS,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> list[PairedDifference]:
    """The paired difference ``B - A`` of every metric over ``pairs`` (from :func:`pair_episodes`).

    A pair counts for a metric when both episodes define it (success: both outcomes known);
    see the module docstring for the interval and the McNemar test.
    """
    out = []
    for metric in metrics:
        used = [
            (pa, pb) for ea, eb in pairs if (pa := metric.part(ea)) is not None and (pb := metric.part(eb)) is not None
        ]
        a = pooled([p[0] for p in used])
        b = pooled([p[1] for p in used])
        diff = None if a is None or b is None else b - a
        ci = bootstrap_interval(used, resamples=resamples, seed=seed) if diff is not None else None
        row = PairedDifference(
            metric=metric.key,
            label=metric.label,
            lower_is_better=metric.lower_is_better,
            per_episode=metric.per_episode,
            pairs=len(used),
            a=a,
            b=b,
            difference=diff,
            ci95=ci,
            verdict=verdict(ci),
        )
        if metric.key == "success_rate":
            row.a_only = sum(1 for pa, pb in used if pa[0] > pb[0])
            row.b_only = sum(1 for pa, pb in used if pb[0] > pa[0])
            row.mcnemar_p = mcnemar_exact(row.a_only, row.b_only) if used else None
            if row.mcnemar_p is not None and row.mcnemar_p >= MCNEMAR_ALPHA:
                row.verdict = Verdict.NONE if row.verdict is not Verdict.UNKNOWN else row.verdict
        out.append(row)
    return out


__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "BOOTSTRAP_SEED",
    "MCNEMAR_ALPHA",
    "PAIRED_METRICS",
    "PairedDifference",
    "PairedMetric",
    "Verdict",
    "bootstrap_interval",
    "compare_pairs",
    "mcnemar_exact",
    "pair_episodes",
    "pooled",
    "verdict",
]
