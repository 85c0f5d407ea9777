"""Cursor pagination of list results (``tools/list``), as the MCP spec's pagination section asks.

A cursor is opaque to the client. The server issues it as ``nextCursor`` and accepts back only
cursors it issued: one that it never issued (made up, edited, from another server process, or
from a listing that has changed since) is refused with JSON-RPC ``-32602 Invalid params``
rather than silently answered with the whole list (user case c08).

A cursor is ``base64url(offset "." fingerprint "." mac)``: the offset of the next page, a short
fingerprint of the listing it belongs to (the names, in order), and an HMAC over both keyed
with a secret made per :class:`Pager`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
from collections.abc import Sequence
from typing import TypeVar

import mcp_types as types
from mcp.shared.exceptions import MCPError

T = TypeVar("T")


class Pager:
    """Splits a listing into pages and checks the cursors it is given back.

    Args:
        page_size: most items per page; None (the default) or 0 returns every item in one
            page and issues no cursor, so every cursor a client sends is one never issued.

    Raises:
        ValueError: for a negative ``page_size``.
    """

    def __init__(self, page_size: int | None = None) -> None:
        if page_size is not None and page_size < 0:
            raise ValueError(f"page_size must be positive or None, not {page_size}")
        self.page_size = page_size or None
        self._key = secrets.token_bytes(16)

    def _mac(self, offset: int, fingerprint: str) -> str:
        return hmac.new(self._key, f"{offset}.{fingerprint}".encode(), hashlib.sha256).hexdigest()[:16]

    @staticmethod
    def fingerprint(names: Sequence[str]) -> str:
        """A short digest of a listing (its names in order): a cursor is valid only for it."""
        return hashlib.sha256("\n".join(names).encode()).hexdigest()[:12]

    def cursor(self, offset: int, names: Sequence[str]) -> str:
        """The cursor that resumes ``names`` at ``offset``."""
        fp = self.fingerprint(names)
        raw = f"{offset}.{fp}.{self._mac(offset, fp)}".encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    def offset(self, cursor: str, names: Sequence[str]) -> int:
        """The offset a cursor this pager issued for ``names`` points at.

        Raises:
            MCPError: code ``-32602`` (INVALID_PARAMS) for any cursor this pager did not
                issue for this very listing.
        """
        try:
            padded = cursor + "=" * (-len(cursor) % 4)
            text = base64.urlsafe_b64decode(padded.encode("ascii")).decode("ascii")
            offset_text, fp, mac = text.split(".")
            offset = int(offset_text)
        except (UnicodeError, ValueError, binascii.Error):
            raise invalid_cursor(cursor) from None
        if not hmac.compare_digest(mac, self._mac(offset, fp)) or not 0 < offset < len(names):
            raise invalid_cursor(cursor)
        if fp != self.fingerprint(names):
            raise MCPError(
                types.INVALID_PARAMS,
                "Invalid params: the cursor belongs to a listing that has changed since; list again without a cursor",
            )
        return offset

    def page(self, items: Sequence[T], names: Sequence[str], cursor: str | None) -> tuple[list[T], str | None]:
        """The page of ``items`` (named ``names``, same order) that ``cursor`` asks for.

        Returns:
            ``(page, next_cursor)``; ``next_cursor`` is None on the last page.

        Raises:
            MCPError: ``-32602`` for a cursor this pager never issued (see :meth:`offset`).
        """
        start = 0 if cursor is None else self.offset(cursor, names)
        if self.page_size is None:
            return list(items), None
        end = start + self.page_size
        return list(items[start:end]), (self.cursor(end, names) if end < len(items) else None)


def invalid_cursor(cursor: str) -> MCPError:
    """The ``-32602`` error for a cursor the server never issued."""
    shown = cursor if len(cursor) <= 40 else cursor[:37] + "..."
    return MCPError(
        types.INVALID_PARAMS,
        f"Invalid params: cursor {shown!r} was not issued by this server "
        "(omit the cursor for the first page; pass back nextCursor exactly)",
    )
