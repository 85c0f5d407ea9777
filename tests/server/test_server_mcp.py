"""The SDK's own client against our server, over stdio and streamable HTTP (issue: core)."""

from __future__ import annotations

import httpx
import pytest
from mcp import Client

from mcpgym.kernel.world import World
from mcpgym.tools.invoke import ToolInvoker
from mcpgym.tools.mcp_bridge import payload_of
from tests.support.mcp_helpers import control_get, create_episode, stdio_params

SEED = 11


def expected_tool_names(apps: list[str]) -> set[str]:
    world = World(SEED, apps)
    return set(ToolInvoker(world, "none").specs)


async def purchase(client: Client) -> dict:
    """Search, add to cart, authorise, checkout, read the order back; return the figures."""
    before = (await client.call_tool("system_get_wallet_balance", {})).structured_content["balance_cents"]
    found = (await client.call_tool("shop_search_items", {"query": "", "sort": "price_asc"})).structured_content
    item = next(i for i in found["items"] if i["stock"] >= 2)
    added = await client.call_tool("shop_add_to_cart", {"item_id": item["item_id"], "quantity": 2})
    assert not added.is_error, added.structured_content
    cart = (await client.call_tool("shop_get_cart", {})).structured_content
    auth = (await client.call_tool("system_authorize_payment", {"limit_cents": cart["total_cents"]})).structured_content
    done = await client.call_tool("shop_checkout", {"authorization_id": auth["authorization"]["auth_id"]})
    assert not done.is_error, done.structured_content
    order_id = done.structured_content["order_id"]
    order = (await client.call_tool("shop_get_order", {"order_id": order_id})).structured_content
    after = (await client.call_tool("system_get_wallet_balance", {})).structured_content["balance_cents"]
    return {"item": item, "cart": cart, "order": order, "before": before, "after": after}


def check_tools_listing(tools) -> None:
    by_name = {t.name: t for t in tools.tools}
    assert set(by_name) == expected_tool_names(["system", "shop"])
    for tool in tools.tools:
        assert tool.output_schema is not None and tool.output_schema.get("type") == "object", tool.name
        assert tool.annotations is not None and tool.annotations.open_world_hint is False
    assert by_name["shop_get_cart"].annotations.read_only_hint is True
    assert by_name["shop_checkout"].annotations.read_only_hint is False
    assert by_name["shop_cancel_order"].annotations.destructive_hint is True


def check_purchase(figures: dict) -> None:
    order = figures["order"]
    assert order["total_cents"] == figures["cart"]["total_cents"] > 0
    assert figures["before"] - figures["after"] == order["total_cents"]
    assert [line["item_id"] for line in order["lines"]] == [figures["item"]["item_id"]]


async def test_stdio_lists_tools_and_buys():
    async with Client(stdio_params("--seed", str(SEED))) as client:
        check_tools_listing(await client.list_tools())
        check_purchase(await purchase(client))


async def test_http_lists_tools_and_buys(http_server):
    base, token = http_server
    ep = create_episode(base, token, seed=SEED, apps=["system", "shop"])
    async with Client(ep["mcp_url"]) as client:
        check_tools_listing(await client.list_tools())
        figures = await purchase(client)
    check_purchase(figures)
    calls = control_get(base, token, f"/control/episodes/{ep['episode_id']}/calls")
    assert [c["tool"] for c in calls][:2] == ["system_get_wallet_balance", "shop_search_items"]
    assert all(not c["is_error"] for c in calls)
    info = control_get(base, token, f"/control/episodes/{ep['episode_id']}")
    assert info["calls"] == len(calls) and info["seed"] == SEED and info["apps"] == ["system", "shop"]
    snap = control_get(base, token, f"/control/episodes/{ep['episode_id']}/snapshot")
    assert snap["state"]["system"]["wallet"]["balance_cents"] == figures["after"]
    assert World.restore(snap).state_hash() == info["state_hash"]


BAD_CALLS = [
    ("shop_add_to_cart", {"quantity": 1}, "invalid_argument", "item_id"),
    ("shop_add_to_cart", {"item_id": "item-0101", "quantity": "many"}, "invalid_argument", "quantity"),
    ("shop_get_item", {"item_id": "item-9999"}, "not_found", "item_id"),
    ("shop_search_items", {"query": "x" * 10_001}, "invalid_argument", "query"),
    ("shop_get_item", {"item_id": "item-0101", "extra": 1}, "invalid_argument", "extra"),
    ("no_such_tool", {}, "not_found", "name"),
]


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_bad_input_is_a_tool_error_and_session_goes_on(transport, http_server):
    if transport == "stdio":
        target = stdio_params("--seed", str(SEED))
    else:
        base, token = http_server
        target = create_episode(base, token, seed=SEED)["mcp_url"]
    async with Client(target) as client:
        for name, args, code, field in BAD_CALLS:
            result = await client.call_tool(name, args)
            assert result.is_error, (name, args)
            assert result.structured_content is None
            error = payload_of(result)["error"]
            assert (error["code"], error["field"]) == (code, field), (name, error)
        ok = await client.call_tool("system_get_wallet_balance", {})
        assert not ok.is_error and ok.structured_content["balance_cents"] > 0


async def test_two_http_episodes_with_same_seed_are_isolated(http_server):
    base, token = http_server
    a = create_episode(base, token, seed=SEED)
    b = create_episode(base, token, seed=SEED)
    assert a["state_hash"] == b["state_hash"] and a["episode_id"] != b["episode_id"]
    async with Client(a["mcp_url"]) as ca, Client(b["mcp_url"]) as cb:
        await ca.call_tool("system_transfer_from_savings", {"amount_cents": 1234})
        bal_a = (await ca.call_tool("system_get_wallet_balance", {})).structured_content
        bal_b = (await cb.call_tool("system_get_wallet_balance", {})).structured_content
    assert bal_a["balance_cents"] - bal_b["balance_cents"] == 1234
    ha = control_get(base, token, f"/control/episodes/{a['episode_id']}")["state_hash"]
    hb = control_get(base, token, f"/control/episodes/{b['episode_id']}")["state_hash"]
    assert ha != hb and hb == b["state_hash"]
    assert len(control_get(base, token, f"/control/episodes/{b['episode_id']}/calls")) == 1


async def test_final_is_the_call_log_ledger_and_snapshot_in_one_answer(http_server):
    from mcpgym.server.control_models import EpisodeFinal

    base, token = http_server
    ep = create_episode(base, token, seed=SEED, faults="harsh")
    async with Client(ep["mcp_url"]) as client:
        for _ in range(6):
            await client.call_tool("system_transfer_from_savings", {"amount_cents": 100})
    path = f"/control/episodes/{ep['episode_id']}"
    final = control_get(base, token, f"{path}/final")
    EpisodeFinal.model_validate(final)
    assert final["calls"] == control_get(base, token, f"{path}/calls") and len(final["calls"]) == 6
    assert final["ledger"] == control_get(base, token, f"{path}/ledger")
    assert final["snapshot"] == control_get(base, token, f"{path}/snapshot")
    assert httpx.get(f"{base}{path}/final").status_code == 401
    assert (
        httpx.get(f"{base}/control/episodes/{'0' * 32}/final", headers={"Authorization": f"Bearer {token}"}).status_code
        == 404
    )


def test_control_api_needs_the_token(http_server):
    base, token = http_server
    assert httpx.post(f"{base}/control/episodes", json={}).status_code == 401
    assert httpx.get(f"{base}/control/episodes", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert httpx.get(f"{base}/control/episodes", headers={"Authorization": token}).status_code == 401
    ep = create_episode(base, token)
    assert httpx.get(f"{base}/control/episodes/{ep['episode_id']}/ledger").status_code == 401
    assert httpx.delete(f"{base}/control/episodes/{ep['episode_id']}").status_code == 401
    assert (
        httpx.delete(
            f"{base}/control/episodes/{ep['episode_id']}", headers={"Authorization": f"Bearer {token}"}
        ).status_code
        == 204
    )
    assert httpx.post(ep["mcp_url"], json={}).status_code == 404


def test_control_api_rejects_bad_episode_requests(http_server):
    base, token = http_server
    auth = {"Authorization": f"Bearer {token}"}
    r = httpx.post(f"{base}/control/episodes", json={"apps": ["nope"]}, headers=auth)
    assert r.status_code == 422 and "nope" in r.json()["error"]
    r = httpx.post(f"{base}/control/episodes", json={"faults": "/etc/passwd"}, headers=auth)
    assert r.status_code == 422
    r = httpx.post(f"{base}/control/episodes", content=b"{not json", headers=auth)
    assert r.status_code == 400
    r = httpx.post(f"{base}/control/episodes", json={"seed": "x"}, headers=auth)
    assert r.status_code == 422 and "seed" in r.json()["error"]
    assert httpx.get(f"{base}/control/episodes/{'0' * 32}", headers=auth).status_code == 404


def test_episode_ids_are_128_bit_hex(http_server):
    base, token = http_server
    ids = {create_episode(base, token)["episode_id"] for _ in range(5)}
    assert len(ids) == 5 and all(len(i) == 32 and int(i, 16) >= 0 for i in ids)


ALL_APPS = ("system", "shop", "talk", "flights", "stocks", "weather", "news", "office")


def test_instructions_name_only_the_episodes_apps():
    from mcpgym.server.episode import Episode
    from mcpgym.server.mcp_server import server_for_episode

    text = server_for_episode(Episode.create(seed=SEED, apps=["system", "shop"])).instructions
    assert "system (System)" in text and "shop (Shop)" in text
    assert [app for app in ALL_APPS if app in text] == ["system", "shop"]


async def test_stdio_instructions_name_only_the_served_apps():
    async with Client(stdio_params("--seed", str(SEED), "--apps", "system,weather")) as client:
        text = client.instructions
    assert [app for app in ALL_APPS if app in text] == ["system", "weather"]
