"""``mcpgym report``: a thin adapter over :func:`mcpgym.evaluation.report.run_report.write_report`."""

from __future__ import annotations

from pathlib import Path

import typer

from mcpgym.kernel.exceptions import InputError, MCPGymError


def report(run_dir: Path = typer.Argument(..., metavar="RUN_DIR", help="A run directory (from `mcpgym run`).")) -> None:
    """Write report.md and report.html into RUN_DIR; print the task grid and faults by kind.

    report.html holds the trajectory viewer too. The terminal shows the task x agent success
    grid and the faults by kind.

    report.html is self-contained: tables, SVG charts and every episode's steps, with no
    network access needed to open it. Every figure is computed again from the trajectories,
    as `score` does (the report says how many differ from the scores stored in the lines).
    """
    from mcpgym.evaluation.cli.common import console
    from mcpgym.evaluation.report.run_report import build_report, print_grids, write_report

    try:
        built = build_report(run_dir)
        md, html = write_report(run_dir, report=built)
    except MCPGymError:
        raise
    except (FileNotFoundError, ValueError) as exc:  # not a run directory; one without episodes
        raise InputError(str(exc)) from None
    print_grids(console(), built)
    typer.echo(f"wrote {md} and {html}")


__all__ = ["report"]
