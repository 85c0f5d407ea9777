"""The front door: score trajectory files recorded anywhere (``mcpgym score FILE...``).

:func:`score_files` reads each file in its format (or sniffs it), converts every episode to a
:class:`~mcpgym.evaluation.records.trajectory.Trajectory`, scores it with
:func:`mcpgym.evaluation.scoring.scorer.score_episode` and aggregates with
:func:`mcpgym.evaluation.scoring.aggregate.aggregate` (docs/design.md §7). :func:`mcpgym.evaluation.report.score_text.render_text`
prints the result as tables.

Tool classification: a tool is looked up in mcpgym's own catalog (the registered apps,
source ``catalog``), else in the ``--catalog`` file (source ``file``), else classified by the
heuristic of :mod:`mcpgym.evaluation.scoring.tool_catalog` (source ``heuristic``; a description found in the
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

from collections import Counter
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from mcpgym.evaluation.formats.common import LoadResult, Problem
from mcpgym.evaluation.formats.detect import FORMAT_NAMES, READERS, detect_format
from mcpgym.evaluation.formats.scorability import Scorability, scorability
from mcpgym.evaluation.records.compressed import run_dir_problem
from mcpgym.evaluation.records.scores import AgentMetrics
from mcpgym.evaluation.scoring.aggregate import aggregate
from mcpgym.evaluation.scoring.foreign_catalogs import BUILTIN_CATALOGS, builtin_catalog_path
from mcpgym.evaluation.scoring.scorer import DEFAULT_K, EpisodeScores, score_episode
from mcpgym.evaluation.scoring.tool_catalog import Catalog, CatalogEntry, Source
from mcpgym.kernel.shorten import EchoName, short
from mcpgym.kernel.wording import counted

DEFAULT_CATALOGS: dict[str, str] = {"complexmcp": "complexmcp"}
"""Format -> the built-in catalog used when a file is read in that format and no
``--catalog`` is given (ComplexMCP's tool names are bare: only its own catalog knows them)."""

LOADERS: dict[str, Callable[[str | Path], LoadResult]] = {r.name: r.load for r in READERS}
"""Format name -> reader (each returns a :class:`~mcpgym.evaluation.formats.common.LoadResult`),
from :data:`mcpgym.evaluation.formats.detect.READERS`."""

FORMATS: tuple[str, ...] = FORMAT_NAMES
"""Values of ``--format``: ``auto`` (sniffed, :mod:`mcpgym.evaluation.formats.detect`), then
every reader of :data:`~mcpgym.evaluation.formats.detect.READERS`, in order. A new format is its
reader module plus its row in ``READERS`` (with its content marker, to be sniffed)."""


RUN_DIRECTORY = "run directory"
"""The :class:`FileReport` ``reason`` of a file read as a run directory's trajectories."""


class FileReport(BaseModel):
    """One input file: its format (and how it was chosen), episodes scored, problems."""

    file: str
    format: str | None
    detected: bool = Field(description="true when --format auto chose the format")
    reason: str | None = None
    episodes: int = 0
    problems: int = 0


class ToolClassification(BaseModel):
    """How one tool seen in the files was classified, and by which source (names echoed
    shortened: :data:`mcpgym.kernel.shorten.EchoName`)."""

    tool: EchoName
    source: Source
    app: EchoName
    kind: str
    resources: list[EchoName]
    preconditions: list[EchoName] = Field(default_factory=list)
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
            one; ``agent@run`` when several run directories are scored: :func:`run_labels`), the aggregates of docs/design.md §7 with ``by_level`` / ``by_app``.
        tools: every tool seen, with its classification and source.
        faults_inferred: true when some episode had no fault ledger (its faults inferred).
        inferred_faults: recoverable errors whose fault was inferred, over all episodes.
        problems: malformed input (file, line or episode, what is wrong) and warnings.
        catalog: the ``--catalog`` file or built-in catalog name, if any (``complexmcp``
            when ComplexMCP files were scored without ``--catalog``).
        recovery_window: K, the recovery window in tool calls (None: no window, the default).
        scorability: how much of the input could be read and how its tools were
            classified (:class:`~mcpgym.evaluation.formats.scorability.Scorability`), with
            the loud warnings ``--strict`` turns into a failing exit code.
        format_mismatches: :func:`format_mismatch` warnings (also among the scorability
            warnings).
    """

    files: list[FileReport] = Field(default_factory=list)
    episodes: list[EpisodeReport] = Field(default_factory=list)
    agents: dict[str, AgentMetrics] = Field(default_factory=dict)
    tools: list[ToolClassification] = Field(default_factory=list)
    faults_inferred: bool = False
    inferred_faults: int = 0
    problems: list[Problem] = Field(default_factory=list)
    catalog: str | None = None
    recovery_window: int | None = DEFAULT_K
    scorability: Scorability = Field(default_factory=Scorability)
    format_mismatches: list[str] = Field(
        default_factory=list,
        description="files read in a format that found no tool call while another format finds some "
        "(each names the format that fits)",
    )

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
    (:data:`mcpgym.evaluation.scoring.foreign_catalogs.BUILTIN_CATALOGS`, e.g. ``complexmcp``) when no file of
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


RUN_DIR_FORMATS = ("auto", "mcpgym")
"""The ``--format`` values a run directory can be read in: its lines are mcpgym's own."""


def check_format_applies(paths: Iterable[str | Path], fmt: str) -> None:
    """Refuse a ``--format`` that a run directory among ``paths`` cannot be read in: a run
    directory holds mcpgym's own lines, so any format but ``auto`` / ``mcpgym`` would be
    ignored, and an option is never ignored in silence. A directory that is no run directory
    is left to the file reader, which refuses it as a directory.

    Raises:
        ValueError: naming the format, the directories and what to do instead.
    """
    if fmt in RUN_DIR_FORMATS:
        return
    dirs = [str(p) for p in paths if Path(p).is_dir() and run_dir_problem(p) is None]
    if dirs:
        raise ValueError(
            f"--format {short(fmt)} does not apply to the run director{'ies' if len(dirs) > 1 else 'y'} "
            f"{', '.join(short(d) for d in dirs)}: a run directory holds mcpgym's own trajectory lines; "
            f"leave out --format (or give --format mcpgym), and score files in {short(fmt)} format in another call"
        )


def load_file(path: str | Path, fmt: str = "auto") -> tuple[LoadResult, FileReport]:
    """Read one file in format ``fmt`` (``auto``: :func:`detect_format`).

    A directory is taken for an ``mcpgym run`` directory: its ``trajectories.jsonl.zst`` (or an
    older run's ``trajectories.jsonl``) is read in the ``mcpgym`` format.

    Raises:
        ValueError: for a format not in :data:`FORMATS`, or one that is not the run
            directory's (:func:`check_format_applies`).
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {short(fmt)}; expected one of {', '.join(FORMATS)}")
    check_format_applies([path], fmt)
    reason = None
    if Path(path).is_dir():
        from mcpgym.evaluation.records.compressed import run_dir_problem, trajectories_file

        run_file = trajectories_file(path)  # trajectories.jsonl.zst, or an older run's trajectories.jsonl
        if run_file.is_file():
            res = LOADERS["mcpgym"](run_file)
        else:
            res = LoadResult(file=str(path), format="mcpgym", unread=True)
            if fmt in RUN_DIR_FORMATS:
                res.problem(run_dir_problem(path) or "not a run directory")
            else:  # a file in that format was meant
                res.problem(f"{path} is a directory, not a file in the {short(fmt)} format (nor a run directory)")
        return res, FileReport(
            file=res.file,
            format="mcpgym",
            detected=False,
            reason=RUN_DIRECTORY,
            episodes=len(res.episodes),
            problems=len(res.problems),
        )
    if fmt == "auto":
        detected, reason = detect_format(path)
        if detected is None:
            res = LoadResult(file=str(path), format="unknown")
            if not Path(path).is_file():
                res.unread = True
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
    paths: Iterable[str | Path], fmt: str = "auto", catalog_path: str | Path | None = None, *, k: int | None = DEFAULT_K
) -> ScoreReport:
    """Score trajectory files recorded elsewhere (or by mcpgym) without re-running anything.

    Args:
        paths: the files (or run directories: their ``trajectories.jsonl``); each is read on
            its own, a bad file or episode never stops the others.
        fmt: one of :data:`FORMATS` (``auto`` sniffs each file: :mod:`mcpgym.evaluation.formats.detect`).
        catalog_path: a JSON catalog (``mcpgym tools --json`` rows: ``name, kind,
            resources, remedies, alternatives, ...``) for tools mcpgym's catalog lacks. None:
            the format's built-in catalog, or the ``catalog.json`` of a directory given (what
            ``mcpgym proxy --record DIR`` writes), when exactly one of them applies.
        k: the recovery window in tool calls (docs/design.md §7, K=3).

    Returns:
        A :class:`ScoreReport`.

    Raises:
        ValueError: for an unknown ``fmt``, a ``fmt`` other than ``auto`` / ``mcpgym`` given
            with a run directory (:func:`check_format_applies`), ``k < 1`` (None: no window), or an unreadable /
            invalid catalog.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {short(fmt)}; expected one of {', '.join(FORMATS)}")
    paths = list(paths)
    check_format_applies(paths, fmt)
    if k is not None and k < 1:
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
        # a directory recorded by `mcpgym proxy --record` holds the catalog its tools were classified by
        recorded = {
            str(Path(p) / "catalog.json") for p in paths if Path(p).is_dir() and (Path(p) / "catalog.json").is_file()
        }
        defaults |= recorded
        catalog_path = defaults.pop() if len(defaults) == 1 else None
    catalog, problems = build_catalog(catalog_path)
    report = ScoreReport(catalog=str(catalog_path) if catalog_path is not None else None, recovery_window=k)
    report.problems.extend(problems)
    report.files.extend(rows)
    for res in loaded:
        report.problems.extend(res.problems)

    mismatches = [w for res, row in zip(loaded, rows, strict=True) if (w := format_mismatch(res, row)) is not None]
    calls: Counter[str] = Counter(s.tool for res in loaded for ep in res.episodes for s in ep.trajectory.tool_calls)
    for name in sorted(calls):  # classify everything first: see the module docstring
        catalog.get(name, descriptions.get(name))

    scored: list[EpisodeScores] = []
    labels = run_labels(paths)
    for path, res, row in zip(paths, loaded, report.files, strict=False):
        for ep in res.episodes:
            traj = ep.trajectory
            try:
                sc = score_episode(traj, catalog, k=k)
                if path in labels:  # several runs: their agents are told apart, never pooled
                    sc = sc.model_copy(update={"agent": f"{sc.agent or 'external'}@{labels[path]}"})
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
    # kinds are per call (an inner action, an SQL statement): the episodes' own count of the
    # calls left unknown is the figure, not the tools' name-level kind
    report.scorability.calls_unknown = sum(ep.scores.unknown_kind_calls for ep in report.episodes)
    parsed = report.scorability.calls_parsed
    report.scorability.classified_share = (parsed - report.scorability.calls_unknown) / parsed if parsed else None
    for file, warning in mismatches:
        report.problems.append(Problem(file=file, message=warning, severity="warning"))
        report.scorability.warnings.append(f"{file}: {warning}")
        report.format_mismatches.append(f"{file}: {warning}")
    return report


def run_labels(paths: Iterable[str | Path]) -> dict[str | Path, str]:
    """When two run directories or more are scored together, each one's label (its folder's
    name, or the path as given when two names collide): their agents are reported as
    ``agent@label``, so that the same agent of two runs is never pooled into one row. Empty for
    fewer than two run directories."""
    dirs = [p for p in paths if Path(p).is_dir()]
    if len(dirs) < 2:
        return {}
    names = [Path(p).resolve().name or str(p) for p in dirs]
    return {p: (str(p) if names.count(n) > 1 else n) for p, n in zip(dirs, names, strict=True)}


def _calls_in(res: LoadResult) -> int:
    return sum(len(ep.trajectory.tool_calls) for ep in res.episodes)


def format_mismatch(res: LoadResult, row: FileReport) -> tuple[str, str] | None:
    """No silent zeros: when a file read in its format gives no tool call, read it in every
    other format; if one finds calls, ``(file, warning)`` naming the format that fits (the
    most calls wins). None when the format found calls, or no other format does better.
    ``--strict`` turns the warning into exit 1 (it joins the scorability warnings)."""
    if row.format is None or row.reason == RUN_DIRECTORY or _calls_in(res) > 0 or not Path(res.file).is_file():
        return None
    best: tuple[int, str] | None = None
    for name, loader in LOADERS.items():
        if name == row.format:
            continue
        try:
            found = _calls_in(loader(res.file))
        except Exception:  # noqa: BLE001 - a reader that cannot read the file found nothing
            continue
        if found and (best is None or found > best[0]):
            best = (found, name)
    if best is None:
        return None
    return res.file, (
        f"read as {row.format} the file has {counted(len(res.episodes), 'episode')} and no tool call, but it looks "
        f"like {best[1]}: {counted(best[0], 'tool call')} read as {best[1]}; pass --format {best[1]}"
    )


__all__ = [
    "FORMATS",
    "RUN_DIR_FORMATS",
    "EpisodeReport",
    "FileReport",
    "LOADERS",
    "ScoreReport",
    "ToolClassification",
    "build_catalog",
    "run_labels",
    "check_format_applies",
    "load_file",
    "score_files",
]
