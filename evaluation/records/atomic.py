"""Writing a run file whole or not at all: a temporary file beside it, fsynced, then ``os.replace``."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: str | Path, data: bytes, *, prefix: str, suffix: str) -> None:
    """Write ``data`` to ``path`` through a temporary file named ``<prefix><random><suffix>`` in the
    same folder, fsynced and then moved over ``path`` with ``os.replace``: a killed process
    leaves the old file or the new one, never half of one. The temporary file is removed when
    anything fails (the run-directory ownership rules name these temporary names as ours). The file gets
    the mode a plain ``open`` would give it (0666 less the umask), not mkstemp's 0600.

    Raises:
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
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    """The process's umask (read by setting it and putting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


__all__ = ["write_atomic"]
