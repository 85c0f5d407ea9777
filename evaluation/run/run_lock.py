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

Proxy record directories (``mcpgym proxy --record DIR``) are shared: each proxy session holds
the lock *shared* (``shared=True``) for its whole life, so any number of sessions append to one
directory side by side while ``mcpgym run`` and a claim that deletes (``--force``, taking it
exclusively) are refused with the holder named. Sessions holding it shared take turns for
each write with :func:`write_turn` (a POSIX record lock on the same file, which Linux keeps
apart from ``flock`` locks). A shared holder that ends removes the lock file only when it can
take the lock exclusively (no other holder is left).
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

    def __init__(self, run_dir: Path, holder: dict[str, Any], option: str = "--out") -> None:
        self.holder = holder
        who = (
            f"process {holder.get('pid')} on {holder.get('host')} (started {holder.get('started')}: "
            f"{holder.get('command')})"
            if holder
            else "another process"
        )
        super().__init__(
            f"{'run' if option == '--out' else 'record'} directory {run_dir} is in use by {who}; "
            f"wait for it to finish, or write to another {option}"
        )


class ForeignLockFile(RunDirectoryError, RuntimeError):
    """A file named like the lock exists and is not mcpgym's (a symlink, a folder, other text):
    it is neither truncated nor used; the message names it."""

    def __init__(self, path: Path, problem: str, option: str = "--out") -> None:
        super().__init__(
            f"{path} {problem}: mcpgym did not write it, so it leaves it alone; move it away or use another {option}"
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
    """Hold the exclusive lock of ``run_dir`` (created when missing) for the ``with`` block;
    yields the lock file's path. Arguments and errors: :func:`hold_lock`."""
    with hold_lock(run_dir, command, discard_if) as hold:
        yield hold.path


@contextmanager
def hold_lock(
    run_dir: str | Path,
    command: str | None = None,
    discard_if: Callable[[], bool] | None = None,
    *,
    shared: bool = False,
    option: str = "--out",
) -> Iterator[LockHold]:
    """Hold the lock of ``run_dir`` (created when missing) for the ``with`` block: exclusive,
    or with ``shared`` shared with other shared holders (the sessions of a proxy record
    directory); the held lock can be made shared with :meth:`LockHold.share`.

    Args:
        run_dir: the run directory.
        command: what the holder is doing, for the message another writer gets (default:
            this process's command line).
        discard_if: called when the block ends; when it returns True, a lock file this call
            created is removed (a directory the run refused keeps nothing of mcpgym's). A lock
            file that is mcpgym's (created here, or holding a holder record) is removed anyway
            when the block ends; an empty one mcpgym did not create is left as it was.
        option: the command-line option that gave the directory, named in a refusal.

    Yields:
        The :class:`LockHold` (its ``path`` is the lock file's).

    Raises:
        RunDirLocked: when another process holds it.
        ForeignLockFile: when a lock-named entry exists that mcpgym did not write.
        OSError: when the directory or the lock file cannot be created.
    """
    root = Path(run_dir)
    root.mkdir(parents=True, exist_ok=True)
    path = root / LOCK_NAME
    for _attempt in range(_ATTEMPTS):
        fd, created = _open_locked(root, path, shared=shared, option=option)
        if _still_at(path, fd):
            break
        os.close(fd)  # the holder before us removed the file as it finished: lock the new one
    else:
        raise RunDirLocked(root, {}, option)
    try:
        ours = created or bool(_holder(fd))
        if os.fstat(fd).st_size and not ours:  # text mcpgym did not write: not ours to truncate
            fcntl.flock(fd, fcntl.LOCK_UN)
            raise ForeignLockFile(path, "holds something other than the lock holder mcpgym writes", option)
        holder = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "command": command or " ".join([os.path.basename(sys.argv[0] or "python"), *sys.argv[1:]])[:300],
        }
        if ours:  # an empty file of that name that mcpgym did not create is locked, not written
            with _record_lock(fd, time.monotonic() + _HOLDER_WAIT):  # shared holders write in turn
                os.ftruncate(fd, 0)
                os.lseek(fd, 0, os.SEEK_SET)
                os.write(fd, json.dumps(holder).encode("utf-8"))
        hold = LockHold(path, fd, shared)
        try:
            yield hold
        finally:
            alone = not hold.shared or _try_exclusive(fd)  # a shared holder: was it the last one?
            discard = created and discard_if is not None and discard_if()
            if alone and (discard or ours) and _still_at(path, fd):
                path.unlink(missing_ok=True)  # under the lock: the next writer opens a new file
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


class LockHold:
    """The lock of a run directory as :func:`run_lock` holds it.

    Attributes:
        path: the lock file. shared: whether it is held shared (see :meth:`share`).
    """

    def __init__(self, path: Path, fd: int, shared: bool) -> None:
        self.path, self._fd, self.shared = path, fd, shared

    def share(self) -> None:
        """Hold the lock shared from now on (an exclusive claim is done: sessions may join).

        Raises:
            OSError: when the kernel refuses (not expected: a shared lock conflicts only with
                an exclusive one, which nobody else can hold while this one is held).
        """
        if not self.shared:
            fcntl.flock(self._fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            self.shared = True

    @contextmanager
    def turn(self, wait: float) -> Iterator[None]:
        """Be the only holder writing for the ``with`` block (other shared holders wait).

        Raises:
            TimeoutError: when another holder kept its turn for ``wait`` wall seconds.
        """
        with _record_lock(self._fd, time.monotonic() + wait):
            yield


_HOLDER_WAIT = 10.0
"""Wall seconds a holder waits for its turn to write its holder record."""


@contextmanager
def _record_lock(fd: int, deadline: float) -> Iterator[None]:
    """A POSIX record lock on the whole of ``fd``'s file for the block (the write turn of the
    holders of a shared lock), tried until ``deadline`` (``time.monotonic()``).

    Raises:
        TimeoutError: when it stayed taken until the deadline.
    """
    while True:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise
            if time.monotonic() >= deadline:
                raise TimeoutError("another process kept its turn to write") from None
            time.sleep(0.02)
    try:
        yield
    finally:
        fcntl.lockf(fd, fcntl.LOCK_UN)


def _try_exclusive(fd: int) -> bool:
    """Turn a shared ``flock`` into an exclusive one if no other holder is left (the lock is
    dropped when another holder is: the caller is letting go of it anyway)."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


_ATTEMPTS = 5
"""Times a writer opens the lock file again when the one it locked was removed meanwhile."""


def _open_locked(root: Path, path: Path, *, shared: bool = False, option: str = "--out") -> tuple[int, bool]:
    """Open (creating it when missing) and lock ``path`` (exclusive, or ``shared``): ``(fd, created)``.

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
            raise ForeignLockFile(path, "is not a regular file", option) from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ForeignLockFile(path, "is not a regular file", option)
        try:
            fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise RunDirLocked(root, _holder(fd), option) from None
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


__all__ = ["LOCK_NAME", "ForeignLockFile", "LockHold", "RunDirLocked", "hold_lock", "run_lock"]
