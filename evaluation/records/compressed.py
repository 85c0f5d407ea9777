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
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import zstandard
from pydantic import BaseModel, ConfigDict, Field

from mcpgym.evaluation.records.atomic import write_atomic
from mcpgym.kernel.exceptions import FormatError
from mcpgym.kernel.input_files import MAX_TRAJECTORY_BYTES, decode_input, file_kind, read_input_bytes
from mcpgym.kernel.shorten import short_text
from mcpgym.kernel.wording import counted

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


class FrameDamage(BaseModel):
    """A stretch of a compressed run file that is not a readable zstd frame.

    Attributes:
        frame: its number among the file's frames, from 1 (a damaged stretch counts as one
            frame, so the valid frames after it keep their numbers as the writer counted them
            when one frame was damaged in place).
        start, end: its byte offsets in the file (``end`` excluded).
        reason: what is wrong, in plain words (bytes that are no frame, a frame that fails to
            decompress, one over the cap, a torn frame, text that is not UTF-8 or no line).
        torn: True when the file ends inside it (a write cut short: the torn tail a killed
            run leaves, a frame header cut at any byte included); False for damage in place.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    frame: int = Field(ge=1)
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    reason: str
    torn: bool = False

    def describe(self) -> str:
        """One phrase: ``frame 3 (bytes 812-1,204): it does not decompress: ...``."""
        return f"frame {self.frame} (bytes {self.start:,}-{self.end:,}): {self.reason}"


@dataclass(frozen=True)
class Frame:
    """One readable zstd frame: its number (from 1), byte offsets and decompressed bytes."""

    number: int
    start: int
    end: int
    data: bytes


@dataclass
class FrameRead:
    """What :func:`read_frames` found in a compressed file: its readable frames, in order,
    and its damaged stretches (each a :class:`FrameDamage`), both by frame number."""

    frames: list[Frame] = field(default_factory=list)
    damaged: list[FrameDamage] = field(default_factory=list)

    @property
    def torn(self) -> bool:
        """Whether a damaged stretch ends the file (a write cut short)."""
        return bool(self.damaged) and self.damaged[-1].torn

    @property
    def in_place(self) -> list[FrameDamage]:
        """The damaged stretches that are not the torn tail (bytes changed in place)."""
        return [d for d in self.damaged if not d.torn]

    @property
    def data(self) -> bytes:
        """The decompressed bytes of every readable frame, concatenated."""
        return b"".join(f.data for f in self.frames)


def compress_line(line: bytes, level: int = LINE_LEVEL) -> bytes:
    """One independent zstd frame holding ``line`` (its content size and a checksum recorded,
    so a changed byte is found when the frame is read)."""
    return zstandard.ZstdCompressor(level=level, write_content_size=True, write_checksum=True).compress(line)


def is_compressed(data: bytes) -> bool:
    """True when ``data`` starts with a zstd frame."""
    return data[:4] == ZSTD_MAGIC


_MAX_BLOCK = 128 * 1024
"""Largest zstd block (RFC 8878, section 3.1.1.2.3: Block_Maximum_Size)."""

_READ_CHUNK = 1 << 20
"""Decompressed bytes asked of the stream reader at a time (the bounded read loop)."""


def _frame_end(view: memoryview, pos: int) -> int | str:
    """The end offset of the zstd frame starting at ``pos`` (its magic number checked by the
    caller), found by walking its header and block headers (RFC 8878, 3.1.1); or why it has
    none: ``"torn"`` when the file ends inside it, else a phrase (a reserved bit or block type,
    a block over 128 KiB). Linear in the frame's number of blocks; nothing is decompressed."""
    size = len(view)
    if pos + 5 > size:
        return "torn"
    fhd = view[pos + 4]
    if fhd & 0x08:
        return "its frame header sets a reserved bit"
    single = (fhd >> 5) & 1
    at = pos + 5 + (0 if single else 1) + (0, 1, 2, 4)[fhd & 3] + ((1 if single else 0), 2, 4, 8)[fhd >> 6]
    while True:
        if at + 3 > size:
            return "torn"
        head = view[at] | view[at + 1] << 8 | view[at + 2] << 16
        last, kind, length = head & 1, (head >> 1) & 3, head >> 3
        if kind == 3:
            return "a block of the reserved type"
        if length > _MAX_BLOCK:
            return f"a block of {length:,} bytes, over zstd's 128 KiB"
        at += 3 + (1 if kind == 1 else length)
        if at > size:
            return "torn"
        if last:
            break
    at += 4 if fhd & 0x04 else 0  # Content_Checksum
    return "torn" if at > size else at


def _decompress(dctx: zstandard.ZstdDecompressor, frame: memoryview, budget: int) -> bytes | str:
    """The decompressed bytes of one whole zstd frame, or why not (a phrase). At most
    ``budget`` bytes are ever produced: a header claiming more is refused unread, and a frame
    that does not say its size is read :data:`_READ_CHUNK` at a time and stopped as soon as it
    passes ``budget`` (a small frame may hold gigabytes)."""
    try:
        claimed = zstandard.frame_content_size(frame[:18])
    except zstandard.ZstdError as exc:
        return f"its frame header is unreadable ({short_text(str(exc), 120)})"
    if claimed > budget:
        return f"it claims {claimed:,} bytes once decompressed, over the {budget:,} that may still be read"
    out: list[bytes] = []
    total = 0
    try:
        with dctx.stream_reader(frame, read_across_frames=False) as reader:
            while True:
                chunk = reader.read(min(_READ_CHUNK, budget + 1 - total))
                if not chunk:
                    break
                total += len(chunk)
                if total > budget:
                    return f"it holds more than the {budget:,} bytes that may still be read once decompressed"
                out.append(chunk)
    except zstandard.ZstdError as exc:
        return f"it does not decompress ({short_text(str(exc), 120)})"
    if claimed >= 0 and total != claimed:
        return f"it holds {total:,} bytes where its header says {claimed:,}"
    return b"".join(out)


def read_frames(data: bytes, *, limit: int = MAX_DECOMPRESSED) -> FrameRead:
    """Read the concatenated zstd frames of ``data`` one by one, in linear time.

    Each frame is delimited by walking its block headers (:func:`_frame_end`) and decompressed
    on its own, through a bounded read loop (:func:`_decompress`): at most ``limit`` bytes
    are produced in all, whatever a header claims. A stretch that is no readable frame (bytes
    changed in place, a frame cut short, garbage between frames, a frame over the cap) costs
    only itself: it becomes one :class:`FrameDamage` and reading resumes at the next zstd
    magic number after its start, so every valid frame after it is read. A damaged stretch
    that runs to the end of the data with no magic number after it is the torn tail.

    Args:
        data: the file's bytes. limit: most decompressed bytes in all.

    Returns:
        A :class:`FrameRead` (readable frames and damaged stretches, by frame number).
    """
    view = memoryview(data)
    size = len(data)
    dctx = zstandard.ZstdDecompressor()
    found = FrameRead()
    pos, number, total = 0, 0, 0
    while pos < size:
        number += 1
        end: int | str = ""
        if data.startswith(ZSTD_MAGIC, pos):
            end = _frame_end(view, pos)
            if isinstance(end, int):
                got = _decompress(dctx, view[pos:end], limit - total)
                if isinstance(got, bytes):
                    found.frames.append(Frame(number, pos, end, got))
                    total += len(got)
                    pos = end
                    continue
                reason = got
            else:
                reason = "the file ends inside it (a write cut short)" if end == "torn" else f"it holds {end}"
        else:
            reason = "these bytes are no zstd frame"
        resume = data.find(ZSTD_MAGIC, pos + 1)
        stop = size if resume < 0 else resume
        torn = resume < 0 and (end == "torn" if data.startswith(ZSTD_MAGIC, pos) else ZSTD_MAGIC.startswith(data[pos:]))
        found.damaged.append(FrameDamage(frame=number, start=pos, end=stop, reason=reason, torn=torn))
        pos = stop
    return found


def decompress_frames(data: bytes, *, name: str = "<data>") -> tuple[bytes, int, bool]:
    """The readable frames of ``data`` decompressed and concatenated (:func:`read_frames`).

    Returns:
        ``(text, good, damaged)``: the decompressed bytes of every readable frame, the byte
        offset where the last readable frame ends, and whether any stretch was damaged.
    """
    found = read_frames(data)
    good = found.frames[-1].end if found.frames else 0
    return found.data, good, bool(found.damaged)


class DamagedFramesWarning(UserWarning):
    """A compressed run file holds damaged frames (bytes changed in place, not a torn tail):
    they are left out, every valid frame after them is read; the message names them by number.
    Shown every time (not once per place in the code): each is about another file or moment."""


warnings.filterwarnings("always", category=DamagedFramesWarning)


@dataclass
class RunFileText:
    """A run file's text, frame by frame (:func:`read_run_file`).

    Attributes:
        frames: ``(frame number, text)`` of every readable frame, in order (a plain file: one
            entry, number 0, its whole text).
        damaged: the stretches that could not be read (:class:`FrameDamage`), a frame whose
            bytes decompress to something that is not UTF-8 included.
        spans: the byte offsets ``(start, end)`` of each entry of ``frames`` in the file.
        compressed: whether the file is zstd frames.
    """

    frames: list[tuple[int, str]]
    damaged: list[FrameDamage]
    spans: list[tuple[int, int]]
    compressed: bool

    @property
    def text(self) -> str:
        """The text of every readable frame, concatenated."""
        return "".join(t for _, t in self.frames)

    @property
    def torn(self) -> bool:
        """Whether the file ends in a torn frame (a write cut short)."""
        return any(d.torn for d in self.damaged)


def looks_compressed(data: bytes) -> bool:
    """True when ``data`` starts with a zstd frame, or is only the start of a magic number (the
    first frame's header cut after one to three bytes: a torn tail, not a plain file)."""
    return is_compressed(data) or (0 < len(data) < 4 and ZSTD_MAGIC.startswith(data))


def read_run_file(
    path: str | Path,
    *,
    what: str = "",
    limit: int = MAX_TRAJECTORY_BYTES,
    decompressed: int = MAX_DECOMPRESSED,
    follow: bool = False,
) -> RunFileText:
    """A run file (``trajectories.jsonl[.zst]``, a snapshot), read with the bounded reader
    (:func:`mcpgym.kernel.input_files.read_input_bytes`: a regular file of at most ``limit``
    bytes on disk; by default a symlink is refused, never followed: ``follow=True`` for a file
    the user named), its zstd frames one by one (:func:`read_frames`, at most ``decompressed``
    bytes in all).

    Raises:
        InputFileError: missing, a symlink, not a regular file, over ``limit``, or (a plain
            file) not UTF-8.
    """
    data = read_input_bytes(path, what=what, limit=limit, follow=follow)
    if not looks_compressed(data):
        return RunFileText([(0, decode_input(data, path, what=what))], [], [(0, len(data))], compressed=False)
    found = read_frames(data, limit=decompressed)
    frames, spans, damaged = [], [], list(found.damaged)
    for f in found.frames:
        try:
            frames.append((f.number, f.data.decode("utf-8")))
            spans.append((f.start, f.end))
        except UnicodeDecodeError as exc:
            reason = f"its text is not UTF-8 ({exc.reason} at byte {exc.start})"
            damaged.append(FrameDamage(frame=f.number, start=f.start, end=f.end, reason=reason))
    damaged.sort(key=lambda d: d.frame)
    return RunFileText(frames, damaged, spans, compressed=True)


def read_text(
    path: str | Path, *, what: str = "", limit: int = MAX_TRAJECTORY_BYTES, follow: bool = False
) -> tuple[str, bool]:
    """The text of a run file, compressed (zstd frames) or plain (:func:`read_run_file`).

    Returns:
        ``(text, damaged)``: the text of every readable frame, and whether any stretch could
        not be read (a torn tail or damage in place); a plain file: its text and False (a torn
        last line is the caller's to detect).

    Raises:
        InputFileError: as :func:`read_run_file` does.
    """
    found = read_run_file(path, what=what, limit=limit, follow=follow)
    return found.text, bool(found.damaged)


def damage_summary(path: str | Path, damaged: list[FrameDamage], *, most: int = 5) -> str:
    """One line naming the damaged frames of ``path`` by number, with what is wrong (the
    first ``most`` in full, then how many more)."""
    shown = "; ".join(d.describe() for d in damaged[:most])
    more = f"; and {len(damaged) - most} more" if len(damaged) > most else ""
    return (
        f"{short_text(str(path), 300)}: {counted(len(damaged), 'damaged frame')} left out, every valid frame "
        f"after kept: {shown}{more}"
    )


def set_damage_aside(path: str | Path, keep: list[tuple[int, int]], damaged: list[FrameDamage]) -> Path | None:
    """Move the damaged bytes of a compressed run file aside, keeping every valid frame.

    The bytes of every stretch of ``damaged`` that is not the torn tail are written, in order,
    to a file of their own next to ``path`` (``<name>.damaged-<n>``, the first free ``n``,
    created exclusively, fsynced); then ``path`` is replaced (temporary file, fsync,
    ``os.replace``) by the bytes of the ``keep`` spans only, so that later appends follow the
    last valid frame. A torn tail (a write cut short) is dropped: it is no frame.

    Returns:
        The file the damaged bytes went to, or None when only a torn tail was cut (or nothing).

    Raises:
        OSError: when a file cannot be written (``path`` is then unchanged).
    """
    p = Path(path)
    data = read_input_bytes(p, what="trajectories file", limit=MAX_TRAJECTORY_BYTES, follow=False)
    kept = b"".join(data[a:b] for a, b in keep)
    aside_bytes = b"".join(data[d.start : d.end] for d in damaged if not d.torn)
    if kept == data:
        return None
    aside = None
    if aside_bytes:
        n = 1
        while True:
            aside = p.with_name(f"{p.name}.damaged-{n}")
            try:
                fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644)
            except FileExistsError:
                n += 1
                continue
            break
        try:
            _write_all(fd, aside_bytes)
        finally:
            os.close(fd)
    write_atomic(p, kept, prefix=f".{p.name}.", suffix=".tmp")
    return aside


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _write_all(fd: int, data: bytes) -> None:
    """Write ``data`` whole to ``fd``, then ``os.fsync`` it."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.fsync(fd)


def repair_tail(path: str | Path) -> bool:
    """Cut a torn last frame off a compressed file (what a killed write leaves), so that later
    appends stay readable; damaged frames in place are moved aside (:func:`set_damage_aside`),
    never deleted; a plain file is left alone. Returns True when the file changed."""
    found = read_run_file(path, what="trajectories file")
    if not found.compressed or not found.damaged:
        return False
    set_damage_aside(path, found.spans, found.damaged)
    return True


__all__ = [
    "DamagedFramesWarning",
    "Frame",
    "FrameDamage",
    "FrameRead",
    "RunFileText",
    "damage_summary",
    "looks_compressed",
    "read_frames",
    "read_run_file",
    "set_damage_aside",
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
