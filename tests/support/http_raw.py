"""A raw streamable-HTTP MCP peer for tests that must send what the SDK client never would
(reused request ids, another episode's session id): JSON-RPC over httpx, SSE bodies decoded."""

from __future__ import annotations

import json
from typing import Any

import httpx

PROTOCOL = "2025-06-18"
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def messages_of(response: httpx.Response) -> list[dict[str, Any]]:
    """The JSON-RPC messages of a response: a JSON body, or the ``data:`` lines of an SSE body."""
    text = response.text
    if response.headers.get("content-type", "").startswith("application/json"):
        return [json.loads(text)] if text.strip() else []
    return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:") and line[5:].strip()]


def initialize_request(client_name: str, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    """An ``initialize`` request body (id 0, :data:`PROTOCOL`) from a client named ``client_name``."""
    return {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL,
            "capabilities": capabilities or {},
            "clientInfo": {"name": client_name, "version": "0"},
        },
    }


def session_headers(session_id: str) -> dict[str, str]:
    """Headers of a request on an established session."""
    return {**HEADERS, "Mcp-Session-Id": session_id, "MCP-Protocol-Version": PROTOCOL}


async def open_session(client: httpx.AsyncClient, url: str) -> httpx.Response:
    """Send ``initialize`` (+ ``notifications/initialized`` when it succeeds); return the answer."""
    r = await client.post(
        url,
        headers=HEADERS,
        json=initialize_request("raw-test"),
    )
    if r.status_code == 200:
        sid = r.headers["mcp-session-id"]
        done = await client.post(
            url, headers=session_headers(sid), json={"jsonrpc": "2.0", "method": "notifications/initialized"}
        )
        assert done.status_code == 202, done.text
    return r


def tool_call(request_id: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A ``tools/call`` request body."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
