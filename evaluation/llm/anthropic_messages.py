"""The Anthropic messages API with tool use.

Request: ``POST {base_url}/v1/messages`` with ``x-api-key`` and ``anthropic-version``, body
``{"model", "max_tokens", "system", "messages", "tools": [{"name", "description",
"input_schema"}], "temperature"}``. The model's ``tool_use`` blocks are executed in order; all
their results go back in ONE user message of ``tool_result`` blocks (``tool_use_id``,
``is_error``, the tool's JSON payload as text), as the API requires.
"""

from __future__ import annotations

import json
import os
from typing import Any

from mcpgym.evaluation.llm.agent import LLMAgent
from mcpgym.evaluation.llm.replies import (
    ModelReply,
    ParsedCall,
    ToolOutcome,
    check_base_url,
    is_local_url,
    parse_arguments,
    raw_text,
    unique_call_id,
    usage_int,
)
from mcpgym.evaluation.llm.tools import ExposedTool
from mcpgym.evaluation.llm.transport import ProviderError

DEFAULT_ANTHROPIC_BASE_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_OUTPUT_TOKENS = 4096
LOCAL_DUMMY_KEY = "local"


class AnthropicAgent(LLMAgent):
    """An agent speaking the Anthropic messages API.

    Args:
        model: the model name (``claude-sonnet-4-5``...).
        base_url: default ``$ANTHROPIC_BASE_URL``, else ``https://api.anthropic.com`` (a URL
            ending in ``/v1`` is accepted too).
        api_key: default ``$ANTHROPIC_API_KEY``; for a loopback/localhost base URL a missing
            key becomes a dummy one.
        temperature: default 0.0 (None: not sent).
        **options: the other :class:`mcpgym.evaluation.llm.agent.LLMAgent` arguments. The messages
            API has no sampling seed, so there is no ``seed``.

    Raises:
        ValueError: when the base URL is not an http(s) URL with a host, when no API key is
            given or set for a non-local base URL, or for bad options.
    """

    provider = "anthropic"
    api = "messages"
    tool_result_format = (
        "one user message per reply holding a tool_result block per tool_use (tool_use_id, is_error), in call "
        'order, content = the tool\'s JSON payload as text; errors as {"error": {code, message, retryable, '
        "retry_after, field}} with is_error true"
    )

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float | None = 0.0,
        **options: Any,
    ) -> None:
        if "seed" in options:
            raise ValueError("the Anthropic messages API has no sampling seed; drop the seed option")
        url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_ANTHROPIC_BASE_URL
        check_base_url(url, "base_url" if base_url else "ANTHROPIC_BASE_URL")
        key = api_key or os.environ.get("ANTHROPIC_API_KEY")
        if not key:
            if not is_local_url(url):
                raise ValueError(
                    f"no API key for {url}: set ANTHROPIC_API_KEY or pass api_key "
                    "(a local server on localhost/127.0.0.1 needs none)"
                )
            key = LOCAL_DUMMY_KEY
        super().__init__(model, base_url=url, api_key=key, temperature=temperature, seed=None, **options)

    def describe(self) -> dict[str, Any]:
        """:meth:`LLMAgent.describe` plus the ``anthropic-version`` sent and ``max_tokens`` per reply."""
        return {
            **super().describe(),
            "anthropic_version": ANTHROPIC_VERSION,
            "max_output_tokens": self.limits.max_output_tokens or DEFAULT_MAX_OUTPUT_TOKENS,
        }

    def endpoint(self) -> str:
        """``{base_url}/v1/messages`` (``{base_url}/messages`` when it already ends in ``/v1``)."""
        return f"{self.base_url}/messages" if self.base_url.endswith("/v1") else f"{self.base_url}/v1/messages"

    def headers(self) -> dict[str, str]:
        """``x-api-key``, ``anthropic-version`` plus any extra headers."""
        return {
            "x-api-key": self._api_key,
            "anthropic-version": ANTHROPIC_VERSION,
            "content-type": "application/json",
            **self.extra_headers,
        }

    def initial_messages(self, instruction: str) -> list[Any]:
        """The instruction as the user message (the system prompt is a top-level field)."""
        return [{"role": "user", "content": instruction}]

    def request_body(self, messages: list[Any], tools: list[ExposedTool]) -> dict[str, Any]:
        """The messages body (``tools`` omitted when the episode offers none)."""
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.limits.max_output_tokens or DEFAULT_MAX_OUTPUT_TOKENS,
            "system": self.system_prompt,
            "messages": messages,
        }
        if tools:
            body["tools"] = [
                {"name": t.api_name, "description": t.description, "input_schema": t.parameters} for t in tools
            ]
        if self.temperature is not None:
            body["temperature"] = self.temperature
        body.update(self.extra_body)
        return body

    def parse_reply(self, data: dict[str, Any], turn: int, taken: set[str] | None = None) -> ModelReply:
        """Read the ``content`` blocks (``text``, ``tool_use``, ``thinking`` as the reasoning),
        ``stop_reason`` (``refusal``: the text is the refusal) and ``usage``
        (input = ``input_tokens`` + cache creation + cache read tokens).

        ``taken``: the call ids the conversation already uses; a repeated id gets a suffix
        (``_2``, ``_3``...) in the calls and the echoed message alike.

        Raises:
            ProviderError: for an error object or an answer without a ``content`` list.
        """
        if data.get("type") == "error":
            raise ProviderError(f"the provider answered with an error: {json.dumps(data.get('error'))[:300]}")
        content = data.get("content")
        if not isinstance(content, list):
            raise ProviderError(f"the answer has no content list: {json.dumps(data)[:300]}")
        texts: list[str] = []
        thoughts: list[str] = []
        calls: list[ParsedCall] = []
        echoed: list[dict[str, Any]] = []
        for i, block in enumerate(content):
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                text = block.get("text")
                if isinstance(text, str) and text:
                    texts.append(text)
                    echoed.append(block)
            elif kind == "tool_use":
                raw_id = block.get("id")
                call_id = unique_call_id(raw_id if isinstance(raw_id, str) and raw_id else f"toolu_{turn}_{i}", taken)
                args, problem = parse_arguments(block.get("input"))
                calls.append(
                    ParsedCall(
                        call_id, block.get("name"), args, problem, raw_text(block.get("input")) if problem else None
                    )
                )
                echoed.append({**block, "id": call_id, "input": args if problem is None else {}})
            else:
                if kind == "thinking" and isinstance(block.get("thinking"), str) and block["thinking"]:
                    thoughts.append(block["thinking"])
                echoed.append(block)  # thinking blocks and others go back unchanged
        raw_usage = data.get("usage")
        usage = raw_usage if isinstance(raw_usage, dict) else {}
        input_tokens = sum(
            usage_int(usage.get(k)) for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        )
        stop = data.get("stop_reason")
        return ModelReply(
            text="\n".join(texts),
            calls=calls,
            input_tokens=input_tokens,
            output_tokens=usage_int(usage.get("output_tokens")),
            finish_reason=stop if isinstance(stop, str) else None,
            message={"role": "assistant", "content": echoed},
            refusal="\n".join(texts) or "(refused)" if stop == "refusal" else None,
            reasoning="\n".join(thoughts) or None,
        )

    def append_exchange(self, messages: list[Any], reply: ModelReply, outcomes: list[ToolOutcome]) -> None:
        """The assistant message, then ONE user message with every ``tool_result`` in call order."""
        messages.append(reply.message)
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": o.call_id, "content": o.text, "is_error": o.is_error}
                    for o in outcomes
                ],
            }
        )


__all__ = ["ANTHROPIC_VERSION", "AnthropicAgent", "DEFAULT_ANTHROPIC_BASE_URL"]
