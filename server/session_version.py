"""The protocol version a handshake-era MCP session negotiated governs its requests.

The HTTP transport notes the version each session's ``initialize`` asked for
(:func:`opening_version`) and raises an older version a later request names to it
(:func:`session_version_governs`).
"""

from __future__ import annotations

import json

from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.types import Scope

MAX_INITIALIZE_BODY = 1_000_000
"""Largest ``initialize`` body read for its version (a larger one is the SDK's to refuse)."""


def opening_version(body: bytes) -> str | None:
    """The protocol version an ``initialize`` request body asks for, when it is one the SDK
    negotiates as asked (a handshake-era version it supports); None otherwise."""
    if len(body) > MAX_INITIALIZE_BODY or b'"initialize"' not in body:
        return None
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return None
    params = message.get("params") if isinstance(message, dict) and message.get("method") == "initialize" else None
    version = params.get("protocolVersion") if isinstance(params, dict) else None
    return version if isinstance(version, str) and version in HANDSHAKE_PROTOCOL_VERSIONS else None


def session_version_governs(scope: Scope, headers: dict[str, str], negotiated: str | None) -> Scope:
    """``scope`` with its ``MCP-Protocol-Version`` header raised to the session's ``negotiated``
    version when the request names an older handshake-era one.

    A session speaks the version it negotiated (MCP 2025-11-25, "Protocol Version Header");
    a client that names an older one on a request (the official conformance suite names
    2025-03-26 after negotiating 2025-11-25) would otherwise lose what the session has, such
    as the priming event of a resumable SSE stream.
    """
    given = headers.get("mcp-protocol-version")
    if negotiated is None or given is None or given not in HANDSHAKE_PROTOCOL_VERSIONS or given >= negotiated:
        return scope
    raw = [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"mcp-protocol-version"]
    raw.append((b"mcp-protocol-version", negotiated.encode("latin-1")))
    return {**scope, "headers": raw}


__all__ = ["MAX_INITIALIZE_BODY", "opening_version", "session_version_governs"]
