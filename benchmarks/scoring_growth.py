"""How scoring time grows with the length of one episode: ``score_episode`` on one episode of
16,000 tool calls against one of 2,000 (issue 29: 2k/4k/8k/16k calls took 2.3/2.8/5.2/20.4 s
when the behaviour rules scanned forward from every call).

The episodes mix seven shop and system tools (searches, cart and order reads and writes,
settings) at random with a seeded ``random.Random``, 15% of the calls failing with an injected
``transient``, ``rate_limited`` or ``timeout`` fault; reads seldom match the writes before
them, so verification, recovery and impatience windows look far ahead: the case that made
forward scans quadratic (measured on a loaded 2-core machine, CPU s for 2k / 4k / 8k / 16k
calls: forward scans 0.06 / 0.19 / 0.72 / 3.35, i.e. 7x per call at 16k vs 2k; call indexes
0.033 / 0.056 / 0.113 / 0.317).

Value: CPU seconds per call at ``long`` calls / CPU seconds per call at ``short`` calls (the
baseline, measured in the same run, interleaved); linear scoring gives about 1, quadratic
scoring gives ``long / short`` (8). Target at most 1.5.
"""

from __future__ import annotations

import random
import time
from typing import Any

from mcpgym.benchmarks.harness import Figure, Settings, gc_paused, median

GROWTH_TARGET = 1.5


TOOLS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("shop_search_products", {"query": "mouse"}),
    ("shop_add_to_cart", {"product_id": "p1", "quantity": 1}),
    ("shop_get_cart", {}),
    ("shop_place_order", {}),
    ("shop_get_order", {"order_id": "o1"}),
    ("system_get_settings", {}),
    ("system_set_setting", {"key": "dark_mode", "value": True}),
)


def long_episode(calls: int, seed: int = 0) -> Any:
    """One trajectory of ``calls`` tool calls (module docstring)."""
    from mcpgym.evaluation.records.trajectory import ToolCallStep, Trajectory

    rnd = random.Random(seed)
    steps = []
    for i in range(calls):
        tool, args = rnd.choice(TOOLS)
        args = dict(args)
        if "product_id" in args:
            args["product_id"] = f"p{rnd.randrange(50)}"
        code = rnd.choice(("transient", "rate_limited", "timeout")) if rnd.random() < 0.15 else None
        steps.append(
            ToolCallStep(
                step=i + 1,
                tool=tool,
                arguments=args,
                is_error=code is not None,
                error_code=code,
                result={"error": {"code": code, "message": "injected", "retryable": True}} if code else {"ok": True},
                fault=code,
                time=1_000 + i,
            )
        )
    return Trajectory(
        episode_id=f"long-{calls}",
        task_id="bench.long",
        agent="bench",
        trial=0,
        level=1,
        apps=["system", "shop"],
        steps=steps,
        final_message="Done: the order is placed.",
        ledger=[],
    )


def scoring_growth(settings: Settings) -> Figure:
    """Figure: per-call scoring time at 16,000 calls / at 2,000 calls (module docstring)."""
    from mcpgym.evaluation.scoring.scorer import score_episode
    from mcpgym.evaluation.scoring.tool_catalog import Catalog

    short, long = (2_000, 16_000) if settings.mode != "tiny" else (40, 320)
    catalog = Catalog.from_apps()
    episodes = {n: long_episode(n) for n in (short, long)}
    score_episode(episodes[short], catalog)  # warm-up
    per_call: dict[int, list[float]] = {short: [], long: []}
    ratios = []
    for _ in range(max(1, settings.reps // 2)):
        with gc_paused():
            for n in (short, long):
                c0 = time.process_time()
                score_episode(episodes[n], catalog)
                per_call[n].append((time.process_time() - c0) / n)
        ratios.append(per_call[long][-1] / per_call[short][-1] if per_call[short][-1] > 0 else 1.0)
    value = median(ratios)
    return Figure(
        name="scoring_growth",
        title=f"scoring one episode of {long:,} calls vs {short:,} (CPU time per call)",
        value=round(value, 2),
        unit="x per call",
        target=GROWTH_TARGET,
        op="<=",
        baseline=f"score_episode per call on an episode of {short:,} calls",
        ratio=round(value, 2),
        details={
            "calls": [short, long],
            "score_seconds": {str(n): round(median(v) * n, 3) for n, v in per_call.items()},
            "ratio_per_rep": [round(r, 2) for r in ratios],
        },
    )


__all__ = ["long_episode", "scoring_growth"]
