"""``mcpgym cat``: a thin adapter over :func:`mcpgym.evaluation.records.compressed.read_text`."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from mcpgym.kernel.exceptions import InputError


def cat(
    path: Path = typer.Argument(
        ..., metavar="RUN_DIR|FILE", help="A run directory, or a trajectories file (.jsonl or .jsonl.zst)."
    ),
) -> None:
    """Print a run's trajectory lines as plain JSON Lines, for jq and friends.

    A run directory's trajectories.jsonl.zst holds one zstd frame per line; this prints them
    decompressed, exactly as written (compact lines keep their snapshot references). A plain
    trajectories.jsonl (an older run) is printed as it is. A torn last frame (a killed run) is
    left out and said on stderr; exit 2 for a missing file.
    """
    from mcpgym.evaluation.records.compressed import CompressedFileError, read_text, run_dir_problem
    from mcpgym.evaluation.run.run_dir import trajectories_file

    if path.is_dir():
        problem = run_dir_problem(path)
        if problem is not None:
            raise InputError(problem)
    elif not path.is_file():
        raise InputError(run_dir_problem(path) or f"{path}: not a file")
    file = trajectories_file(path) if path.is_dir() else path
    try:
        text, torn = read_text(file)
    except (OSError, UnicodeDecodeError, CompressedFileError) as exc:
        raise InputError(f"{file}: {exc}") from None
    sys.stdout.write(text)
    sys.stdout.flush()
    if torn:
        typer.secho(f"{file}: the last zstd frame is torn (a write cut short); left out", err=True, fg="yellow")


__all__ = ["cat"]
