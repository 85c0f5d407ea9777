"""Trajectory bytes: how much disk one episode takes in a compact run directory.

The scripted reference agents (careful, overconfident, defeatist) play tasks of the ``core``
suite in this process (:func:`mcpgym.evaluation.agents.inprocess.run_in_process`, faults
``default``); every trajectory is written twice, the way a run directory stores it (compact:
snapshots shared in ``snapshots/``, the final state as a diff, see
:mod:`mcpgym.evaluation.records.snapshots`) and self-contained (the three snapshots inline: the
baseline, what every line held before). Two figures come from the same episodes:

- ``trajectory_bytes``: the median compact line as written (one zstd frame), in KB (target at
  most 20 KB, from ~120 KB);
  the ratio is compact / self-contained median line.
- ``full_run_bytes``: the disk a ``full`` run of 3 agents x 3 trials would take, in MB
  (target at most 50 MB): the full suite's episodes times the mean zstd frame of a compact
  line, plus one initial and one gold snapshot file (zstd) per task (measured mean file size);
  the baseline is the same estimate uncompressed.
"""

from __future__ import annotations

import functools
import statistics
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

from mcpgym.benchmarks.harness import Figure, Settings

AGENTS = ("careful", "overconfident", "defeatist")
FULL_TRIALS = 3
FULL_RUN_TARGET_MB = 50.0
"""Issue 30: a ``full`` run of 3 agents x 3 trials in at most 50 MB (was 178 MB uncompressed)."""


@functools.lru_cache(maxsize=4)
def _measure(mode: str, tasks_n: int) -> dict[str, Any]:
    import anyio

    from mcpgym.evaluation.agents import make_agent
    from mcpgym.evaluation.agents.inprocess import run_in_process
    from mcpgym.evaluation.records.compressed import compress_line, read_text
    from mcpgym.evaluation.records.snapshots import SnapshotStore
    from mcpgym.evaluation.records.trajectory import append_trajectory
    from mcpgym.evaluation.tasks import registry

    core = registry.load_tasks("core")
    step = max(1, len(core) // tasks_n)
    tasks = core[::step][:tasks_n]
    with tempfile.TemporaryDirectory(prefix="mcpgym-bench-bytes-") as tmp:
        root = Path(tmp)
        store = SnapshotStore(root)
        compact, inline, plain = [], [], []
        for task in tasks:
            for name in AGENTS:
                traj = anyio.run(partial(run_in_process, make_agent(name), task, trial=0))
                inline.append(len((traj.model_dump_json() + "\n").encode("utf-8")))
                line = traj.compacted(store)
                plain_line = (line.model_dump_json() + "\n").encode("utf-8")
                plain.append(len(plain_line))
                append_trajectory(root / "trajectories.jsonl.zst", line)  # one zstd frame per line
                compact.append(len(compress_line(plain_line)))
        snap_files = [p.stat().st_size for p in (root / "snapshots").iterdir()]
        snap_plain = [len(read_text(p)[0].encode("utf-8")) for p in (root / "snapshots").iterdir()]
    full_tasks = len(registry.load_tasks("full"))
    episodes = full_tasks * len(AGENTS) * FULL_TRIALS
    per_task_snapshots = 2 * statistics.mean(snap_files)  # one initial and one gold file per task
    return {
        "episodes": len(compact),
        "tasks": len(tasks),
        "median_line": statistics.median(compact),
        "median_inline": statistics.median(inline),
        "mean_line": statistics.mean(compact),
        "mean_inline": statistics.mean(inline),
        "snapshot_files": len(snap_files),
        "mean_snapshot_file": statistics.mean(snap_files),
        "full_estimate": episodes * statistics.mean(compact) + full_tasks * per_task_snapshots,
        "full_inline": episodes * statistics.mean(inline),
        "full_plain": episodes * statistics.mean(plain) + full_tasks * 2 * statistics.mean(snap_plain),
        "mean_plain_line": statistics.mean(plain),
        "mean_plain_snapshot_file": statistics.mean(snap_plain),
        "full_episodes": episodes,
        "full_tasks": full_tasks,
    }


def _tasks_for(settings: Settings) -> int:
    return {"full": 124, "quick": 24}.get(settings.mode, 1)


def trajectory_bytes(settings: Settings) -> Figure:
    """Figure: median bytes of a compact trajectory line on ``core`` (KB), vs self-contained lines."""
    m = _measure(settings.mode, _tasks_for(settings))
    return Figure(
        name="trajectory_bytes",
        title="trajectory bytes per episode (median line, core, compact run directory)",
        value=round(m["median_line"] / 1000, 1),
        unit="KB",
        target=20.0,
        baseline="the same trajectories with their three snapshots inline",
        ratio=round(m["median_line"] / m["median_inline"], 3),
        details={
            "median_inline_kb": round(m["median_inline"] / 1000, 1),
            "episodes": m["episodes"],
            "tasks": m["tasks"],
            "snapshot_files": m["snapshot_files"],
            "mean_snapshot_file_kb": round(m["mean_snapshot_file"] / 1000, 1),
            "agents": list(AGENTS),
        },
        note="median compact line; snapshots shared in snapshots/, finals as diffs",
    )


def full_run_bytes(settings: Settings) -> Figure:
    """Figure: estimated MB of a ``full`` run, 3 agents x 3 trials, in a compact run directory."""
    m = _measure(settings.mode, _tasks_for(settings))
    return Figure(
        name="full_run_bytes",
        title=f"`full` run directory, 3 agents x {FULL_TRIALS} trials (estimated from core)",
        value=round(m["full_estimate"] / 1e6, 1),
        unit="MB",
        target=FULL_RUN_TARGET_MB,
        baseline="the same compact run directory uncompressed (plain JSON lines and snapshot files)",
        ratio=round(m["full_estimate"] / m["full_plain"], 3),
        details={
            "episodes": m["full_episodes"],
            "tasks": m["full_tasks"],
            "mean_line_kb": round(m["mean_line"] / 1000, 2),
            "mean_plain_line_kb": round(m["mean_plain_line"] / 1000, 2),
            "mean_snapshot_file_kb": round(m["mean_snapshot_file"] / 1000, 1),
            "mean_plain_snapshot_file_kb": round(m["mean_plain_snapshot_file"] / 1000, 1),
            "uncompressed_mb": round(m["full_plain"] / 1e6, 1),
            "self_contained_mb": round(m["full_inline"] / 1e6, 1),
        },
        note="episodes x mean zstd line frame + 2 zstd snapshot files per task",
    )


__all__ = ["full_run_bytes", "trajectory_bytes"]
