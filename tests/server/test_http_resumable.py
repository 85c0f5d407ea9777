"""Resumable SSE streams (MCP 2025-11-25 "Resumability and Redelivery", SEP-1699; issue 29):
on a session that negotiated 2025-11-25 every POST stream opens with a priming event carrying
an id and a ``retry`` field; a client whose stream broke gets the answer it missed by
reconnecting with ``Last-Event-ID``; the event store behind it is bounded
(server/event_store.py). Raw HTTP over loopback against the session's spawned server."""

from __future__ import annotations

import json

import anyio
import httpx
import mcp_types as types

from mcpgym.server.event_store import BoundedEventStore
from tests.support.http_raw import HEADERS
from tests.support.mcp_helpers import create_episode

VERSION = "2025-11-25"


async def _open(client: httpx.AsyncClient, url: str, version: str = VERSION) -> str:
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "resume", "version": "0"}},
    }
    r = await client.post(url, headers=HEADERS, json=init)
    assert r.status_code == 200, r.text
    sid = r.headers["mcp-session-id"]
    headers = {**HEADERS, "Mcp-Session-Id": sid, "MCP-Protocol-Version": version}
    done = await client.post(url, headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert done.status_code == 202
    return sid


def _events(text: str) -> list[dict[str, str]]:
    """SSE events as field -> value (the ``data`` lines joined)."""
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        event: dict[str, str] = {}
        for line in block.splitlines():
            field, _, value = line.partition(":")
            event[field] = (event.get(field, "") + "\n" if field in event else "") + value.removeprefix(" ")
        if event:
            events.append(event)
    return events


async def test_post_streams_are_primed_and_a_broken_one_resumes(http_server) -> None:  # noqa: ANN001
    base, token = http_server
    url = create_episode(base, token)["mcp_url"]
    async with httpx.AsyncClient(timeout=30) as client:
        sid = await _open(client, url)
        headers = {**HEADERS, "Mcp-Session-Id": sid, "MCP-Protocol-Version": VERSION}
        call = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "system_get_time", "arguments": {}},
        }
        whole = await client.post(url, headers=headers, json=call)
        first, *rest = _events(whole.text)
        assert first["id"] and first["data"] == "" and first["retry"] == "1000", first
        assert json.loads(rest[-1]["data"])["id"] == 7 and rest[-1]["id"]
        # Break the next stream right after its priming event, then reconnect with its id.
        call["id"] = 8
        async with client.stream("POST", url, headers=headers, json=call) as stream:
            async for line in stream.aiter_lines():
                if line.startswith("id:"):
                    last = line[3:].strip()
                    break
        answers = []
        with anyio.fail_after(20):  # the replay stream stays open: read until the missed answer came
            resume = {**headers, "Accept": "text/event-stream", "Last-Event-ID": last}
            async with client.stream("GET", url, headers=resume) as replay:
                assert replay.status_code == 200
                async for line in replay.aiter_lines():
                    if line.startswith("data:") and line[5:].strip():
                        answers.append(json.loads(line[5:]))
                        break
    assert answers[0]["id"] == 8 and "result" in answers[0], answers


async def test_older_sessions_get_no_priming_event(http_server) -> None:  # noqa: ANN001
    base, token = http_server
    url = create_episode(base, token)["mcp_url"]
    async with httpx.AsyncClient(timeout=30) as client:
        sid = await _open(client, url, "2025-06-18")
        headers = {**HEADERS, "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
        r = await client.post(url, headers=headers, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert [json.loads(e["data"]) for e in _events(r.text)] == [{"jsonrpc": "2.0", "id": 1, "result": {}}]


async def test_the_event_store_is_bounded_and_replays_one_chain() -> None:
    store = BoundedEventStore(max_events=4)
    ping = types.JSONRPCRequest(jsonrpc="2.0", id=1, method="ping")
    a0 = await store.store_event("a", None)
    a1 = await store.store_event("a", ping)
    b0 = await store.store_event("b", None)
    a2 = await store.store_event("a", ping)
    got: list[str | None] = []

    async def collect(event) -> None:  # noqa: ANN001
        got.append(event.event_id)

    assert await store.replay_events_after(a0, collect) == "a" and got == [a1, a2]  # not b's
    await store.store_event("_GET_stream", ping)  # shared by every session: not kept
    assert store.stored == 4
    await store.store_event("b", ping)  # a fifth: the oldest goes
    assert store.stored == 4 and await store.replay_events_after(a0, collect) is None
    assert await store.replay_events_after("not-an-id", collect) is None and b0


async def test_the_negotiated_version_governs_a_request_naming_an_older_one(http_server) -> None:  # noqa: ANN001
    """The conformance suite negotiates 2025-11-25 and then names 2025-03-26 on its requests."""
    base, token = http_server
    url = create_episode(base, token)["mcp_url"]
    async with httpx.AsyncClient(timeout=30) as client:
        sid = await _open(client, url)
        headers = {**HEADERS, "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-03-26"}
        r = await client.post(url, headers=headers, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    first, answer = _events(r.text)
    assert first["data"] == "" and first["id"] and first["retry"] == "1000"
    assert json.loads(answer["data"]) == {"jsonrpc": "2.0", "id": 1, "result": {}}


async def test_a_replayed_answer_carries_the_id_the_client_gave_when_it_was_stored() -> None:
    """Answers are stored under the transport's internal id with the client's id beside them
    (looked up once, when stored); a replay puts the client's id back, even after the
    remapper has forgotten the internal one."""
    originals = {"mcpgym-x-1": 5}
    store = BoundedEventStore(client_id=originals.get)
    prime = await store.store_event("mcpgym-x-1", None)
    answer = types.JSONRPCResponse(jsonrpc="2.0", id="mcpgym-x-1", result={"ok": True})
    await store.store_event("mcpgym-x-1", answer)
    originals.clear()  # the remapper keeps a bounded number of ids
    replayed: list[types.JSONRPCMessage] = []

    async def collect(event) -> None:  # noqa: ANN001
        replayed.append(event.message)

    assert await store.replay_events_after(prime, collect) == "mcpgym-x-1"
    assert [m.model_dump(mode="json", exclude_none=True) for m in replayed] == [
        {"jsonrpc": "2.0", "id": 5, "result": {"ok": True}}
    ]
    assert answer.id == "mcpgym-x-1"  # the live message is not changed
