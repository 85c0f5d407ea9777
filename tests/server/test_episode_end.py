"""An episode that ends while one of its calls waits on the client (an elicitation) answers that
call first, then ends its sessions: the control API's ``DELETE``, idle expiry and the server's
stop each give the waiting ``tools/call`` a JSON-RPC answer (the tool error ``not_found`` naming
why, nothing run or logged) before the stream ends. Before, the control ``DELETE`` ended the
client's stream with no answer for the call (the SDK client gave up: "SSE stream ended and
reconnection attempts were exhausted").

Over loopback HTTP with the official SDK client and a raw httpx peer; idle expiry runs the app
in this process under uvicorn, the only way to make a wait outlast the idle timeout (a server
waits at most 3/4 of it).
"""

from __future__ import annotations

import json
import socket

import anyio
import httpx
import uvicorn
from mcp import Client

from mcpgym.server.episode import EpisodeStore
from mcpgym.server.http_app import create_app
from mcpgym.tools.mcp_bridge import payload_of
from tests.support.http_raw import HEADERS, initialize_request, session_headers
from tests.support.mcp_helpers import SilentUser
from tests.support.servers import create, spawn_server

PAY = {"recipient": "Tara Dubois", "amount_cents": 50_000}
DEADLINE = 30.0


async def _call_while(url: str, end_it, headers: dict[str, str] | None = None) -> dict:  # noqa: ANN001
    """Call ``system_send_money`` on ``url`` with the SDK client whose user never answers; once
    the question is put, run ``end_it()``; return the call's error payload."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    user = SilentUser()
    got: list = []

    async def client() -> None:
        http = httpx2.AsyncClient(headers=headers or {}, timeout=DEADLINE)
        async with (
            http,
            Client(streamable_http_client(url, http_client=http), mode="legacy", elicitation_callback=user) as c,
        ):
            got.append(await c.call_tool("system_send_money", PAY))

    with anyio.fail_after(DEADLINE):
        async with anyio.create_task_group() as tg:
            tg.start_soon(client)
            while not user.asked:
                await anyio.sleep(0.02)
            await end_it()
    (result,) = got
    assert result.is_error and user.asked == 1
    return payload_of(result)["error"]


async def test_a_control_delete_answers_the_call_waiting_on_the_user() -> None:
    server = spawn_server()
    try:
        async with httpx.AsyncClient(timeout=DEADLINE) as http:
            r = await http.post(
                f"{server.url}/control/episodes", json={"seed": 7, "apps": ["system"]}, headers=server.auth
            )
            ep = r.json()

            async def delete() -> None:
                gone = await http.delete(f"{server.url}/control/episodes/{ep['episode_id']}", headers=server.auth)
                assert gone.status_code == 204

            error = await _call_while(ep["mcp_url"], delete)
    finally:
        server.stop()
    assert error["code"] == "not_found", error
    assert "deleted on the control API" in error["message"] and "nothing was run" in error["message"]
    assert "Traceback" not in server.stderr(), server.stderr()[-3000:]


async def test_a_control_delete_answers_a_waiting_call_of_a_session_episode() -> None:
    """The same on ``/mcp?seed=``: the episode its session opened, deleted on the control API."""
    server = spawn_server()
    seen: list[str] = []
    try:
        async with httpx.AsyncClient(timeout=DEADLINE) as http:

            async def delete() -> None:
                (eid,) = (await http.get(f"{server.url}/control/episodes", headers=server.auth)).json()["episodes"]
                seen.append(eid)
                gone = await http.delete(f"{server.url}/control/episodes/{eid}", headers=server.auth)
                assert gone.status_code == 204

            error = await _call_while(f"{server.url}/mcp?seed=7&apps=system", delete, server.auth)
    finally:
        server.stop()
    assert seen and error["code"] == "not_found" and "deleted on the control API" in error["message"], error


def _events(text: str) -> list[dict]:
    return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:") and line[5:].strip()]


async def test_a_raw_peer_gets_the_answer_on_its_stream_before_it_ends() -> None:
    """Over the wire: the call's SSE stream carries the question, then the JSON-RPC answer to the
    call (its own id), then ends as a finished response (no broken chunked body)."""
    server = spawn_server()
    try:
        async with httpx.AsyncClient(timeout=DEADLINE) as http:
            with httpx.Client(timeout=DEADLINE) as sync_http:
                ep = create(sync_http, server, seed=7, apps=["system"])
            init = initialize_request("raw", {"elicitation": {}})
            r = await http.post(ep["mcp_url"], headers=HEADERS, json=init)
            sid = r.headers["mcp-session-id"]
            note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            assert (await http.post(ep["mcp_url"], headers=session_headers(sid), json=note)).status_code == 202
            call = {
                "jsonrpc": "2.0",
                "id": 41,
                "method": "tools/call",
                "params": {"name": "system_send_money", "arguments": PAY},
            }
            body = ""
            with anyio.fail_after(DEADLINE):
                async with http.stream("POST", ep["mcp_url"], headers=session_headers(sid), json=call) as stream:
                    deleted = False
                    async for chunk in stream.aiter_text():
                        body += chunk
                        if not deleted and any(m.get("method") == "elicitation/create" for m in _events(body)):
                            deleted = True
                            gone = await http.delete(
                                f"{server.url}/control/episodes/{ep['episode_id']}", headers=server.auth
                            )
                            assert gone.status_code == 204
    finally:
        server.stop()
    messages = _events(body)
    assert messages[0]["method"] == "elicitation/create", messages
    answer = [m for m in messages if m.get("id") == 41]
    assert len(answer) == 1 and answer[0]["result"]["isError"], messages
    error = json.loads(answer[0]["result"]["content"][0]["text"])["error"]
    assert error["code"] == "not_found" and "deleted" in error["message"], error


async def test_idle_expiry_answers_the_call_waiting_on_the_user() -> None:
    # The app under uvicorn in this event loop, idle timeout 1 s, sweeps every 0.1 s; the
    # episode's wait limit set afterwards outlasts its idle timeout.
    store = EpisodeStore(idle_timeout=1.0)
    app = create_app("tok", store=store, expire_every=0.1)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, [sock])
        try:
            with anyio.fail_after(DEADLINE):
                while not server.started:
                    await anyio.sleep(0.01)
            async with httpx.AsyncClient(timeout=DEADLINE) as http:
                r = await http.post(
                    f"{url}/control/episodes",
                    json={"seed": 7, "apps": ["system"]},
                    headers={"Authorization": "Bearer tok"},
                )
            ep = r.json()
            store.get(ep["episode_id"]).limit_waits(DEADLINE)

            async def let_it_expire() -> None:
                while store.get(ep["episode_id"]) is not None:
                    await anyio.sleep(0.05)

            error = await _call_while(ep["mcp_url"], let_it_expire)
        finally:
            server.should_exit = True
    sock.close()
    assert error["code"] == "not_found" and "expired (idle)" in error["message"], error
