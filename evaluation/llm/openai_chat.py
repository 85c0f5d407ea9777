"""OpenAI-compatible chat completions with native tool calling (OpenAI, vLLM, llama.cpp
server, Ollama, LM Studio, OpenRouter...).

Request: ``POST {base_url}/chat/completions`` with ``Authorization: Bearer <key>`` and
``{"model", "messages", "tools": [{"type": "function", "function": {"name", "description",
"parameters"}}], "tool_choice": "auto", "temperature", "seed", "max_tokens"}`` (the last three
only when set). Results go back as one ``{"role": "tool", "tool_call_id", "content"}`` message
per call, in the order of the calls; the content is the tool's JSON payload, an error being
``{"error": {code, message, retryable, retry_after, field}}`` (the API has no error flag).
"""

from __future__ import annotations

import json
import os
from typing import Any

from mcpgym.evaluation.llm.agent import LLMAgent
from mcpgym.evaluation.llm.leftovers import is_leftover_call_syntax, removed_shown
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

DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"
LOCAL_DUMMY_KEY = "EMPTY"


class OpenAIAgent(LLMAgent):
    """An agent speaking OpenAI-compatible chat completions.

    Args:
        model: the model name (``gpt-4o-mini``, or what a local server serves).
        base_url: default ``$OPENAI_BASE_URL``, else ``https://api.openai.com/v1``.
        api_key: default ``$OPENAI_API_KEY``; for a loopback/localhost base URL a missing key
            becomes the dummy ``EMPTY``.
        temperature: default 0.0 (None: not sent, e.g. for models that only take the default).
        seed: the provider's ``seed`` (None: not sent).
        **options: the other :class:`mcpgym.evaluation.llm.agent.LLMAgent` arguments (``limits``,
            ``retry``, ``system_prompt``, ``tool_exposure``, ``name``, ``observer``...).

    Raises:
        ValueError: when the base URL is not an http(s) URL with a host, when no API key is
            given or set for a non-local base URL, or for bad options.
    """

    provider = "openai"
    api = "chat.completions"
    tool_result_format = (
        "one role=tool message per call (tool_call_id = the call's id), in call order, content = the tool's JSON "
        'payload; errors as {"error": {code, message, retryable, retry_after, field}}'
    )

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float | None = 0.0,
        seed: int | None = None,
        **options: Any,
    ) -> None:
        url = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_OPENAI_BASE_URL
        check_base_url(url, "base_url" if base_url else "OPENAI_BASE_URL")
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if not is_local_url(url):
                raise ValueError(
                    f"no API key for {url}: set OPENAI_API_KEY or pass api_key "
                    "(a local server on localhost/127.0.0.1 needs none)"
                )
            key = LOCAL_DUMMY_KEY
        super().__init__(model, base_url=url, api_key=key, temperature=temperature, seed=seed, **options)

    def endpoint(self) -> str:
        """``{base_url}/chat/completions``."""
        return f"{self.base_url}/chat/completions"

    def headers(self) -> dict[str, str]:
        """Bearer authentication plus any extra headers."""
        return {"Authorization": f"Bearer {self._api_key}", "Content-Type": "application/json", **self.extra_headers}

    def initial_messages(self, instruction: str) -> list[Any]:
        """The system prompt and the instruction as the user message."""
        return [{"role": "system", "content": self.system_prompt}, {"role": "user", "content": instruction}]

    def request_body(self, messages: list[Any], tools: list[ExposedTool]) -> dict[str, Any]:
        """The chat-completions body (``tools`` omitted when the episode offers none)."""
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.api_name, "description": t.description, "parameters": t.parameters},
                }
                for t in tools
            ]
            body["tool_choice"] = "auto"
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.seed is not None:
            body["seed"] = self.seed
        if self.limits.max_output_tokens is not None:
            body["max_tokens"] = self.limits.max_output_tokens
        body.update(self.extra_body)
        return body

    def parse_reply(self, data: dict[str, Any], turn: int, taken: set[str] | None = None) -> ModelReply:
        """Read ``choices[0].message`` (text, ``refusal``, ``reasoning_content``/``reasoning``
        and ``tool_calls``) and ``usage``. The text of a reply with tool calls that is only
        leftover call syntax (``{}``, :func:`~mcpgym.evaluation.llm.leftovers.is_leftover_call_syntax`)
        becomes empty, in the reply and in the echoed assistant message, and is kept in
        ``removed_text``.

        ``taken``: the call ids the conversation already uses; a repeated id gets a suffix
        (``_2``, ``_3``...) in the calls and the echoed message alike.

        Raises:
            ProviderError: when the answer has no choice or no message (e.g. an error object).
        """
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise ProviderError(f"the answer has no choices: {json.dumps(data)[:300]}")
        choice = choices[0]
        message = choice.get("message")
        if not isinstance(message, dict):
            raise ProviderError(f"the answer's first choice has no message: {json.dumps(choice)[:300]}")
        text = _text_of(message.get("content"))
        calls: list[ParsedCall] = []
        echoed: list[dict[str, Any]] = []
        raw_calls = message.get("tool_calls") or []
        if not isinstance(raw_calls, list):  # it asked for tools all the same: one unusable call
            broken_fn = raw_calls.get("function") if isinstance(raw_calls, dict) else None
            name = broken_fn.get("name") if isinstance(broken_fn, dict) else None
            broken_id = unique_call_id(f"call_{turn}_0", taken)
            why = f"the reply's tool_calls must be a list of calls, got {_json_kind(raw_calls)}"
            calls.append(ParsedCall(broken_id, name, None, why, raw_text(raw_calls)))
            echoed.append(
                {
                    "id": broken_id,
                    "type": "function",
                    "function": {"name": name if isinstance(name, str) else "", "arguments": "{}"},
                }
            )
            raw_calls = []
        for i, tc in enumerate(raw_calls):
            tc = tc if isinstance(tc, dict) else {}
            raw_fn, raw_id = tc.get("function"), tc.get("id")
            fn = raw_fn if isinstance(raw_fn, dict) else {}
            call_id = unique_call_id(raw_id if isinstance(raw_id, str) and raw_id else f"call_{turn}_{i}", taken)
            raw_args = fn.get("arguments")
            args, problem = parse_arguments(raw_args)
            calls.append(ParsedCall(call_id, fn.get("name"), args, problem, raw_text(raw_args) if problem else None))
            echo_args = (
                raw_args
                if problem is None and isinstance(raw_args, str) and raw_args.strip()
                else json.dumps(args or {})
            )
            echoed.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {
                        "name": fn.get("name") if isinstance(fn.get("name"), str) else "",
                        "arguments": echo_args,
                    },
                }
            )
        removed = None
        if calls and is_leftover_call_syntax(text):  # llama.cpp took the call out and left "{}"
            removed, text = removed_shown(text), ""
        assistant: dict[str, Any] = {"role": "assistant", "content": text or None}
        if echoed:
            assistant["tool_calls"] = echoed
        raw_usage = data.get("usage")
        usage = raw_usage if isinstance(raw_usage, dict) else {}
        finish = choice.get("finish_reason")
        refusal = message.get("refusal")
        reasoning = next(
            (message[k] for k in ("reasoning_content", "reasoning") if isinstance(message.get(k), str) and message[k]),
            None,
        )
        return ModelReply(
            text=text,
            calls=calls,
            input_tokens=usage_int(usage.get("prompt_tokens")),
            output_tokens=usage_int(usage.get("completion_tokens")),
            finish_reason=finish if isinstance(finish, str) else None,
            message=assistant,
            refusal=refusal if isinstance(refusal, str) and refusal else None,
            reasoning=reasoning,
            removed_text=removed,
        )

    def append_exchange(self, messages: list[Any], reply: ModelReply, outcomes: list[ToolOutcome]) -> None:
        """The assistant message, then one ``tool`` message per call, in call order."""
        messages.append(reply.message)
        for o in outcomes:
            messages.append({"role": "tool", "tool_call_id": o.call_id, "content": o.text})


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a JSON boolean"
    if isinstance(value, (int, float)):
        return "a JSON number"
    if isinstance(value, dict):
        return "a JSON object"
    return "a JSON string" if isinstance(value, str) else type(value).__name__


def _text_of(content: Any) -> str:
    """Message content as text (a string, or a list of ``{"type": "text", "text"}`` parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


__all__ = ["DEFAULT_OPENAI_BASE_URL", "OpenAIAgent"]
