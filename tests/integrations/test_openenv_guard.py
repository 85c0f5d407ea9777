"""The OpenEnv server trusts no client (issue 36): ``mcpgym serve --openenv`` in a real child
process, driven over raw HTTP and WebSocket (``websockets``, what openenv-core's client uses).

No fault profile by path, the control token on the control routes (and the 401 says so), idle
``/ws`` sessions expire and free their slot, every bad message is answered and the session
keeps its episode, no echo past the bound. See docs/guarantees.md, "OpenEnv server".
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import httpx
import pytest

pytest.importorskip("openenv", reason="needs the [openenv] extra (pip install 'mcpgym[openenv]')")

from websockets.asyncio.client import connect  # noqa: E402

from mcpgym.integrations.openenv_process import openenv_server  # noqa: E402

TASK = "system.dark_mode"
TOKEN = "guard-test-token"
IDLE = 1.5
SESSIONS = 2


@pytest.fixture(scope="module")
def server():
    with openenv_server("--max-episodes", str(SESSIONS), "--idle-timeout", str(IDLE), token=TOKEN) as url:
        yield url


def ws_url(url: str) -> str:
    return url.replace("http://", "ws://") + "/ws"


def test_a_fault_profile_path_is_refused_without_reading_it(server: str, tmp_path: Path) -> None:
    secret = tmp_path / "credentials.json"
    secret.write_text(json.dumps({"client_secret": "s3cr3t-value", "refresh_token": "r3fr3sh-value"}))
    headers = {"Authorization": f"Bearer {TOKEN}"}
    res = httpx.post(f"{server}/reset", json={"task": TASK, "faults": str(secret)}, headers=headers, timeout=60)
    assert res.status_code == 422 and "built-in profile" in res.text, res.text
    assert "s3cr3t" not in res.text and "r3fr3sh" not in res.text and "client_secret" not in res.text
    inline = httpx.post(
        f"{server}/reset", json={"task": TASK, "faults": {"name": "mine", "rates": {"transient": 0.5}}}, headers=headers
    )
    assert inline.status_code == 200, inline.text  # inline and built-in profiles still go

    async def over_ws() -> None:
        async with connect(ws_url(server)) as ws:
            await ws.send(json.dumps({"type": "reset", "data": {"task": TASK, "faults": str(secret)}}))
            answer = await ws.recv()
            assert "built-in profile" in answer and "s3cr3t" not in answer

    anyio.run(over_ws)


def test_the_control_routes_need_the_token_and_say_so(server: str) -> None:
    for method, path in (("POST", "/reset"), ("POST", "/step"), ("GET", "/state"), ("POST", "/mcp")):
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            res = httpx.request(method, f"{server}{path}", json={"task": TASK}, headers=headers, timeout=30)
            assert res.status_code == 401, (path, res.status_code, res.text)
            assert "needs the control token" in res.text and res.headers["www-authenticate"].startswith("Bearer")
    session = {"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create", "params": {}}
    for _ in range(SESSIONS + 2):  # no slot taken without the token
        assert httpx.post(f"{server}/mcp", json=session, timeout=30).status_code == 401
    assert httpx.get(f"{server}/health", timeout=30).status_code == 200


def test_idle_sessions_expire_and_free_their_slots(server: str) -> None:
    async def main() -> None:
        idle = [await connect(ws_url(server)) for _ in range(SESSIONS)]
        try:
            with anyio.fail_after(IDLE * 4):
                for ws in idle:
                    await ws.wait_closed()
            assert all(ws.close_code == 4408 and "idle" in (ws.close_reason or "") for ws in idle)
        finally:
            for ws in idle:
                await ws.close()
        async with connect(ws_url(server)) as ws:  # the slots are free again
            await ws.send(json.dumps({"type": "reset", "data": {"task": TASK}}))
            assert json.loads(await ws.recv())["type"] == "observation"

    anyio.run(main)


def test_bad_messages_are_answered_and_the_episode_is_kept(server: str) -> None:
    bad = [
        "[1, 2]",
        "42",
        "not json",
        '{"type": "step", "data": {"tool": "x", "arguments": {"n": ' + "9" * 5000 + "}}}",
        '{"type": "step", "data": {"arguments": ' + "[" * 50_000 + "]" * 50_000 + "}}",
        json.dumps({"type": "step", "data": {"tool": "t" * 15_000_000, "arguments": {}}}),
    ]

    async def main() -> None:
        async with connect(ws_url(server), max_size=None) as ws:
            await ws.send(json.dumps({"type": "reset", "data": {"task": TASK}}))
            first = json.loads(await ws.recv())
            assert first["type"] == "observation"
            for message in bad:
                await ws.send(message)
                answer = await ws.recv()
                assert len(answer) < 1_000, len(answer)  # no echo past the bound
                assert json.loads(answer)["type"] == "error", answer
            step = {"type": "step", "data": {"tool": "system_get_settings", "arguments": {}}}
            await ws.send(json.dumps(step))
            result = json.loads(await ws.recv())
            assert result["type"] == "observation" and result["data"]["observation"]["info"]["step"] == 1

    anyio.run(main)
