"""A wrapper around the SDK's read stream of a server transport: the stream protocol in one place.

The SDK's server loop reads its transport's messages from an anyio receive stream
(``SessionMessage | Exception`` items). mcpgym puts wrappers in front of it that look at each
item (:class:`mcpgym.server.serve.RejectMalformed` answers malformed lines,
:class:`mcpgym.server.proxy.drain.DrainOnEnd` holds back the end of input); each overrides
:meth:`ReadStreamWrapper.receive`, and this base gives the rest of the stream protocol.
"""

from __future__ import annotations

from typing import Any, Self

import anyio


class ReadStreamWrapper:
    """A receive stream that passes ``read``'s items through; subclasses override :meth:`receive`.

    Args:
        read: the wrapped receive stream (``SessionMessage | Exception`` items).
    """

    def __init__(self, read: Any) -> None:
        self._read = read

    @property
    def last_context(self) -> Any:
        """The sender context of the last item (the SDK's context-aware streams expose it)."""
        return getattr(self._read, "last_context", None)

    async def receive(self) -> Any:
        """The next item of the wrapped stream.

        Raises:
            anyio.EndOfStream: at the end of input.
        """
        return await self._read.receive()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        """Close the wrapped read stream."""
        await self._read.aclose()

    def close(self) -> None:
        """Close the wrapped read stream."""
        self._read.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


__all__ = ["ReadStreamWrapper"]
