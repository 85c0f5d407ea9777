"""A control-API DELETE with calls queued (issue 36): every queued call gets an answer and no
connection is cut mid-response. A real server (``mcpgym serve --transport http``), one MCP
session on the episode's URL, 60 ``tools/call`` requests at once over raw HTTP, the episode
deleted once a few are answered. See docs/guarantees.md, "Server: an episode that ends".
"""

from __future__ import annotations

import anyio
import httpx

from tests.support.http_raw import messages_of, open_session, session_headers, tool_call
from tests.support.servers import spawn_server

CALLS = 60


def test_a_delete_answers_every_queued_call_and_cuts_no_response() -> None:
    server = spawn_server()
    try:
        anyio.run(_delete_while_queued, server)
    finally:
        server.proc.terminate()
        server.proc.wait(timeout=10)
    assert "Traceback" not in server.stderr() and "ASGI callable returned without" not in server.stderr()


async def _delete_while_queued(server) -> None:  # noqa: ANN001
    limits = httpx.Limits(max_connections=CALLS + 10, max_keepalive_connections=CALLS + 10)
    async with httpx.AsyncClient(timeout=60, limits=limits) as http:
        made = await http.post(
            f"{server.url}/control/episodes", json={"seed": 3, "faults": "none"}, headers=server.auth
        )
        assert made.status_code == 201, made.text
        episode, url = made.json()["episode_id"], made.json()["mcp_url"]
        opened = await open_session(http, url)
        headers = session_headers(opened.headers["mcp-session-id"])
        results: dict[int, httpx.Response | BaseException] = {}
        answered = anyio.Event()

        async def one(i: int) -> None:
            try:
                results[i] = await http.post(url, headers=headers, json=tool_call(i, "system_get_settings", {}))
            except httpx.HTTPError as exc:  # a connection cut mid-response lands here
                results[i] = exc
            if len(results) >= 5:
                answered.set()

        async def delete() -> None:
            await answered.wait()
            gone = await http.delete(f"{server.url}/control/episodes/{episode}", headers=server.auth)
            assert gone.status_code == 204, gone.text

        async with anyio.create_task_group() as tg:
            for i in range(CALLS):
                tg.start_soon(one, i)
            tg.start_soon(delete)
    cut = {i: r for i, r in results.items() if isinstance(r, BaseException)}
    assert not cut, f"{len(cut)} connections cut: {next(iter(cut.values()))!r}"
    ended = refused = 0
    for i, res in results.items():
        assert isinstance(res, httpx.Response)
        if res.status_code == 404:  # sent after the session ended: refused, answered all the same
            refused += 1
            continue
        assert res.status_code == 200, (i, res.status_code, res.text[:200])
        answers = [m for m in messages_of(res) if m.get("id") == i]
        assert answers and "result" in answers[0], (i, res.text[:300])
        text = str(answers[0]["result"])
        if answers[0]["result"].get("isError"):
            assert "not_found" in text and "ended" in text, text[:300]
            ended += 1
    assert len(results) == CALLS
    assert ended + refused > 0  # the delete did land among queued calls
