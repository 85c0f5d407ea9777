"""Behaviour-scoring throughput: ``mcpgym.evaluation.scoring.scorer.score_episode`` over synthetic trajectories.

The trajectories are recorded, not invented: a seeded "shopper" (``random.Random``, local to
the benchmark) drives a real :class:`mcpgym.tools.invoke.ToolInvoker` over apps ``system, shop``,
every other trajectory under the ``default`` fault profile (what ``mcpgym run`` uses) and the
others under ``harsh`` (all seven fault kinds, a third of the calls fail), through reads, writes,
payment authorisations, checkouts, retries, waits and re-authentications, and each episode's
call log and fault ledger become a :class:`mcpgym.evaluation.records.trajectory.Trajectory`. No snapshots are
attached, so the figure is the behaviour rules (verification, pre-checks, blind retries,
recovery, defeatism, impatience), not the state judge.

Value: trajectory steps scored per CPU second (target at least 50,000). Baseline, interleaved
per trajectory: ``Trajectory.model_validate_json`` of the same trajectory (what ``mcpgym
score`` spends reading it); ratio = scoring time / parsing time.
"""

from __future__ import annotations

import random
import time
from typing import Any

from mcpgym.benchmarks.harness import Figure, Settings, gc_paused, median

SCORING_TARGET = 50_000.0
FINAL_MESSAGES = (
    "Done: the order is placed and I checked it.",
    "I added the items to your cart.",
    "I was unable to complete the purchase because the service is down; please try again later.",
    "Sorry, I cannot finish this: the payment failed.",
)


PROFILES = ("default", "harsh")


def synthetic_trajectories(count: int, steps: int, seed: int = 0) -> list[Any]:
    """Record ``count`` trajectories of ``steps`` tool calls each (see the module docstring);
    trajectory ``t`` uses fault profile ``PROFILES[t % 2]``.

    Returns:
        :class:`mcpgym.evaluation.records.trajectory.Trajectory` objects with call log steps and ledger.
    """
    from mcpgym.evaluation.records.trajectory import Trajectory, steps_from_call_log
    from mcpgym.kernel.world import World
    from mcpgym.sandboxes.shop.models import ShopState
    from mcpgym.tools.invoke import ToolInvoker

    rnd = random.Random(seed)
    out = []
    for t in range(count):
        world = World(t % 8, ["system", "shop"])
        profile = PROFILES[t % len(PROFILES)]
        inv = ToolInvoker(world, profile, fault_seed=t)
        shop_state = world.apps["shop"].state
        assert isinstance(shop_state, ShopState), "the shop app's state is a ShopState"
        items = sorted(shop_state.items)
        auth_id = "pay-unknown"
        last: tuple[str, dict[str, Any]] | None = None
        while len(inv.calls) < steps:
            r = rnd.random()
            item = rnd.choice(items[:12])
            if last is not None and r < 0.12:
                name, args = last  # a retry of the previous call (blind or not)
            elif r < 0.25:
                name, args = "shop_get_item", {"item_id": item}
            elif r < 0.40:
                name, args = "shop_add_to_cart", {"item_id": item, "quantity": rnd.randint(1, 2)}
            elif r < 0.52:
                name, args = "shop_get_cart", {}
            elif r < 0.58:
                name, args = "shop_remove_from_cart", {"item_id": item}
            elif r < 0.64:
                name, args = "shop_search_items", {"query": rnd.choice(["", "tea", "lamp", "book"]), "limit": 5}
            elif r < 0.70:
                name, args = "system_get_wallet_balance", {}
            elif r < 0.76:
                name, args = "system_authorize_payment", {"limit_cents": rnd.randint(1_000, 500_000)}
            elif r < 0.82:
                name, args = "shop_checkout", {"authorization_id": auth_id}
            elif r < 0.86:
                name, args = "shop_list_orders", {}
            elif r < 0.90:
                name, args = "system_wait", {"seconds": rnd.choice([30, 60, 120])}
            elif r < 0.93:
                name, args = "system_authenticate", {}
            elif r < 0.96:
                name, args = "shop_update_cart_quantity", {"item_id": item, "quantity": rnd.randint(0, 3)}
            else:
                name, args = "shop_get_wallet_balance", {}
            outcome = inv.call(name, args)
            if name == "system_authorize_payment" and not outcome.is_error:
                auth_id = outcome.payload["authorization"]["auth_id"]
            last = (name, args)
        out.append(
            Trajectory(
                episode_id=f"bench-{t:04d}",
                agent="bench",
                trial=0,
                world_seed=t % 8,
                fault_seed=t,
                fault_profile=profile,
                apps=["system", "shop"],
                steps=steps_from_call_log(inv.calls),
                final_message=rnd.choice(FINAL_MESSAGES),
                ledger=[e.model_dump(mode="json") for e in inv.ledger],
            )
        )
    return out


def scoring_throughput(settings: Settings) -> Figure:
    """Figure: trajectory steps scored per CPU second (see the module docstring)."""
    from mcpgym.evaluation.records.trajectory import Trajectory
    from mcpgym.evaluation.scoring.scorer import score_episode
    from mcpgym.evaluation.scoring.tool_catalog import Catalog

    catalog = Catalog.from_apps()
    trajs = synthetic_trajectories(settings.trajectories, settings.steps_per_trajectory)
    lines = [t.model_dump_json() for t in trajs]
    n_steps = sum(len(t.server_calls) for t in trajs)
    for t in trajs[:3]:  # warm-up
        score_episode(t, catalog)
    rates, ratios, errors, recoverable = [], [], 0, 0
    by_profile: dict[str, list[float]] = {p: [] for p in PROFILES}
    steps_of = {p: sum(len(t.server_calls) for t in trajs if t.fault_profile == p) for p in PROFILES}
    for _ in range(settings.reps):
        t_score = t_parse = 0.0
        t_profile = dict.fromkeys(PROFILES, 0.0)
        with gc_paused():
            for traj, line in zip(trajs, lines, strict=False):
                c0 = time.process_time()
                sc = score_episode(traj, catalog)
                c1 = time.process_time()
                Trajectory.model_validate_json(line)
                c2 = time.process_time()
                t_score += c1 - c0
                t_parse += c2 - c1
                t_profile[traj.fault_profile] += c1 - c0
                recoverable += sc.recoverable_errors
                errors += sc.error_calls
        rates.append(n_steps / t_score if t_score > 0 else float("inf"))
        ratios.append(t_score / t_parse if t_parse > 0 else float("inf"))
        for p in PROFILES:
            if t_profile[p] > 0:
                by_profile[p].append(steps_of[p] / t_profile[p])
    value = median(rates)
    return Figure(
        name="scoring_throughput",
        title="behaviour scoring, score_episode (CPU time)",
        value=round(value),
        unit="steps/s",
        target=SCORING_TARGET,
        op=">=",
        baseline="Trajectory.model_validate_json of the same lines",
        ratio=round(median(ratios), 2),
        details={
            "trajectories": len(trajs),
            "steps": n_steps,
            "steps_per_s_per_rep": [round(r) for r in rates],
            "error_steps_per_rep": errors // settings.reps,
            "recoverable_errors_per_rep": recoverable // settings.reps,
            "profiles": list(PROFILES),
            "steps_per_s_by_profile": {p: round(median(v)) for p, v in by_profile.items() if v},
            "reps": settings.reps,
        },
    )


__all__ = ["scoring_throughput", "synthetic_trajectories"]
