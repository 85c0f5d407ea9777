"""A run directory: its files, and reading, repairing and scoring what it holds.

``trajectories.jsonl`` (one scored trajectory per line, appended by the runner; in a compact
run its snapshots are in ``snapshots/``, see :mod:`mcpgym.evaluation.records.snapshots`),
``scores.json`` (:func:`compute_scores` over those lines), ``manifest.json``
(:mod:`mcpgym.evaluation.records.manifest`), ``server.log`` (a spawned server's output), ``report.md`` and
``report.html`` (:mod:`mcpgym.evaluation.report.run_report`), and the writer's lock ``.mcpgym.lock``
(:mod:`mcpgym.evaluation.run.run_lock`), and the marker ``.mcpgym-run`` that proves the directory is a
run of mcpgym (:mod:`mcpgym.evaluation.run.run_owner`).

Each (agent, task, trial) is one episode: a directory holding two records for one (two
writers before the lock existed, a file concatenated by hand) is loaded with the first
record, a :class:`DuplicateRecordWarning` naming the lines, and nothing counted twice.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mcpgym.evaluation.records.compressed import (
    TRAJECTORIES,
    TRAJECTORIES_ZST,
    DamagedFramesWarning,
    damage_summary,
    run_dir_problem,
    set_damage_aside,
    trajectories_file,
)
from mcpgym.evaluation.records.condition import EpisodeCondition
from mcpgym.evaluation.records.manifest import MANIFEST_NAME
from mcpgym.evaluation.records.scores import Scoreboard
from mcpgym.evaluation.records.trajectory import Trajectory, TrajectoryRead, read_trajectories, read_trajectory_file
from mcpgym.evaluation.run.run_owner import RUN_FLAGS, DirFlags, ForeignContentError, claim_for_resume, claim_new_run
from mcpgym.evaluation.scoring.aggregate import aggregate, as_scores
from mcpgym.evaluation.scoring.scorer import DEFAULT_K, EpisodeScores, score_episode
from mcpgym.evaluation.scoring.tool_catalog import Catalog
from mcpgym.kernel.exceptions import RunDirectoryError
from mcpgym.kernel.wording import counted

SCORES = "scores.json"
SERVER_LOG = "server.log"
RUN_FILES = (TRAJECTORIES, TRAJECTORIES_ZST, SCORES, MANIFEST_NAME, SERVER_LOG, "report.md", "report.html")
"""Files a run directory holds (with the snapshot files: what ``--force`` may delete in a proven
run directory, see :mod:`mcpgym.evaluation.run.run_owner`)."""


class RunError(RunDirectoryError, RuntimeError):
    """A run cannot start or go on (bad output directory, server gone...); the message says why."""


class DuplicateRecordWarning(UserWarning):
    """A run holds more than one record for one (agent, task, trial, condition); the first one is kept."""


def episode_key(t: Trajectory) -> tuple[str, str, int, EpisodeCondition | None]:
    """(agent, task id, trial, condition): one episode of a run (an episode without a task: its
    episode id; condition None in a run without condition axes)."""
    return (t.agent, t.task_id if t.task_id is not None else f"episode:{t.episode_id}", t.trial, t.condition)


def dedupe(trajs: Iterable[Trajectory], source: str | Path) -> list[Trajectory]:
    """``trajs`` with the first record of each :func:`episode_key` only; a
    :class:`DuplicateRecordWarning` names the repeated episodes of ``source``."""
    seen: set[tuple[str, str, int, EpisodeCondition | None]] = set()
    out, dupes = [], []
    for t in trajs:
        key = episode_key(t)
        if key in seen:
            dupes.append(key)
            continue
        seen.add(key)
        out.append(t)
    if dupes:
        shown = ", ".join(
            f"{a}/{task}/trial {trial}" + (f" [{c.label}]" if c is not None else "") for a, task, trial, c in dupes[:5]
        )
        more = f" and {len(dupes) - 5} more" if len(dupes) > 5 else ""
        warnings.warn(
            DuplicateRecordWarning(
                f"{source}: {counted(len(dupes), 'repeated record')} of one (agent, task, trial) ignored, the first kept: "
                f"{shown}{more}"
            ),
            stacklevel=3,
        )
    return out


# -- output directory -------------------------------------------------------------------------
def prepare_out_dir(out: str | Path, *, resume: bool, force: bool, flags: DirFlags = RUN_FLAGS) -> Path:
    """Check and claim the run directory (call it holding the directory's lock).

    The directory is mcpgym's only by proof (:mod:`mcpgym.evaluation.run.run_owner`): a new run
    starts in an empty directory (which gets the ``.mcpgym-run`` marker first), or in a proven
    run directory holding only mcpgym's own files and no episode record (a failed start), or,
    with ``force``, holding a finished run: only mcpgym's files are deleted there, one by one.
    ``resume`` continues a proven run (or a run written before markers, whose manifest parses
    as mcpgym's). Anything else is refused before anything is deleted, listing what is in the way;
    the advice names only the options of the command ``flags`` describes.

    Raises:
        RunError: for a directory that is not proven mcpgym's, holds entries mcpgym did not
            write, holds a run without ``--resume``/``--force``, or a manifest of an unknown
            ``manifest_version``; for a path that is a file.
    """
    p = Path(out)
    if p.exists() and not p.is_dir():
        raise RunError(f"{flags.option} {p} is a file, not a directory")
    p.mkdir(parents=True, exist_ok=True)
    try:
        if resume:
            claim_for_resume(p, flags)
        else:
            claim_new_run(p, force=force, flags=flags)
    except ForeignContentError as exc:
        raise RunError(str(exc)) from exc
    return p


def load_run(run_dir: str | Path, *, repair: bool = False, states: bool = True) -> list[Trajectory]:
    """The trajectories of a run directory, ignoring a torn last line, one per (agent, task,
    trial) (the first record; repeated ones raise a :class:`DuplicateRecordWarning`).

    Args:
        run_dir: the directory holding ``trajectories.jsonl`` (none: empty list).
        repair: make the file end on its last whole record before later appends: a torn last
            line or frame (a write cut by a crash) is cut (a complete last record that only
            lacks its newline gets the newline instead); frames damaged in place are moved
            aside into a file of their own and said on stderr, never deleted.
        states: fill in the snapshots of compact lines (False: only what the lines hold,
            enough for their stored scores).

    Raises:
        evaluation.trajectory.TrajectoryFileError: for a malformed line that is not the last,
            or a compact line whose snapshot files are missing.
    """
    path = trajectories_file(run_dir)
    if not path.exists() and not path.is_symlink():
        return []
    if not repair:
        return dedupe(read_trajectories(path, tolerate_truncated_tail=True, states=states, follow=False), path)
    read = read_trajectory_file(path, states=states)
    trajs = dedupe(read.trajectories, path)
    if read.compressed:
        _repair_frames(path, read)
    else:
        _repair_plain_tail(path)
    return trajs


def _repair_frames(path: Path, read: TrajectoryRead) -> None:
    """Make a compressed trajectories file end on its last valid frame before ``--resume``
    appends to it: a torn tail (a write cut short) is cut; every frame damaged in place is
    moved aside into a file of its own (:func:`set_damage_aside`) and said in a
    :class:`DamagedFramesWarning`; no valid frame is ever deleted."""
    if not read.damaged:
        return
    aside = set_damage_aside(path, read.kept, read.damaged)
    if aside is not None:
        in_place = [d for d in read.damaged if not d.torn]
        warnings.warn(
            DamagedFramesWarning(
                f"{damage_summary(path, in_place)}. Their bytes were moved aside to {aside} (nothing deleted); "
                "their episodes run again"
            ),
            stacklevel=3,
        )


def _repair_plain_tail(path: Path) -> None:
    """Truncate a plain trajectories file's torn last line (a complete last record that only
    lacks its newline gets the newline instead)."""
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


def _order(s: EpisodeScores) -> tuple[str, str, int, str]:
    return (s.agent, s.task_id or "", s.trial, s.episode_id)


def compute_scores(
    items: Iterable[Trajectory | EpisodeScores | dict[str, Any]],
    *,
    catalog: Catalog | None = None,
    k: int | None = DEFAULT_K,
) -> Scoreboard:
    """``scores.json`` (as a :class:`Scoreboard`): :func:`mcpgym.evaluation.scoring.aggregate.aggregate`
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
        FileNotFoundError: for a missing path or a directory without trajectories (``trajectories.jsonl.zst``,
            or an older run's ``trajectories.jsonl``).
        evaluation.trajectory.TrajectoryFileError: for a malformed line (file, line, field).
    """
    out: list[Trajectory] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            problem = run_dir_problem(p)
            if problem is not None:
                raise FileNotFoundError(problem)
            out += load_run(p)
        elif p.is_file():
            out += dedupe(read_trajectories(p, tolerate_truncated_tail=True), p)
        else:
            raise FileNotFoundError(f"{p}: no such file or directory")
    return out


def rescore(
    trajs: Iterable[Trajectory], catalog: Catalog, *, k: int | None = DEFAULT_K
) -> tuple[list[EpisodeScores], int]:
    """Score every trajectory again (checks from its ``metadata["extra_checks"]``).

    Returns:
        The new scores, sorted like :func:`compute_scores` sorts them, and how many differ
        from the scores stored in the trajectories (a changed scorer or catalog shows here).
    """
    fresh, changed = [], 0
    for t in trajs:
        sc = score_episode(t, catalog, k=k)
        if t.scores is not None and sc.model_dump(mode="json") != t.scores.model_dump(mode="json"):
            changed += 1
        fresh.append(sc)
    return sorted(fresh, key=_order), changed


__all__ = [
    "DuplicateRecordWarning",
    "RUN_FILES",
    "RunError",
    "SCORES",
    "SERVER_LOG",
    "TRAJECTORIES",
    "TRAJECTORIES_ZST",
    "trajectories_file",
    "compute_scores",
    "dedupe",
    "episode_key",
    "load_paths",
    "load_run",
    "prepare_out_dir",
    "rescore",
]
