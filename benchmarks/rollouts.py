"""Rollout figures (issue 30): what one in-process episode costs, what judging costs, and how
long a full garbage collection stops a process holding 1,000 live episodes.

The episode (:func:`episode_plan`): ``GymEpisode.create`` of a task, six tool calls, ``finish``
(judge and behaviour scores), faults off, the gold state shared as a run shares it. The
all-app episode is ``shop.buy_cheapest_earbuds`` played in a world of every app; the one-app
episode a ``system``-only task of the ``full`` suite. The six calls are those the careful
scripted agent makes on the task (its first six, its reads repeated when it makes fewer).
Times are CPU times of this process (``time.process_time``); each repetition interleaves the
episode with its baseline, the same six calls through ``ToolInvoker.call`` on a world made
beforehand, and the figure is the median over repetitions.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

from mcpgym.benchmarks.harness import Figure, Settings, median

ALL_APP_TASK = "shop.buy_cheapest_earbuds"
EPISODE_ALL_TARGET_MS = 6.0
EPISODE_ONE_TARGET_MS = 0.6
JUDGE_TARGET = 1.0
GC_PAUSE_TARGET_MS = 50.0
GC_EPISODES = 1000


def episode_plan(all_apps: bool) -> tuple[Any, list[tuple[str, dict[str, Any]]], dict[str, Any]]:
    """``(task, calls, gold)`` of the all-app or the one-app episode (see the module docstring).

    Raises:
        RuntimeError: when the careful agent makes no call on the task.
    """
    import anyio

    from mcpgym.evaluation.agents import make_agent
    from mcpgym.evaluation.run.gym import GymEpisode
    from mcpgym.evaluation.tasks import gold_snapshot, registry
    from mcpgym.kernel.app import app_names

    if all_apps:
        task = registry.get_task(ALL_APP_TASK)
        task = task.model_copy(update={"apps": app_names()})
    else:
        task = next(t for t in registry.load_tasks("full") if tuple(t.apps) == ("system",))
    ep = GymEpisode.create(task, faults="none")
    anyio.run(ep.run_agent, make_agent("careful"))
    made = [(c["tool"], c["arguments"]) for c in ep._episode.calls()]
    if not made:
        raise RuntimeError(f"the careful agent made no call on {task.id}")
    reads = [c for c in made if c[0].split("_", 2)[1] in ("get", "list", "search")] or made[:1]
    calls = made[:6]
    while len(calls) < 6:
        calls.append(reads[len(calls) % len(reads)])
    return task, calls, gold_snapshot(task)


def _one_episode(task: Any, calls: list[tuple[str, dict[str, Any]]], gold: dict[str, Any]) -> tuple[float, ...]:
    """CPU seconds of (create, calls, finish) of one ``GymEpisode``."""
    from mcpgym.evaluation.run.gym import GymEpisode

    c0 = time.process_time()
    ep = GymEpisode.create(task, faults="none", gold=gold)
    c1 = time.process_time()
    for name, args in calls:
        ep.step(name, args)
    c2 = time.process_time()
    ep.finish("done")
    c3 = time.process_time()
    return c1 - c0, c2 - c1, c3 - c2


def _calls_only(task: Any, calls: list[tuple[str, dict[str, Any]]]) -> float:
    """CPU seconds of the six calls through ``ToolInvoker.call`` on a world made beforehand."""
    from mcpgym.kernel.world import World
    from mcpgym.tools.invoke import ToolInvoker

    invoker = ToolInvoker(World(task.seed, list(task.apps)), "none")
    c0 = time.process_time()
    for name, args in calls:
        invoker.call(name, args)
    return time.process_time() - c0


def _episode_figure(settings: Settings, all_apps: bool) -> Figure:
    task, calls, gold = episode_plan(all_apps)
    n = {"full": 200, "quick": 60}.get(settings.mode, 3)
    for _ in range(3):  # warm-up: the template, the catalog, the judge's cached views
        _one_episode(task, calls, gold)
    per_rep: list[float] = []
    ratios: list[float] = []
    phases: dict[str, list[float]] = {"create": [], "calls": [], "judge": []}
    for _ in range(settings.reps):
        eps, base = [], []
        for _ in range(n):
            eps.append(_one_episode(task, calls, gold))
            base.append(_calls_only(task, calls))
        whole = [sum(e) for e in eps]
        per_rep.append(median(whole))
        ratios.append(median(whole) / max(median(base), 1e-9))
        for i, key in enumerate(("create", "calls", "judge")):
            phases[key].append(median([e[i] for e in eps]))
    value_ms = median(per_rep) * 1e3
    label = "all apps" if all_apps else "one app (system)"
    return Figure(
        name="episode_all_apps" if all_apps else "episode_one_app",
        title=f"in-process episode, {label}: create + 6 calls + judge (CPU time)",
        value=round(value_ms, 3),
        unit="ms",
        target=EPISODE_ALL_TARGET_MS if all_apps else EPISODE_ONE_TARGET_MS,
        op="<=",
        baseline="the same 6 calls through ToolInvoker.call on a world made beforehand",
        ratio=round(median(ratios), 2),
        details={
            "episodes_per_cpu_second": round(1000 / value_ms, 1) if value_ms > 0 else None,
            "create_ms": round(median(phases["create"]) * 1e3, 3),
            "calls_ms": round(median(phases["calls"]) * 1e3, 3),
            "judge_ms": round(median(phases["judge"]) * 1e3, 3),
            "task": task.id,
            "apps": list(task.apps),
            "calls": [c[0] for c in calls],
            "episodes_per_rep": n,
            "reps": settings.reps,
            "per_rep_ms": [round(x * 1e3, 3) for x in per_rep],
        },
    )


def episode_all_apps(settings: Settings) -> Figure:
    """Figure: CPU ms of one all-app in-process episode (target at most 6 ms)."""
    return _episode_figure(settings, True)


def episode_one_app(settings: Settings) -> Figure:
    """Figure: CPU ms of one one-app (``system``) in-process episode (target at most 0.6 ms)."""
    return _episode_figure(settings, False)


def judge_time(settings: Settings) -> Figure:
    """Figure: CPU time of judging the all-app episode (``judge`` on its initial, final and gold
    snapshots, the cached views warm as in a run) / one ``World.restore`` of its final snapshot,
    interleaved; target at most 1x."""
    from mcpgym.evaluation.run.gym import GymEpisode
    from mcpgym.evaluation.scoring.judge import judge
    from mcpgym.kernel.world import World

    task, calls, gold = episode_plan(True)
    n = {"full": 200, "quick": 60}.get(settings.mode, 3)
    ratios, judged, restored = [], [], []
    for _ in range(settings.reps):
        t_j, t_r = [], []
        for _ in range(n):
            ep = GymEpisode.create(task, faults="none", gold=gold)
            for name, args in calls:
                ep.step(name, args)
            initial, final = ep._episode.initial_snapshot, ep._episode.world.snapshot()
            c0 = time.process_time()
            judge(initial, final, gold, task=task.id)
            c1 = time.process_time()
            World.restore(final)
            c2 = time.process_time()
            t_j.append(c1 - c0)
            t_r.append(c2 - c1)
        judged.append(median(t_j))
        restored.append(median(t_r))
        ratios.append(median(t_j) / max(median(t_r), 1e-9))
    value = median(ratios)
    return Figure(
        name="judge_time",
        title="judging an all-app episode vs one World.restore (CPU time)",
        value=round(value, 3),
        unit="x restore",
        target=JUDGE_TARGET,
        op="<=",
        baseline="World.restore of the episode's final snapshot",
        ratio=round(value, 3),
        details={
            "judge_ms": round(median(judged) * 1e3, 3),
            "restore_ms": round(median(restored) * 1e3, 3),
            "episodes_per_rep": n,
            "reps": settings.reps,
        },
    )


GC_CHILD = """
import gc, json, sys, time
from mcpgym.benchmarks.harness import rss_bytes
from mcpgym.benchmarks.rollouts import episode_plan
from mcpgym.evaluation.run.gym import GymEpisode
from mcpgym.kernel.world import canonical_json
from mcpgym.server.serve import tune_gc
n = int(sys.argv[1])
task, calls, gold = episode_plan(True)
warm = GymEpisode.create(task, faults="none", gold=gold)
json_bytes = len(canonical_json(warm._episode.world.snapshot()).encode())
del warm
tune_gc(task.seed, list(task.apps))  # what a serving process does at start-up
def pause():
    out = []
    for _ in range(5):
        t0 = time.perf_counter(); gc.collect(); out.append(time.perf_counter() - t0)
    return max(out)
empty = pause()
base = rss_bytes()
live = []
for _ in range(n):
    ep = GymEpisode.create(task, faults="none", gold=gold)
    for name, args in calls:
        ep.step(name, args)
    live.append(ep)
gc.collect()
rss = rss_bytes() - base
print(json.dumps({"pause": pause(), "empty": empty, "rss": rss, "episodes": n, "json_bytes": json_bytes,
                  "tracked": len(gc.get_objects())}))
"""


def _gc_child(n: int) -> dict[str, Any]:
    from mcpgym.benchmarks.transport import ROOT

    proc = subprocess.run(
        [sys.executable, "-c", GC_CHILD, str(n)], cwd=str(ROOT), capture_output=True, text=True, timeout=1800
    )
    if proc.returncode != 0:
        raise RuntimeError(f"GC probe failed (exit {proc.returncode}): {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def gc_pause(settings: Settings) -> Figure:
    """Figure: the longest of five full collections (``gc.collect()``, wall ms) in a fresh
    interpreter holding 1,000 live all-app episodes (each after its six calls), prepared as a
    serving process is (:func:`mcpgym.server.serve.tune_gc`); baseline: the same process before
    the episodes exist. The last :data:`mcpgym.server.episode.HOT_EPISODES` episodes called are
    hot, the others parked (:meth:`mcpgym.server.episode.Episode.park`)."""
    from mcpgym.server.episode import HOT_EPISODES

    n = GC_EPISODES if settings.mode != "tiny" else 20
    r = _gc_child(n)
    return Figure(
        name="gc_pause",
        title=f"longest full GC pause, {n} live all-app episodes",
        value=round(r["pause"] * 1e3, 1),
        unit="ms",
        target=GC_PAUSE_TARGET_MS,
        op="<=",
        baseline="a full collection of the same process before the episodes",
        ratio=round(r["pause"] / max(r["empty"], 1e-9), 1),
        details={
            "empty_ms": round(r["empty"] * 1e3, 2),
            "tracked_objects": r["tracked"],
            "tracked_per_episode": round(r["tracked"] / n, 1),
            "episodes": n,
            "hot_episodes": HOT_EPISODES,
        },
    )


__all__ = ["episode_all_apps", "episode_one_app", "episode_plan", "gc_pause", "judge_time"]
