"""The MCP server object (SDK low-level ``Server``) that serves episodes.

One :class:`mcp.server.lowlevel.Server` serves every episode: the handlers find the episode of
the request through a resolver (stdio and in-process: a fixed episode; HTTP: the episode id
in the request path). The episode is bound to the connection, never to a tool argument.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server

from mcpgym.kernel.spec import ToolSpec
from mcpgym.server.elicitation import call_asking_user
from mcpgym.server.episode import Episode
from mcpgym.server.pagination import Pager
from mcpgym.server.retrieval import SEARCH_TOOL_NAME, search_tool, search_tools_call
from mcpgym.tools.mcp_bridge import call_result, error_result, mcp_tool

SERVER_NAME = "mcpgym"
_RULES = (
    "Money is in integer cents; time is virtual (seconds since the epoch). Tools may fail: errors carry a code, "
    "whether a retry may help, and retry_after in virtual seconds."
)
INSTRUCTIONS = (
    "mcpgym sandbox: stateful apps acting for one user; each episode URL serves its own apps (see tools/list). "
    + _RULES
)
"""Instructions of the HTTP server, whose one initialisation serves every episode: they name no app."""


def instructions_for(episode: Episode) -> str:
    """The server instructions for one episode: its own apps (name and title) and the rules.

    Args:
        episode: the served episode; only its apps are named, in the episode's order.
    """
    apps = ", ".join(f"{name} ({app.title or name})" for name, app in episode.world.apps.items())
    return f"mcpgym sandbox: stateful apps acting for one user: {apps}. {_RULES}"


EpisodeResolver = Callable[[Any], "Episode | None"]
"""Maps a request context (``ServerRequestContext``) to its episode, or None."""

_TOOL_CACHE: dict[int, types.Tool] = {}


def _tool(spec: ToolSpec) -> types.Tool:
    key = id(spec)
    cached = _TOOL_CACHE.get(key)
    if cached is None:
        cached = _TOOL_CACHE[key] = mcp_tool(spec)
    return cached


def list_tools_for(episode: Episode) -> list[types.Tool]:
    """The MCP tools an episode exposes (plus ``search_tools`` in retrieval mode)."""
    tools = [_tool(s) for s in episode.tool_specs()]
    if episode.search_tools:
        tools.insert(0, search_tool())
    return tools


def build_server(
    resolve: EpisodeResolver, version: str = "0.1.0", instructions: str = INSTRUCTIONS, page_size: int | None = None
) -> Server:
    """Build the low-level MCP server whose handlers act on ``resolve(ctx)``'s episode.

    Args:
        resolve: request context -> :class:`Episode` (None: the episode is gone).
        version: server version reported at initialisation.
        instructions: the ``instructions`` of the initialisation result.
        page_size: most tools per ``tools/list`` page (None: one page, no cursors issued).
            A cursor the server never issued is refused with JSON-RPC -32602
            (:mod:`mcpgym.server.pagination`).
    """
    pager = Pager(page_size)

    async def on_list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        episode = resolve(ctx)
        tools = [] if episode is None else list_tools_for(episode)
        cursor = params.cursor if params is not None else None
        page, next_cursor = pager.page(tools, [t.name for t in tools], cursor)
        return types.ListToolsResult(tools=page, next_cursor=next_cursor)

    async def on_call_tool(
        ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        episode = resolve(ctx)
        if episode is None:
            return error_result(
                "not_found", "this episode no longer exists (it ended: deleted, expired or closed); nothing was run"
            )
        if episode.ended is not None:  # queued behind the calls before it when the episode ended
            return error_result(
                "not_found", f"this episode ended before the call ran ({episode.ended.said}); nothing was run"
            )
        if episode.search_tools and params.name == SEARCH_TOOL_NAME:
            result = search_tools_call(episode, params.arguments)
            if not result.is_error:
                # A client that cannot take notifications still gets the result.
                with contextlib.suppress(Exception):
                    await ctx.session.send_tool_list_changed()
            return result
        spec = episode.invoker.specs.get(params.name)
        echoed = params.request_state is not None or bool(params.input_responses)
        if echoed or (spec is not None and spec.user_check):
            # the user is asked (elicitation) first; an echoed requestState is checked (or refused) there
            asked = await call_asking_user(ctx, episode, params)
            if asked is not None:
                return asked
        outcome = episode.call(params.name, params.arguments)
        return call_result(outcome)

    return Server(
        SERVER_NAME,
        version=version,
        instructions=instructions,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        get_tool_input_schema=tool_input_schema,
    )


_INPUT_SCHEMAS: dict[str, dict[str, Any]] = {}


def tool_input_schema(name: str) -> dict[str, Any] | None:
    """The input schema of the registered tool ``name`` (None when there is no such tool).

    Handed to the SDK as ``get_tool_input_schema``: on a modern (2026-07-28) connection the SDK
    checks every ``tools/call``'s ``Mcp-Param-*`` headers against the called tool's schema, and
    without this lookup it finds the schema by running and serialising a whole ``tools/list``
    for every call (most of the server's CPU under load: tests/reliability/test_load.py). A
    tool's schema is the same in every episode; whether the episode exposes the tool is still
    decided by the call itself (an unexposed tool is ``not_found``).
    """
    if not _INPUT_SCHEMAS:
        from mcpgym.kernel.app import load_apps

        for app in load_apps().values():
            for spec in app.tools.values():
                _INPUT_SCHEMAS[spec.name] = _tool(spec).input_schema
        _INPUT_SCHEMAS[SEARCH_TOOL_NAME] = search_tool().input_schema
    return _INPUT_SCHEMAS.get(name)


def server_for_episode(episode: Episode, page_size: int | None = None) -> Server:
    """A server bound to one episode: for stdio and for in-process use with ``mcp.Client``.

    ``page_size``: most tools per ``tools/list`` page (None: all in one page).
    """
    return build_server(lambda ctx: episode, instructions=instructions_for(episode), page_size=page_size)
