"""The runs ``mcpgym view`` lists: one :class:`RunSummary` per run directory, and the
per-condition figures of a run.

:func:`summarize_run` reads a run directory (read-only, never repaired) into its list row:
agents, tasks, episodes, each agent's success with its 95% Wilson interval (the aggregates of
:func:`mcpgym.evaluation.run.run_dir.compute_scores`, as ``scores.json`` has them), date and
fault profile. A run that cannot be read is a row all the same, with ``problem`` saying why: a
missing or non-run directory, a file that is not a trajectory file, frames damaged so that no
episode is left ("damaged", never "holds no episode"), an empty file, a bad manifest.

Conditions (the small interface the condition charts are drawn through): an episode's
condition is the run's fixed one (fault profile and tool exposure from its manifest) updated by
whatever the episode records itself (a ``condition`` mapping, axis -> value, on its scores or
trajectory, as a run with condition axes writes it). :func:`condition_charts` groups a run's
episodes per axis whose value varies and aggregates each (agent, value) group with the same
``compute_scores``; a run of one condition has no chart (:attr:`RunSummary.charts` empty).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from mcpgym.evaluation.records.scores import EpisodeScores
from mcpgym.evaluation.records.status import EpisodeStatus
from mcpgym.kernel.exceptions import MCPGymError
from mcpgym.kernel.shorten import EchoName, cap_message

CHART_METRICS: tuple[tuple[str, str | None, str], ...] = (
    ("success_rate", "success_ci95", "Success"),
    ("recovery_rate", None, "Recovery"),
)
"""(aggregate field, its interval field or None, label) of each score drawn against a condition axis."""


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


class ConditionCell(BaseModel):
    """One agent under one value of an axis: the metric's rate (None: not defined, e.g. no
    recoverable error met), its interval when the metric has one, and the episodes behind it."""

    agent: EchoName
    value: EchoName
    rate: float | None = None
    ci95: list[float] | None = None
    episodes: int = Field(ge=0)


class ConditionChart(BaseModel):
    """A score drawn against one condition axis, per agent (a saturation or fault-profile curve)."""

    axis: EchoName
    metric: str
    label: str
    values: list[EchoName]
    agents: list[EchoName]
    cells: list[ConditionCell] = Field(default_factory=list)


class RunSummary(BaseModel):
    """A run as the browser's run list shows it.

    Attributes:
        index: position on the command line (the run's id in every URL: paths never are).
        label: the folder's name (the path when two names collide). path: as given.
        problem: why the run cannot be shown (None: it can). damaged: what was left out of a
            readable run's trajectory file. date: the manifest's ``started_at`` (None: unknown).
        condition: the run's fixed condition (``faults``, ``tools``). charts: per-condition
            figures (empty for a run of one condition).
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
    charts: list[ConditionChart] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether the run can be shown (no problem)."""
        return self.problem is None


def episode_condition(episode: EpisodeScores | Any, fixed: dict[str, str]) -> dict[str, str]:
    """The condition ``episode`` was played under: ``fixed`` (the run's) updated by the
    ``condition`` mapping the episode records, if any (a field or an extra of its scores)."""
    own = getattr(episode, "condition", None)
    if own is None:
        extra = getattr(episode, "model_extra", None) or {}
        own = extra.get("condition")
    out = dict(fixed)
    if isinstance(own, dict):
        out.update({str(k): str(v) for k, v in own.items()})
    return out


def condition_charts(episodes: Sequence[EpisodeScores], fixed: dict[str, str]) -> list[ConditionChart]:
    """One chart per (axis whose value varies across ``episodes``, metric of
    :data:`CHART_METRICS`): per agent and value, the aggregate of that group's episodes
    (:func:`~mcpgym.evaluation.run.run_dir.compute_scores`). Values keep their first-seen order
    (the order the run gave its axis). Empty when every episode shares one condition."""
    from mcpgym.evaluation.run.run_dir import compute_scores

    conds = [episode_condition(e, fixed) for e in episodes]
    axes = [a for a in dict.fromkeys(k for c in conds for k in c) if len({c.get(a, "") for c in conds}) > 1]
    charts = []
    for axis in axes:
        values = list(dict.fromkeys(c.get(axis, "") for c in conds))
        agents = sorted({e.agent or "external" for e in episodes})
        groups = {
            v: compute_scores([e for e, c in zip(episodes, conds, strict=True) if c.get(axis, "") == v]).agents
            for v in values
        }
        for key, ci_key, label in CHART_METRICS:
            chart = ConditionChart(axis=axis, metric=key, label=label, values=values, agents=agents)
            for v in values:
                for name in agents:
                    m = groups[v].get(name)
                    if m is None:
                        continue
                    chart.cells.append(
                        ConditionCell(
                            agent=name,
                            value=v,
                            rate=getattr(m, key, None),
                            ci95=getattr(m, ci_key, None) if ci_key else None,
                            episodes=m.episodes,
                        )
                    )
            charts.append(chart)
    return charts


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
    row.charts = condition_charts(episodes, row.condition)
    return row


def summarize_runs(paths: Sequence[Path]) -> list[RunSummary]:
    """One :class:`RunSummary` per path, in order, labelled as ``mcpgym compare`` labels runs
    (:func:`mcpgym.evaluation.report.compare.run_labels`)."""
    from mcpgym.evaluation.report.compare import run_labels

    return [summarize_run(i, label, p) for i, (label, p) in enumerate(zip(run_labels(paths), paths, strict=True))]


__all__ = [
    "CHART_METRICS",
    "AgentSummary",
    "ConditionCell",
    "ConditionChart",
    "RunSummary",
    "condition_charts",
    "episode_condition",
    "read_episodes",
    "summarize_run",
    "summarize_runs",
]
