"""Protocol abuse over stdio (raw lines) and streamable HTTP (raw requests).

Garbage bytes, invalid JSON-RPC, unknown methods, a 10 MB body, a call before initialize,
tools/call with params of the wrong shape, lone surrogates, deep nesting, NaN, huge
integers: each gets a JSON-RPC error (stdio), or an HTTP 4xx (HTTP), never silence, a 5xx or
a crash; and the server goes on serving, checked with the SDK client afterwards.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from mcp import Client

from mcpgym.tools.mcp_bridge import payload_of
from tests.support.mcp_helpers import create_episode
from tests.support.servers import HttpServer, RawStdio, spawn_server

PROTOCOL = "2025-06-18"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "abuse", "version": "1"}},
}
TEN_MB = 10 * 1024 * 1024
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602


def call(rid: int, name: Any, arguments: Any = None, **extra: Any) -> dict[str, Any]:
    """A ``tools/call`` request."""
    params: dict[str, Any] = {"name": name, **extra}
    if arguments is not None:
        params["arguments"] = arguments
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def tool_payload(message: dict[str, Any]) -> dict[str, Any]:
    """The JSON payload of a tools/call result message."""
    result = message["result"]
    return result.get("structuredContent") or json.loads(result["content"][0]["text"])


# -- stdio ------------------------------------------------------------------------------------
def test_stdio_answers_every_malformed_line_and_keeps_serving() -> None:
    peer = RawStdio("--seed", "3")
    try:
        # Before initialize: requests are refused with a JSON-RPC error naming their id.
        early = peer.request({"jsonrpc": "2.0", "id": 100, "method": "tools/list"})
        assert early["id"] == 100 and early["error"]["code"] in (INVALID_PARAMS, INVALID_REQUEST)
        early = peer.request(call(101, "system_get_time", {}))
        assert early["id"] == 101 and "error" in early

        # Not JSON at all: parse error, id null.
        for garbage in (b"garbage \xff\xfe\x00 bytes", b"{", b"", b"\x1b[2J", b"}{", b"GET / HTTP/1.1"):
            answer = peer.request(garbage)
            assert answer == {"jsonrpc": "2.0", "id": None, "error": answer["error"]}, garbage
            assert answer["error"]["code"] == PARSE_ERROR
        # JSON, but not a JSON-RPC message.
        for line, rid in (
            (b"[1,2,3]", None),
            (b"42", None),
            (b"null", None),
            (b'{"jsonrpc":"1.0","id":7,"method":"tools/list"}', 7),
            (b'{"id":8,"method":"tools/list"}', 8),
            (b'{"jsonrpc":"2.0","id":true,"method":"tools/list"}', None),
            (b'[{"jsonrpc":"2.0","id":9,"method":"tools/list"}]', None),
        ):
            answer = peer.request(line)
            assert answer["id"] == rid and answer["error"]["code"] == INVALID_REQUEST, (line, answer)
        # Lone surrogates (valid JSON escapes, not valid Unicode), deep nesting, a 10 MB line.
        answer = peer.request(b'{"jsonrpc":"2.0","id":10,"method":"tools/list","params":{"x":"\\ud800"}}')
        assert "error" in answer and answer["error"]["code"] in (PARSE_ERROR, INVALID_REQUEST)
        answer = peer.request(b"[" * 100_000 + b"]" * 100_000)
        assert answer["id"] is None and answer["error"]["code"] == PARSE_ERROR
        answer = peer.request(b"x" * TEN_MB)
        assert answer["id"] is None and answer["error"]["code"] == PARSE_ERROR

        # Now initialize properly: the session was not harmed.
        init = peer.request(INIT)
        assert init["id"] == 1 and init["result"]["serverInfo"]["name"] == "mcpgym"
        peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert peer.silent()  # a notification gets no answer

        unknown = peer.request({"jsonrpc": "2.0", "id": 20, "method": "no/such/method"})
        assert unknown["id"] == 20 and unknown["error"]["code"] == METHOD_NOT_FOUND
        # tools/call with params of the wrong shape.
        for rid, params in (
            (21, [1, 2]),
            (22, "system_get_time"),
            (23, {"name": 5}),
            (24, {"arguments": {}}),
            (25, {"name": "system_get_time", "arguments": [1]}),
            (26, {"name": "system_get_time", "arguments": "{}"}),
        ):
            answer = peer.request({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})
            assert answer["id"] == rid and answer["error"]["code"] in (INVALID_PARAMS, INVALID_REQUEST), answer
        # Well-formed calls with hostile arguments are tool errors, not protocol errors.
        answer = peer.request(call(30, "system_update_profile", {"city": "x" * TEN_MB}))
        assert answer["result"]["isError"] and tool_payload(answer)["error"]["code"] == "invalid_argument"
        answer = peer.request(
            b'{"jsonrpc":"2.0","id":31,"method":"tools/call","params":'
            b'{"name":"system_transfer_from_savings","arguments":{"amount_cents":NaN}}}'
        )
        assert answer["id"] == 31 and ("error" in answer or answer["result"]["isError"])
        answer = peer.request(
            b'{"jsonrpc":"2.0","id":32,"method":"tools/call","params":'
            b'{"name":"system_transfer_from_savings","arguments":{"amount_cents":1' + b"0" * 5000 + b"}}}"
        )
        # A 5001-digit integer: the JSON parser refuses it (parse error) or the tool does.
        assert (answer["id"], answer.get("error", {}).get("code")) == (None, PARSE_ERROR) or (
            answer["id"] == 32 and ("error" in answer or answer["result"]["isError"])
        )
        answer = peer.request(call(33, "no_such_tool", {}))
        assert answer["result"]["isError"] and tool_payload(answer)["error"]["code"] == "not_found"
        answer = peer.request(call(34, "x" * 100_000, {}))
        assert answer["result"]["isError"] and tool_payload(answer)["error"]["code"] == "not_found"
        peer.send({"jsonrpc": "2.0", "id": 999, "result": {}})  # a response nobody asked for
        assert peer.silent()

        # Still serving: a real call works and the state is what it should be.
        balance = peer.request(call(40, "system_get_wallet_balance", {}))
        before = tool_payload(balance)["balance_cents"]
        moved = peer.request(call(41, "system_transfer_from_savings", {"amount_cents": 100}))
        assert not moved["result"]["isError"]
        after = tool_payload(peer.request(call(42, "system_get_wallet_balance", {})))["balance_cents"]
        assert after == before + 100
    finally:
        code = peer.close()
    assert code == 0
    assert "Traceback" not in peer.stderr()


# -- HTTP -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def abuse_server() -> Iterator[HttpServer]:
    """A dedicated server: the abuse must not disturb the suite's shared one."""
    server = spawn_server()
    try:
        yield server
    finally:
        server.stop()


HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def assert_refused(response: httpx.Response, statuses: tuple[int, ...] = (400,), code: int | None = None) -> None:
    """A 4xx answer (in ``statuses``) whose JSON body, if any, is a JSON-RPC error or names an error."""
    assert response.status_code in statuses, (response.status_code, response.text[:300])
    assert 400 <= response.status_code < 500
    if response.headers.get("content-type", "").startswith("application/json"):
        body = response.json()
        assert "error" in body, body
        if code is not None:
            assert body["error"]["code"] == code, body


def sse_or_json(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message of a streamable-HTTP answer (JSON or a one-event SSE stream)."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        return json.loads([d for d in data if d][-1])
    return response.json()


async def test_http_refuses_abuse_and_keeps_serving(abuse_server: HttpServer) -> None:
    server = abuse_server
    bystander = create_episode(server.url, server.token, seed=4)
    victim = create_episode(server.url, server.token, seed=4)
    url = victim["mcp_url"]
    async with Client(bystander["mcp_url"]) as live, httpx.AsyncClient(timeout=60) as http:
        first = await live.call_tool("system_get_wallet_balance", {})
        assert not first.is_error

        async def post(body: bytes, headers: dict[str, str] | None = None, target: str = url) -> httpx.Response:
            return await http.post(target, content=body, headers=headers or HEADERS)

        # Garbage, invalid JSON-RPC, lone surrogates, deep nesting.
        assert_refused(await post(b"garbage \xff\xfe\x00"), code=PARSE_ERROR)
        assert_refused(await post(b""), code=PARSE_ERROR)
        assert_refused(
            await post(b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"\\ud800"}}'), code=PARSE_ERROR
        )
        assert_refused(await post(b"[" * 100_000 + b"]" * 100_000), code=PARSE_ERROR)
        for body in (
            b"[1,2,3]",
            b"42",
            b'{"jsonrpc":"1.0","id":1,"method":"tools/list"}',
            b'{"id":1}',
            b'[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]',
        ):
            assert_refused(await post(body))
        # A 10 MB body, garbage or valid JSON: refused before it is parsed.
        assert_refused(await post(b"x" * TEN_MB), (413,))
        assert_refused(
            await post(json.dumps(call(1, "system_update_profile", {"city": "x" * TEN_MB})).encode()), (413,)
        )
        # A call before initialize (no session), and a session that does not exist.
        assert_refused(await post(json.dumps(call(2, "system_get_time", {})).encode()))
        assert_refused(await post(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}).encode()))
        assert_refused(
            await post(json.dumps(call(4, "system_get_time", {})).encode(), {**HEADERS, "mcp-session-id": "f" * 32}),
            (404,),
        )
        # Wrong media types, methods, protocol versions, episodes.
        assert_refused(await post(json.dumps(INIT).encode(), {**HEADERS, "Content-Type": "text/plain"}))
        assert_refused(await post(json.dumps(INIT).encode(), {**HEADERS, "Accept": "text/html"}), (406,))
        assert_refused(await http.put(url, content=b"{}", headers=HEADERS), (405,))
        assert_refused(await post(json.dumps(INIT).encode(), {**HEADERS, "mcp-protocol-version": "1999-01-01"}), (400,))
        assert_refused(
            await post(json.dumps(INIT).encode(), target=url.replace(victim["episode_id"], "0" * 32)), (404,)
        )

        # With a session: unknown method and tools/call params of the wrong shape.
        init = await post(json.dumps(INIT).encode())
        assert init.status_code == 200, init.text
        session = {**HEADERS, "mcp-session-id": init.headers["mcp-session-id"], "mcp-protocol-version": PROTOCOL}
        ack = await post(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode(), session)
        assert ack.status_code == 202
        answer = sse_or_json(await post(json.dumps({"jsonrpc": "2.0", "id": 5, "method": "no/such"}).encode(), session))
        assert answer["id"] == 5 and answer["error"]["code"] == METHOD_NOT_FOUND
        assert_refused(await post(b'{"jsonrpc":"2.0","id":6,"method":"tools/call","params":[1,2]}', session))
        for rid, params in (
            (7, {"name": 5}),
            (8, {"name": "system_get_time", "arguments": [1]}),
            (9, {"arguments": {}}),
        ):
            response = await post(
                json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}).encode(), session
            )
            if response.status_code == 200:
                answer = sse_or_json(response)
                assert answer["id"] == rid and answer["error"]["code"] == INVALID_PARAMS, answer
            else:
                assert_refused(response)
        assert_refused(await post(b"garbage", session), code=PARSE_ERROR)
        answer = sse_or_json(await post(json.dumps(call(10, "system_get_time", {})).encode(), session))
        assert answer["id"] == 10 and answer["result"]["isError"] is False

        # The control API refuses garbage too.
        control = f"{server.url}/control/episodes"
        assert (await http.post(control, content=b"{not json", headers=server.auth)).status_code == 400
        assert (await http.post(control, content=b"[1]", headers=server.auth)).status_code == 422
        assert (await http.post(control, content=b"x" * TEN_MB, headers=server.auth)).status_code == 413

        # Everyone is still served: the bystander's open session, the victim with a fresh client.
        after = await live.call_tool("system_get_wallet_balance", {})
        assert payload_of(after) == payload_of(first)
    async with Client(url) as fresh:
        balance = await fresh.call_tool("system_get_wallet_balance", {})
        assert not balance.is_error and balance.structured_content["balance_cents"] > 0
    assert server.proc.poll() is None
    health = httpx.get(f"{server.url}/health", timeout=10).json()
    assert health["status"] == "ok" and health["episodes"] >= 2
    log = server.stderr()
    assert "Traceback" not in log and "Error handling POST request" not in log


def test_refused_requests_leave_no_session_behind(abuse_server: HttpServer) -> None:
    """A refused opening request must not leave a session (or its bookkeeping) behind."""
    server = abuse_server
    episode = create_episode(server.url, server.token)
    before = httpx.get(f"{server.url}/control/episodes", headers=server.auth).json()["mcp_sessions"]
    with httpx.Client(timeout=30) as http:
        for _ in range(50):
            r = http.post(episode["mcp_url"], content=b"garbage", headers=HEADERS)
            assert r.status_code == 400
        init = http.post(episode["mcp_url"], content=json.dumps(INIT).encode(), headers=HEADERS)
        sid = init.headers["mcp-session-id"]
        during = http.get(f"{server.url}/control/episodes", headers=server.auth).json()["mcp_sessions"]
        closed = http.delete(
            episode["mcp_url"], headers={**HEADERS, "mcp-session-id": sid, "mcp-protocol-version": PROTOCOL}
        )
        assert closed.status_code in (200, 204)
        after = http.get(f"{server.url}/control/episodes", headers=server.auth).json()["mcp_sessions"]
    assert during == before + 1  # the 50 refused requests left nothing; the initialized session counts
    assert after == before


def test_control_api_refuses_deeply_nested_json_with_a_400(http_server) -> None:  # noqa: ANN001
    """A 100,000-deep array is refused cleanly (RecursionError in the JSON decoder), and the
    server goes on serving."""
    import httpx

    base, token = http_server
    body = b"[" * 100_000 + b"]" * 100_000
    r = httpx.post(f"{base}/control/episodes", content=body, headers={"Authorization": f"Bearer {token}"}, timeout=30)
    assert r.status_code == 400 and "JSON" in r.json()["error"]
    assert httpx.get(f"{base}/health", timeout=10).json()["status"] == "ok"
