"""Run reports: the comparison table (rich, Markdown, HTML) and ``report.md`` / ``report.html``.

:func:`build_report` gathers a run directory (manifest, trajectories with their stored scores,
aggregates as in ``scores.json``); :func:`comparison_rows` turns the aggregates into one row
per agent (success rate with its 95% Wilson interval, pass^k, verification, pre-check,
recovery attempt and success, defeatism, calls); :func:`print_comparison`, :func:`render_markdown`
and :func:`mcpgym.evaluation.report.html.render_html` print them. :func:`write_report` writes both
files. Metric definitions: docs/design.md §7, :mod:`mcpgym.evaluation.scoring.scorer`, :mod:`mcpgym.evaluation.scoring.aggregate`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpgym.evaluation.llm.flags import episode_flags
from mcpgym.evaluation.llm.flags import text_call_warning as _text_call_warning
from mcpgym.evaluation.records.condition import condition_key
from mcpgym.evaluation.records.manifest import Manifest, read_manifest
from mcpgym.evaluation.records.scores import Scoreboard
from mcpgym.evaluation.records.status import EpisodeStatus
from mcpgym.evaluation.records.trajectory import Trajectory
from mcpgym.evaluation.report.compare import Comparison, comparison_markdown, within_run
from mcpgym.evaluation.report.conditions import (
    CONDITIONS_NOTE,
    ConditionFigures,
    condition_figures,
    curve_rows,
    unknown_note,
)
from mcpgym.evaluation.report.fault_kinds import FAULT_KIND_HEADER, FAULT_KIND_NOTE, fault_kind_rows, fault_kind_table
from mcpgym.evaluation.report.markdown_text import md_table, md_text
from mcpgym.evaluation.report.tables import Column, print_table
from mcpgym.evaluation.run.run_owner import OWN_FILE_HEADERS, check_own_file, replace_own_file
from mcpgym.evaluation.scoring.scorer import EpisodeScores
from mcpgym.kernel.wording import counted

BEHAVIOUR_METRICS: tuple[tuple[str, str], ...] = (
    ("verification_rate", "Verification"),
    ("false_success_rate", "False success"),
    ("precheck_rate", "Pre-check"),
    ("recovery_attempt_rate", "Recovery attempt"),
    ("recovery_rate", "Recovery"),
    ("defeatism_rate", "Defeatism"),
)
"""Aggregate key -> label of the behaviour rates the reports chart (defeatism: lower is better)."""

MD_HEADER = OWN_FILE_HEADERS["report.md"]
"""The first line of every ``report.md`` mcpgym writes (how an existing one is known as ours)."""

MAX_NOTABLE = 60
"""Most episodes listed under "Notable episodes"."""


def pct(x: float | None, digits: int = 0) -> str:
    """``0.8333`` -> ``"83%"``; None -> ``"–"`` (no denominator)."""
    return "–" if x is None else f"{100 * x:.{digits}f}%"


def ci_text(rate: float | None, ci: list[float] | None) -> str:
    """``"83% [44–97]"``: a rate with its 95% interval in percent."""
    if rate is None:
        return "–"
    if not ci:
        return pct(rate)
    return f"{pct(rate)} [{100 * ci[0]:.0f}–{100 * ci[1]:.0f}]"


def shown_k(scores: Scoreboard) -> int | None:
    """The k of the comparison table's pass^k column: the largest k any agent's pass^k was
    computed for (None when no agent has one)."""
    return max((int(k) for m in scores.agents.values() for k in m.pass_k), default=None)


def with_listed_agents(scores: Scoreboard, manifest: Manifest | None) -> Scoreboard:
    """``scores`` with an empty row (no episode: every rate ``–``, pass^k ``n/a``) for each
    agent the run's manifest lists that wrote no episode (a run interrupted, or whose
    episodes of that agent could not be run), so that the comparison shows it, and
    :func:`pass_k_warning` names it, instead of leaving it out; agents sorted by name as in
    ``scores.json``. In a run with condition axes an agent with a row in any condition is
    not absent. ``scores`` itself is not changed."""
    from mcpgym.evaluation.records.scores import AgentMetrics

    listed = [a.name for a in manifest.agents] if manifest is not None else []
    by_condition = {row.agent for row in scores.agents.values() if row.agent is not None}  # rows NAME [condition]
    absent = [name for name in listed if name not in scores.agents and name not in by_condition]
    if not absent:
        return scores
    rows = {**scores.agents, **{name: AgentMetrics() for name in absent}}
    return Scoreboard(agents=dict(sorted(rows.items())))


def _fewer_than(k: int) -> str:
    """``"fewer than 2 scored trials"``; ``"no scored trial"`` for k = 1."""
    return "no scored trial" if k == 1 else f"fewer than {counted(k, 'scored trial')}"


def pass_k_cell(pass_k: dict[str, float], k: int | None, full: bool = True) -> str:
    """An agent's pass^k cell for the column's ``k``: ``"0.67"``; ``"–"`` when no agent has
    one (``k`` None). An agent whose pass^k was not computed for that k (a task with fewer
    than k scored trials: :func:`~mcpgym.evaluation.records.statistics.pass_k_table`) gets
    ``"n/a"`` with the reason (``full``), never a smaller k's value under this k's header."""
    if k is None:
        return "–"
    if str(k) in pass_k:
        return f"{pass_k[str(k)]:.2f}"
    return f"n/a (a task has {_fewer_than(k)})" if full else "n/a"


def pass_k_warning(scores: Scoreboard) -> str | None:
    """The loud warning when the pass^k column cannot be computed for some agents (their
    cells say ``n/a``): which agents, why, the largest k each has, and what helps: ``--resume``
    runs trials never run (an agent with no episode, or fewer trials), but it counts errored
    episodes (and episodes whose outcome is unknown) as done and never runs them again, so for
    an agent with such episodes it says that instead. None when every agent has it. Rule:
    docs/design.md §7 (pass^k needs k scored trials of every task)."""
    k = shown_k(scores)
    if k is None:
        return None
    short = {name: max(map(int, m.pass_k), default=0) for name, m in scores.agents.items() if str(k) not in m.pass_k}
    if not short:
        return None
    which = ", ".join(f"{name} (" + (f"pass^{n} only" if n else "no scored trial") + ")" for name, n in short.items())
    advice = []
    unscored = {}
    for name in short:
        m = scores.agents[name]
        parts = [counted(m.errored_episodes, "errored episode")] if m.errored_episodes else []
        unknown = m.episodes - m.scored_episodes - m.errored_episodes
        if unknown:
            parts.append(f"{counted(unknown, 'episode')} of unknown outcome")
        if parts:
            unscored[name] = " and ".join(parts)
    missing = [name for name in short if name not in unscored]
    if unscored:
        advice.append(
            "; ".join(f"{name} has {what}" for name, what in unscored.items())
            + ", which --resume counts as done and does not run again: fix the cause (the stop_reason in "
            "mcpgym cat RUN_DIR) and run the agent again with another --out"
        )
    if missing:
        advice.append(f"For {', '.join(missing)}, mcpgym run --resume with the run's --out runs the missing trials")
    return f"WARNING: pass^{k} cannot be computed for {which}: some task has {_fewer_than(k)}. " + ". ".join(advice)


COLUMNS: tuple[str, ...] = (
    "Agent",
    "Episodes run/scored/errored",
    "Success (95% CI)",
    "pass^k",
    "Verification",
    "False success",
    "Pre-check",
    "Recovery attempt",
    "Recovery",
    "Defeatism",
    "Calls valid/invalid/error",
)
"""Columns of :func:`comparison_rows` (``pass^k`` is renamed to the k shown)."""

TERMINAL_COLUMNS: tuple[Column, ...] = (
    Column("Agent"),
    Column(
        "Episodes run/scored/errored",
        "Eps",
        "episodes run/scored/errored (errored: provider or harness failures, in no success figure)",
        justify="right",
    ),
    Column("Success (95% CI)", "Success", "success rate [95% Wilson interval]", justify="right"),
    Column("pass^k", justify="right"),
    Column("Verification", "Verif", "writes read back afterwards", justify="right"),
    Column(
        "False success", "FalseOK", "episodes claiming the task done while it is not (lower is better)", justify="right"
    ),
    Column("Pre-check", "Pre", "writes whose preconditions were read first", justify="right"),
    Column("Recovery attempt", "Try", "recoverable errors met with an attempt", justify="right"),
    Column("Recovery", "Rec", "recoverable errors recovered", justify="right"),
    Column("Defeatism", "Defeat", "episodes that gave up on a recoverable error (lower is better)", justify="right"),
    Column(
        "Calls valid/invalid/error",
        "Calls",
        "tool calls valid/invalid/error (error: valid calls that returned an error)",
        justify="right",
    ),
)
"""The comparison table's columns in a terminal (:func:`print_comparison`): full headers when
they fit, else the short ones with a legend, else one column per agent, else one block per agent."""


def comparison_rows(
    scores: Scoreboard, *, counts: bool = True, columns: tuple[str, ...] = COLUMNS
) -> tuple[list[str], list[list[str]]]:
    """Header and one row of strings per agent of a :class:`Scoreboard` (``scores.json``).

    Rates are pooled over episodes (:func:`mcpgym.evaluation.scoring.aggregate.metrics`); with ``counts``
    each behaviour rate shows its counts, e.g. ``"80% (8/10)"``; defeatism is over episodes
    that met a recoverable error. ``columns``: header names (:data:`COLUMNS`).
    """
    k = shown_k(scores)
    pk_label = "pass^k" if k is None else f"pass^{k}"
    rows = []
    for name, m in scores.agents.items():
        pk = pass_k_cell(m.pass_k, k, counts)
        rows.append(
            [
                name,
                _episodes_cell(m.episodes, m.scored_episodes, m.errored_episodes),
                ci_text(m.success_rate, m.success_ci95),
                pk,
                _with_counts(m.verification_rate, m.verified_writes, m.writes, counts),
                _with_counts(m.false_success_rate, m.false_success_episodes, _known_claims(m), counts),
                _with_counts(m.precheck_rate, m.prechecked_writes, m.precheck_writes, counts),
                _with_counts(m.recovery_attempt_rate, m.recovery_attempts, m.recoverable_errors, counts),
                _with_counts(m.recovery_rate, m.recoveries, m.recoverable_errors, counts),
                _with_counts(m.defeatism_rate, m.defeatist_episodes, m.episodes_with_recoverable_errors, counts),
                f"{m.valid_calls}/{m.invalid_calls}/{m.error_calls}",
            ]
        )
    header = [pk_label if c == "pass^k" else c for c in columns]
    return header, rows


def _known_claims(m: Any) -> int:
    """The denominator of ``false_success_rate``: episodes whose false success is known, which
    is every episode but the errored ones (docs/design.md §7, "False success")."""
    return int(m.episodes - m.errored_episodes)


def _episodes_cell(run: int, scored: int, errored: int) -> str:
    """``"4/3/1"``: episodes run / scored / errored, the three counts the column's header names,
    in every table (the terminal's too)."""
    return f"{run}/{scored}/{errored}"


def _with_counts(rate: float | None, num: int, den: int, counts: bool = True) -> str:
    if rate is None:
        return "–"
    return f"{pct(rate)} ({num}/{den})" if counts else pct(rate)


def print_comparison(console: Any, scores: Scoreboard, title: str | None = None) -> str:
    """Print the comparison table (rates without counts) to a rich console, fitted to its width
    (:func:`mcpgym.evaluation.report.tables.print_table`): one row per agent, or, when that does
    not fit even with the short headers, one column per agent (``transposed``; three agents fit
    80 columns so); returns the layout used."""
    header, rows = comparison_rows(scores, counts=False)
    columns = [
        Column(h, c.short if c.short != "pass^k" else h, c.legend, c.justify, c.wrap) if c.header == "pass^k" else c
        for h, c in zip(header, TERMINAL_COLUMNS, strict=False)
    ]
    k = header[3].removeprefix("pass^")
    note = (
        f"pass^{k}: chance that "
        + ("one trial of a task succeeds" if k == "1" else f"all {k} trials of a task succeed")
        + " (tau-bench's pass^k, estimated from the "
        "trials run). Definitions: docs/design.md §7."
    )
    return print_table(console, columns, rows, title=title, notes=[note], transpose=True)


# -- report data ------------------------------------------------------------------------------
@dataclass
class Report:
    """Everything the Markdown and HTML reports show.

    Attributes:
        run_dir: the run directory. manifest: ``manifest.json`` (None when missing).
        scores: aggregates (:class:`Scoreboard`, as in ``scores.json``) of ``episodes``.
        episodes: per-episode scores, sorted by agent, task, trial.
        statuses: agent -> {status: count}.
        task_matrix: task id -> agent -> [successes, scored episodes].
        task_levels: task id -> level.
        trajectories: (trajectory, its scores) per episode, in the order of ``episodes``
            (what the trajectory viewer of report.html shows).
        rescored: episodes whose recomputed scores differ from those stored in their line.
        damaged: what was left out of the trajectories file, one line per warning (frames
            damaged in place, named by number: :class:`~mcpgym.evaluation.records.compressed.DamagedFramesWarning`).
        comparison: every pair of the run's agents compared over the same (task, trial)
            episodes (:func:`mcpgym.evaluation.report.compare.within_run`); None for one agent.
        conditions: the figures against the run's condition axes
            (:func:`mcpgym.evaluation.report.conditions.condition_figures`); None for a run
            without axes.
    """

    run_dir: Path
    manifest: Manifest | None
    scores: Scoreboard
    episodes: list[EpisodeScores]
    statuses: dict[str, dict[str, int]] = field(default_factory=dict)
    task_matrix: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    task_levels: dict[str, int | None] = field(default_factory=dict)
    flags: dict[str, dict[str, int]] = field(default_factory=dict)
    trajectories: list[tuple[Trajectory, EpisodeScores]] = field(default_factory=list)
    rescored: int = 0
    damaged: list[str] = field(default_factory=list)
    comparison: Comparison | None = None
    conditions: ConditionFigures | None = None

    @property
    def agents(self) -> list[str]:
        """Agent names, sorted (the order of ``scores.agents``)."""
        return list(self.scores.agents)

    @property
    def levels(self) -> list[str]:
        """Every level any agent has episodes of, sorted."""
        found = {lv for m in self.scores.agents.values() for lv in m.by_level or {}}
        return sorted(found, key=int)

    def notable(self) -> list[EpisodeScores]:
        """Episodes worth reading first: defeatist, failed, errored or cut off, with blind
        retries or impatience (at most :data:`MAX_NOTABLE`, in episode order)."""
        out = [
            e
            for e in self.episodes
            if e.defeatism
            or e.success is False
            or e.status != EpisodeStatus.COMPLETED
            or e.blind_retries
            or e.impatience
        ]
        return out[:MAX_NOTABLE]


def build_report(run_dir: str | Path, *, rescore: bool = True) -> Report:
    """Read a run directory into a :class:`Report`; a torn last line is ignored.

    Args:
        run_dir: the run directory.
        rescore: score every trajectory again with the built-in catalog and the run's recovery
            window, as ``mcpgym score`` does, so that each figure follows from the steps and
            agrees with ``score`` (the scores stored in a line may come from an older scorer or
            an edited file; :attr:`Report.rescored` counts those that differ). False: use the
            stored scores (``mcpgym run``, which has just computed them); a line without
            scores is scored all the same.

    Raises:
        FileNotFoundError: when ``run_dir`` is missing, not a directory, or holds no
            ``trajectories.jsonl.zst`` (nor an older run's ``trajectories.jsonl``); the message
            is :func:`~mcpgym.evaluation.records.compressed.run_dir_problem`'s.
        ValueError: when it holds no episode.
        evaluation.trajectory.TrajectoryFileError: for a malformed line.
        ValueError: for a malformed ``manifest.json`` (the message names it).
    """
    from mcpgym.evaluation.records.compressed import run_dir_problem
    from mcpgym.evaluation.run.run_dir import compute_scores, trajectories_file
    from mcpgym.evaluation.scoring.aggregate import as_scores
    from mcpgym.evaluation.scoring.scorer import DEFAULT_K, score_episode
    from mcpgym.evaluation.scoring.tool_catalog import Catalog

    run = Path(run_dir)
    problem = run_dir_problem(run)
    if problem is not None:
        raise FileNotFoundError(problem)
    trajs, damaged = _load_noting_damage(run)
    if not trajs:  # an empty report would read as a clean one ("every episode succeeded")
        raise ValueError(f"{trajectories_file(run)} holds no episode: nothing to report")
    manifest = read_manifest(run)
    # a trajectory written without scores (by hand, or by another tool) is scored here with the
    # built-in catalog and the run's recovery window, as `mcpgym score` would
    catalog = Catalog.from_apps() if rescore or any(t.scores is None for t in trajs) else None
    k = manifest.recovery_window if manifest is not None and manifest.recovery_window else DEFAULT_K
    if rescore:
        assert catalog is not None
        scored = [(t, score_episode(t, catalog, k=k)) for t in trajs]
        differ = sum(
            1
            for t, sc in scored
            if t.scores is not None and sc.model_dump(mode="json") != t.scores.model_dump(mode="json")
        )
    else:
        scored, differ = [(t, as_scores(t, catalog, k)) for t in trajs], 0
    pairs = sorted(scored, key=lambda p: (p[1].agent, p[1].task_id or "", p[1].trial, p[1].episode_id))
    episodes = [sc for _, sc in pairs]
    report = Report(
        run_dir=run,
        manifest=manifest,
        scores=with_listed_agents(compute_scores(episodes), manifest),
        episodes=episodes,
        trajectories=pairs,
        rescored=differ,
        damaged=damaged,
    )
    for e in episodes:
        name = condition_key(e.agent or "external", e.condition)  # a row per agent and condition, as in scores.json
        report.statuses.setdefault(name, {}).setdefault(e.status, 0)
        report.statuses[name][e.status] += 1
        tid = e.task_id or f"episode:{e.episode_id}"
        report.task_levels[tid] = e.level
        cell = report.task_matrix.setdefault(tid, {}).setdefault(name, [0, 0, 0])
        if e.status == EpisodeStatus.ERRORED:  # the provider or the harness failed: no figure of the agent's
            cell[2] += 1
        elif e.success is not None:
            cell[0] += int(e.success)
            cell[1] += 1
    report.comparison = within_run(run, episodes)
    if manifest is not None and manifest.conditions is not None:
        report.conditions = condition_figures(manifest.conditions, report.scores, pairs)
    for t, sc in pairs:  # flags from this version's scores, not those stored in an older line
        name = condition_key(t.agent or "external", t.condition)
        for flag in episode_flags(t, scores=sc):
            report.flags.setdefault(name, {}).setdefault(flag.value, 0)
            report.flags[name][flag.value] += 1
    return report


def _load_noting_damage(run: Path) -> tuple[list[Trajectory], list[str]]:
    """The run's trajectories (:func:`~mcpgym.evaluation.run.run_dir.load_run`) and the
    messages of the :class:`~mcpgym.evaluation.records.compressed.DamagedFramesWarning` raised
    on the way, which are raised again (stderr) and kept for the report."""
    from mcpgym.evaluation.records.compressed import DamagedFramesWarning
    from mcpgym.evaluation.run.run_dir import load_run

    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", DamagedFramesWarning)
        trajs = load_run(run)
    damaged = []
    for w in said:
        if issubclass(w.category, DamagedFramesWarning):
            damaged.append(str(w.message))
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return trajs, damaged


def episode_note(e: EpisodeScores) -> str:
    """One line about why an episode is notable. An ``errored`` episode gets only that: the
    provider or the harness failed, so nothing the agent did or said is judged."""
    if e.status == EpisodeStatus.ERRORED:
        return "status errored: a provider or harness failure, left out of every success figure"
    parts = []
    if e.status != EpisodeStatus.COMPLETED:
        parts.append(f"status {e.status}")
    if e.success is False:
        if e.total and (e.recall or 0) < e.total:
            parts.append(f"made {e.recall} of {e.total} gold changes")
        if e.misbehave:
            parts.append(counted(e.misbehave, "unwanted change"))
        for c in e.extra_checks:
            if not c.passed:
                what = c.check.description or f"{c.check.kind} = {c.check.value!r}"
                parts.append(f"final message failed the check: {what}")
    if e.defeatism and e.defeatism_reason:
        parts.append(f"defeatism: {e.defeatism_reason}")
    if e.blind_retries:
        parts.append(
            f"{e.blind_retries} blind retr{'y' if e.blind_retries == 1 else 'ies'}"
            + (f" ({e.duplicate_side_effects} duplicated)" if e.duplicate_side_effects else "")
        )
    if e.impatience:
        parts.append(f"impatient in {counted(e.impatience, 'rate-limit window')}")
    if e.verification_skips:
        parts.append(f"unverified writes at steps {', '.join(map(str, e.verification_skips))}")
    return "; ".join(parts)


# -- Markdown ----------------------------------------------------------------------------------
def run_facts(report: Report) -> list[tuple[str, str]]:
    """(label, value) pairs describing the run, from its manifest."""
    m = report.manifest or Manifest()
    prof = m.fault_profile or {}
    rates = prof.get("rates") or {}
    rate_text = ", ".join(f"{k} {v:g}" for k, v in rates.items() if v) or "no faults"
    profile = (
        f"{prof.get('name', '–')} ({rate_text}; max {prof.get('max_consecutive', '–')} in a row)"
        if prof
        else "unknown (" + ("no manifest.json" if report.manifest is None else "the manifest does not say") + ")"
    )
    versions = m.versions
    described = [
        a.name + (f" ({', '.join(f'{k}={v}' for k, v in a.describe.items())})" if a.describe else "") for a in m.agents
    ]
    facts = [
        ("Run directory", str(report.run_dir)),
        ("Suite", str(m.suite or "–")),
        ("Tasks", str(len(m.task_ids or report.task_matrix))),
        ("Trials", str(m.trials if m.trials is not None else "–")),
        ("Agents", "; ".join(described) or ", ".join(report.agents)),
        ("Fault profile", profile),
        *(
            [
                (
                    "Conditions",
                    f"faults {', '.join(m.conditions.faults)} x tools {', '.join(m.conditions.tools)}: "
                    f"{counted(len(m.conditions.faults) * len(m.conditions.tools), 'condition')}, each episode in one "
                    "(the fault profile above is the first; the charts are in the Conditions section)",
                )
            ]
            if m.conditions is not None
            else []
        ),
        ("Episodes", _scored_fact(_episodes_fact(m, len(report.episodes)), report)),
        (
            "Versions",
            ", ".join(f"{k} {v}" for k, v in versions.items() if k in ("mcpgym", "mcp", "python") and v) or "–",
        ),
        ("Started / finished", f"{m.started_at or '–'} / {m.finished_at or '–'}"),
    ]
    for said in report.damaged:
        facts.append(("Damaged frames", said))
    if report.rescored:
        facts.append(
            (
                "Scores",
                f"computed again from the trajectories: {counted(report.rescored, 'episode')} differ"
                f"{'s' if report.rescored == 1 else ''} from the scores "
                "stored in the trajectory lines (written by another scorer version, or edited)",
            )
        )
    return facts


def _scored_fact(fact: str, report: Report) -> str:
    """``fact`` (the episodes run) with how many of them count in the figures:
    ``"4 run, 3 scored, 1 errored (...)"``."""
    errored = sum(1 for e in report.episodes if e.status == EpisodeStatus.ERRORED)
    scored = sum(1 for e in report.episodes if e.status != EpisodeStatus.ERRORED and e.success is not None)
    text = f"{fact} run, " if fact.isdigit() else f"{fact}; "
    text += f"{scored} scored, {errored} errored"
    return text + (" (provider or harness failures: in no success figure)" if errored else "")


def text_call_warning(report: Report) -> str | None:
    """The loud warning when some episodes ended with a tool call written as text, or None."""
    n = sum(f.get("tool_calls_as_text", 0) for f in report.flags.values())
    return f"WARNING: {_text_call_warning(n)}" if n else None


def errored_text(report: Report) -> list[str]:
    """The errored episodes' headline (``WARNING:``, or ``ERROR:`` when most episodes errored)
    and their first causes (:func:`mcpgym.evaluation.report.errored.errored_lines`); empty when
    none errored."""
    from mcpgym.evaluation.report.errored import errored_causes, errored_lines, mostly_errored

    causes, errored, total = errored_causes(t for t, _ in report.trajectories)
    lines = errored_lines(causes, errored, total)
    if lines:
        lines[0] = ("ERROR: " if mostly_errored(errored, total) else "WARNING: ") + lines[0]
    return lines


def _episodes_fact(manifest: Manifest, n: int) -> str:
    """``n``, and, when the manifest planned more (tasks x trials x agents), how many and why
    the rest is missing: a run killed before its end (no ``finished_at``) or episodes the
    harness could not run."""
    fields = manifest.model_fields_set
    if not {"task_ids", "trials", "agents"} <= fields or manifest.trials is None:
        return str(n)
    planned = len(manifest.task_ids) * manifest.trials * len(manifest.agents)
    if n >= planned:
        return str(n)
    why = (
        "the run did not finish: mcpgym run --resume with the same --out continues it"
        if not manifest.finished_at
        else "the others could not be run: mcpgym run --resume with the same --out retries them"
    )
    return f"{n} of {planned} planned ({why})"


def level_rows(report: Report) -> tuple[list[str], list[list[str]]]:
    """Success per level: one row per agent, one column per level."""
    header = ["Agent"] + [f"Level {lv}" for lv in report.levels]
    rows = []
    for name, m in report.scores.agents.items():
        row = [name]
        for lv in report.levels:
            b = (m.by_level or {}).get(lv)
            row.append(f"{ci_text(b.success_rate, b.success_ci95)} (n={b.scored_episodes})" if b else "–")
        rows.append(row)
    return header, rows


def app_rows(report: Report) -> tuple[list[str], list[list[str]]]:
    """Success rate per app: one row per app, one column per agent."""
    apps = sorted({a for m in report.scores.agents.values() for a in m.by_app or {}})
    header = ["App"] + report.agents
    rows = []
    for app in apps:
        row = [app]
        for name in report.agents:
            b = (report.scores.agents[name].by_app or {}).get(app)
            row.append(f"{pct(b.success_rate)} (n={b.scored_episodes})" if b else "–")
        rows.append(row)
    return header, rows


def task_rows(report: Report) -> tuple[list[str], list[list[str]]]:
    """Per task: level and, per agent, successes / scored episodes."""
    header = ["Task", "Level"] + report.agents
    rows = []
    for tid in sorted(report.task_matrix):
        cells = report.task_matrix[tid]
        lv = report.task_levels.get(tid)
        rows.append(
            [tid, "–" if lv is None else str(lv)] + [_task_cell(cells[a]) if a in cells else "–" for a in report.agents]
        )
    return header, rows


def _task_cell(cell: list[int]) -> str:
    """``"2/3"`` (successes / scored episodes), with ``" (+1 errored)"`` when some errored."""
    text = f"{cell[0]}/{cell[1]}"
    return text + f" (+{cell[2]} errored)" if len(cell) > 2 and cell[2] else text


def extra_rows(report: Report) -> tuple[list[str], list[list[str]]]:
    """Per agent: blind retries, duplicates, impatience, declared impossible, statuses, tokens."""
    header = [
        "Agent",
        "Blind retries (dup.)",
        "Impatience",
        "Declared impossible",
        "Recall",
        "Misbehaved fields",
        "Statuses",
        "Flags",
        "Tokens in/out",
    ]
    rows = []
    for name, m in report.scores.agents.items():
        tokens = m.tokens
        st = report.statuses.get(name, {})
        rows.append(
            [
                name,
                f"{m.blind_retries} ({m.duplicate_side_effects})",
                str(m.impatience),
                str(m.declared_impossible),
                _with_counts(m.recall_rate, m.recall, m.total),
                str(m.misbehave),
                ", ".join(f"{k} {v}" for k, v in sorted(st.items())),
                ", ".join(f"{k} {v}" for k, v in sorted(report.flags.get(name, {}).items())) or "–",
                f"{tokens.input}/{tokens.output}" if tokens else "–",
            ]
        )
    return header, rows


AGENTS_LEGEND = (
    "Success: all gold changes made and nothing else changed (95% Wilson interval). pass^k: chance that "
    "k trials of a task all succeed (tau-bench). Verification: writes read back afterwards. Pre-check: "
    "writes whose preconditions were read first. Recovery: recoverable errors followed by an attempt "
    "within K calls / later recovered. Defeatism: episodes that gave up on a recoverable error "
    "(lower is better), over episodes that met one. Calls: valid (well formed, reached the server; "
    "the errored ones included) / invalid (malformed arguments, unknown tools) / error (valid calls "
    "that returned an error). Definitions: docs/design.md §7."
)
"""What the comparison table's columns mean (report.md and report.html)."""

DETAILS_LEGEND = (
    "Blind retries: timed-out writes repeated with no read in between (dup.: the duplicate side "
    "effects they caused). Impatience: rate-limit windows in which the same call was made more than "
    "twice. Declared impossible: episodes whose final message says the task cannot be done (a refusal "
    "pattern). Recall: gold changes made, of all gold changes. Misbehaved fields: fields the agent "
    "changed that gold left alone. Flags: tool_calls_as_text (the final message is a tool call the "
    "model's server did not parse), empty_final_message, truncated (the final reply was cut at the "
    "output-token limit), non_language_final_message (braces, null or bare JSON, no words), "
    "unfounded_refusal (an infeasible task declared impossible without any successful read). "
    "Definitions: docs/design.md §7."
)
"""What the behaviour-details table's columns mean (report.md and report.html)."""


TASKS_NOTE = "Successes / scored episodes per agent (errored episodes are counted apart, in no figure)."


def render_markdown(report: Report) -> str:
    """``report.md``: run facts, the comparison table, success per level and per app,
    behaviour details, the per-task matrix, faults by kind, notable episodes and the paired comparison of
    the agents (:mod:`mcpgym.evaluation.report.compare`)."""
    out = [MD_HEADER.rstrip("\n"), ""]
    out += [f"- **{k}**: {md_text(v)}" for k, v in run_facts(report)]
    warning = text_call_warning(report)
    if warning:
        out += ["", f"**{md_text(warning)}**"]
    errored = errored_text(report)
    if errored:
        out += ["", f"**{md_text(errored[0])}**", ""]
        out += [f"- {md_text(line)}" for line in errored[1:]]
    out += [
        "",
        "## Agents",
        "",
        md_table(*comparison_rows(report.scores)),
        "",
    ]
    pk_warning = pass_k_warning(report.scores)
    if pk_warning:
        out += [f"**{md_text(pk_warning)}**", ""]
    out += [
        AGENTS_LEGEND,
        "",
    ]
    out += ["## Success per level", "", md_table(*level_rows(report)), ""]
    out += ["## Success per app", "", md_table(*app_rows(report)), ""]
    out += ["## Behaviour details", "", md_table(*extra_rows(report)), "", DETAILS_LEGEND, ""]
    out += ["## Tasks", "", TASKS_NOTE, "", md_table(*task_rows(report)), ""]
    kinds = fault_kind_rows(report.trajectories)
    out += ["## Faults by kind", ""]
    out += (
        [md_table(FAULT_KIND_HEADER, fault_kind_table(kinds)), "", FAULT_KIND_NOTE, ""]
        if kinds
        else ["No fault was injected.", ""]
    )
    notable = report.notable()
    out += ["## Notable episodes", ""]
    if notable:
        out += [
            md_table(
                ["Agent", "Task", "Trial", "Note"],
                [[e.agent, e.task_id or e.episode_id, str(e.trial), episode_note(e)] for e in notable],
            ),
            "",
        ]
    else:
        out += ["None: every episode succeeded without defeatism, blind retries or impatience.", ""]
    if report.conditions is not None:
        out += conditions_markdown(report.conditions)
    if report.comparison is not None:
        out += [comparison_markdown(report.comparison)]
    out += ["The charts are in report.html.", ""]
    return "\n".join(out)


def print_grids(console: Any, report: Report) -> None:
    """Print the task x agent success grid and the faults-by-kind table of ``report`` to a rich
    console, fitted to its width (what ``mcpgym report`` shows in the terminal)."""
    header, rows = task_rows(report)
    columns = [Column(h, justify="left" if i == 0 else "right") for i, h in enumerate(header)]
    print_table(console, columns, rows, title="Tasks: successes / scored episodes per agent", notes=[TASKS_NOTE])
    console.print()
    kinds = fault_kind_rows(report.trajectories)
    if not kinds:
        console.print("Faults by kind: no fault was injected.", markup=False)
        return
    columns = [Column(h, justify="left" if i < 2 else "right", wrap=i >= 2) for i, h in enumerate(FAULT_KIND_HEADER)]
    print_table(console, columns, fault_kind_table(kinds), title="Faults by kind", notes=[FAULT_KIND_NOTE])
    if report.conditions is not None:
        console.print()
        print_conditions(console, report.conditions)


def conditions_markdown(figs: ConditionFigures) -> list[str]:
    """The "Conditions" section of ``report.md``: each score against each axis, as tables."""
    out = ["## Conditions", "", CONDITIONS_NOTE, ""]
    note = unknown_note(figs)
    if note:
        out += [f"**{md_text(note)}**", ""]
    for axis in ("faults", "tools"):
        for title, header, rows in curve_rows(figs, axis):
            out += [f"### {title}", "", md_table(header, rows), ""]
    return out


def print_conditions(console: Any, figs: ConditionFigures) -> None:
    """Print each score against each condition axis (the tables of the report's curves)."""
    note = unknown_note(figs)
    for axis in ("faults", "tools"):
        for title, header, rows in curve_rows(figs, axis):
            columns = [Column(h, justify="left" if i < 2 else "right") for i, h in enumerate(header)]
            print_table(console, columns, rows, title=title)
            console.print()
    console.print(CONDITIONS_NOTE + (f" {note}" if note else ""), markup=False)


def write_report(run_dir: str | Path, *, rescore: bool = True, report: Report | None = None) -> tuple[Path, Path]:
    """Write ``report.md`` and ``report.html`` into ``run_dir``; return their paths
    (``rescore``: see :func:`build_report`; ``report``: the run's report when already built).

    An existing ``report.md`` / ``report.html`` is replaced only when mcpgym wrote it (it starts
    with :data:`MD_HEADER` / :data:`HTML_HEADER`; never through a symlink), see
    :func:`mcpgym.evaluation.run.run_owner.replace_own_file`.

    Raises:
        FileNotFoundError: when ``run_dir`` is not a run directory (see :func:`build_report`).
        mcpgym.evaluation.run.run_owner.ForeignContentError: a report file mcpgym did not write is
            in the way (nothing is written).
    """
    from mcpgym.evaluation.report.html import HTML_HEADER, render_html

    report = report or build_report(run_dir, rescore=rescore)
    md, html = report.run_dir / "report.md", report.run_dir / "report.html"
    md_body, html_body = render_markdown(report), render_html(report)
    # neither file is written unless both may be: a report.md or report.html that mcpgym
    # did not write is refused before anything changes
    for path, header in ((md, MD_HEADER), (html, HTML_HEADER)):
        check_own_file(path, header)
    # a lone surrogate (a "\\ud800" JSON escape in a hand-made or foreign line) has no UTF-8
    # form: it is written as that escape rather than failing the whole report
    replace_own_file(md, md_body, MD_HEADER)
    replace_own_file(html, html_body, HTML_HEADER)
    return md, html


__all__ = [
    "AGENTS_LEGEND",
    "BEHAVIOUR_METRICS",
    "DETAILS_LEGEND",
    "Report",
    "build_report",
    "comparison_rows",
    "pass_k_cell",
    "pass_k_warning",
    "shown_k",
    "episode_note",
    "errored_text",
    "render_markdown",
    "with_listed_agents",
    "print_comparison",
    "print_grids",
    "text_call_warning",
    "write_report",
]
