"""Compressed run files: Zstandard frames (the ``zstandard`` package from PyPI).

A run directory writes its trajectory lines to ``trajectories.jsonl.zst`` and its snapshot files
as ``snapshots/<hash>.json.zst``. Each trajectory line is its own, independent zstd frame
appended to the file (the frame holds the line with its ``\\n``), so a run killed in the middle
of a write keeps every finished episode: the readers stop at a torn last frame as they stop at a
torn last line of a plain ``trajectories.jsonl``, and ``load_run(repair=True)`` cuts it off.
The concatenated frames decompress, with any zstd tool (``zstd -dc``), to the plain JSON Lines;
``mcpgym cat RUN_DIR`` prints them for ``jq``. Old, uncompressed run directories still load:
every reader decides by the file's first bytes (the zstd magic number), not its name.
"""

from __future__ import annotations

import os
from pathlib import Path

import zstandard

from mcpgym.kernel.exceptions import FormatError
from mcpgym.kernel.input_files import MAX_TRAJECTORY_BYTES, decode_input, file_kind, read_input_bytes
from mcpgym.kernel.shorten import short_text

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
"""The first four bytes of every zstd frame (RFC 8878, section 3.1.1)."""

LINE_LEVEL = 9
"""zstd level of one trajectory line (a few KB: about 0.2 ms a line, a quarter of the bytes)."""

SNAPSHOT_LEVEL = 12
"""zstd level of a snapshot file (written once per distinct state; tens of KB to a few MB)."""

MAX_DECOMPRESSED = 512 * 1024 * 1024
"""Largest decompressed size of one file read here (bytes): a frame claiming more is refused
rather than filling memory (a zstd bomb)."""


TRAJECTORIES = "trajectories.jsonl"
"""An older run directory's plain trajectory lines."""

TRAJECTORIES_ZST = "trajectories.jsonl.zst"
"""The trajectory lines of a run as zstd frames, one per line (what ``mcpgym run`` writes; a
directory holding the plain :data:`TRAJECTORIES` is an older run and is read, and resumed, as it is)."""


def trajectories_file(run_dir: str | Path) -> Path:
    """The trajectory file of a run directory: :data:`TRAJECTORIES_ZST` when it exists, else
    :data:`TRAJECTORIES` when that exists (an older run), else :data:`TRAJECTORIES_ZST` (a new run)."""
    p = Path(run_dir)
    if not (p / TRAJECTORIES_ZST).exists() and (p / TRAJECTORIES).exists():
        return p / TRAJECTORIES
    return p / TRAJECTORIES_ZST


def run_dir_problem(path: str | Path) -> str | None:
    """Why ``path`` is not a run directory whose trajectories can be read, as one message
    naming what is looked for (:data:`TRAJECTORIES_ZST`, or an older run's :data:`TRAJECTORIES`),
    or None when it holds one of them. Every command that takes a run directory says this."""
    p = Path(path)
    if not p.exists():
        return f"{p}: no such file or directory (a run directory holds {TRAJECTORIES_ZST})"
    if not p.is_dir():
        return f"{p} is not a run directory (a directory holding {TRAJECTORIES_ZST})"
    file = trajectories_file(p)
    if file.is_file():
        return None
    if file.exists() or file.is_symlink():  # there, but no file: say what it is
        return f"{p} is not a run directory: its {file.name} {_not_a_file(file)}"
    return f"{p} is not a run directory: it has no {TRAJECTORIES_ZST} (nor an older run's {TRAJECTORIES})"


def _not_a_file(path: Path) -> str:
    """What ``path`` (there, but no regular file) is, as a phrase: ``is a directory, not a
    file``, ``is a symlink to /dev/zero (a character device), not a file``..."""
    kind = file_kind(path)
    if path.is_symlink():
        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        shown = short_text(target, 200)
        if not path.exists():
            return f"is a symlink to {shown}, which does not exist"
        return f"is a symlink to {shown} ({kind}), not a file"
    return f"is {kind}, not a file"


class CompressedFileError(FormatError, ValueError):
    """A compressed run file that cannot be read: corrupt frame, or larger than
    :data:`MAX_DECOMPRESSED` once decompressed. The message names the file."""


def compress_line(line: bytes, level: int = LINE_LEVEL) -> bytes:
    """One independent zstd frame holding ``line`` (its content size recorded in the header)."""
    return zstandard.ZstdCompressor(level=level, write_content_size=True).compress(line)


def is_compressed(data: bytes) -> bool:
    """True when ``data`` starts with a zstd frame."""
    return data[:4] == ZSTD_MAGIC


def decompress_frames(data: bytes, *, name: str = "<data>") -> tuple[bytes, int, bool]:
    """Decompress the concatenated zstd frames of ``data``.

    Returns:
        ``(text, good, torn)``: the decompressed bytes of every complete frame, the byte offset
        in ``data`` where the complete frames end, and whether an incomplete or unreadable
        frame follows them (a write cut short); a reader skips it as it skips a torn last line.

    Raises:
        CompressedFileError: when the decompressed data would exceed :data:`MAX_DECOMPRESSED`.
    """
    out: list[bytes] = []
    total = 0
    pos = 0
    dctx = zstandard.ZstdDecompressor()
    while pos < len(data):
        claimed = zstandard.frame_content_size(data[pos : pos + 18]) if len(data) - pos >= 6 else -1
        if claimed > MAX_DECOMPRESSED - total:
            raise CompressedFileError(f"{name}: more than {MAX_DECOMPRESSED} bytes once decompressed")
        dobj = dctx.decompressobj()
        try:
            chunk = dobj.decompress(data[pos:])
        except zstandard.ZstdError:
            return b"".join(out), pos, True
        if not dobj.eof:
            return b"".join(out), pos, True
        total += len(chunk)
        if total > MAX_DECOMPRESSED:
            raise CompressedFileError(f"{name}: more than {MAX_DECOMPRESSED} bytes once decompressed")
        out.append(chunk)
        pos = len(data) - len(dobj.unused_data)
    return b"".join(out), pos, False


def read_text(path: str | Path, *, what: str = "", limit: int = MAX_TRAJECTORY_BYTES) -> tuple[str, bool]:
    """The text of a run file, compressed (zstd frames) or plain, read with the bounded reader
    (:func:`mcpgym.kernel.input_files.read_input_bytes`: a regular file of at most ``limit``
    bytes on disk).

    Returns:
        ``(text, torn)``: for a compressed file, the text of its complete frames and whether a
        torn frame ends it; for a plain file, its text (a BOM dropped) and False (a torn last
        line is the caller's to detect).

    Raises:
        InputFileError: missing, not a regular file, over ``limit``, or not UTF-8.
        CompressedFileError: see :func:`decompress_frames`.
    """
    data = read_input_bytes(path, what=what, limit=limit)
    if not is_compressed(data):
        return decode_input(data, path, what=what), False
    text, _, torn = decompress_frames(data, name=str(path))
    return decode_input(text, path, what=what), torn


def repair_tail(path: str | Path) -> bool:
    """Cut a torn last frame off a compressed file (what a killed write leaves), so that later
    appends stay readable; a plain file is left alone. Returns True when something was cut."""
    p = Path(path)
    data = p.read_bytes()
    if not is_compressed(data):
        return False
    _, good, torn = decompress_frames(data, name=str(p))
    if torn:
        with p.open("r+b") as fh:
            fh.truncate(good)
    return torn


__all__ = [
    "LINE_LEVEL",
    "MAX_DECOMPRESSED",
    "SNAPSHOT_LEVEL",
    "TRAJECTORIES",
    "TRAJECTORIES_ZST",
    "ZSTD_MAGIC",
    "CompressedFileError",
    "compress_line",
    "run_dir_problem",
    "decompress_frames",
    "is_compressed",
    "read_text",
    "repair_tail",
    "trajectories_file",
]
