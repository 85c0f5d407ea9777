"""A scripted model behind an OpenAI-compatible endpoint, for driving real agent harnesses.

:class:`ScriptedModelServer` serves ``POST {base}/chat/completions`` (Chat Completions) and
``POST {base}/responses`` (the Responses API) on 127.0.0.1, non-streaming. Each *session*
(:meth:`ScriptedModelServer.add_session`, one base URL ``http://127.0.0.1:PORT/s/SID/v1`` each)
plays one of mcpgym's scripted agents (``careful``, ``overconfident``, ``defeatist``:
:mod:`mcpgym.evaluation.agents.scripted`) on one task, as a model would: each tool call the agent
makes is answered to the harness as the model's one tool call, and the tool result the
harness sends back in its next request (whatever wrapping that harness gives it) is decoded
into the :class:`~mcpgym.evaluation.agents.base.CallResult` the agent awaits
(:func:`decode_result`). When the agent returns, its final message is the model's reply
without tool calls. The tools the agent sees are those the harness offers in its request.

So the harness, its MCP client and its transcript are real; only the model is replaced by
a deterministic one that behaves exactly like mcpgym's reference agents. Every wait has a
deadline (:data:`TURN_TIMEOUT`); an agent that raises answers the harness with HTTP 500
naming the error.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from mcpgym.evaluation.agents import AgentContext, AgentResult, CallResult, ToolInfo, make_agent, run_agent

TURN_TIMEOUT = 60.0
"""Seconds one model turn may wait for the scripted agent's next call or answer."""
MAX_DEPTH = 6
"""Most wrapper layers :func:`decode_result` peels off a tool result."""


def _json_prefix(text: str, start: int) -> Any:
    with contextlib.suppress(ValueError):
        return json.JSONDecoder().raw_decode(text, start)[0]
    return None


def _peel(value: Any, depth: int = 0) -> tuple[bool, dict[str, Any]] | None:
    """``(is_error, payload)`` of one wrapped tool result, or None when nothing is found."""
    if depth > MAX_DEPTH:
        return None
    if isinstance(value, str):
        text = value.strip()
        with contextlib.suppress(ValueError):
            return _peel(json.loads(text), depth + 1)
        at = text.find('{"error"')
        if at < 0:  # a repr()'d exception holding the JSON with escaped quotes
            unescaped = text.replace('\\"', '"').replace("\\\\", "\\")
            at, text = unescaped.find('{"error"'), unescaped
        if at >= 0:
            found = _json_prefix(text, at)
            if isinstance(found, dict):
                return _peel(found, depth + 1)
        return None
    if isinstance(value, list):
        peeled = [p for p in (_peel(v, depth + 1) for v in value) if p is not None]
        errors = [p for p in peeled if p[0]]
        if errors:
            return errors[0]
        return peeled[0] if len(peeled) == 1 else None
    if isinstance(value, dict):
        if isinstance(value.get("error"), dict):
            return True, {"error": value["error"]}
        if isinstance(value.get("error"), str) and value["error"]:  # an error's text under "error"
            inner = _peel(value["error"], depth + 1)
            return inner if inner is not None and inner[0] else (True, {"error": {"message": value["error"]}})
        for key in ("structuredContent", "structured_content"):
            if isinstance(value.get(key), dict):
                return _peel(value[key], depth + 1)
        if value.get("type") in ("text", "input_text", "output_text") and isinstance(value.get("text"), str):
            inner = _peel(value["text"], depth + 1)
            return inner if inner is not None else (False, {"text": value["text"]})
        if isinstance(value.get("content"), list | str) and set(value) <= {"content", "isError", "is_error", "type"}:
            return _peel(value["content"], depth + 1)
        return False, value
    return None


def decode_result(content: Any) -> CallResult:
    """The :class:`CallResult` a scripted agent gets for one tool result as the harness sent
    it to the model: a string or a list of content parts, in whatever wrappers (JSON text,
    ``{"type": "text", "text": ...}`` parts, a CallToolResult dump, an exception's text holding
    mcpgym's ``{"error": {...}}``), peeled up to :data:`MAX_DEPTH` layers. An error is mcpgym's
    error object found inside; anything else is a success whose payload is the JSON object
    found, else ``{"text": ...}``."""
    peeled = _peel(content)
    if peeled is not None:
        return CallResult(is_error=peeled[0], payload=peeled[1])
    if isinstance(content, list):
        content = "\n".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    return CallResult(is_error=False, payload={"text": str(content)})


def _tools_of(body: dict[str, Any]) -> list[ToolInfo]:
    out = []
    for t in body.get("tools") or []:
        fn = t.get("function", t) if isinstance(t, dict) else {}
        if not isinstance(fn, dict) or not fn.get("name"):
            continue
        out.append(
            ToolInfo(
                name=str(fn["name"]),
                description=str(fn.get("description") or ""),
                input_schema=fn.get("parameters") or {},
            )
        )
    return out


def _result_of(body: dict[str, Any], call_id: str, api: str) -> Any:
    """The content the harness sent back for tool call ``call_id`` (the last one naming it)."""
    found: Any = None
    if api == "chat":
        for m in body.get("messages") or []:
            if isinstance(m, dict) and m.get("role") == "tool" and m.get("tool_call_id") == call_id:
                found = m.get("content")
    else:
        items = body.get("input")
        for it in items if isinstance(items, list) else []:
            if isinstance(it, dict) and it.get("type") == "function_call_output" and it.get("call_id") == call_id:
                found = it.get("output")
    return found


@dataclass
class Session:
    """One scripted agent playing one task behind one base URL."""

    sid: str
    task: Any
    agent_name: str
    fault_seed: int
    trial: int = 0
    requests: int = 0
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    offered: list[str] = field(default_factory=list)
    results: list[CallResult] = field(default_factory=list)
    chat_messages: list[Any] | None = None
    result: AgentResult | None = None
    error: str | None = None
    _events: asyncio.Queue[tuple[str, Any]] | None = None
    _pending: tuple[str, asyncio.Future[CallResult]] | None = None
    _runner: asyncio.Task[None] | None = None
    _lock: asyncio.Lock | None = None

    def openai_messages(self) -> list[Any] | None:
        """The Chat Completions conversation as an OpenAI chat user saves it: the messages of
        the last request the harness sent, then the final reply (None: no chat request, or
        the agent has not answered)."""
        if self.chat_messages is None or self.result is None:
            return None
        return [*self.chat_messages, {"role": "assistant", "content": self.result.final_message}]

    async def _call(self, name: str, arguments: Any = None) -> CallResult:
        assert self._events is not None
        call_id = f"call_{len(self.calls) + 1:03d}_{self.sid[:6]}"
        future: asyncio.Future[CallResult] = asyncio.get_running_loop().create_future()
        self._pending = (call_id, future)
        args = dict(arguments or {})
        self.calls.append((name, args))
        await self._events.put(("call", (call_id, name, args)))
        return await future

    async def _run(self, tools: list[ToolInfo]) -> None:
        assert self._events is not None
        context = AgentContext(trial=self.trial, world_seed=self.task.seed, fault_seed=self.fault_seed)
        try:
            self.result = await run_agent(make_agent(self.agent_name), self.task, tools, self._call, context)
            await self._events.put(("final", self.result.final_message))
        except Exception as exc:  # noqa: BLE001 - the harness gets the error as HTTP 500
            self.error = f"{type(exc).__name__}: {exc}"
            await self._events.put(("error", self.error))

    async def turn(self, body: dict[str, Any], api: str) -> tuple[str, Any]:
        """The model's next move for this request: ``("call", (id, name, args))``,
        ``("final", text)`` or ``("error", text)``."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            self.requests += 1
            if api == "chat" and isinstance(body.get("messages"), list):
                self.chat_messages = list(body["messages"])
            if self._runner is None:
                self._events = asyncio.Queue()
                tools = _tools_of(body)
                self.offered = [t.name for t in tools]
                self._runner = asyncio.get_running_loop().create_task(self._run(tools))
            elif self._pending is not None:
                call_id, future = self._pending
                content = _result_of(body, call_id, api)
                if content is None:
                    return "error", f"the request carries no result for the pending tool call {call_id}"
                self._pending = None
                self.results.append(decode_result(content))
                future.set_result(self.results[-1])
            elif self.result is not None:  # asked again after the answer: the same answer
                return "final", self.result.final_message
            assert self._events is not None
            try:
                return await asyncio.wait_for(self._events.get(), TURN_TIMEOUT)
            except TimeoutError:
                return "error", f"the scripted agent made no move within {TURN_TIMEOUT:g} s"


def _usage(api: str) -> dict[str, Any]:
    if api == "chat":
        return {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    return {
        "input_tokens": 0,
        "output_tokens": 0,
        "total_tokens": 0,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0},
    }


def chat_reply(model: str, move: tuple[str, Any], n: int) -> dict[str, Any]:
    """A ``chat.completion`` object for one move (a tool call or the final message)."""
    kind, data = move
    if kind == "call":
        call_id, name, args = data
        message: dict[str, Any] = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            ],
        }
        finish = "tool_calls"
    else:
        message, finish = {"role": "assistant", "content": data}, "stop"
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": _usage("chat"),
    }


def responses_reply(model: str, move: tuple[str, Any], n: int) -> dict[str, Any]:
    """A Responses-API ``response`` object for one move."""
    kind, data = move
    if kind == "call":
        call_id, name, args = data
        item: dict[str, Any] = {
            "type": "function_call",
            "id": f"fc_{call_id}",
            "call_id": call_id,
            "name": name,
            "arguments": json.dumps(args),
            "status": "completed",
        }
    else:
        item = {
            "type": "message",
            "id": f"msg_{n}",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": data, "annotations": []}],
        }
    return {
        "id": f"resp_{n}",
        "object": "response",
        "created_at": 0,
        "model": model,
        "status": "completed",
        "output": [item],
        "parallel_tool_calls": False,
        "tool_choice": "auto",
        "tools": [],
        "usage": _usage("responses"),
    }


class ScriptedModelServer:
    """The endpoint (module docstring). Use as a context manager: it serves from a thread of
    its own and stops on exit (within 10 s)."""

    def __init__(self) -> None:
        self.sessions: dict[str, Session] = {}
        self.port = 0
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    def add_session(self, task: Any, agent: str, fault_seed: int, trial: int = 0) -> tuple[Session, str]:
        """A new session playing ``agent`` on ``task``; returns it and its base URL."""
        sid = secrets.token_hex(8)
        session = Session(sid=sid, task=task, agent_name=agent, fault_seed=fault_seed, trial=trial)
        self.sessions[sid] = session
        return session, f"http://127.0.0.1:{self.port}/s/{sid}/v1"

    async def _endpoint(self, request: Request) -> JSONResponse:
        api = "chat" if request.url.path.endswith("/chat/completions") else "responses"
        session = self.sessions.get(request.path_params["sid"])
        if session is None:
            return JSONResponse({"error": {"message": "unknown session"}}, status_code=404)
        try:
            body = await request.json()
        except ValueError:
            return JSONResponse({"error": {"message": "the body is no JSON"}}, status_code=400)
        if body.get("stream"):
            return JSONResponse({"error": {"message": "streaming is not served"}}, status_code=400)
        move = await session.turn(body, api)
        if move[0] == "error":
            return JSONResponse({"error": {"message": move[1]}}, status_code=500)
        model = str(body.get("model") or "scripted")
        reply = chat_reply if api == "chat" else responses_reply
        return JSONResponse(reply(model, move, session.requests))

    def __enter__(self) -> ScriptedModelServer:
        app = Starlette(
            routes=[
                Route("/s/{sid}/v1/chat/completions", self._endpoint, methods=["POST"]),
                Route("/s/{sid}/v1/responses", self._endpoint, methods=["POST"]),
            ]
        )
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(app, log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the scripted model server did not start within 10 s")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)


@contextlib.contextmanager
def scripted_model() -> Iterator[ScriptedModelServer]:
    """A running :class:`ScriptedModelServer`."""
    with ScriptedModelServer() as server:
        yield server
