"""The proxy's upstream over stdio: the server as an asyncio subprocess, its pipes read and
written in place (:mod:`mcpgym.server.proxy.lines`).

A ``mcp.client`` ``Transport``: :func:`subprocess_stdio` spawns the command and yields the
session's ``(read_stream, write_stream)``. It differs from the SDK's ``stdio_client`` only in
having no reader and writer tasks between the pipes and the session (one task hand-off fewer
each way per message; see benchmarks/proxy.py). Spawning and shutdown follow the SDK's: the
SDK's default environment plus ``env``, a new session (process group) for the child, and on
exit stdin closed, :data:`EXIT_GRACE` seconds for the server to leave on its own, then SIGTERM
to its process group and SIGKILL :data:`KILL_GRACE` seconds later (every wait bounded).
POSIX and asyncio only: elsewhere the proxy uses the SDK's ``stdio_client``
(:func:`available`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator
from typing import Protocol

import anyio

from mcpgym.server.proxy.lines import MAX_LINE_BYTES, LineReader, LineWriter, parse_answer_line

EXIT_GRACE = 2.0
"""Wall seconds the upstream has to exit once its stdin is closed (the SDK's grace period)."""
KILL_GRACE = 2.0
"""Wall seconds between SIGTERM and SIGKILL of the upstream's process group."""
_POLL = 0.01


class Tap(Protocol):
    """What sees the upstream's lines before its session does (:class:`mcpgym.server.proxy.fast.FastCalls`)."""

    def attach_upstream(self, writer: LineWriter) -> None:
        """Take the writer to the upstream's stdin."""

    def from_upstream(self, line: bytes) -> bool:
        """A line from the upstream; True: taken (the session does not see it)."""

    def upstream_ended(self) -> None:
        """The upstream's output ended."""


def available() -> bool:
    """True where :func:`subprocess_stdio` works: POSIX, inside a running asyncio event loop."""
    if sys.platform == "win32":
        return False
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


async def _exited(process: asyncio.subprocess.Process, timeout: float) -> bool:
    """Whether ``process`` exited within ``timeout`` seconds (polls its return code: not
    ``wait()``, which also waits for a pipe a surviving grandchild may hold open)."""
    deadline = anyio.current_time() + timeout
    while process.returncode is None:
        if anyio.current_time() >= deadline:
            return False
        await anyio.sleep(_POLL)
    return True


def _signal_group(process: asyncio.subprocess.Process, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        os.killpg(process.pid, signum)


async def _stop(process: asyncio.subprocess.Process, writer: asyncio.StreamWriter) -> None:
    """Close the upstream's stdin, give it :data:`EXIT_GRACE` s, then end its process group."""
    with contextlib.suppress(OSError, RuntimeError):
        writer.close()
    if not await _exited(process, EXIT_GRACE):
        _signal_group(process, signal.SIGTERM)
        if not await _exited(process, KILL_GRACE):
            _signal_group(process, signal.SIGKILL)
            await _exited(process, KILL_GRACE)
    transport = getattr(process, "_transport", None)  # a survivor may hold the pipes: close them
    close = getattr(transport, "close", None)
    if callable(close):
        with contextlib.suppress(PermissionError, OSError):
            close()


def _stderr() -> int | None:
    """This process's stderr descriptor for the child (None: inherit, when ``sys.stderr`` has none)."""
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return None


@contextlib.asynccontextmanager
async def subprocess_stdio(
    command: str,
    args: list[str],
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    tap: Tap | None = None,
) -> AsyncIterator[tuple[LineReader, LineWriter]]:
    """Spawn ``command args...`` and yield the MCP session's streams over its stdin/stdout.

    The child's stderr is this process's. Leaving the block stops the child (module docstring),
    shielded from cancellation so that no upstream process outlives the proxy's session.
    ``tap`` (when given) gets the writer to the child, sees every line from it first and is
    told when its output ends (:class:`Tap`).

    Raises:
        OSError: when the command cannot be spawned (not found, not executable).
        ValueError: for arguments the OS rejects (an embedded NUL byte).
    """
    from mcp.client.stdio import get_default_environment

    process = await asyncio.create_subprocess_exec(
        command,
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=_stderr(),
        env=get_default_environment() | (env or {}),
        cwd=cwd,
        start_new_session=True,
        limit=MAX_LINE_BYTES,
    )
    assert process.stdin is not None and process.stdout is not None
    reader = LineReader(process.stdout, parse=parse_answer_line)
    writer = LineWriter(process.stdin, reader)
    if tap is not None:
        reader.intercept, reader.on_end = tap.from_upstream, tap.upstream_ended
        tap.attach_upstream(writer)
    try:
        yield reader, writer
    finally:
        with anyio.CancelScope(shield=True):
            await _stop(process, process.stdin)
            reader.close()
