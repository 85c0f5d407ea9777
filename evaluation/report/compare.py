"""``mcpgym compare``: paired differences between agents of one or several runs.

:func:`build_comparison` reads each run directory's episode scores, checks that the runs share
their conditions (task set, fault profile, tool exposure) unless the caller names the axis
that differs, picks the pairs of contestants (an agent of a run, labelled ``agent@run``; in a
run with condition axes an agent in one condition, ``agent [faults=F, tools=T]@run``) and
computes, per pair and per task, the paired difference of success and of every behaviour score
over the same (task, trial) episodes (:mod:`mcpgym.evaluation.scoring.paired`: paired bootstrap
intervals, exact McNemar for success; docs/design.md §7, "Comparing runs").
:func:`print_comparison_table`, :func:`comparison_markdown` and :func:`comparison_html` render it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from enum import StrEnum
from html import escape
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from mcpgym.evaluation.records.condition import condition_key
from mcpgym.evaluation.records.scores import EpisodeScores
from mcpgym.evaluation.records.trajectory import Trajectory
from mcpgym.evaluation.report.markdown_text import md_table, md_text
from mcpgym.evaluation.report.tables import Column, print_table
from mcpgym.evaluation.scoring.paired import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    PAIRED_METRICS,
    PairedDifference,
    Verdict,
    compare_pairs,
    pair_episodes,
)
from mcpgym.kernel.exceptions import InputError
from mcpgym.kernel.shorten import short

METHOD = (
    f"B − A over the same (task, trial) episodes (pairs where either episode errored are left out); "
    f"95% interval: paired percentile bootstrap, {BOOTSTRAP_RESAMPLES:,} resamples, seed {BOOTSTRAP_SEED}; "
    "success also gets the exact McNemar test (p). 'no detectable difference': the interval contains 0. "
    "Rates are pooled as in the aggregates; '/ episode' rows are means per episode. docs/design.md §7, "
    "Comparing runs."
)
"""The method line every rendering of a comparison carries."""


class Axis(StrEnum):
    """A condition that may differ between compared runs (``--axis``)."""

    TASKS = "tasks"
    FAULTS = "faults"
    TOOLS = "tools"


class RunConditions(BaseModel):
    """What a run held fixed: its task ids, fault profile (name and canonical JSON) and tool exposure."""

    tasks: list[str] = Field(default_factory=list)
    faults: str = "unknown"
    faults_key: str = ""
    tools: str = "all"

    def value(self, axis: Axis) -> str:
        """The condition's value on ``axis``, as a short text."""
        if axis is Axis.TASKS:
            return f"{len(self.tasks)} tasks"
        return self.faults if axis is Axis.FAULTS else self.tools

    def key(self, axis: Axis) -> str:
        """What two runs must share on ``axis`` to be compared without naming it."""
        if axis is Axis.TASKS:
            return "\n".join(self.tasks)
        return self.faults_key if axis is Axis.FAULTS else self.tools


class ComparedRun(BaseModel):
    """One run directory of a comparison: its label (the folder's name, or the path when two
    names collide), path, conditions and agents."""

    label: str
    path: str
    conditions: RunConditions
    agents: list[str]


class TaskDifference(BaseModel):
    """A pair's success difference on one task (its trials are the pairs)."""

    task: str
    difference: PairedDifference


class PairComparison(BaseModel):
    """Contestant B against contestant A (``agent@run`` labels): every metric's paired
    difference over all their common episodes, and success per task."""

    a: str
    b: str
    pairs: int = Field(ge=0, description="(task, trial) pairs both played without erroring")
    errored_pairs: int = Field(ge=0, description="matched pairs left out because an episode errored")
    overall: list[PairedDifference]
    by_task: list[TaskDifference] = Field(default_factory=list)


class Comparison(BaseModel):
    """What ``mcpgym compare --json`` prints: the runs, the axes allowed to differ, the method
    and one :class:`PairComparison` per pair of contestants."""

    runs: list[ComparedRun]
    axes: list[Axis] = Field(default_factory=list)
    method: str = METHOD
    comparisons: list[PairComparison] = Field(default_factory=list)


def run_conditions(run_dir: Path, episodes: Sequence[EpisodeScores]) -> RunConditions:
    """The conditions of a run: task ids from its manifest (else its episodes), fault profile
    and tool exposure from its manifest (``unknown`` / ``all`` without one)."""
    from mcpgym.evaluation.records.manifest import read_manifest

    manifest = read_manifest(run_dir)
    tasks = sorted({e.task_id or e.episode_id for e in episodes})
    if manifest is None:
        return RunConditions(tasks=tasks)
    profile = manifest.fault_profile or {}
    settings: dict[str, Any] = manifest.invocations[0].settings if manifest.invocations else {}
    if manifest.conditions is not None:  # condition axes: the run holds every profile of its axis
        return RunConditions(
            tasks=sorted(manifest.task_ids) or tasks,
            faults=",".join(manifest.conditions.faults),
            faults_key=json.dumps(manifest.fault_profiles, sort_keys=True),
            tools=",".join(manifest.conditions.tools),
        )
    return RunConditions(
        tasks=sorted(manifest.task_ids) or tasks,
        faults=str(profile.get("name", "unknown")) if profile else "unknown",
        faults_key=json.dumps(profile, sort_keys=True),
        tools=str(settings.get("tool_exposure") or "all"),
    )


def contestant(e: EpisodeScores) -> str:
    """The contestant an episode belongs to, before ``@run``: its agent, and its condition in a
    run with condition axes (:func:`~mcpgym.evaluation.records.condition.condition_key`)."""
    return condition_key(e.agent or "external", e.condition)


def _conditions(episodes: Sequence[EpisodeScores]) -> dict[str, str]:
    """Contestant -> its condition's label (empty in a run without axes)."""
    return {contestant(e): e.condition.label if e.condition is not None else "" for e in episodes}


def load_episodes(run_dir: Path, trajectories: Sequence[Trajectory] | None = None) -> list[EpisodeScores]:
    """A run's episode scores as stored in its lines (lines without scores are scored with the
    built-in catalog and the run's recovery window, as ``mcpgym report`` does). ``trajectories``:
    the run's lines when the caller has read them already (``load_run(run_dir, states=False)``).

    Raises:
        FileNotFoundError: not a run directory. ValueError: a run without episodes.
    """
    from mcpgym.evaluation.records.compressed import run_dir_problem
    from mcpgym.evaluation.report.run_report import build_report
    from mcpgym.evaluation.run.run_dir import load_run

    problem = run_dir_problem(run_dir)
    if problem is not None:
        raise FileNotFoundError(problem)
    trajs = load_run(run_dir, states=False) if trajectories is None else trajectories
    if trajs and all(t.scores is not None for t in trajs):
        return [t.scores for t in trajs if t.scores is not None]
    return build_report(run_dir, rescore=False).episodes


def run_labels(paths: Sequence[Path]) -> list[str]:
    """Each run's label: its folder's name, or its path when two folders share a name."""
    names = [p.resolve().name or str(p) for p in paths]
    return [str(p) if names.count(n) > 1 else n for p, n in zip(paths, names, strict=True)]


def check_conditions(runs: Sequence[ComparedRun], axes: Sequence[Axis]) -> None:
    """Refuse runs that differ on an axis not in ``axes``.

    Raises:
        InputError: naming the axis, each run's value and the ``--axis`` that allows it.
    """
    for axis in Axis:
        if axis in axes:
            continue
        keys = {r.conditions.key(axis) for r in runs}
        if len(keys) > 1:
            values = "; ".join(f"{r.label}: {r.conditions.value(axis)}" for r in runs)
            if axis is Axis.TASKS:
                common = set.intersection(*(set(r.conditions.tasks) for r in runs))
                odd = sorted({t for r in runs for t in r.conditions.tasks} - common)
                values += "; not in every run: " + ", ".join(short(t) for t in odd[:5])
                values += f" and {len(odd) - 5} more" if len(odd) > 5 else ""
            raise InputError(
                f"the runs differ in {axis.value} ({values}): a paired comparison holds every other condition "
                f"fixed; pass --axis {axis.value} if that is the difference you mean to measure"
            )


def choose_pairs(
    runs: Sequence[ComparedRun], baseline: str | None = None, conditions: dict[str, str] | None = None
) -> list[tuple[str, str]]:
    """The (A, B) contestant pairs to compare, as ``agent@run`` labels.

    ``baseline`` given: it against every other contestant. Else, with several runs: each agent
    that appears in several runs, its first run's against each later one's (a change of prompt,
    model or condition); when no agent name is shared, every pair of contestants of different
    runs. One run: every pair of its agents; in a run with condition axes (``conditions``:
    contestant -> condition label), every pair of agents in the same condition.

    Raises:
        InputError: for a ``baseline`` that names no contestant, or nothing to compare.
    """
    contestants = [(r.label, a) for r in runs for a in r.agents]
    labels = [f"{a}@{r}" for r, a in contestants]
    if baseline is not None:
        if baseline not in labels:
            raise InputError(f"--baseline {short(baseline)} names no contestant; one of {', '.join(labels)}")
        return [(baseline, other) for other in labels if other != baseline]
    pairs: list[tuple[str, str]] = []
    if len(runs) > 1:
        names = [a for _, a in contestants]
        for name in dict.fromkeys(names):
            seen = [f"{name}@{r}" for r, a in contestants if a == name]
            pairs += [(seen[0], other) for other in seen[1:]]
        if not pairs:
            pairs = [
                (labels[i], labels[j])
                for i in range(len(labels))
                for j in range(i + 1, len(labels))
                if contestants[i][0] != contestants[j][0]
            ]
    else:
        where = conditions or {}
        pairs = [
            (labels[i], labels[j])
            for i in range(len(labels))
            for j in range(i + 1, len(labels))
            if where.get(contestants[i][1], "") == where.get(contestants[j][1], "")
        ]
    if not pairs:
        raise InputError("nothing to compare: give two runs, or a run of two agents or more")
    return pairs


def compare_contestants(
    a: str, b: str, episodes_a: Sequence[EpisodeScores], episodes_b: Sequence[EpisodeScores], *, by_task: bool = True
) -> PairComparison:
    """Every metric's paired difference of ``b`` against ``a``, and success per task (``by_task``)."""
    pairs, errored = pair_episodes(episodes_a, episodes_b)
    overall = compare_pairs(pairs)
    tasks: list[TaskDifference] = []
    if by_task:
        success = [m for m in PAIRED_METRICS if m.key == "success_rate"]
        for task in sorted({ea.task_id or ea.episode_id for ea, _ in pairs}):
            mine = [(ea, eb) for ea, eb in pairs if (ea.task_id or ea.episode_id) == task]
            tasks.append(TaskDifference(task=task, difference=compare_pairs(mine, metrics=success)[0]))
    return PairComparison(a=a, b=b, pairs=len(pairs), errored_pairs=errored, overall=overall, by_task=tasks)


def build_comparison(
    paths: Sequence[str | Path], *, axes: Sequence[Axis] = (), baseline: str | None = None
) -> Comparison:
    """Compare the agents of the run directories ``paths`` (see the module docstring).

    Raises:
        InputError: runs that differ on an axis not in ``axes``, a bad ``baseline``, nothing to
            compare. FileNotFoundError: a path that is not a run directory. ValueError: a run
            without episodes.
    """
    dirs = [Path(p) for p in paths]
    if len({d.resolve() for d in dirs}) != len(dirs):
        raise InputError("a run directory is given twice")
    runs: list[ComparedRun] = []
    episodes: dict[str, list[EpisodeScores]] = {}
    where: dict[str, str] = {}
    for label, d in zip(run_labels(dirs), dirs, strict=True):
        eps = load_episodes(d)
        if not eps:
            raise ValueError(f"{d} holds no episode: nothing to compare")
        agents = sorted({contestant(e) for e in eps})
        for agent in agents:
            episodes[f"{agent}@{label}"] = [e for e in eps if contestant(e) == agent]
        runs.append(ComparedRun(label=label, path=str(d), conditions=run_conditions(d, eps), agents=agents))
        where = _conditions(eps)
    check_conditions(runs, axes)
    comp = Comparison(runs=runs, axes=list(axes))
    for a, b in choose_pairs(runs, baseline, where if len(runs) == 1 else None):
        comp.comparisons.append(compare_contestants(a, b, episodes[a], episodes[b]))
    return comp


def within_run(run_dir: Path, episodes: Sequence[EpisodeScores]) -> Comparison | None:
    """Every pair of one run's agents compared (the run report's "Paired comparison" section,
    agents labelled ``agent@run``; in a run with condition axes, the pairs of agents in one
    condition); None for a run of fewer than two agents."""
    label = run_labels([run_dir])[0]
    agents = sorted({contestant(e) for e in episodes})
    if len({e.agent or "external" for e in episodes}) < 2:
        return None
    run = ComparedRun(label=label, path=str(run_dir), conditions=run_conditions(run_dir, episodes), agents=agents)
    comp = Comparison(runs=[run])
    for a, b in choose_pairs([run], conditions=_conditions(episodes)):
        mine = [[e for e in episodes if f"{contestant(e)}@{label}" == c] for c in (a, b)]
        comp.comparisons.append(compare_contestants(a, b, mine[0], mine[1]))
    return comp


# -- rendering -----------------------------------------------------------------------------------
def _value(x: float | None, per_episode: bool) -> str:
    if x is None:
        return "–"
    return f"{x:.2f}" if per_episode else f"{100 * x:.0f}%"


def difference_text(d: PairedDifference) -> str:
    """``"+25 pts [0, 50]"`` for a rate (percentage points), ``"-1.50 [-3.00, 0.00]"`` per episode;
    ``"–"`` when the difference is not defined."""
    if d.difference is None:
        return "–"
    if d.per_episode:
        ci = f" [{d.ci95[0]:+.2f}, {d.ci95[1]:+.2f}]" if d.ci95 else " [n/a]"
        return f"{d.difference:+.2f}{ci}"
    ci = f" [{100 * d.ci95[0]:+.0f}, {100 * d.ci95[1]:+.0f}]" if d.ci95 else " [n/a]"
    return f"{100 * d.difference:+.0f} pts{ci}"


def verdict_text(d: PairedDifference) -> str:
    """The verdict in words: "no detectable difference", "B higher (better)", "not computable
    (no pair defines it)"..."""
    if d.verdict is Verdict.UNKNOWN:
        return "not computable (" + ("no pair defines it" if not d.pairs else "too few pairs define it") + ")"
    if d.verdict is Verdict.NONE:
        return d.verdict.value
    better = (d.verdict is Verdict.HIGHER) != d.lower_is_better
    return f"B {d.verdict.value} ({'better' if better else 'worse'})"


def _p(d: PairedDifference) -> str:
    if d.mcnemar_p is None:
        return ""
    return f"p={d.mcnemar_p:.3g} ({d.a_only} A-only, {d.b_only} B-only)"


OVERALL_HEADER = ["Metric", "Pairs", "A", "B", "B − A [95% CI]", "Verdict"]
"""Columns of :func:`overall_rows` (one table per pair of contestants)."""

TASK_HEADER = ["Task", "Pairs", "A", "B", "B − A [95% CI]", "Verdict", "McNemar"]
"""Columns of :func:`task_rows`."""


def overall_rows(c: PairComparison) -> list[list[str]]:
    """One row per metric of the pair ``c``, cells as :data:`OVERALL_HEADER` names them."""
    return [
        [
            d.label,
            str(d.pairs),
            _value(d.a, d.per_episode),
            _value(d.b, d.per_episode),
            difference_text(d),
            verdict_text(d),
        ]
        for d in c.overall
    ]


def task_rows(c: PairComparison) -> list[list[str]]:
    """One row per task of the pair ``c``: the success difference over the task's trials."""
    rows = []
    for t in c.by_task:
        d = t.difference
        rows.append(
            [t.task, str(d.pairs), _value(d.a, False), _value(d.b, False), difference_text(d), verdict_text(d), _p(d)]
        )
    return rows


def pair_title(c: PairComparison) -> str:
    """``"B = defeatist@runA vs A = careful@runA: 6 (task, trial) pairs"``."""
    text = f"B = {c.b} vs A = {c.a}: {c.pairs} (task, trial) pairs"
    return text + (f", {c.errored_pairs} left out (an episode errored)" if c.errored_pairs else "")


def pair_note(c: PairComparison) -> str:
    """The pair's McNemar line: ``"Success: exact McNemar p=0.125 (4 A-only, 0 B-only successes)"``."""
    success = next((d for d in c.overall if d.metric == "success_rate"), None)
    if success is None or success.mcnemar_p is None:
        return "Success: no pair with both outcomes known."
    return (
        f"Success: exact McNemar p={success.mcnemar_p:.3g} ({success.a_only} A-only, {success.b_only} "
        "B-only successes); success differs only when p < 0.05 and the interval excludes 0."
    )


def run_lines(comp: Comparison) -> list[str]:
    """One line per run: label, path, fault profile, tool exposure, tasks, agents; then the
    axes allowed to differ."""
    lines = [
        f"{r.label}: {r.path} (faults {r.conditions.faults}, tools {r.conditions.tools}, "
        f"{len(r.conditions.tasks)} tasks; agents {', '.join(r.agents)})"
        for r in comp.runs
    ]
    if comp.axes:
        lines.append("Allowed to differ: " + ", ".join(a.value for a in comp.axes))
    return lines


_FIGURES = {"Pairs", "A", "B", "B − A [95% CI]"}


def _columns(header: list[str]) -> list[Column]:
    return [Column(h, justify="right" if h in _FIGURES else "left", wrap=h in ("Verdict", "McNemar")) for h in header]


def print_comparison_table(console: Any, comp: Comparison) -> None:
    """Print the runs, then per pair of contestants the table of every metric and the table of
    success per task, fitted to the console's width."""
    for line in run_lines(comp):
        console.print(line, markup=False, soft_wrap=True)
    for c in comp.comparisons:
        console.print()
        print_table(console, _columns(OVERALL_HEADER), overall_rows(c), title=pair_title(c), notes=[pair_note(c)])
        console.print()
        print_table(console, _columns(TASK_HEADER), task_rows(c), title=f"Success per task, B = {c.b} vs A = {c.a}")
    console.print()
    console.print(METHOD, markup=False)


def comparison_markdown(comp: Comparison, *, level: int = 2) -> str:
    """The comparison as a Markdown section (heading at ``level``): runs, then per pair of
    contestants every metric and success per task, then the method."""
    h = "#" * level
    out = [f"{h} Paired comparison", ""]
    out += [f"- {md_text(line)}" for line in run_lines(comp)]
    out.append("")
    for c in comp.comparisons:
        out += [f"{h}# {md_text(pair_title(c))}", "", md_table(OVERALL_HEADER, overall_rows(c)), ""]
        out += [md_text(pair_note(c)), "", md_table(TASK_HEADER, task_rows(c)), ""]
    out += [md_text(METHOD), ""]
    return "\n".join(out)


def _html_table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{escape(c)}</th>" for c in header)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return (
        f'<div class="scroll"><table class="compare"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'
    )


def comparison_html(comp: Comparison) -> str:
    """The comparison as an HTML fragment (an ``<h2>`` section, ``<h3>`` per pair; every text escaped)."""
    parts = ['<h2 id="paired-comparison">Paired comparison</h2><ul>']
    parts += [f"<li>{escape(line)}</li>" for line in run_lines(comp)]
    parts.append("</ul>")
    for c in comp.comparisons:
        parts += [f"<h3>{escape(pair_title(c))}</h3>", _html_table(OVERALL_HEADER, overall_rows(c))]
        parts += [f'<p class="note">{escape(pair_note(c))}</p>', _html_table(TASK_HEADER, task_rows(c))]
    parts.append(f'<p class="note">{escape(METHOD)}</p>')
    return "".join(parts)


COMPARE_MD_HEADER = "# mcpgym comparison\n"
"""The first line of every ``compare.md`` (how an existing one is known as mcpgym's)."""

COMPARE_HTML_HEADER = '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><!-- mcpgym comparison -->'
"""The start of every ``compare.html``."""


def write_comparison(comp: Comparison, out_dir: str | Path) -> tuple[Path, Path]:
    """Write ``compare.md`` and ``compare.html`` into ``out_dir`` (created if missing); an
    existing file is replaced only when mcpgym wrote it.

    Raises:
        mcpgym.evaluation.run.run_owner.ForeignContentError: a file of that name that mcpgym
            did not write is in the way (nothing is written).
    """
    from mcpgym.evaluation.report.html import CSS
    from mcpgym.evaluation.run.run_owner import check_own_file, replace_own_file

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    md, html = out / "compare.md", out / "compare.html"
    for path, header in ((md, COMPARE_MD_HEADER), (html, COMPARE_HTML_HEADER)):
        check_own_file(path, header)
    md_body = COMPARE_MD_HEADER + "\n" + comparison_markdown(comp)
    html_body = (
        COMPARE_HTML_HEADER + '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>mcpgym comparison</title><style>{CSS}</style></head><body><h1>mcpgym comparison</h1>"
        + comparison_html(comp)
        + "</body></html>\n"
    )
    replace_own_file(md, md_body, COMPARE_MD_HEADER)
    replace_own_file(html, html_body, COMPARE_HTML_HEADER)
    return md, html


__all__ = [
    "Axis",
    "COMPARE_HTML_HEADER",
    "COMPARE_MD_HEADER",
    "ComparedRun",
    "Comparison",
    "METHOD",
    "PairComparison",
    "RunConditions",
    "TaskDifference",
    "build_comparison",
    "check_conditions",
    "choose_pairs",
    "compare_contestants",
    "comparison_html",
    "comparison_markdown",
    "difference_text",
    "load_episodes",
    "overall_rows",
    "pair_note",
    "pair_title",
    "print_comparison_table",
    "run_labels",
    "run_conditions",
    "task_rows",
    "verdict_text",
    "within_run",
    "write_comparison",
]
