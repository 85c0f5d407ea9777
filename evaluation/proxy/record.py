"""Recording a proxied session as a trajectory (``mcpgym proxy --record DIR``).

Each session appends one line to ``DIR/trajectories.jsonl`` (the format ``mcpgym run``
writes, with the fault ledger) and rewrites ``DIR/catalog.json`` with the classification of
every upstream tool seen so far (rows of earlier sessions kept), so that

    mcpgym score DIR --catalog DIR/catalog.json

scores it with the tool kinds the proxy used. There is no world for an outside server: the
snapshots are empty and the outcome is unknown unless the line carries checks
(``mcpgym run --proxy``).

``DIR`` is claimed before the proxy serves anything (:func:`prepare_record_dir`) by the rules
of a run directory (:mod:`mcpgym.evaluation.run.run_owner`): it must be missing, empty, or a
directory mcpgym made (its ``.mcpgym-run`` marker), where ``catalog.json`` is mcpgym's by name
like the run files; a directory holding a recorded session needs ``--resume`` (append) or
``--force`` (start over). A catalog passed with ``--catalog`` is never rewritten.
"""

from __future__ import annotations

import json
import os
import secrets
import stat
import time
from pathlib import Path
from typing import Any

from mcpgym.evaluation.proxy.classify import UPSTREAM_APP, ToolClassifier
from mcpgym.evaluation.records.atomic import write_atomic
from mcpgym.evaluation.records.compressed import TRAJECTORIES_ZST
from mcpgym.evaluation.records.manifest import MANIFEST_NAME
from mcpgym.evaluation.records.trajectory import Trajectory, append_trajectory, steps_from_call_log
from mcpgym.evaluation.run.run_lock import LOCK_NAME, RunDirLocked, run_lock
from mcpgym.evaluation.run.run_owner import (
    MARKER_NAME,
    DirFlags,
    ForeignContentError,
    claim_for_resume,
    claim_new_run,
    read_marker,
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


PROXY_FLAGS = DirFlags(command="mcpgym proxy --record", option="--record")
"""``mcpgym proxy --record DIR`` (:func:`prepare_record_dir`'s default; ``command`` is what the
directory's lock names as its holder)."""


def prepare_record_dir(
    folder: str | Path,
    *,
    resume: bool = False,
    force: bool = False,
    catalog: str | Path | None = None,
    flags: DirFlags = PROXY_FLAGS,
) -> Path:
    """Claim ``folder`` for the sessions of ``mcpgym proxy --record`` before the proxy starts.

    The rules are a run directory's (:mod:`mcpgym.evaluation.run.run_owner`, under its lock):
    a missing or empty directory is created and gets the ``.mcpgym-run`` marker; a directory
    mcpgym made (the marker) holding no recorded session is reused; one holding sessions is
    appended to with ``resume`` or emptied of mcpgym's files (run files and ``catalog.json``)
    with ``force``. Anything else is refused before anything is written or deleted.

    Args:
        catalog: the ``--catalog`` file, which must not be ``folder/catalog.json`` (the proxy
            rewrites that file and never rewrites a catalog the user passed).
        flags: how the command spells the directory's options (``mcpgym run --proxy`` gives
            it with ``--out``), named in the messages; its ``command`` is what the lock names.

    Raises:
        RecordDirError: ``folder`` is a file; ``catalog`` is its ``catalog.json``; ``resume``
            and ``force`` together; a directory that is not mcpgym's, holds entries mcpgym
            did not write (``force``), holds sessions without ``resume``/``force``, or is a run
            of ``mcpgym run`` (``resume``); its lock is held by another process. The message
            names what is in the way and what to do.
        OSError: when the directory cannot be created.
    """
    root = Path(folder)
    if resume and force:
        raise RecordDirError("--resume and --force exclude each other: append to the sessions, or start over")
    if root.exists() and not root.is_dir():
        raise RecordDirError(f"{flags.option} {root} is a file, not a directory: give a directory for the sessions")
    if catalog is not None and _same_file(Path(catalog), root / CATALOG):
        raise RecordDirError(
            f"--catalog {catalog} is {root / CATALOG}, the file {flags.option} {root} rewrites with the "
            "classification of every session; the proxy never rewrites a catalog you pass: copy it out "
            f"of {root} and pass the copy, or record into another directory"
        )
    try:
        with run_lock(root, command=flags.command, discard_if=lambda: read_marker(root) is None):
            if resume:
                _check_appendable(root, flags)  # before claim_for_resume, which may write a marker
                claim_for_resume(root, flags)
            else:
                claim_new_run(root, force=force, extra_names=RECORD_FILE_NAMES, flags=flags)
    except RecordDirError:
        raise
    except RunDirectoryError as exc:  # ForeignContentError, RunDirLocked, ForeignLockFile
        hint = ""
        if isinstance(exc, ForeignContentError) and read_marker(root) is None:
            hint = (
                " A directory recorded by an mcpgym proxy before record directories carried the "
                f"{MARKER_NAME} marker is refused too: record into a new directory (mcpgym score still reads it)."
            )
        raise RecordDirError(f"{exc}{hint}") from None
    return root


def _check_appendable(root: Path, flags: DirFlags = PROXY_FLAGS) -> None:
    """Refuse to append proxy sessions to a run of ``mcpgym run`` (or files named like its
    ``manifest.json`` / ``trajectories.jsonl.zst``) or through an entry mcpgym did not write (a
    symlink or folder named like the proxy's files)."""
    run_files = [n for n in (MANIFEST_NAME, TRAJECTORIES_ZST) if (root / n).exists() or (root / n).is_symlink()]
    if run_files:
        raise ForeignContentError(
            root,
            f"holds what a run of mcpgym run holds ({MANIFEST_NAME}, {TRAJECTORIES_ZST}), not proxy sessions",
            run_files,
            f"Record into another {flags.option} directory.",
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
            f"Move these away yourself, or choose another {flags.option}.",
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
            },
            **(metadata or {}),
        },
    )
    traj.scores = score_episode(traj, Catalog(classifier.rows()))
    return traj


def write_catalog(folder: Path, classifier: ToolClassifier) -> Path:
    """Merge the classifier's rows into ``folder/catalog.json`` (a row of a tool seen now replaces its older row)."""
    path = folder / CATALOG
    rows: dict[str, dict[str, Any]] = {}
    if _plain_file(path):
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            old = []
        for row in old if isinstance(old, list) else []:
            if isinstance(row, dict) and isinstance(row.get("name"), str):
                rows[row["name"]] = row
    for row in classifier.rows():
        rows[row["name"]] = row
    text = json.dumps(list(rows.values()), indent=1) + "\n"
    write_atomic(path, text.encode("utf-8"), prefix=f".{CATALOG}.", suffix=".tmp")
    return path


def record_session(
    folder: str | Path, traj: Trajectory, classifier: ToolClassifier, command: str = "mcpgym proxy --record"
) -> Path:
    """Append ``traj`` to ``folder/trajectories.jsonl`` and update ``folder/catalog.json``,
    holding the directory's lock (waiting up to :data:`RECORD_LOCK_WAIT` seconds for another
    writer; ``command``: what the lock names as its holder).

    The directory must still be mcpgym's (its ``.mcpgym-run`` marker, written by
    :func:`prepare_record_dir`); one removed meanwhile is created again with a new marker.

    Raises:
        RecordDirError: the directory is no longer mcpgym's (nothing is written), or its lock
            stayed held.
        OSError: when the folder cannot be written.
    """
    out = Path(folder)
    deadline = time.monotonic() + RECORD_LOCK_WAIT
    while True:
        try:
            with run_lock(out, command=command):
                if read_marker(out) is None:
                    others = [c.name for c in out.iterdir() if c.name != LOCK_NAME]
                    if others:
                        raise RecordDirError(
                            f"{out} lost its {MARKER_NAME} marker during the session and holds "
                            f"{', '.join(sorted(others)[:10])}: it is not mcpgym's any more, so nothing was written"
                        )
                    write_marker(out)
                append_trajectory(out / TRAJECTORIES, traj)
                write_catalog(out, classifier)
                return out / TRAJECTORIES
        except RunDirLocked as exc:
            if time.monotonic() >= deadline:
                raise RecordDirError(str(exc)) from None
            time.sleep(0.05)
        except RecordDirError:
            raise
        except RunDirectoryError as exc:
            raise RecordDirError(str(exc)) from None
