"""End to end: ``mcpgym run`` on the smoke suite, and its share spent outside agents' turns.

The command runs as users run it (a child ``python -m mcpgym.evaluation.cli run --suite smoke``: its
own interpreter, spawned server, gold states, scoring, report), with the three scripted
reference agents, ``--concurrency 1`` so that the agents' turns never overlap and the run's
wall time decomposes exactly: an agent's turn is the ``agent`` phase the runner records in
each trajectory's ``metadata.phase_seconds`` (``agent.run``: its tool calls included);
everything else (interpreter start, server spawn, gold states, episode creation, tool
listing, reading the final state, scoring, writing, the report) is outside.

Reported, no target: the value is the command's wall seconds (median over repetitions);
the ratio is wall / sum of the agents' turns.
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

SUITE = "smoke"


def _command(settings: Settings) -> list[str]:
    """The ``mcpgym run`` arguments: the smoke suite, or (tiny mode, the unit test) only its
    first task with the ``careful`` agent."""
    args = ["--concurrency", "1", "--trials", str(settings.e2e_trials)]
    if settings.mode == "tiny":
        from mcpgym.evaluation.tasks import registry

        return ["--task", registry.load_tasks(SUITE)[0].id, "--agent", "careful", *args]
    return ["--suite", SUITE, *args]


def runner_available() -> str | None:
    """None when ``mcpgym run`` and the smoke suite exist, else why not."""
    try:
        from mcpgym.evaluation import runner  # noqa: F401
        from mcpgym.evaluation.tasks import registry
    except ImportError as exc:
        return f"evaluation.runner or evaluation.tasks is missing ({exc})"
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


def _one_run(settings: Settings, out: Path) -> dict[str, Any]:
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
        *_command(settings),
    ]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=str(ROOT), capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - t0
    lines = (
        (out / "trajectories.jsonl").read_text(encoding="utf-8").splitlines()
        if (out / "trajectories.jsonl").exists()
        else []
    )
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


def e2e_smoke(settings: Settings) -> Figure:
    """Figure: wall seconds of ``mcpgym run --suite smoke`` and the share outside agents' turns."""
    title = (
        f"`mcpgym run --suite {SUITE}` end to end (scripted agents)"
        if settings.mode != "tiny"
        else "`mcpgym run`, one smoke task, end to end (careful agent)"
    )
    why = runner_available()
    if why is not None:
        return Figure(
            name="e2e_smoke_run",
            title=title,
            value=None,
            unit="s",
            target=None,
            available=False,
            baseline="the agents' turns",
            note=f"not available: {why}",
        )
    reps = {"full": 3}.get(settings.mode, 1)
    runs = []
    with tempfile.TemporaryDirectory(prefix="mcpgym-bench-e2e-") as tmp:
        for i in range(reps):
            runs.append(_one_run(settings, Path(tmp) / f"run{i}"))
    walls = [r["wall"] for r in runs]
    agent = [r["phases"].get("agent", 0.0) for r in runs]
    shares = [1 - a / w for a, w in zip(agent, walls, strict=False)]
    mid = sorted(range(reps), key=lambda i: walls[i])[reps // 2]  # the median run, for its breakdown
    m = runs[mid]
    breakdown = {f"{k}_s": round(v, 3) for k, v in sorted(m["phases"].items())}
    breakdown["outside_episodes_s"] = round(m["wall"] - m["episode_wall"], 3)
    return Figure(
        name="e2e_smoke_run",
        title=title,
        value=round(median(walls), 2),
        unit="s",
        target=None,
        baseline="the agents' turns (sum of the agent phase)",
        ratio=round(median(w / a for w, a in zip(walls, agent, strict=False) if a > 0), 1)
        if any(a > 0 for a in agent)
        else None,
        details={
            "outside_agents_share": round(median(shares), 3),
            "agent_turns_s": round(median(agent), 3),
            "episodes": m["episodes"],
            "tool_calls": m["steps"],
            "statuses": m["statuses"],
            "breakdown_of_median_run": breakdown,
            "wall_s_per_rep": [round(w, 2) for w in walls],
            "command": "mcpgym run " + " ".join(_command(settings)),
            "reps": reps,
        },
        note="reported (no target); outside = everything but agent.run",
    )


__all__ = ["e2e_smoke", "runner_available"]
