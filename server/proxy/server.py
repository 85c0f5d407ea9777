"""The proxy's MCP server: forwards to the upstream, with the session's seeded faults.

:func:`build_proxy_server` builds an SDK low-level ``Server`` whose capabilities are the
upstream's: ``tools/list`` and ``tools/call`` always (calls go through the
:class:`~mcpgym.server.proxy.plan.ProxyFaultPlan`), and resources, resource templates,
subscriptions, prompts and completions only when the upstream declared them (forwarded as
they are). Upstream notifications (tool, resource and prompt list changes, resource updates,
log messages) go to the downstream client; an upstream's elicitation and sampling requests
made during a call are asked of the downstream client and its answer goes back up.

Failures: an upstream JSON-RPC error is passed on with its code and message; an upstream that
crashed, hung past its deadline or broke the protocol answers every call with a tool error
``unavailable`` (or ``timeout``) naming what happened, logged in the call log, and a list
request with a JSON-RPC internal error. :func:`serve_proxy_stdio` serves one session over
stdio and calls ``on_end`` with it once the client or the upstream is gone.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcpgym.kernel.errors import ErrorCode, ToolError
from mcpgym.server.proxy.plan import Action, ProxiedTool, ProxyFaultPlan
from mcpgym.server.proxy.upstream import Callbacks, Upstream, UpstreamError, UpstreamFailure, UpstreamSpec

MAX_LOGGED_TEXT = 2_000
"""Characters of an upstream text block kept in the call log (the agent gets the whole answer)."""
MAX_TOOL_NAME = 128
"""Longest tool name forwarded (the MCP specification's bound on tool names); a longer one is
refused with JSON-RPC -32602, logged under its first 128 characters, and never reaches the upstream."""
MAX_LOGGED_BLOCKS = 8
"""Content blocks of one upstream answer kept in the call log."""
MAX_CLIENT_BUFFER = 2**20
"""Bytes written towards the client and not read by it yet past which an upstream notification
(a log message, a list change, a resource update) is dropped and counted instead of sent."""
MAX_PENDING_NOTIFICATIONS = 16
"""Upstream notifications on their way to the client at once, at most (the rest are dropped
and counted): a client that does not read holds at most these and :data:`MAX_CLIENT_BUFFER`."""

Classify = Callable[[types.Tool], ProxiedTool]
"""Upstream tool -> what the fault plan knows of it (the evaluation layer's classifier)."""


def describe_answer(answer: Any) -> tuple[bool, str | None, Any]:
    """An upstream answer as the call log keeps it: ``(is_error, error_code, payload)``.

    ``CallToolResult``: its structured content when it is an object, else ``{"content":
    [text...]}`` (each text cut at :data:`MAX_LOGGED_TEXT` characters, at most
    :data:`MAX_LOGGED_BLOCKS` blocks; other blocks as ``{"type": ...}``); an error result is
    ``{"error": {"message": <its text>}}`` with no code (the upstream's codes are its own).
    ``InputRequiredResult``: ``{"input_required": true}``.
    """
    if isinstance(answer, types.CallToolResult):
        texts: list[Any] = []
        for block in answer.content[:MAX_LOGGED_BLOCKS]:
            text = getattr(block, "text", None)
            texts.append(text[:MAX_LOGGED_TEXT] if isinstance(text, str) else {"type": getattr(block, "type", "?")})
        if answer.is_error:
            message = " ".join(t for t in texts if isinstance(t, str))[:MAX_LOGGED_TEXT]
            return True, None, {"error": {"message": message}}
        if isinstance(answer.structured_content, dict):
            return False, None, answer.structured_content
        return False, None, {"content": texts}
    if isinstance(answer, types.InputRequiredResult):
        return False, None, {"input_required": True}
    return False, None, {"answer": type(answer).__name__}


def _page(params: types.PaginatedRequestParams | None) -> types.PaginatedRequestParams | None:
    """The page a list request asks for, without the downstream's protocol envelope (``_meta``),
    which belongs to the downstream connection, not to the upstream's."""
    return types.PaginatedRequestParams(cursor=params.cursor) if params is not None and params.cursor else None


def _error_result(err: ToolError) -> types.CallToolResult:
    payload = {"error": err.payload()}
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(payload, ensure_ascii=False))], is_error=True
    )


INPUT_KEY = "upstream"
"""Key of an upstream's question in the ``InputRequiredResult`` sent to a 2026-07-28 client."""
_CANCEL = types.ElicitResult(action="cancel")


@dataclass
class _InFlight:
    """A tools/call on its way through the upstream: the client request it answers (the latest
    retry's, for a 2026-07-28 client) and the stream its result or question arrives on."""

    ctx: Any
    send: Any
    receive: Any


async def _ask_client(ctx: Any, request: Any, result_type: Any, what: str) -> Any:
    """Send an upstream's request (elicitation, sampling) to the client, tied to the client's
    call ``ctx`` is serving; the client's answer, or the :class:`types.ErrorData` the upstream is
    told when the client refused (its error) or could not be reached ("the client could not
    {what}: ...")."""
    try:
        return await ctx.session.send_request(
            request, result_type, metadata=ServerMessageMetadata(related_request_id=ctx.request_id)
        )
    except MCPError as exc:
        return exc.error
    except Exception as exc:  # noqa: BLE001 - the client could not be asked: the upstream is told
        return types.ErrorData(code=types.INTERNAL_ERROR, message=f"the client could not {what}: {exc}")


@dataclass
class ProxySession:
    """One proxied session: the upstream, the fault plan, and how it ended.

    Attributes:
        upstream: the connection (:class:`Upstream`).
        plan: the session's :class:`ProxyFaultPlan` (call log and ledger).
        classify: the tool classifier handed in by the caller.
        tools: the upstream's tools by name, as last listed.
        status: ``completed`` (the client closed), or ``errored`` (the upstream failed).
        stop_reason: why the session ended, when not by the client.
        request_steps: the call-log steps of the client's ``tools/call`` requests, by JSON-RPC id.
        undelivered: call-log steps whose answer the client did not get (it closed its input
            and the proxy stopped before the answer: :mod:`mcpgym.server.proxy.drain`).
        client_name: the downstream client's ``clientInfo.name``, when it sent one.
        fast: the session's :class:`~mcpgym.server.proxy.fast.FastCalls` (stdio upstream and
            client), or None.
        client_writer: the :class:`~mcpgym.server.proxy.lines.LineWriter` towards the client
            (None: the SDK's transport; then only the count of notifications in flight bounds them).
        notices: counts of what the upstream announced and the proxy did or dropped for it
            (``tools_list_changed`` received, ``relistings`` made, ``dropped_<kind>`` messages
            not sent to a client too slow to read them); recorded under
            ``metadata.proxy.notifications``.
    """

    upstream: Upstream
    plan: ProxyFaultPlan
    classify: Classify
    tools: dict[str, types.Tool] = field(default_factory=dict)
    status: str = "completed"
    stop_reason: str | None = None
    client_name: str | None = None
    downstream: Any = None
    in_flight: list[_InFlight] = field(default_factory=list)
    waiting: dict[str, tuple[_InFlight, Any]] = field(default_factory=dict)
    task_group: Any = None
    fast: Any = None
    request_steps: dict[tuple[str, Any], list[int]] = field(default_factory=dict)
    undelivered: list[int] = field(default_factory=list)
    notices: dict[str, int] = field(default_factory=dict)
    client_writer: Any = None
    _sending: int = 0
    _relisting: bool = False
    _relist_again: bool = False

    def note_request(self, request_id: Any, step: int) -> None:
        """Remember that the client's request ``request_id`` is the call of call-log ``step``."""
        self.request_steps.setdefault((type(request_id).__name__, request_id), []).append(step)

    def not_delivered(self, request_ids: list[Any]) -> None:
        """The client did not get the answers to ``request_ids``: their calls' steps go to
        :attr:`undelivered` (the trajectory leaves them out)."""
        for rid in request_ids:
            steps = self.request_steps.get((type(rid).__name__, rid))
            if steps:
                self.undelivered.append(steps.pop(0))

    def upstream_failed(self, why: str) -> None:
        """Mark the session errored (the first failure is kept)."""
        if self.status != "errored":
            self.status, self.stop_reason = "errored", why

    def take_tools(self, tools: list[types.Tool]) -> None:
        """Classify ``tools`` (every tool the upstream listed) and hand them to the plan."""
        self.tools = {t.name: t for t in tools}
        self.plan.set_tools({t.name: self.classify(t) for t in tools})

    async def list_all_tools(self) -> list[types.Tool]:
        """Every page of the upstream's ``tools/list`` (at most 100 pages)."""
        tools: list[types.Tool] = []
        cursor: str | None = None
        for _ in range(100):
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None

            async def page_of(s: Any, p: types.PaginatedRequestParams | None = params) -> Any:
                return await s.list_tools(params=p)

            page = await self.upstream.request(page_of, "tools/list")
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    def relist_soon(self, downstream: Any) -> None:
        """The upstream's tools changed: re-list them, coalesced. At most one listing is in
        flight and one pending: a change announced while a listing runs is covered by one
        more listing after it, however many were announced (counted in :attr:`notices`)."""
        self.notices["tools_list_changed"] = self.notices.get("tools_list_changed", 0) + 1
        if self._relisting:
            self._relist_again = True
            return
        if self.task_group is not None:
            self._relisting = True
            self.task_group.start_soon(self._relist_while_changed, downstream)

    async def _relist_while_changed(self, downstream: Any) -> None:
        try:
            while True:
                self._relist_again = False
                await self._relist(downstream)
                if not self._relist_again:
                    return
        finally:
            self._relisting = False

    async def _relist(self, downstream: Any) -> None:
        """Take the upstream's new tool list and tell the client its list changed."""
        self.notices["relistings"] = self.notices.get("relistings", 0) + 1
        with contextlib.suppress(Exception):
            self.take_tools(await self.list_all_tools())
            await self.notify_client("tools_list_changed", downstream.send_tool_list_changed)

    async def notify_client(self, kind: str, send: Callable[[], Awaitable[Any]]) -> None:
        """Send one upstream notification to the client with ``send()``, unless the client is
        too slow: more than :data:`MAX_CLIENT_BUFFER` bytes unread, or
        :data:`MAX_PENDING_NOTIFICATIONS` notifications already waiting. Then it is dropped and
        counted in ``notices["dropped_<kind>"]`` (the upstream is never held up: it reads on).
        A client that is gone misses it without a word, as before."""
        buffered = self.client_writer.buffered() if self.client_writer is not None else 0
        if self._sending >= MAX_PENDING_NOTIFICATIONS or buffered > MAX_CLIENT_BUFFER:
            self.notices[f"dropped_{kind}"] = self.notices.get(f"dropped_{kind}", 0) + 1
            return
        self._sending += 1
        try:
            with contextlib.suppress(Exception):
                await send()
        finally:
            self._sending -= 1

    def dropped(self) -> int:
        """Upstream notifications dropped for a slow client so far."""
        return sum(n for k, n in self.notices.items() if k.startswith("dropped_"))

    def callbacks(self) -> Callbacks:
        """The callbacks that carry the upstream's requests and notifications downstream."""

        async def elicitation(context: Any, params: types.ElicitRequestParams) -> Any:
            call = self.in_flight[-1] if self.in_flight else None
            if call is None:
                return types.ErrorData(code=types.INVALID_REQUEST, message="no client request is in progress to ask")
            ctx = call.ctx
            if str(getattr(ctx, "protocol_version", "")) in MODERN_PROTOCOL_VERSIONS:
                # a 2026-07-28 client takes no server requests: the question goes back as the
                # call's InputRequiredResult and the answer comes with the client's retry
                reply, answered = anyio.create_memory_object_stream[Any](1)
                call.send.send_nowait(("ask", (params, reply)))
                with anyio.move_on_after(self.upstream.spec.call_timeout):
                    return await answered.receive()
                return _CANCEL
            return await _ask_client(ctx, types.ElicitRequest(params=params), types.ElicitResult, "be asked")

        async def sampling(context: Any, params: types.CreateMessageRequestParams) -> Any:
            ctx = self.in_flight[-1].ctx if self.in_flight else None
            if ctx is None:
                return types.ErrorData(code=types.INVALID_REQUEST, message="no client request is in progress")
            return await _ask_client(
                ctx, types.CreateMessageRequest(params=params), types.CreateMessageResult, "sample"
            )

        async def logging(params: types.LoggingMessageNotificationParams) -> None:
            if (session := self.downstream) is not None:
                await self.notify_client(
                    "log_messages", lambda: session.send_log_message(params.level, params.data, params.logger)
                )

        async def message(item: Any) -> None:
            session = self.downstream
            if isinstance(item, Exception):  # the upstream sent something that is no message
                print(f"mcpgym proxy: the upstream sent a malformed message: {str(item)[:300]}", file=sys.stderr)
                return
            if session is None:
                return
            root = getattr(item, "root", item)
            with contextlib.suppress(Exception):
                if isinstance(root, types.ToolListChangedNotification):
                    # listed in a task of its own: the handler runs in the connection's receive
                    # loop, which must go on to read the listing's answer
                    self.relist_soon(session)
                elif isinstance(root, types.ResourceListChangedNotification):
                    await self.notify_client("resources_list_changed", session.send_resource_list_changed)
                elif isinstance(root, types.PromptListChangedNotification):
                    await self.notify_client("prompts_list_changed", session.send_prompt_list_changed)
                elif isinstance(root, types.ResourceUpdatedNotification):
                    uri = root.params.uri
                    await self.notify_client("resource_updates", lambda: session.send_resource_updated(uri))

        return Callbacks(elicitation=elicitation, sampling=sampling, logging=logging, message=message)


def build_proxy_server(session: ProxySession, name: str = "mcpgym-proxy", version: str = "0.1.0") -> Server:
    """The low-level server of one proxied session (see the module docstring).

    Args:
        session: the connected :class:`ProxySession` (its upstream is ready).
        name, version: the server info reported at initialisation.
    """
    upstream = session.upstream
    client = upstream.client
    caps = client.server_capabilities if client is not None else types.ServerCapabilities()
    instructions = client.instructions if client is not None else None

    def seen(ctx: Any) -> None:
        session.downstream = ctx.session
        if session.fast is not None and not session.fast.enabled:
            session.fast.enable(ctx)  # a handshake-era client's calls take the fast path from now on
        if session.client_name is None:
            params = getattr(ctx.session, "client_params", None)
            info = getattr(params, "client_info", None)
            session.client_name = getattr(info, "name", None)

    async def forward(ctx: Any, what: str, call: Callable[[Any], Awaitable[Any]]) -> Any:
        seen(ctx)
        try:
            return await upstream.request(call, what)
        except UpstreamError as exc:
            session.upstream_failed(str(exc))
            raise MCPError(types.INTERNAL_ERROR, f"mcpgym proxy: {exc}") from None

    async def on_list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        result = await forward(ctx, "tools/list", lambda s: s.list_tools(params=_page(params)))
        if not (params and params.cursor) and not result.next_cursor:
            session.take_tools(result.tools)  # a whole listing: (re)classify
        return result

    async def on_call_tool(
        ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        seen(ctx)
        plan = session.plan
        if len(params.name) > MAX_TOOL_NAME:
            message = f"a tool name has at most {MAX_TOOL_NAME} characters; this one has {len(params.name)}"
            refused = plan.decide(params.name[:MAX_TOOL_NAME] + "...")
            plan.settle(refused, params.arguments, failure=ToolError(ErrorCode.INVALID_ARGUMENT, message, field="name"))
            raise MCPError(types.INVALID_PARAMS, message)
        waiting = session.waiting.pop(params.request_state, None) if params.request_state else None
        if waiting is not None:  # a 2026-07-28 client answers the upstream's question and retries
            call, reply = waiting
            response = (params.input_responses or {}).get(INPUT_KEY)
            reply.send_nowait(response if isinstance(response, types.ElicitResult) else _CANCEL)
            call.ctx = ctx
            return await _next(call)
        decision = plan.decide(params.name)
        session.note_request(getattr(ctx, "request_id", None), decision.step)
        if decision.action is Action.REFUSE:
            settled = plan.settle(decision, params.arguments)
            assert settled.error is not None
            return _error_result(settled.error)
        send, receive = anyio.create_memory_object_stream[tuple[str, Any]](8)
        call = _InFlight(ctx=ctx, send=send, receive=receive)
        session.in_flight.append(call)
        assert session.task_group is not None, "open_session() gives the session its task group"
        session.task_group.start_soon(_forward_call, call, decision, params)
        return await _next(call)

    async def _forward_call(call: _InFlight, decision: Any, params: types.CallToolRequestParams) -> None:
        """Make the call on the upstream, log it, and post what the client gets (the call is
        logged even when the client stopped waiting)."""
        plan = session.plan
        outcome: tuple[str, Any]
        try:
            answer = await upstream.request(
                lambda s: s.call_tool(
                    params.name,
                    params.arguments,
                    allow_input_required=True,
                    allow_claimed=True,
                ),
                f"tools/call {params.name!r}",
            )
        except MCPError as exc:  # the upstream's own JSON-RPC error: passed on as it is
            code = ErrorCode.INVALID_ARGUMENT if exc.code == types.INVALID_PARAMS else ErrorCode.UNAVAILABLE
            err = ToolError(code, f"upstream error {exc.code}: {exc.message}")
            plan.settle(decision, params.arguments, failure=err)
            outcome = ("raise", exc)
        except UpstreamError as exc:
            code = ErrorCode.TIMEOUT if exc.failure is UpstreamFailure.TIMEOUT else ErrorCode.UNAVAILABLE
            session.upstream_failed(str(exc))
            err = ToolError(code, f"mcpgym proxy: {exc}", retryable=code == ErrorCode.TIMEOUT)
            plan.settle(decision, params.arguments, failure=err)
            outcome = ("result", _error_result(err))
        else:
            settled = plan.settle(decision, params.arguments, answer)
            outcome = ("result", _error_result(settled.error) if settled.error is not None else settled.answer)
        finally:
            with contextlib.suppress(ValueError):
                session.in_flight.remove(call)
        with contextlib.suppress(anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
            call.send.send_nowait(outcome)

    async def _next(call: _InFlight) -> Any:
        """The next thing the client gets for ``call``: its result, or (2026-07-28) a question."""
        kind, value = await call.receive.receive()
        if kind == "ask":
            question, reply = value
            token = secrets.token_hex(16)
            session.waiting[token] = (call, reply)
            return types.InputRequiredResult(
                input_requests={INPUT_KEY: types.ElicitRequest(params=question)}, request_state=token
            )
        if kind == "raise":
            raise value
        return value

    handlers: dict[str, Any] = {"on_list_tools": on_list_tools, "on_call_tool": on_call_tool}
    if caps.resources is not None:

        async def on_list_resources(ctx: Any, params: types.PaginatedRequestParams | None) -> Any:
            return await forward(ctx, "resources/list", lambda s: s.list_resources(params=_page(params)))

        async def on_list_resource_templates(ctx: Any, params: types.PaginatedRequestParams | None) -> Any:
            return await forward(
                ctx, "resources/templates/list", lambda s: s.list_resource_templates(params=_page(params))
            )

        async def on_read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> Any:
            return await forward(ctx, "resources/read", lambda s: s.read_resource(params.uri))

        handlers.update(
            on_list_resources=on_list_resources,
            on_list_resource_templates=on_list_resource_templates,
            on_read_resource=on_read_resource,
        )
        if caps.resources.subscribe:

            async def on_subscribe_resource(ctx: Any, params: types.SubscribeRequestParams) -> Any:
                return await forward(ctx, "resources/subscribe", lambda s: s.subscribe_resource(params.uri))

            async def on_unsubscribe_resource(ctx: Any, params: types.UnsubscribeRequestParams) -> Any:
                return await forward(ctx, "resources/unsubscribe", lambda s: s.unsubscribe_resource(params.uri))

            handlers.update(
                on_subscribe_resource=on_subscribe_resource, on_unsubscribe_resource=on_unsubscribe_resource
            )
    if caps.prompts is not None:

        async def on_list_prompts(ctx: Any, params: types.PaginatedRequestParams | None) -> Any:
            return await forward(ctx, "prompts/list", lambda s: s.list_prompts(params=_page(params)))

        async def on_get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> Any:
            return await forward(ctx, "prompts/get", lambda s: s.get_prompt(params.name, params.arguments))

        handlers.update(on_list_prompts=on_list_prompts, on_get_prompt=on_get_prompt)
    if caps.completions is not None:

        async def on_completion(ctx: Any, params: types.CompleteRequestParams) -> Any:
            return await forward(
                ctx,
                "completion/complete",
                lambda s: s.complete(params.ref, params.argument.model_dump(), params.context),
            )

        handlers["on_completion"] = on_completion

    def input_schema(tool: str) -> dict[str, Any] | None:
        known = session.tools.get(tool)
        return dict(known.input_schema) if known is not None else None

    return Server(name, version=version, instructions=instructions, get_tool_input_schema=input_schema, **handlers)


async def open_session(
    spec: UpstreamSpec, plan: ProxyFaultPlan, classify: Classify, task_group: Any, *, fast: bool = False
) -> ProxySession:
    """Start the upstream in ``task_group``, wait for it (``connect_timeout``) and list its tools.

    ``fast``: give the session a :class:`~mcpgym.server.proxy.fast.FastCalls` tapping the
    upstream's pipes when the upstream is a command run over asyncio pipes (the caller hands
    it the client's pipes).

    Raises:
        UpstreamError: when the upstream cannot be started, initialised or listed in time.
    """
    from mcpgym.server.proxy import upstream_stdio

    session = ProxySession(upstream=Upstream(spec), plan=plan, classify=classify, task_group=task_group)
    session.upstream.callbacks = session.callbacks()
    if fast and spec.command is not None and upstream_stdio.available():
        from mcpgym.server.proxy.fast import FastCalls

        session.fast = FastCalls(session)
        session.upstream.tap = session.fast
    task_group.start_soon(session.upstream.run)
    await session.upstream.ready()
    session.take_tools(await session.list_all_tools())
    return session


async def _stop_on_signal(scope: anyio.CancelScope, session: ProxySession) -> None:
    """End the session on SIGTERM or SIGINT (a client closing the proxy) as on a closed stdin,
    so that it is still recorded (``on_end``)."""
    import signal

    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for signum in signals:
            session.stop_reason = session.stop_reason or f"stopped by signal {signal.Signals(signum).name}"
            scope.cancel()
            return


async def serve_proxy_stdio(
    spec: UpstreamSpec,
    plan: ProxyFaultPlan,
    classify: Classify,
    on_end: Callable[[ProxySession], None],
) -> ProxySession:
    """Serve one proxied session over this process's stdin/stdout until the client closes.

    At the end of the client's input the requests in flight are answered first (at most the
    upstream's ``call_timeout`` and a second; :mod:`mcpgym.server.proxy.drain`); a call whose
    answer the client did not get is in ``session.undelivered``.
    ``on_end(session)`` runs once, however the session ended (the client closed, the upstream
    failed, or it never started: then the session is errored and holds no call).

    Raises:
        UpstreamError: when the upstream could not be started (after ``on_end``).
    """
    from mcp.server.stdio import stdio_server

    from mcpgym.server.proxy.drain import DRAIN_MARGIN_SECONDS, DrainOnEnd
    from mcpgym.server.proxy.stdio import pipe_stdio
    from mcpgym.server.serve import RejectMalformed

    session: ProxySession | None = None
    ended = False

    def end() -> None:
        # Record once, as soon as the client is gone: the upstream's shutdown (its grace,
        # then signals) comes after, so a client that kills the proxy after its own grace
        # does not cut the recording short.
        nonlocal ended
        if session is None or ended:
            return
        ended = True
        if session.upstream.failure and session.status != "errored" and not session.upstream.closing:
            session.upstream_failed(session.upstream.failure)
        if session.dropped():
            counts = ", ".join(
                f"{n} {k[len('dropped_') :]}" for k, n in session.notices.items() if k.startswith("dropped_")
            )
            print(f"mcpgym proxy: the client read too slowly: dropped {counts} from the upstream", file=sys.stderr)
        on_end(session)

    try:
        async with anyio.create_task_group() as tg:
            try:
                session = await open_session(spec, plan, classify, tg, fast=True)
            except UpstreamError as exc:
                session = ProxySession(upstream=Upstream(spec), plan=plan, classify=classify)
                session.upstream_failed(str(exc))
                tg.cancel_scope.cancel()
                raise
            server = build_proxy_server(session)
            with anyio.CancelScope() as serving:
                tg.start_soon(_stop_on_signal, serving, session)
                async with pipe_stdio() as pipes, contextlib.AsyncExitStack() as stack:
                    read, write = pipes if pipes else await stack.enter_async_context(stdio_server())
                    session.client_writer = pipes[1] if pipes else None
                    if pipes and session.fast is not None:
                        session.fast.downstream = pipes[1]
                        pipes[0].intercept = session.fast.from_client
                    fast = session.fast
                    drain = DrainOnEnd(
                        RejectMalformed(read, write),
                        write,
                        lambda: fast.waiting() if fast is not None else 0,
                        spec.call_timeout + DRAIN_MARGIN_SECONDS,
                    )
                    try:
                        await server.run(drain, drain.write, server.create_initialization_options())
                    finally:
                        if session.fast is not None:
                            session.fast.close()
                        session.not_delivered(drain.undelivered)
            end()
            session.upstream.close()
            tg.cancel_scope.cancel()  # the signal watcher
    finally:
        end()
    assert session is not None
    return session
