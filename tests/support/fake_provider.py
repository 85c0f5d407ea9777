"""A loopback fake LLM provider for the LLM agent tests: an ``http.server`` on 127.0.0.1 that
plays a script of replies (JSON answers, functions of the request, HTTP errors, or silence) and
records every request; and the two dialects (OpenAI chat completions, Anthropic messages) that
build replies and read what an agent sent.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from mcpgym.evaluation.llm import AnthropicAgent, OpenAIAgent
from mcpgym.evaluation.llm.agent import DEFAULT_SYSTEM_PROMPT

INSTRUCTION = "Move 25 dollars from my savings into my wallet."
HANG = object()


# -- the fake provider ------------------------------------------------------------------------
@dataclass
class Fail:
    """An HTTP error answer."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: str = '{"error": {"message": "scripted failure"}}'


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    at: float


class FakeProvider:
    """A loopback HTTP server playing scripted provider replies and recording requests."""

    def __init__(self) -> None:
        self.script: deque[Any] = deque()
        self.requests: list[Recorded] = []
        self.errors: list[str] = []
        self.release = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                """Keep the test output free of http.server's request lines."""

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                raw = self.rfile.read(int(self.headers.get("content-length", 0)))
                body = json.loads(raw)
                fake.requests.append(
                    Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, body, time.monotonic())
                )
                action = fake.script.popleft() if fake.script else Fail(500, body='{"error": "script exhausted"}')
                if action is HANG:
                    fake.release.wait(10)
                    return
                if callable(action):
                    try:
                        action = action(body)
                    except Exception as exc:  # noqa: BLE001 - reported by the fixture
                        fake.errors.append(f"{type(exc).__name__}: {exc}")
                        action = Fail(400, body=json.dumps({"error": str(exc)}))
                status, headers, text = (
                    (action.status, action.headers, action.body)
                    if isinstance(action, Fail)
                    else (200, {}, json.dumps(action))
                )
                data = text.encode()
                with contextlib.suppress(OSError):  # the client hung up (a timeout test): nothing to answer
                    self.send_response(status)
                    for k, v in {"Content-Type": "application/json", **headers}.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def play(self, *actions: Any) -> None:
        self.script.extend(actions)

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


# -- the two dialects, so each case runs against both providers --------------------------------
class Raw(str):
    """Arguments to send verbatim (e.g. invalid JSON)."""


class OpenAIDialect:
    name = "openai"
    path = "/v1/chat/completions"

    def agent(self, fake: FakeProvider, **kw: Any) -> OpenAIAgent:
        return OpenAIAgent("gpt-test", base_url=f"{fake.url}/v1", api_key="sk-test", seed=42, **kw)

    def reply(self, calls: list[tuple[str, str, Any]] = (), text: str = "", usage: tuple[int, int] = (10, 5)) -> dict:
        msg: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            msg["tool_calls"] = [
                {
                    "id": cid,
                    "type": "function",
                    "function": {"name": name, "arguments": args if isinstance(args, Raw) else json.dumps(args)},
                }
                for cid, name, args in calls
            ]
        return {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": "gpt-test",
            "choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)},
        }

    def results(self, body: dict) -> list[tuple[str, dict, bool | None]]:
        """The tool results fed back at the end of a request: (id, payload, is_error or None)."""
        out = []
        for m in reversed(body["messages"]):
            if m["role"] != "tool":
                break
            out.append((m["tool_call_id"], json.loads(m["content"]), None))
        return out[::-1]

    def offered(self, body: dict) -> dict[str, dict]:
        assert all(t["type"] == "function" for t in body.get("tools", []))
        return {t["function"]["name"]: t["function"]["parameters"] for t in body.get("tools", [])}

    def check_first_request(self, req: Recorded) -> None:
        assert req.path == self.path
        assert req.headers["authorization"] == "Bearer sk-test"
        body = req.body
        assert body["model"] == "gpt-test" and body["temperature"] == 0.0 and body["seed"] == 42
        assert body["messages"] == [
            {"role": "system", "content": DEFAULT_SYSTEM_PROMPT},
            {"role": "user", "content": INSTRUCTION},
        ]
        assert body["tool_choice"] == "auto"


class AnthropicDialect:
    name = "anthropic"
    path = "/v1/messages"

    def agent(self, fake: FakeProvider, **kw: Any) -> AnthropicAgent:
        return AnthropicAgent("claude-test", base_url=fake.url, api_key="ak-test", **kw)

    def reply(self, calls: list[tuple[str, str, Any]] = (), text: str = "", usage: tuple[int, int] = (10, 5)) -> dict:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        content += [{"type": "tool_use", "id": cid, "name": name, "input": args} for cid, name, args in calls]
        return {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": content,
            "stop_reason": "tool_use" if calls else "end_turn",
            "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
        }

    def results(self, body: dict) -> list[tuple[str, dict, bool | None]]:
        last = body["messages"][-1]
        assert last["role"] == "user" and isinstance(last["content"], list)
        return [
            (b["tool_use_id"], json.loads(b["content"]), b["is_error"])
            for b in last["content"]
            if b["type"] == "tool_result"
        ]

    def offered(self, body: dict) -> dict[str, dict]:
        return {t["name"]: t["input_schema"] for t in body.get("tools", [])}

    def check_first_request(self, req: Recorded) -> None:
        assert req.path == self.path
        assert req.headers["x-api-key"] == "ak-test" and req.headers["anthropic-version"] == "2023-06-01"
        body = req.body
        assert body["model"] == "claude-test" and body["temperature"] == 0.0 and body["max_tokens"] == 4096
        assert body["system"] == DEFAULT_SYSTEM_PROMPT
        assert body["messages"] == [{"role": "user", "content": INSTRUCTION}]
        assert "seed" not in body


DIALECTS = [OpenAIDialect(), AnthropicDialect()]
both = pytest.mark.parametrize("d", DIALECTS, ids=lambda d: d.name)
