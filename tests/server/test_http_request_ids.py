"""Overlapping requests on one streamable-HTTP session that reuse a JSON-RPC id (issue 16, the
c13 class): each gets its own answer, with the id (and id type) it was sent with; none hangs;
no answer reaches another request. Plus the id rewriting itself against a stand-in ASGI app."""

from __future__ import annotations

import json

import anyio
import httpx
import pytest

from mcpgym.server.request_ids import RequestIdRemapper
from tests.support.http_raw import initialize_request, messages_of, open_session, session_headers, tool_call
from tests.support.mcp_helpers import control_get, create_episode

ITEMS = [f"item-{101 + k:04d}" for k in range(16)]


async def _overlapping(
    url: str, sid: str, ids: list, items: list[str], auth: dict[str, str] | None = None
) -> list[tuple[int, list[dict]]]:
    results: list = [None] * len(items)
    async with httpx.AsyncClient(timeout=20, headers=auth or {}) as client:

        async def one(k: int) -> None:
            with anyio.fail_after(30):  # a hung request fails the test instead of blocking it
                r = await client.post(
                    url, headers=session_headers(sid), json=tool_call(ids[k], "shop_get_item", {"item_id": items[k]})
                )
            results[k] = (r.status_code, messages_of(r))

        async with anyio.create_task_group() as tg:
            for k in range(len(items)):
                tg.start_soon(one, k)
    return results


async def _session(url: str) -> str:
    async with httpx.AsyncClient(timeout=20) as client:
        r = await open_session(client, url)
        assert r.status_code == 200, r.text
        return r.headers["mcp-session-id"]


@pytest.mark.parametrize(
    "ids",
    [
        pytest.param([1] * 16, id="all-id-1"),
        pytest.param(["same"] * 16, id="all-string-id"),
        pytest.param([1, "1"] * 8, id="1-and-string-1"),
    ],
)
async def test_each_duplicate_gets_its_own_answer(http_server, ids):
    base, token = http_server
    ep = create_episode(base, token, seed=7, apps=["shop"])
    sid = await _session(ep["mcp_url"])
    results = await _overlapping(ep["mcp_url"], sid, ids, ITEMS)
    for k, (status, msgs) in enumerate(results):
        assert status == 200, msgs
        answers = [m for m in msgs if "result" in m or "error" in m]
        assert len(answers) == 1, msgs
        answer = answers[0]
        assert answer["id"] == ids[k] and type(answer["id"]) is type(ids[k])
        assert ITEMS[k] in json.dumps(answer["result"]), (ITEMS[k], answer)
    calls = control_get(base, token, f"/control/episodes/{ep['episode_id']}/calls")
    assert sorted(c["arguments"]["item_id"] for c in calls) == sorted(ITEMS)


async def test_duplicates_on_a_session_episode_of_mcp_get_their_own_answers(http_server):
    """The c13 class on ``/mcp?seed=`` too (its requests take the same id rewriting as an
    episode URL's): 16 overlapping calls all with id 1, each answered once with its own item."""
    base, token = http_server
    auth = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(timeout=20, headers=auth) as client:
        r = await open_session(client, f"{base}/mcp?seed=7&apps=shop")
    assert r.status_code == 200, r.text
    sid, eid = r.headers["mcp-session-id"], r.headers["mcpgym-episode-id"]
    results = await _overlapping(f"{base}/mcp?seed=7&apps=shop", sid, [1] * len(ITEMS), ITEMS, auth)
    for k, (status, msgs) in enumerate(results):
        answers = [m for m in msgs if "result" in m or "error" in m]
        assert status == 200 and len(answers) == 1 and answers[0]["id"] == 1, msgs
        assert ITEMS[k] in json.dumps(answers[0]["result"]), (ITEMS[k], answers[0])
    calls = control_get(base, token, f"/control/episodes/{eid}/calls")
    assert sorted(c["arguments"]["item_id"] for c in calls) == sorted(ITEMS)


async def test_session_works_after_duplicates_and_ids_are_released(http_server):
    base, token = http_server
    ep = create_episode(base, token, seed=7, apps=["shop"])
    sid = await _session(ep["mcp_url"])
    await _overlapping(ep["mcp_url"], sid, [5] * 4, ITEMS[:4])
    again = await _overlapping(ep["mcp_url"], sid, [5], ITEMS[4:5])
    assert again[0][1][0]["id"] == 5 and ITEMS[4] in json.dumps(again[0][1][0])
    async with httpx.AsyncClient(timeout=20) as client:
        r = await client.post(
            ep["mcp_url"], headers=session_headers(sid), json={"jsonrpc": "2.0", "id": 5, "method": "ping"}
        )
        assert messages_of(r) == [{"jsonrpc": "2.0", "id": 5, "result": {}}]


# -- the rewriting itself, against a stand-in for the SDK's handler ---------------------------------


class FakeSDK:
    """Records the bodies it is given and answers each request like the SDK would (SSE or JSON)."""

    def __init__(self, mode: str, split: bool = False, compact: bool = False) -> None:
        self.mode, self.split, self.compact, self.seen = mode, split, compact, []

    async def __call__(self, scope, receive, send) -> None:
        body = bytearray()
        while True:
            msg = await receive()
            body.extend(msg.get("body", b""))
            if not msg.get("more_body"):
                break
        length = dict(scope["headers"]).get(b"content-length")
        assert length == str(len(body)).encode()
        data = json.loads(body)
        self.seen.append(data)
        if "id" not in data:
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        answer = json.dumps(
            {"jsonrpc": "2.0", "id": data["id"], "result": {"echo": data["id"]}},
            separators=(",", ":") if self.compact else (", ", ": "),  # the SDK writes compact JSON
        ).encode()
        if self.mode == "json":
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(answer)).encode())],
                }
            )
            await send({"type": "http.response.body", "body": answer})
            return
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
        event = b": ping\r\n\r\nevent: message\r\ndata: " + answer + b"\r\n\r\n"
        chunks = [event[:30], event[30:61], event[61:]] if self.split else [event]
        for chunk in chunks:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _drive(remap: RequestIdRemapper, app: FakeSDK, message: dict) -> tuple[list[dict], bytes]:
    raw = json.dumps(message).encode()
    scope = {"type": "http", "method": "POST", "headers": [(b"content-length", str(len(raw)).encode())]}
    parts = [raw[:7], raw[7:]]

    async def receive():
        return {"type": "http.request", "body": parts.pop(0), "more_body": bool(parts)}

    sent: list[dict] = []

    async def send(msg):
        sent.append(msg)

    await remap("sid-1", scope, receive, send, app)
    return sent, b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


@pytest.mark.parametrize("compact", [False, True])
@pytest.mark.parametrize("mode,split", [("sse", False), ("sse", True), ("json", False)])
async def test_remapper_hides_internal_ids(mode, split, compact):
    remap, app = RequestIdRemapper(10_000), FakeSDK(mode, split, compact)
    sent, body = await _drive(remap, app, {"jsonrpc": "2.0", "id": 7, "method": "ping"})
    internal = app.seen[0]["id"]
    assert isinstance(internal, str) and internal.startswith("mcpgym-")
    if mode == "json":
        assert json.loads(body) == {"jsonrpc": "2.0", "id": 7, "result": {"echo": internal}}
        assert dict(sent[0]["headers"])[b"content-length"] == str(len(body)).encode()
    else:
        assert b": ping\r\n" in body
        data = [json.loads(line[5:]) for line in body.decode().splitlines() if line.startswith("data:")]
        assert data == [{"jsonrpc": "2.0", "id": 7, "result": {"echo": internal}}]
    assert remap.in_flight() == 0


async def test_remapper_points_cancellation_at_the_request_in_flight():
    remap = RequestIdRemapper(10_000)
    gate = anyio.Event()
    seen: list[dict] = []

    class Slow(FakeSDK):
        async def __call__(self, scope, receive, send):
            msg = await receive()
            data = json.loads(msg["body"])
            seen.append(data)
            if "id" in data:
                await gate.wait()
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})

    async with anyio.create_task_group() as tg:
        tg.start_soon(_drive, remap, Slow("sse"), {"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {}})
        await anyio.wait_all_tasks_blocked()
        assert remap.in_flight() == 1
        await _drive(
            remap,
            Slow("sse"),
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "a", "reason": "user"}},
        )
        # an id nobody has in flight is passed on as sent
        await _drive(
            remap, Slow("sse"), {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "zzz"}}
        )
        gate.set()
    internal = seen[0]["id"]
    assert seen[1]["params"] == {"requestId": internal, "reason": "user"}
    assert seen[2]["params"] == {"requestId": "zzz"}
    assert remap.in_flight() == 0


async def test_remapper_passes_other_bodies_untouched():
    remap, app = RequestIdRemapper(10_000), FakeSDK("json")
    await _drive(remap, app, {"jsonrpc": "2.0", "id": 3, "result": {}})  # a response to a server request
    await _drive(remap, app, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert app.seen == [
        {"jsonrpc": "2.0", "id": 3, "result": {}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]


def test_stdio_answers_each_duplicate_once_with_its_own_item():
    """The same input over stdio (case c13b): several requests with one id in one write."""
    from tests.support.servers import RawStdio

    peer = RawStdio("--seed", "7", "--apps", "system,shop")
    try:
        init = peer.request(
            initialize_request("t"),
            timeout=120,
        )
        assert init["id"] == 0 and "result" in init
        peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        items = ITEMS[:6]
        peer.send(
            b"".join(
                json.dumps(tool_call(1, "shop_get_item", {"item_id": it})).encode() + b"\n" for it in items
            ).rstrip()
        )
        answers = [peer.receive(timeout=60) for _ in items]
        assert all(a["id"] == 1 and "result" in a for a in answers)
        named = sorted(it for a in answers for it in items if it in json.dumps(a["result"]))
        assert named == sorted(items)  # each item answered once: no answer lost or duplicated
        assert peer.request({"jsonrpc": "2.0", "id": 2, "method": "ping"}) == {"jsonrpc": "2.0", "id": 2, "result": {}}
    finally:
        assert peer.close() == 0
