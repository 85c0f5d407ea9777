"""``mcpgym compare RUN_DIR...``: a thin adapter over :mod:`mcpgym.evaluation.report.compare`."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from mcpgym.kernel.exceptions import InputError, MCPGymError


def compare(
    run_dirs: list[Path] = typer.Argument(..., metavar="RUN_DIR", help="Run directories (from `mcpgym run`)."),
    axis: list[str] = typer.Option(
        [],
        "--axis",
        metavar="AXIS",
        help="A condition the runs may differ in: tasks, faults or tools (repeatable). Without it, runs of "
        "different task sets, fault profiles or tool exposures are refused.",
    ),
    baseline: str | None = typer.Option(
        None, "--baseline", metavar="AGENT@RUN", help="Compare this contestant against every other one."
    ),
    out: Path | None = typer.Option(
        None,
        "--out",
        metavar="DIR",
        help="Also write compare.md and compare.html into DIR (not inside a run directory).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON."),
) -> None:
    """Paired differences between agents: success and every behaviour score, per agent and per task.

    Contestants are labelled AGENT@RUN (RUN: the run directory's name). With several runs, an agent
    found in several of them is compared across them (its first run is A); with one run, every pair
    of its agents. Pairs are the same (task, trial) episodes; intervals are paired bootstrap 95%
    intervals (fixed seed), success also gets the exact McNemar test; "no detectable difference"
    when the interval contains 0 (docs/design.md §7, "Comparing runs"). Exit code 2: a path is not
    a run directory, or the runs differ in a condition not named by --axis.
    """
    from rich.console import Console

    from mcpgym.evaluation.report.compare import Axis, build_comparison, print_comparison_table, write_comparison

    if out is not None:
        _refuse_a_run_directory(out)
    try:
        axes = [Axis(a) for a in axis]
    except ValueError:
        raise InputError(f"unknown --axis {axis!r}; each one of {', '.join(a.value for a in Axis)}") from None
    try:
        comp = build_comparison(run_dirs, axes=axes, baseline=baseline)
    except MCPGymError:
        raise
    except (FileNotFoundError, ValueError) as exc:
        raise InputError(str(exc)) from None
    if as_json:
        typer.echo(json.dumps(comp.model_dump(mode="json"), indent=2))
    else:
        print_comparison_table(Console(highlight=False, soft_wrap=False), comp)
    if out is not None:
        md, html = write_comparison(comp, out)
        typer.echo(f"wrote {md} and {html}", err=as_json)


def _refuse_a_run_directory(out: Path) -> None:
    """Refuse ``--out`` inside a directory of ``mcpgym run`` or ``mcpgym proxy`` (it or a folder
    above it carries mcpgym's marker): a run directory holds only what its run writes, so a
    comparison there would stand in the way of that run's ``--force`` (which deletes only what
    it proves its own, never a user's comparison).

    Raises:
        InputError: ``out`` is or is inside such a directory (nothing is written).
    """
    from mcpgym.evaluation.run.run_owner import directory_kind

    where = out.absolute()
    for folder in (where, *where.parents):
        kind = directory_kind(folder) if folder.is_dir() else None
        if kind is not None:
            inside = "is" if folder == where else f"is inside {folder}, which is"
            raise InputError(
                f"--out {out} {inside} a {kind} directory of mcpgym's: it holds only what its {kind} writes, "
                "and a comparison there would block its --force; give --out another folder (e.g. beside it)"
            )


__all__ = ["compare"]
