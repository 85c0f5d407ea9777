"""Fuzzing through the real MCP SDK client, over streamable HTTP and over stdio.

The same strategies as the in-process fuzz (``wire=True``: values the SDK client can encode;
raw JSON-RPC with lone surrogates, non-object arguments and the like is in
test_protocol_abuse.py). Hypothesis runs synchronously; the client lives in an anyio blocking
portal so that one MCP session serves every example. Every answer must be a result or a tool
error with a known code; afterwards the session and the server still answer, and (HTTP) the
server-side call log counts every call, holds no internal error and the world round-trips
through its snapshot.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

import httpx
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import Client

from mcpgym.kernel.app import app_names
from mcpgym.kernel.world import World
from mcpgym.server.episode import Episode
from mcpgym.tools.mcp_bridge import payload_of
from tests.support.hostile import (
    FUZZ_SETTINGS,
    FuzzTally,
    call_strategy,
    check_error_payload,
    known_values,
    materialize,
    safe_repr,
    scaled,
)
from tests.support.mcp_helpers import control_get, create_episode, stdio_params

SEED = 5
EXAMPLES = 25
CALLS_PER_EXAMPLE = 10
MIN_CALLS_PER_TRANSPORT = 250


@contextlib.contextmanager
def portal_client(target: Any) -> Iterator[tuple[BlockingPortal, Client]]:
    """An entered ``mcp.Client`` for ``target`` whose coroutines run in a blocking portal."""
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(Client(target)) as client:
        yield portal, client


def _strategy() -> Any:
    """Calls over every registered app of one all-apps world (seed :data:`SEED`)."""
    episode = Episode.create(seed=SEED, apps="all")
    known: dict[str, list[str]] = {}
    for app in episode.apps:
        for key, values in known_values(episode.world, app).items():
            known.setdefault(key, []).extend(values)
    specs = episode.invoker.specs
    return call_strategy(specs, sorted(specs), known, wire=True), specs


def check_result(result: Any, name: Any, arguments: Any, specs: dict[str, Any], tally: FuzzTally) -> None:
    """Assert one ``CallToolResult`` is well-formed."""
    where = f"{safe_repr(name, 60)}({safe_repr(arguments)})"
    if result.is_error:
        assert result.structured_content is None, where
        tally.add(name, True, check_error_payload(payload_of(result), where))
        return
    assert isinstance(result.structured_content, dict), where
    specs[name].output_model.model_validate(result.structured_content)
    tally.add(name, False, None)


def fuzz_session(portal: BlockingPortal, client: Client, tally: FuzzTally) -> None:
    """Drive :data:`EXAMPLES` hypothesis examples of :data:`CALLS_PER_EXAMPLE` calls through ``client``."""
    calls, specs = _strategy()

    @settings(max_examples=scaled(EXAMPLES), **FUZZ_SETTINGS)
    @given(batch=st.lists(calls, min_size=CALLS_PER_EXAMPLE, max_size=CALLS_PER_EXAMPLE))
    def run(batch: list[tuple[Any, Any]]) -> None:
        for name, arguments in batch:
            result = portal.call(client.call_tool, name, materialize(arguments))
            check_result(result, name, arguments, specs, tally)

    run()


def test_fuzz_over_streamable_http(http_server: tuple[str, str], figures: dict[str, str]) -> None:
    base, token = http_server
    episode = create_episode(base, token, seed=SEED, apps=app_names(), faults="default", fault_seed=9)
    eid = episode["episode_id"]
    tally = FuzzTally()
    started = time.perf_counter()
    with portal_client(episode["mcp_url"]) as (portal, client):
        fuzz_session(portal, client, tally)
        still = portal.call(client.call_tool, "system_get_time", {})  # never faulted
        assert not still.is_error and still.structured_content["now"] > 0
    elapsed = time.perf_counter() - started
    figures["HTTP fuzz (MCP SDK client)"] = (
        f"{tally.calls} calls in {elapsed:.1f} s; errors by code {dict(sorted(tally.errors.items()))}"
    )
    assert tally.calls >= MIN_CALLS_PER_TRANSPORT

    log = control_get(base, token, f"/control/episodes/{eid}/calls")
    assert len(log) == tally.calls + 1
    assert not [row for row in log if row["internal"]]
    assert sum(1 for row in log if not row["is_error"]) == sum(tally.ok.values()) + 1
    info = control_get(base, token, f"/control/episodes/{eid}")
    snapshot = control_get(base, token, f"/control/episodes/{eid}/snapshot")
    assert World.restore(snapshot).state_hash() == info["state_hash"]
    assert info["calls"] == len(log)
    # The server still serves a fresh episode.
    fresh = create_episode(base, token, seed=SEED)
    with portal_client(fresh["mcp_url"]) as (portal, client):
        balance = portal.call(client.call_tool, "system_get_wallet_balance", {})
    assert not balance.is_error and balance.structured_content["balance_cents"] >= 0
    assert httpx.get(f"{base}/health", timeout=10).json()["status"] == "ok"


def test_fuzz_over_stdio(figures: dict[str, str]) -> None:
    tally = FuzzTally()
    started = time.perf_counter()
    with portal_client(
        stdio_params("--seed", str(SEED), "--apps", "all", "--faults", "default", "--fault-seed", "9")
    ) as (portal, client):
        fuzz_session(portal, client, tally)
        still = portal.call(client.call_tool, "system_get_time", {})
        assert not still.is_error and still.structured_content["now"] > 0
        listed = portal.call(client.list_tools)
        assert len(listed.tools) == len(Episode.create(seed=SEED, apps="all").invoker.specs)
    elapsed = time.perf_counter() - started
    figures["stdio fuzz (MCP SDK client)"] = (
        f"{tally.calls} calls in {elapsed:.1f} s; errors by code {dict(sorted(tally.errors.items()))}"
    )
    assert tally.calls >= MIN_CALLS_PER_TRANSPORT
    assert sum(tally.ok.values()) >= tally.calls // 10
