"""``mcpgym export``: a thin adapter over :func:`mcpgym.evaluation.formats.atif.write_atif`."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path

import typer

from mcpgym.kernel.exceptions import InputError, MCPGymError


class ExportFormat(StrEnum):
    """Formats ``mcpgym export`` writes."""

    atif = "atif"


FORMAT_NOUNS = {ExportFormat.atif: "ATIF trajectory"}
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


def export(
    run_dir: Path = typer.Argument(..., metavar="RUN_DIR", help="A run directory (from `mcpgym run`)."),
    fmt: ExportFormat = typer.Option(
        ExportFormat.atif, "--format", "-f", help="atif: one ATIF v1.8 trajectory per line."
    ),
    out: Path | None = typer.Option(
        None,
        "--out",
        "-o",
        metavar="FILE",
        help="Output file, or - for standard output (default: RUN_DIR/trajectories.atif.jsonl).",
    ),
    force: bool = typer.Option(
        False,
        "--force",
        help="Replace FILE when it is an earlier export of mcpgym's (every line an ATIF document "
        "carrying mcpgym's record); any other file is never overwritten.",
    ),
) -> None:
    """Write a run's episodes in another format (ATIF).

    ATIF keeps every step, call, error and message, and mcpgym's record of the episode in each
    document's `extra`, so `mcpgym score --format atif` gives the same scores. Needs
    mcpgym[atif]. The default output is one of the run directory's own files: `mcpgym run
    --force` replaces it with the rest of the run. `--out -` prints the documents on standard
    output (the summary line goes to stderr).
    """
    from mcpgym.evaluation.formats import atif
    from mcpgym.evaluation.records.compressed import run_dir_problem
    from mcpgym.evaluation.run.run_dir import load_run, trajectories_file
    from mcpgym.evaluation.run.run_owner import EXPORT_FILE_NAMES
    from mcpgym.kernel.wording import counted

    problem = run_dir_problem(run_dir)
    if problem is not None:
        raise InputError(problem)
    to_stdout = out is not None and str(out) == STDOUT
    target = out or run_dir / EXPORT_FILE_NAMES[fmt.value]
    if not to_stdout:
        unwritable = _unwritable(target)
        if unwritable is not None:
            raise InputError(unwritable)
        if (target.exists() or target.is_symlink()) and not force:
            raise InputError(
                f"{target} exists; pass --force to replace an earlier export, or choose another --out "
                "(nothing was overwritten)"
            )
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


__all__ = ["FORMAT_NOUNS", "STDOUT", "ExportFormat", "export"]
