"""The runs ``mcpgym view`` lists: one :class:`RunSummary` per run directory.

:func:`summarize_run` reads a run directory (read-only, never repaired) into its list row:
agents, tasks, episodes, each agent's success with its 95% Wilson interval (the aggregates of
:func:`mcpgym.evaluation.run.run_dir.compute_scores`, as ``scores.json`` has them), date and
fault profile. A run that cannot be read is a row all the same, with ``problem`` saying why: a
missing or non-run directory, a file that is not a trajectory file, frames damaged so that no
episode is left ("damaged", never "holds no episode"), an empty file, a bad manifest.

A run with condition axes (``mcpgym run --faults none,harsh``) keeps them in its manifest
(:attr:`RunSummary.conditions`, :class:`~mcpgym.evaluation.records.condition.ConditionAxis`);
its agents' rows are then one per agent and condition, as in ``scores.json``. The curves drawn
against those axes are the report's own (:mod:`mcpgym.evaluation.report.conditions`, drawn by
:mod:`mcpgym.evaluation.report.condition_charts`), which the browser's run page shows.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from mcpgym.evaluation.records.condition import ConditionAxis
from mcpgym.evaluation.records.scores import EpisodeScores
from mcpgym.evaluation.records.status import EpisodeStatus
from mcpgym.kernel.exceptions import MCPGymError
from mcpgym.kernel.shorten import EchoName, cap_message


class AgentSummary(BaseModel):
    """One agent of a run: its episode counts and success rate with the 95% Wilson interval
    (``success_rate`` None when no episode was scored)."""

    agent: EchoName
    episodes: int = Field(ge=0)
    scored: int = Field(ge=0, description="Episodes whose success is known and that did not error.")
    errored: int = Field(ge=0)
    successes: int = Field(ge=0)
    success_rate: float | None = None
    success_ci95: list[float] | None = None


class RunSummary(BaseModel):
    """A run as the browser's run list shows it.

    Attributes:
        index: position on the command line (the run's id in every URL: paths never are).
        label: the folder's name (the path when two names collide). path: as given.
        problem: why the run cannot be shown (None: it can). damaged: what was left out of a
            readable run's trajectory file. date: the manifest's ``started_at`` (None: unknown).
        condition: the run's fault profile and tool exposure (``faults``, ``tools``; a run with
            condition axes lists each axis's values, comma-separated). conditions: the run's
            condition axes from its manifest (None: a run of one condition).
        agents: one row per agent, or per agent and condition in a run with condition axes
            (named as ``scores.json`` names them,
            :func:`~mcpgym.evaluation.records.condition.condition_key`).
    """

    index: int = Field(ge=0)
    label: EchoName
    path: EchoName
    problem: str | None = None
    damaged: list[str] = Field(default_factory=list)
    date: str | None = None
    suite: EchoName | None = None
    condition: dict[str, str] = Field(default_factory=dict)
    tasks: int = Field(0, ge=0)
    episodes: int = Field(0, ge=0)
    errored: int = Field(0, ge=0)
    agents: list[AgentSummary] = Field(default_factory=list)
    conditions: ConditionAxis | None = None

    @property
    def ok(self) -> bool:
        """Whether the run can be shown (no problem)."""
        return self.problem is None

    @property
    def axes(self) -> dict[str, list[str]]:
        """The condition axes along which the run varies (more than one value), axis -> its
        values in the run's order: ``{"faults": ["none", "harsh"]}``; empty for a run of one
        condition."""
        if self.conditions is None:
            return {}
        both = {"faults": self.conditions.faults, "tools": self.conditions.tools}
        return {axis: values for axis, values in both.items() if len(values) > 1}


def read_episodes(run_dir: Path) -> tuple[list[EpisodeScores], list[str]]:
    """A run's episode scores (stored ones; unscored lines scored as ``mcpgym report`` does) and
    the damage warnings met on the way (frames left out). Never writes.

    Raises:
        FileNotFoundError: not a run directory. ValueError: damaged so that no episode is left
            or a file that is no trajectory file (the message starts "damaged:" and says
            what), or an empty file ("holds no episode").
    """
    from mcpgym.evaluation.records.compressed import DamagedFramesWarning, run_dir_problem
    from mcpgym.evaluation.report.compare import load_episodes
    from mcpgym.evaluation.run.run_dir import load_run, trajectories_file

    problem = run_dir_problem(run_dir)
    if problem is not None:
        raise FileNotFoundError(problem)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", DamagedFramesWarning)
        try:
            trajs = load_run(run_dir, states=False)
        except (MCPGymError, ValueError) as exc:  # not a trajectory file at all: garbage bytes
            raise ValueError(f"damaged: {exc}") from None
    damaged = [str(w.message) for w in said if issubclass(w.category, DamagedFramesWarning)]
    if not trajs:
        if damaged:
            raise ValueError(f"damaged: no episode could be read ({damaged[0]})")
        raise ValueError(f"{trajectories_file(run_dir)} holds no episode")
    episodes = load_episodes(run_dir, trajs)
    return episodes, damaged


def summarize_run(index: int, label: str, run_dir: Path) -> RunSummary:
    """The list row of ``run_dir``; a run that cannot be read is a row with ``problem`` set
    (one line, at most :data:`~mcpgym.kernel.shorten.MAX_MESSAGE_CHARS` characters), never an
    exception."""
    from mcpgym.evaluation.records.manifest import read_manifest
    from mcpgym.evaluation.report.compare import run_conditions
    from mcpgym.evaluation.run.run_dir import compute_scores

    row = RunSummary(index=index, label=label, path=str(run_dir))
    try:
        episodes, row.damaged = read_episodes(run_dir)
        manifest = read_manifest(run_dir)
        cond = run_conditions(run_dir, episodes)
        board = compute_scores(episodes)
    except (MCPGymError, ValueError, OSError, ValidationError) as exc:  # a damaged run is a row, not a crash
        row.problem = cap_message(" ".join(str(exc).split()) or type(exc).__name__)
        return row
    row.condition = {"faults": cond.faults, "tools": cond.tools}
    row.date = manifest.started_at if manifest is not None else None
    row.suite = manifest.suite if manifest is not None else None
    row.tasks = len(cond.tasks)
    row.episodes = len(episodes)
    row.errored = sum(1 for e in episodes if e.status == EpisodeStatus.ERRORED)
    row.agents = [
        AgentSummary(
            agent=name,
            episodes=m.episodes,
            scored=m.scored_episodes,
            errored=m.errored_episodes,
            successes=m.successes,
            success_rate=m.success_rate,
            success_ci95=m.success_ci95,
        )
        for name, m in board.agents.items()
    ]
    row.conditions = manifest.conditions if manifest is not None else None
    return row


def summarize_runs(paths: Sequence[Path]) -> list[RunSummary]:
    """One :class:`RunSummary` per path, in order, labelled as ``mcpgym compare`` labels runs
    (:func:`mcpgym.evaluation.report.compare.run_labels`)."""
    from mcpgym.evaluation.report.compare import run_labels

    return [summarize_run(i, label, p) for i, (label, p) in enumerate(zip(run_labels(paths), paths, strict=True))]


__all__ = [
    "AgentSummary",
    "RunSummary",
    "read_episodes",
    "summarize_run",
    "summarize_runs",
]
