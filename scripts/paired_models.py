"""The paired comparison of two agents' episodes on the same tasks and trials (docs/baselines.md).

Until ``mcpgym compare`` (the workflow issue) lands, this applies its rule to two run
directories: episodes are paired by ``(task_id, trial)``, errored episodes and pairs where a
score is undefined for either side left out; per score, the difference B - A of the means, a 95%
interval, and whether the score separates the two:

* ``success`` (0/1): the exact McNemar test on the discordant pairs (two-sided binomial
  p-value with p = 1/2: ``2 * P(X <= min(b, c))`` for ``b + c`` pairs, at most 1); the interval
  is the paired bootstrap's; it separates them when p < 0.05.
* every other score (recall, verification rate, false success, claimed success, defeatism,
  recovery, input tokens, seconds): the paired bootstrap (:data:`RESAMPLES` resamples of the
  pairs, seed :data:`SEED`), the 2.5th and 97.5th percentiles of the mean difference; it
  separates them when the interval excludes 0.

``python scripts/paired_models.py RUN_A AGENT_A RUN_B AGENT_B`` prints the table as Markdown;
:func:`compare` returns its rows.
"""

from __future__ import annotations

import math
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from mcpgym.evaluation.records.trajectory import MessageStep, Trajectory

RESAMPLES = 4000
"""Bootstrap resamples."""
SEED = 38
"""The bootstrap's seed (a fixed one: the table repeats)."""


class PairedRow(BaseModel):
    """One score of the comparison: pairs used, the two means, B - A, its interval, the test."""

    score: str
    pairs: int
    mean_a: float
    mean_b: float
    difference: float
    low: float
    high: float
    test: str
    p_value: float | None = None
    separates: bool


def mcnemar_exact(b: int, c: int) -> float:
    """The two-sided exact McNemar p-value of ``b`` and ``c`` discordant pairs (b + c = 0: 1)."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n
    return min(1.0, 2 * tail)


def bootstrap(diffs: list[float], resamples: int = RESAMPLES, seed: int = SEED) -> tuple[float, float]:
    """The 95% percentile interval of the mean of ``diffs`` resampled with replacement."""
    rng = random.Random(seed)
    n = len(diffs)
    means = sorted(sum(rng.choice(diffs) for _ in range(n)) / n for _ in range(resamples))
    return means[int(0.025 * resamples)], means[int(0.975 * resamples) - 1]


def seconds(t: Trajectory) -> float:
    """Wall seconds of the model's turns (the sum of its message steps' latencies)."""
    return sum(s.latency or 0.0 for s in t.steps if isinstance(s, MessageStep))


def _recovery(t: Trajectory) -> float | None:
    sc = t.scores
    return None if sc is None or not sc.recoverable_errors else sc.recoveries / sc.recoverable_errors


SCORES: dict[str, Callable[[Trajectory], float | None]] = {
    "success": lambda t: None if t.scores is None or t.scores.success is None else float(t.scores.success),
    "recall": lambda t: None if t.scores is None else t.scores.recall,
    "verification rate": lambda t: None if t.scores is None else t.scores.verification_rate,
    "claimed success": lambda t: None if t.scores is None else float(t.scores.claimed_success),
    "false success": lambda t: (
        None if t.scores is None or t.scores.false_success is None else float(t.scores.false_success)
    ),
    "recovery": _recovery,
    "defeatism": lambda t: None if t.scores is None else float(t.scores.defeatism),
    "input tokens": lambda t: None if t.tokens is None else float(t.tokens.input),
    "seconds": seconds,
}
"""Score name -> its value of one episode (None: undefined there)."""


def compare(a: list[Trajectory], b: list[Trajectory]) -> list[PairedRow]:
    """The rows of the comparison of episodes ``a`` with ``b`` (module docstring)."""
    keyed_a = {(t.task_id, t.trial): t for t in a if t.status != "errored"}
    keyed_b = {(t.task_id, t.trial): t for t in b if t.status != "errored"}
    keys = sorted(set(keyed_a) & set(keyed_b))
    rows = []
    for name, value in SCORES.items():
        pairs = [(value(keyed_a[k]), value(keyed_b[k])) for k in keys]
        used = [(x, y) for x, y in pairs if x is not None and y is not None]
        if not used:
            continue
        diffs = [y - x for x, y in used]
        low, high = bootstrap(diffs)
        mean_a = sum(x for x, _ in used) / len(used)
        mean_b = sum(y for _, y in used) / len(used)
        common = {
            "score": name,
            "pairs": len(used),
            "mean_a": mean_a,
            "mean_b": mean_b,
            "difference": mean_b - mean_a,
            "low": low,
            "high": high,
        }
        if name == "success":
            worse = sum(x == 1 and y == 0 for x, y in used)
            better = sum(x == 0 and y == 1 for x, y in used)
            p = mcnemar_exact(worse, better)
            test = f"exact McNemar, {worse + better} discordant ({better} B only, {worse} A only)"
            row = PairedRow(**common, test=test, p_value=p, separates=p < 0.05)
        else:
            row = PairedRow(**common, test="paired bootstrap", separates=low > 0 or high < 0)
        rows.append(row)
    return rows


def _shown(x: float, name: str) -> str:
    if name in ("input tokens", "seconds"):
        return f"{x:,.0f}" if abs(x) >= 10 else f"{x:.1f}"
    return f"{x:.2f}"


def markdown(rows: list[PairedRow]) -> str:
    """The rows as a Markdown table."""
    out = [
        "| Score | Pairs | A | B | B - A | 95% interval | Test | Separates |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        test = r.test + (f", p = {r.p_value:.3f}" if r.p_value is not None else "")
        out.append(
            f"| {r.score} | {r.pairs} | {_shown(r.mean_a, r.score)} | {_shown(r.mean_b, r.score)} | "
            f"{_shown(r.difference, r.score)} | [{_shown(r.low, r.score)}, {_shown(r.high, r.score)}] | {test} | "
            f"{'yes' if r.separates else 'no'} |"
        )
    return "\n".join(out)


def cost_table(groups: list[tuple[str, list[Trajectory]]]) -> str:
    """Time and tokens per episode of each ``(label, trajectories)`` group, errored episodes left
    out: episodes, median and mean wall seconds of the model's turns, mean input and output
    tokens, as a Markdown table."""
    out = [
        "| Model | Episodes | Seconds per episode, median | mean | Input tokens per episode, mean | Output tokens per episode, mean |",
        "|---|---|---|---|---|---|",
    ]
    for label, trajectories in groups:
        done = [t for t in trajectories if t.status != "errored"]
        walls = sorted(seconds(t) for t in done)
        n = len(done)
        median_s = (walls[(n - 1) // 2] + walls[n // 2]) / 2
        tokens_in = sum(t.tokens.input for t in done if t.tokens) / n
        tokens_out = sum(t.tokens.output for t in done if t.tokens) / n
        out.append(f"| {label} | {n} | {median_s:.0f} | {sum(walls) / n:.0f} | {tokens_in:,.0f} | {tokens_out:,.0f} |")
    return "\n".join(out)


def episodes_of(run: Path, agent: str) -> list[Trajectory]:
    """The trajectories of ``agent`` in the run directory ``run``, each with ``scores`` as this
    version scores it (``mcpgym report``'s scoring: :func:`~mcpgym.evaluation.report.run_report.build_report`)."""
    from mcpgym.evaluation.report.run_report import build_report
    from mcpgym.evaluation.run.run_dir import load_run

    scored = {e.episode_id: e for e in build_report(run).episodes}
    return [
        t.model_copy(update={"scores": scored[t.episode_id]})
        for t in load_run(run, states=False)
        if t.agent == agent and t.episode_id in scored
    ]


def main(argv: list[str] | None = None) -> Any:
    """``RUN_A AGENT_A RUN_B AGENT_B``: print the Markdown table."""
    args = argv if argv is not None else sys.argv[1:]
    if len(args) != 4:
        raise SystemExit("usage: python scripts/paired_models.py RUN_A AGENT_A RUN_B AGENT_B")
    a, b = episodes_of(Path(args[0]), args[1]), episodes_of(Path(args[2]), args[3])
    rows = compare(a, b)
    print(markdown(rows))
    print()
    print(cost_table([(args[1], a), (args[3], b)]))
    return rows


if __name__ == "__main__":
    main()
