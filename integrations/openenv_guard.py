"""The OpenEnv server's guard: the control token on its control routes, idle expiry and bounded
answers to bad messages on its WebSocket sessions (``mcpgym serve --openenv``, issue 36).

:class:`OpenEnvGuard` wraps the ASGI app of :func:`mcpgym.integrations.openenv_env.create_app`:

* **Token.** HTTP ``/reset``, ``/step``, ``/state`` and ``/mcp`` (HTTP and WebSocket: its
  ``openenv/session/create`` holds an episode slot) need ``Authorization: Bearer <token>``, as
  the control API's routes do (compared with ``hmac.compare_digest``); without it they answer
  401 with ``WWW-Authenticate: Bearer realm="mcpgym"`` and a message saying where the token comes
  from. ``/health``, ``/metadata``, ``/schema`` and the WebSocket session ``/ws`` stay open:
  OpenEnv's clients (``GenericEnvClient``, TRL's and verifiers' adapters) connect to ``/ws``
  without headers; a ``/ws`` session is bounded instead (the cap, idle expiry, no fault profile
  by path, bounded answers).
* **Idle expiry.** A ``/ws`` session that sends nothing for ``idle_timeout`` seconds is closed
  (code 4408, the reason says so) and its episode ends: sessions that connect and wait cannot
  hold every slot.
* **Bad messages keep the session.** A message that is not a JSON object, is nested past
  :data:`mcpgym.kernel.bounded_json.MAX_JSON_DEPTH`, holds an integer of more than 4,300 digits,
  or names a tool longer than 256 characters is answered with OpenEnv's error message
  (``{"type": "error", "data": {"message", "code": "INVALID_MESSAGE"}}``), every value in it
  shortened (:func:`mcpgym.kernel.shorten.short`), and the session reads on: its episode is kept.
"""

from __future__ import annotations

import hmac
import json
from typing import Any

import anyio

from mcpgym.kernel.bounded_json import JSONLimitError, load_json
from mcpgym.kernel.shorten import cap_message

GUARDED_PATHS = ("/reset", "/step", "/state", "/mcp")
"""Routes that need the control token (they make, drive or hold an episode; ``/ws`` aside)."""

IDLE_CLOSE_CODE = 4408
"""WebSocket close code of a session ended for idleness (4000-4999: the application's own)."""

MAX_TOOL_NAME = 256
"""Longest tool name a step may carry (an action's ``tool`` field says the same)."""

MAX_ERROR_CHARS = 500
"""Longest error message sent back to a client."""


def token_problem(headers: list[tuple[bytes, bytes]], token: str) -> str | None:
    """Why ``headers`` do not carry the bearer ``token`` (None when they do)."""
    got = next((v for k, v in headers if k.lower() == b"authorization"), None)
    if got is None:
        return "missing Authorization: Bearer <token>"
    scheme, _, value = got.decode("latin-1").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(), token.encode()):
        return "wrong token"
    return None


def message_problem(text: str) -> str | None:
    """Why the ``/ws`` message ``text`` cannot be handed to OpenEnv (None when it can): not a
    JSON object, unreadable (depth, digits), or a step naming a tool past :data:`MAX_TOOL_NAME`
    characters. The reason quotes nothing of the message but its shape."""
    try:
        data = load_json(text, "the message")
    except JSONLimitError as exc:
        return cap_message(str(exc), MAX_ERROR_CHARS)
    if not isinstance(data, dict):
        return f"a message must be a JSON object {{'type': 'reset' | 'step' | 'state', 'data': {{...}}}}, got a JSON {type(data).__name__}"
    payload = data.get("data")
    if data.get("type") == "step" and isinstance(payload, dict):
        tool = payload.get("tool")
        if tool is not None and (not isinstance(tool, str) or len(tool) > MAX_TOOL_NAME):
            size = f"a string of {len(tool):,} characters" if isinstance(tool, str) else f"a JSON {type(tool).__name__}"
            return f"field 'tool' must be a tool name of at most {MAX_TOOL_NAME} characters, got {size}"
    return None


class OpenEnvGuard:
    """ASGI wrapper of the OpenEnv app (module docstring).

    Args:
        app: the OpenEnv ASGI app (with its session cap).
        token: the control token of the guarded routes.
        idle_timeout: seconds a ``/ws`` session may stay silent before it is closed.
    """

    def __init__(self, app: Any, *, token: str, idle_timeout: float) -> None:
        self.app = app
        self.token = token
        self.idle_timeout = idle_timeout

    def __getattr__(self, name: str) -> Any:
        """The wrapped app's attributes (``routes``, ``state``...), for code that inspects it."""
        return getattr(self.app, name)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Serve ``scope`` (module docstring)."""
        kind, path = scope["type"], scope.get("path", "")
        if kind in ("http", "websocket") and path in GUARDED_PATHS:
            problem = token_problem(scope.get("headers", []), self.token)
            if problem is not None:
                await self._refuse(kind, path, problem, receive, send)
                return
        if kind == "websocket" and path == "/ws":
            await self.app(scope, self._session_receive(receive, send), send)
            return
        await self.app(scope, receive, send)

    async def _refuse(self, kind: str, path: str, problem: str, receive: Any, send: Any) -> None:
        message = (
            f"{path} needs the control token: {problem} (the token of mcpgym serve --openenv: --token, "
            "$MCPGYM_TOKEN, or the one it generated and printed at start)"
        )
        if kind == "websocket":
            await receive()  # websocket.connect
            await send({"type": "websocket.close", "code": 1008, "reason": message[:123]})
            return
        body = json.dumps({"detail": message}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", b'Bearer realm="mcpgym"'),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    def _session_receive(self, receive: Any, send: Any) -> Any:
        """The receive callable of one ``/ws`` session: idle expiry and bad messages answered."""
        idle = self.idle_timeout

        async def guarded() -> Any:
            while True:
                message = None
                with anyio.move_on_after(idle):
                    message = await receive()
                if message is None:
                    reason = f"idle for {idle:g} s: the session and its episode ended (reconnect and reset)"
                    await send({"type": "websocket.close", "code": IDLE_CLOSE_CODE, "reason": reason[:123]})
                    return {"type": "websocket.disconnect", "code": IDLE_CLOSE_CODE}
                if message.get("type") != "websocket.receive":
                    return message
                text = message.get("text")
                if text is None and message.get("bytes") is not None:
                    text = message["bytes"].decode("utf-8", "replace")
                problem = message_problem(text or "")
                if problem is None:
                    return message
                error = {"type": "error", "data": {"message": problem, "code": "INVALID_MESSAGE"}}
                await send({"type": "websocket.send", "text": json.dumps(error)})

        return guarded


__all__ = [
    "GUARDED_PATHS",
    "IDLE_CLOSE_CODE",
    "MAX_TOOL_NAME",
    "OpenEnvGuard",
    "message_problem",
    "token_problem",
]
