"""Hand-made run directories (no server): episode scores written as trajectory lines, with a
manifest, for the report, comparison and export tests."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from mcpgym.evaluation.records.manifest import AgentRecord, build_manifest, write_json_atomic
from mcpgym.evaluation.records.trajectory import Trajectory, write_trajectories
from mcpgym.evaluation.scoring.scorer import EpisodeScores
from mcpgym.tools.faults import load_profile


class _Task:
    def __init__(self, tid: str) -> None:
        self.id, self.seed, self.faults = tid, 7, None


def write_run_dir(
    run: Path,
    episodes: Sequence[EpisodeScores],
    *,
    faults: str = "default",
    tasks: Sequence[str] | None = None,
    agents: Sequence[str] | None = None,
    fault_seeds: dict[str, list[int]] | None = None,
) -> Path:
    """Write ``episodes`` (their scores as stored scores) into ``run/trajectories.jsonl`` and a
    manifest of suite ``unit`` (``tasks``: default the episodes' task ids; ``agents``: default
    theirs; trials: the most any episode has); returns ``run``."""
    trajs = [
        Trajectory(
            episode_id=e.episode_id,
            task_id=e.task_id,
            agent=e.agent,
            trial=e.trial,
            level=e.level,
            apps=e.apps,
            scores=e.model_dump(mode="json"),
        )
        for e in episodes
    ]
    write_trajectories(run / "trajectories.jsonl", trajs)
    ids = list(tasks or sorted({e.task_id for e in episodes if e.task_id}))
    names = list(agents or sorted({e.agent for e in episodes}))
    manifest = build_manifest(
        suite="unit",
        tasks=[_Task(t) for t in ids],
        trials=max(e.trial for e in episodes) + 1,
        agents=[AgentRecord(name=a, spec=a, describe=None) for a in names],
        profile=load_profile(faults),
        fault_seeds=fault_seeds or {t: [0] for t in ids},
        concurrency=1,
        episode_timeout=5.0,
        server_url="http://127.0.0.1:1",
        server_spawned=True,
        recovery_window=3,
    )
    write_json_atomic(run / "manifest.json", manifest.to_json())
    return run
