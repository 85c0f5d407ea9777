"""Writing a run file whole or not at all: a temporary file beside it, fsynced, then ``os.replace``."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

from mcpgym.kernel.input_files import NOFOLLOW, SYMLINK_REFUSED


def write_atomic(path: str | Path, data: bytes, *, prefix: str, suffix: str, exclusive: bool = False) -> None:
    """Write ``data`` to ``path`` through a temporary file named ``<prefix><random><suffix>`` in the
    same folder, fsynced and then moved over ``path`` with ``os.replace``: a killed process
    leaves the old file or the new one, never half of one. The temporary file is removed when
    anything fails (the run-directory ownership rules name these temporary names as ours). The file gets
    the mode a plain ``open`` would give it (0666 less the umask), not mkstemp's 0600.

    Args:
        exclusive: ``path`` must not exist: the whole file is linked into place (``os.link``,
            which never replaces), so a new file is as atomic as a replaced one and a file
            that appeared meanwhile is never overwritten.

    Raises:
        FileExistsError: ``exclusive`` and ``path`` exists (nothing was written there).
        OSError: when the folder or the file cannot be written.
    """
    p = Path(path)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=prefix, suffix=suffix)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; a run file gets the user's usual mode
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if exclusive:
            _link_new(tmp, p)
        else:
            os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _link_new(tmp: str, path: Path) -> None:
    """Put the whole file ``tmp`` at ``path``, which must not exist: a hard link, then ``tmp``
    removed; where the file system has no hard links, ``os.replace`` after a check that
    ``path`` is still missing."""
    try:
        os.link(tmp, path, follow_symlinks=False)
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK):
            raise
        if path.exists() or path.is_symlink():
            raise FileExistsError(errno.EEXIST, "File exists", str(path)) from None
        os.replace(tmp, path)
        return
    os.unlink(tmp)


def open_append(path: str | Path) -> int:
    """A descriptor appending to the run file ``path`` (created 0644 when missing), opened
    without following a symlink (``O_NOFOLLOW``) and refused unless it is a regular file: a
    symlink put in a run file's place (``server.log`` -> ``~/.bashrc``) is never written through.

    Raises:
        OSError: the file cannot be opened; a symlink or a special file (the message says so
            and names the path; nothing was written).
    """
    p = Path(path)
    try:
        fd = os.open(p, os.O_WRONLY | os.O_APPEND | os.O_CREAT | NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(exc.errno, f"{SYMLINK_REFUSED}; nothing was written", str(p)) from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "is not a regular file; nothing was written", str(p))
    os.set_blocking(fd, True)
    return fd


def _umask() -> int:
    """The process's umask (read by setting it and putting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


__all__ = ["open_append", "write_atomic"]
