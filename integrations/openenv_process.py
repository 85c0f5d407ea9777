"""``mcpgym serve --openenv`` in a child process, for a script, a benchmark or a test that
needs an OpenEnv server on loopback (no import of openenv-core here: the child loads it)."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator

READY_PREFIX = "MCPGYM_READY "
"""The line ``mcpgym serve`` prints on stdout once it serves, followed by JSON with its ``url``."""


class OpenEnvServerError(RuntimeError):
    """The child server exited or printed something else before it was ready; the message
    quotes its first stdout line and the last 2,000 characters of its stderr."""


@contextlib.contextmanager
def openenv_server(*args: str, stop_timeout: float = 10.0, token: str | None = None) -> Iterator[str]:
    """Start ``mcpgym serve --openenv --port 0 ARGS...`` and yield its base URL; on exit send it
    SIGTERM, and SIGKILL after ``stop_timeout`` seconds.

    Args:
        args: more ``serve`` options, e.g. ``"--faults", "none", "--max-episodes", "8"``.
        token: the control token of its ``/reset``, ``/step``, ``/state`` and ``/mcp`` routes
            (``--token``; None: one it generates, which the caller does not need for ``/ws``).

    Raises:
        OpenEnvServerError: when the server does not start.
    """
    with tempfile.TemporaryFile(mode="w+") as errlog:
        proc = subprocess.Popen(
            [
                sys.executable,
                *("-m", "mcpgym.evaluation.cli", "serve", "--openenv", "--port", "0"),
                *(("--token", token) if token else ()),
                *args,
            ],
            stdout=subprocess.PIPE,
            stderr=errlog,
            text=True,
        )
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            if not line.startswith(READY_PREFIX):
                errlog.seek(0)
                raise OpenEnvServerError(f"the OpenEnv server did not start: {line!r} {errlog.read()[-2000:]}")
            yield json.loads(line[len(READY_PREFIX) :])["url"]
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=stop_timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


__all__ = ["OpenEnvServerError", "READY_PREFIX", "openenv_server"]
