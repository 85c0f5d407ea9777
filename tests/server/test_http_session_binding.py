"""An MCP session belongs to the episode it was opened on for its whole life (issue 16): no
request on another episode's URL is served for it, before or after either episode is deleted,
and a deleted episode's sessions all get 404. Every order of create, open (+call) and delete."""

from __future__ import annotations

import itertools

import httpx
import pytest

from tests.support.http_raw import messages_of, open_session, session_headers, tool_call
from tests.support.mcp_helpers import control_get, create_episode

STEPS = ("create_b", "open_on_a", "delete_a", "delete_b")
ORDERS = [o for o in itertools.permutations(STEPS) if o.index("create_b") < o.index("delete_b")]


def _episode_url(base: str, episode_id: str) -> str:
    return f"{base}/episodes/{episode_id}/mcp"


async def _call(client: httpx.AsyncClient, url: str, sid: str, rid: int) -> httpx.Response:
    return await client.post(
        url, headers=session_headers(sid), json=tool_call(rid, "system_transfer_from_savings", {"amount_cents": 1})
    )


def _calls(base: str, token: str, episode_id: str) -> int:
    return len(control_get(base, token, f"/control/episodes/{episode_id}/calls"))


@pytest.mark.parametrize("order", ORDERS, ids=["-".join(o) for o in ORDERS])
async def test_session_is_served_only_on_its_own_live_episode(http_server, order):
    base, token = http_server
    auth = {"Authorization": f"Bearer {token}"}
    a = create_episode(base, token, seed=1)["episode_id"]
    b: str | None = None
    alive = {a}
    sid: str | None = None
    served_on_a = 0
    async with httpx.AsyncClient(timeout=30) as client:
        rid = 0
        for step in order:
            if step == "create_b":
                b = create_episode(base, token, seed=1)["episode_id"]
                alive.add(b)
            elif step == "open_on_a":
                r = await open_session(client, _episode_url(base, a))
                if a in alive:
                    assert r.status_code == 200, r.text
                    sid = r.headers["mcp-session-id"]
                else:
                    assert r.status_code == 404 and "mcp-session-id" not in r.headers
            else:
                gone = a if step == "delete_a" else b
                assert (await client.delete(f"{base}/control/episodes/{gone}", headers=auth)).status_code == 204
                alive.discard(gone)
            if sid is None:
                continue
            # probe: the session on its own URL, then on the other episode's URL
            rid += 1
            own = await _call(client, _episode_url(base, a), sid, rid)
            if a in alive:
                assert own.status_code == 200, own.text
                assert "result" in messages_of(own)[0]
                served_on_a += 1
                assert _calls(base, token, a) == served_on_a
            else:
                assert own.status_code == 404, own.text
            if b is not None:
                rid += 1
                other = await _call(client, _episode_url(base, b), sid, rid)
                assert other.status_code == 404, other.text
                if b in alive:
                    assert _calls(base, token, b) == 0
                    summary = control_get(base, token, f"/control/episodes/{b}")
                    assert summary["calls"] == 0
    assert served_on_a == (
        order.index("delete_a") - order.index("open_on_a") if order.index("open_on_a") < order.index("delete_a") else 0
    )


async def test_every_session_of_a_deleted_episode_gets_404_on_every_url_and_method(http_server):
    base, token = http_server
    auth = {"Authorization": f"Bearer {token}"}
    a = create_episode(base, token, seed=2)["episode_id"]
    b = create_episode(base, token, seed=2)["episode_id"]
    async with httpx.AsyncClient(timeout=30) as client:
        sids = []
        for _ in range(3):
            r = await open_session(client, _episode_url(base, a))
            assert r.status_code == 200
            sids.append(r.headers["mcp-session-id"])
        r = await open_session(client, _episode_url(base, b))
        b_sid = r.headers["mcp-session-id"]
        for k, sid in enumerate(sids):
            assert (await _call(client, _episode_url(base, a), sid, k)).status_code == 200
        before = control_get(base, token, "/control/episodes")["mcp_sessions"]
        assert (await client.delete(f"{base}/control/episodes/{a}", headers=auth)).status_code == 204
        assert before - control_get(base, token, "/control/episodes")["mcp_sessions"] == 3
        for sid in sids:
            for url in (_episode_url(base, a), _episode_url(base, b)):
                assert (await _call(client, url, sid, 9)).status_code == 404
                assert (await client.delete(url, headers=session_headers(sid))).status_code == 404
                get = await client.get(url, headers={**session_headers(sid), "Accept": "text/event-stream"})
                assert get.status_code == 404
        # the other episode's own session is untouched
        ok = await _call(client, _episode_url(base, b), b_sid, 10)
        assert ok.status_code == 200 and "result" in messages_of(ok)[0]
    listing = control_get(base, token, "/control/episodes")
    assert a not in listing["episodes"] and b in listing["episodes"]


async def test_a_session_id_never_issued_gets_404(http_server):
    base, token = http_server
    a = create_episode(base, token, seed=3)["episode_id"]
    async with httpx.AsyncClient(timeout=30) as client:
        r = await _call(client, _episode_url(base, a), "0123456789abcdef0123456789abcdef", 1)
    assert r.status_code == 404
    assert _calls(base, token, a) == 0


def test_an_episode_serving_a_request_never_expires():
    from mcpgym.server.episode import EpisodeStore

    store = EpisodeStore(idle_timeout=1.0)
    busy, idle = store.create(seed=1), store.create(seed=1)
    busy.busy = 1
    later = max(busy.last_used, idle.last_used) + 5.0
    assert store.expire(now=later) == [idle.episode_id]
    busy.busy = 0
    assert store.expire(now=later) == [busy.episode_id]
