"""Entry points that run the server: stdio (one episode per process) and HTTP (uvicorn).

``serve_http`` binds its socket itself so that ``--port 0`` works: once listening it prints
one line ``MCPGYM_READY {"url": ..., "token": ...}`` on stdout (the token only when it was
generated), which the evaluation runner reads when it spawns a server.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import secrets
import socket
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from mcpgym.kernel.world import template
from mcpgym.server.episode import Episode, EpisodeStore
from mcpgym.server.http_app import EpisodeDefaults, create_app
from mcpgym.server.mcp_server import server_for_episode
from mcpgym.server.read_stream import ReadStreamWrapper

STOP_POLL_SECONDS = 0.1
"""How often the HTTP server looks whether it is stopping (to end the waits on clients)."""

KEEP_ALIVE_SECONDS = 65
"""Wall seconds the HTTP server keeps an idle connection open (longer than any client pool keeps it)."""

GC_THRESHOLDS = (20_000, 50, 100)
"""``gc.set_threshold`` of a serving process: a young collection every 20,000 net allocations
(CPython's default is 700: with hundreds of live episodes the collector then runs on nearly
every request), and the older generations scanned less often; full collections stay bounded
by CPython's own rule (only when the objects that survived since the last one exceed a quarter
of the long-lived ones)."""


def tune_gc(seed: int = 0, apps: Any = None) -> None:
    """Prepare a serving process's garbage collector: build the template world of the default
    (seed, apps) (:func:`mcpgym.kernel.world.template`), collect once, ``gc.freeze()`` what is
    alive now (imports, the app registry, tool schemas, the template: long-lived objects every
    later collection would otherwise scan again) and set :data:`GC_THRESHOLDS`.

    Called once at start-up by :func:`serve_stdio` and :func:`serve_http`, before any episode
    exists, so that no episode's objects are frozen (a frozen object is never collected).

    Raises:
        KeyError: (``UnknownAppError``) for an unknown app name.
    """
    template(seed, apps)
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


async def serve_stdio(
    seed: int = 0,
    apps: Any = None,
    faults: Any = "none",
    fault_seed: int | None = None,
    tools: list[str] | None = None,
    search_tools: bool = False,
) -> Episode:
    """Serve one episode over stdin/stdout until the client closes; return the episode."""
    from mcp.server.stdio import stdio_server

    tune_gc(seed, apps)
    episode = Episode.create(
        seed=seed, apps=apps, faults=faults, fault_seed=fault_seed, tools=tools, search_tools=search_tools
    )
    server = server_for_episode(episode)
    async with stdio_server() as (read, write):
        await server.run(RejectMalformed(read, write), write, server.create_initialization_options())
    return episode


class RejectMalformed(ReadStreamWrapper):
    """Read side of the stdio transport that answers malformed lines instead of dropping them.

    The SDK's stdio transport hands a line that is not a JSON-RPC message to the server as an
    exception, which the server only logs: the client waits forever for an answer. This wrapper
    replies the way JSON-RPC 2.0 (section 5.1) asks: ``-32700 Parse error`` for a line that is
    not JSON, ``-32600 Invalid Request`` for JSON that is not a JSON-RPC message (echoing its
    ``id`` when it has a usable one, else ``null``) and for a request method sent with an
    unusable id (which the SDK would take for a notification), and reads on. Valid messages
    pass through.

    Args:
        read: the SDK's read stream (``SessionMessage | Exception`` items).
        write: the SDK's write stream (where the error replies go).
    """

    def __init__(self, read: Any, write: Any) -> None:
        super().__init__(read)
        self._write = write

    async def receive(self) -> Any:
        """The next valid message; malformed lines are answered and skipped."""
        while True:
            item = await self._read.receive()
            if isinstance(item, Exception):
                answer = rejection(item)
            elif isinstance(item.message, types.JSONRPCNotification) and not item.message.method.startswith(
                "notifications/"
            ):
                # A request whose id is not a string or an integer (true, 1.5, null) parses as a
                # notification and would be dropped without a word.
                answer = types.JSONRPCError(
                    jsonrpc="2.0",
                    id=None,
                    error=types.ErrorData(
                        code=types.INVALID_REQUEST,
                        message=f"Invalid Request: {item.message.method!r} is a request and needs an id "
                        "that is a string or an integer",
                    ),
                )
            else:
                return item
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                await self._write.send(SessionMessage(answer))


def rejection(exc: Exception) -> types.JSONRPCError:
    """The JSON-RPC error answering a line the SDK could not read as a message (see :class:`RejectMalformed`)."""
    errors = exc.errors() if isinstance(exc, ValidationError) else []
    unread = next((e for e in errors if e.get("type") == "json_invalid"), None)
    if unread is not None and isinstance(unread.get("input"), str):
        found = _python_reading(unread["input"])
        if found is not None:  # JSON, but not what the SDK's parser reads: answered under its id
            rid, why = found
            return types.JSONRPCError(
                jsonrpc="2.0",
                id=rid,
                error=types.ErrorData(code=types.INVALID_REQUEST, message=f"Invalid Request: the line holds {why}"),
            )
    if not errors or unread is not None:
        return types.JSONRPCError(
            jsonrpc="2.0",
            id=None,
            error=types.ErrorData(
                code=types.PARSE_ERROR,
                message="Parse error: the line is not valid JSON (one JSON-RPC message per line)",
            ),
        )
    request_id = None
    for err in errors:
        data = err.get("input")
        if isinstance(data, dict):
            rid = data.get("id")
            if "method" in data and isinstance(rid, (str, int)) and not isinstance(rid, bool):
                request_id = rid
            break
    return types.JSONRPCError(
        jsonrpc="2.0",
        id=request_id,
        error=types.ErrorData(
            code=types.INVALID_REQUEST,
            message="Invalid Request: not a JSON-RPC 2.0 message (need jsonrpc '2.0', a method name and object params)",
        ),
    )


_MAX_INT_DIGITS = 4300


def _python_reading(line: str) -> tuple[str | int | None, str] | None:
    """What Python's own JSON parser makes of a line the SDK's stricter one refused: ``(the
    request's id, why the line cannot be served)`` when it is a JSON object (a string with a
    lone surrogate, or an integer of more than 4,300 digits, both valid JSON text); None when
    it is not JSON at all. The id is the line's ``id`` when it is a string or an integer of a
    request (a method), else None. Bounded: integers are never converted past 4,300 digits and
    nesting past Python's depth is not JSON here."""
    long_int: list[int] = []
    too_long = object()  # what an integer past the limit reads as (so an id of 5,000 digits is no id)

    def bounded_int(text: str) -> object:
        if len(text.lstrip("-")) > _MAX_INT_DIGITS:
            long_int.append(len(text))
            return too_long
        return int(text)

    try:
        data = json.loads(line, parse_int=bounded_int)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    rid = data.get("id")
    usable = "method" in data and isinstance(rid, (str, int)) and not isinstance(rid, bool)
    why = (
        f"an integer of {max(long_int):,} digits (at most {_MAX_INT_DIGITS:,})"
        if long_int
        else "a string that is not valid Unicode (a lone surrogate escape such as \\ud800)"
    )
    return (rid if usable else None), why


def resolve_token(token: str | None) -> tuple[str, bool]:
    """Return ``(token, generated)``: ``token``, else ``$MCPGYM_TOKEN``, else a new random one."""
    if token:
        return token, False
    env = os.environ.get("MCPGYM_TOKEN")
    if env:
        return env, False
    return secrets.token_urlsafe(24), True


def sweep_interval(idle_timeout: float) -> float:
    """Seconds between idle-expiry sweeps for ``idle_timeout``: a quarter of it, within [0.05, 30]."""
    return min(30.0, max(0.05, idle_timeout / 4))


def serve_http(
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
    max_episodes: int = 1000,
    idle_timeout: float = 1800.0,
    log_level: str = "warning",
    expire_every: float | None = None,
    defaults: EpisodeDefaults | None = None,
    rl: Any = None,
) -> None:
    """Run the HTTP server (control API + per-episode MCP endpoints) until interrupted.

    Args:
        defaults: seed, apps, faults, fault seed and retrieval mode of an episode whose
            ``POST /control/episodes`` body leaves them out.
        idle_timeout: wall seconds after which an unused episode expires.
        expire_every: wall seconds between expiry sweeps (default: a quarter of
            ``idle_timeout``, at most 30 s and at least 0.05 s), so an idle episode is gone
            within 1.25 x ``idle_timeout``.
        rl: the :class:`mcpgym.server.rl_routes.RLHooks` of the task list, task-episode and reward routes
            (None: they answer 501).

    Raises:
        OSError: when the port cannot be bound.
    """
    import uvicorn

    token, generated = resolve_token(token)
    base = defaults or EpisodeDefaults()
    tune_gc(base.seed, base.apps)
    store = EpisodeStore(max_episodes=max_episodes, idle_timeout=idle_timeout)
    if expire_every is None:
        expire_every = sweep_interval(idle_timeout)
    app = create_app(token, store=store, host=host, expire_every=expire_every, defaults=defaults, rl=rl)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP: asyncio sets TCP_NODELAY only on accepted sockets whose proto says TCP;
    # with the default proto 0, Nagle's algorithm meets the client's delayed ACK and every
    # response waits ~40 ms (tests/reliability/test_load.py measures the latency).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    actual = sock.getsockname()[1]
    shown_host = f"[{host}]" if ":" in host else host
    url = f"http://{shown_host}:{actual}"
    # timeout_keep_alive: well above the clients' pool expiry (httpx: 5 s). With equal values a
    # client may reuse a kept-alive connection just as the server closes it, and under load that
    # request fails with a read error (tests/reliability/test_load.py).
    # access_log: uvicorn formats each request's access-log arguments before its logger drops
    # them; below the info level no access line is ever written, so nothing is formatted.
    config = uvicorn.Config(
        app,
        log_level=log_level,
        access_log=log_level.lower() in ("trace", "debug", "info"),
        lifespan="on",
        timeout_graceful_shutdown=2,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
    )
    server = uvicorn.Server(config)
    # sse-starlette (the SDK's SSE responses) cuts every open SSE stream when uvicorn gets a
    # signal, without finishing the response: uvicorn then logs "ERROR: ASGI callable returned
    # without completing response" for each client's standing GET stream, and a POST stream
    # can be cut before its answer. Streams end here instead, in order (stop_serving below).
    from sse_starlette.sse import AppStatus

    AppStatus.disable_automatic_graceful_drain()

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve, [sock])
            while not server.started:
                await anyio.sleep(0.01)
            ready = {"url": url}
            if generated:
                ready["token"] = token
            print("MCPGYM_READY " + json.dumps(ready), flush=True)
            if generated:
                print(f"control token (generated; also on the MCPGYM_READY line): {token}", file=sys.stderr, flush=True)
            # Once stopping: the calls waiting on clients are answered that the server stops,
            # the answers in progress are written, then every session ends (its streams end
            # as finished responses), so the graceful shutdown has nothing to wait out or cut.
            while not server.should_exit:
                await anyio.sleep(STOP_POLL_SECONDS)
            await app.state.stop_serving()

    anyio.run(main)
