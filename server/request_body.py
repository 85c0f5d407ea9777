"""Reading an MCP request body before the SDK does: a client that disconnects mid-body is
noticed here (one log line in :mod:`mcpgym.server.http_app`) instead of in the SDK's
handler, which logs it as an error with a traceback; a whole body is handed on unchanged."""

from __future__ import annotations

from starlette.types import Message, Receive


async def read_whole_body(receive: Receive, limit: int) -> tuple[bytes, bool] | None:
    """Read an ASGI request body: ``(body, more)`` where ``more`` says the body passed
    ``limit`` bytes and the rest is still unread; None when the client disconnected before
    the body ended (the SDK would log that as an error with a traceback)."""
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        body.extend(message.get("body", b""))
        if not message.get("more_body", False):
            return bytes(body), False
        if len(body) > limit:
            return bytes(body), True


def replay_body(body: bytes, more: bool, real: Receive) -> Receive:
    """A receive callable that yields ``body`` first (``more``: part is still unread), then reads on from ``real``."""
    pending: list[Message] = [{"type": "http.request", "body": body, "more_body": more}]

    async def receive() -> Message:
        if pending:
            return pending.pop()
        return await real()

    return receive


__all__ = ["read_whole_body", "replay_body"]
