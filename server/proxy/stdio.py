"""The proxy's own stdio transport: stdin and stdout as non-blocking pipes on the event loop.

The SDK's ``mcp.server.stdio.stdio_server`` reads and writes stdin/stdout through worker
threads (``anyio.wrap_file``): three thread hand-offs per request and answer. A server pays
them once; the proxy pays them on top of its upstream's, which made a proxied call cost about
twice a direct one (benchmarks/proxy.py). :func:`pipe_stdio` hands ``stdio_server`` two
stream objects that read and write the same descriptors through asyncio's pipe transports
instead. As with the SDK's own claim, fd 0 then reads the null device and fd 1 writes to
stderr while serving (stray output of the process misses the wire), both restored on exit.

Only for pipes, sockets and character devices on the asyncio backend (what a client that
spawns the proxy gives it); anything else (a regular file as stdin, another event loop)
yields None and the caller uses the SDK's transport unchanged.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
from collections.abc import AsyncIterator
from typing import Any

MAX_LINE_BYTES = 16 * 2**20
"""Longest message line read from the client (a longer one is answered as a parse error and skipped)."""


class _Lines:
    """Async iterator of decoded lines from a StreamReader (``async for line in stdin``)."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        while True:
            try:
                line = await self._reader.readline()
            except ValueError:  # past MAX_LINE_BYTES: the reader dropped it; answer it as unparsable
                return "\ufffd line too long\n"
            if not line:
                raise StopAsyncIteration
            return line.decode("utf-8", errors="replace")


class _Out:
    """``write`` / ``flush`` of text onto a StreamWriter."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()


def _pipe_like(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


@contextlib.asynccontextmanager
async def pipe_stdio() -> AsyncIterator[tuple[Any, Any] | None]:
    """Yield ``(stdin, stdout)`` objects for ``stdio_server(stdin, stdout)``, or None when the
    descriptors are not pipes (or the loop is not asyncio): then use the SDK's defaults."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        yield None
        return
    if not (_pipe_like(0) and _pipe_like(1)):
        yield None
        return
    saved = (os.dup(0), os.dup(1))
    transports: list[Any] = []
    try:
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
            pipes: tuple[Any, Any] | None = (
                _Lines(reader),
                _Out(asyncio.StreamWriter(w_transport, w_protocol, None, loop)),
            )
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
