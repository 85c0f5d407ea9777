"""In-process figures: the invoker's call path, world creation, memory per live episode.

Absolute in-process times are CPU times of this process (``time.process_time``), not wall
times: on a shared machine a wall clock also counts the time other processes held the CPU.
Ratios use ``time.perf_counter`` on interleaved calls (both sides share the same
contention).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

from mcpgym.benchmarks.harness import Figure, Settings, gc_paused, median
from mcpgym.benchmarks.workload import (
    APPS,
    PROFILE,
    WORLD_SEED,
    WRITE_TOOL,
    fault_seed_for_workload,
    settle,
    workload_item,
    write_arguments,
)

INPROC_TARGET = 3.0
WORLD_TARGET_MS = 50.0
MEMORY_TARGET_MIB = 0.25
"""Issue 30: at most 0.25 MiB per live all-app episode (was 1.29 MiB before template worlds)."""


# -- the invoker's call path ------------------------------------------------------------------------
def _call_path_rep(n: int, item: str, fault_seed: int) -> tuple[list[float], list[float], int]:
    """One repetition: ``n`` x (timed ``ToolInvoker.call``, untimed settle, timed direct method call)."""
    from mcpgym.kernel.world import World
    from mcpgym.sandboxes.shop.app import ShopApp
    from mcpgym.tools.invoke import ToolInvoker

    invoker = ToolInvoker(World(WORLD_SEED, list(APPS)), PROFILE, fault_seed)
    direct_world = World(WORLD_SEED, list(APPS))
    shop = direct_world.apps["shop"]
    assert isinstance(shop, ShopApp), "the shop app of a world is a ShopApp"
    spec = invoker.specs[WRITE_TOOL]
    args = write_arguments(item)
    kwargs = dict(args)

    def call(name: str, arguments: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
        out = invoker.call(name, arguments)
        return out.is_error, out.payload

    t_inv: list[float] = []
    t_direct: list[float] = []
    faulted = 0
    with gc_paused():
        for _ in range(n):
            t0 = time.perf_counter()
            out = invoker.call(WRITE_TOOL, args)
            t1 = time.perf_counter()
            spec.func(shop, **kwargs)
            t2 = time.perf_counter()
            t_inv.append(t1 - t0)
            t_direct.append(t2 - t1)
            faulted += out.is_error
            settle(call, item, out.is_error, out.payload)
            shop.shop_remove_from_cart(item_id=item)
    return t_inv, t_direct, faulted


def invoker_call_path(settings: Settings) -> Figure:
    """Figure: ``ToolInvoker.call`` of the workload write (validation, fault decision, sandbox
    method, result dump, call log) / the same sandbox method called directly with parsed
    arguments, per call, interleaved; median over repetitions of the ratio of medians."""
    item = workload_item()
    fault_seed = fault_seed_for_workload()
    _call_path_rep(20, item, fault_seed)  # warm-up
    ratios, inv_med, direct_med, faulted = [], [], [], 0
    for _ in range(settings.reps):
        a, b, f = _call_path_rep(settings.inproc_calls, item, fault_seed)
        ratios.append(median(a) / median(b))
        inv_med.append(median(a))
        direct_med.append(median(b))
        faulted += f
    value = median(ratios)
    return Figure(
        name="inproc_call_path",
        title=f"in-process ToolInvoker.call, {WRITE_TOOL} (faults {PROFILE})",
        value=round(value, 3),
        unit="x direct",
        target=INPROC_TARGET,
        op="<=",
        baseline="the sandbox method called directly",
        ratio=round(value, 3),
        details={
            "invoker_median_us": round(median(inv_med) * 1e6, 2),
            "direct_median_us": round(median(direct_med) * 1e6, 2),
            "ratio_per_rep": [round(r, 3) for r in ratios],
            "timed_calls_per_rep": settings.inproc_calls,
            "reps": settings.reps,
            "timed_calls_faulted": faulted,
            "fault_seed": fault_seed,
        },
    )


# -- world creation ---------------------------------------------------------------------------------
def world_creation(settings: Settings) -> Figure:
    """Figure: CPU milliseconds to build ``World(seed, "all")`` (absolute target 50 ms).

    Interleaved per seed with two baselines: ``World.restore`` of that world's snapshot (the
    pydantic ``model_validate`` of the same state: the ratio column) and ``World(seed,
    ["system"])`` (the smallest world).
    """
    from mcpgym.kernel.world import World

    World(10_000, "all")  # warm-up: imports, registry, pydantic schemas
    per_rep_all, per_rep_restore, per_rep_system, per_rep_wall = [], [], [], []
    seed = 0
    for _ in range(settings.reps):
        t_all, t_restore, t_system, t_wall = [], [], [], []
        with gc_paused():
            for _ in range(settings.worlds):
                c0, w0 = time.process_time(), time.perf_counter()
                world = World(seed, "all")
                c1, w1 = time.process_time(), time.perf_counter()
                snap = world.snapshot()
                c2 = time.process_time()
                World.restore(snap)
                c3 = time.process_time()
                World(seed, ["system"])
                c4 = time.process_time()
                t_all.append(c1 - c0)
                t_wall.append(w1 - w0)
                t_restore.append(c3 - c2)
                t_system.append(c4 - c3)
                seed += 1
        per_rep_all.append(median(t_all))
        per_rep_restore.append(median(t_restore))
        per_rep_system.append(median(t_system))
        per_rep_wall.append(median(t_wall))
    value_ms = median(per_rep_all) * 1e3
    ratio_restore = median(a / b for a, b in zip(per_rep_all, per_rep_restore, strict=False))
    ratio_system = median(a / b for a, b in zip(per_rep_all, per_rep_system, strict=False))
    return Figure(
        name="world_creation",
        title="world creation, all apps, one seed (CPU time)",
        value=round(value_ms, 2),
        unit="ms",
        target=WORLD_TARGET_MS,
        op="<=",
        baseline="World.restore of the same snapshot (model_validate)",
        ratio=round(ratio_restore, 2),
        details={
            "restore_ms": round(median(per_rep_restore) * 1e3, 3),
            "system_only_ms": round(median(per_rep_system) * 1e3, 3),
            "ratio_vs_system_only": round(ratio_system, 1),
            "wall_ms": round(median(per_rep_wall) * 1e3, 2),
            "per_rep_ms": [round(x * 1e3, 2) for x in per_rep_all],
            "worlds_per_rep": settings.worlds,
            "reps": settings.reps,
        },
    )


# -- memory per live episode ---------------------------------------------------------------------------
MEMORY_CHILD = """
import gc, json, sys, tracemalloc
from mcpgym.benchmarks.harness import rss_bytes
from mcpgym.benchmarks.rollouts import episode_plan
from mcpgym.kernel.world import canonical_json
from mcpgym.server.episode import EpisodeStore
n, traced_n = int(sys.argv[1]), int(sys.argv[2])
task, calls, _ = episode_plan(True)
store = EpisodeStore(max_episodes=n + traced_n + 10)
def episode():
    ep = store.create(seed=task.seed, apps=list(task.apps), faults="none")
    for name, args in calls:
        ep.call(name, args)
    return ep
warm = episode()
json_bytes = len(canonical_json(warm.world.snapshot()).encode())
store.delete(warm.episode_id)
del warm
gc.collect()
base = rss_bytes()
for _ in range(n):
    episode()
gc.collect()
out = {"rss_delta": rss_bytes() - base, "episodes": n, "json_bytes": json_bytes}
tracemalloc.start()
before = tracemalloc.get_traced_memory()[0]
for _ in range(traced_n):
    episode()
gc.collect()
out["traced_delta"] = tracemalloc.get_traced_memory()[0] - before
out["traced_episodes"] = traced_n
print(json.dumps(out))
"""


def _memory_child(n: int, traced: int) -> dict[str, Any]:
    """In a fresh interpreter, hold ``n`` live all-app episodes (RSS growth), then ``traced``
    more under ``tracemalloc``; return the measurements."""
    from mcpgym.benchmarks.transport import ROOT

    proc = subprocess.run(
        [sys.executable, "-c", MEMORY_CHILD, str(n), str(traced)],
        cwd=str(ROOT),
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"memory probe failed (exit {proc.returncode}): {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def episode_memory(settings: Settings) -> Figure:
    """Figure: memory per live episode (all apps, after the six calls of the rollout workload,
    :func:`mcpgym.benchmarks.rollouts.episode_plan`) with ``episodes`` held.

    Each repetition is a fresh interpreter that creates ``episodes`` episodes of one task (one
    template world: its trials and agents) in an
    :class:`mcpgym.server.episode.EpisodeStore` and reports its RSS growth / ``episodes`` (RSS, not
    tracemalloc, so that allocator overhead counts); it then creates a few more under
    ``tracemalloc`` (Python-object bytes, in the details). Ratio: in-memory bytes per episode /
    the bytes of the episode's world snapshot as canonical JSON.
    """
    n = settings.episodes
    reps = 3 if settings.mode == "full" else 1
    traced = {"full": 50, "quick": 5}.get(settings.mode, 2)
    runs = [_memory_child(n, traced) for _ in range(reps)]
    per_ep = [r["rss_delta"] / r["episodes"] for r in runs]
    traced_per_ep = [r["traced_delta"] / r["traced_episodes"] for r in runs]
    value = median(per_ep) / 2**20
    json_bytes = runs[0]["json_bytes"]
    return Figure(
        name="episode_memory",
        title=f"memory per live episode, all apps ({n} held, RSS)",
        value=round(value, 3),
        unit="MiB",
        target=MEMORY_TARGET_MIB,
        op="<=",
        baseline="the world snapshot as canonical JSON",
        ratio=round(median(per_ep) / json_bytes, 2),
        details={
            "per_rep_mib": [round(x / 2**20, 3) for x in per_ep],
            "tracemalloc_mib": round(median(traced_per_ep) / 2**20, 3),
            "tracemalloc_episodes": traced,
            "snapshot_json_kib": round(json_bytes / 1024, 1),
            "episodes": n,
            "reps": reps,
        },
    )


__all__ = ["episode_memory", "invoker_call_path", "world_creation"]
