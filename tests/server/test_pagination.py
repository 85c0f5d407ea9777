"""tools/list pagination (issue 16): a cursor the server never issued is JSON-RPC -32602, over
stdio, streamable HTTP and in-process; and when the server pages, walking nextCursor returns
every tool exactly once, in catalog order."""

from __future__ import annotations

import base64

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcpgym.server.episode import Episode
from mcpgym.server.mcp_server import list_tools_for, server_for_episode
from mcpgym.server.pagination import Pager
from tests.support.mcp_helpers import create_episode, stdio_params

NEVER_ISSUED = ["bogus-cursor", "", "0", "MTAuYWJjLmRlZg", "%%%", "x" * 500]


def _episode() -> Episode:
    return Episode.create(seed=3, apps=["shop", "talk"])


async def _refused(client: Client, cursor: str) -> MCPError:
    with pytest.raises(MCPError) as info:
        await client.list_tools(cursor=cursor, cache_mode="bypass")
    assert info.value.code == types.INVALID_PARAMS, info.value
    return info.value


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_unissued_cursor_is_invalid_params_and_session_goes_on(transport, http_server):
    if transport == "stdio":
        target = stdio_params("--seed", "7", "--apps", "system,shop")
    else:
        base, token = http_server
        target = create_episode(base, token, seed=7, apps=["shop"])["mcp_url"]
    async with Client(target) as client:
        for cursor in ("bogus-cursor-never-issued", ""):
            err = await _refused(client, cursor)
            assert "not issued by this server" in err.message
        full = await client.list_tools(cache_mode="bypass")
        assert full.next_cursor is None
        names = [t.name for t in full.tools]
        assert "shop_checkout" in names and len(names) == len(set(names)) > 20


async def test_unpaged_server_refuses_every_cursor_in_process():
    async with Client(server_for_episode(_episode())) as client:
        for cursor in NEVER_ISSUED:
            await _refused(client, cursor)


@pytest.mark.parametrize("page_size", [1, 5, 7, 1000])
async def test_walking_next_cursor_returns_every_tool_once(page_size):
    episode = _episode()
    expected = [t.name for t in list_tools_for(episode)]
    async with Client(server_for_episode(episode, page_size=page_size)) as client:
        seen: list[str] = []
        cursor = None
        pages = 0
        while True:
            page = await client.list_tools(cursor=cursor, cache_mode="bypass")
            pages += 1
            assert 0 < len(page.tools) <= page_size
            seen.extend(t.name for t in page.tools)
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        assert seen == expected
        assert pages == -(-len(expected) // page_size)
        # a cursor stays valid (pages are repeatable) and the same page comes back
        if pages > 1:
            first = await client.list_tools(cache_mode="bypass")
            again = await client.list_tools(cursor=first.next_cursor, cache_mode="bypass")
            assert [t.name for t in again.tools] == expected[page_size : 2 * page_size]
        for cursor in NEVER_ISSUED:
            await _refused(client, cursor)


async def test_edited_or_foreign_cursor_is_refused():
    episode = _episode()
    names = [t.name for t in list_tools_for(episode)]
    async with Client(server_for_episode(episode, page_size=4)) as client:
        issued = (await client.list_tools(cache_mode="bypass")).next_cursor
        assert issued
        raw = base64.urlsafe_b64decode(issued + "=" * (-len(issued) % 4)).decode()
        offset, fp, mac = raw.split(".")
        for forged in (f"{int(offset) + 1}.{fp}.{mac}", f"{len(names) + 4}.{fp}.{mac}", f"{offset}.{fp}.{'0' * 16}"):
            await _refused(client, base64.urlsafe_b64encode(forged.encode()).decode())
        # a cursor issued by another server (another key) was never issued by this one
        other = Pager(4).cursor(4, names)
        await _refused(client, other)


def test_cursor_of_a_changed_listing_is_refused():
    pager = Pager(2)
    cursor = pager.cursor(2, ["a", "b", "c"])
    assert pager.page(["A", "B", "C"], ["a", "b", "c"], cursor) == (["C"], None)
    with pytest.raises(MCPError) as info:
        pager.page(["A", "B", "D"], ["a", "b", "d"], cursor)
    assert info.value.code == types.INVALID_PARAMS and "changed" in info.value.message
    with pytest.raises(ValueError):
        Pager(-1)
