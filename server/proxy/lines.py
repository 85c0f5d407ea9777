"""JSON-RPC messages as newline-delimited lines over asyncio streams, with no task in between.

The SDK's stdio transports put a reader task and a writer task between the pipes and the
session, joined by zero-buffer memory streams: every message costs a task hand-off (an
event-loop iteration) each way. The proxy is two such connections back to back, so it paid
four hand-offs per call on top of its two sessions' own. :class:`LineReader` and
:class:`LineWriter` are the SDK's ``ReadStream`` / ``WriteStream`` protocols done in place:
``receive`` reads and parses the next line itself, ``send`` serialises and writes its message
at once. The parsing and serialising are the SDK's own (``jsonrpc_message_adapter``,
``model_dump_json(by_alias=True, exclude_unset=True)``), so what crosses the wire is the same.

Used by the proxy's client-facing stdio (:mod:`mcpgym.server.proxy.stdio`) and its
subprocess upstream (:mod:`mcpgym.server.proxy.upstream_stdio`).
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

MAX_LINE_BYTES = 16 * 2**20
"""Longest message line read (a longer one is read as a parse error and skipped)."""
_MAX_INT_DIGITS = 4300
_BROKEN_KEY = "mcpgym_broken_answer"
_BROKEN_MARK = secrets.token_hex(16)
"""This process's mark on the error :func:`parse_answer_line` makes of a broken answer (an
upstream cannot forge it: it never sees it)."""


def parse_line(line: bytes) -> SessionMessage | Exception:
    """One line as the SDK's stdio transports read it: a ``SessionMessage``, or the parse error
    as a value (invalid UTF-8 is replaced, as the SDK's server transport does)."""
    try:
        message = types.jsonrpc_message_adapter.validate_json(line.decode("utf-8", errors="replace"), by_name=False)
    except Exception as exc:  # noqa: BLE001 - a bad line is handed on as a value, as the SDK does
        return exc
    return SessionMessage(message)


def answered_id(line: bytes) -> str | int | None:
    """The request id a line that is no valid JSON-RPC message still answers: the ``id`` (a
    string or an integer) of a JSON object without a ``method`` (an answer, however broken: no
    ``result`` nor ``error``, both, a wrong ``jsonrpc``, a lone surrogate, an integer of more
    than 4,300 digits elsewhere in it). None for anything else (not JSON, an array, a request
    or notification). Bounded: integers past 4,300 digits are never converted, nesting past
    Python's recursion limit is no answer."""

    def bounded_int(text: str) -> object:
        return int(text) if len(text.lstrip("-")) <= _MAX_INT_DIGITS else None

    try:
        data = json.loads(line.decode("utf-8", errors="replace"), parse_int=bounded_int)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or "method" in data:
        return None
    rid = data.get("id")
    return rid if isinstance(rid, str | int) and not isinstance(rid, bool) else None


def parse_answer_line(line: bytes) -> SessionMessage | Exception:
    """:func:`parse_line` for the upstream's lines: a broken answer (:func:`answered_id` finds
    the request it answers) becomes a JSON-RPC error answer to that request, marked as made
    here (:func:`broken_answer_reason` reads the mark), so that the request fails at once
    instead of waiting out its deadline; any other bad line is its parse error, as before."""
    parsed = parse_line(line)
    if not isinstance(parsed, Exception):
        return parsed
    rid = answered_id(line)
    if rid is None:
        return parsed
    why = " ".join(f"{type(parsed).__name__}: {parsed}".split())[:300]
    error = types.ErrorData(code=types.INTERNAL_ERROR, message=why, data={_BROKEN_KEY: _BROKEN_MARK})
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=rid, error=error))


def broken_answer_reason(error: Any) -> str | None:
    """Why the upstream's answer was broken, when ``error`` (an ``ErrorData``) is one that
    :func:`parse_answer_line` made; None for an error the upstream sent itself."""
    data = getattr(error, "data", None)
    if isinstance(data, dict) and data.get(_BROKEN_KEY) == _BROKEN_MARK:
        return str(getattr(error, "message", ""))
    return None


class _Closed(Exception):
    """Raised into a reader's pending read when its :class:`LineReader` is closed."""


class LineReader:
    """``ReadStream[SessionMessage | Exception]`` over an ``asyncio.StreamReader``.

    Each ``receive`` reads one line (at most :data:`MAX_LINE_BYTES`; longer: its parse error,
    and the rest of it is read as further bad lines) and parses it (a blank line too: it is a
    parse error, as in the SDK's transports).
    End of input raises ``anyio.EndOfStream`` (``async for`` stops), as the SDK's streams do.

    Args:
        reader: the stream read.
        intercept: ``line -> bool`` seen first for every line; True: it took the line (it is
            not parsed nor returned). It must not raise (:mod:`mcpgym.server.proxy.fast`).
        on_end: called once when the input ends (end of file, or :meth:`close`).
        parse: ``line -> message or parse error`` (:func:`parse_line`; the upstream's side
            uses :func:`parse_answer_line`).
    """

    def __init__(
        self,
        reader: asyncio.StreamReader,
        intercept: Callable[[bytes], bool] | None = None,
        on_end: Callable[[], None] | None = None,
        parse: Callable[[bytes], SessionMessage | Exception] = parse_line,
    ) -> None:
        self._reader = reader
        self._closed = False
        self.intercept = intercept
        self.on_end = on_end
        self._parse = parse

    async def receive(self) -> SessionMessage | Exception:
        """The next message (or its parse error).

        Raises:
            anyio.EndOfStream: at end of input (or once :meth:`close` was called).
        """
        while True:
            if self._closed:
                raise anyio.EndOfStream
            try:
                line = await self._reader.readline()
            except _Closed:
                raise anyio.EndOfStream from None
            except ValueError:  # past MAX_LINE_BYTES: asyncio dropped what it had read
                return self._parse(b"\xef\xbf\xbd line too long")
            except (ConnectionError, OSError):
                self.close()
                raise anyio.EndOfStream from None
            if not line:
                self.close()
                raise anyio.EndOfStream
            if self.intercept is None or not self.intercept(line):
                return self._parse(line)

    def close(self) -> None:
        """End the stream: a waiting or later ``receive`` ends as at end of input."""
        if not self._closed:
            self._closed = True
            if not self._reader.at_eof():
                # wakes a waiting readline; unlike feed_eof, lets the pipe go on delivering
                self._reader.set_exception(_Closed())
            if self.on_end is not None:
                self.on_end()

    async def aclose(self) -> None:
        """Same as :meth:`close`."""
        self.close()

    def __aiter__(self) -> LineReader:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> LineReader:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()


class LineWriter:
    """``WriteStream[SessionMessage]`` over an asyncio write transport.

    ``send`` writes the message as one line at once and waits only when the transport's
    buffer is over its high-water mark (the peer does not read). A broken pipe raises
    ``anyio.BrokenResourceError`` and ends ``reader`` (when given), so that a session
    waiting on the other direction sees the connection end instead of hanging.
    """

    def __init__(self, writer: asyncio.StreamWriter, reader: LineReader | None = None) -> None:
        self._writer = writer
        self._reader = reader
        self._closed = False

    async def send(self, item: SessionMessage) -> None:
        """Write ``item.message`` as one JSON line.

        Raises:
            anyio.ClosedResourceError: after :meth:`aclose`.
            anyio.BrokenResourceError: when the peer closed its end.
        """
        self.write_line(item.message.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8") + b"\n")
        try:
            await self._writer.drain()
        except (ConnectionError, OSError, RuntimeError) as exc:
            self._broken()
            raise anyio.BrokenResourceError from exc

    def buffered(self) -> int:
        """Bytes written and not yet taken by the peer's end of the pipe (the transport's buffer)."""
        try:
            return int(self._writer.transport.get_write_buffer_size())
        except (AttributeError, RuntimeError):
            return 0

    def write_line(self, data: bytes) -> None:
        """Write ``data`` (one whole line, newline included) without waiting: the transport
        buffers what the peer has not read yet.

        Raises:
            anyio.ClosedResourceError: after :meth:`aclose`.
            anyio.BrokenResourceError: when the peer closed its end.
        """
        if self._closed:
            raise anyio.ClosedResourceError
        try:
            if self._writer.transport.is_closing():
                raise BrokenPipeError("the pipe is closed")
            self._writer.write(data)
            if self._writer.transport.is_closing():  # asyncio closes a pipe whose write failed, silently
                raise BrokenPipeError("the pipe broke")
        except (ConnectionError, OSError, RuntimeError) as exc:
            self._broken()
            raise anyio.BrokenResourceError from exc

    def _broken(self) -> None:
        self._closed = True
        if self._reader is not None:
            self._reader.close()

    async def aclose(self) -> None:
        """Stop writing (the transport itself is closed by its owner)."""
        self._closed = True

    async def __aenter__(self) -> LineWriter:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
