"""The front door: score trajectory files recorded anywhere (``mcpgym score FILE...``).

:func:`score_files` reads each file in its format (or sniffs it), converts every episode to a
:class:`~mcpgym.evaluation.trajectory.Trajectory`, scores it with
:func:`mcpgym.evaluation.scorer.score_episode` and aggregates with
:func:`mcpgym.evaluation.aggregate.aggregate` (docs/design.md §7). :func:`render_text` prints the
result as tables.

Tool classification: a tool is looked up in mcpgym's own catalog (the registered apps,
source ``catalog``), else in the ``--catalog`` file (source ``file``), else classified by the
heuristic of :mod:`mcpgym.evaluation.catalog` (source ``heuristic``; a description found in the
file, e.g. an MCP ``tools/list`` result, is used). Every tool is classified before any
episode is scored, so the heuristic's remedy rule (any known auth tool cures
``permission_denied``) gives the same answer whatever the order of files and episodes.

Faults: a trajectory with a fault ledger (mcpgym format) uses it; any other has its injected
faults inferred from error results (see :mod:`mcpgym.evaluation.formats.results`), which the report
says per episode (``faults``: ``ledger`` | ``inferred``) and overall (``faults_inferred``).
Outcome scores (``success``, ``recall``, ``total``, ``misbehave``) are null unless a
trajectory carries its initial, final and gold states.
"""

from __future__ import annotations

import io
import json
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path
from typing import IO, Any, Literal

from pydantic import BaseModel, Field

from mcpgym.evaluation.aggregate import aggregate
from mcpgym.evaluation.catalog import Catalog, CatalogEntry, Source
from mcpgym.evaluation.catalogs import BUILTIN_CATALOGS, builtin_catalog_path
from mcpgym.evaluation.formats import anthropic, atif, complexmcp, inspect_log, mcp_log, mcpgym, openai
from mcpgym.evaluation.formats.common import LoadResult, Problem
from mcpgym.evaluation.formats.detect import detect_format
from mcpgym.evaluation.formats.scorability import Scorability, scorability
from mcpgym.evaluation.scorer import DEFAULT_K, EpisodeScores, score_episode
from mcpgym.evaluation.scoring.metrics import AgentMetrics
from mcpgym.evaluation.tables import Column, print_table, wrap_words

FORMATS: tuple[str, ...] = ("auto", "mcpgym", "openai", "anthropic", "complexmcp", "mcp-log", "atif", "inspect")
"""Values of ``--format``."""

DEFAULT_CATALOGS: dict[str, str] = {"complexmcp": "complexmcp"}
"""Format -> the built-in catalog used when a file is read in that format and no
``--catalog`` is given (ComplexMCP's tool names are bare: only its own catalog knows them)."""

LOADERS: dict[str, Callable[[str | Path], LoadResult]] = {
    "mcpgym": mcpgym.load,
    "openai": openai.load,
    "anthropic": anthropic.load,
    "complexmcp": complexmcp.load,
    "mcp-log": mcp_log.load,
    "atif": atif.load,
    "inspect": inspect_log.load,
}
"""Format name -> reader (each returns a :class:`~mcpgym.evaluation.formats.common.LoadResult`)."""


class FileReport(BaseModel):
    """One input file: its format (and how it was chosen), episodes scored, problems."""

    file: str
    format: str | None
    detected: bool = Field(description="true when --format auto chose the format")
    reason: str | None = None
    episodes: int = 0
    problems: int = 0


class ToolClassification(BaseModel):
    """How one tool seen in the files was classified, and by which source."""

    tool: str
    source: Source
    app: str
    kind: str
    resources: list[str]
    preconditions: list[str] = Field(default_factory=list)
    calls: int


class EpisodeReport(BaseModel):
    """One scored episode: where it came from and its :class:`EpisodeScores`.

    ``faults`` is ``ledger`` when the trajectory carried a fault ledger, else ``inferred``;
    ``inferred_faults`` counts the recoverable errors whose fault was inferred.
    """

    file: str
    episode: str
    line: int | None = None
    format: str
    agent: str
    faults: Literal["ledger", "inferred"]
    inferred_faults: int = 0
    scores: EpisodeScores


class ScoreReport(BaseModel):
    """The result of :func:`score_files` (``mcpgym score --json`` prints it).

    Attributes:
        files: one row per input file.
        episodes: per-episode scores, with file and episode label.
        agents: ``aggregate(...).agents``: per agent (``external`` unless the file names
            one), the aggregates of docs/design.md §7 with ``by_level`` / ``by_app``.
        tools: every tool seen, with its classification and source.
        faults_inferred: true when some episode had no fault ledger (its faults inferred).
        inferred_faults: recoverable errors whose fault was inferred, over all episodes.
        problems: malformed input (file, line or episode, what is wrong) and warnings.
        catalog: the ``--catalog`` file or built-in catalog name, if any (``complexmcp``
            when ComplexMCP files were scored without ``--catalog``).
        recovery_window: K, the recovery window in tool calls.
        scorability: how much of the input could be read and how its tools were
            classified (:class:`~mcpgym.evaluation.formats.scorability.Scorability`), with
            the loud warnings ``--strict`` turns into a failing exit code.
    """

    files: list[FileReport] = Field(default_factory=list)
    episodes: list[EpisodeReport] = Field(default_factory=list)
    agents: dict[str, AgentMetrics] = Field(default_factory=dict)
    tools: list[ToolClassification] = Field(default_factory=list)
    faults_inferred: bool = False
    inferred_faults: int = 0
    problems: list[Problem] = Field(default_factory=list)
    catalog: str | None = None
    recovery_window: int = DEFAULT_K
    scorability: Scorability = Field(default_factory=Scorability)

    @property
    def ok(self) -> bool:
        """True when no problem of severity ``error`` was found."""
        return not any(p.severity == "error" for p in self.problems)


@lru_cache(maxsize=1)
def _app_entries() -> tuple[CatalogEntry, ...]:
    return tuple(Catalog.from_apps().entries())


def build_catalog(catalog_path: str | Path | None = None) -> tuple[Catalog, list[Problem]]:
    """mcpgym's catalog plus the rows of ``catalog_path`` that name tools it does not know.

    ``catalog_path`` is a JSON file, or the name of a built-in catalog
    (:data:`mcpgym.evaluation.catalogs.BUILTIN_CATALOGS`, e.g. ``complexmcp``) when no file of
    that name exists.

    Returns:
        ``(catalog, problems)``: a warning problem when the registered apps cannot be loaded
        (scoring then relies on the file and the heuristic).

    Raises:
        ValueError: when ``catalog_path`` is unreadable or invalid (the message names it).
    """
    problems: list[Problem] = []
    try:
        entries = list(_app_entries())
    except Exception as exc:  # noqa: BLE001 - a broken app must not stop external scoring
        entries = []
        problems.append(
            Problem(
                file="(mcpgym catalog)", message=f"the registered apps could not be loaded: {exc}", severity="warning"
            )
        )
    if catalog_path is not None:
        if str(catalog_path) in BUILTIN_CATALOGS and not Path(catalog_path).exists():
            catalog_path = builtin_catalog_path(str(catalog_path))
        try:
            extra = Catalog.from_file(catalog_path).entries()
        except OSError as exc:
            raise ValueError(f"{catalog_path}: cannot read the catalog: {exc.strerror or exc}") from None
        known = {e.name for e in entries}
        entries += [e for e in extra if e.name not in known]
    return Catalog(entries), problems


def load_file(path: str | Path, fmt: str = "auto") -> tuple[LoadResult, FileReport]:
    """Read one file in format ``fmt`` (``auto``: :func:`detect_format`).

    A directory is taken for an ``mcpgym run`` directory: its ``trajectories.jsonl`` is read
    in the ``mcpgym`` format whatever ``fmt`` says.

    Raises:
        ValueError: for a format not in :data:`FORMATS`.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    reason = None
    if Path(path).is_dir():
        run_file = Path(path) / "trajectories.jsonl"
        if run_file.is_file():
            res = mcpgym.load(run_file)
        else:
            res = LoadResult(file=str(path), format="mcpgym")
            res.problem("a directory without trajectories.jsonl (not a run directory)")
        return res, FileReport(
            file=res.file,
            format="mcpgym",
            detected=False,
            reason="run directory",
            episodes=len(res.episodes),
            problems=len(res.problems),
        )
    if fmt == "auto":
        detected, reason = detect_format(path)
        if detected is None:
            res = LoadResult(file=str(path), format="unknown")
            if not Path(path).is_file():
                res.problem("file not found" if not Path(path).exists() else "not a file")
            else:
                res.problem(
                    f"cannot tell the format ({reason}); pass --format {'|'.join(f for f in FORMATS if f != 'auto')}"
                )
            return res, FileReport(
                file=str(path), format=None, detected=True, reason=reason, problems=len(res.problems)
            )
        fmt_used = detected
    else:
        fmt_used = fmt
    try:
        res = LOADERS[fmt_used](path)
    except Exception as exc:  # noqa: BLE001 - one unreadable file must not stop the others
        res = LoadResult(file=str(path), format=fmt_used)
        res.problem(f"cannot be read as {fmt_used} ({type(exc).__name__}: {exc})")
    return res, FileReport(
        file=str(path),
        format=fmt_used,
        detected=fmt == "auto",
        reason=reason,
        episodes=len(res.episodes),
        problems=len(res.problems),
    )


def score_files(
    paths: Iterable[str | Path], fmt: str = "auto", catalog_path: str | Path | None = None, *, k: int = DEFAULT_K
) -> ScoreReport:
    """Score trajectory files recorded elsewhere (or by mcpgym) without re-running anything.

    Args:
        paths: the files (or run directories: their ``trajectories.jsonl``); each is read on
            its own, a bad file or episode never stops the others.
        fmt: one of :data:`FORMATS` (``auto`` sniffs each file: :mod:`mcpgym.evaluation.formats.detect`).
        catalog_path: a JSON catalog (``mcpgym tools --json`` rows: ``name, kind,
            resources, remedies, alternatives, ...``) for tools mcpgym's catalog lacks.
        k: the recovery window in tool calls (docs/design.md §7, K=3).

    Returns:
        A :class:`ScoreReport`.

    Raises:
        ValueError: for an unknown ``fmt``, ``k < 1``, or an unreadable / invalid catalog.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    if k < 1:
        raise ValueError(f"the recovery window k must be >= 1, got {k}")
    loaded: list[LoadResult] = []
    rows: list[FileReport] = []
    descriptions: dict[str, str] = {}
    for path in paths:
        res, row = load_file(path, fmt)
        loaded.append(res)
        rows.append(row)
        for name, desc in res.descriptions.items():
            descriptions.setdefault(name, desc)
    if catalog_path is None:
        defaults = {DEFAULT_CATALOGS[r.format] for r in loaded if r.format in DEFAULT_CATALOGS and r.episodes}
        catalog_path = defaults.pop() if len(defaults) == 1 else None
    catalog, problems = build_catalog(catalog_path)
    report = ScoreReport(catalog=str(catalog_path) if catalog_path is not None else None, recovery_window=k)
    report.problems.extend(problems)
    report.files.extend(rows)
    for res in loaded:
        report.problems.extend(res.problems)

    calls: Counter[str] = Counter(s.tool for res in loaded for ep in res.episodes for s in ep.trajectory.tool_calls)
    for name in sorted(calls):  # classify everything first: see the module docstring
        catalog.get(name, descriptions.get(name))

    scored: list[EpisodeScores] = []
    for res, row in zip(loaded, report.files, strict=False):
        for ep in res.episodes:
            traj = ep.trajectory
            try:
                sc = score_episode(traj, catalog, k=k)
            except Exception as exc:  # noqa: BLE001 - e.g. a snapshot that does not restore
                report.problems.append(
                    Problem(file=res.file, line=ep.line, episode=ep.label, message=f"cannot be scored: {exc}")
                )
                row.episodes -= 1
                row.problems += 1
                continue
            inferred = sum(r.inferred for r in sc.recoverable_error_detail)
            report.episodes.append(
                EpisodeReport(
                    file=res.file,
                    episode=ep.label,
                    line=ep.line,
                    format=res.format,
                    agent=sc.agent or "external",
                    faults="ledger" if traj.ledger is not None else "inferred",
                    inferred_faults=inferred,
                    scores=sc,
                )
            )
            scored.append(sc)
    report.agents = aggregate(scored).agents
    for name in sorted(calls):
        e = catalog.get(name)
        report.tools.append(
            ToolClassification(
                tool=name,
                source=e.source,
                app=e.app,
                kind=e.kind,
                resources=list(e.resources),
                preconditions=list(e.preconditions),
                calls=calls[name],
            )
        )
    report.faults_inferred = any(ep.faults == "inferred" for ep in report.episodes)
    report.inferred_faults = sum(ep.inferred_faults for ep in report.episodes)
    report.scorability = scorability(loaded, report.tools)
    return report


# -- text rendering ----------------------------------------------------------------------------
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
    Column("Success", "OK", "success (outcome; - when states are unknown)"),
)
"""Columns of the per-file episode table of :func:`render_text`."""

AGENT_COLUMNS: tuple[Column, ...] = (
    Column("Agent"),
    Column("Episodes", "Eps", "episodes", justify="right"),
    Column("Success", "OK", "success rate", justify="right"),
    Column("Verification", "Verif", "writes read back", justify="right"),
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
    (:func:`mcpgym.evaluation.tables.print_table`).

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
        para(f"nothing could be scored; {len(report.problems)} problem(s):")
        for p in report.problems:
            where = f"{p.file}" + (f":{p.line}" if getattr(p, "line", None) else "")
            para(f"{where}: {p.severity}: {p.message}", "  ", "    ")
        _print_scorability(console, report)
        return buf.getvalue()

    for f in report.files:
        rows = [ep for ep in report.episodes if ep.file == f.file]
        title = f"{f.file} ({f.format or 'format unknown'}): {len(rows)} episode(s)"
        if f.problems:
            title += f", {f.problems} problem(s)"
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
                    _yn(s.success),
                ]
            )
        print_table(console, EPISODE_COLUMNS, cells, title=title, width=width)
        console.print()

    agent_rows = [
        [
            name,
            str(m.episodes),
            _pct(m.success_rate),
            _pct(m.verification_rate),
            _pct(m.precheck_rate),
            _pct(m.recovery_attempt_rate),
            _pct(m.recovery_rate),
            _pct(m.defeatism_rate),
            str(m.blind_retries),
            str(m.invalid_calls),
        ]
        for name, m in report.agents.items()
    ]
    print_table(console, AGENT_COLUMNS, agent_rows, title="agents", width=width)
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
        para(f"{len(report.problems)} problem(s):")
        for p in report.problems:
            para(str(p), "  ", "    ")
    _print_scorability(console, report)
    return "\n".join(line.rstrip() for line in buf.getvalue().splitlines()) + "\n"


def _print_scorability(console: Any, report: ScoreReport) -> None:
    for text in [report.scorability.line()] + [f"WARNING: {w}" for w in report.scorability.warnings]:
        for line in wrap_words(text, console.width, "", "  "):
            console.print(line, markup=False, soft_wrap=True)


def run_score(
    paths: list[str],
    fmt: str = "auto",
    catalog: str | None = None,
    as_json: bool = False,
    out: IO[str] | None = None,
    *,
    k: int = 3,
    strict: bool = False,
    err: IO[str] | None = None,
) -> int:
    """What ``mcpgym score FILE... [--format F] [--catalog C] [--json] [--strict]`` does.

    Prints :func:`render_text` (or the report as JSON) to ``out`` (stdout); with ``--json``
    the scorability warnings are also written to ``err`` (stderr), so they are never silent.

    Returns:
        The exit code: 0 when every file was read cleanly, 1 when some input was malformed
        (what could be scored is still printed) or, with ``strict``, when the scorability
        summary carries a warning (most call blocks failed to parse, most tools guessed),
        2 when nothing could be scored.

    Raises:
        ValueError: for an unknown format or a bad catalog (a usage error: exit 2).
    """
    out = out or sys.stdout
    report = score_files(paths, fmt, catalog, k=k)
    if as_json:
        out.write(json.dumps(report.model_dump(mode="json"), indent=2) + "\n")
        for w in report.scorability.warnings:
            (err or sys.stderr).write(f"WARNING: {w}\n")
    else:
        out.write(render_text(report))
    if not report.episodes:
        return 2
    if strict and report.scorability.warnings:
        return 1
    return 0 if report.ok else 1


__all__ = [
    "FORMATS",
    "EpisodeReport",
    "FileReport",
    "LOADERS",
    "ScoreReport",
    "ToolClassification",
    "build_catalog",
    "load_file",
    "render_text",
    "run_score",
    "score_files",
]
