"""An SDK MCP server the proxy tests put behind ``mcpgym proxy`` (stdio, or streamable HTTP).

    python -m tests.support.proxy_upstream DIR            # stdio
    python -m tests.support.proxy_upstream DIR --http     # prints "READY <url>" once listening (loopback, port 0)

Tools (annotated): ``note_read`` / ``note_write`` (files in DIR), ``confirm_write`` (asks the
user by elicitation first), ``authenticate`` (not annotated), and the hostile ones: ``crash`` (the process exits), ``hang``
(never answers), ``garbage`` (writes a line that is no JSON-RPC message to stdout, then answers),
``rpc_error`` (answers a JSON-RPC error), ``broken_answer`` (answers with a line that breaks the
protocol, then nothing), ``flood`` (a burst of notifications), and ``request_id`` (the JSON-RPC id its call came with).
A resource ``note://readme`` and a prompt ``greet`` let the proxy show it passes them through.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

import anyio
import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import ToolAnnotations
from pydantic import BaseModel

BROKEN_SHAPES: dict[str, dict] = {
    "bad_result": {"result": {"content": "finished within budget"}},  # content is no list (and says "within")
    "no_result": {},  # neither result nor error
    "bad_error": {"error": {"code": "x", "message": 3}},
    "huge_integer": {"result": {"content": [], "n": "NUMBER"}},  # an integer of 5,000 digits
    "lone_surrogate": {"result": {"content": [{"type": "text", "text": "\ud800"}]}},
    "no_jsonrpc": {"result": {"content": []}},  # the "jsonrpc" member is taken out
}
"""Answers of the ``broken_answer`` tool: each breaks the protocol a different way."""

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False)


class Confirm(BaseModel):
    """The elicitation form: does the user confirm?"""

    ok: bool


_WIRE: list[int] = []
"""A duplicate of the process's stdout taken before the SDK's stdio transport diverts fd 1 to stderr."""


def _to_wire(text: str) -> None:
    """Write ``text`` on the MCP pipe itself, past the SDK (which diverts ``sys.stdout``)."""
    data = text.encode("utf-8", "surrogatepass")
    while data:
        data = data[os.write(_WIRE[0], data) :]


def build(folder: Path) -> MCPServer:
    """The server, keeping its notes in ``folder``."""
    server = MCPServer("proxy-test-upstream", instructions="Notes in a folder.")

    @server.tool(annotations=READ, structured_output=False)
    def note_read(name: str) -> str:
        """Read a note."""
        path = folder / name
        return path.read_text() if path.exists() else f"no note {name}"

    @server.tool(annotations=WRITE, structured_output=False)
    def note_write(name: str, text: str) -> str:
        """Write a note (appends a line)."""
        with (folder / name).open("a") as fh:
            fh.write(text + "\n")
        return f"wrote {name}"

    @server.tool(annotations=WRITE, structured_output=False)
    async def confirm_write(name: str, text: str, ctx: Context) -> str:
        """Write a note once the user confirms."""
        answer = await ctx.elicit(f"write {name}?", Confirm)
        if answer.action != "accept" or not answer.data.ok:
            return "not confirmed: nothing written"
        with (folder / name).open("a") as fh:
            fh.write(text + "\n")
        return f"confirmed and wrote {name}"

    @server.tool(structured_output=False)
    def authenticate() -> str:
        """Refresh the session's credentials (no annotations: a catalog file classifies it)."""
        return "authenticated"

    @server.tool(annotations=READ, structured_output=False)
    def crash() -> str:
        """Exit the process."""
        os._exit(3)

    @server.tool(annotations=READ, structured_output=False)
    async def hang() -> str:
        """Never answer."""
        await anyio.sleep_forever()
        return "never"

    @server.tool(annotations=READ, structured_output=False)
    def garbage() -> str:
        """Write a non-message line to stdout, then answer."""
        _to_wire("this is not JSON-RPC {{{\n")
        return "answered after garbage"

    @server.tool(annotations=READ, structured_output=False)
    async def broken_answer(shape: str, ctx: Context) -> str:
        """Answer this call with a line that breaks the protocol (``shape``, one of
        :data:`BROKEN_SHAPES`), written straight to stdout, then never answer properly."""
        envelope = {} if shape == "no_jsonrpc" else {"jsonrpc": "2.0"}
        body = json.dumps({**envelope, "id": ctx.request_id, **BROKEN_SHAPES[shape]})
        _to_wire(body.replace('"NUMBER"', "9" * 5000) + "\n")
        await anyio.sleep_forever()
        return "never"

    @server.tool(annotations=READ, structured_output=False)
    def flood(method: str, count: int, size: int = 0) -> str:
        """Write ``count`` notifications ``method`` (``notifications/message``: a log message
        of ``size`` characters) straight to stdout, then touch ``flood.done`` and answer."""
        params = {"level": "info", "data": "x" * size} if method == "notifications/message" else None
        line = json.dumps({"jsonrpc": "2.0", "method": method, **({"params": params} if params else {})}) + "\n"
        for start in range(0, count, 1000):
            _to_wire(line * min(1000, count - start))
        (folder / "flood.done").write_text(str(count))
        return f"flooded {count}"

    @server.tool(annotations=READ, structured_output=False)
    def request_id(ctx: Context) -> str:
        """The JSON-RPC id this call arrived with (the proxy's fast path gives its own)."""
        return str(ctx.request_id)

    @server.tool(annotations=READ, structured_output=False)
    def rpc_error() -> str:
        """Answer a JSON-RPC error (invalid params) instead of a result."""
        raise MCPError(types.INVALID_PARAMS, "refused by the upstream", {"why": "a test"})

    @server.resource("note://readme", mime_type="text/plain")
    def readme() -> str:
        """The readme."""
        return "read me"

    @server.prompt()
    def greet(name: str) -> str:
        """A greeting."""
        return f"Hello {name}"

    return server


def main() -> None:
    """Run over stdio, or over HTTP with ``--http``."""
    folder = Path(sys.argv[1])
    server = build(folder)
    if "--http" not in sys.argv:
        _WIRE.append(os.dup(1))
        server.run("stdio")
        return
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = server.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning")
    print(f"READY http://127.0.0.1:{port}/mcp", flush=True)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
