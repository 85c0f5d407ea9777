"""A zero-latency scripted model behind an OpenAI-compatible endpoint, stateless: the reply to
a chat-completions request is a function of the request alone, so any number of
conversations can run at once (the verifiers benchmark and tests, 64 concurrent rollouts).

:class:`ReplayModel` serves ``POST .../chat/completions`` on 127.0.0.1. Its script maps an
instruction (the content of the request's first user message) to a list of actions: the
``n``-th assistant turn of a conversation (``n`` = the assistant messages the request already
holds) answers ``actions[n]``, each ``{"tool", "arguments"}`` (one tool call, id ``call_<n>``)
or ``{"final": text}`` (the reply without tool calls). A conversation past its script, or with
an unknown instruction, gets HTTP 400 naming why. Nothing is kept per request but a count.
"""

from __future__ import annotations

import contextlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MAX_BODY = 8 * 1024 * 1024
"""Largest request body (bytes) the model reads; a larger one gets HTTP 413."""


def reply_to(script: dict[str, list[dict[str, Any]]], body: dict[str, Any]) -> dict[str, Any]:
    """The chat completion answering ``body`` under ``script`` (module docstring).

    Raises:
        ValueError: no user message, an instruction the script lacks, or a turn past its end.
    """
    messages = body.get("messages") or []
    instruction = next((m.get("content") for m in messages if m.get("role") == "user"), None)
    if instruction not in script:
        raise ValueError(f"no script for the instruction {str(instruction)[:80]!r}")
    turn = sum(1 for m in messages if m.get("role") == "assistant")
    actions = script[instruction]
    if turn >= len(actions):
        raise ValueError(f"turn {turn} is past the script's {len(actions)} actions")
    action = actions[turn]
    message: dict[str, Any] = {"role": "assistant", "content": action.get("final")}
    if "final" not in action:
        call = {"name": action["tool"], "arguments": json.dumps(action.get("arguments") or {})}
        message["tool_calls"] = [{"id": f"call_{turn}", "type": "function", "function": call}]
    return {
        "id": f"chatcmpl-{turn}",
        "object": "chat.completion",
        "created": 0,
        "model": str(body.get("model") or "replay"),
        "choices": [{"index": 0, "message": message, "finish_reason": "stop" if "final" in action else "tool_calls"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


class ReplayModel:
    """The loopback server (a context manager): ``url`` is its OpenAI base URL (``.../v1``),
    ``requests`` the number of requests answered."""

    def __init__(self, script: dict[str, list[dict[str, Any]]]) -> None:
        self.script = script
        self.requests = 0
        model = self
        lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                """No request lines on stderr."""

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                size = int(self.headers.get("content-length") or 0)
                if size > MAX_BODY:
                    self._answer(413, {"error": f"body over {MAX_BODY} bytes"})
                    return
                try:
                    answer = reply_to(model.script, json.loads(self.rfile.read(size)))
                except (ValueError, KeyError, TypeError) as exc:
                    self._answer(400, {"error": str(exc)[:500]})
                    return
                with lock:
                    model.requests += 1
                self._answer(200, answer)

            def _answer(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                with contextlib.suppress(OSError):
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> ReplayModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()


def careful_script(task_id: str) -> list[dict[str, Any]]:
    """The careful agent's actions on ``task_id`` with faults off (trial 0), the final message
    last: what a :class:`ReplayModel` answers, turn by turn (the verifiers tests and benchmark)."""
    import anyio

    from mcpgym.evaluation.agents import AgentContext, make_agent
    from mcpgym.evaluation.agents.base import CallResult
    from mcpgym.evaluation.run.gym import GymEpisode

    ep = GymEpisode.create(task_id, faults="none")
    actions: list[dict[str, Any]] = []

    async def call(name: str, arguments: Any = None) -> CallResult:
        actions.append({"tool": name, "arguments": arguments or {}})
        return ep.step(name, arguments)

    result = anyio.run(lambda: make_agent("careful").run(ep.task, ep.tools, call, AgentContext(trial=0)))
    return [*actions, {"final": result.final_message}]


__all__ = ["MAX_BODY", "ReplayModel", "careful_script", "reply_to"]
