"""End to end: ``mcpgym run`` on the smoke suite, and its share spent outside agents' turns.

The command runs as users run it (a child ``python -m mcpgym.evaluation.cli run --suite smoke``: its
own interpreter, spawned server, gold states, scoring, report), with the three scripted
reference agents, ``--concurrency 1`` so that the agents' turns never overlap and the run's
wall time decomposes exactly: an agent's turn is the ``agent`` phase the runner records in
each trajectory's ``metadata.phase_seconds`` (``agent.run``: its tool calls included);
everything else (interpreter start, server spawn, gold states, episode creation, tool
listing, reading the final state, scoring, writing, the report) is outside.

The value is that share, in percent (issue 14's target: at most 50%); the ratio is wall /
sum of the agents' turns. Three further measurements explain it, each countable by hand:

- per episode, from the trajectories' ``metadata.phase_seconds``: ``harness_ms`` (creating
  the episode, MCP connect and tool listing, reading the final state, judging and scoring:
  every phase but ``agent``) against ``agent_ms``; ``many_episodes_share`` = harness /
  (harness + agent), the share a run of many episodes tends to; ``outside_episodes_s`` = wall
  - the episodes' own wall seconds: what a run pays once or between episodes (interpreter
  start and imports, the server's start-up, task loading, gold states, writing lines, scores
  and the report).
- ``inprocess_floor``: the same episodes (tasks, agents, trials, fault seeds) played in this
  process through :class:`mcpgym.evaluation.run.gym.GymEpisode`, with no MCP, no HTTP and no
  second interpreter, and the gold states shared as a run shares them: per episode, the
  world's creation and the judging (trajectory and scores) against the agent's turn. Its
  share is what no transport change can go below.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mcpgym.benchmarks.harness import Figure, Settings, median
from mcpgym.evaluation.records.compressed import read_text
from mcpgym.evaluation.run.run_dir import trajectories_file

TARGET_SHARE = 50.0
"""Issue 14: the share of the smoke run's wall time outside the agents' turns, in percent."""

SUITE = "smoke"


def _one_episode_args() -> list[str]:
    """``mcpgym run`` arguments of the tiny mode's run: the first smoke task, careful agent."""
    from mcpgym.evaluation.tasks import registry

    return ["--task", registry.load_tasks(SUITE)[0].id, "--agent", "careful", "--concurrency", "1", "--trials", "1"]


def _command(settings: Settings) -> list[str]:
    """The ``mcpgym run`` arguments: the smoke suite, or (tiny mode, the unit test) only its
    first task with the ``careful`` agent."""
    if settings.mode == "tiny":
        return _one_episode_args()
    return ["--suite", SUITE, "--concurrency", "1", "--trials", str(settings.e2e_trials)]


def runner_available() -> str | None:
    """None when ``mcpgym run`` and the smoke suite exist, else why not."""
    try:
        from mcpgym.evaluation.run import runner  # noqa: F401
        from mcpgym.evaluation.tasks import registry
    except ImportError as exc:
        return f"evaluation.run.runner or evaluation.tasks is missing ({exc})"
    if SUITE not in registry.suite_names():
        return f"no task suite named {SUITE!r}"
    from mcpgym.benchmarks.transport import ROOT

    probe = subprocess.run(
        [sys.executable, "-m", "mcpgym.evaluation.cli", "run", "--help"],
        cwd=str(ROOT),
        capture_output=True,
        text=True,
        timeout=120,
    )
    if probe.returncode != 0:
        return "`mcpgym run` is not a command yet"
    return None


def _one_run(args: list[str], out: Path) -> dict[str, Any]:
    """Run ``mcpgym run --out OUT --force --quiet ARGS`` in a child interpreter; its wall
    seconds and the per-phase sums of its trajectories.

    Raises:
        RuntimeError: when the command fails or writes no trajectory.
    """
    from mcpgym.benchmarks.transport import ROOT

    cmd = [
        sys.executable,
        "-m",
        "mcpgym.evaluation.cli",
        "run",
        "--out",
        str(out),
        "--force",
        "--quiet",
        *args,
    ]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=str(ROOT), capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - t0
    traj_file = trajectories_file(out)
    lines = read_text(traj_file)[0].split("\n") if traj_file.exists() else []
    rows = [json.loads(line) for line in lines if line.strip()]
    if proc.returncode != 0 or not rows:
        raise RuntimeError(f"`mcpgym run` failed (exit {proc.returncode}): {(proc.stderr or proc.stdout)[-1500:]}")
    phases: dict[str, float] = {}
    for r in rows:
        for k, v in (r.get("metadata", {}).get("phase_seconds") or {}).items():
            phases[k] = phases.get(k, 0.0) + float(v)
    episode_wall = sum(float(r.get("metadata", {}).get("wall_seconds") or 0.0) for r in rows)
    return {
        "wall": wall,
        "episodes": len(rows),
        "phases": phases,
        "episode_wall": episode_wall,
        "steps": sum(len(r.get("steps", [])) for r in rows),
        "statuses": sorted({r.get("status", "?") for r in rows}),
    }


def decompose(wall: float, episode_wall: float, phases: dict[str, float], n: int) -> dict[str, Any]:
    """Split a run's wall time into the agents' turns, the per-episode harness and the rest.

    Args:
        wall: the run's wall seconds. episode_wall: the sum of its trajectories'
            ``metadata.wall_seconds``. phases: the sums of their ``metadata.phase_seconds``
            by phase (seconds; ``agent`` is the agents' turns). n: its episodes (at least 1).

    Returns:
        ``agent_ms`` = phases[agent] / n; ``harness_ms`` = (sum of the other phases) / n;
        ``many_episodes_share`` = harness / (harness + agent) (None when both are 0);
        ``outside_episodes_s`` = wall - episode_wall.

    Raises:
        ValueError: for ``n`` below 1.
    """
    if n < 1:
        raise ValueError(f"a run of {n} episodes has no per-episode cost")
    agent = phases.get("agent", 0.0) / n
    harness = sum(v for k, v in phases.items() if k != "agent") / n
    return {
        "agent_ms": round(agent * 1000, 1),
        "harness_ms": round(harness * 1000, 1),
        "many_episodes_share": round(harness / (harness + agent), 3) if harness + agent > 0 else None,
        "outside_episodes_s": round(wall - episode_wall, 2),
    }


def inprocess_floor(settings: Settings) -> dict[str, Any]:
    """Play the e2e run's episodes in this process through ``GymEpisode`` (no MCP, no HTTP).

    Same tasks, scripted agents, trials and fault seeds as :func:`_command`'s run; the gold
    state of each task is computed once and shared, as a run does. Timed per episode: the
    world's creation, the agent's turn (its tool calls included) and the judging. One
    untimed episode first builds what a run builds once (the tool catalog). Unlike a run, each
    episode's judging restores its own initial state (a run shares one per task and seed).

    Returns:
        ``episodes``, ``create_ms`` / ``agent_ms`` / ``judge_ms`` (means per episode) and
        ``share``: (create + judge) / (create + agent + judge) over all episodes, 0-1.
    """
    import anyio

    from mcpgym.evaluation.agents import SCRIPTED_AGENTS, make_agent
    from mcpgym.evaluation.run.gym import GymEpisode
    from mcpgym.evaluation.tasks import registry

    tasks = registry.load_tasks(SUITE)
    if settings.mode == "tiny":
        plan = [("careful", tasks[0], 0)]
    else:
        plan = [(a, t, i) for a in SCRIPTED_AGENTS for t in tasks for i in range(settings.e2e_trials)]
    gold = {t.id: registry.gold_snapshot(t) for _, t, _ in plan}
    totals = {"create": 0.0, "agent": 0.0, "judge": 0.0}

    async def play() -> None:  # one event loop for all episodes, as a run has
        name, task, trial = plan[0]  # warm-up, untimed: the catalog and caches a run builds once
        await GymEpisode.create(task, trial=trial, agent_name=name, gold=gold[task.id]).run_agent(make_agent(name))
        for name, task, trial in plan:
            ep = GymEpisode.create(task, trial=trial, agent_name=name, gold=gold[task.id])
            started = time.perf_counter()
            await ep.run_agent(make_agent(name))
            whole = time.perf_counter() - started
            totals["create"] += ep.harness_seconds["create"]
            totals["judge"] += ep.harness_seconds["judge"]
            totals["agent"] += whole - ep.harness_seconds["judge"]

    anyio.run(play)
    create, agent, judge = totals["create"], totals["agent"], totals["judge"]
    n = len(plan)
    return {
        "episodes": n,
        "create_ms": round(create / n * 1000, 2),
        "agent_ms": round(agent / n * 1000, 2),
        "judge_ms": round(judge / n * 1000, 2),
        "share": round((create + judge) / (create + agent + judge), 3),
    }


def e2e_smoke(settings: Settings) -> Figure:
    """Figure: the share of ``mcpgym run --suite smoke``'s wall time outside the agents' turns
    (percent; target at most 50%), with its wall seconds, the per-episode harness cost, the
    time outside episodes and the in-process floor in ``details`` (see the module docstring
    for each formula).

    Raises:
        RuntimeError: when ``mcpgym run`` fails, or its trajectories record no agent phase.
    """
    title = (
        f"`mcpgym run --suite {SUITE}` end to end (scripted agents): time outside agents' turns"
        if settings.mode != "tiny"
        else "`mcpgym run`, one smoke task, end to end (careful agent): time outside its turn"
    )
    why = runner_available()
    if why is not None:
        return Figure(
            name="e2e_smoke_run",
            title=title,
            value=None,
            unit="%",
            target=TARGET_SHARE,
            available=False,
            baseline="the agents' turns (sum of the agent phase)",
            note=f"not available: {why}",
        )
    reps = {"full": 3}.get(settings.mode, 1)
    runs = []
    with tempfile.TemporaryDirectory(prefix="mcpgym-bench-e2e-") as tmp:
        for i in range(reps):
            runs.append(_one_run(_command(settings), Path(tmp) / f"run{i}"))
    walls = [r["wall"] for r in runs]
    agent = [r["phases"].get("agent", 0.0) for r in runs]
    if not all(a > 0 for a in agent):
        raise RuntimeError("a run recorded no agent phase: the share outside the agents' turns cannot be computed")
    shares = [1 - a / w for a, w in zip(agent, walls, strict=True)]
    mid = sorted(range(reps), key=lambda i: walls[i])[reps // 2]  # the median run, for its breakdown
    m = runs[mid]
    breakdown = {f"{k}_s": round(v, 3) for k, v in sorted(m["phases"].items())}
    details: dict[str, Any] = {
        "outside_agents_share": round(median(shares), 3),
        "wall_s": round(median(walls), 2),
        "agent_turns_s": round(median(agent), 3),
        "episodes": m["episodes"],
        "tool_calls": m["steps"],
        "statuses": m["statuses"],
        "breakdown_of_median_run": breakdown,
        "wall_s_per_rep": [round(w, 2) for w in walls],
        "command": "mcpgym run " + " ".join(_command(settings)),
        "reps": reps,
    }
    details.update(decompose(m["wall"], m["episode_wall"], m["phases"], m["episodes"]))
    details["inprocess_floor"] = inprocess_floor(settings)
    return Figure(
        name="e2e_smoke_run",
        title=title,
        value=round(median(shares) * 100, 1),
        unit="%",
        target=TARGET_SHARE,
        baseline="the agents' turns (sum of the agent phase)",
        ratio=round(median(w / a for w, a in zip(walls, agent, strict=True)), 1),
        details=details,
        note="outside = everything but agent.run; ratio = wall / agents' turns",
    )


__all__ = ["TARGET_SHARE", "decompose", "e2e_smoke", "inprocess_floor", "runner_available"]
