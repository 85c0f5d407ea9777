"""Format ``langchain``: LangChain / LangGraph message dumps.

Shapes (``langchain_core.messages``, checked against langchain-core 1.x):

* ``messages_to_dict`` form: ``[{"type": "human" | "ai" | "tool" | "system", "data": {...}}]``;
* ``model_dump`` form: the message objects' fields flat, ``{"type": "ai", "content",
  "tool_calls", ...}``;
* a LangGraph state (or ``invoke`` result) ``{"messages": [...]}`` of either form, a list of
  such episodes, or JSON Lines with one per line.

An ``ai`` message's ``tool_calls`` are ``[{"name", "args" (an object), "id"}]`` (also
``additional_kwargs.tool_calls`` in the OpenAI shape); a ``tool`` message has
``tool_call_id``, ``content`` (a string or content parts) and ``status`` (``"error"`` is
the harness's flag: ``ToolNode`` sets it when the tool raised). The rest is the ``openai``
format's (:func:`mcpgym.evaluation.formats.openai.trajectory_from_messages`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcpgym.evaluation.formats.common import EpisodeError, LoadResult
from mcpgym.evaluation.formats.message_lists import Chat, load_lists

FORMAT = "langchain"
ROLES: dict[str, str] = {
    "human": "user",
    "HumanMessage": "user",
    "ai": "assistant",
    "AIMessage": "assistant",
    "AIMessageChunk": "assistant",
    "tool": "tool",
    "ToolMessage": "tool",
    "system": "system",
    "SystemMessage": "system",
}
"""LangChain message ``type`` -> chat role."""


def _fields(m: dict[str, Any]) -> dict[str, Any]:
    data = m.get("data")
    return data if isinstance(data, dict) and "content" in data else m


def is_message(v: Any) -> bool:
    """True for a LangChain message in either dump form."""
    return (
        isinstance(v, dict)
        and isinstance(v.get("type"), str)
        and v["type"] in ROLES
        and (isinstance(v.get("data"), dict) or "content" in v)
    )


def is_message_list(v: Any) -> bool:
    """True for a non-empty list of LangChain messages."""
    return isinstance(v, list) and bool(v) and all(is_message(x) for x in v)


def messages_to_chat(messages: list[Any]) -> Chat:
    """LangChain messages -> chat-completions messages (module docstring).

    Raises:
        EpisodeError: a message that is not a LangChain message.
    """
    out: list[dict[str, Any]] = []
    for i, m in enumerate(messages, start=1):
        if not is_message(m):
            raise EpisodeError(f"message {i} is not a LangChain message (type human / ai / tool / system)")
        f = _fields(m)
        role = ROLES[str(m["type"])]
        msg: dict[str, Any] = {"role": role, "content": f.get("content") if f.get("content") is not None else ""}
        if role == "assistant":
            calls = [
                {
                    "id": c.get("id"),
                    "type": "function",
                    "function": {"name": c.get("name"), "arguments": c.get("args", {})},
                }
                if isinstance(c, dict)
                else c  # not an object: the chat reader counts it as a malformed call, with a warning
                for c in f.get("tool_calls") or []
            ]
            if not calls:
                kw = f.get("additional_kwargs")
                listed = kw.get("tool_calls") if isinstance(kw, dict) else None
                calls = list(listed or [])
            if calls:
                msg["tool_calls"] = calls
        elif role == "tool":
            msg["tool_call_id"] = f.get("tool_call_id")
            msg["error"] = f.get("status") == "error"
            if not isinstance(msg["content"], (str, list)):
                msg["content"] = json.dumps(msg["content"], ensure_ascii=False, default=str)
        out.append(msg)
    return Chat(messages=out)


def load(path: str | Path) -> LoadResult:
    """Read a JSON or JSONL file of LangChain / LangGraph message dumps (module docstring)."""
    return load_lists(
        path,
        FORMAT,
        is_message_list,
        messages_to_chat,
        "a LangChain message list (messages_to_dict or model_dump), or a LangGraph state with messages",
    )


__all__ = ["FORMAT", "ROLES", "is_message", "is_message_list", "load", "messages_to_chat"]
