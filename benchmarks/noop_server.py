"""The baseline server of the transport figures: an SDK ``MCPServer`` with one no-op tool.

Run as ``python -m mcpgym.benchmarks.noop_server stdio`` (serves one session over stdin/stdout, the
way ``mcpgym serve --transport stdio`` does) or ``python -m mcpgym.benchmarks.noop_server http``
(streamable HTTP on a free loopback port, under uvicorn like ``mcpgym serve --transport
http``; once listening it prints one line ``NOOP_READY {"url": ...}`` on stdout, the MCP
endpoint being ``<url>/mcp``).

The tool ``noop`` takes no arguments and returns ``{"ok": true}`` as structured content: the
cheapest tool call the SDK can serve, so a figure divided by it is the cost of everything
mcpgym adds on top of the SDK (episode lookup, validation, fault decision, sandbox work, call
log, a larger result).
"""

from __future__ import annotations

import json
import socket
import sys

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel

READY_PREFIX = "NOOP_READY "
"""Prefix of the line the HTTP server prints once it listens."""


class NoopResult(BaseModel):
    """The no-op tool's structured result."""

    ok: bool = True


def build_noop_server() -> MCPServer:
    """An ``MCPServer`` exposing the single tool ``noop`` (no arguments, returns ``{"ok": true}``)."""
    server = MCPServer("noop-baseline", version="0.1.0", log_level="WARNING")

    @server.tool(name="noop", description="Do nothing and return ok.")
    def noop() -> NoopResult:
        return NoopResult()

    return server


def serve_http(host: str = "127.0.0.1") -> None:
    """Serve the no-op server over streamable HTTP on a free port of ``host`` until killed.

    Prints ``NOOP_READY {"url": "http://host:port"}`` once listening (endpoint: ``/mcp``).
    """
    import anyio
    import uvicorn

    app = build_noop_server().streamable_http_app(host=host)
    # proto=IPPROTO_TCP as `mcpgym serve` binds (server/serve.py): asyncio sets TCP_NODELAY only
    # on accepted sockets whose proto says TCP, so both servers answer without Nagle's delay.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    sock.listen(2048)
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2))

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve, [sock])
            while not server.started:
                await anyio.sleep(0.01)
            print(READY_PREFIX + json.dumps({"url": f"http://{host}:{port}"}), flush=True)

    anyio.run(main)


def main(argv: list[str] | None = None) -> None:
    """Entry point: ``stdio`` (default) or ``http``."""
    args = sys.argv[1:] if argv is None else argv
    mode = args[0] if args else "stdio"
    if mode == "stdio":
        build_noop_server().run("stdio")
    elif mode == "http":
        serve_http()
    else:
        raise SystemExit(f"usage: python -m mcpgym.benchmarks.noop_server [stdio|http], not {mode!r}")


if __name__ == "__main__":
    main()
