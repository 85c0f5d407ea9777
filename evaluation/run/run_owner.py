"""Which files of a directory are mcpgym's: the proof a run directory is ours, and the only
deletions and replacements mcpgym makes there.

A run directory is mcpgym's **only by proof**, never by file names alone:

* the marker file ``.mcpgym-run`` (:data:`MARKER_NAME`), written *first* into a new run
  directory (before any other run file; exclusive create), holds ``{"mcpgym_run": 1,
  "run_id": <32 hex digits>, "created_at": ...}``;
* the run's ``manifest.json``, when there is one, parses as an mcpgym manifest of a version
  this mcpgym reads and carries the same ``run_id``.

Inside a proven run directory mcpgym deletes only its own entries (:func:`own_entries`): the
run files by name (:data:`RUN_FILE_NAMES`, regular files, never a symlink: what ``mcpgym run``,
``report`` and ``export`` write there by default), and inside
``snapshots/`` only files named like a snapshot (``<20 hex digits>.json``, ``.json.zst``) or its temporary
file (``.tmp-*.json``), one by one, never by ``rmtree``; the folder itself only once empty.
Anything else (a file of another name, a subfolder, a symlink, a foreign manifest) makes the
whole operation refuse, **before anything is deleted**, with the list of what is in the way
(:class:`ForeignContentError`). ``--force`` needs the same proof.

Outside run directories, a file mcpgym writes into a folder the user names (``report.md``,
``report.html``) replaces an existing file only when that file starts as mcpgym writes it
(:func:`replace_own_file`), and always through a temporary file and ``os.replace``, so a
symlink is replaced rather than written through.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import stat
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from mcpgym.evaluation.records.atomic import write_atomic
from mcpgym.evaluation.records.manifest import MANIFEST_NAME, MANIFEST_VERSION, Manifest, read_manifest
from mcpgym.evaluation.records.snapshots import SNAPSHOT_DIR
from mcpgym.evaluation.run.run_lock import LOCK_NAME
from mcpgym.kernel.exceptions import RunDirectoryError
from mcpgym.kernel.input_files import InputFileError, read_input_text
from mcpgym.kernel.shorten import short_text

MARKER_NAME = ".mcpgym-run"
"""The marker file that proves a directory is an mcpgym run directory (written first)."""

EXPORT_FILE_NAMES: dict[str, str] = {"atif": "trajectories.atif.jsonl"}
"""Export format -> the file ``mcpgym export`` writes into the run directory when no ``--out``
is given: a run file like the others (``run --force`` deletes it with them, as it describes the
run being replaced)."""

RUN_FILE_NAMES = (
    "trajectories.jsonl",
    "trajectories.jsonl.zst",
    "scores.json",
    MANIFEST_NAME,
    "server.log",
    "report.md",
    "report.html",
    f".{MANIFEST_NAME}.tmp",
    ".scores.json.tmp",
    *EXPORT_FILE_NAMES.values(),
)
"""The files of a run directory mcpgym writes, ``mcpgym run``, ``report`` and ``export`` (and,
in a proven run directory, may delete)."""

OWN_FILE_HEADERS = {
    "report.md": "# mcpgym run report\n",
    "report.html": '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
}
"""What mcpgym writes first into these run files: one that does not start so (edited by hand,
or the user's own under that name) is not mcpgym's, so ``--force`` leaves it in the way, as
``mcpgym report`` does (:func:`check_own_file`)."""

SNAPSHOT_FILE = re.compile(r"^(?:[0-9a-f]{20}\.json(?:\.zst)?|\.tmp-[A-Za-z0-9_]+\.json)$")
"""Names of the files mcpgym writes in ``snapshots/``: a snapshot or a snapshot being written."""

_LEGACY_KEYS = ("versions", "invocations", "started_at")
_RUN_ID = re.compile(r"^[0-9a-f]{32}$")
MAX_LISTED = 10


@dataclass(frozen=True)
class DirFlags:
    """How the command that was given a directory spells its options, for the advice of the
    refusals here: every message names only options the command has.

    Attributes:
        command: the command (``mcpgym run``). option: the option that gave the directory
            (``--out``, ``--record``). resume / force: its options that continue / replace a
            run there, None when the command has none.
    """

    command: str = "mcpgym run"
    option: str = "--out"
    resume: str | None = "--resume"
    force: str | None = "--force"

    def occupied_advice(self) -> str:
        """What to do with a directory that holds a recorded run: only this command's options."""
        ways = [f"pass {self.resume} to continue it"] if self.resume else []
        if self.force:
            ways.append(
                f"{self.force} to replace its run files" if ways else f"pass {self.force} to replace its run files"
            )
        ways.append(f"choose another {self.option}" if ways else f"Choose another {self.option}")
        text = ", ".join(ways[:-1]) + f", or {ways[-1]}" if len(ways) > 1 else ways[0]
        return text[:1].upper() + text[1:] + "."


RUN_FLAGS = DirFlags()
"""``mcpgym run --out DIR`` (the default of every function here)."""


class ForeignContentError(RunDirectoryError, RuntimeError):
    """A directory holds what mcpgym did not write, so mcpgym deletes and replaces nothing there.

    Attributes:
        path: the directory (or file). in_the_way: the entries that stopped it, relative to
            ``path`` (``notes.txt``, ``snapshots/2025-backup/``...).
    """

    def __init__(self, path: Path, problem: str, in_the_way: list[str], advice: str) -> None:
        self.path = path
        self.in_the_way = list(in_the_way)
        shown = ", ".join(short_text(e, 120) for e in self.in_the_way[:MAX_LISTED])
        more = f" and {len(self.in_the_way) - MAX_LISTED} more" if len(self.in_the_way) > MAX_LISTED else ""
        listed = f"; in the way: {shown}{more}" if self.in_the_way else ""
        super().__init__(f"{path}: {problem}{listed}. Nothing was deleted. {advice}")


def new_run_id() -> str:
    """A fresh run id: 128 random bits as 32 hex digits."""
    return secrets.token_hex(16)


def write_marker(run_dir: str | Path, run_id: str | None = None, *, replace: bool = False) -> str:
    """Write the marker of ``run_dir`` (the directory must exist) and return its run id.

    Args:
        run_id: the id to record (default: :func:`new_run_id`).
        replace: replace an existing marker (``--force`` starts a new run in a proven
            directory); otherwise the file is created exclusively.

    Raises:
        FileExistsError: without ``replace`` when a marker (or anything of that name) exists.
        OSError: when it cannot be written.
    """
    run_id = run_id or new_run_id()
    data = json.dumps({"mcpgym_run": 1, "run_id": run_id, "created_at": datetime.now(UTC).isoformat()}) + "\n"
    path = Path(run_dir) / MARKER_NAME
    if replace:
        _atomic_write(path, data)
    else:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    return run_id


def read_marker(run_dir: str | Path) -> str | None:
    """The run id in ``run_dir``'s marker, or None when there is no marker or it is not
    mcpgym's (not a regular file, not the JSON mcpgym writes, no well-formed run id)."""
    path = Path(run_dir) / MARKER_NAME
    if path.is_symlink() or not path.is_file():
        return None
    try:
        data = json.loads(read_input_text(path, what="run marker", limit=4096))
    except (InputFileError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("mcpgym_run") != 1:
        return None
    run_id = data.get("run_id")
    return run_id if isinstance(run_id, str) and _RUN_ID.match(run_id) else None


def _is_plain_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def _content_is_ours(path: Path) -> bool:
    """Whether a run file named as mcpgym's holds what mcpgym writes there: a report starts
    with its header (:data:`OWN_FILE_HEADERS`), an export is one :func:`write_atif` wrote;
    other names are taken by name."""
    header = OWN_FILE_HEADERS.get(path.name)
    if header is not None:
        want = header.encode("utf-8")
        try:
            with path.open("rb") as fh:
                return fh.read(len(want)) == want
        except OSError:
            return False
    if path.name in EXPORT_FILE_NAMES.values():
        from mcpgym.evaluation.formats.atif import written_by_export

        return written_by_export(path)
    return True


def own_entries(run_dir: Path, extra_names: tuple[str, ...] = ()) -> tuple[list[Path], list[str]]:
    """Split what ``run_dir`` holds into mcpgym's entries and the rest.

    Args:
        extra_names: more file names that are mcpgym's in this directory (the proxy's
            ``catalog.json``, see :mod:`mcpgym.evaluation.proxy.record`), besides
            :data:`RUN_FILE_NAMES`.

    Returns:
        ``(ours, in_the_way)``: ``ours`` are the paths mcpgym may delete (run files, snapshot
        files; not the marker, the lock or the ``snapshots`` folder itself), ``in_the_way``
        everything else, relative to ``run_dir`` (folders end with ``/``).
    """
    ours: list[Path] = []
    foreign: list[str] = []
    for child in sorted(run_dir.iterdir()):
        name = child.name
        if name in (MARKER_NAME, LOCK_NAME) and _is_plain_file(child):
            continue
        if (name in RUN_FILE_NAMES or name in extra_names) and _is_plain_file(child) and _content_is_ours(child):
            ours.append(child)
        elif name == SNAPSHOT_DIR and child.is_dir() and not child.is_symlink():
            for snap in sorted(child.iterdir()):
                if SNAPSHOT_FILE.match(snap.name) and _is_plain_file(snap):
                    ours.append(snap)
                else:
                    foreign.append(f"{SNAPSHOT_DIR}/{snap.name}{'/' if snap.is_dir() else ''}")
        else:
            foreign.append(f"{name}{'/' if child.is_dir() and not child.is_symlink() else ''}")
    return ours, foreign


def _listing(run_dir: Path) -> list[str]:
    out = []
    for child in sorted(run_dir.iterdir()):
        if child.name == LOCK_NAME:
            continue
        out.append(f"{child.name}{'/' if child.is_dir() and not child.is_symlink() else ''}")
    return out


def check_manifest(run_dir: Path, run_id: str | None, flags: DirFlags = RUN_FLAGS) -> Manifest | None:
    """The manifest of ``run_dir`` when it parses as mcpgym's, of a version this mcpgym reads,
    and (given ``run_id``) of that run; None when there is none. ``flags`` name the
    command's options, for the advice in the messages.

    Raises:
        ForeignContentError: a manifest that is not valid, of another version, or of
            another run (its message names the version this mcpgym reads).
    """
    path = run_dir / MANIFEST_NAME
    if not path.exists() and not path.is_symlink():
        return None
    if not _is_plain_file(path):
        raise ForeignContentError(
            run_dir, f"{MANIFEST_NAME} is not a regular file", [MANIFEST_NAME], f"Choose another {flags.option}."
        )
    try:
        manifest = read_manifest(run_dir)
    except ValueError as exc:  # names the file, and for another version the one this mcpgym reads
        raise ForeignContentError(
            run_dir,
            f"its manifest is not one this mcpgym can use: {exc}",
            [MANIFEST_NAME],
            f"Choose another {flags.option}.",
        ) from None
    assert manifest is not None
    if "manifest_version" not in manifest.model_fields_set:
        raise ForeignContentError(
            run_dir,
            f"its {MANIFEST_NAME} has no manifest_version (this mcpgym reads manifest_version {MANIFEST_VERSION})",
            [MANIFEST_NAME],
            f"Choose another {flags.option}.",
        )
    got = manifest.run_id
    if run_id is not None and got is not None and got != run_id:
        raise ForeignContentError(
            run_dir,
            f"its {MANIFEST_NAME} belongs to run {short_text(str(got), 40)}, not to the run "
            f"{run_id} of its {MARKER_NAME} marker",
            [MANIFEST_NAME],
            f"Choose another {flags.option}.",
        )
    return manifest


def claim_new_run(
    run_dir: str | Path, *, force: bool, extra_names: tuple[str, ...] = (), flags: DirFlags = RUN_FLAGS
) -> str:
    """Make ``run_dir`` (existing; its lock held) ready for a new run and return the run id.

    An empty directory (or one holding only mcpgym's lock) gets a fresh marker. A proven run
    directory (:func:`read_marker`, :func:`check_manifest`) holding only mcpgym's entries is
    emptied of them when it holds no episode record (a run that failed before its first
    episode) or when ``force`` is given, and gets a new marker. Anything else is refused
    before anything is deleted.

    Args:
        extra_names: file names that are mcpgym's here besides the run files (:func:`own_entries`).
        flags: the command's options, named in the advice (:class:`DirFlags`).

    Raises:
        ForeignContentError: the directory is not proven mcpgym's, holds entries mcpgym did not
            write, or holds a run's episodes without ``force``.
    """
    root = Path(run_dir)
    listing = _listing(root)
    if not listing:
        return write_marker(root)
    run_id = read_marker(root)
    if run_id is None:
        raise ForeignContentError(
            root,
            f"is not empty and is not an mcpgym run directory (no {MARKER_NAME} marker)",
            listing,
            f"mcpgym deletes only what it can prove it wrote: choose another {flags.option}, or move these away yourself.",
        )
    check_manifest(root, run_id, flags)
    ours, foreign = own_entries(root, extra_names)
    if foreign:
        raise ForeignContentError(
            root,
            "holds entries mcpgym did not write",
            foreign,
            f"Choose another {flags.option}, or move these away yourself.",
        )
    has_records = any(
        _is_plain_file(traj) and traj.stat().st_size > 0 and bool(_head(traj).strip())
        for traj in (root / "trajectories.jsonl", root / "trajectories.jsonl.zst")
    )
    if has_records and not force:
        raise ForeignContentError(
            root,
            "is not empty: it holds a run with recorded episodes",
            [],
            flags.occupied_advice(),
        )
    for path in ours:
        path.unlink(missing_ok=True)
    snaps = root / SNAPSHOT_DIR
    if snaps.is_dir() and not snaps.is_symlink() and not any(snaps.iterdir()):
        snaps.rmdir()
    return write_marker(root, replace=True)


def _head(path: Path) -> bytes:
    with path.open("rb") as fh:
        return fh.read(1 << 16) + (b"x" if fh.read(1) else b"")


def looks_like_ours(manifest: Manifest) -> bool:
    """Whether a manifest found without a ``.mcpgym-run`` marker holds what every mcpgym
    manifest holds (``_LEGACY_KEYS``): a run written before markers existed, not a file of
    that name the user made."""
    return all(key in manifest.model_fields_set for key in _LEGACY_KEYS)


def check_unmarked_manifest(run_dir: str | Path, manifest: Manifest) -> None:
    """Refuse a directory without the ``.mcpgym-run`` marker whose manifest is not mcpgym's
    (:func:`looks_like_ours`), before ``--resume`` reads the manifest for its settings: the same
    refusal :func:`claim_for_resume` makes, so a user's own ``manifest.json`` is named as
    such, not as a run whose settings do not validate.

    Raises:
        ForeignContentError: for such a directory (nothing is changed).
    """
    root = Path(run_dir)
    if read_marker(root) is None and not looks_like_ours(manifest):
        raise ForeignContentError(
            root,
            f"has no {MARKER_NAME} marker and its {MANIFEST_NAME} lacks what every mcpgym manifest "
            f"holds ({', '.join(_LEGACY_KEYS)})",
            _listing(root),
            "Give the directory of the run to continue.",
        )


def claim_for_resume(run_dir: str | Path, flags: DirFlags = RUN_FLAGS) -> tuple[str, Manifest | None]:
    """Check that ``run_dir`` (existing; its lock held) is an mcpgym run that ``--resume`` may
    append to; return its run id and manifest.

    A proven run directory (marker, matching manifest of a version this mcpgym reads) is
    resumed. A run written before markers existed is resumed when its manifest parses as
    mcpgym's (the marker is then written, with a new run id). An empty directory starts a run.
    ``flags`` name the command's options, for the messages.

    Raises:
        ForeignContentError: a directory that is neither, or a manifest of an unknown version.
    """
    root = Path(run_dir)
    listing = _listing(root)
    if not listing:
        return write_marker(root), None
    run_id = read_marker(root)
    manifest = check_manifest(root, run_id, flags)
    if run_id is None:
        if manifest is None:
            raise ForeignContentError(
                root,
                f"is not an mcpgym run directory (no {MARKER_NAME} marker, no {MANIFEST_NAME})",
                listing,
                "Give the directory of the run to continue.",
            )
        check_unmarked_manifest(root, manifest)
        if (root / MARKER_NAME).exists() or (root / MARKER_NAME).is_symlink():
            raise ForeignContentError(
                root, f"its {MARKER_NAME} is not mcpgym's marker", [MARKER_NAME], f"Choose another {flags.option}."
            )
        run_id = manifest.run_id
        run_id = write_marker(root, run_id if run_id and _RUN_ID.match(run_id) else None)
    return run_id, manifest


def _atomic_write(path: Path, text: str) -> None:
    write_atomic(path, text.encode("utf-8", errors="backslashreplace"), prefix=f".{path.name}.", suffix=".tmp")


def replace_own_file(path: str | Path, text: str, header: str) -> None:
    """Write ``text`` to ``path``, replacing an existing file only when it is mcpgym's.

    An existing ``path`` is replaced when it is a regular file (not a symlink) whose content
    starts with ``header`` (what mcpgym writes first into such a file); the write goes through a
    temporary file and ``os.replace``.

    Raises:
        ForeignContentError: ``path`` exists and is not such a file (nothing is changed).
        OSError: when it cannot be written.
    """
    p = Path(path)
    check_own_file(p, header)
    _atomic_write(p, text)


def check_own_file(path: str | Path, header: str) -> None:
    """Check that ``path`` is missing or a regular file starting with ``header`` (mcpgym's).

    Raises:
        ForeignContentError: when it is not (a symlink, a folder, a file of other content).
    """
    p = Path(path)
    if p.exists() or p.is_symlink():
        mine = _is_plain_file(p)
        if mine:
            want = header.encode("utf-8")
            with p.open("rb") as fh:
                mine = fh.read(len(want)) == want
        if not mine:
            raise ForeignContentError(
                p.parent,
                f"{p.name} exists and was not written by mcpgym",
                [p.name],
                "Move it away or rename it, then try again.",
            )


__all__ = [
    "RUN_FLAGS",
    "DirFlags",
    "EXPORT_FILE_NAMES",
    "OWN_FILE_HEADERS",
    "MARKER_NAME",
    "RUN_FILE_NAMES",
    "SNAPSHOT_FILE",
    "ForeignContentError",
    "check_manifest",
    "check_unmarked_manifest",
    "check_own_file",
    "claim_for_resume",
    "claim_new_run",
    "looks_like_ours",
    "new_run_id",
    "own_entries",
    "read_marker",
    "replace_own_file",
    "write_marker",
]
