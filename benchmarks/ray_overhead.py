"""Ray executor overhead: episodes per second of ``--executor ray`` on a local 2-CPU Ray
cluster against ``--executor local``, both measured in the same child process, interleaved.

The figure's child (``python -m mcpgym.benchmarks.ray_overhead EPISODE-ARGS``) starts the
cluster once (``ray.init(num_cpus=2)``, timed apart: a real deployment starts it once for many
runs), then alternates whole runs (:func:`mcpgym.evaluation.run.runner.run_evaluation` with the
three scripted agents on the first tasks of the smoke suite): local (spawns its server,
computes gold states) and Ray (starts one worker actor per CPU, each spawning its own server
and computing its gold states). Value: the overhead ratio, median Ray run wall seconds /
median local run wall seconds (1.0 = no overhead); reported, no target. Details: episodes per
second of each, the cluster's start-up seconds, and whether both gave the same scores.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mcpgym.benchmarks.harness import Figure, Settings, median

NAME = "ray_overhead"


def _plan(settings: Settings) -> tuple[int, int, int]:
    """(tasks, trials, repetitions) per mode."""
    return {"full": (4, 2, 3), "quick": (2, 1, 1)}.get(settings.mode, (1, 1, 1))


def _measure(tasks: int, trials: int, reps: int) -> dict[str, Any]:
    """The child's work: start the cluster, then ``reps`` local and Ray runs, interleaved."""
    import ray

    from mcpgym.evaluation.agents import SCRIPTED_AGENTS, make_agent
    from mcpgym.evaluation.run.runner import AgentEntry, RunConfig, run_evaluation
    from mcpgym.evaluation.tasks import load_tasks

    picked = load_tasks("smoke")[:tasks]
    t0 = time.perf_counter()
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
    cluster_s = time.perf_counter() - t0
    walls: dict[str, list[float]] = {"local": [], "ray": []}
    episodes = 0
    same = True
    try:
        with tempfile.TemporaryDirectory(prefix="mcpgym-bench-ray-") as tmp:
            for rep in range(reps):
                scores = {}
                for kind in ("local", "ray"):
                    agents = [AgentEntry(s, make_agent(s)) for s in SCRIPTED_AGENTS]
                    settings = RunConfig(
                        out=Path(tmp) / f"{kind}{rep}", trials=trials, concurrency=4, progress=False, executor=kind
                    )
                    t = time.perf_counter()
                    result = run_evaluation(picked, agents, settings)
                    walls[kind].append(time.perf_counter() - t)
                    if result.failures:
                        raise RuntimeError(f"{kind} run: {result.failures[0]}")
                    episodes = result.ran
                    scores[kind] = result.scores
                same = same and scores["local"] == scores["ray"]
    finally:
        ray.shutdown()
    return {"cluster_start_s": cluster_s, "walls": walls, "episodes": episodes, "same_scores": same}


def ray_overhead(settings: Settings) -> Figure:
    """Figure: Ray run wall / local run wall for the same episodes (see the module docstring)."""
    title = "`--executor ray` (local 2-CPU cluster) vs `--executor local`, same episodes"
    try:
        import ray

        if getattr(ray, "__file__", None) is None:  # a bare `ray` folder in the working directory
            raise ImportError("ray is a namespace package here (e.g. Ray's /tmp/ray session folder), not Ray")
    except ImportError:
        return Figure(
            name=NAME,
            title=title,
            value=None,
            unit="x local",
            target=None,
            available=False,
            baseline="--executor local",
            note="not available: Ray is not installed (install mcpgym with its ray extra)",
        )
    from mcpgym.benchmarks.transport import ROOT

    tasks, trials, reps = _plan(settings)
    proc = subprocess.run(
        [sys.executable, "-m", "mcpgym.benchmarks.ray_overhead", str(tasks), str(trials), str(reps)],
        cwd=str(ROOT),
        capture_output=True,
        text=True,
        timeout=3600,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"the Ray benchmark child failed (exit {proc.returncode}): {proc.stderr[-1500:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    local, ray_w = median(out["walls"]["local"]), median(out["walls"]["ray"])
    n = out["episodes"]
    return Figure(
        name=NAME,
        title=title,
        value=round(ray_w / local, 2),
        unit="x local",
        target=None,
        baseline="--executor local, same episodes, same process",
        ratio=round(ray_w / local, 2),
        details={
            "episodes_per_run": n,
            "local_episodes_per_s": round(n / local, 3),
            "ray_episodes_per_s": round(n / ray_w, 3),
            "local_wall_s_per_rep": [round(w, 2) for w in out["walls"]["local"]],
            "ray_wall_s_per_rep": [round(w, 2) for w in out["walls"]["ray"]],
            "cluster_start_s": round(out["cluster_start_s"], 2),
            "same_scores": out["same_scores"],
            "reps": reps,
        },
        note="reported (no target); Ray wall includes starting its worker actors and their servers, "
        "not the cluster (cluster_start_s)",
    )


def main(argv: list[str] | None = None) -> int:
    """Child entry point: ``TASKS TRIALS REPS``; prints one JSON line."""
    tasks, trials, reps = (int(a) for a in (argv if argv is not None else sys.argv[1:]))
    sys.stdout.write(json.dumps(_measure(tasks, trials, reps)) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["NAME", "main", "ray_overhead"]
