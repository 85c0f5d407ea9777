"""One ComplexMCP episode's sessions with the apps, and the MCP server an agent reaches them by.

As their harness does (``client/agent.py``): log into LightSystem with the task's seed, then
into each of the task's apps with ``login(seed, os_cfg={"session_id", "url"})`` (the app's
clock is LightSystem's session); every call of the agent gets its app's ``session_id`` added;
at the end every app is logged out. The ``session_info`` of each ``login`` is the state
before, each ``logout`` answer the state after (both ``{"status", "output"}`` per app, the
shapes of their ``gt_env``).

The agent sees the tools their harness shows a model: those of each app's ``desc.json``
(``login``, ``logout``, ``_step`` and ``_gen_past`` are in none), under the key names their
toolbox gives them (a name an earlier app took gets the app's name as prefix:
``LightFlight_check_balance``), with the app's input schema less ``session_id``. A call of a
tool of an app the task did not log into is answered as their harness answers it
(``{"status": "failed", "output": "LightStock has not been logged into yet."}``).

:func:`gateway_server` is the in-process MCP server of these sessions that mcpgym's proxy
forwards to (:mod:`mcpgym.evaluation.complexmcp.run`).
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from pydantic import BaseModel, ConfigDict

from mcpgym.evaluation.complexmcp.apps import APP_NAMES, SYSTEM_APP
from mcpgym.kernel.exceptions import ServiceError

SESSION_ARG = "session_id"
"""The argument every app tool takes, filled in by the gateway and never shown to the agent."""
HIDDEN_TOOLS = frozenset({"login", "logout", "_step", "_gen_past"})
"""App tools never offered to the agent (none of them is in a ``desc.json``)."""
APP_CALL_TIMEOUT = 60.0
"""Wall seconds one call to an app may take (login and logout included)."""


class SessionError(ServiceError, RuntimeError):
    """An app refused a login or logout, or did not answer in time; the message names the app."""


class Route(BaseModel):
    """One tool the agent may call.

    Attributes:
        key: the name the agent calls (their toolbox's key name). app: the app serving it.
        tool: the app's own tool name. description: from the app's ``desc.json``.
        input_schema: the app's input schema, ``session_id`` removed.
    """

    model_config = ConfigDict(frozen=True)

    key: str
    app: str
    tool: str
    description: str
    input_schema: dict[str, Any]

    def mcp_tool(self) -> types.Tool:
        """The tool as ``tools/list`` shows it."""
        return types.Tool(name=self.key, description=self.description, input_schema=self.input_schema)

    def search_spec(self) -> SearchSpec:
        """The tool as :func:`mcpgym.server.retrieval.rank_tools` reads it."""
        return SearchSpec(self)


class SearchSpec:
    """A :class:`Route` as mcpgym's tool search ranks it: name, description, input schema
    (a method) and resources (its app)."""

    def __init__(self, route: Route) -> None:
        self.name, self.description, self.resources = route.key, route.description, [route.app]
        self._schema = route.input_schema

    def input_schema(self) -> dict[str, Any]:
        """The route's input schema."""
        return self._schema


def _agent_schema(schema: dict[str, Any]) -> dict[str, Any]:
    props = {k: v for k, v in (schema.get("properties") or {}).items() if k != SESSION_ARG}
    out: dict[str, Any] = {**schema, "type": "object", "properties": props}
    required = [r for r in schema.get("required") or [] if r != SESSION_ARG]
    if required:
        out["required"] = required
    else:
        out.pop("required", None)
    return out


def routes(tree: Path, listed: dict[str, list[types.Tool]]) -> dict[str, Route]:
    """The agent's tools (module docstring), in their harness's order.

    Args:
        tree: the apps' tree (``software/<App>/desc.json``).
        listed: app -> the tools its ``tools/list`` gave (for the input schemas).

    Raises:
        ValueError: a ``desc.json`` that cannot be read.
    """
    table: dict[str, Route] = {}
    for app in APP_NAMES:
        path = tree / "software" / app / "desc.json"
        try:
            described = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"{path}: cannot read the app's tool descriptions: {exc}") from None
        schemas = {t.name: t.input_schema for t in listed.get(app, [])}
        for entry in described:
            name = entry.get("tool_name")
            if name in HIDDEN_TOOLS or name not in schemas:
                continue
            key = name
            while key in table:
                key = f"{app}_{key}"
            table[key] = Route(
                key=key,
                app=app,
                tool=name,
                description=str(entry.get("description") or ""),
                input_schema=_agent_schema(dict(schemas[name])),
            )
    return table


def _payload(result: types.CallToolResult) -> Any:
    """The app's answer as their harness reads it: the JSON of the first text block."""
    text = next((b.text for b in result.content if isinstance(b, types.TextContent)), "")
    try:
        return json.loads(text)
    except ValueError:
        return text


def _text_result(payload: Any, is_error: bool = False) -> types.CallToolResult:
    text = json.dumps(payload, ensure_ascii=False)
    structured = payload if isinstance(payload, dict) else None
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=structured, is_error=is_error
    )


class EpisodeApps:
    """The sessions of one episode (module docstring). Use :meth:`connect` (an async context
    manager holding one MCP connection per app), then :meth:`login`, :meth:`call`, :meth:`logout`.

    Args:
        urls: app -> endpoint (:class:`~mcpgym.evaluation.complexmcp.apps.RunningApps`).
        table: the agent's tools (:func:`routes`).
        seed: the task's seed. apps: the task's apps (LightSystem is added first).
    """

    def __init__(self, urls: dict[str, str], table: dict[str, Route], seed: int, apps: list[str]) -> None:
        self.urls = urls
        self.table = table
        self.seed = seed
        self.apps = [SYSTEM_APP] + [a for a in apps if a != SYSTEM_APP]
        self.clients: dict[str, Any] = {}
        self.sessions: dict[str, str] = {}
        self.before: dict[str, Any] = {}
        self.after: dict[str, Any] = {}

    @contextlib.asynccontextmanager
    async def connect(self) -> Any:
        """Hold one MCP connection to each of the episode's apps while the block runs."""
        from mcp import Client

        async with contextlib.AsyncExitStack() as stack:
            for app in self.apps:  # the apps answered already (running_apps waited for each)
                self.clients[app] = await stack.enter_async_context(Client(self.urls[app], mode="legacy"))
            try:
                yield self
            finally:
                self.clients = {}

    async def _raw(self, app: str, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
        try:
            with anyio.fail_after(APP_CALL_TIMEOUT):
                result: types.CallToolResult = await self.clients[app].session.call_tool(tool, arguments)
        except TimeoutError:
            raise SessionError(f"{app} did not answer {tool} within {APP_CALL_TIMEOUT:g} s") from None
        return result

    async def login(self) -> dict[str, Any]:
        """Log into LightSystem, then every app of the task; return the states before.

        Raises:
            SessionError: an app answered its login with an error.
        """
        for app in self.apps:
            args: dict[str, Any] = {"seed": self.seed}
            if app != SYSTEM_APP:
                args["os_cfg"] = {"session_id": self.sessions[SYSTEM_APP], "url": self.urls[SYSTEM_APP]}
            answer = _payload(await self._raw(app, "login", args))
            if not isinstance(answer, dict) or "session_id" not in answer:
                raise SessionError(f"{app} refused the login of seed {self.seed}: {str(answer)[:300]}")
            self.sessions[app] = str(answer["session_id"])
            self.before[app] = answer.get("session_info")
        return self.before

    async def logout(self) -> dict[str, Any]:
        """Log out of every app logged into (LightSystem first, as their harness does); return the states after.

        Raises:
            SessionError: an app answered its logout with something else than its state.
        """
        for app in [a for a in self.apps if a in self.sessions]:
            answer = _payload(await self._raw(app, "logout", {SESSION_ARG: self.sessions.pop(app)}))
            if not isinstance(answer, dict) or answer.get("status") != "ok":
                raise SessionError(f"{app} refused the logout: {str(answer)[:300]}")
            self.after[app] = answer
        return self.after

    async def call(self, key: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        """Call the agent's tool ``key`` with ``arguments`` plus its app's ``session_id``.

        An unknown tool, or one of an app not logged into, is answered as their harness
        answers it; a ``session_id`` the agent passes is replaced.
        """
        route = self.table.get(key)
        if route is None:
            return _text_result({"status": "error", "output": f"This tool `{key}` doesn't exist."}, True)
        if route.app not in self.sessions:
            return _text_result({"status": "failed", "output": f"{route.app} has not been logged into yet."}, True)
        args = {**(arguments or {}), SESSION_ARG: self.sessions[route.app]}
        return await self._raw(route.app, route.tool, args)


async def list_app_tools(urls: dict[str, str]) -> dict[str, list[types.Tool]]:
    """Every app's ``tools/list`` (for :func:`routes`), with a deadline per app."""
    from mcp import Client

    listed: dict[str, list[types.Tool]] = {}
    for app, url in urls.items():
        async with Client(url, mode="legacy") as client:
            with anyio.fail_after(APP_CALL_TIMEOUT):
                listed[app] = list((await client.session.list_tools()).tools)
    return listed


def gateway_server(episode: EpisodeApps, offered: list[str] | None, search: bool) -> Any:
    """The in-process MCP server of ``episode``: what mcpgym's proxy forwards to.

    Args:
        episode: the logged-in sessions.
        offered: the keys ``tools/list`` shows (None: every tool of the table).
        search: retrieval mode: ``tools/list`` shows ``search_tools`` (mcpgym's meta-tool) and
            the tools found so far; any tool may be called.
    """
    from mcp.server.lowlevel import Server

    from mcpgym.server.retrieval import SEARCH_TOOL_NAME, rank_tools, search_tool

    shown: list[str] = list(episode.table) if offered is None and not search else list(offered or [])

    async def on_list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        tools = [search_tool()] if search else []
        return types.ListToolsResult(tools=tools + [episode.table[k].mcp_tool() for k in shown if k in episode.table])

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if search and params.name == SEARCH_TOOL_NAME:
            args = params.arguments or {}
            query, k = str(args.get("query") or ""), args.get("k", 5)
            k = k if isinstance(k, int) and 1 <= k <= 20 else 5
            found = rank_tools([r.search_spec() for r in episode.table.values()], query, k)
            shown.extend(s.name for s in found if s.name not in shown)
            payload = {
                "tools": [
                    {"name": s.name, "description": s.description, "input_schema": s.input_schema()} for s in found
                ]
            }
            return _text_result(payload)
        try:
            return await episode.call(params.name, params.arguments)
        except SessionError as exc:
            return _text_result({"status": "error", "output": str(exc)}, True)

    return Server("complexmcp-apps", version="570c75b", on_list_tools=on_list_tools, on_call_tool=on_call_tool)
