"""A run directory: its files, and reading, repairing and scoring what it holds.

``trajectories.jsonl`` (one scored trajectory per line, appended by the runner),
``scores.json`` (:func:`compute_scores` over those lines), ``manifest.json``
(:mod:`mcpgym.evaluation.manifest`), ``mcpgym.server.log`` (a spawned server's output), ``report.md`` and
``report.html`` (:mod:`mcpgym.evaluation.report`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

from mcpgym.evaluation.aggregate import aggregate, as_scores
from mcpgym.evaluation.catalog import Catalog
from mcpgym.evaluation.manifest import MANIFEST_NAME
from mcpgym.evaluation.scorer import DEFAULT_K, EpisodeScores, score_episode
from mcpgym.evaluation.scoring.metrics import Scoreboard
from mcpgym.evaluation.trajectory import Trajectory, read_trajectories

TRAJECTORIES = "trajectories.jsonl"
SCORES = "scores.json"
SERVER_LOG = "server.log"
RUN_FILES = (TRAJECTORIES, SCORES, MANIFEST_NAME, SERVER_LOG, "report.md", "report.html")
"""Files a run directory holds; ``--force`` removes exactly these."""


class RunError(RuntimeError):
    """A run cannot start or go on (bad output directory, server gone...); the message says why."""


# -- output directory -------------------------------------------------------------------------
def prepare_out_dir(out: str | Path, *, resume: bool, force: bool) -> Path:
    """Check and create the run directory.

    Without ``resume``, a directory that already holds files is refused unless ``force``,
    which deletes the run files (:data:`RUN_FILES`) in it, and nothing else.

    Raises:
        RunError: for a non-empty directory without ``--resume``/``--force``, or a path that
            is a file.
    """
    p = Path(out)
    if p.exists() and not p.is_dir():
        raise RunError(f"--out {p} is a file, not a directory")
    if p.is_dir() and any(p.iterdir()) and not resume:
        if not force:
            raise RunError(f"output directory {p} is not empty: pass --resume to continue that run, "
                           f"--force to overwrite its run files, or another --out")
        for name in RUN_FILES:
            (p / name).unlink(missing_ok=True)
    p.mkdir(parents=True, exist_ok=True)
    return p


def load_run(run_dir: str | Path, *, repair: bool = False) -> list[Trajectory]:
    """The trajectories of a run directory, ignoring a torn last line.

    Args:
        run_dir: the directory holding ``trajectories.jsonl`` (none: empty list).
        repair: truncate a torn last line (a write cut by a crash) from the file, so that
            later appends do not leave it in the middle (a complete last record that only
            lacks its newline gets the newline instead).

    Raises:
        evaluation.trajectory.TrajectoryFileError: for a malformed line that is not the last.
    """
    path = Path(run_dir) / TRAJECTORIES
    if not path.exists():
        return []
    trajs = read_trajectories(path, tolerate_truncated_tail=True)
    if repair:
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            cut = data.rfind(b"\n") + 1
            try:
                json.loads(data[cut:])
            except ValueError:
                with path.open("r+b") as fh:
                    fh.truncate(cut)
            else:
                with path.open("ab") as fh:
                    fh.write(b"\n")
    return trajs


def _order(s: EpisodeScores) -> tuple:
    return (s.agent, s.task_id or "", s.trial, s.episode_id)


def compute_scores(items: Iterable[Trajectory | EpisodeScores | dict[str, Any]], *, catalog: Catalog | None = None,
                   k: int = DEFAULT_K) -> Scoreboard:
    """``scores.json`` (as a :class:`Scoreboard`): :func:`mcpgym.evaluation.aggregate.aggregate`
    over the episodes, sorted by (agent, task, trial, episode id) first so that the result does
    not depend on their order.

    Args:
        items: trajectories (their stored ``scores`` are used; unscored ones are scored with
            ``catalog``), :class:`EpisodeScores` or scores dicts.
    """
    scores = sorted((as_scores(i, catalog, k) for i in items), key=_order)
    return aggregate(scores, catalog=catalog, k=k)


def load_paths(paths: Iterable[str | Path]) -> list[Trajectory]:
    """Trajectories from run directories (their ``trajectories.jsonl``, torn tail ignored) and
    trajectory JSONL files, in the order given.

    Raises:
        FileNotFoundError: for a missing path or a directory without ``trajectories.jsonl``.
        evaluation.trajectory.TrajectoryFileError: for a malformed line (file, line, field).
    """
    out: list[Trajectory] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            if not (p / TRAJECTORIES).exists():
                raise FileNotFoundError(f"{p} is not a run directory: it has no {TRAJECTORIES}")
            out += load_run(p)
        elif p.is_file():
            out += read_trajectories(p, tolerate_truncated_tail=True)
        else:
            raise FileNotFoundError(f"{p}: no such file or directory")
    return out


def rescore(trajs: Iterable[Trajectory], catalog: Catalog, *, k: int = DEFAULT_K) -> tuple[list[EpisodeScores], int]:
    """Score every trajectory again (checks from its ``metadata["extra_checks"]``).

    Returns:
        The new scores, sorted like :func:`compute_scores` sorts them, and how many differ
        from the scores stored in the trajectories (a changed scorer or catalog shows here).
    """
    fresh, changed = [], 0
    for t in trajs:
        sc = score_episode(t, catalog, k=k)
        if t.scores is not None and sc.model_dump(mode="json") != t.scores:
            changed += 1
        fresh.append(sc)
    return sorted(fresh, key=_order), changed


__all__ = ["RUN_FILES", "RunError", "SCORES", "SERVER_LOG", "TRAJECTORIES", "compute_scores", "load_paths", "load_run",
           "prepare_out_dir", "rescore"]
