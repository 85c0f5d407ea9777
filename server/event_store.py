"""A bounded in-memory SSE event store: resumable POST streams for the streamable HTTP transport.

With an event store the SDK's transport opens every SSE stream (protocol 2025-11-25 and later)
with a priming event carrying an id and a ``retry`` field, and a client whose stream broke
can reconnect with ``Last-Event-ID`` and get what it missed (MCP 2025-11-25, "Resumability
and Redelivery"; SEP-1699). The SDK ships the interface (``mcp.server.streamable_http.EventStore``)
but no implementation; this one keeps events in memory, bounded:

* at most :data:`MAX_EVENTS` events over all sessions; the oldest go first (a client that
  reconnects after its events went gets nothing replayed: the SDK then answers as for an
  unknown event id);
* event ids are 128 random bits, so a client can name only events it was sent;
* a stream's events form one chain from its priming event on: replaying after an event sends
  the later events of that chain only. The SDK names POST streams by their JSON-RPC request id
  (unique per session here: :mod:`mcpgym.server.request_ids` rewrites them) and every
  session's standalone GET stream by one shared name, so messages of GET streams are not kept
  (they are notifications; keeping them would let one session's replay carry another's).
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp_types import JSONRPCError, JSONRPCMessage, JSONRPCResponse

MAX_EVENTS = 1024
"""Most events kept over all sessions (the oldest are forgotten first)."""

GET_STREAM_ID = "_GET_stream"
"""The SDK's stream id of every session's standalone GET stream (not replayed, module docstring)."""


class BoundedEventStore(EventStore):
    """In-memory event store of at most ``max_events`` events (module docstring).

    Args:
        max_events: most events kept (:data:`MAX_EVENTS`).
        client_id: maps the id of an answer to the id the client gave its request (the HTTP
            transport rewrites request ids, :mod:`mcpgym.server.request_ids`; a live stream
            is rewritten back on the wire, a replayed one from here); None: ids kept as sent.
    """

    def __init__(self, max_events: int = MAX_EVENTS, client_id: Callable[[Any], Any | None] | None = None) -> None:
        self.max_events = max_events
        self._client_id = client_id
        # event id -> (stream id, chain id, message, the client's id of an answer or None);
        # message None: a priming event. The answer keeps its internal id until it is replayed
        # (copying every answer to put the client's id in costs each call; replays are rare).
        self._events: OrderedDict[EventId, tuple[StreamId, str, JSONRPCMessage | None, Any]] = OrderedDict()
        self._chain_of_stream: dict[StreamId, str] = {}

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        """Keep ``message`` (None: a priming event, which starts a new chain) and return its id."""
        event_id = secrets.token_urlsafe(16)
        if message is None or stream_id not in self._chain_of_stream:
            self._chain_of_stream[stream_id] = event_id
        if message is not None and stream_id == GET_STREAM_ID:
            return event_id  # shared by every session: not replayable
        original = None
        if isinstance(message, JSONRPCResponse | JSONRPCError) and self._client_id is not None:
            original = self._client_id(message.id)
        self._events[event_id] = (stream_id, self._chain_of_stream[stream_id], message, original)
        while len(self._events) > self.max_events:
            _, (old_stream, old_chain, _, _) = self._events.popitem(last=False)
            if self._chain_of_stream.get(old_stream) == old_chain and old_chain not in self._events:
                self._chain_of_stream.pop(old_stream, None)
        return event_id

    async def replay_events_after(self, last_event_id: EventId, send_callback: EventCallback) -> StreamId | None:
        """Send the messages of ``last_event_id``'s chain stored after it; return its stream id
        (None when the event is unknown or forgotten)."""
        found = self._events.get(last_event_id)
        if found is None:
            return None
        stream_id, chain, _, _ = found
        later: list[tuple[EventId, JSONRPCMessage]] = []
        seen = False
        for event_id, (_, event_chain, message, original) in list(self._events.items()):
            if event_id == last_event_id:
                seen = True
            elif seen and event_chain == chain and message is not None:
                if original is not None:  # an answer: the client's own id, as on the live stream
                    message = message.model_copy(update={"id": original})
                later.append((event_id, message))
        for event_id, message in later:
            await send_callback(EventMessage(message, event_id))
        return stream_id

    @property
    def stored(self) -> int:
        """Number of events kept now. (No ``__len__``: the SDK tests the store for truth, and
        an empty store must not read as no store.)"""
        return len(self._events)


__all__ = ["GET_STREAM_ID", "MAX_EVENTS", "BoundedEventStore"]
