"""Isolation and access control of the HTTP server.

- Episode ids are 128 random bits (``secrets.token_hex(16)``) and cannot be chosen by a client.
- The control API refuses a missing or wrong token on every route, compares it with
  ``hmac.compare_digest`` (shown by a spy on the real code path), and a generated token has
  192 bits.
- The server listens on 127.0.0.1 unless told otherwise (read from /proc), and keeps the SDK's
  DNS-rebinding protection: a foreign Host or Origin is refused.
- Nothing an agent can call reveals the ledger, the call log, another episode or the gold
  state: no tool name, description or schema mentions them, and the payloads of every read
  tool (and of ``search_tools``) contain neither episode id nor ledger or call-log data.
"""

from __future__ import annotations

import hmac
import inspect
import json
import re
import secrets
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from mcp import Client
from starlette.testclient import TestClient

from mcpgym.server.episode import Episode
from mcpgym.server.http_app import _security, create_app
from mcpgym.tools.conformance.args import example_arguments, known_values
from mcpgym.tools.mcp_bridge import payload_of
from tests.support.servers import HttpServer, control_get, create, listening_addresses, spawn_server


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    """One HTTP client for the module's control requests."""
    with httpx.Client(timeout=30) as client:
        yield client


@pytest.fixture(scope="module")
def server() -> Iterator[HttpServer]:
    """A dedicated server started without ``--host`` and without a token (so one is generated)."""
    srv = spawn_server(token="-", env={"MCPGYM_TOKEN": ""})
    try:
        yield srv
    finally:
        srv.stop()


# -- episode ids ---------------------------------------------------------------------------------
def test_episode_ids_carry_128_random_bits(server: HttpServer, http: httpx.Client) -> None:
    source = inspect.getsource(Episode.create)
    assert "episode_id or secrets.token_hex(16)" in source  # 16 bytes from the OS CSPRNG
    ids = [create(http, server)["episode_id"] for _ in range(64)]
    assert all(re.fullmatch(r"[0-9a-f]{32}", i) for i in ids)
    assert len({i[:8] for i in ids}) == len(ids)  # not even 32-bit prefixes collide
    bits = ["".join(f"{int(c, 16):04b}" for c in i) for i in ids]
    ones = sum(b.count("1") for b in bits) / (64 * 128)
    assert 0.46 < ones < 0.54
    per_position = [sum(b[p] == "1" for b in bits) for p in range(128)]
    assert min(per_position) >= 8 and max(per_position) <= 56  # no fixed or biased bit
    r = http.post(f"{server.url}/control/episodes", json={"episode_id": "0" * 32}, headers=server.auth)
    assert r.status_code == 422  # a client cannot choose an id
    for eid in ids:
        assert http.delete(f"{server.url}/control/episodes/{eid}", headers=server.auth).status_code == 204


# -- control token -------------------------------------------------------------------------------
def test_control_api_refuses_a_missing_or_wrong_token_on_every_route(server: HttpServer, http: httpx.Client) -> None:
    token = server.token
    assert len(token) >= 32  # generated: secrets.token_urlsafe(24), 192 bits
    eid = create(http, server)["episode_id"]
    routes = [
        ("POST", "/control/episodes"),
        ("GET", "/control/episodes"),
        ("GET", f"/control/episodes/{eid}"),
        ("GET", f"/control/episodes/{eid}/snapshot"),
        ("GET", f"/control/episodes/{eid}/initial"),
        ("GET", f"/control/episodes/{eid}/calls"),
        ("GET", f"/control/episodes/{eid}/ledger"),
        ("DELETE", f"/control/episodes/{eid}"),
        ("GET", f"/control/episodes/{'0' * 32}"),
    ]
    wrong = [
        None,
        "",
        "Bearer",
        f"Bearer {token[:-1]}",
        f"Bearer {token}x",
        f"Bearer {token[::-1]}",
        f"Bearer {secrets.token_urlsafe(24)}",
        token,
        f"Basic {token}",
        f"Token {token}",
        f"Bearer\t{token}x",
        f"Bearer {token.upper() if token.upper() != token else token.lower()}",
    ]
    for method, path in routes:
        for header in wrong:
            headers = {} if header is None else {"Authorization": header}
            r = http.request(method, f"{server.url}{path}", headers=headers, json={} if method == "POST" else None)
            assert r.status_code == 401, (method, path, header, r.status_code)
            assert r.json() == {"error": "missing or wrong control token"}
            # RFC 6750: a wrong bearer token is invalid_token (with why); no token, only the realm
            challenge = r.headers["www-authenticate"]
            if header is not None and header.startswith("Bearer ") and header[7:].strip():
                assert challenge.startswith('Bearer realm="mcpgym", error="invalid_token", error_description="wrong')
            else:
                assert challenge == 'Bearer realm="mcpgym"', (header, challenge)
        r = http.request(method, f"{server.url}{path}?token={token}", json={} if method == "POST" else None)
        assert r.status_code == 401
    assert http.get(f"{server.url}/control/episodes/{eid}", headers=server.auth).status_code == 200
    assert (
        http.get(f"{server.url}/control/episodes/{eid}", headers={"Authorization": f"bearer {token}"}).status_code
        == 200
    )  # scheme is case-insensitive
    assert http.delete(f"{server.url}/control/episodes/{eid}", headers=server.auth).status_code == 204


def test_the_token_is_compared_with_hmac_compare_digest(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[bytes, bytes, bool]] = []
    real = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        verdict = real(a, b)
        seen.append((a, b, verdict))
        return verdict

    monkeypatch.setattr(hmac, "compare_digest", spy)
    token = secrets.token_urlsafe(24)
    with TestClient(create_app(token), base_url="http://127.0.0.1:9") as client:
        assert client.get("/control/episodes", headers={"Authorization": "Bearer nope"}).status_code == 401
        assert client.get("/control/episodes", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    assert seen == [(b"nope", token.encode(), False), (token.encode(), token.encode(), True)]
    # ...and nothing else decides: no plain comparison against the token in the code path.
    source = inspect.getsource(create_app)
    authorised = source[source.index("def authorised") : source.index("def problem")]
    assert "compare_digest" in authorised and "==" not in authorised.replace('scheme.lower() == "bearer"', "")


# -- bind address and DNS rebinding ------------------------------------------------------------------
def test_binds_loopback_unless_told_otherwise(server: HttpServer) -> None:
    port = int(server.url.rsplit(":", 1)[1])
    assert server.url == f"http://127.0.0.1:{port}"
    assert listening_addresses(server.proc.pid) == [("127.0.0.1", port)]
    from mcpgym.evaluation.cli.serve import serve
    from mcpgym.server.serve import serve_http

    assert inspect.signature(serve).parameters["host"].default.default == "127.0.0.1"
    assert inspect.signature(serve_http).parameters["host"].default == "127.0.0.1"
    assert _security("127.0.0.1").enable_dns_rebinding_protection is True


INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "iso", "version": "1"}},
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def test_dns_rebinding_protection_refuses_foreign_host_and_origin(server: HttpServer, http: httpx.Client) -> None:
    url = create(http, server)["mcp_url"]
    port = url.split(":")[2].split("/")[0]
    body = json.dumps(INIT)
    modern = {"mcp-protocol-version": "2026-07-28"}
    for extra in ({}, modern):
        for host in ("evil.example", f"evil.example:{port}", "127.0.0.1.evil.example", f"attacker:{port}"):
            r = http.post(url, content=body, headers={**MCP_HEADERS, **extra, "Host": host})
            assert r.status_code == 421 and r.text == "Invalid Host header", (host, extra, r.status_code)
        for origin in ("http://evil.example", f"http://evil.example:{port}", "null", "https://127.0.0.1.evil.example"):
            r = http.post(url, content=body, headers={**MCP_HEADERS, **extra, "Origin": origin})
            assert r.status_code == 403 and r.text == "Invalid Origin header", (origin, extra, r.status_code)
    ok = http.post(
        url, content=body, headers={**MCP_HEADERS, "Host": f"localhost:{port}", "Origin": f"http://localhost:{port}"}
    )
    assert ok.status_code == 200


def test_a_session_cannot_be_carried_to_another_episode(server: HttpServer, http: httpx.Client) -> None:
    a = create(http, server)
    b = create(http, server)
    sid = http.post(a["mcp_url"], content=json.dumps(INIT), headers=MCP_HEADERS).headers["mcp-session-id"]
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "system_get_time", "arguments": {}}}
    r = http.post(
        b["mcp_url"],
        content=json.dumps(call),
        headers={**MCP_HEADERS, "mcp-session-id": sid, "mcp-protocol-version": "2025-06-18"},
    )
    assert r.status_code == 404 and r.json() == {"error": "this MCP session belongs to another episode"}


# -- what an agent can see ---------------------------------------------------------------------------
FORBIDDEN_WORDS = re.compile(
    r"ledger|call[ _-]?log|\bgold\b|\bfault[ _-]?(seed|plan|profile|schedule)|"
    r"episode[ _-]?id|state[ _-]?hash|control api|/control/",
    re.I,
)
SALTS = 2
"""Argument sets per read tool."""
LEDGER_KEYS = {"call_index", "persisting", "applied", "is_error", "error_code", "fault", "internal"}
LEAK_WORDS = re.compile(r"\bledger\b|\bcall[ _-]?log\b|fault[ _-]?seed|state[ _-]?hash|/control/", re.I)
"""In payloads (which may legitimately say "gold": a ticker, a product), only these betray a leak."""


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


async def test_no_tool_reveals_ledger_call_log_other_episodes_or_gold(
    server: HttpServer, http: httpx.Client, figures: dict[str, str]
) -> None:
    a = create(http, server, seed=8, apps="all", faults="harsh", fault_seed=3)
    b = create(http, server, seed=8, apps="all")
    marker = f"Zanzibar{secrets.token_hex(4)}"
    seen: list[str] = []
    async with Client(b["mcp_url"]) as other:
        moved = await other.call_tool("system_update_profile", {"city": marker})
        assert not moved.is_error
    async with Client(a["mcp_url"]) as agent:
        listed = await agent.list_tools()
        assert len(listed.tools) == len(Episode.create(seed=8, apps="all").invoker.specs)
        for tool in listed.tools:
            text = json.dumps(tool.model_dump(mode="json", by_alias=True))
            assert not FORBIDDEN_WORDS.search(text), (tool.name, FORBIDDEN_WORDS.search(text).group(0))
        # Every read tool of every app, a few argument sets each; plus some writes so that the
        # harsh profile fills the ledger.
        world = Episode.create(seed=8, apps="all").world
        specs = Episode.create(seed=8, apps="all").invoker.specs
        reads = sorted(n for n, s in specs.items() if s.kind == "read")
        for app in sorted({s.app for s in specs.values()}):
            known = known_values(world, app)
            for name in [n for n in reads if specs[n].app == app]:
                for salt in range(SALTS):
                    result = await agent.call_tool(name, example_arguments(specs[name], world, salt, known))
                    seen.append(json.dumps(payload_of(result)))
                    if not result.is_error:
                        assert not LEDGER_KEYS & _keys(result.structured_content), name
        for amount in range(1, 30):
            result = await agent.call_tool("system_transfer_from_savings", {"amount_cents": amount})
            seen.append(json.dumps(payload_of(result)))
    ledger = control_get(http, server, f"/control/episodes/{a['episode_id']}/ledger")
    calls = control_get(http, server, f"/control/episodes/{a['episode_id']}/calls")
    assert ledger, "the harsh profile should have injected faults: the check would mean nothing"
    assert len(calls) == len(seen) == len(reads) * SALTS + 29
    everything = "\n".join(seen)
    for secret in (a["episode_id"], b["episode_id"], server.token, marker):
        assert secret not in everything
    assert not LEAK_WORDS.search(everything), LEAK_WORDS.search(everything).group(0)
    figures["isolation"] = (
        f"{len(listed.tools)} tools listed, {len(reads)} read tools x {SALTS} argument sets + 29 "
        f"writes called over MCP; {len(ledger)} ledger entries, none visible"
    )

    # Retrieval mode: search_tools answers with tools, never with the ledger. No tool holds a
    # word of the harness's own vocabulary, so that search finds nothing (issue 25: no result
    # when nothing matches); one that also asks for the wallet finds tools, and no secret.
    r = await _search(server, http, "ledger call log gold state fault episode")
    assert r == []
    r = await _search(server, http, "ledger call log gold state fault episode wallet balance")
    assert r and not FORBIDDEN_WORDS.search(json.dumps(r))


async def _search(server: HttpServer, http: httpx.Client, query: str) -> list[dict[str, Any]]:
    episode = create(http, server, apps="all", search_tools=True, faults="harsh")
    async with Client(episode["mcp_url"]) as agent:
        result = await agent.call_tool("search_tools", {"query": query, "k": 20})
        assert not result.is_error
        return result.structured_content["tools"]
