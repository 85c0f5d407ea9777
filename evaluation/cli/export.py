"""``mcpgym export``: a thin adapter over :func:`mcpgym.evaluation.formats.atif.write_atif`."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer

from mcpgym.kernel.exceptions import InputError, MCPGymError


class ExportFormat(StrEnum):
    """Formats ``mcpgym export`` writes."""

    atif = "atif"


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
        help="Output file (default: RUN_DIR/trajectories.atif.jsonl).",
    ),
    force: bool = typer.Option(
        False,
        "--force",
        help="Replace FILE when it is an earlier export of mcpgym's (every line an ATIF document "
        "carrying mcpgym's record); any other file is never overwritten.",
    ),
) -> None:
    """Write a run's episodes in another format (ATIF: every step, call, error and message, and
    mcpgym's own record of the episode in each document's `extra`, so `mcpgym score --format
    atif` gives the same scores). Needs mcpgym[atif]. The default output is one of the run
    directory's own files: `mcpgym run --force` replaces it with the rest of the run.
    """
    from mcpgym.evaluation.formats import atif
    from mcpgym.evaluation.records.compressed import run_dir_problem
    from mcpgym.evaluation.run.run_dir import load_run, trajectories_file
    from mcpgym.evaluation.run.run_owner import EXPORT_FILE_NAMES

    problem = run_dir_problem(run_dir)
    if problem is not None:
        raise InputError(problem)
    target = out or run_dir / EXPORT_FILE_NAMES[fmt.value]
    if (target.exists() or target.is_symlink()) and not force:
        raise InputError(
            f"{target} exists; pass --force to replace an earlier export, or choose another --out "
            "(nothing was overwritten)"
        )
    try:
        trajs = load_run(run_dir)
        if not trajs:  # an empty export would read as a run that exported nothing by mistake
            raise InputError(f"{trajectories_file(run_dir)} holds no episode: nothing to export")
        n = atif.write_atif(trajs, target, replace=force)
    except MCPGymError:
        raise
    except (ImportError, FileExistsError, FileNotFoundError, ValueError) as exc:
        raise InputError(str(exc)) from None
    typer.echo(f"wrote {n} {fmt.value} trajectories to {target}")


__all__ = ["ExportFormat", "export"]
