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
    trajectories.jsonl (an older run) is printed as it is, without blank lines. Every line is
    checked first: a file
    that is not trajectory lines (any other file, another format) is refused and nothing is
    printed. A torn last frame or line (a killed run) is left out and said on stderr; exit 2
    for a missing file or one that is not trajectory lines.
    """
    from mcpgym.evaluation.records.compressed import CompressedFileError, read_text, run_dir_problem
    from mcpgym.evaluation.records.trajectory import TrajectoryFileError, check_trajectory_text
    from mcpgym.evaluation.run.run_dir import trajectories_file

    if path.is_dir():
        problem = run_dir_problem(path)
        if problem is not None:
            raise InputError(problem)
    elif not path.is_file():
        raise InputError(run_dir_problem(path) or f"{path}: not a file")
    file = trajectories_file(path) if path.is_dir() else path
    follow = not path.is_dir()  # a run directory's file is never a symlink followed
    if _is_frames(file):
        _cat_frames(file, follow)
        return
    try:
        text, torn = read_text(file, what="trajectories file", follow=follow)
    except (OSError, UnicodeDecodeError, CompressedFileError) as exc:
        raise InputError(f"{file}: {exc}") from None
    try:
        records, torn_line = check_trajectory_text(file, text)
    except TrajectoryFileError as exc:
        whole = _one_json_document(text)
        if whole is not None:
            raise InputError(
                f"{file} is not a JSONL trajectory file: it holds one JSON {whole} over several lines "
                "(pretty-printed JSON, such as a run's scores.json), where mcpgym cat reads one trajectory "
                "record per line; nothing was printed"
            ) from None
        raise InputError(
            f"{exc}. Not a trajectories file: mcpgym cat prints the trajectory lines mcpgym writes (a run "
            "directory's trajectories.jsonl.zst, or JSON Lines of trajectory records); nothing was printed "
            "(mcpgym score --format F reads other formats)"
        ) from None
    if torn_line:  # a plain file's last line cut short: left out, as a torn last frame is
        text = text[: text.rfind("\n") + 1]
    sys.stdout.write(_without_blank_lines(text))
    sys.stdout.flush()
    if torn:
        typer.secho(f"{file}: the last zstd frame is torn (a write cut short); left out", err=True, fg="yellow")
    if torn_line:
        typer.secho(f"{file}: the last line is torn (a write cut short); left out", err=True, fg="yellow")
    if not records:
        typer.secho(f"{file}: holds no trajectory lines", err=True, fg="yellow")


def _is_frames(file: Path) -> bool:
    """Whether ``file`` starts as zstd frames do (a torn first header included)."""
    from mcpgym.evaluation.records.compressed import looks_compressed

    try:
        with file.open("rb") as fh:
            return looks_compressed(fh.read(4))
    except OSError:
        return False


def _cat_frames(file: Path, follow: bool) -> None:
    """Print the trajectory lines of a file of zstd frames, frame by frame: a damaged frame
    is left out and named by number on stderr, every valid frame after it printed."""
    from mcpgym.evaluation.records.compressed import damage_summary
    from mcpgym.evaluation.records.trajectory import TrajectoryFileError, readable_frames_text

    try:
        text, records, damaged = readable_frames_text(file, follow=follow)
    except (OSError, TrajectoryFileError) as exc:
        raise InputError(str(exc)) from None
    if damaged and not records:  # no frame is a trajectory line: another file, refused as a plain one is
        first = damaged[0].reason.removeprefix("line ")
        raise InputError(
            f"{file}:{first}. Not a trajectories file: no zstd frame holds a trajectory line "
            f"({damage_summary(file, damaged, most=2)}); nothing was printed"
        )
    sys.stdout.write(_without_blank_lines(text))
    sys.stdout.flush()
    torn = [d for d in damaged if d.torn]
    in_place = [d for d in damaged if not d.torn]
    if in_place:
        typer.secho(damage_summary(file, in_place), err=True, fg="yellow")
    if torn:
        typer.secho(f"{file}: the last zstd frame is torn (a write cut short); left out", err=True, fg="yellow")
    if not records:
        typer.secho(f"{file}: holds no trajectory lines", err=True, fg="yellow")


def _one_json_document(text: str) -> str | None:
    """The JSON type name of ``text`` when it is one JSON document spread over several lines
    (not JSON Lines), else None."""
    import json

    from mcpgym.kernel.validation_text import json_type

    if sum(1 for line in text.split("\n") if line.strip()) < 2:
        return None
    try:
        return json_type(json.loads(text))
    except (ValueError, RecursionError):
        return None


def _without_blank_lines(text: str) -> str:
    """``text`` without its blank lines (a trajectory file's blank lines hold no record; jq
    and friends read one record per line). Lines are split at ``\n`` only: a record may hold
    U+2028 and other separators inside its strings."""
    parts = text.split("\n")
    last = parts.pop()
    kept = "".join(f"{line}\n" for line in parts if line.strip())
    return kept + (last if last.strip() else "")


__all__ = ["cat"]
