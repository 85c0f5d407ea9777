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

import errno
import hashlib
import json
import os
import re
import secrets
import stat
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mcpgym.evaluation.records.atomic import write_atomic
from mcpgym.evaluation.records.manifest import MANIFEST_NAME, MANIFEST_VERSION, Manifest, read_manifest
from mcpgym.evaluation.records.snapshots import SNAPSHOT_DIR
from mcpgym.evaluation.run.run_lock import LOCK_NAME
from mcpgym.kernel.exceptions import RunDirectoryError
from mcpgym.kernel.input_files import InputFileError, read_input_text
from mcpgym.kernel.shorten import short_text

MARKER_NAME = ".mcpgym-run"
"""The marker file that proves a directory is an mcpgym run directory (written first)."""

KIND_RUN = "run"
"""The marker's ``kind`` of a run directory of ``mcpgym run``."""
KIND_PROXY = "proxy"
"""The marker's ``kind`` of a record directory of ``mcpgym proxy --record`` / ``mcpgym run --proxy``."""
PROXY_CATALOG = "catalog.json"
"""The proxy's catalog in its record directory: mcpgym's only while its SHA-256 is the
``catalog_sha256`` of the directory's marker (what mcpgym last wrote there)."""
SERVER_LOG_HEADER = "# mcpgym server log: the output of the server mcpgym run started\n"
"""The first line mcpgym writes into a run's ``server.log`` (before the server's output)."""

EXPORT_FILE_NAMES: dict[str, str] = {
    "atif": "trajectories.atif.jsonl",
    "csv": "episodes.csv",
    "leaderboard": "leaderboard.json",
}
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
    "server.log": SERVER_LOG_HEADER,
    "episodes.csv": "run,agent,task_id,trial,",  # mcpgym.evaluation.report.exports.CSV_HEADER_PREFIX
    "leaderboard.json": '{\n  "mcpgym_leaderboard": 1,',  # ... exports.LEADERBOARD_HEADER
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


def write_marker(run_dir: str | Path, run_id: str | None = None, *, replace: bool = False, kind: str = KIND_RUN) -> str:
    """Write the marker of ``run_dir`` (the directory must exist) and return its run id.

    Args:
        run_id: the id to record (default: :func:`new_run_id`).
        replace: replace an existing marker (``--force`` starts a new run in a proven
            directory); otherwise the file is created exclusively.
        kind: what the directory is, :data:`KIND_RUN` (``mcpgym run``) or :data:`KIND_PROXY`
            (``mcpgym proxy --record``), recorded as the marker's ``kind``.

    Raises:
        FileExistsError: without ``replace`` when a marker (or anything of that name) exists.
        OSError: when it cannot be written.
    """
    run_id = run_id or new_run_id()
    fields = {"mcpgym_run": 1, "run_id": run_id, "kind": kind, "created_at": datetime.now(UTC).isoformat()}
    data = json.dumps(fields) + "\n"
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
    data = read_marker_fields(run_dir)
    return None if data is None else data["run_id"]


def read_marker_fields(run_dir: str | Path) -> dict[str, Any] | None:
    """Everything ``run_dir``'s marker holds (``run_id``, ``kind``, ``created_at``, and in a
    proxy record directory ``catalog_sha256``), or None as :func:`read_marker`."""
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
    return data if isinstance(run_id, str) and _RUN_ID.match(run_id) else None


def update_marker(run_dir: str | Path, **fields: Any) -> None:
    """Set ``fields`` in ``run_dir``'s marker (which must be mcpgym's), keeping the rest;
    through a temporary file and ``os.replace``. Call it holding the directory's lock (and,
    in a shared record directory, the write turn).

    Raises:
        RunDirectoryError: the directory has no marker of mcpgym's.
        OSError: when it cannot be written.
    """
    data = read_marker_fields(run_dir)
    if data is None:
        raise RunDirectoryError(f"{run_dir}: its {MARKER_NAME} marker is gone or not mcpgym's")
    _atomic_write(Path(run_dir) / MARKER_NAME, json.dumps({**data, **fields}) + "\n")


def directory_kind(run_dir: str | Path) -> str | None:
    """What a directory with mcpgym's marker is: its marker's ``kind``; for a marker written
    before markers carried one, :data:`KIND_PROXY` when it holds a proxy's files
    (``catalog.json``, or ``trajectories.jsonl`` without a ``manifest.json``), else
    :data:`KIND_RUN`. None without a marker of mcpgym's."""
    data = read_marker_fields(run_dir)
    if data is None:
        return None
    kind = data.get("kind")
    if kind in (KIND_RUN, KIND_PROXY):
        return str(kind)
    root = Path(run_dir)
    has = [n for n in (PROXY_CATALOG, "trajectories.jsonl", MANIFEST_NAME) if (root / n).exists()]
    if PROXY_CATALOG in has or ("trajectories.jsonl" in has and MANIFEST_NAME not in has):
        return KIND_PROXY
    return KIND_RUN


def _kind_refusal(root: Path, found: str, option: str) -> ForeignContentError:
    if found == KIND_PROXY:
        return ForeignContentError(
            root,
            "is a record directory of mcpgym proxy (proxy sessions, recorded by mcpgym proxy --record "
            "or mcpgym run --proxy), not a run of mcpgym run",
            [],
            f"Continue it with mcpgym proxy --record {root} --resume, or choose another {option}.",
        )
    return ForeignContentError(
        root,
        "is a run directory of mcpgym run, not a record directory of mcpgym proxy",
        [],
        f"Choose another {option} (mcpgym proxy never records into a run).",
    )


def _is_plain_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


_TMP_HEADERS = {
    f".{MANIFEST_NAME}.tmp": '{\n  "manifest_version": ',
    ".scores.json.tmp": '{\n  "agents": ',
}
"""What the temporary file of an interrupted manifest / scores write starts with (or it is empty)."""


def _starts_with(path: Path, header: str) -> bool:
    want = header.encode("utf-8")
    try:
        with path.open("rb") as fh:
            return fh.read(len(want)) == want
    except OSError:
        return False


def _starts_with_bytes(path: Path, heads: tuple[bytes, ...]) -> bool:
    try:
        with path.open("rb") as fh:
            return fh.read(8).startswith(heads)
    except OSError:
        return False


def _empty(path: Path) -> bool:
    try:
        return path.lstat().st_size == 0
    except OSError:
        return False


def trajectories_are_ours(path: Path) -> bool:
    """Whether ``path`` (``trajectories.jsonl`` or ``.jsonl.zst``) holds only mcpgym's records:
    empty, or every line an mcpgym trajectory record (a torn last line, a write cut short,
    tolerated after a whole one)."""
    from mcpgym.evaluation.records.trajectory import TrajectoryFileError, iter_trajectories

    if _empty(path):
        return True
    try:
        return sum(1 for _ in iter_trajectories(path, tolerate_truncated_tail=True, states=False)) > 0
    except (TrajectoryFileError, OSError, ValueError):
        return False


def scores_are_ours(path: Path) -> bool:
    """Whether ``path`` parses as mcpgym's ``scores.json`` (an object with ``agents``, valid as
    :class:`mcpgym.evaluation.records.scores.Scoreboard`)."""
    from mcpgym.evaluation.records.scores import Scoreboard

    try:
        data = json.loads(read_input_text(path, what="scores", limit=1 << 28))
        return isinstance(data, dict) and "agents" in data and bool(Scoreboard.model_validate(data) or True)
    except (InputFileError, ValueError):
        return False


def catalog_is_ours(run_dir: Path) -> bool:
    """Whether ``run_dir``'s ``catalog.json`` is byte for byte what mcpgym last wrote there
    (its SHA-256 is the marker's ``catalog_sha256``): a catalog edited by hand, or one of a
    marker that records no digest, is the user's."""
    marker = read_marker_fields(run_dir) or {}
    want = marker.get("catalog_sha256")
    path = run_dir / PROXY_CATALOG
    if not isinstance(want, str) or not _is_plain_file(path):
        return False
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() == want
    except OSError:
        return False


def snapshot_is_ours(path: Path) -> bool:
    """Whether a file of ``snapshots/`` is mcpgym's: a snapshot whose name is the SHA-256 prefix
    of its canonical JSON (``.json.zst``: once decompressed), or the temporary file of one being
    written (empty, or starting as a snapshot or a zstd frame starts)."""
    from mcpgym.evaluation.records.compressed import ZSTD_MAGIC, read_text
    from mcpgym.kernel.input_files import MAX_CONFIG_BYTES

    if path.name.startswith(".tmp-"):
        return _empty(path) or _starts_with_bytes(path, (b"{", ZSTD_MAGIC))
    try:
        text, torn = read_text(path, what="snapshot file", limit=MAX_CONFIG_BYTES)
        data = None if torn else json.loads(text)
    except Exception:  # noqa: BLE001 - anything unreadable is not a snapshot of mcpgym's
        return False
    from mcpgym.evaluation.records.snapshots import snapshot_name

    return isinstance(data, dict) and snapshot_name(data) == f"{SNAPSHOT_DIR}/{path.name.removesuffix('.zst')}"


def _content_is_ours(path: Path) -> bool:
    """Whether a file named as mcpgym's holds what mcpgym writes there (the proof each file
    of a run or record directory needs before ``--force`` deletes it): a report or
    ``server.log`` starts with its header (:data:`OWN_FILE_HEADERS`), an export is one
    :func:`write_atif` wrote, the trajectories are mcpgym's records
    (:func:`trajectories_are_ours`), ``scores.json`` is mcpgym's scores document
    (:func:`scores_are_ours`), the proxy's ``catalog.json`` is what mcpgym last wrote
    (:func:`catalog_is_ours`), a temporary file starts as its document does; the manifest
    is proved by :func:`check_manifest`."""
    name = path.name
    header = OWN_FILE_HEADERS.get(name)
    if header is not None:
        return _starts_with(path, header)
    if name in EXPORT_FILE_NAMES.values():
        from mcpgym.evaluation.formats.atif import written_by_export

        return written_by_export(path)
    if name in ("trajectories.jsonl", "trajectories.jsonl.zst"):
        return trajectories_are_ours(path)
    if name == "scores.json":
        return scores_are_ours(path)
    if name == PROXY_CATALOG:
        return catalog_is_ours(path.parent)
    if name in _TMP_HEADERS:
        return _empty(path) or _starts_with(path, _TMP_HEADERS[name])
    return name == MANIFEST_NAME


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
                if SNAPSHOT_FILE.match(snap.name) and _is_plain_file(snap) and snapshot_is_ours(snap):
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
    command's options, for the advice in the messages (:class:`DirFlags`).

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
    run_dir: str | Path,
    *,
    force: bool,
    extra_names: tuple[str, ...] = (),
    flags: DirFlags = RUN_FLAGS,
    kind: str = KIND_RUN,
) -> str:
    """Make ``run_dir`` (existing; its lock held) ready for a new run and return the run id.

    An empty directory (or one holding only mcpgym's lock) gets a fresh marker. A proven run
    directory (:func:`read_marker`, :func:`check_manifest`; without a manifest a run directory
    may hold only what a run writes before it, its ``server.log``) holding only mcpgym's entries is
    emptied of them when it holds no episode record (a run that failed before its first
    episode) or when ``force`` is given, and gets a new marker. Anything else is refused
    before anything is deleted.

    Args:
        extra_names: file names that are mcpgym's here besides the run files (:func:`own_entries`).
        flags: the command's options, named in the advice (:class:`DirFlags`).
        kind: what the claimer makes of it (:data:`KIND_RUN`, :data:`KIND_PROXY`): a
            directory of the other kind is refused (:func:`directory_kind`).

    Raises:
        ForeignContentError: the directory is not proven mcpgym's, is of the other kind, holds
            entries mcpgym did not write (a file named like mcpgym's whose content is not what
            mcpgym writes there among them, see :func:`_content_is_ours`), or holds a run's
            episodes without ``force``.
    """
    root = Path(run_dir)
    listing = _listing(root)
    if not listing:
        return write_marker(root, kind=kind)
    run_id = read_marker(root)
    if run_id is None:
        raise ForeignContentError(
            root,
            f"is not empty and is not an mcpgym run directory (no {MARKER_NAME} marker)",
            listing,
            f"mcpgym deletes only what it can prove it wrote: choose another {flags.option}, or move these away yourself.",
        )
    found = directory_kind(root)
    if found is not None and found != kind and listing != [MARKER_NAME]:  # a bare marker: either kind's
        raise _kind_refusal(root, found, flags.option)
    manifest = check_manifest(root, run_id, flags)
    has_records = not force and any(  # (with force, own_entries proves them)
        _is_plain_file(traj) and traj.stat().st_size > 0 and bool(_head(traj).strip()) and trajectories_are_ours(traj)
        for traj in (root / "trajectories.jsonl", root / "trajectories.jsonl.zst")
    )
    if has_records:
        raise ForeignContentError(
            root,
            "is not empty: it holds a run with recorded episodes",
            [],
            flags.occupied_advice(),
        )
    ours, foreign = own_entries(root, extra_names)
    if kind == KIND_RUN and manifest is None:  # before its manifest a run writes only its server's log
        early = {"server.log", f".{MANIFEST_NAME}.tmp"}
        foreign += [p.relative_to(root).as_posix() for p in ours if p.name not in early]
        ours = [p for p in ours if p.name in early]
    if foreign:
        raise ForeignContentError(
            root,
            "holds entries mcpgym did not write (a file under one of mcpgym's names counts only "
            "when it holds what mcpgym writes there)",
            foreign,
            f"Choose another {flags.option}, or move these away yourself.",
        )
    for path in ours:
        path.unlink(missing_ok=True)
    snaps = root / SNAPSHOT_DIR
    if snaps.is_dir() and not snaps.is_symlink() and not any(snaps.iterdir()):
        snaps.rmdir()
    return write_marker(root, replace=True, kind=kind)


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


def claim_for_resume(
    run_dir: str | Path, flags: DirFlags = RUN_FLAGS, kind: str = KIND_RUN
) -> tuple[str, Manifest | None]:
    """Check that ``run_dir`` (existing; its lock held) is an mcpgym run that ``--resume`` may
    append to; return its run id and manifest.

    A proven run directory (marker, matching manifest of a version this mcpgym reads) is
    resumed. A run written before markers existed is resumed when its manifest parses as
    mcpgym's (the marker is then written, with a new run id). An empty directory starts a run.
    ``flags`` name the command's options (:class:`DirFlags`), for the messages;
    ``kind`` is what the claimer continues (:data:`KIND_RUN`, :data:`KIND_PROXY`): a directory
    of the other kind is refused (:func:`directory_kind`).

    A run directory with a marker but no manifest (a run stopped before writing it) holding
    anything besides its marker is refused: its plan is unknown, and resuming would run
    another plan.

    Raises:
        ForeignContentError: a directory that is neither, of the other kind, a run without its
            manifest, or a manifest of an unknown version.
    """
    root = Path(run_dir)
    listing = _listing(root)
    if not listing:
        return write_marker(root, kind=kind), None
    run_id = read_marker(root)
    found = directory_kind(root)
    if found is not None and found != kind and listing != [MARKER_NAME]:  # a bare marker: either kind's
        raise _kind_refusal(root, found, flags.option)
    manifest = check_manifest(root, run_id, flags)
    if manifest is None and run_id is not None and kind == KIND_RUN and listing != [MARKER_NAME]:
        raise ForeignContentError(
            root,
            f"cannot be resumed: it has no {MANIFEST_NAME}, the run's plan (tasks, agents, trials, fault "
            "profile); the run stopped before writing it, so what it was asked to run is unknown",
            listing,
            (
                f"Start it again with the options it was started with and {flags.force} (mcpgym deletes only "
                f"its own files there), or choose another {flags.option}."
                if flags.force
                else f"Choose another {flags.option}."
            ),
        )
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
        run_id = write_marker(root, run_id if run_id and _RUN_ID.match(run_id) else None, kind=kind)
    return run_id, manifest


def dir_path_problem(folder: Path, option: str, exc: OSError | None = None) -> str | None:
    """One line naming ``folder`` and what is wrong with it as a directory to write into (given
    by ``option``): a dangling symlink, a file, a path through a file, or the error ``exc``
    raised while creating it or a file in it; None when nothing is known to be wrong."""
    if folder.is_symlink() and not folder.exists():
        return f"{option} {folder} is a symlink to {os.readlink(folder)}, which does not exist: give a directory"
    if folder.exists() and not folder.is_dir():
        return f"{option} {folder} is a file, not a directory: give a directory"
    if exc is None:
        return None
    if exc.errno == errno.ENOTDIR:
        return f"{option} {folder}: a part of that path is a file, not a directory, so it cannot be created"
    where = f" ({exc.filename})" if exc.filename and str(exc.filename) != str(folder) else ""
    what = exc.strerror or type(exc).__name__
    if folder.is_dir():
        return f"{option} {folder}: mcpgym cannot create its files in that directory: {what}{where}"
    return f"{option} {folder} cannot be created as a directory: {what}{where}"


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
    "KIND_PROXY",
    "KIND_RUN",
    "PROXY_CATALOG",
    "SERVER_LOG_HEADER",
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
    "catalog_is_ours",
    "dir_path_problem",
    "directory_kind",
    "read_marker_fields",
    "scores_are_ours",
    "snapshot_is_ours",
    "trajectories_are_ours",
    "update_marker",
    "looks_like_ours",
    "new_run_id",
    "own_entries",
    "read_marker",
    "replace_own_file",
    "write_marker",
]
