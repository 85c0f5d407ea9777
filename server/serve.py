"""Entry points that run the server: stdio (one episode per process) and HTTP (uvicorn).

``serve_http`` binds its socket itself so that ``--port 0`` works: once listening it prints
one line ``MCPGYM_READY {"url": ..., "token": ...}`` on stdout (the token only when it was
generated), which the evaluation runner reads when it spawns a server.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import sys
from typing import Any

import anyio

from server.episode import Episode, EpisodeStore
from server.http_app import create_app
from server.mcp_server import server_for_episode

KEEP_ALIVE_SECONDS = 65
"""Wall seconds the HTTP server keeps an idle connection open (longer than any client pool keeps it)."""


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

    episode = Episode.create(seed=seed, apps=apps, faults=faults, fault_seed=fault_seed, tools=tools,
                             search_tools=search_tools)
    server = server_for_episode(episode)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
    return episode


def resolve_token(token: str | None) -> tuple[str, bool]:
    """Return ``(token, generated)``: ``token``, else ``$MCPGYM_TOKEN``, else a new random one."""
    if token:
        return token, False
    env = os.environ.get("MCPGYM_TOKEN")
    if env:
        return env, False
    return secrets.token_urlsafe(24), True


def serve_http(
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
    max_episodes: int = 1000,
    idle_timeout: float = 1800.0,
    log_level: str = "warning",
) -> None:
    """Run the HTTP server (control API + per-episode MCP endpoints) until interrupted.

    Raises:
        OSError: when the port cannot be bound.
    """
    import uvicorn

    token, generated = resolve_token(token)
    store = EpisodeStore(max_episodes=max_episodes, idle_timeout=idle_timeout)
    app = create_app(token, store=store, host=host)
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
    config = uvicorn.Config(app, log_level=log_level, lifespan="on", timeout_graceful_shutdown=2,
                            timeout_keep_alive=KEEP_ALIVE_SECONDS)
    server = uvicorn.Server(config)

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
                print(f"control token (shown once): {token}", file=sys.stderr, flush=True)

    anyio.run(main)
