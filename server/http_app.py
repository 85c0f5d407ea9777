"""Streamable HTTP transport and the token-protected control API.

Routes (docs/design.md §5; the bodies are the models of :mod:`mcpgym.server.control_models`):

- ``POST /control/episodes`` ``{"seed", "apps", "faults", "fault_seed", "tools", "search_tools"}``
  -> 201 ``{"episode_id", "mcp_url", ...}``; 429 past the episode cap.
- ``GET /control/episodes`` -> ids of live episodes.
- ``GET /control/episodes/{id}`` -> ``{"episode_id", "seed", "fault_seed", "apps", "faults", "state_hash", "calls"}``.
- ``GET /control/episodes/{id}/snapshot`` | ``/calls`` | ``/ledger`` | ``/initial``.
- ``GET /control/episodes/{id}/final`` -> ``{"calls", "ledger", "snapshot"}`` at one instant.
- ``DELETE /control/episodes/{id}`` -> 204.
- ``GET /control/tasks``, ``POST /control/task-episodes`` and ``POST /control/episodes/{id}/reward``:
  the tasks, a task's episode and a finished episode's reward, for RL trainers
  (:mod:`mcpgym.server.rl_routes`).
- ``GET /health`` (no token) -> ``{"status": "ok", "episodes": n}``.
- ``/episodes/{id}/mcp``: the episode's MCP endpoint (streamable HTTP; no control token, the
  128-bit episode id is the capability).
- ``/mcp?seed=..&apps=..``: every MCP session opened here is a new episode that ends with the
  session (control token needed; :class:`SessionEpisodeMCP` inside :func:`create_app`).

Every ``/control`` route needs ``Authorization: Bearer <token>`` (constant-time comparison).
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import time
from collections.abc import AsyncIterator
from typing import Any, TypeVar

import anyio
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, KNOWN_PROTOCOL_VERSIONS
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from mcpgym.kernel.bounded_json import JSONLimitError, load_json
from mcpgym.kernel.shorten import cap_message, short
from mcpgym.kernel.world import names_no_app
from mcpgym.server.control_input import (
    BUILT_IN_PROFILES,
    MAX_CONTROL_BODY,
    MAX_OPENING_ANSWER,
    body_error,
    initialized,
    is_initialize,
    opening_answer,
    opening_problem,
    query_fields,
    read_capped,
)
from mcpgym.server.control_models import (
    CALL_LOG,
    LEDGER,
    ControlError,
    CreateEpisode,
    EpisodeCreated,
    EpisodeList,
    Health,
)
from mcpgym.server.elicitation import CLIENT_SILENT
from mcpgym.server.episode import Episode, EpisodeEnd, EpisodeLimitError, EpisodeStore, UnknownToolsError
from mcpgym.server.event_store import BoundedEventStore
from mcpgym.server.mcp_server import build_server
from mcpgym.server.request_body import read_whole_body, replay_body
from mcpgym.server.request_ids import RequestIdRemapper
from mcpgym.server.rl_models import RewardRequest, TaskEpisodeCreated, TaskEpisodeRequest
from mcpgym.server.rl_routes import RLHooks, RLRefused, reward_inline, task_of
from mcpgym.server.session_version import opening_version, session_version_governs
from mcpgym.tools.faults import FaultProfileError

logger = logging.getLogger(__name__)

SCOPE_KEY = "mcpgym.episode_id"
SSE_RETRY_MS = 1000
"""The ``retry`` field of SSE priming events: milliseconds a client waits before reconnecting."""
SHUTDOWN_TERMINATE_SECONDS = 0.5
"""Most wall seconds the shutdown spends terminating the MCP sessions still open."""
ANSWER_SECONDS = 1.0
"""Most wall seconds an ending episode (deleted, expired, or the server stopping) waits for the
answers of its requests in progress (a call waiting on the client is answered at once that the
episode ended) before its sessions end, which cuts what is still unanswered."""


EPISODE_HEADER = b"mcpgym-episode-id"
"""Response header of a session's opening request on ``/mcp``: the episode it created."""
OPEN_WITH_INITIALIZE = (
    "each MCP session on /mcp is a new episode: open one with an initialize request (a protocol "
    "version with sessions, e.g. 2025-11-25), then send its Mcp-Session-Id; for sessionless "
    "requests create an episode on the control API and use its mcp_url"
)
MAX_SESSIONS_PER_EPISODE = 8
"""Most MCP sessions open at once on one episode: an opening past it ends the episode's oldest
session (clients such as the MCP Inspector CLI leave theirs open), so that one episode's URL
cannot take every session the server holds."""


M = TypeVar("M", bound=BaseModel)


class EpisodeDefaults(BaseModel):
    """What an episode created on the control API gets for a field its request leaves out
    (``mcpgym serve --transport http --seed/--apps/--faults/--fault-seed/--search-tools``).

    Attributes:
        seed: world seed. apps: app names (None: ``system`` and ``shop``). faults: fault
            profile: a built-in name, or a profile already loaded from a file (a request may
            name only built-in profiles or send one inline). fault_seed: fault seed (None: the
            episode's world seed). search_tools: retrieval mode.
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    seed: int = Field(default=0, ge=0, le=2**63 - 1)
    apps: list[str] | str | None = None
    faults: Any = "none"
    fault_seed: int | None = Field(default=None, ge=0, le=2**63 - 1)
    search_tools: bool = False


def answer(model: BaseModel, status_code: int = 200, headers: dict[str, str] | None = None) -> Response:
    """A JSON response whose body is ``model`` (one of :mod:`mcpgym.server.control_models`)."""
    return Response(model.model_dump_json(), status_code=status_code, headers=headers, media_type="application/json")


def token_challenge(header: str) -> str:
    """The ``WWW-Authenticate`` value of a request refused for its control token, given its
    ``Authorization`` header (RFC 6750 section 3): with no bearer token, ``Bearer realm="mcpgym"``
    only (the RFC: no error information when no credentials were sent); with a wrong one, also
    ``error="invalid_token"`` and an ``error_description`` saying it is the control token
    (MCP clients such as the Inspector show that description instead of starting OAuth)."""
    scheme, _, given = header.partition(" ")
    if scheme.lower() != "bearer" or not given.strip():
        return 'Bearer realm="mcpgym"'
    return (
        'Bearer realm="mcpgym", error="invalid_token", '
        'error_description="wrong control token (the one mcpgym serve printed, or $MCPGYM_TOKEN)"'
    )


def _security(host: str) -> TransportSecuritySettings:
    """DNS-rebinding protection as the SDK sets it for a loopback bind; off for other binds."""
    if host in ("127.0.0.1", "localhost", "::1"):
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
        )
    return TransportSecuritySettings(enable_dns_rebinding_protection=False)


def create_app(
    token: str,
    *,
    store: EpisodeStore | None = None,
    host: str = "127.0.0.1",
    expire_every: float = 30.0,
    max_request_body: int = 4 * 1024 * 1024,
    defaults: EpisodeDefaults | None = None,
    rl: RLHooks | None = None,
) -> Starlette:
    """Build the ASGI app: control API + one streamable-HTTP MCP endpoint per episode.

    Args:
        token: the control API bearer token (non-empty).
        store: the episode store (default: 1000 episodes, 30 min idle timeout).
        host: the bind address, for DNS-rebinding protection.
        expire_every: wall seconds between idle-expiry sweeps.
        max_request_body: largest MCP request body in bytes (larger -> 413).
        defaults: what a ``POST /control/episodes`` body leaves out (default: seed 0, apps
            system and shop, no faults).
        rl: tasks, judge and reward for ``/control/task-episodes`` and
            ``/control/episodes/{id}/reward``, and the task list ``/control/tasks``
            (:mod:`mcpgym.server.rl_routes`; None: they answer 501).

    Raises:
        ValueError: for an empty token.
    """
    if not token:
        raise ValueError("the control token must not be empty")
    # Not `store or ...`: an empty store is falsy (it has __len__), and the caller's cap and idle
    # timeout were silently replaced by the defaults.
    store = store if store is not None else EpisodeStore()
    episodes: EpisodeStore = store  # for the nested class (mypy does not narrow `store` there)
    defaults = defaults if defaults is not None else EpisodeDefaults()
    session_episode: dict[str, str] = {}
    session_version: dict[str, str] = {}  # protocol version each session opened with
    session_bound: dict[str, str] = {}  # episode opened on /mcp -> its session: it ends with it

    def resolve(ctx: Any):  # noqa: ANN202
        request = getattr(ctx, "request", None)
        if request is None:
            return None
        eid = request.scope.get(SCOPE_KEY)
        return store.get(eid) if eid else None

    mcp_server = build_server(resolve)
    remap_ids = RequestIdRemapper(max_request_body)
    # room for two sessions an episode, plus one episode's whole share (so one cannot fill it)
    max_sessions = max(store.max_episodes * 2, 10) + MAX_SESSIONS_PER_EPISODE
    manager = StreamableHTTPSessionManager(
        app=mcp_server,
        security_settings=_security(host),
        session_idle_timeout=store.idle_timeout,
        max_sessions=max_sessions,
        max_request_body_size=max_request_body,
        # resumable SSE: a priming event with an id and a retry field opens every stream
        event_store=BoundedEventStore(client_id=remap_ids.original_id),
        retry_interval=SSE_RETRY_MS,
    )

    def authorised_header(header: str) -> bool:
        scheme, _, given = header.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())

    def authorised(request: Request) -> bool:
        return authorised_header(request.headers.get("authorization", ""))

    def refused_token(header: str, error: str) -> Response:
        # 401 with the JSON error and a Bearer challenge that says why (token_challenge): an MCP
        # client reads the header, not the body, and a bare "Bearer" reads as "start OAuth".
        return answer(ControlError(error=error), 401, headers={"WWW-Authenticate": token_challenge(header)})

    def problem(status: int, message: str) -> Response:
        # every value a message quotes is shortened where it is quoted; the cap bounds the rest
        return answer(ControlError(error=cap_message(message)), status)

    def guard(handler):  # noqa: ANN001, ANN202
        async def wrapped(request: Request) -> Response:
            if not authorised(request):
                return refused_token(request.headers.get("authorization", ""), "missing or wrong control token")
            return await handler(request)

        return wrapped

    def episode_or_404(request: Request):  # noqa: ANN202
        return store.get(request.path_params["episode_id"])

    def create_from(data: Any) -> Episode | Response:
        """Validate ``data`` (a :class:`CreateEpisode` as JSON values) and create the episode;
        the error answer (422, 429) when it cannot be."""
        try:
            body = CreateEpisode.model_validate(data)
        except ValidationError as exc:
            return problem(422, body_error(data, exc))
        if body.apps is not None and names_no_app(body.apps):
            return problem(
                422,
                "invalid field 'apps': names no app; give at least one (system is always included) "
                "or leave the field out for the server's default",
            )
        if body.tools is not None and not any(name.strip() for name in body.tools):
            return problem(
                422, "invalid field 'tools': names no tool; give at least one or leave the field out for every tool"
            )
        if isinstance(body.faults, str) and body.faults not in BUILT_IN_PROFILES:
            return problem(
                422,
                "invalid field 'faults': a built-in profile name (none, default, harsh) or an inline profile object",
            )
        try:
            given = body.model_dump(exclude_none=True)
            return store.create(
                seed=given.get("seed", defaults.seed),
                apps=given.get("apps", defaults.apps),
                faults=given.get("faults", defaults.faults),
                fault_seed=given.get("fault_seed", defaults.fault_seed),
                tools=body.tools,
                search_tools=given.get("search_tools", defaults.search_tools),
            )
        except EpisodeLimitError as exc:
            return answer(ControlError(error=str(exc)), 429, headers={"Retry-After": "5"})
        except UnknownToolsError as exc:
            return problem(422, f"invalid field 'tools': {exc}")
        except FaultProfileError as exc:  # an inline profile's errors name "<mapping>" as their file
            return problem(422, f"invalid field 'faults': {str(exc).removeprefix('<mapping>: ')}")
        except (KeyError, ValueError) as exc:
            return problem(422, str(exc).strip("'\""))

    async def create(request: Request) -> Response:
        raw = await read_capped(request, MAX_CONTROL_BODY)
        if raw is None:
            return problem(413, f"request body too large (at most {MAX_CONTROL_BODY} bytes)")
        try:  # bounded: nesting past 200 levels and 5,000-digit integers are a 400, never a 500
            data = load_json(raw or b"{}", "body")
        except JSONLimitError as exc:
            return problem(400, f"body is not acceptable JSON: {exc.reason}")
        except UnicodeDecodeError as exc:
            return problem(400, f"body is not UTF-8 JSON: {exc.reason} at byte {exc.start}")
        await expire_idle()  # the store's own expiry in create() would not end their sessions
        episode = create_from(data)
        if isinstance(episode, Response):
            return episode
        base = str(request.base_url).rstrip("/")
        view = episode.view()
        created = EpisodeCreated(**dict(view), mcp_url=f"{base}/episodes/{episode.episode_id}/mcp")
        return answer(created, 201)

    async def list_episodes(request: Request) -> Response:
        return answer(
            EpisodeList(
                episodes=store.ids(),
                max_episodes=store.max_episodes,
                mcp_sessions=sum(1 for e in session_episode.values() if store.get(e) is not None),
            )
        )

    async def get_episode(request: Request) -> Response:
        ep = episode_or_404(request)
        return answer(ep.view()) if ep else problem(404, "no such episode")

    async def snapshot(request: Request) -> Response:
        ep = episode_or_404(request)
        if ep is None:
            return problem(404, "no such episode")
        with ep.lock:
            return JSONResponse(ep.world.snapshot())

    async def initial(request: Request) -> Response:
        ep = episode_or_404(request)
        return JSONResponse(ep.initial_snapshot) if ep else problem(404, "no such episode")

    async def calls(request: Request) -> Response:
        ep = episode_or_404(request)
        if ep is None:
            return problem(404, "no such episode")
        return Response(CALL_LOG.dump_json(ep.invoker.calls), media_type="application/json")

    async def final(request: Request) -> Response:
        ep = episode_or_404(request)
        if ep is None:
            return problem(404, "no such episode")
        with ep.lock:  # the three parts at one instant
            calls, ledger, snapshot = ep.invoker.calls, ep.invoker.ledger, ep.world.snapshot()
            body = b"".join(
                (
                    b'{"calls":',
                    CALL_LOG.dump_json(calls),
                    b',"ledger":',
                    LEDGER.dump_json(ledger),
                    b',"snapshot":',
                    json.dumps(snapshot, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode(),
                    b"}",
                )
            )
        return Response(body, media_type="application/json")

    async def json_body(request: Request, model: type[M]) -> M | Response:
        """The request's body as ``model``, or the refusal (413, 400, 422) to send."""
        raw = await read_capped(request, MAX_CONTROL_BODY)
        if raw is None:
            return problem(413, f"request body too large (at most {MAX_CONTROL_BODY} bytes)")
        try:
            data = load_json(raw or b"{}", "body")
        except (JSONLimitError, UnicodeDecodeError) as exc:
            return problem(400, f"body is not acceptable JSON: {getattr(exc, 'reason', exc)}")
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            return problem(422, body_error(data, exc))

    async def task_list(request: Request) -> Response:
        if rl is None:
            return problem(501, "this server has no tasks (start it with `mcpgym serve --transport http`)")
        suite = request.query_params.get("suite") or "core"
        hooks = rl
        try:
            listed = await anyio.to_thread.run_sync(lambda: hooks.tasks(suite, request.query_params.getlist("task")))
        except RLRefused as exc:
            return problem(exc.status, str(exc))
        return answer(listed)

    async def task_episode(request: Request) -> Response:
        if rl is None:
            return problem(501, "this server has no tasks (start it with `mcpgym serve --transport http`)")
        body = await json_body(request, TaskEpisodeRequest)
        if isinstance(body, Response):
            return body
        try:
            fields, instruction = rl.episode_body(body)
        except RLRefused as exc:
            return problem(exc.status, str(exc))
        await expire_idle()
        episode = create_from(fields)
        if isinstance(episode, Response):
            return episode
        episode.plays = (body.task, body.trial)
        base = str(request.base_url).rstrip("/")
        url = f"{base}/episodes/{episode.episode_id}/mcp"
        made = TaskEpisodeCreated(
            **dict(episode.view()), mcp_url=url, task=body.task, trial=body.trial, instruction=instruction
        )
        return answer(made, 201)

    async def episode_reward(request: Request) -> Response:
        ep = episode_or_404(request)
        if ep is None:
            return problem(404, "no such episode")
        if rl is None:
            return problem(501, "this server scores no rewards (start it with `mcpgym serve --transport http`)")
        body = await json_body(request, RewardRequest)
        if isinstance(body, Response):
            return body
        hooks = rl
        try:
            task, trial = task_of(ep, body)
            if reward_inline(ep):  # a small episode's judge costs less than a thread's hop
                out = hooks.reward(ep, task, trial, body)
            else:  # a large one's is CPU work: off the event loop, so other episodes' I/O goes on
                out = await anyio.to_thread.run_sync(lambda: hooks.reward(ep, task, trial, body))
        except RLRefused as exc:  # refused: the episode is kept, so a corrected request can follow
            return problem(exc.status, str(exc))
        if body.delete and store.delete(ep.episode_id):
            await end_episode(ep, EpisodeEnd.DELETED)
            out = out.model_copy(update={"deleted": True})
        return answer(out)

    async def ledger(request: Request) -> Response:
        ep = episode_or_404(request)
        if ep is None:
            return problem(404, "no such episode")
        return Response(LEDGER.dump_json(ep.invoker.ledger), media_type="application/json")

    async def end_sessions(eid: str) -> None:
        """Close the SDK sessions of a deleted or expired episode.

        Their bindings stay (pointing at the gone episode, so every URL answers 404 for them)
        until the sweeper sees the SDK has forgotten the session.
        """
        live = getattr(manager, "_server_instances", None)  # SDK-private: skip if it changes
        for sid in [s for s, e in session_episode.items() if e == eid]:
            transport = live.get(sid) if isinstance(live, dict) else None
            if transport is not None and not getattr(transport, "is_terminated", True):
                with contextlib.suppress(Exception):
                    await transport.terminate()

    async def answered(episodes_ending: list[Episode]) -> None:
        """Wait, at most :data:`ANSWER_SECONDS`, until no request of ``episodes_ending`` is in
        progress: their answers are written before their sessions end."""
        with anyio.move_on_after(ANSWER_SECONDS):
            while any(ep.busy for ep in episodes_ending):
                await anyio.sleep(0.01)

    async def end_episode(episode: Episode, reason: EpisodeEnd) -> None:
        """End ``episode`` (already out of the store) for ``reason``: its calls waiting on the
        client are answered that it ended, then its sessions end."""
        episode.end_waits(reason)
        await answered([episode])
        session_bound.pop(episode.episode_id, None)
        await end_sessions(episode.episode_id)

    async def expire_idle() -> None:
        """Drop the idle episodes (:meth:`EpisodeStore.expire_episodes`) and end them."""
        for episode in store.expire_episodes():
            await end_episode(episode, EpisodeEnd.EXPIRED)

    async def delete(request: Request) -> Response:
        episode = store.get(request.path_params["episode_id"])
        if episode is None or not store.delete(episode.episode_id):
            return problem(404, "no such episode")
        await end_episode(episode, EpisodeEnd.DELETED)
        return Response(status_code=204)

    async def health(request: Request) -> Response:
        return answer(Health(episodes=len(store)))

    def request_headers(scope: Scope) -> dict[str, str]:
        return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}

    async def refuse(scope: Scope, receive: Receive, send: Send, status: int, message: str) -> None:
        await JSONResponse({"error": message}, status_code=status)(scope, receive, send)

    def header_problem(headers: dict[str, str]) -> str | None:
        """Why an MCP request's headers cannot be served (None when they can): an empty
        ``Mcp-Session-Id``, or an ``MCP-Protocol-Version`` this server does not know (MCP
        2025-11-25, "Protocol Version Header": answered 400)."""
        if "mcp-session-id" in headers and not headers["mcp-session-id"].strip():
            return "the Mcp-Session-Id header is empty: send none to open a session, or the id its opening answer gave"
        version = headers.get("mcp-protocol-version")
        if version is not None and version not in KNOWN_PROTOCOL_VERSIONS:
            return (
                f"unsupported MCP-Protocol-Version {short(version)} (supported: {', '.join(KNOWN_PROTOCOL_VERSIONS)})"
            )
        return None

    def no_room() -> str | None:
        """Why a new MCP session cannot be opened now (None when it can): the server holds
        ``max_sessions`` (the SDK would answer 503 with an internal-error code)."""
        live = getattr(manager, "_server_instances", None)  # SDK-private: skip if it changes
        if isinstance(live, dict) and len(live) >= max_sessions:
            return f"the server has {len(live)} MCP sessions open (at most {max_sessions}); end one or wait"
        return None

    async def make_room(eid: str) -> None:
        """End episode ``eid``'s oldest sessions until it has fewer than
        :data:`MAX_SESSIONS_PER_EPISODE` open (a ``/mcp`` episode's own session is kept)."""
        live = getattr(manager, "_server_instances", None)  # SDK-private: skip if it changes
        if not isinstance(live, dict):
            return
        mine = [sid for sid, e in session_episode.items() if e == eid and sid in live]
        keep = session_bound.get(eid)
        for sid in [s for s in mine if s != keep][: max(0, len(mine) - MAX_SESSIONS_PER_EPISODE + 1)]:
            session_episode.pop(sid, None)
            session_version.pop(sid, None)
            transport = live.get(sid)
            if transport is not None and not getattr(transport, "is_terminated", True):
                with contextlib.suppress(Exception):
                    await transport.terminate()

    def session_ended(eid: str, sid: str) -> None:
        """Forget session ``sid`` of episode ``eid`` (its client ended it); a ``/mcp`` episode
        ends with its own session (not with another one opened on its URL). Idempotent."""
        session_episode.pop(sid, None)
        session_version.pop(sid, None)
        if session_bound.get(eid) == sid:
            del session_bound[eid]
            store.delete(eid)

    async def serve_episode(
        eid: str,
        episode: Episode,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: dict[str, str],
        read: tuple[bytes, bool] | None = None,
        *,
        bind: bool = False,
    ) -> str | None:
        """Serve one MCP request of episode ``eid`` (its owner already checked) through the
        SDK's session manager; returns the session id the SDK minted when the request opened
        a session that it kept (None otherwise). ``read``: the POST body already read.
        ``bind``: the episode ends with the session this request opens (``/mcp``); it is bound
        as the answer starts, before the client can send the session's next request."""
        sid = headers.get("mcp-session-id", "")
        # 2026-07-28 requests have no sessions (the SDK ignores the header on them).
        sessioned = (
            bool(sid)
            and headers.get("mcp-protocol-version", HANDSHAKE_PROTOCOL_VERSIONS[-1]) in HANDSHAKE_PROTOCOL_VERSIONS
        )
        if scope.get("method") == "POST":
            if read is None:
                read = await read_whole_body(receive, max_request_body)
                if read is None:
                    # Nothing can be answered and nothing was run: one line, no traceback.
                    logger.warning("a client dropped its connection before its POST body ended; nothing was run")
                    return None
            if read[1]:
                await refuse(scope, receive, send, 413, f"request body too large (at most {max_request_body} bytes)")
                return None
            if not sid and is_initialize(read[0]):
                full = no_room()
                if full is not None:
                    await refuse(scope, receive, send, 429, full)
                    return None
                await make_room(eid)
            receive = replay_body(*read, receive)
            opening = opening_version(read[0]) if not sid else None
        else:
            opening = None
        if sessioned:
            scope = session_version_governs(scope, headers, session_version.get(sid))
        scope[SCOPE_KEY] = eid
        silent: set[str] = set()
        scope[CLIENT_SILENT] = silent  # shared by the scope copies the request goes through
        episode.last_used = time.monotonic()  # any MCP request counts as activity
        status: list[int] = []
        opened: list[str] = []

        ending = bool(sid) and scope.get("method") == "DELETE"

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
                if ending and message["status"] < 400:
                    # Before the answer leaves: a client that lists episodes right after its
                    # DELETE must not still see a /mcp episode its session ended.
                    session_ended(eid, sid)
                # Only a session the SDK kept (the request succeeded) is remembered: a
                # refused opening request also carries a session id, of a session
                # already discarded, and remembering those would grow without bound.
                if message["status"] < 400 and not sid:
                    for k, v in message.get("headers", []):
                        if k.decode("latin-1").lower() == "mcp-session-id":
                            new_sid = v.decode("latin-1")
                            session_episode[new_sid] = eid
                            opened.append(new_sid)
                            if bind:
                                session_bound[eid] = new_sid
                            if opening is not None:
                                session_version[new_sid] = opening
                    message = {**message, "headers": [*message.get("headers", []), (EPISODE_HEADER, eid.encode())]}
            await send(message)

        # A request being served keeps its episode from idle expiry (a call that waits long
        # for a busy CPU must not lose its episode); ending it counts as activity too, unless
        # it ended because the client did not answer a question in time (CLIENT_SILENT):
        # idle time runs from the client's last message. Only POSTs: a client's standing GET
        # stream is not use, nor is a request waiting on the client (Episode.waiting).
        posting = scope.get("method") == "POST"
        episode.busy += posting
        try:
            if sessioned and posting:
                await remap_ids(sid, scope, receive, send_wrapper, manager.handle_request)
            else:
                await manager.handle_request(scope, receive, send_wrapper)
        finally:
            episode.busy -= posting
            if not silent:
                episode.last_used = time.monotonic()
        if ending and status and status[0] < 400:
            session_ended(eid, sid)  # done as the answer started; again in case it never did
        if episodes.get(eid) is None and not episode.busy:
            # deleted while this request ran, and it is the last one: ending the sessions
            # before would cut the answers still being written on them
            await end_sessions(eid)
        return opened[0] if opened else None

    class EpisodeMCP:
        """ASGI endpoint ``/episodes/{id}/mcp``: binds the request to its episode, then hands
        it to the SDK's streamable-HTTP session manager.

        A session belongs to the episode it was opened on for its whole life: a request that
        names a session (``Mcp-Session-Id``) is served only on that episode's URL and only
        while the episode lives; anywhere else, and after the episode is deleted or expires,
        it gets 404. Requests on a session go through :class:`RequestIdRemapper`, so
        overlapping requests that reuse an id each get their own answer.
        """

        async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
            eid = scope.get("path_params", {}).get("episode_id", "")
            episode = episodes.get(eid)
            if episode is None:
                await refuse(scope, receive, send, 404, "no such episode")
                return
            headers = request_headers(scope)
            wrong = header_problem(headers)
            if wrong is not None:
                await refuse(scope, receive, send, 400, wrong)
                return
            sid = headers.get("mcp-session-id", "")
            sessioned = (
                bool(sid)
                and headers.get("mcp-protocol-version", HANDSHAKE_PROTOCOL_VERSIONS[-1]) in HANDSHAKE_PROTOCOL_VERSIONS
            )
            owner = session_episode.get(sid) if sessioned else eid
            if owner != eid:
                message = (
                    "this MCP session belongs to another episode"
                    if owner is not None
                    else "no such MCP session (it ended, or its episode was deleted or expired)"
                )
                await refuse(scope, receive, send, 404, message)
                return
            await serve_episode(eid, episode, scope, receive, send, headers)

    class SessionEpisodeMCP:
        """ASGI endpoint ``/mcp``: every MCP session opened here is a new episode of its own.

        The opening request (an ``initialize``, of a protocol version with sessions) creates the
        episode from the query string (``?seed=7&apps=system,shop&faults=default&fault_seed=3
        &tools=a,b&search_tools=true``; a missing field takes the ``serve`` default, as on
        ``POST /control/episodes``), and its answer names the episode in the
        ``Mcpgym-Episode-Id`` header (its records are on the control API while it lives).
        Later requests of the session go to that episode whatever their query string. The
        episode ends with the session: the client's ``DELETE``, the SDK's idle timeout, or a
        control ``DELETE`` of the episode (which ends the session). Every request needs the
        control token (``Authorization: Bearer``): opening a session creates an episode. The
        episode's own URL (``/episodes/{id}/mcp``, the id from the header) serves the session
        too, without the token: there, as for every episode, the 128-bit id is the capability.

        Errors (JSON ``{"error"}``): 401 without the token; 422 for a query the control API
        would refuse; 429 past the episode cap or the server's session cap; 400 for an opening
        request that is no well-formed ``initialize`` with sessions, naming what is wrong
        (:func:`mcpgym.server.control_input.opening_problem`; a sessionless request has no
        session to end its episode: use an episode's own URL), for an empty
        ``Mcp-Session-Id`` or an unknown ``MCP-Protocol-Version``; 413 for a body past the
        limit; 404 for a session that is not one of ``/mcp``'s or ended. Nothing is created
        for a refused opening. An ``initialize`` the SDK answers with a JSON-RPC error opens
        nothing either: its answer is held until it is read, and sent with neither the
        ``Mcpgym-Episode-Id`` nor the ``Mcp-Session-Id`` header, its episode already deleted
        (and the session the SDK kept then ended).
        """

        async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
            headers = request_headers(scope)
            given = headers.get("authorization", "")
            if not authorised_header(given):
                response = refused_token(given, "missing or wrong control token (a session on /mcp creates an episode)")
                await response(scope, receive, send)
                return
            wrong = header_problem(headers)
            if wrong is not None:
                await refuse(scope, receive, send, 400, wrong)
                return
            sid = headers.get("mcp-session-id", "")
            if sid:
                eid = session_episode.get(sid)
                episode = episodes.get(eid) if eid is not None and session_bound.get(eid) == sid else None
                if episode is None or eid is None:
                    await refuse(
                        scope, receive, send, 404, "no such MCP session on /mcp (it ended, or its episode ended)"
                    )
                    return
                await serve_episode(eid, episode, scope, receive, send, headers)
                return
            if scope.get("method") != "POST":
                await refuse(scope, receive, send, 400, OPEN_WITH_INITIALIZE)
                return
            read = await read_whole_body(receive, max_request_body)
            if read is None:
                logger.warning("a client dropped its connection before its POST body ended; nothing was run")
                return
            if read[1]:
                await refuse(scope, receive, send, 413, f"request body too large (at most {max_request_body} bytes)")
                return
            if "application/json" not in headers.get("content-type", "").lower():
                await refuse(
                    scope, receive, send, 400, f"Content-Type must be application/json; {OPEN_WITH_INITIALIZE}"
                )
                return
            wrong = opening_problem(read[0])
            if wrong is not None:
                await refuse(scope, receive, send, 400, f"{wrong}; {OPEN_WITH_INITIALIZE}")
                return
            full = no_room()
            if full is not None:
                await refuse(scope, receive, send, 429, full)
                return
            query = query_fields(scope.get("query_string", b"").decode("latin-1"))
            await expire_idle()
            created = problem(422, query) if isinstance(query, str) else create_from(query)
            if isinstance(created, Response):
                await created(scope, receive, send)
                return
            eid = created.episode_id
            body = bytearray()
            held: list[Message] = []  # the answer, until it is known whether it opened the session
            decided: list[bool] = []

            async def release(ok: bool) -> None:
                """Send the held answer: as it is when the initialize succeeded; else with no
                episode or session header (the episode is deleted first: nothing names it)."""
                decided.append(ok)
                if not ok:
                    session_bound.pop(eid, None)
                    episodes.delete(eid)
                for message in held:
                    if message["type"] == "http.response.start" and not ok:
                        dropped = (EPISODE_HEADER, b"mcp-session-id")
                        kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in dropped]
                        message = {**message, "headers": kept}
                    await send(message)
                held.clear()

            async def keep_body(message: Message) -> None:
                if decided:
                    await send(message)
                    return
                held.append(message)
                if message["type"] == "http.response.start" and message["status"] >= 400:
                    await release(False)
                elif message["type"] == "http.response.body":
                    body.extend(message.get("body", b"")[: MAX_OPENING_ANSWER - len(body)])
                    said = opening_answer(bytes(body))
                    if said is not None or not message.get("more_body", False) or len(body) >= MAX_OPENING_ANSWER:
                        await release(said is True)

            opened = await serve_episode(eid, created, scope, receive, keep_body, headers, read, bind=True)
            if not decided and held:
                await release(False)  # the answer ended before it said anything
            if opened is not None and decided == [True] and initialized(bytes(body)):
                return
            # The SDK kept no session, or answered the initialize with an error (it keeps that
            # session): nothing more can use the episode (deleted before its answer was sent).
            session_bound.pop(eid, None)
            episodes.delete(eid)
            await end_sessions(eid)

    async def sweeper() -> None:
        while True:
            await anyio.sleep(expire_every)
            await expire_idle()
            live = getattr(manager, "_server_instances", None)  # SDK-private: skip if it changes
            if isinstance(live, dict):
                for sid in [s for s in session_episode if s not in live]:
                    eid = session_episode.pop(sid)
                    session_version.pop(sid, None)
                    if session_bound.get(eid) == sid:  # the SDK timed the session out: its episode ends
                        del session_bound[eid]
                        store.delete(eid)

    async def end_all_sessions() -> None:
        """Terminate every SDK session before the manager stops: a request still waiting on
        its client (an elicitation) then fails at once instead of the SDK's dispatcher giving
        up on a blocked write after seconds (shutdown took 6.6 s past its 2 s grace)."""
        live = getattr(manager, "_server_instances", None)  # SDK-private: skip if it changes
        if not isinstance(live, dict):
            return
        with anyio.move_on_after(SHUTDOWN_TERMINATE_SECONDS, shield=True):
            for transport in list(live.values()):
                if not getattr(transport, "is_terminated", True):
                    with contextlib.suppress(Exception):
                        await transport.terminate()

    async def stop_serving() -> None:
        """The server is stopping: answer every call waiting on its client that the server
        stops, give the requests in progress :data:`ANSWER_SECONDS` to be answered, then end
        every session, which ends the clients' standing GET streams as a finished response
        (no stream is left for the graceful shutdown to cut, and none is cut mid-answer)."""
        store.end_waits(EpisodeEnd.SERVER_STOPPING)
        with anyio.move_on_after(ANSWER_SECONDS):
            while store.serving():
                await anyio.sleep(0.01)
        await end_all_sessions()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with manager.run(), anyio.create_task_group() as tg:
            tg.start_soon(sweeper)
            try:
                yield
            finally:
                tg.cancel_scope.cancel()
                await end_all_sessions()

    # The MCP endpoint first: it takes almost every request of a run, and Starlette's router
    # tries routes in order (no path here matches two routes, so the order changes no answer).
    routes = [
        Route("/episodes/{episode_id}/mcp", EpisodeMCP(), methods=["GET", "POST", "DELETE"]),
        Route("/mcp", SessionEpisodeMCP(), methods=["GET", "POST", "DELETE"]),
        Route("/health", health, methods=["GET"]),
        Route("/control/episodes", guard(create), methods=["POST"]),
        Route("/control/episodes", guard(list_episodes), methods=["GET"]),
        Route("/control/episodes/{episode_id}", guard(get_episode), methods=["GET"]),
        Route("/control/episodes/{episode_id}", guard(delete), methods=["DELETE"]),
        Route("/control/episodes/{episode_id}/snapshot", guard(snapshot), methods=["GET"]),
        Route("/control/episodes/{episode_id}/initial", guard(initial), methods=["GET"]),
        Route("/control/episodes/{episode_id}/calls", guard(calls), methods=["GET"]),
        Route("/control/episodes/{episode_id}/ledger", guard(ledger), methods=["GET"]),
        Route("/control/episodes/{episode_id}/final", guard(final), methods=["GET"]),
        Route("/control/tasks", guard(task_list), methods=["GET"]),
        Route("/control/task-episodes", guard(task_episode), methods=["POST"]),
        Route("/control/episodes/{episode_id}/reward", guard(episode_reward), methods=["POST"]),
    ]

    async def http_error(request: Request, exc: Exception) -> Response:
        """Unknown routes (404) and wrong methods (405, with ``Allow``) answer JSON like the rest."""
        status = getattr(exc, "status_code", 500)
        return JSONResponse(
            {"error": getattr(exc, "detail", "error")}, status_code=status, headers=getattr(exc, "headers", None)
        )

    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers={HTTPException: http_error})
    app.state.store = store
    app.state.token = token
    app.state.stop_serving = stop_serving
    return app
