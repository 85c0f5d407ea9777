"""Every wait on a client has a deadline (issue 29), with real SDK clients and raw sockets over
loopback against a spawned ``mcpgym serve --transport http``:

- a question put to a client (elicitation on a session) is answered, once the episode's wait
  limit (3/4 of the idle timeout) runs out, as the tool error ``user_input_required``, and no
  answer is logged;
- idle time runs from the client's last message: a client that declares elicitation and then
  stays silent does not keep its episode alive, so two such clients cannot hold an episode cap
  of 2 (the episodes expire and a third can be created);
- when the server stops, such waits end at once (the calls are answered that the server
  stops: ``not_found``, nothing run) and shutdown stays within its grace (2 s) of a server with
  nothing to wait for (it took 6.7 s);
- SIGINT or SIGTERM with a client's standing GET stream open ends that stream as a finished
  response and writes no ERROR line (uvicorn logged "ASGI callable returned without completing
  response" for it);
- a client that drops its connection mid-body costs one log line, never a traceback.
"""

from __future__ import annotations

import signal
import socket
import time

import anyio
import httpx
import pytest
from mcp import Client

from mcpgym.tools.mcp_bridge import payload_of
from tests.support.http_raw import initialize_request
from tests.support.mcp_helpers import SilentUser
from tests.support.servers import HttpServer, control_get, create, spawn_server

IDLE_TIMEOUT = 6.0
WAIT_LIMIT = IDLE_TIMEOUT * 0.75
GRACE = 2.0  # serve_http's timeout_graceful_shutdown
PAY = {"recipient": "Tara Dubois", "amount_cents": 50_000}


async def test_silent_clients_get_the_deadline_answer_and_cannot_hold_the_cap(figures: dict[str, str]) -> None:
    server = spawn_server("--idle-timeout", str(IDLE_TIMEOUT), "--max-episodes", "2")
    try:
        with httpx.Client(timeout=30) as http:
            episodes = [create(http, server, seed=7, apps=["system"]) for _ in range(2)]
            ended: list[float] = []
            started = time.monotonic()

            async def silent_client(ep: dict, done: anyio.Event) -> None:
                user = SilentUser()
                async with Client(ep["mcp_url"], mode="legacy", elicitation_callback=user) as client:
                    res = await client.call_tool("system_send_money", PAY)
                    ended.append(time.monotonic() - started)
                    assert res.is_error and payload_of(res)["error"]["code"] == "user_input_required"
                    assert user.asked == 1
                    (call,) = control_get(http, server, f"/control/episodes/{ep['episode_id']}/calls")
                    assert call["user"] is None and call["error_code"] == "user_input_required"
                    await done.wait()  # connected and silent, its GET stream open

            done = anyio.Event()
            async with anyio.create_task_group() as tg:
                for ep in episodes:
                    tg.start_soon(silent_client, ep, done)
                # The cap is held now; it must free itself without anyone deleting an episode.
                while True:
                    r = http.post(f"{server.url}/control/episodes", json={}, headers=server.auth)
                    if r.status_code == 201:
                        freed = time.monotonic() - started
                        break
                    assert r.status_code == 429, r.text
                    assert time.monotonic() - started < 30, "two silent clients held the episode cap"
                    await anyio.sleep(0.1)
                for ep in episodes:  # both expire, the other one maybe a sweep later
                    while http_status(server, f"/control/episodes/{ep['episode_id']}") != 404:
                        assert time.monotonic() - started < 30, "a silent client kept its episode"
                        await anyio.sleep(0.1)
                gone = time.monotonic() - started
                done.set()
        assert len(ended) == 2 and all(t > WAIT_LIMIT - 0.1 for t in ended), ended
        # Idle time runs from the client's last message (the call), not from the end of the call:
        # the end of a wait that ran out is no activity. Had it counted, no episode could expire
        # sooner than IDLE_TIMEOUT after its call ended.
        assert gone - max(ended) < IDLE_TIMEOUT, (gone, freed, ended)
        figures["elicitation deadline"] = (
            f"idle timeout {IDLE_TIMEOUT:g} s: silent clients answered user_input_required after "
            f"{max(ended):.1f} s (wait limit {WAIT_LIMIT:g} s); the cap of 2 was free after {freed:.1f} s, "
            f"both episodes gone after {gone:.1f} s"
        )
    finally:
        server.stop()
    assert "Traceback" not in server.stderr(), server.stderr()[-3000:]


def http_status(server: HttpServer, path: str) -> int:
    return httpx.get(f"{server.url}{path}", headers=server.auth, timeout=30).status_code


async def stop_and_time(server: HttpServer) -> float:
    """SIGINT ``server``; wall seconds until its process exited."""
    begun = time.monotonic()
    server.proc.send_signal(signal.SIGINT)
    while server.proc.poll() is None:
        assert time.monotonic() - begun < 30, "the server did not stop"
        await anyio.sleep(0.02)
    return time.monotonic() - begun


async def test_shutdown_stays_within_its_grace_while_clients_wait(figures: dict[str, str]) -> None:
    idle = spawn_server()
    baseline = await stop_and_time(idle)  # the same-run floor: a server with nothing to wait for
    server = spawn_server()  # idle timeout 1800 s: the waits would last 1350 s
    users = [SilentUser(), SilentUser()]
    answers: list[str] = []
    with httpx.Client(timeout=30) as http:
        episodes = [create(http, server, seed=7, apps=["system"]) for _ in users]

    async def waiting_client(ep: dict, user: SilentUser) -> None:
        try:
            async with Client(ep["mcp_url"], mode="legacy", elicitation_callback=user) as client:
                res = await client.call_tool("system_send_money", PAY)
                error = payload_of(res)["error"]
                answers.append(f"{error['code']}: {error['message']}")
                await anyio.sleep_forever()
        except Exception:  # noqa: BLE001 - the server goes away under the client: any end will do
            return

    async with anyio.create_task_group() as tg:
        for ep, user in zip(episodes, users, strict=True):
            tg.start_soon(waiting_client, ep, user)
        with anyio.fail_after(60):
            while sum(u.asked for u in users) < 2:
                await anyio.sleep(0.05)
        took = await stop_and_time(server)
        tg.cancel_scope.cancel()
    server.stop()
    figures["shutdown"] = (
        f"{took:.2f} s from SIGINT to exit with 2 clients mid-elicitation (grace {GRACE:g} s; "
        f"the same server with nothing to wait for: {baseline:.2f} s)"
    )
    # the waits end when the server stops: both calls are answered, and no grace is waited out
    stopping = "not_found: this episode ended while the call waited on the user's answer (the server is stopping)"
    assert [a.split(";")[0] for a in answers] == [stopping] * 2, answers
    assert took < baseline + GRACE, (took, baseline)
    assert "Traceback" not in server.stderr(), server.stderr()[-3000:]
    assert "ERROR" not in server.stderr(), server.stderr()[-3000:]


@pytest.mark.parametrize(("sig", "exit_code"), [(signal.SIGINT, 130), (signal.SIGTERM, -signal.SIGTERM)])
def test_a_signal_with_a_standing_get_stream_open_stops_cleanly(sig: signal.Signals, exit_code: int) -> None:
    server = spawn_server()
    ended: list[str] = []
    with httpx.Client(timeout=30) as http:
        ep = create(http, server, seed=7, apps=["system"])
        init = initialize_request("get")
        accept = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        sid = http.post(ep["mcp_url"], json=init, headers=accept).headers["mcp-session-id"]
        session = {**accept, "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert http.post(ep["mcp_url"], json=note, headers=session).status_code == 202
        get = {"Accept": "text/event-stream", "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
        with http.stream("GET", ep["mcp_url"], headers=get) as stream:
            assert stream.status_code == 200
            begun = time.monotonic()
            server.proc.send_signal(sig)
            try:
                for _ in stream.iter_raw():
                    assert time.monotonic() - begun < 30, "the GET stream did not end"
                ended.append("finished")
            except httpx.HTTPError as exc:  # a stream cut mid-response
                ended.append(repr(exc))
        code = server.proc.wait(timeout=30)
        took = time.monotonic() - begun
    server.stop()
    assert ended == ["finished"], ended
    assert code == exit_code and took < GRACE, (code, took)
    assert "ERROR" not in server.stderr() and "Traceback" not in server.stderr(), server.stderr()[-3000:]


def test_clients_dropping_mid_body_cost_one_line_each(figures: dict[str, str]) -> None:
    server = spawn_server()
    try:
        with httpx.Client(timeout=30) as http:
            ep = create(http, server)
            init = initialize_request("drop-test")
            accept = {"Accept": "application/json, text/event-stream"}
            session = http.post(ep["mcp_url"], json=init, headers=accept).headers["mcp-session-id"]
            host, port = server.url.removeprefix("http://").rsplit(":", 1)
            path = ep["mcp_url"].split(f":{port}", 1)[1]
            for i in range(100):
                extra = f"Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-06-18\r\n" if i % 2 else ""
                head = (
                    f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
                    f"Accept: application/json, text/event-stream\r\n{extra}Content-Length: 1000\r\n\r\n"
                )
                with socket.create_connection((host, int(port)), timeout=10) as sock:
                    sock.sendall(head.encode() + b'{"jsonrpc": "2.0", "id": 1, "meth')
            time.sleep(0.5)
            # still serving, on the same session
            r = http.post(
                ep["mcp_url"],
                json={"jsonrpc": "2.0", "id": 2, "method": "ping"},
                headers={**accept, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-06-18"},
            )
            assert r.status_code == 200, r.text
    finally:
        server.stop()
    log = server.stderr()
    dropped = [line for line in log.splitlines() if "dropped its connection" in line]
    figures["dropped bodies"] = f"100 clients dropping mid-body: {len(dropped)} log lines, no traceback"
    assert "Traceback" not in log, log[-3000:]
    assert 0 < len(dropped) <= 100 and all(len(line) < 200 for line in dropped), log[-3000:]
    assert len(log.splitlines()) <= 100 + 5, log[-3000:]
