"""The statistics of an aggregate row: pooled rates, the Wilson interval and pass^k.

Read by the aggregate rules of :mod:`mcpgym.evaluation.records.scores` (docs/design.md §7,
"Aggregates"); re-exported by :mod:`mcpgym.evaluation.scoring.aggregate`.
"""

from __future__ import annotations

import math

from mcpgym.kernel.wording import counted

Z_95 = 1.96
"""z for a two-sided 95% interval."""


def rate(num: int, den: int) -> float | None:
    """``num / den``, or None when ``den`` is 0 (a rate with nothing to count is unknown, not 0)."""
    return num / den if den else None


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
            raise ValueError(f"task {task!r} has {counted(n, 'trial')}, fewer than k={k}")
        total += math.comb(c, k) / math.comb(n, k)
    return total / len(results_by_task)


def pass_k_table(results_by_task: dict[str, list[bool]]) -> dict[str, float]:
    """``{"1": pass^1, ..., "n_min": pass^n_min}`` with ``n_min`` the fewest trials of any task."""
    if not results_by_task:
        return {}
    n_min = min(len(r) for r in results_by_task.values())
    return {str(k): pass_hat_k(results_by_task, k) for k in range(1, n_min + 1)}  # type: ignore[misc]


__all__ = ["Z_95", "pass_hat_k", "pass_k_table", "rate", "wilson_interval"]
