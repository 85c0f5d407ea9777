"""Writing a run file whole or not at all: a temporary file beside it, fsynced, then ``os.replace``."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: str | Path, data: bytes, *, prefix: str, suffix: str) -> None:
    """Write ``data`` to ``path`` through a temporary file named ``<prefix>XXXX<suffix>`` in the
    same folder, fsynced and then moved over ``path`` with ``os.replace``: a killed process
    leaves the old file or the new one, never half of one. The temporary file is removed when
    anything fails (the run-directory ownership rules name these temporary names as ours).

    Raises:
        OSError: when the folder or the file cannot be written.
    """
    p = Path(path)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=prefix, suffix=suffix)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


__all__ = ["write_atomic"]
