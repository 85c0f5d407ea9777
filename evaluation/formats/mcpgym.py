"""Format ``mcpgym``: our own ``trajectories.jsonl`` (one :class:`Trajectory` per line).

The same file :func:`mcpgym.evaluation.records.trajectory.read_trajectories` reads, but read line by line
so that one malformed line becomes a problem naming the file, the line and the field while
the other lines are still scored. Trajectories keep everything they carry: the fault ledger
(ground truth; faults are inferred only when ``ledger`` is null), the snapshots (outcome
scores; a compact line's are read from the ``snapshots/`` folder next to the file, see
:mod:`mcpgym.evaluation.records.snapshots`; when that folder or a file of it is missing, the episode
is still scored: its outcome is unavailable, ``success`` null with ``outcome_unavailable``
naming why, and a warning says so), the agent name. Stored ``scores`` are ignored: the
trajectory is scored again. A step whose ``arguments`` were stored as a JSON string is read
with them parsed, as in every format. A second record of one (agent, task, trial) is skipped
with a warning naming its line: the first one counts.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from mcpgym.evaluation.formats.common import Episode, LoadResult, jsonl_lines, read_text
from mcpgym.evaluation.formats.results import parse_arguments
from mcpgym.evaluation.records.condition import EpisodeCondition
from mcpgym.evaluation.records.snapshots import SnapshotStore
from mcpgym.evaluation.records.trajectory import ToolCallStep, Trajectory, missing_line_field
from mcpgym.kernel.validation_text import json_type, validation_line

FORMAT = "mcpgym"


def load(path: str | Path) -> LoadResult:
    """Read a ``trajectories.jsonl`` file.

    Args:
        path: the file.

    Returns:
        A :class:`LoadResult`: one episode per valid line (label ``episode <id>``, plus
        ``trial <n>`` when it is not 0); a line that is not JSON, not an object, or not a
        valid trajectory is a problem naming the line (and the field). A last line without
        its newline that does not parse is reported like any other (a killed run).
    """
    p = Path(path)
    result = LoadResult(file=str(path), format=FORMAT)
    text = read_text(p, result)
    if text is None:
        return result
    store = SnapshotStore(p.parent)
    seen: dict[tuple[str, str, int, EpisodeCondition | None], int] = {}
    for lineno, line in enumerate(jsonl_lines(text), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            result.problem(f"invalid JSON at column {exc.colno}: {exc.msg}", line=lineno)
            continue
        if not isinstance(data, dict):
            result.problem(f"a trajectory line must be a JSON object, got a JSON {json_type(data)}", line=lineno)
            continue
        label = f"episode {data.get('episode_id', '?')}"
        missing = missing_line_field(data)
        if missing:
            result.problem(missing, line=lineno, episode=label)
            continue
        try:
            traj = Trajectory.model_validate(data)
        except ValidationError as exc:
            result.problem(validation_line(exc, data), line=lineno, episode=label)
            continue
        key = (
            traj.agent,
            traj.task_id if traj.task_id is not None else f"episode:{traj.episode_id}",
            traj.trial,
            traj.condition,
        )
        if key in seen:
            where = f", condition {key[3].label}" if key[3] is not None else ""
            result.problem(
                f"a second record of agent {key[0]!r}, task {key[1]!r}, trial {key[2]}{where} (first on line "
                f"{seen[key]}): ignored, the first one counts",
                line=lineno,
                severity="warning",
            )
            continue
        seen[key] = lineno
        warnings: list[str] = []
        if traj.stored is not None:
            try:
                initial, final, gold = store.expand(traj.stored)
            except ValueError as exc:
                # only the outcome needs the states: every other score is computed
                reason = f"snapshots unavailable ({exc})"
                warnings.append(f"field stored: {reason}: the outcome is unavailable, every other score is computed")
                traj = traj.model_copy(
                    update={
                        "stored": None,
                        "initial_snapshot": None,
                        "final_snapshot": None,
                        "gold_snapshot": None,
                        "metadata": {**traj.metadata, "outcome_unavailable": reason},
                    }
                )
            else:
                traj = traj.model_copy(
                    update={"initial_snapshot": initial, "final_snapshot": final, "gold_snapshot": gold, "stored": None}
                )
        if traj.trial:
            label += f" trial {traj.trial}"
        steps = [
            s.model_copy(update={"arguments": parse_arguments(s.arguments)[0]})
            if isinstance(s, ToolCallStep) and isinstance(s.arguments, str)
            else s
            for s in traj.steps
        ]
        result.add(
            Episode(
                label=label,
                trajectory=traj.model_copy(update={"scores": None, "steps": steps}),
                line=lineno,
                warnings=warnings,
            )
        )
    if not result.episodes and not result.problems:
        result.problem("no trajectories in the file", severity="warning")
    return result


__all__ = ["FORMAT", "load"]
