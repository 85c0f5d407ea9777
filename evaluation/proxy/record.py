"""Recording a proxied session as a trajectory (``mcpgym proxy --record DIR``).

Each session appends one line to ``DIR/trajectories.jsonl`` (the format ``mcpgym run``
writes, with the fault ledger) and rewrites ``DIR/catalog.json`` with the classification of
every upstream tool seen so far (rows of earlier sessions kept), so that

    mcpgym score DIR --catalog DIR/catalog.json

scores it with the tool kinds the proxy used. There is no world for an outside server: the
snapshots are empty and the outcome is unknown unless the line carries checks
(``mcpgym run --proxy``).

``DIR`` is claimed before the proxy serves anything (:func:`hold_record_dir`) by the rules
of a run directory (:mod:`mcpgym.evaluation.run.run_owner`): it must be missing, empty, or a
record directory mcpgym made (its ``.mcpgym-run`` marker, of kind ``proxy``); a directory
holding a recorded session needs ``--resume`` (append) or ``--force`` (start over: each of
mcpgym's files deleted only when it holds what mcpgym wrote there). The claim is held for the
proxy's whole life: the directory's lock is held shared, so ``--resume`` sessions append side
by side (one write at a time) while ``--force`` and ``mcpgym run`` are refused. A catalog
passed with ``--catalog`` is never rewritten, nor is a ``catalog.json`` changed by hand since
mcpgym wrote it (the marker keeps the SHA-256 of what mcpgym last wrote): later sessions
classify with it and ``mcpgym score DIR`` scores with it.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import stat
import time
import warnings
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from mcpgym.evaluation.proxy.classify import UPSTREAM_APP, ToolClassifier
from mcpgym.evaluation.records.atomic import write_atomic
from mcpgym.evaluation.records.compressed import TRAJECTORIES_ZST
from mcpgym.evaluation.records.manifest import MANIFEST_NAME
from mcpgym.evaluation.records.trajectory import Trajectory, append_trajectory, steps_from_call_log
from mcpgym.evaluation.run.run_lock import LOCK_NAME, RunDirLocked, hold_lock
from mcpgym.evaluation.run.run_owner import (
    KIND_PROXY,
    MARKER_NAME,
    DirFlags,
    ForeignContentError,
    catalog_is_ours,
    claim_for_resume,
    claim_new_run,
    dir_path_problem,
    read_marker,
    trajectories_are_ours,
    update_marker,
    write_marker,
)
from mcpgym.evaluation.scoring.scorer import score_episode
from mcpgym.evaluation.scoring.tool_catalog import Catalog
from mcpgym.kernel.exceptions import RunDirectoryError
from mcpgym.server.proxy.server import ProxySession

TRAJECTORIES = "trajectories.jsonl"
CATALOG = "catalog.json"
RECORD_FILE_NAMES = (CATALOG,)
"""Files of a record directory that are mcpgym's besides the run files (in a proven directory)."""
RECORD_LOCK_WAIT = 10.0
"""Wall seconds a finished session waits for the directory's lock (another writer holds it)."""
CLAIM_WAIT = 2.0
"""Wall seconds a ``--resume`` proxy waits at start for the directory's lock held exclusively
(another proxy claiming it with ``--force`` or a plain ``--record``, which then share it);
``mcpgym run`` holds it for its whole run, so the proxy is refused after that."""


class RecordDirError(RunDirectoryError, ValueError):
    """``--record DIR`` cannot be used: a file, a catalog passed with ``--catalog`` inside it,
    a directory mcpgym did not make or one holding sessions without ``--resume``/``--force``.
    Nothing was changed; the message says what to do."""


def _plain_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return a.resolve() == b.resolve()


class RecordDir:
    """A record directory claimed for the sessions of this process (:func:`hold_record_dir`).

    Attributes:
        path: the directory.
        user_catalog: its ``catalog.json`` when that is the user's (changed by hand since
            mcpgym wrote it, or of a marker that records no digest): the proxy classifies with
            it and never rewrites it; None otherwise.
    """

    def __init__(self, path: Path, user_catalog: Path | None, command: str = "mcpgym proxy --record") -> None:
        self.path, self.user_catalog, self.command = path, user_catalog, command

    def record(self, traj: Trajectory, classifier: ToolClassifier) -> Path:
        """:func:`record_session` into this directory."""
        return record_session(self.path, traj, classifier, command=self.command)


@contextmanager
def hold_record_dir(
    folder: str | Path,
    *,
    resume: bool = False,
    force: bool = False,
    catalog: str | Path | None = None,
    option: str = "--record",
    command: str | None = None,
) -> Iterator[RecordDir]:
    """Claim ``folder`` for the sessions of ``mcpgym proxy --record`` before the proxy starts,
    and hold it in use until the ``with`` block ends (the proxy's whole life).

    The rules are a run directory's (:mod:`mcpgym.evaluation.run.run_owner`): a missing or
    empty directory is created and gets the ``.mcpgym-run`` marker of a record directory; a
    directory mcpgym made (the marker) holding no recorded session is reused; one holding
    sessions is appended to with ``resume`` or emptied of mcpgym's files with ``force`` (each
    file only when it holds what mcpgym wrote there: trajectory records, the ``catalog.json``
    whose SHA-256 the marker keeps). Anything else is refused before anything is written or deleted.

    The directory's lock (:mod:`mcpgym.evaluation.run.run_lock`) is held *shared* for the
    block: other ``--resume`` sessions may append meanwhile (each write takes its turn), while
    ``--force``, a plain ``--record`` (both claim it exclusively, then share it) and
    ``mcpgym run`` are refused, naming this process.

    Args:
        catalog: the ``--catalog`` file, which must not be ``folder/catalog.json`` (the proxy
            rewrites that file and never rewrites a catalog the user passed).
        option: the flag that named ``folder``, as messages name it (``--record``; ``--out``
            for ``mcpgym run --proxy``). command: the command line the directory's lock names
            (default: ``mcpgym proxy --record DIR`` and its flags).

    Yields:
        The :class:`RecordDir`.

    Raises:
        RecordDirError: ``folder`` is empty, a file, a dangling symlink or cannot be created or
            written (one line naming it); ``catalog`` is its ``catalog.json``; ``resume`` and
            ``force`` together; a directory that is not mcpgym's, holds entries mcpgym did not
            write (``force``), holds sessions without ``resume``/``force``, or is a run of
            ``mcpgym run``; its lock is held (exclusively, or at all for ``force``) by another
            process. The message names what is in the way and what to do.
    """
    if str(folder) == "":
        raise RecordDirError(f"{option} needs a directory: an empty path would record into the current directory")
    root = Path(folder)
    if resume and force:
        raise RecordDirError("--resume and --force exclude each other: append to the sessions, or start over")
    problem = dir_path_problem(root, option)
    if problem is not None:
        raise RecordDirError(problem)
    if catalog is not None and _same_file(Path(catalog), root / CATALOG):
        raise RecordDirError(
            f"--catalog {catalog} is {root / CATALOG}, the file {option} {root} rewrites with the "
            "classification of every session; the proxy never rewrites a catalog you pass: copy it out "
            f"of {root} and pass the copy, or record into another directory"
        )
    command = command or f"mcpgym proxy {option} {root}" + (" --resume" if resume else " --force" if force else "")
    deadline = time.monotonic() + (CLAIM_WAIT if resume else 0.0)
    stack = ExitStack()
    try:
        while True:  # a --resume waits a moment for another proxy's exclusive claim to end
            try:
                lock = stack.enter_context(
                    hold_lock(
                        root,
                        command=command,
                        discard_if=lambda: read_marker(root) is None,
                        shared=resume,
                        option=option,
                    )
                )
                break
            except RunDirLocked:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.05)
        if resume:
            with lock.turn(RECORD_LOCK_WAIT):  # other sessions may be claiming or writing
                _check_appendable(
                    root, option, check_records=False
                )  # before claim_for_resume, which may write a marker
                claim_for_resume(root, DirFlags(command=command, option=option), kind=KIND_PROXY)
                _check_appendable(root, option)
        else:
            claim_new_run(
                root,
                force=force,
                extra_names=RECORD_FILE_NAMES,
                flags=DirFlags(command=command, option=option),
                kind=KIND_PROXY,
            )
            lock.share()  # claimed: later --resume sessions may join
        mine = root / CATALOG
        user_catalog = mine if _plain_file(mine) and not catalog_is_ours(root) else None
    except BaseException as exc:
        stack.close()
        if isinstance(exc, RecordDirError):
            raise
        if isinstance(exc, OSError):
            raise RecordDirError(dir_path_problem(root, option, exc) or str(exc)) from None
        if isinstance(exc, TimeoutError):
            raise RecordDirError(f"{option} {root}: another session kept it busy; try again") from None
        if isinstance(exc, RunDirectoryError):  # ForeignContentError, RunDirLocked, ForeignLockFile
            hint = ""
            if isinstance(exc, ForeignContentError) and read_marker(root) is None:
                hint = (
                    " A directory recorded by an mcpgym proxy before record directories carried the "
                    f"{MARKER_NAME} marker is refused too: record into a new directory (mcpgym score still reads it)."
                )
            raise RecordDirError(f"{exc}{hint}") from None
        raise
    with stack:
        yield RecordDir(root, user_catalog, command)


def _check_appendable(root: Path, option: str = "--record", *, check_records: bool = True) -> None:
    """Refuse to append proxy sessions to a run of ``mcpgym run`` (or files named like its
    ``manifest.json`` / ``trajectories.jsonl.zst``), through an entry mcpgym did not write (a
    symlink or folder named like the proxy's files), or (``check_records``) to a
    ``trajectories.jsonl`` holding a line that is no mcpgym trajectory record."""
    run_files = [n for n in (MANIFEST_NAME, TRAJECTORIES_ZST) if (root / n).exists() or (root / n).is_symlink()]
    if run_files:
        raise ForeignContentError(
            root,
            f"holds what a run of mcpgym run holds ({MANIFEST_NAME}, {TRAJECTORIES_ZST}), not proxy sessions",
            run_files,
            f"Record into another {option} directory.",
        )
    odd = [
        n
        for n in (TRAJECTORIES, CATALOG)
        if (root / n).is_symlink() or (root / n).exists() and not _plain_file(root / n)
    ]
    if odd:
        raise ForeignContentError(
            root,
            "holds entries named like the proxy's files that are not regular files",
            odd,
            f"Move these away yourself, or choose another {option}.",
        )
    if check_records and _plain_file(root / TRAJECTORIES) and not trajectories_are_ours(root / TRAJECTORIES):
        raise ForeignContentError(
            root,
            f"its {TRAJECTORIES} holds lines that are not mcpgym trajectory records, so mcpgym appends nothing to it",
            [TRAJECTORIES],
            f"Move it away yourself, or choose another {option}.",
        )


def trajectory_of(
    session: ProxySession,
    classifier: ToolClassifier,
    *,
    agent: str | None = None,
    instruction: str | None = None,
    final_message: str = "",
    task_id: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> Trajectory:
    """The trajectory of one proxied session, scored with the classifier's catalog.

    Steps are the session's call log in call-log order (calls still in flight when it ended
    are not in it, nor calls whose answer the client did not get, ``session.undelivered``:
    those are listed in ``metadata.proxy.undelivered`` as ``{"step", "tool"}``), the ledger is
    the plan's (without the undelivered calls' entries); ``status`` is the session's (``errored`` with
    the upstream's failure as ``stop_reason`` when the upstream crashed or hung).
    ``metadata.proxy.notifications`` (when the upstream sent any the proxy counts) holds
    ``session.notices``: list changes received, re-listings made, messages dropped for a slow client.
    """
    plan = session.plan
    undelivered = set(session.undelivered)
    calls = sorted((c for c in plan.calls if c.step not in undelivered), key=lambda c: c.step)
    traj = Trajectory(
        episode_id=f"proxy-{secrets.token_hex(8)}",
        task_id=task_id,
        agent=agent or session.client_name or "proxy-client",
        fault_seed=plan.fault_seed,
        fault_profile=plan.profile.name,
        apps=[UPSTREAM_APP],
        instruction=instruction,
        steps=list(steps_from_call_log(calls)),
        final_message=final_message,
        ledger=[
            e.model_dump(mode="json") for e in sorted(plan.ledger, key=lambda e: e.step) if e.step not in undelivered
        ],
        status=session.status,
        stop_reason=session.stop_reason,
        metadata={
            "proxy": {
                "upstream": session.upstream.spec.describe(),
                "catalog": classifier.catalog_path,
                "tool_sources": dict(classifier.sources),
                "down": sorted(plan.down),
                **(
                    {"undelivered": [{"step": c.step, "tool": c.tool} for c in plan.calls if c.step in undelivered]}
                    if undelivered
                    else {}
                ),
                **({"notifications": dict(sorted(session.notices.items()))} if session.notices else {}),
            },
            **(metadata or {}),
        },
    )
    traj.scores = score_episode(traj, Catalog(classifier.rows()))
    return traj


class CatalogKeptWarning(UserWarning):
    """The record directory's ``catalog.json`` was changed by hand: mcpgym kept it as it is
    and did not add the rows of the tools this session classified otherwise (named)."""


def write_catalog(folder: Path, classifier: ToolClassifier) -> Path:
    """Merge the classifier's rows into ``folder/catalog.json`` (a row of a tool seen now
    replaces its older row) and keep the new file's SHA-256 in the marker, when the file is
    missing or what mcpgym last wrote (:func:`mcpgym.evaluation.run.run_owner.catalog_is_ours`).
    A catalog changed by hand is kept byte for byte: a :class:`CatalogKeptWarning` names the
    tools of this session it has no row for. Call it holding the directory's write turn.

    Raises:
        OSError: when it cannot be written.
    """
    path = folder / CATALOG
    rows: dict[str, dict[str, Any]] = {}
    if path.exists() or path.is_symlink():
        try:
            old = json.loads(path.read_text(encoding="utf-8")) if _plain_file(path) else []
        except (OSError, ValueError):
            old = None
        if not catalog_is_ours(folder):
            known = {r.get("name") for r in old if isinstance(r, dict)} if isinstance(old, list) else set()
            missing = [r["name"] for r in classifier.rows() if r["name"] not in known]
            if missing:
                warnings.warn(
                    CatalogKeptWarning(
                        f"{path} was changed by hand since mcpgym wrote it, so mcpgym keeps it as it is "
                        f"and adds no rows to it; no row for {', '.join(sorted(missing)[:20])}: add rows for "
                        "them if mcpgym score should not classify them by their names"
                    ),
                    stacklevel=2,
                )
            return path
        for row in old if isinstance(old, list) else []:
            if isinstance(row, dict) and isinstance(row.get("name"), str):
                rows[row["name"]] = row
    for row in classifier.rows():
        rows[row["name"]] = row
    data = (json.dumps(list(rows.values()), indent=1) + "\n").encode("utf-8")
    write_atomic(path, data, prefix=f".{CATALOG}.", suffix=".tmp")
    update_marker(folder, catalog_sha256=hashlib.sha256(data).hexdigest())
    return path


def record_session(
    folder: str | Path, traj: Trajectory, classifier: ToolClassifier, command: str = "mcpgym proxy --record"
) -> Path:
    """Append ``traj`` to ``folder/trajectories.jsonl`` and update ``folder/catalog.json``
    (:func:`write_catalog`), holding the directory's lock shared and its write turn (waiting
    up to :data:`RECORD_LOCK_WAIT` seconds for another writer; ``command``: what the lock names
    as its holder).

    The directory must still be mcpgym's (its ``.mcpgym-run`` marker, written by
    :func:`hold_record_dir`); one removed meanwhile is created again with a new marker.

    Raises:
        RecordDirError: the directory is no longer mcpgym's (nothing is written), or its lock
            stayed held.
        OSError: when the folder cannot be written.
    """
    out = Path(folder)
    deadline = time.monotonic() + RECORD_LOCK_WAIT
    while True:
        try:
            with (
                hold_lock(out, command=command, shared=True, option="--record") as lock,
                lock.turn(max(0.0, deadline - time.monotonic())),
            ):
                if read_marker(out) is None:
                    others = [c.name for c in out.iterdir() if c.name != LOCK_NAME]
                    if others:
                        raise RecordDirError(
                            f"{out} lost its {MARKER_NAME} marker during the session and holds "
                            f"{', '.join(sorted(others)[:10])}: it is not mcpgym's any more, so nothing was written"
                        )
                    write_marker(out, kind=KIND_PROXY)
                _check_appendable(out, check_records=False)  # proved when the directory was claimed
                append_trajectory(out / TRAJECTORIES, traj)
                write_catalog(out, classifier)
                return out / TRAJECTORIES
        except (RunDirLocked, TimeoutError) as exc:
            if time.monotonic() >= deadline:
                raise RecordDirError(str(exc)) from None
            time.sleep(0.05)
        except RecordDirError:
            raise
        except RunDirectoryError as exc:
            raise RecordDirError(str(exc)) from None
