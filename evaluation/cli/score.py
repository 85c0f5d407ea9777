"""``mcpgym score PATH...``: score run directories and trajectory files recorded anywhere, and
print the report.

A thin adapter: :func:`mcpgym.evaluation.formats.score.score_files` reads and scores,
:func:`mcpgym.evaluation.report.score_text.render_text` renders; this module picks the output
and the exit code.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import IO

import typer

from mcpgym.evaluation.formats.score import FORMATS, RUN_DIRECTORY, EpisodeReport, ScoreReport, score_files
from mcpgym.evaluation.records.manifest import MANIFEST_NAME
from mcpgym.evaluation.records.status import EpisodeStatus
from mcpgym.evaluation.report.score_text import render_text
from mcpgym.kernel.exceptions import InputError, MCPGymError
from mcpgym.kernel.shorten import short
from mcpgym.kernel.wording import counted


def run_score(
    paths: list[str],
    fmt: str = "auto",
    catalog: str | None = None,
    as_json: bool = False,
    out: IO[str] | None = None,
    *,
    k: int | None = None,
    strict: bool = False,
    err: IO[str] | None = None,
) -> int:
    """What ``mcpgym score FILE... [--format F] [--catalog C] [--json] [--strict]`` does.

    Prints :func:`render_text` (or the report as JSON) to ``out`` (stdout); with ``--json``
    the scorability warnings are also written to ``err`` (stderr), so they are never silent.

    Returns:
        The exit code: 0 when every file was read cleanly, 1 when some input was malformed,
        when success cannot be computed for most episodes read from the run directories of
        ``mcpgym run`` (a
        warning on ``err`` says how many episodes are left n/a whatever the input: a foreign
        transcript carries no world states, so its success is n/a by nature, never an exit),
        (what could be scored is still printed) or, with ``strict``, when the scorability
        summary carries a warning (most call blocks failed to parse, most tools guessed, a
        file read in a format that finds no call while another finds some), 2 when nothing
        could be scored (1 with ``strict`` when another format would have read calls) or the
        input is no transcript of any format (:func:`unreadable_message`).

    Raises:
        ValueError: for an unknown format or a bad catalog (a usage error: exit 2).
    """
    out = out or sys.stdout
    report = score_files(paths, fmt, catalog, k=k)
    unreadable = unreadable_message(report, fmt, paths)
    if unreadable is not None:
        (err or sys.stderr).write(f"error: {unreadable}\n")
        return 2
    if as_json:
        out.write(json.dumps(report.model_dump(mode="json"), indent=2) + "\n")
        for w in report.scorability.warnings:
            (err or sys.stderr).write(f"WARNING: {w}\n")
    else:
        out.write(render_text(report))
    if strict and report.format_mismatches:
        return 1  # read in the wrong format: the fix is named, whether or not anything scored
    if not report.episodes:
        return 2
    unjudged = _unknown_success(report.episodes)
    if unjudged is not None:
        (err or sys.stderr).write(f"WARNING: {unjudged}\n")
    if _mostly_unjudged(report):
        return 1  # a run directory records the states success needs: most of them missing is a fault
    if strict and report.scorability.warnings:
        return 1
    return 0 if report.ok else 1


def _unknown_success(episodes: list[EpisodeReport]) -> str | None:
    """The warning when some of ``episodes`` has a success that could not be computed
    (``success`` None on an episode that did not error), naming how many and the first reason
    (``outcome_unavailable``); None when every one was judged. Their success is then n/a
    (docs/design.md: a figure that cannot be computed is n/a with a warning naming it)."""
    spoke = [ep for ep in episodes if ep.scores.status != EpisodeStatus.ERRORED]
    unknown = [ep for ep in spoke if ep.scores.success is None]
    if not unknown:
        return None
    reasons = [ep.scores.outcome_unavailable for ep in unknown if ep.scores.outcome_unavailable]
    why = short(reasons[0]) if reasons else "no world states in the input"
    return (
        f"success cannot be computed for {len(unknown)} of the {counted(len(spoke), 'episode')} ({why}): "
        "their success is n/a"
    )


def _mostly_unjudged(report: ScoreReport) -> bool:
    """True when success is unknown for most (more than half, the rule by which a run of mostly
    errored episodes exits 1) of the episodes read from the directories of ``mcpgym run`` (a
    run directory with its ``manifest.json``), which always records the states success needs.
    Foreign transcripts and proxy sessions carry none: their success is n/a by nature."""
    runs = {
        f.file for f in report.files if f.reason == RUN_DIRECTORY and (Path(f.file).parent / MANIFEST_NAME).is_file()
    }
    spoke = [ep for ep in report.episodes if ep.file in runs and ep.scores.status != EpisodeStatus.ERRORED]
    return 2 * sum(ep.scores.success is None for ep in spoke) > len(spoke) > 0


def unreadable_message(report: ScoreReport, fmt: str, paths: list[str]) -> str | None:
    """The error for input that no format reads as a transcript, or None.

    With ``--format auto`` and no run directory among ``paths``: when no tool call was parsed
    while some call block failed to parse (a README read as a ComplexMCP transcript), the file
    is no transcript of any format: :func:`~mcpgym.evaluation.formats.score.score_files` has
    already read it in every other format (:func:`~mcpgym.evaluation.formats.score.format_mismatch`)
    and none found a call. The message names the formats tried.
    """
    from pathlib import Path as _Path

    s = report.scorability
    if fmt != "auto" or any(_Path(p).is_dir() for p in paths) or s.calls_parsed or not s.blocks_failed:
        return None
    detected = ", ".join(f"{short(f.file)} as {f.format}" for f in report.files if f.format) or "nothing detected"
    tried = ", ".join(f for f in FORMATS if f != "auto")
    return (
        f"cannot read {', '.join(short(p) for p in paths)} as a transcript of any format: detected {detected}, "
        f"which parsed no tool call ({s.blocks_failed} call block(s) failed to parse); formats tried: {tried} "
        "(none finds a tool call); pass --format FORMAT for a file you know the format of"
    )


def score(
    paths: list[Path] = typer.Argument(
        ..., metavar="PATH", help="Run directories, trajectory files of our own, or files recorded elsewhere."
    ),
    fmt: str = typer.Option(
        "auto",
        "--format",
        "-f",
        metavar="FORMAT",
        help=f"{' | '.join(FORMATS)} (inspect: an Inspect AI .eval log). A run directory is read as mcpgym: any other format with one is refused.",
    ),
    catalog: str | None = typer.Option(
        None,
        "--catalog",
        metavar="CATALOG",
        help="JSON catalog file (name -> kind, resources, remedies, alternatives) for tools not in ours, or a built-in catalog: complexmcp (the default for --format complexmcp).",
    ),
    as_json: bool = typer.Option(
        False,
        "--json",
        help='Print {"agents": aggregates, "episodes": [...], "tools": [...], "problems": [...]} as JSON.',
    ),
    k: int | None = typer.Option(
        None,
        min=1,
        metavar="N",
        help="Cap the recovery window at N tool calls (default: the run's, else no window: an attempt may come any number of calls later).",
    ),
    strict: bool = typer.Option(
        False,
        "--strict",
        help="Exit 1 when the scorability summary warns (most call blocks failed to parse, or most tools were guessed by name).",
    ),
) -> None:
    """Score trajectories: run directories, or files recorded in another harness.

    Uses docs/design.md §7's definitions: per-episode behaviour scores, outcome where states
    are given, aggregates per agent, and a scorability summary (episodes read, calls parsed,
    blocks that failed, tools classified vs guessed).

    Exit code 0: every input read cleanly; 1: some input was malformed (the rest is still
    scored and printed), or --strict and the scorability summary warns, or success cannot
    be computed for most episodes of the run directories of `mcpgym run` (a warning names how many
    episodes are n/a whenever any is, whatever the input); 2: nothing could be
    scored, a PATH does not exist (one error line, nothing read), or with --format auto no
    format reads a tool call from the files (the error names the formats tried).
    """
    from mcpgym.evaluation.formats import FORMATS
    from mcpgym.evaluation.records.manifest import read_manifest
    from mcpgym.evaluation.scoring.scorer import DEFAULT_K

    if fmt not in FORMATS:
        raise InputError(f"unknown format {short(fmt)}; one of {', '.join(FORMATS)}")
    missing = [str(p) for p in paths if not p.exists()]
    if missing:  # a mistyped path is one error, before anything is read or printed
        raise InputError(f"no such file or directory: {', '.join(short(m) for m in missing)}")
    try:
        if k is None:
            manifests = [read_manifest(p) for p in paths if p.is_dir()]
            windows = {m.recovery_window for m in manifests if m is not None} - {None}
            k = windows.pop() if len(windows) == 1 else DEFAULT_K
        code = run_score([str(p) for p in paths], fmt, catalog, as_json, k=k, strict=strict)
    except MCPGymError:
        raise
    except ValueError as exc:  # a bad catalog, a file the formats refuse
        raise InputError(str(exc)) from None
    raise typer.Exit(code)


__all__ = ["run_score", "score", "unreadable_message"]
