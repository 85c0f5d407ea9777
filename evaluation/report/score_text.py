"""The plain-text tables of ``mcpgym score``: a :class:`~mcpgym.evaluation.formats.score.ScoreReport`
as episodes (one table per file), agents, tools, notes and problems, fitted to the terminal width.
"""

from __future__ import annotations

import io
from typing import Any

from mcpgym.evaluation.formats.score import ScoreReport
from mcpgym.evaluation.report.tables import Column, print_table, wrap_words
from mcpgym.kernel.wording import counted


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def _yn(x: bool | None) -> str:
    return "-" if x is None else ("yes" if x else "no")


EPISODE_COLUMNS: tuple[Column, ...] = (
    Column("Task"),
    Column("Line", "Ln", "line in the file", justify="right"),
    Column("Trial", "Tr", "trial", justify="right"),
    Column("Agent"),
    Column("Calls", justify="right"),
    Column("Writes", "Wr", "writes", justify="right"),
    Column("Verified", "Ver", "writes read back", justify="right"),
    Column("Unverified at step", "Unver", "steps of writes not read back", wrap=True),
    Column("Pre-check skips", "NoPre", "writes without a fresh read of their preconditions (step family)", wrap=True),
    Column("Recoverable errors", "Err", "recoverable errors (inf.: fault inferred)", justify="right", wrap=True),
    Column("Attempted", "Try", "recovery attempts", justify="right"),
    Column("Recovered", "Rec", "recoveries", justify="right"),
    Column("Defeatist", "Def", "gave up on a recoverable error"),
    Column("False success", "FalseOK", "claims the task done while it is not"),
    Column("Success", "OK", "success (outcome; - when states are unknown)"),
)
"""Columns of the per-file episode table of :func:`render_text`."""

AGENT_COLUMNS: tuple[Column, ...] = (
    Column("Agent"),
    Column("Episodes", "Eps", "episodes", justify="right"),
    Column("Success (95% CI)", "OK", "success rate [95% Wilson interval]", justify="right"),
    Column("pass^k", justify="right"),
    Column("Verification", "Verif", "writes read back", justify="right"),
    Column("False success", "FalseOK", "episodes claiming the task done while it is not", justify="right"),
    Column("Pre-check", "Pre", "writes with their preconditions read first", justify="right"),
    Column("Recovery attempts", "Tried", "recoverable errors met with an attempt", justify="right"),
    Column("Recoveries", "Recov", "recoverable errors recovered", justify="right"),
    Column("Defeatism", "Defeat", "gave up on a recoverable error", justify="right"),
    Column("Blind retries", "Blind", "timed-out writes repeated without a read", justify="right"),
    Column("Invalid calls", "Inval", "calls rejected as malformed", justify="right"),
)
"""Columns of the per-agent table of :func:`render_text`."""

TOOL_COLUMNS: tuple[Column, ...] = (
    Column("Tool"),
    Column("Source"),
    Column("Kind"),
    Column("Resources", wrap=True),
    Column("Calls", justify="right"),
)
"""Columns of the tool table of :func:`render_text`."""


def render_text(report: ScoreReport, *, width: int | None = None) -> str:
    """The report as plain-text tables: episodes (one table per file, each episode named by
    its task id, line and trial, or by its label in the file when it has no task id), agents, tools, notes on inferred faults and unknown
    outcomes, then the problems. Every table fits ``width``
    (:func:`mcpgym.evaluation.report.tables.print_table`).

    Args:
        report: from :func:`score_files`.
        width: line width in characters (default: the terminal's, ``COLUMNS`` when set).

    Returns:
        The text, without colour codes.
    """
    import shutil

    from rich.console import Console

    width = width or shutil.get_terminal_size((80, 24)).columns
    buf = io.StringIO()
    console = Console(file=buf, width=width, color_system=None, force_terminal=False, highlight=False)

    def para(text: str, indent: str = "", subsequent: str | None = None) -> None:
        for line in wrap_words(text, width, indent, subsequent):
            console.print(line, markup=False, soft_wrap=True)

    if not report.episodes:  # nothing scored: the problems are the whole story
        para(f"nothing could be scored; {counted(len(report.problems), 'problem')}:")
        for p in report.problems:
            where = f"{p.file}" + (f":{p.line}" if getattr(p, "line", None) else "")
            para(f"{where}: {p.severity}: {p.message}", "  ", "    ")
        _print_scorability(console, report)
        return buf.getvalue()

    for f in report.files:
        rows = [ep for ep in report.episodes if ep.file == f.file]
        title = f"{f.file} ({f.format or 'format unknown'}): {counted(len(rows), 'episode')}"
        if f.problems:
            title += f", {counted(f.problems, 'problem')}"
        if not rows:
            para(title)
            continue
        cells = []
        for ep in rows:
            s = ep.scores
            cells.append(
                [
                    s.task_id or ep.episode,
                    str(ep.line or "-"),
                    str(s.trial),
                    ep.agent,
                    str(s.tool_calls),
                    str(s.writes),
                    str(s.verified_writes),
                    ", ".join(map(str, s.verification_skips)) or "-",
                    ", ".join(f"{p.step} {p.family}" for p in s.precheck_skips) or "-",
                    str(s.recoverable_errors) + (f" ({ep.inferred_faults} inf.)" if ep.inferred_faults else ""),
                    str(s.recovery_attempts),
                    str(s.recoveries),
                    _yn(s.defeatism),
                    _yn(s.false_success),
                    _yn(s.success),
                ]
            )
        print_table(console, EPISODE_COLUMNS, cells, title=title, width=width)
        console.print()

    from mcpgym.evaluation.records.scores import Scoreboard
    from mcpgym.evaluation.report.run_report import ci_text, pass_k_cell, shown_k

    k = shown_k(Scoreboard(agents=dict(report.agents)))
    agent_rows = [
        [
            name,
            str(m.episodes),
            "-" if m.success_rate is None else ci_text(m.success_rate, m.success_ci95),
            pass_k_cell(m.pass_k, k, full=False).replace("–", "-"),
            _pct(m.verification_rate),
            _pct(m.false_success_rate),
            _pct(m.precheck_rate),
            _pct(m.recovery_attempt_rate),
            _pct(m.recovery_rate),
            _pct(m.defeatism_rate),
            str(m.blind_retries),
            str(m.invalid_calls),
        ]
        for name, m in report.agents.items()
    ]
    pk = "pass^k" if k is None else f"pass^{k}"
    columns = [Column(pk, c.short, c.legend, c.justify, c.wrap) if c.header == "pass^k" else c for c in AGENT_COLUMNS]
    print_table(console, columns, agent_rows, title="agents", width=width, transpose=True)
    console.print()
    print_table(
        console,
        TOOL_COLUMNS,
        [[t.tool, t.source, t.kind, ", ".join(t.resources), str(t.calls)] for t in report.tools],
        title="tools (source: catalog = mcpgym's, file = --catalog, heuristic = guessed from the name)",
        width=width,
    )
    console.print()
    if report.faults_inferred:
        para(
            f"Faults were inferred from error results (no fault ledger): {report.inferred_faults} "
            'recoverable error(s) counted as injected faults ("inf.").'
        )
    if not any(ep.scores.success is not None for ep in report.episodes):
        para("Outcome (success) is unknown: the files carry no world states.")
    if report.problems:
        para(f"{counted(len(report.problems), 'problem')}:")
        for p in report.problems:
            para(str(p), "  ", "    ")
    _print_scorability(console, report)
    return "\n".join(line.rstrip() for line in buf.getvalue().splitlines()) + "\n"


def _print_scorability(console: Any, report: ScoreReport) -> None:
    for text in [report.scorability.line()] + [f"WARNING: {w}" for w in report.scorability.warnings]:
        for line in wrap_words(text, console.width, "", "  "):
            console.print(line, markup=False, soft_wrap=True)


__all__ = ["AGENT_COLUMNS", "EPISODE_COLUMNS", "TOOL_COLUMNS", "render_text"]
