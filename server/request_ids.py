"""One answer per request on a streamable-HTTP session, even when the client reuses request ids.

The SDK's streamable-HTTP transport (``mcp.server.streamable_http``, mcp 2.3) files each POST's
response stream under ``str(request.id)`` in ``_request_streams`` and routes every answer by
that key, and its dispatcher keeps in-flight requests by id too. Two overlapping POSTs on one
session with the same id (or with ids ``1`` and ``"1"``, whose ``str`` is the same) therefore
share one slot: the second overwrites the first's stream, the first request's answer goes to the
second POST, the first POST waits forever while SSE keep-alive pings hold the client's read
timeout off, and whichever POST ends first closes the other's stream (user case c13).

:class:`RequestIdRemapper` works around it in front of the SDK: every JSON-RPC request that
arrives on an established session is handed to the SDK under a fresh internal id (unique in
the process), and the answer carrying that id is given the client's own id back on the way
out. The SDK never sees two requests with one id, so each request gets its own answer, in the
id and the id type (``1`` stays an integer, ``"1"`` a string) the client sent. A client's
``notifications/cancelled`` names its own id and is pointed at the oldest request in flight with
that id. Responses the client sends to the server's own requests (elicitation, sampling) carry
server ids and pass untouched.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import secrets
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.types import Message, Receive, Scope, Send

ASGIHandler = Callable[[Scope, Receive, Send], Awaitable[None]]

KEPT_ORIGINALS = 4096
"""How many internal ids :meth:`RequestIdRemapper.original_id` can still map back (the
event store of resumable streams stores answers under the client's id with it)."""


def is_request_id(value: Any) -> bool:
    """True for a usable JSON-RPC request id: a string or an integer (not a bool)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _id_key(value: Any) -> tuple[str, Any]:
    """A key that keeps ``1`` and ``"1"`` apart (JSON-RPC ids of different types differ)."""
    return (type(value).__name__, value)


class RequestIdRemapper:
    """Gives each request on a session its own internal id (see the module docstring).

    Args:
        max_body: largest request body in bytes this wrapper reads to rewrite; a larger body
            is passed on as it came (the SDK answers it with 413).
    """

    def __init__(self, max_body: int) -> None:
        self.max_body = max_body
        self._prefix = f"mcpgym-{secrets.token_hex(4)}-"
        self._counter = itertools.count(1)
        # (session id, client's id key) -> internal ids in flight, oldest first
        self._in_flight: dict[tuple[str, tuple[str, Any]], list[str]] = {}
        # internal id -> the client's id, for the answers a resumed stream replays (bounded)
        self._originals: OrderedDict[str, Any] = OrderedDict()

    def original_id(self, internal: Any) -> Any | None:
        """The client's id of the request given the internal id ``internal`` (None when it is
        no internal id, or one of the last :data:`KEPT_ORIGINALS` no longer kept)."""
        return self._originals.get(internal) if isinstance(internal, str) else None

    def in_flight(self) -> int:
        """Number of client requests currently in flight under an internal id."""
        return sum(len(v) for v in self._in_flight.values())

    async def __call__(self, session_id: str, scope: Scope, receive: Receive, send: Send, app: ASGIHandler) -> None:
        """Serve one POST of session ``session_id`` through ``app`` (the SDK's handler), rewriting ids.

        Anything that is not a single JSON-RPC request or a ``notifications/cancelled`` (a
        response, another notification, a malformed or oversized body) goes to ``app`` as it
        came, for the SDK to accept or refuse.
        """
        body, rest_of_stream = await self._read_body(receive)
        message = self._parse(body)
        if message is None:
            await app(scope, _replay(body, rest_of_stream, receive), send)
            return
        original = message.get("id")
        if "id" in message and is_request_id(original):
            key = (session_id, _id_key(original))
            internal = f"{self._prefix}{next(self._counter)}"
            self._originals[internal] = original
            while len(self._originals) > KEPT_ORIGINALS:
                self._originals.popitem(last=False)
            message["id"] = internal
            self._in_flight.setdefault(key, []).append(internal)
            try:
                new = _dump(message)
                await app(
                    _with_length(scope, new),
                    _replay(new, rest_of_stream, receive),
                    _answer_rewriter(send, internal, original),
                )
            finally:
                waiting = self._in_flight.get(key, [])
                if internal in waiting:
                    waiting.remove(internal)
                if not waiting:
                    self._in_flight.pop(key, None)
            return
        if message.get("method") == "notifications/cancelled" and "id" not in message:
            params = message.get("params")
            target = params.get("requestId") if isinstance(params, dict) else None
            waiting = self._in_flight.get((session_id, _id_key(target)), []) if is_request_id(target) else []
            if waiting and isinstance(params, dict):
                params["requestId"] = waiting[0]
                body = _dump(message)
                scope = _with_length(scope, body)
        await app(scope, _replay(body, rest_of_stream, receive), send)

    async def _read_body(self, receive: Receive) -> tuple[bytes, bool]:
        """The request body (at most ``max_body + 1`` bytes) and whether more of it is unread."""
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return bytes(body), False  # disconnect: the SDK sees an empty/short body
            body.extend(message.get("body", b""))
            if not message.get("more_body", False):
                return bytes(body), False
            if len(body) > self.max_body:
                return bytes(body), True

    def _parse(self, body: bytes) -> dict[str, Any] | None:
        if len(body) > self.max_body:
            return None
        try:
            message = json.loads(body)
        except (ValueError, RecursionError):
            return None
        if (
            not isinstance(message, dict)
            or message.get("jsonrpc") != "2.0"
            or not isinstance(message.get("method"), str)
        ):
            return None
        return message


def _dump(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


def _with_length(scope: Scope, body: bytes) -> Scope:
    """``scope`` with its content-length header set to ``len(body)``."""
    headers = [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"content-length"]
    headers.append((b"content-length", str(len(body)).encode()))
    return {**scope, "headers": headers}


def _replay(body: bytes, more: bool, real: Receive) -> Receive:
    """A receive callable that yields ``body`` first, then reads on from ``real``.

    ``more``: part of the body is still unread in ``real`` (an oversized body, passed on as is).
    """
    pending: list[Message] = [{"type": "http.request", "body": body, "more_body": more}]

    async def receive() -> Message:
        if pending:
            return pending.pop()
        return await real()

    return receive


def _answer_rewriter(send: Send, internal: str, original: Any) -> Send:
    """A send callable that gives the answer to ``internal`` the client's id ``original``.

    Handles both response kinds of the transport: an SSE stream (each ``data:`` line holding
    a JSON-RPC message is checked; other lines and keep-alive comments pass as they are) and a
    single JSON body (buffered whole, then sent with a corrected ``content-length``).
    """
    mode = ""
    start: Message | None = None
    held = bytearray()

    def fix(message: Any) -> Any:
        if isinstance(message, dict) and message.get("id") == internal and ("result" in message or "error" in message):
            message["id"] = original
            return True
        return False

    marker = json.dumps(internal).encode()
    # How the SDK writes a response (pydantic, compact): its id comes right after "jsonrpc".
    prefix = b'{"jsonrpc":"2.0","id":' + marker + b","
    replacement = b'{"jsonrpc":"2.0","id":' + json.dumps(original).encode() + b","

    def fix_line(line: bytes) -> bytes:
        if not line.startswith(b"data:") or marker not in line:
            return line
        text = line[5:]
        body = text.lstrip(b" ")
        if body.startswith(prefix) and body[len(prefix) :].startswith((b'"result":', b'"error":')):
            # fast path: a large tools/list result is not parsed and written again
            return b"data: " + replacement + body[len(prefix) :]
        ending = text[len(text.rstrip(b"\r\n")) :]
        try:
            message = json.loads(text)
        except (ValueError, RecursionError):
            return line
        return b"data: " + _dump(message) + ending if fix(message) else line

    async def rewriting_send(message: Message) -> None:
        nonlocal mode, start
        if message["type"] == "http.response.start":
            ctype = next((v for k, v in message.get("headers", []) if k.lower() == b"content-type"), b"")
            if ctype.startswith(b"text/event-stream"):
                mode = "sse"
            elif ctype.startswith(b"application/json"):
                mode, start = "json", message
                return
            await send(message)
            return
        if message["type"] != "http.response.body" or not mode:
            await send(message)
            return
        chunk = message.get("body", b"")
        more = message.get("more_body", False)
        if mode == "sse" and not held and marker not in chunk and (not more or chunk.endswith(b"\n")):
            # fast path: whole lines none of which carries the answer (the priming event,
            # keep-alive comments, notifications, the end of the stream) pass as they came
            await send(message)
            return
        held.extend(chunk)
        if mode == "json":
            if more:
                return
            body = bytes(held)
            # A body that is not JSON goes back to the client unchanged (it carries no id to restore).
            with contextlib.suppress(ValueError, RecursionError):
                data = json.loads(body)
                if fix(data):
                    body = _dump(data)
            assert start is not None
            headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
            headers.append((b"content-length", str(len(body)).encode()))
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": body, "more_body": False})
            return
        # SSE: rewrite complete lines; keep a partial last line for the next chunk.
        cut = len(held) if not more else held.rfind(b"\n") + 1
        ready, rest = bytes(held[:cut]), bytes(held[cut:])
        held[:] = rest
        out = b"".join(fix_line(line) for line in ready.splitlines(keepends=True))
        if out or not more:
            await send({**message, "body": out})

    return rewriting_send
