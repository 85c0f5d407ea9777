"""The proxy's own stdio transport: stdin and stdout as non-blocking pipes on the event loop.

The SDK's ``mcp.server.stdio.stdio_server`` reads and writes stdin/stdout through worker
threads (``anyio.wrap_file``), and puts a reader and a writer task between the pipes and the
server: thread and task hand-offs on every request and answer. A server pays them once; the
proxy pays them on top of its upstream's, which made a proxied call cost about twice a
direct one (benchmarks/proxy.py). :func:`pipe_stdio` serves the same descriptors through
asyncio's pipe transports instead, read and written in place by the server's own loop
(:mod:`mcpgym.server.proxy.lines`). As with the SDK's own claim, fd 0 then reads the null
device and fd 1 writes to stderr while serving (stray output of the process misses the wire),
both restored on exit.

Only for pipes, sockets and character devices the event loop can poll, on the asyncio backend
(what a client that spawns the proxy gives it); anything else (a regular file or ``/dev/null``
as stdin, another event loop) yields None and the caller uses the SDK's transport unchanged.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import stat
from collections.abc import AsyncIterator

from mcpgym.server.proxy.lines import MAX_LINE_BYTES, LineReader, LineWriter


def _pipe_like(fd: int) -> bool:
    """Whether ``fd`` is a pipe, a socket or a character device that the event loop can poll:
    ``/dev/null`` is a character device that epoll refuses (EPERM), and asyncio would then
    fail in a callback, after ``connect_read_pipe`` returned, and never see end of input."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)):
        return False
    if not hasattr(select, "epoll"):
        return True
    with select.epoll() as probe:
        try:
            probe.register(fd, select.EPOLLIN)
        except OSError:
            return False
    return True


@contextlib.asynccontextmanager
async def pipe_stdio() -> AsyncIterator[tuple[LineReader, LineWriter] | None]:
    """Yield ``(read_stream, write_stream)`` for ``Server.run`` over stdin/stdout, or None when
    the descriptors are not pipes (or the loop is not asyncio): then use the SDK's ``stdio_server``."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        yield None
        return
    if not (_pipe_like(0) and _pipe_like(1)):
        yield None
        return
    saved = (os.dup(0), os.dup(1))
    transports: list[asyncio.BaseTransport] = []
    try:
        pipes: tuple[LineReader, LineWriter] | None
        try:
            reader = asyncio.StreamReader(limit=MAX_LINE_BYTES)
            r_transport, _ = await loop.connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(os.dup(0), "rb", buffering=0)
            )
            transports.append(r_transport)
            w_transport, w_protocol = await loop.connect_write_pipe(
                asyncio.streams.FlowControlMixin, os.fdopen(os.dup(1), "wb", buffering=0)
            )
            transports.append(w_transport)
            lines = LineReader(reader)
            pipes = (lines, LineWriter(asyncio.StreamWriter(w_transport, w_protocol, None, loop)))
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.close(null)
            os.dup2(2, 1)
        except (OSError, ValueError):  # not a pipe after all: the SDK's transport serves
            pipes = None
        yield pipes
    finally:
        for transport in transports:
            transport.close()
        os.dup2(saved[0], 0)
        os.dup2(saved[1], 1)
        os.close(saved[0])
        os.close(saved[1])
