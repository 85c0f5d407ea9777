"""Reading a run's compressed trajectory lines: a ``full`` run's ``trajectories.jsonl.zst`` of
10,656 frames (3 agents x 3 trials x 1,184 tasks), and the slope over 1,332 / 2,664 / 5,328 /
10,656 frames (issue 36: 0.47 / 2.1 / 8.0 / 42 s when every frame was decompressed from a copy
of the rest of the file, so each ``cat``, ``score``, ``report`` and ``--resume`` of a full run
paid 45 s).

The lines are real: the three scripted agents play tasks of ``core`` in this process
(:func:`mcpgym.evaluation.agents.inprocess.run_in_process`, faults ``default``), each line
compacted as a run writes it and compressed into its own frame; a file of N frames repeats
them in turn. Timed: :func:`mcpgym.evaluation.records.compressed.read_run_file` (the bounded,
frame-by-frame reader every command goes through: frame walk, bounded decompression, UTF-8),
CPU time, median over repetitions, the sizes interleaved within each repetition.

Value: CPU seconds for 10,656 frames (target at most 1 s). Ratio: CPU time per frame at
10,656 frames / per frame at 1,332 (the baseline, same run): linear reading gives about 1.
"""

from __future__ import annotations

import tempfile
import time
from functools import partial
from pathlib import Path

from mcpgym.benchmarks.harness import Figure, Settings, gc_paused, median

FULL_RUN_FRAMES = 10_656
"""Episodes of a ``full`` run, 3 agents x 3 trials (the ``full_run_bytes`` row's count)."""

READ_TARGET_S = 1.0
"""Issue 36: a full run's compressed lines read in at most 1 s."""

AGENTS = ("careful", "overconfident", "defeatist")


def _frames(tasks_n: int, root: Path) -> list[bytes]:
    """One zstd frame per compacted trajectory line of ``tasks_n`` core tasks x :data:`AGENTS`."""
    import anyio

    from mcpgym.evaluation.agents import make_agent
    from mcpgym.evaluation.agents.inprocess import run_in_process
    from mcpgym.evaluation.records.compressed import compress_line
    from mcpgym.evaluation.records.snapshots import SnapshotStore
    from mcpgym.evaluation.tasks import registry

    core = registry.load_tasks("core")
    tasks = core[:: max(1, len(core) // tasks_n)][:tasks_n]
    store = SnapshotStore(root)
    out = []
    for task in tasks:
        for name in AGENTS:
            traj = anyio.run(partial(run_in_process, make_agent(name), task, trial=0))
            out.append(compress_line((traj.compacted(store).model_dump_json() + "\n").encode("utf-8")))
    return out


def run_file_read(settings: Settings) -> Figure:
    """Figure: CPU seconds to read a full run's 10,656 compressed lines (module docstring)."""
    from mcpgym.evaluation.records.compressed import read_run_file

    tiny = settings.mode == "tiny"
    sizes = (16, 32, 64, 128) if tiny else (1_332, 2_664, 5_328, FULL_RUN_FRAMES)
    with tempfile.TemporaryDirectory(prefix="mcpgym-bench-read-") as tmp:
        root = Path(tmp)
        frames = _frames(2 if tiny else 8, root)
        files = {}
        for n in sizes:
            files[n] = root / f"trajectories-{n}.jsonl.zst"
            files[n].write_bytes(b"".join(frames[i % len(frames)] for i in range(n)))
        read_run_file(files[sizes[0]])  # warm-up
        seconds: dict[int, list[float]] = {n: [] for n in sizes}
        ratios = []
        for _ in range(max(1, settings.reps // 2)):
            with gc_paused():
                for n in sizes:
                    c0 = time.process_time()
                    found = read_run_file(files[n])
                    seconds[n].append(time.process_time() - c0)
                    assert len(found.frames) == n and not found.damaged
            first, last = sizes[0], sizes[-1]
            ratios.append((seconds[last][-1] / last) / (seconds[first][-1] / first) if seconds[first][-1] > 0 else 1.0)
        mean_frame = sum(len(f) for f in frames) / len(frames)
    full = median(seconds[sizes[-1]])
    return Figure(
        name="run_file_read",
        title=f"reading a full run's compressed lines: {sizes[-1]:,} zstd frames (CPU time)",
        value=round(full, 3),
        unit="s",
        target=READ_TARGET_S,
        op="<=",
        baseline=f"the same per frame at {sizes[0]:,} frames (linear: 1x)",
        ratio=round(median(ratios), 2),
        details={
            "frames": list(sizes),
            "read_seconds": {str(n): round(median(v), 4) for n, v in seconds.items()},
            "mean_frame_bytes": round(mean_frame),
            "ratio_per_rep": [round(r, 2) for r in ratios],
        },
    )


__all__ = ["FULL_RUN_FRAMES", "READ_TARGET_S", "run_file_read"]
