"""The run-directory lock: one writer per run directory.

A run (``mcpgym run``, ``--resume``, or a distributed driver, which alone writes the run
directory) holds an exclusive ``flock`` on ``<run dir>/.mcpgym.lock`` from before it reads
what is done until after it has written ``scores.json``. A second writer fails at once with a
:class:`RunDirLocked` error naming the holder (process id, host, start time, command), instead
of running the same episodes again and appending them twice. The kernel drops the lock when
the holder exits, however it exits (``kill -9`` included), so a lock file left behind never
blocks a later run; its text only describes the last holder. A writer that ends removes the
lock file when it is mcpgym's (created by it, or holding a holder record), still holding the
lock; a writer that locked a file since removed (its inode no longer at the path) opens the
path again, so two writers never hold locks on two different files.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import stat
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mcpgym.kernel.exceptions import RunDirectoryError

LOCK_NAME = ".mcpgym.lock"
"""The lock file of a run directory (not a run file: a directory holding only it is empty)."""


class RunDirLocked(RunDirectoryError, RuntimeError):
    """Another process holds the run directory's lock; the message names it.

    Attributes:
        holder: what the holder wrote into the lock file (pid, host, started, command), or {}.
    """

    def __init__(self, run_dir: Path, holder: dict[str, Any]) -> None:
        self.holder = holder
        who = (
            f"process {holder.get('pid')} on {holder.get('host')} (started {holder.get('started')}: "
            f"{holder.get('command')})"
            if holder
            else "another process"
        )
        super().__init__(
            f"run directory {run_dir} is in use by {who}; wait for it to finish, or write to another --out"
        )


class ForeignLockFile(RunDirectoryError, RuntimeError):
    """A file named like the lock exists and is not mcpgym's (a symlink, a folder, other text):
    it is neither truncated nor used; the message names it."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(
            f"{path} {problem}: mcpgym did not write it, so it leaves it alone; move it away or use another --out"
        )


def _holder(fd: int) -> dict[str, Any]:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        data = json.loads(os.read(fd, 4096).decode("utf-8") or "{}")
        return data if isinstance(data, dict) and "pid" in data else {}
    except (OSError, ValueError):
        return {}


@contextmanager
def run_lock(
    run_dir: str | Path, command: str | None = None, discard_if: Callable[[], bool] | None = None
) -> Iterator[Path]:
    """Hold the exclusive lock of ``run_dir`` (created when missing) for the ``with`` block.

    Args:
        run_dir: the run directory.
        command: what the holder is doing, for the message another writer gets (default:
            this process's command line).
        discard_if: called when the block ends; when it returns True, a lock file this call
            created is removed (a directory the run refused keeps nothing of mcpgym's). A lock
            file that is mcpgym's (created here, or holding a holder record) is removed anyway
            when the block ends; an empty one mcpgym did not create is left as it was.

    Yields:
        The lock file's path.

    Raises:
        RunDirLocked: when another process holds it.
        ForeignLockFile: when a lock-named entry exists that mcpgym did not write.
        OSError: when the directory or the lock file cannot be created.
    """
    root = Path(run_dir)
    root.mkdir(parents=True, exist_ok=True)
    path = root / LOCK_NAME
    for _attempt in range(_ATTEMPTS):
        fd, created = _open_locked(root, path)
        if _still_at(path, fd):
            break
        os.close(fd)  # the holder before us removed the file as it finished: lock the new one
    else:
        raise RunDirLocked(root, {})
    try:
        ours = created or bool(_holder(fd))
        if os.fstat(fd).st_size and not ours:  # text mcpgym did not write: not ours to truncate
            fcntl.flock(fd, fcntl.LOCK_UN)
            raise ForeignLockFile(path, "holds something other than the lock holder mcpgym writes")
        holder = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "command": command or " ".join([os.path.basename(sys.argv[0] or "python"), *sys.argv[1:]])[:300],
        }
        if ours:  # an empty file of that name that mcpgym did not create is locked, not written
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, json.dumps(holder).encode("utf-8"))
        try:
            yield path
        finally:
            discard = created and discard_if is not None and discard_if()
            if (discard or ours) and _still_at(path, fd):
                path.unlink(missing_ok=True)  # under the lock: the next writer opens a new file
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


_ATTEMPTS = 5
"""Times a writer opens the lock file again when the one it locked was removed meanwhile."""


def _open_locked(root: Path, path: Path) -> tuple[int, bool]:
    """Open (creating it when missing) and lock ``path``: ``(fd, created)``.

    Raises:
        RunDirLocked, ForeignLockFile, OSError: as :func:`run_lock`.
    """
    flags = os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK
    created = False
    try:
        try:
            fd = os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o644)
            created = True
        except FileExistsError:
            fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO):
            raise ForeignLockFile(path, "is not a regular file") from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ForeignLockFile(path, "is not a regular file")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise RunDirLocked(root, _holder(fd)) from None
            raise
    except BaseException:
        os.close(fd)
        raise
    return fd, created


def _still_at(path: Path, fd: int) -> bool:
    """Whether ``path`` still names the file open as ``fd`` (not removed or replaced since)."""
    try:
        here = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (here.st_dev, here.st_ino) == (mine.st_dev, mine.st_ino)


__all__ = ["LOCK_NAME", "ForeignLockFile", "RunDirLocked", "run_lock"]
