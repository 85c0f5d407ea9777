"""The end of the client's input, for the stdio proxy: the requests in flight are answered first.

A stdio client ends a session by closing the proxy's stdin (MCP, "stdio" shutdown), possibly
with calls still in flight. The SDK's server loop stops at the end of input and answers every
request still in progress with the JSON-RPC error ``-32000 Connection closed`` (the fast path,
:mod:`mcpgym.server.proxy.fast`, dropped its calls without a word), while the upstream went on
and the call log recorded what it answered: the trajectory then held successes the client
never saw. :class:`DrainOnEnd` holds the end of input back until every request the client
sent is answered (the SDK path's, counted here from the messages both ways, and the fast
path's, :meth:`FastCalls.waiting`), at most ``deadline`` wall seconds (the proxy's
``call_timeout`` plus a second: every upstream request is answered or timed out by then); a
signal cuts it short. What the client did not get, an answer still missing or the SDK's
``Connection closed``, is kept in :attr:`DrainOnEnd.undelivered` (the JSON-RPC ids), so that the
trajectory leaves out what the client never saw.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types

from mcpgym.server.read_stream import ReadStreamWrapper

DRAIN_MARGIN_SECONDS = 1.0
"""Wall seconds past ``call_timeout`` that the end of input waits for the last answers."""


def _key(request_id: Any) -> tuple[str, Any]:
    """A JSON-RPC id as the key its answer echoes (``1`` and ``"1"`` are two ids on the wire)."""
    return type(request_id).__name__, request_id


class _WatchedWrite:
    """The write stream handed to the SDK: every answer it sends settles its request in ``drain``."""

    def __init__(self, write: Any, drain: DrainOnEnd) -> None:
        self._write = write
        self._drain = drain

    async def send(self, item: Any) -> None:
        """Send ``item`` and note the request it answers."""
        await self._write.send(item)
        self._drain.answered(getattr(item, "message", None))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._write, name)

    async def __aenter__(self) -> _WatchedWrite:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self._write.aclose()


class DrainOnEnd(ReadStreamWrapper):
    """Read side of the proxy's stdio server that, at the end of input, first waits for the
    answers of the requests in flight (module docstring).

    Args:
        read: the read stream (``SessionMessage | Exception`` items).
        write: the write stream; hand :attr:`write` to the SDK in its place.
        elsewhere: how many requests are in flight outside the SDK (the fast path's).
        deadline: most wall seconds the end of input waits.

    Attributes:
        undelivered: JSON-RPC ids of requests whose answer the client did not get: still
            unanswered when the wait ended, or answered ``-32000 Connection closed`` by the SDK
            as it stopped.
    """

    def __init__(self, read: Any, write: Any, elsewhere: Callable[[], int], deadline: float) -> None:
        super().__init__(read)
        self.write = _WatchedWrite(write, self)
        self._elsewhere = elsewhere
        self._deadline = deadline
        self._open: Counter[tuple[str, Any]] = Counter()
        self._cut: list[Any] = []

    @property
    def undelivered(self) -> list[Any]:
        """See the class docstring."""
        return [rid for (_, rid), n in self._open.items() for _ in range(n)] + self._cut

    def answered(self, message: Any) -> None:
        """Note that ``message`` (sent to the client) answers its request."""
        if not isinstance(message, types.JSONRPCResponse | types.JSONRPCError) or message.id is None:
            return
        key = _key(message.id)
        if self._open[key] <= 0:
            return
        self._open[key] -= 1
        if not self._open[key]:
            del self._open[key]
        error = message.error if isinstance(message, types.JSONRPCError) else None
        if error is not None and error.code == types.CONNECTION_CLOSED and error.message == "Connection closed":
            self._cut.append(message.id)

    def in_flight(self) -> int:
        """Requests sent by the client and not answered yet (both paths)."""
        return sum(self._open.values()) + self._elsewhere()

    async def receive(self) -> Any:
        """The next item; at the end of input, first the answers in flight (at most ``deadline`` s).

        Raises:
            anyio.EndOfStream: at the end of input, once the wait is over.
        """
        try:
            item = await self._read.receive()
        except anyio.EndOfStream:
            with anyio.move_on_after(self._deadline):
                while self.in_flight():
                    await anyio.sleep(0.01)
            raise
        message = getattr(item, "message", None)
        if isinstance(message, types.JSONRPCRequest):
            self._open[_key(message.id)] += 1
        elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
            # a request the client cancelled is never answered (MCP): not waited for
            rid = (message.params or {}).get("requestId")
            with contextlib.suppress(TypeError):
                if self._open.get(_key(rid)):
                    self._open[_key(rid)] -= 1
        return item
