"""``/mcp``: every MCP session opened there is a new episode that ends with the session (issue 30:
an episode is created by its session's opening request and deleted by its closing one, so a
rollout makes no control round trips). Through the official SDK client and a raw peer."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import spawn_http_server
from tests.support.http_raw import HEADERS, PROTOCOL, messages_of, open_session, session_headers, tool_call
from tests.support.mcp_helpers import control_get, create_episode


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _live(base: str, token: str) -> set[str]:
    return set(control_get(base, token, "/control/episodes")["episodes"])


async def _sdk_session(url: str, token: str, calls: list[tuple[str, dict]]) -> tuple[str, list]:
    """Open a session on ``url`` with the SDK client, make ``calls``; return the episode id the
    opening answer named and the results."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    seen: list[str] = []

    async def remember(response: httpx2.Response) -> None:
        if "mcpgym-episode-id" in response.headers:
            seen.append(response.headers["mcpgym-episode-id"])

    http = httpx2.AsyncClient(headers=_auth(token), timeout=30, event_hooks={"response": [remember]})
    async with http, Client(streamable_http_client(url, http_client=http)) as client:
        results = [await client.call_tool(name, args) for name, args in calls]
    assert len(seen) == 1, seen  # only the opening answer names the episode
    return seen[0], results


async def test_a_session_on_mcp_is_an_episode_that_ends_with_it(http_server):
    base, token = http_server
    before = _live(base, token)
    calls = [("system_transfer_from_savings", {"amount_cents": 100}), ("system_get_wallet_balance", {})]
    episode_id, results = await _sdk_session(f"{base}/mcp?seed=5&apps=system,shop", token, calls)
    assert not any(r.is_error for r in results)
    # the session's close (the SDK's DELETE) ended the episode: gone from the list and every route
    assert _live(base, token) == before
    r = httpx.get(f"{base}/control/episodes/{episode_id}", headers=_auth(token))
    assert r.status_code == 404


async def test_the_query_sets_the_episode_as_the_control_api_would(http_server):
    base, token = http_server
    same = create_episode(base, token, seed=5, apps=["shop"], faults="none")
    async with httpx.AsyncClient(timeout=30) as client:
        r = await open_session(client, f"{base}/mcp?seed=5&apps=shop&faults=none")
    # the raw peer sends no token
    assert r.status_code == 401 and "control token" in r.json()["error"]
    async with httpx.AsyncClient(timeout=30, headers=_auth(token)) as client:
        r = await open_session(client, f"{base}/mcp?seed=5&apps=shop&faults=none")
        assert r.status_code == 200, r.text
        episode_id = r.headers["mcpgym-episode-id"]
        view = control_get(base, token, f"/control/episodes/{episode_id}")
        assert (view["seed"], view["apps"], view["faults"]) == (5, ["system", "shop"], "none")
        assert view["state_hash"] == same["state_hash"]
        # a write in the session changes this episode only
        sid = r.headers["mcp-session-id"]
        call = tool_call(1, "system_transfer_from_savings", {"amount_cents": 7})
        answer = await client.post(f"{base}/mcp", headers=session_headers(sid), json=call)
        assert answer.status_code == 200 and not messages_of(answer)[-1]["result"]["isError"]
        assert control_get(base, token, f"/control/episodes/{episode_id}")["state_hash"] != same["state_hash"]
        assert control_get(base, token, f"/control/episodes/{same['episode_id']}")["state_hash"] == same["state_hash"]
        # a later request's query string is not read: the session's episode is fixed
        answer = await client.post(
            f"{base}/mcp?seed=99", headers=session_headers(sid), json=tool_call(2, "system_get_wallet_balance", {})
        )
        assert answer.status_code == 200
        assert control_get(base, token, f"/control/episodes/{episode_id}")["calls"] == 2
        # the session is /mcp's own: another episode's URL refuses it
        other = await client.post(
            same["mcp_url"], headers=session_headers(sid), json=tool_call(3, "system_get_wallet_balance", {})
        )
        assert other.status_code == 404
        assert (await client.delete(f"{base}/mcp", headers=session_headers(sid))).status_code == 200
    assert episode_id not in _live(base, token)


@pytest.mark.parametrize(
    "query,status,words",
    [
        ("seed=x", 422, "invalid field 'seed': expected a whole number"),
        ("seed=-1", 422, "invalid field 'seed'"),
        ("apps=shop,nope", 422, "unknown app 'nope'"),
        ("faults=/etc/passwd", 422, "invalid field 'faults': a URL names a built-in profile"),
        ("seed=9999999999999999999", 422, "expected a whole number from 0 to 9223372036854775807"),
        ("tools=", 422, "invalid field 'tools': names no tool"),
        ("&".join(f"seed={i}" for i in range(17)), 422, "17 parameters (at most 16)"),
        ("search_tools=maybe", 422, "expected true or false"),
        ("colour=red", 422, "unknown query parameter 'colour'"),
        ("seed=1&seed=2", 422, "given twice"),
        ("apps=,", 422, "names no app"),
    ],
    ids=lambda v: v[:40] if isinstance(v, str) else None,
)
async def test_a_query_the_control_api_would_refuse_creates_nothing(http_server, query, status, words):
    base, token = http_server
    before = _live(base, token)
    async with httpx.AsyncClient(timeout=30, headers=_auth(token)) as client:
        r = await open_session(client, f"{base}/mcp?{query}")
    assert r.status_code == status and words in r.json()["error"], r.text
    assert "mcp-session-id" not in r.headers
    assert _live(base, token) == before


async def test_only_an_initialize_with_sessions_opens_one(http_server):
    base, token = http_server
    before = _live(base, token)
    async with httpx.AsyncClient(timeout=30, headers=_auth(token)) as client:
        for r in (
            await client.post(f"{base}/mcp", headers=HEADERS, json=tool_call(1, "system_get_wallet_balance", {})),
            await client.get(f"{base}/mcp", headers={"Accept": "text/event-stream"}),
            await client.post(f"{base}/mcp", headers=HEADERS, content=b"{not json"),
            await client.post(
                f"{base}/mcp",
                headers=HEADERS,
                json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2026-07-28"}},
            ),
        ):
            assert r.status_code == 400 and "open one with an initialize request" in r.json()["error"], r.text
        # an unknown session id, and a session of an episode's own URL, are not /mcp's
        r = await client.post(f"{base}/mcp", headers=session_headers("f" * 32), json=tool_call(1, "x", {}))
        assert r.status_code == 404
        own = create_episode(base, token)
        opened = await open_session(client, own["mcp_url"])
        r = await client.post(
            f"{base}/mcp", headers=session_headers(opened.headers["mcp-session-id"]), json=tool_call(1, "x", {})
        )
        assert r.status_code == 404
    assert _live(base, token) == before | {own["episode_id"]}


@pytest.mark.parametrize(
    "params",
    [
        {"capabilities": {"roots": "x"}, "clientInfo": {"name": "raw", "version": "0"}},
        {"capabilities": {"elicitation": 5}, "clientInfo": {"name": "raw", "version": "0"}},
        {"capabilities": {}, "clientInfo": {"name": "raw", "version": "0", "icons": 5}},
    ],
    ids=["roots", "elicitation", "icons"],
)
async def test_an_opening_the_sdk_refuses_names_no_episode_and_leaves_none(http_server, params):
    """A well-formed ``initialize`` the SDK answers with a JSON-RPC error (-32602): the answer
    names no episode and no session (before, it carried the ``Mcpgym-Episode-Id`` of an episode
    deleted right after), and nothing is left."""
    base, token = http_server
    before = _live(base, token)
    bad = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": PROTOCOL, **params}}
    async with httpx.AsyncClient(timeout=30, headers=_auth(token)) as client:
        r = await client.post(f"{base}/mcp", headers=HEADERS, json=bad)
        assert r.status_code == 200, r.text
        (answer,) = messages_of(r)
        assert answer["error"]["code"] == -32602 and "result" not in answer, r.text
        assert "mcpgym-episode-id" not in r.headers and "mcp-session-id" not in r.headers, dict(r.headers)
        assert _live(base, token) == before
        sessions = control_get(base, token, "/control/episodes")["mcp_sessions"]
        good = await open_session(client, f"{base}/mcp")  # the next opening still works
        assert good.status_code == 200 and good.headers["mcpgym-episode-id"] in _live(base, token)
        assert (
            await client.delete(f"{base}/mcp", headers=session_headers(good.headers["mcp-session-id"]))
        ).status_code < 300
    assert _live(base, token) == before and sessions == control_get(base, token, "/control/episodes")["mcp_sessions"]


async def test_a_control_delete_ends_the_session_and_the_cap_holds():
    proc, base, token = spawn_http_server("--max-episodes", "1")
    try:
        async with httpx.AsyncClient(timeout=30, headers=_auth(token)) as client:
            first = await open_session(client, f"{base}/mcp")
            assert first.status_code == 200
            full = await open_session(client, f"{base}/mcp")
            assert full.status_code == 429 and full.headers["retry-after"]
            episode_id, sid = first.headers["mcpgym-episode-id"], first.headers["mcp-session-id"]
            assert (await client.delete(f"{base}/control/episodes/{episode_id}")).status_code == 204
            r = await client.post(
                f"{base}/mcp", headers=session_headers(sid), json=tool_call(1, "system_get_wallet_balance", {})
            )
            assert r.status_code == 404
            assert (await open_session(client, f"{base}/mcp")).status_code == 200  # the slot is free again
    finally:
        proc.terminate()
        proc.wait(timeout=20)


async def test_empty_query_segments_are_no_parameters(http_server):
    base, token = http_server
    async with httpx.AsyncClient(timeout=30, headers=_auth(token)) as client:
        r = await open_session(client, f"{base}/mcp?seed=3" + "&" * 50)
        assert r.status_code == 200, r.text
        assert control_get(base, token, f"/control/episodes/{r.headers['mcpgym-episode-id']}")["seed"] == 3
        assert (await client.delete(f"{base}/mcp", headers=session_headers(r.headers["mcp-session-id"]))).is_success


def _init(**changes: object) -> dict:
    body: dict = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    }
    for key, value in changes.items():
        if key.startswith("params_"):
            body["params"][key.removeprefix("params_")] = value
        elif value is None:
            body.pop(key)
        else:
            body[key] = value
    return body


@pytest.mark.parametrize(
    "body,words",
    [
        (_init(id=None), "needs an 'id'"),
        ({**_init(), "id": None}, "needs an 'id'"),
        (_init(jsonrpc="1.0"), "'jsonrpc' must be \"2.0\""),
        ({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": PROTOCOL}}, "capabilities"),
        (_init(params_clientInfo={"name": "t"}), "'params.clientInfo' must be an object"),
        (_init(params_protocolVersion=7), "'params.protocolVersion' must be a string"),
        ([_init()], "the first request must be a JSON-RPC initialize request"),
    ],
    ids=["no-id", "null-id", "jsonrpc-1.0", "params-version-only", "clientinfo-no-version", "version-number", "batch"],
)
async def test_a_malformed_opening_gets_its_reason_and_creates_nothing(http_server, body, words):
    base, token = http_server
    before = _live(base, token)
    async with httpx.AsyncClient(timeout=30, headers=_auth(token)) as client:
        r = await client.post(f"{base}/mcp", headers=HEADERS, json=body)
    assert r.status_code == 400 and words in r.json()["error"], r.text
    assert "mcp-session-id" not in r.headers and "mcpgym-episode-id" not in r.headers
    assert _live(base, token) == before


async def test_wrong_headers_and_oversized_bodies_get_json_errors_on_both_routes(http_server):
    base, token = http_server
    before = _live(base, token)
    own = create_episode(base, token)
    huge = _init(params_clientInfo={"name": "x" * (5 * 1024 * 1024), "version": "0"})
    async with httpx.AsyncClient(timeout=60, headers=_auth(token)) as client:
        for url in (f"{base}/mcp", own["mcp_url"]):
            r = await client.post(url, headers=HEADERS, json=huge)
            assert r.status_code == 413 and "request body too large" in r.json()["error"], r.text
            r = await client.post(url, headers={**HEADERS, "Mcp-Session-Id": ""}, json=_init())
            assert r.status_code == 400 and "Mcp-Session-Id header is empty" in r.json()["error"], r.text
        r = await client.post(f"{base}/mcp", headers={**HEADERS, "Content-Type": "text/plain"}, content=b"{}")
        assert r.status_code == 400 and "Content-Type must be application/json" in r.json()["error"]
        # an initialize proposing a version the server does not know is negotiated, not refused
        r = await open_session(client, f"{base}/mcp")
        sid = r.headers["mcp-session-id"]
        odd = await client.post(f"{base}/mcp", headers=HEADERS, json=_init(params_protocolVersion="1999-01-01"))
        assert odd.status_code == 200, odd.text
        assert messages_of(odd)[-1]["result"]["protocolVersion"] in ("2025-11-25", "2025-06-18", "2025-03-26")
        # a request naming an unknown protocol version in its header gets 400 saying so
        r = await client.post(
            f"{base}/mcp",
            headers={**session_headers(sid), "MCP-Protocol-Version": "1999-01-01"},
            json=tool_call(1, "system_get_wallet_balance", {}),
        )
        assert r.status_code == 400 and "unsupported MCP-Protocol-Version '1999-01-01'" in r.json()["error"]
        for session in (sid, odd.headers["mcp-session-id"]):
            assert (await client.delete(f"{base}/mcp", headers=session_headers(session))).is_success
    assert _live(base, token) == before | {own["episode_id"]}


async def test_one_episode_url_cannot_take_every_session():
    """An episode keeps at most 8 open sessions: a ninth opening ends its oldest (clients such
    as the Inspector CLI never end theirs), so the server's cap stays for other episodes."""
    proc, base, token = spawn_http_server("--max-episodes", "3")
    try:
        own = create_episode(base, token)
        async with httpx.AsyncClient(timeout=30) as client:
            answers = [await open_session(client, own["mcp_url"]) for _ in range(12)]
            assert [r.status_code for r in answers] == [200] * 12
            sids = [r.headers["mcp-session-id"] for r in answers]
            served = []
            for rid, sid in enumerate(sids):
                r = await client.post(
                    own["mcp_url"], headers=session_headers(sid), json=tool_call(rid, "system_get_wallet_balance", {})
                )
                served.append(r.status_code)
            assert served == [404] * 4 + [200] * 8, served  # the four oldest were ended
            listed = control_get(base, token, "/control/episodes")
            assert listed["mcp_sessions"] <= 8
            # the server still has room for other episodes' sessions (its cap is 18 here)
            async with httpx.AsyncClient(timeout=30, headers=_auth(token)) as authed:
                opened = [await open_session(authed, f"{base}/mcp") for _ in range(2)]
            assert [r.status_code for r in opened] == [200, 200]
    finally:
        proc.terminate()
        proc.wait(timeout=20)


async def test_only_its_own_session_ends_a_session_episode(http_server):
    """A second session opened on a /mcp episode's own URL and ended leaves the episode (and
    its /mcp session) alone; the /mcp session's DELETE ends it, gone from the list at once."""
    base, token = http_server
    async with httpx.AsyncClient(timeout=30, headers=_auth(token)) as client:
        first = await open_session(client, f"{base}/mcp")
        episode_id, sid = first.headers["mcpgym-episode-id"], first.headers["mcp-session-id"]
        own_url = f"{base}/episodes/{episode_id}/mcp"
        second = await open_session(client, own_url)
        other = second.headers["mcp-session-id"]
        assert (await client.delete(own_url, headers=session_headers(other))).status_code == 200
        assert episode_id in _live(base, token)
        r = await client.post(f"{base}/mcp", headers=session_headers(sid), json=tool_call(1, "system_get_time", {}))
        assert r.status_code == 200 and not messages_of(r)[-1]["result"]["isError"]
        assert (await client.delete(f"{base}/mcp", headers=session_headers(sid))).status_code == 200
        assert episode_id not in _live(base, token)
