"""Scores against a run's condition axes: the figures the report draws as curves.

A run with condition axes (``mcpgym run --faults none,default,harsh --tools task,task+20,all``;
:mod:`mcpgym.evaluation.records.condition`) has one ``scores.json`` row per agent and
condition. :func:`condition_figures` turns those rows and the episodes into one
:class:`Point` per (agent, condition, metric), and :func:`curves` lays them out as the curves
the report draws: each agent's score against one axis, one panel per value of the other axis
(a fault profile's curve at each tool exposure, and the other way round), so that no figure
pools two conditions. The metrics (:class:`CurveMetric`):

* against the fault profile: success and recovery (what faults cost, and whether the agent
  gets past them);
* against the exposed tools (the saturation curve): success, tool-selection errors and tokens.

The text renderings (:func:`curve_rows`) feed the terminal and ``report.md``; the HTML charts
are :mod:`mcpgym.evaluation.report.condition_charts`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from mcpgym.evaluation.records.condition import ConditionAxis, EpisodeCondition
from mcpgym.evaluation.records.scores import AgentMetrics, EpisodeScores, Scoreboard
from mcpgym.evaluation.records.statistics import wilson_interval
from mcpgym.evaluation.records.status import EpisodeStatus
from mcpgym.evaluation.records.trajectory import Trajectory


class CurveMetric(StrEnum):
    """A score the report draws against a condition axis."""

    success = "success"
    """success_rate of the scored episodes, with its 95% Wilson interval."""
    recovery = "recovery"
    """recovery_rate: recoveries / recoverable errors met, with its 95% Wilson interval."""
    selection_errors = "selection_errors"
    """Tool-selection errors per episode: calls naming a tool outside the task's own tool set
    (the ``--tools task`` set, :func:`mcpgym.evaluation.tasks.oracle_tools`: what a good agent
    needs, with the reads and remedies around it), refused calls to unknown tools included;
    the mean over the scored episodes."""
    tokens = "tokens"
    """Tokens (input + output) per episode: the mean over the scored episodes that report tokens."""


LABELS: dict[CurveMetric, str] = {
    CurveMetric.success: "Success",
    CurveMetric.recovery: "Recovery",
    CurveMetric.selection_errors: "Tool-selection errors / episode",
    CurveMetric.tokens: "Tokens / episode",
}
"""How tables and charts title each metric."""

RATES = frozenset({CurveMetric.success, CurveMetric.recovery})
"""The metrics that are rates in [0, 1] (the others are means per episode)."""

AXIS_METRICS: dict[str, tuple[CurveMetric, ...]] = {
    "faults": (CurveMetric.success, CurveMetric.recovery),
    "tools": (CurveMetric.success, CurveMetric.selection_errors, CurveMetric.tokens),
}
"""The metrics drawn against each axis (``faults``: the fault profile; ``tools``: the exposure)."""

AXIS_TITLES = {"faults": "fault profile", "tools": "exposed tools"}
"""How each axis is named in titles."""


@dataclass(frozen=True)
class Point:
    """One figure of one agent in one condition.

    Attributes:
        value: the rate or mean (None: not computable, e.g. no recoverable error met, no
            episode reporting tokens). ci: a rate's 95% Wilson interval.
        n: the denominator (scored episodes, recoverable errors, episodes with tokens...).
        why: with ``value`` None, why it has none.
    """

    value: float | None
    ci: tuple[float, float] | None = None
    n: int = 0
    why: str = ""


@dataclass
class ConditionFigures:
    """Every :class:`Point` of a run with condition axes.

    Attributes:
        axis: the run's axes (their values in the order given).
        agents: the agents' names, sorted.
        points: (agent, condition, metric) -> its point.
        tools_listed: tool exposure -> the mean number of tools the episodes listed (None: no
            episode recorded it).
        unknown_tasks: task ids whose tool set is unknown here (not in this mcpgym's tasks):
            their episodes are left out of the tool-selection errors.
    """

    axis: ConditionAxis
    agents: list[str]
    points: dict[tuple[str, EpisodeCondition, CurveMetric], Point] = field(default_factory=dict)
    tools_listed: dict[str, float | None] = field(default_factory=dict)
    unknown_tasks: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Curve:
    """One panel: each agent's ``metric`` over the values of ``axis``, the other axis fixed.

    Attributes:
        axis: ``faults`` or ``tools``. metric: what is drawn. fixed: the other axis's value
            (``tools=task``), or None when the other axis has one value. x: the axis's values.
        series: agent -> one point per value of ``x``.
    """

    axis: str
    metric: CurveMetric
    fixed: str | None
    x: list[str]
    series: dict[str, list[Point]]

    @property
    def title(self) -> str:
        """``Success vs fault profile (tools=task)``."""
        return f"{LABELS[self.metric]} vs {AXIS_TITLES[self.axis]}" + (f" ({self.fixed})" if self.fixed else "")


def _rate(num: int, den: int, what: str) -> Point:
    if den == 0:
        return Point(None, None, 0, f"no {what}")
    ci = wilson_interval(num, den)
    return Point(num / den, (ci[0], ci[1]) if ci else None, den)


def _mean(values: Sequence[float], what: str) -> Point:
    return Point(sum(values) / len(values), None, len(values)) if values else Point(None, None, 0, f"no {what}")


class _ToolSets:
    """Task id -> its ``--tools task`` set, looked up once (None: a task this mcpgym does not know)."""

    def __init__(self) -> None:
        self.known: dict[str, frozenset[str] | None] = {}

    def of(self, task_id: str | None) -> frozenset[str] | None:
        if task_id is None:
            return None
        if task_id not in self.known:
            from mcpgym.evaluation.tasks import get_task, oracle_tools

            try:
                self.known[task_id] = frozenset(oracle_tools(get_task(task_id)))
            except KeyError:
                self.known[task_id] = None
        return self.known[task_id]


def selection_errors(traj: Trajectory, task_tools: frozenset[str]) -> int:
    """The episode's tool-selection errors (:attr:`CurveMetric.selection_errors`): its tool-call
    steps, refused ones included, that name a tool outside ``task_tools``."""
    return sum(1 for step in traj.tool_calls if step.tool not in task_tools)


def condition_figures(
    axis: ConditionAxis, scores: Scoreboard, trajectories: Sequence[tuple[Trajectory, EpisodeScores]]
) -> ConditionFigures:
    """The figures of a run with condition ``axis``: success and recovery from its
    ``scores.json`` rows (one per agent and condition), tool-selection errors and tokens from
    its episodes (errored ones left out, as from every figure). Rows without a condition (an
    agent listed with no episode) are left out."""
    rows: dict[tuple[str, EpisodeCondition], AgentMetrics] = {
        (m.agent, m.condition): m for m in scores.agents.values() if m.agent is not None and m.condition is not None
    }
    figs = ConditionFigures(axis=axis, agents=sorted({a for a, _ in rows}))
    sets = _ToolSets()
    errors: dict[tuple[str, EpisodeCondition], list[float]] = {}
    tokens: dict[tuple[str, EpisodeCondition], list[float]] = {}
    listed: dict[str, list[float]] = {}
    unknown: set[str] = set()
    for traj, sc in trajectories:
        if sc.condition is None:
            continue
        n = traj.metadata.get("tools_listed")
        if isinstance(n, int):
            listed.setdefault(sc.condition.tools, []).append(float(n))
        if sc.status == EpisodeStatus.ERRORED:
            continue
        key = (sc.agent or "external", sc.condition)
        tool_set = sets.of(sc.task_id)
        if tool_set is None:
            unknown.add(sc.task_id or sc.episode_id)
        else:
            errors.setdefault(key, []).append(float(selection_errors(traj, tool_set)))
        if sc.tokens is not None:
            tokens.setdefault(key, []).append(float(sc.tokens.input + sc.tokens.output))
    for (agent, cond), m in rows.items():
        figs.points[(agent, cond, CurveMetric.success)] = _rate(m.successes, m.scored_episodes, "scored episode")
        figs.points[(agent, cond, CurveMetric.recovery)] = _rate(
            m.recoveries, m.recoverable_errors, "recoverable error met"
        )
        figs.points[(agent, cond, CurveMetric.selection_errors)] = _mean(
            errors.get((agent, cond), []), "scored episode of a known task"
        )
        figs.points[(agent, cond, CurveMetric.tokens)] = _mean(
            tokens.get((agent, cond), []), "token counts (scripted agents report none)"
        )
    figs.tools_listed = {t: (sum(v) / len(v) if (v := listed.get(t)) else None) for t in axis.tools}
    figs.unknown_tasks = sorted(unknown)
    return figs


def x_label(figs: ConditionFigures, axis: str, value: str) -> str:
    """An x-axis value as charts show it: a tool exposure with its mean tool count (``task+20 · 24 tools``)."""
    if axis != "tools":
        return value
    n = figs.tools_listed.get(value)
    return value if n is None else f"{value} · {n:.0f} tools"


def curves(figs: ConditionFigures, axis: str) -> list[Curve]:
    """The panels of ``axis`` (``faults`` or ``tools``): for each metric of :data:`AXIS_METRICS`,
    one curve per value of the other axis (one panel when it has a single value); empty when
    ``axis`` has a single value (nothing varies along it)."""
    values = figs.axis.faults if axis == "faults" else figs.axis.tools
    others = figs.axis.tools if axis == "faults" else figs.axis.faults
    other_name = "tools" if axis == "faults" else "faults"
    if len(values) < 2:
        return []
    out = []
    for metric in AXIS_METRICS[axis]:
        for other in others:
            series = {}
            for agent in figs.agents:
                pts = []
                for v in values:
                    cond = (
                        EpisodeCondition(faults=v, tools=other)
                        if axis == "faults"
                        else EpisodeCondition(faults=other, tools=v)
                    )
                    pts.append(figs.points.get((agent, cond, metric), Point(None, None, 0, "no episode")))
                series[agent] = pts
            fixed = f"{other_name}={other}" if len(others) > 1 else None
            out.append(Curve(axis=axis, metric=metric, fixed=fixed, x=list(values), series=series))
    return out


def point_text(metric: CurveMetric, p: Point) -> str:
    """A point as a table cell: ``75% [41–93]`` for a rate, ``1.25`` for a mean, ``–`` for none."""
    if p.value is None:
        return "–"
    if metric in RATES:
        ci = f" [{p.ci[0] * 100:.0f}–{p.ci[1] * 100:.0f}]" if p.ci else ""
        return f"{p.value * 100:.0f}%{ci}"
    return f"{p.value:,.0f}" if metric is CurveMetric.tokens else f"{p.value:.2f}"


def curve_rows(figs: ConditionFigures, axis: str) -> list[tuple[str, list[str], list[list[str]]]]:
    """Each metric of ``axis`` as a table: (title, header, rows); a row per (agent, value of
    the other axis), a column per value of ``axis``."""
    tables = []
    by_metric: dict[CurveMetric, list[Curve]] = {}
    for c in curves(figs, axis):
        by_metric.setdefault(c.metric, []).append(c)
    for metric, panels in by_metric.items():
        other = "Tools" if axis == "faults" else "Faults"
        header = ["Agent", other, *[x_label(figs, axis, v) for v in panels[0].x]]
        rows = [
            [agent, (c.fixed or "").partition("=")[2] or "–", *[point_text(metric, p) for p in c.series[agent]]]
            for agent in figs.agents
            for c in panels
        ]
        tables.append((f"{LABELS[metric]} vs {AXIS_TITLES[axis]}", header, rows))
    return tables


CONDITIONS_NOTE = (
    "One row per agent and value of the other axis; every cell is one condition's own episodes. "
    "Success and recovery with their 95% Wilson interval; tool-selection errors: calls per episode "
    "naming a tool outside the task's own set (the --tools task set); tokens: input + output per "
    "episode; –: not computable (no recoverable error met, no token counts). Conditions share each "
    "(task, trial)'s world and fault seed, so they are paired."
)
"""The note under the condition tables and charts (docs/design.md §7, "Conditions")."""


def unknown_note(figs: ConditionFigures) -> str:
    """A loud line when tool-selection errors leave episodes out (tasks unknown here), else ''."""
    if not figs.unknown_tasks:
        return ""
    shown = ", ".join(figs.unknown_tasks[:5]) + (" ..." if len(figs.unknown_tasks) > 5 else "")
    return f"Tool-selection errors leave out the episodes of tasks this mcpgym does not know: {shown}."


__all__ = [
    "AXIS_METRICS",
    "AXIS_TITLES",
    "CONDITIONS_NOTE",
    "ConditionFigures",
    "Curve",
    "CurveMetric",
    "LABELS",
    "Point",
    "RATES",
    "condition_figures",
    "curve_rows",
    "curves",
    "point_text",
    "selection_errors",
    "unknown_note",
    "x_label",
]
