"""The measured workload: a typical shop write under the default fault profile.

Every call-path figure times the same call, ``shop_add_to_cart`` of one seeded item (one
unit), in an episode of apps ``system, shop`` with world seed 0, the ``default`` fault profile
and a fault seed under which neither the write nor its undo is down for the episode
(:func:`fault_seed_for_workload`). Between two timed calls, untimed, the client behaves like a
careful agent so that the next timed call meets the same state: it cures a rate limit with
``system_wait`` and an auth challenge with ``system_authenticate``, then undoes the write with
``shop_remove_from_cart`` (retrying through faults). About one timed call in five meets an
injected fault; the figures use medians, so they describe the common, successful write.

The logic exists twice, for a synchronous call function (the in-process invoker) and an
asynchronous one (an MCP client); both take ``call(name, arguments) -> (is_error, payload)``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

WORLD_SEED = 0
APPS = ("system", "shop")
PROFILE = "default"
WRITE_TOOL = "shop_add_to_cart"
UNDO_TOOL = "shop_remove_from_cart"
WAIT_TOOL = "system_wait"
AUTH_TOOL = "system_authenticate"
MAX_UNDO_TRIES = 12

CallFn = Callable[[str, dict[str, Any]], tuple[bool, dict[str, Any]]]
AsyncCallFn = Callable[[str, dict[str, Any]], Awaitable[tuple[bool, dict[str, Any]]]]


def workload_item(seed: int = WORLD_SEED) -> str:
    """The item the workload adds: the first seeded shop item with at least 2 units in stock."""
    from mcpgym.kernel.world import World
    from mcpgym.sandboxes.shop.models import ShopState

    world = World(seed, list(APPS))
    state = world.apps["shop"].state
    assert isinstance(state, ShopState), "the shop app's state is a ShopState"
    for item_id, item in sorted(state.items.items()):
        if item.stock >= 2:
            return item_id
    raise RuntimeError("no shop item with stock >= 2 in the benchmark world")


def fault_seed_for_workload(seed: int = WORLD_SEED) -> int:
    """The smallest fault seed under which neither :data:`WRITE_TOOL` nor :data:`UNDO_TOOL` is
    down (``unavailable`` all episode) in the benchmark episode."""
    from mcpgym.kernel.world import World
    from mcpgym.tools.invoke import ToolInvoker

    world = World(seed, list(APPS))
    for fault_seed in range(1000):
        down = ToolInvoker(world, PROFILE, fault_seed).down
        if WRITE_TOOL not in down and UNDO_TOOL not in down:
            return fault_seed
    raise RuntimeError("no fault seed keeps the benchmark tools up")


def write_arguments(item_id: str) -> dict[str, Any]:
    """Arguments of the timed write."""
    return {"item_id": item_id, "quantity": 1}


def _code(payload: dict[str, Any]) -> tuple[str | None, int]:
    err = payload.get("error") if isinstance(payload, dict) else None
    if not isinstance(err, dict):
        return None, 0
    return err.get("code"), int(err.get("retry_after") or 0)


def _cure(is_error: bool, payload: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The call that cures an error still in force (rate limit, auth challenge), if any."""
    if not is_error:
        return None
    code, retry_after = _code(payload)
    if code == "rate_limited":
        return WAIT_TOOL, {"seconds": max(1, retry_after)}
    if code == "auth_required":
        return AUTH_TOOL, {}
    return None


def settle(call: CallFn, item_id: str, is_error: bool, payload: dict[str, Any]) -> int:
    """After a timed write, cure what it met and empty the cart line again (synchronously).

    Returns:
        The number of untimed calls made.
    """
    made = 0
    cure = _cure(is_error, payload)
    if cure is not None:
        call(*cure)
        made += 1
    for _ in range(MAX_UNDO_TRIES):
        err, out = call(UNDO_TOOL, {"item_id": item_id})
        made += 1
        code, _ = _code(out)
        if not err or code in ("not_found", "invalid_argument"):
            break
        cure = _cure(err, out)
        if cure is not None:
            call(*cure)
            made += 1
    return made


async def settle_async(call: AsyncCallFn, item_id: str, is_error: bool, payload: dict[str, Any]) -> int:
    """:func:`settle` for an asynchronous call function (an MCP client)."""
    made = 0
    cure = _cure(is_error, payload)
    if cure is not None:
        await call(*cure)
        made += 1
    for _ in range(MAX_UNDO_TRIES):
        err, out = await call(UNDO_TOOL, {"item_id": item_id})
        made += 1
        code, _ = _code(out)
        if not err or code in ("not_found", "invalid_argument"):
            break
        cure = _cure(err, out)
        if cure is not None:
            await call(*cure)
            made += 1
    return made


def mcp_call(client: Any) -> AsyncCallFn:
    """An :data:`AsyncCallFn` over an ``mcp.Client``: ``(is_error, JSON payload)``."""
    from mcpgym.tools.mcp_bridge import payload_of

    async def call(name: str, arguments: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
        result = await client.call_tool(name, arguments)
        return bool(result.is_error), payload_of(result)

    return call


__all__ = [
    "APPS",
    "PROFILE",
    "WORLD_SEED",
    "WRITE_TOOL",
    "UNDO_TOOL",
    "fault_seed_for_workload",
    "mcp_call",
    "settle",
    "settle_async",
    "workload_item",
    "write_arguments",
]
