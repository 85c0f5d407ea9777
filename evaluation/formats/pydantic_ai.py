"""Format ``pydantic-ai``: pydantic-ai message histories as
``ModelMessagesTypeAdapter.dump_json(result.all_messages())`` writes them.

Shapes (``pydantic_ai.messages``, checked against pydantic-ai 1.x): a list of
``{"kind": "request" | "response", "parts": [...]}``. Parts by ``part_kind``:

* request: ``system-prompt``, ``user-prompt`` (the instruction), ``tool-return``
  (``tool_name``, ``content``, ``tool_call_id``; ``outcome`` ``failed`` / ``denied`` /
  ``retried`` is the harness's flag), ``retry-prompt`` (``tool_name``, ``tool_call_id``,
  ``content``: the call was refused, e.g. its arguments failed validation: an error of that
  call, rule ``format_flag``; without a ``tool_name`` it answers no call and is skipped);
* response: ``text``, ``thinking`` (skipped), ``tool-call`` (``tool_name``, ``args`` (an
  object or a JSON string), ``tool_call_id``).

The calls of one response were made together (a parallel batch). Containers: the list, an
object with it under ``messages``, a list of such, or JSON Lines. The rest is the ``openai``
format's (:func:`mcpgym.evaluation.formats.openai.trajectory_from_messages`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcpgym.evaluation.formats.common import EpisodeError, LoadResult
from mcpgym.evaluation.formats.message_lists import Chat, load_lists

FORMAT = "pydantic-ai"
FAILED_OUTCOMES: frozenset[str] = frozenset({"failed", "denied", "retried"})
"""``ToolReturnPart.outcome`` values of a call that did not succeed."""


def is_message(v: Any) -> bool:
    """True for a pydantic-ai model message (``kind`` request/response with ``parts``)."""
    return isinstance(v, dict) and v.get("kind") in ("request", "response") and isinstance(v.get("parts"), list)


def is_message_list(v: Any) -> bool:
    """True for a non-empty list of pydantic-ai model messages."""
    return isinstance(v, list) and bool(v) and all(is_message(x) for x in v)


def _content(value: Any) -> Any:
    return value if isinstance(value, (str, list)) else json.dumps(value, ensure_ascii=False, default=str)


def messages_to_chat(messages: list[Any]) -> Chat:
    """pydantic-ai messages -> chat-completions messages (module docstring).

    Raises:
        EpisodeError: a message that is not a pydantic-ai model message.
    """
    out: list[dict[str, Any]] = []
    for i, m in enumerate(messages, start=1):
        if not is_message(m):
            raise EpisodeError(f"message {i} is not a pydantic-ai model message (kind request / response)")
        if m["kind"] == "response":
            texts = [p.get("content") for p in m["parts"] if isinstance(p, dict) and p.get("part_kind") == "text"]
            calls = [
                {
                    "id": p.get("tool_call_id"),
                    "type": "function",
                    "function": {"name": p.get("tool_name"), "arguments": p.get("args")},
                }
                for p in m["parts"]
                if isinstance(p, dict) and p.get("part_kind") == "tool-call"
            ]
            msg: dict[str, Any] = {"role": "assistant", "content": "\n".join(str(t) for t in texts if t)}
            if calls:
                msg["tool_calls"] = calls
            out.append(msg)
            continue
        for p in m["parts"]:
            kind = p.get("part_kind") if isinstance(p, dict) else None
            if kind == "user-prompt":
                out.append({"role": "user", "content": _content(p.get("content"))})
            elif kind == "system-prompt":
                out.append({"role": "system", "content": _content(p.get("content"))})
            elif kind == "tool-return":
                failed = str(p.get("outcome") or "success") in FAILED_OUTCOMES
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": p.get("tool_call_id"),
                        "content": _content(p.get("content")),
                        "error": failed,
                    }
                )
            elif kind == "retry-prompt" and p.get("tool_name"):
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": p.get("tool_call_id"),
                        "content": _content(p.get("content")),
                        "error": True,
                    }
                )
    return Chat(messages=out)


def load(path: str | Path) -> LoadResult:
    """Read a JSON or JSONL file of pydantic-ai message histories (module docstring)."""
    return load_lists(
        path,
        FORMAT,
        is_message_list,
        messages_to_chat,
        "a pydantic-ai message history (ModelMessagesTypeAdapter JSON: kind request/response with parts)",
    )


__all__ = ["FAILED_OUTCOMES", "FORMAT", "is_message", "is_message_list", "load", "messages_to_chat"]
