"""Load, caps and expiry of the HTTP server.

- 200 concurrent episodes of 25 calls each over loopback (one ``mcp.Client`` per episode in
  an anyio task group): no failed request, every answer right, server RSS bounded.
- Past ``--max-episodes`` the control API refuses with 429 and a message, past the MCP
  session cap the SDK refuses with 503 and a message; the server never crashes and serves
  again once capacity is freed.
- Idle episodes expire (``--idle-timeout``; sweeps every quarter of it) and their memory is
  reused: creating as many episodes again hardly grows the RSS.
"""

from __future__ import annotations

import json
import ssl
import statistics
import time
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.support.servers import HttpServer, spawn_server

EPISODES = 200
CALLS = 25
RSS_GROWTH_BOUND_MB = 400
"""Generous bound on the server's RSS growth while 200 two-app episodes are live (measured: ~100 MB)."""
SSL_CONTEXT = ssl.create_default_context()
"""Shared by every client: building one (loading the CA bundle) costs ~80 ms of blocked event loop."""


async def _no_validation(name: str, result: Any) -> None:
    """Stands in for ``ClientSession.validate_tool_result`` (see :func:`run_episode`)."""


def mcp_client(url: str, http: httpx2.AsyncClient) -> Client:
    """An SDK client for ``url`` over ``http`` (an httpx2 client the caller owns)."""
    return Client(streamable_http_client(url, http_client=http))


async def run_episode(
    index: int, server: HttpServer, control: httpx.AsyncClient, latencies: list[float], failures: list[str]
) -> str | None:
    """Create an episode, make :data:`CALLS` calls checking each answer, close; return its id."""
    try:
        created = await control.post(f"{server.url}/control/episodes", json={"seed": index % 7}, headers=server.auth)
        assert created.status_code == 201, created.text
        episode = created.json()
        async with httpx2.AsyncClient(verify=SSL_CONTEXT, timeout=httpx2.Timeout(120)) as http:  # noqa: SIM117 - the body is long; one level per resource reads better
            async with mcp_client(episode["mcp_url"], http) as client:
                # As the evaluation runner does: no client-side output-schema check, which
                # compiles every tool's schema again in every session (~0.25 s of CPU per
                # episode, more than the server's work). The answers are checked below, and
                # the fuzz tests check outputs against their schemas.
                client.session.validate_tool_result = _no_validation  # type: ignore[method-assign]

                async def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
                    started = time.perf_counter()
                    result = await client.call_tool(name, arguments)
                    latencies.append(time.perf_counter() - started)
                    assert not result.is_error, (name, result.content)
                    return result.structured_content

                start = (await call("system_get_wallet_balance", {}))["balance_cents"]
                items = (await call("shop_search_items", {"query": "", "sort": "price_asc"}))["items"]
                item = next(i for i in items if i["stock"] >= 1)
                for step in range(CALLS - 4):
                    if step % 3 == 0:
                        moved = await call("system_transfer_from_savings", {"amount_cents": 1})
                        assert moved["balance_cents"] == start + step // 3 + 1
                    elif step % 3 == 1:
                        got = await call("shop_get_item", {"item_id": item["item_id"]})
                        assert got["item"]["item_id"] == item["item_id"]
                    else:
                        await call("system_get_time", {})
                cart = await call("shop_add_to_cart", {"item_id": item["item_id"], "quantity": 1})
                assert cart["total_cents"] == item["price_cents"]
                final = await call("system_get_wallet_balance", {})
                assert final["balance_cents"] == start + (CALLS - 4 + 2) // 3
        return episode["episode_id"]
    except Exception as exc:  # noqa: BLE001 - every failure is counted and reported
        failures.append(f"episode {index}: {describe(exc)}"[:500])
        return None


def describe(exc: BaseException) -> str:
    """``Type: message`` of ``exc``, or of the exceptions inside an exception group."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(describe(e) for e in exc.exceptions)
    return f"{type(exc).__name__}: {exc}"


def test_200_concurrent_episodes_no_failures_bounded_memory(figures: dict[str, str]) -> None:
    server = spawn_server()
    try:

        async def main() -> dict[str, Any]:
            latencies: list[float] = []
            failures: list[str] = []
            limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
            async with httpx.AsyncClient(timeout=120, limits=limits) as control:
                # Warm up (imports, first world) so that the RSS baseline is the idle server.
                warm = await run_episode(-1, server, control, [], failures)
                assert warm and not failures, failures
                await control.delete(f"{server.url}/control/episodes/{warm}", headers=server.auth)
                rss_before = server.rss_kb()
                ids: list[str | None] = [None] * EPISODES
                started = time.perf_counter()
                cpu_server, cpu_client = server.cpu_seconds(), time.process_time()

                async def one(i: int) -> None:
                    ids[i] = await run_episode(i, server, control, latencies, failures)

                async with anyio.create_task_group() as group:
                    for i in range(EPISODES):
                        group.start_soon(one, i)
                elapsed = time.perf_counter() - started
                cpu_server, cpu_client = server.cpu_seconds() - cpu_server, time.process_time() - cpu_client
                rss_peak = server.rss_kb()
                logged = []
                for eid in [i for i in ids if i][:20]:
                    logged.append(
                        (await control.get(f"{server.url}/control/episodes/{eid}", headers=server.auth)).json()
                    )
                for eid in ids:
                    if eid:
                        assert (
                            await control.delete(f"{server.url}/control/episodes/{eid}", headers=server.auth)
                        ).status_code == 204
                live = (await control.get(f"{server.url}/control/episodes", headers=server.auth)).json()
            return dict(
                latencies=latencies,
                failures=failures,
                elapsed=elapsed,
                rss_before=rss_before,
                cpu_server=cpu_server,
                cpu_client=cpu_client,
                rss_peak=rss_peak,
                rss_after=server.rss_kb(),
                logged=logged,
                live=live,
            )

        out = anyio.run(main)
    finally:
        server.stop()
    lat = sorted(out["latencies"])
    growth_mb = (out["rss_peak"] - out["rss_before"]) / 1024
    figures["load"] = (
        f"{EPISODES} episodes x {CALLS} calls = {len(lat)} calls in {out['elapsed']:.1f} s "
        f"({len(lat) / out['elapsed']:.0f} calls/s); latency p50 {1000 * statistics.median(lat):.1f} ms, "
        f"p95 {1000 * lat[int(0.95 * len(lat))]:.1f} ms, p99 {1000 * lat[int(0.99 * len(lat))]:.1f} ms, "
        f"max {1000 * lat[-1]:.0f} ms; server RSS {out['rss_before'] / 1024:.0f} MB -> "
        f"{out['rss_peak'] / 1024:.0f} MB with {EPISODES} live episodes (+{growth_mb:.0f} MB), "
        f"{out['rss_after'] / 1024:.0f} MB after deleting them; CPU: server {out['cpu_server']:.1f} s, "
        f"clients {out['cpu_client']:.1f} s"
    )
    assert out["failures"] == []
    assert len(lat) == EPISODES * CALLS
    assert all(info["calls"] == CALLS for info in out["logged"])
    assert out["live"]["episodes"] == []
    assert growth_mb < RSS_GROWTH_BOUND_MB
    assert "Traceback" not in server.stderr()


# -- caps -------------------------------------------------------------------------------------
@pytest.fixture()
def capped_server() -> Iterator[HttpServer]:
    """A server with ``--max-episodes 5`` (so at most max(2 x 5, 10) = 10 MCP sessions)."""
    server = spawn_server("--max-episodes", "5")
    try:
        yield server
    finally:
        server.stop()


INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "cap", "version": "1"}},
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def test_past_the_episode_cap_a_clear_refusal_never_a_crash(capped_server: HttpServer) -> None:
    server = capped_server
    with httpx.Client(timeout=30) as http:
        created = [http.post(f"{server.url}/control/episodes", json={"seed": i}, headers=server.auth) for i in range(5)]
        assert [r.status_code for r in created] == [201] * 5
        for _ in range(3):
            refused = http.post(f"{server.url}/control/episodes", json={}, headers=server.auth)
            assert refused.status_code == 429
            assert "episode limit reached (5 live episodes)" in refused.json()["error"]
            assert int(refused.headers["retry-after"]) > 0
        listing = http.get(f"{server.url}/control/episodes", headers=server.auth).json()
        assert len(listing["episodes"]) == 5 and listing["max_episodes"] == 5

        # One episode keeps at most 8 sessions: opening more ends its oldest (never the server's
        # whole cap). Past the server's cap (2 x 5 episodes + 8 = 18 here): 429 with a message,
        # the open sessions unharmed.
        urls = [c.json()["mcp_url"] for c in created]
        opened: list[tuple[str, str]] = []
        for _ in range(10):
            r = http.post(urls[0], content=json.dumps(INIT), headers=MCP_HEADERS)
            assert r.status_code == 200, r.text
            opened.append((urls[0], r.headers["mcp-session-id"]))
        assert http.get(f"{server.url}/control/episodes", headers=server.auth).json()["mcp_sessions"] == 8
        for url in [urls[1]] * 8 + [urls[2]] * 2:
            r = http.post(url, content=json.dumps(INIT), headers=MCP_HEADERS)
            assert r.status_code == 200, r.text
            opened.append((url, r.headers["mcp-session-id"]))
        over = http.post(urls[3], content=json.dumps(INIT), headers=MCP_HEADERS)
        assert over.status_code == 429 and "the server has 18 MCP sessions open (at most 18)" in over.json()["error"]
        url, sid = opened[-1]
        session = {**MCP_HEADERS, "mcp-session-id": sid, "mcp-protocol-version": "2025-06-18"}
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "system_get_time", "arguments": {}},
        }
        answer = http.post(url, content=json.dumps(call), headers=session)
        assert answer.status_code == 200 and '"isError":false' in answer.text
        oldest = {**session, "mcp-session-id": opened[0][1]}
        assert http.post(urls[0], content=json.dumps(call), headers=oldest).status_code == 404  # ended for room
        assert http.delete(url, headers=session).status_code in (200, 204)
        assert http.post(url, content=json.dumps(INIT), headers=MCP_HEADERS).status_code == 200

        # Freeing an episode frees a slot.
        gone = created[1].json()["episode_id"]
        assert http.delete(f"{server.url}/control/episodes/{gone}", headers=server.auth).status_code == 204
        again = http.post(f"{server.url}/control/episodes", json={}, headers=server.auth)
        assert again.status_code == 201
        assert http.get(f"{server.url}/health").json() == {"status": "ok", "episodes": 5}

    async def still_serves() -> int:
        async with Client(again.json()["mcp_url"]) as client:
            return (await client.call_tool("system_get_wallet_balance", {})).structured_content["balance_cents"]

    assert anyio.run(still_serves) > 0
    assert server.proc.poll() is None
    assert "Traceback" not in server.stderr()


# -- idle expiry --------------------------------------------------------------------------------
IDLE_TIMEOUT = 1.5
BATCH = 30


def test_idle_episodes_expire_and_free_their_memory(figures: dict[str, str]) -> None:
    server = spawn_server("--idle-timeout", str(IDLE_TIMEOUT))
    try:
        with httpx.Client(timeout=30) as http:

            def create(count: int) -> list[str]:
                out = []
                for i in range(count):
                    r = http.post(
                        f"{server.url}/control/episodes", json={"apps": "all", "seed": i}, headers=server.auth
                    )
                    assert r.status_code == 201, r.text
                    out.append(r.json()["episode_id"])
                return out

            def wait_until_empty(timeout: float = 20.0) -> float:
                started = time.perf_counter()
                while http.get(f"{server.url}/health").json()["episodes"]:
                    assert time.perf_counter() - started < timeout, "idle episodes did not expire"
                    time.sleep(0.1)
                return time.perf_counter() - started

            for eid in create(1):  # warm-up: every app imported, one world built and dropped
                assert http.delete(f"{server.url}/control/episodes/{eid}", headers=server.auth).status_code == 204
            rss0 = server.rss_kb()
            first = create(BATCH)
            rss1 = server.rss_kb()

            # An episode in use does not expire while the idle ones do: it is kept busy until
            # every idle one is gone (a condition, not a fixed time, so a loaded machine only
            # makes this longer), and must by then have outlived its own idle timeout.
            busy = create(1)[0]
            busy_since = time.perf_counter()

            async def keep_busy() -> tuple[int, float]:
                url = f"{server.url}/episodes/{busy}/mcp"
                calls = 0
                async with Client(url) as client, httpx.AsyncClient(timeout=30) as control:
                    deadline = time.perf_counter() + 60
                    while True:
                        result = await client.call_tool("system_get_time", {})
                        assert not result.is_error
                        calls += 1
                        live = (await control.get(f"{server.url}/control/episodes", headers=server.auth)).json()
                        if live["episodes"] == [busy] and time.perf_counter() - busy_since > 2 * IDLE_TIMEOUT:
                            return calls, time.perf_counter() - busy_since
                        assert busy in live["episodes"], "the busy episode expired"
                        assert time.perf_counter() < deadline, f"idle episodes did not expire: {live}"
                        await anyio.sleep(IDLE_TIMEOUT / 10)

            calls, busy_for = anyio.run(keep_busy)
            assert calls >= 5 and busy_for > 2 * IDLE_TIMEOUT
            for eid in first[:3]:
                assert http.get(f"{server.url}/control/episodes/{eid}", headers=server.auth).status_code == 404
                gone = http.post(f"{server.url}/episodes/{eid}/mcp", content=json.dumps(INIT), headers=MCP_HEADERS)
                assert gone.status_code == 404 and gone.json() == {"error": "no such episode"}
            waited = wait_until_empty()
            rss2 = server.rss_kb()
            create(BATCH)
            rss3 = server.rss_kb()
    finally:
        server.stop()
    grew, regrew = (rss1 - rss0) / 1024, (rss3 - rss2) / 1024
    figures["idle expiry"] = (
        f"{BATCH} all-app episodes took +{grew:.1f} MB; after they expired "
        f"(last one gone {waited:.1f} s after its last call) {BATCH} new ones took +{regrew:.1f} MB"
    )
    assert grew > 10  # the measurement means something: ~1.3 MB per all-app world
    assert regrew < grew / 3  # the expired episodes' memory was freed and reused
