"""``mcpgym export``: a thin adapter over :func:`mcpgym.evaluation.formats.atif.write_atif` (ATIF)
and :mod:`mcpgym.evaluation.report.exports` (CSV, leaderboard JSON)."""

from __future__ import annotations

import os
import sys
from enum import StrEnum
from pathlib import Path

import typer

from mcpgym.kernel.exceptions import InputError, MCPGymError


class ExportFormat(StrEnum):
    """Formats ``mcpgym export`` writes."""

    atif = "atif"
    csv = "csv"
    leaderboard = "leaderboard"


FORMAT_NOUNS = {
    ExportFormat.atif: "ATIF trajectory",
    ExportFormat.csv: "episode row",
    ExportFormat.leaderboard: "leaderboard row",
}
"""What one written document of each format is called in ``export``'s summary line."""

STDOUT = "-"
"""``--out -``: write to standard output."""


def _unwritable(target: Path) -> str | None:
    """Why ``target`` cannot be created as a new file, or None: its folder missing or not a
    folder, or ``target`` itself a folder (checked before anything is computed)."""
    if target.is_dir() and not target.is_symlink():
        return f"--out {target} is a directory: give a file name (or - for standard output)"
    parent = target.parent
    if not parent.exists():
        return f"cannot write {target}: its folder {parent} does not exist (create it first, or choose another --out)"
    if not parent.is_dir():
        return f"cannot write {target}: {parent} is not a folder"
    return None


def _other_run_file(target: Path, fmt: ExportFormat) -> str | None:
    """Why ``target`` may not hold a ``fmt`` export, or None: its name is that of another of a
    run directory's files (``report.md``, ``episodes.csv`` for a leaderboard...). Written
    there, the export would read as that file, and ``--force`` or ``mcpgym run --force`` would
    take it for mcpgym's or refuse it as foreign; so the name is refused wherever it is."""
    from mcpgym.evaluation.run.run_owner import EXPORT_FILE_NAMES, RUN_FILE_NAMES

    own = EXPORT_FILE_NAMES[fmt.value]
    if target.name in RUN_FILE_NAMES and target.name != own:
        return (
            f"--out {target}: {target.name} is the name of another run file of mcpgym's; "
            f"name a {fmt.value} export otherwise (its default name is {own})"
        )
    return None


def export(
    run_dir: Path = typer.Argument(..., metavar="RUN_DIR", help="A run directory (from `mcpgym run`)."),
    fmt: ExportFormat = typer.Option(
        ExportFormat.atif,
        "--format",
        "-f",
        help="atif: one ATIF v1.8 trajectory per line; csv: one row per episode, every score "
        "(columns: docs/exports.md); leaderboard: JSON per agent and condition (rates with intervals, "
        "pass^k, tokens, cost).",
    ),
    out: str | None = typer.Option(  # a str: a Path would drop the trailing / that names a folder
        None,
        "--out",
        "-o",
        metavar="FILE",
        help="Output file, or - for standard output (default: RUN_DIR/trajectories.atif.jsonl, "
        "episodes.csv or leaderboard.json).",
    ),
    prices: Path | None = typer.Option(
        None,
        "--prices",
        metavar="FILE",
        help='csv, leaderboard: a price table (JSON or YAML: {"prices": {MODEL: {"input_per_million": USD, '
        '"output_per_million": USD}}}) for the cost columns.',
    ),
    force: bool = typer.Option(
        False,
        "--force",
        help="Replace FILE when it is an earlier export of mcpgym's (every line an ATIF document "
        "carrying mcpgym's record; a CSV or leaderboard export mcpgym wrote); any other file is never overwritten.",
    ),
) -> None:
    """Write a run's episodes in another format (ATIF, CSV, leaderboard JSON).

    ATIF keeps every step, call, error and message, and mcpgym's record of the episode in each
    document's `extra`, so `mcpgym score --format atif` gives the same scores. Needs
    mcpgym[atif]. The default output is one of the run directory's own files: `mcpgym run
    --force` replaces it with the rest of the run. `--out -` prints the documents on standard
    output (the summary line goes to stderr). CSV: one row per episode, every score; leaderboard:
    per agent and condition, every rate with its 95% interval, pass^k, tokens and, with --prices,
    cost per episode and per success (docs/exports.md).
    """
    from mcpgym.evaluation.formats import atif
    from mcpgym.evaluation.records.compressed import run_dir_problem
    from mcpgym.evaluation.run.run_dir import load_run, trajectories_file
    from mcpgym.evaluation.run.run_owner import EXPORT_FILE_NAMES
    from mcpgym.kernel.wording import counted

    problem = run_dir_problem(run_dir)
    if problem is not None:
        raise InputError(problem)
    to_stdout = out is not None and out == STDOUT
    if out is not None and not to_stdout and out.endswith(("/", os.sep)):
        raise InputError(f"--out {out} names a folder (it ends with /): give a file name (or - for standard output)")
    target = Path(out) if out else run_dir / EXPORT_FILE_NAMES[fmt.value]
    if not to_stdout:
        unwritable = _unwritable(target) or _other_run_file(target, fmt)
        if unwritable is not None:
            raise InputError(unwritable)
        if (target.exists() or target.is_symlink()) and not force:
            raise InputError(
                f"{target} exists; pass --force to replace an earlier export, or choose another --out "
                "(nothing was overwritten)"
            )
    if fmt is not ExportFormat.atif:
        n = _export_table(run_dir, fmt, target, to_stdout, prices, force)
        noun = FORMAT_NOUNS[fmt]
        typer.echo(f"wrote {counted(n, noun)} to {'standard output' if to_stdout else target}", err=to_stdout)
        return
    if prices is not None:
        raise InputError("--prices applies to --format csv and leaderboard only")
    try:
        trajs = load_run(run_dir)
        if not trajs:  # an empty export would read as a run that exported nothing by mistake
            raise InputError(f"{trajectories_file(run_dir)} holds no episode: nothing to export")
        if to_stdout:
            lines = atif.atif_lines(trajs)
            sys.stdout.writelines(lines)
            sys.stdout.flush()
            n = len(lines)
        else:
            n = atif.write_atif(trajs, target, replace=force)
    except MCPGymError:
        raise
    except (ImportError, FileExistsError, ValueError) as exc:
        raise InputError(str(exc)) from None
    except OSError as exc:  # unwritable: one line naming the file, never "[Errno 13] ..."
        if to_stdout:
            raise
        raise InputError(f"cannot write {exc.filename or target}: {exc.strerror or exc}") from None
    noun = FORMAT_NOUNS[fmt]
    if to_stdout:
        typer.echo(f"wrote {counted(n, noun, noun.replace('trajectory', 'trajectories'))} to standard output", err=True)
    else:
        typer.echo(f"wrote {counted(n, noun, noun.replace('trajectory', 'trajectories'))} to {target}")


def _export_table(
    run_dir: Path, fmt: ExportFormat, target: Path, to_stdout: bool, prices: Path | None, force: bool
) -> int:
    """Write the CSV or leaderboard export of ``run_dir`` to ``target`` (or standard output);
    returns the rows written.

    Raises:
        InputError: a bad price table, a run without episodes, a file in the way that mcpgym
            did not write (nothing is overwritten).
    """
    from mcpgym.evaluation.records.atomic import write_atomic
    from mcpgym.evaluation.records.manifest import read_manifest
    from mcpgym.evaluation.report import exports
    from mcpgym.evaluation.report.run_report import build_report
    from mcpgym.evaluation.run.run_owner import ForeignContentError, replace_own_file

    table = exports.load_prices(prices) if prices is not None else None
    try:
        report = build_report(run_dir, rescore=False)
    except (FileNotFoundError, ValueError) as exc:
        raise InputError(str(exc).replace("nothing to report", "nothing to export")) from None
    manifest = read_manifest(run_dir)
    settings = manifest.invocations[0].settings if manifest is not None and manifest.invocations else {}
    tools = str(settings.get("tool_exposure") or "all")
    faults = str((manifest.fault_profile or {}).get("name", "unknown")) if manifest is not None else "unknown"
    run = run_dir.resolve().name
    if fmt is ExportFormat.csv:
        text, n = exports.episodes_csv(report.trajectories, run, tools, table), len(report.trajectories)
        header = exports.CSV_HEADER_PREFIX
    else:
        rows = exports.leaderboard_rows(
            report.scores.agents, report.episodes, {"faults": faults, "tools": tools}, table
        )
        text, n, header = exports.leaderboard_json(rows, run), len(rows), exports.LEADERBOARD_HEADER
    if to_stdout:
        sys.stdout.write(text)
        sys.stdout.flush()
        return n
    try:
        if force:
            replace_own_file(target, text, header)
        else:
            write_atomic(target, text.encode("utf-8"), prefix=f".{target.name}.", suffix=".tmp", exclusive=True)
    except ForeignContentError as exc:
        raise InputError(f"{exc} (nothing was overwritten)") from None
    except FileExistsError:
        raise InputError(
            f"{target} exists; pass --force to replace an earlier export (nothing was overwritten)"
        ) from None
    return n


__all__ = ["FORMAT_NOUNS", "STDOUT", "ExportFormat", "export"]
