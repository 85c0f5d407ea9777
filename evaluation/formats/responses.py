"""Format ``responses``: OpenAI Responses-API item lists, as the Responses API returns them and
as the OpenAI Agents SDK stores a run (``RunResult.to_input_list()``).

Items (``openai.types.responses``; checked against openai 2.x and openai-agents 0.24):

* ``{"role": "user" | "system" | "developer", "content": ...}`` (with or without ``"type":
  "message"``): input messages; the first user message is the instruction.
* ``{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text"}]}``:
  the model's text.
* ``{"type": "function_call", "call_id", "name", "arguments"}`` and ``{"type":
  "function_call_output", "call_id", "output"}``: a function call and its result. The SDK
  hands an MCP result to the model as ``{"type": "text", "text": "<CallToolResult JSON or the
  server's text>"}`` (or a list of such parts); the layered result reader
  (:mod:`mcpgym.evaluation.formats.layers`) takes the wrappers off.
* ``{"type": "mcp_call", "id", "name", "arguments", "server_label", "output", "error"}``: a
  hosted MCP call and its answer in one item; a non-empty ``error`` is the harness's flag.
* ``{"type": "mcp_list_tools", "server_label", "tools": [{"name", "description",
  "input_schema", "annotations"}]}``: the tools a hosted MCP server listed; their
  annotations (``readOnlyHint``, ``destructiveHint``) classify them.
* ``reasoning``, ``mcp_approval_request`` / ``..._response`` and other item types are no
  calls and are skipped.

Containers: a bare item list (one episode), a list of item lists, an object with the items
under ``input`` + ``output`` (a stored request and its response), ``output`` (a Responses
``response`` object), ``items`` or ``messages``; JSON Lines with one item list or object per
line.

Conversion: consecutive calls with no model text or result between them were made in one
model turn (a parallel batch); the text an assistant message item holds right before its
calls belongs to that turn. The rest is the ``openai`` format's
(:func:`mcpgym.evaluation.formats.openai.trajectory_from_messages`): the final message is the
last assistant text after the last result; none (the run stops on a result) is status
``limit``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcpgym.evaluation.formats.common import LoadResult
from mcpgym.evaluation.formats.message_lists import Chat, Found, load_message_lists, split_lists
from mcpgym.evaluation.formats.results import content_text

FORMAT = "responses"
CALL_TYPES: frozenset[str] = frozenset({"function_call", "mcp_call", "custom_tool_call"})
"""Item types of a tool call."""
OUTPUT_TYPES: frozenset[str] = frozenset({"function_call_output", "custom_tool_call_output"})
"""Item types of a tool call's result."""
ITEM_TYPES: frozenset[str] = CALL_TYPES | OUTPUT_TYPES | frozenset({"mcp_list_tools"})
"""Item types that mark a Responses-API item list (``auto`` and the ``openai`` format read
them as this format)."""
SKIPPED_TYPES: frozenset[str] = frozenset(
    {"reasoning", "mcp_approval_request", "mcp_approval_response", "compaction", "item_reference"}
)
"""Item types that are neither messages nor calls."""


def is_item(v: Any) -> bool:
    """True for a Responses item of a call, a call's result or a tool listing."""
    return isinstance(v, dict) and isinstance(v.get("type"), str) and v["type"] in ITEM_TYPES


def is_item_list(v: Any) -> bool:
    """True for a list holding at least one Responses call / output / tool-list item and only
    objects."""
    return isinstance(v, list) and any(is_item(x) for x in v) and all(isinstance(x, dict) for x in v)


def _text(content: Any) -> str:
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
        return "\n".join(str(p) for p in parts)
    return content_text(content)


def _output(value: Any) -> Any:
    """A result's ``output`` as the reader takes it: strings pass, lists of parts pass, other
    JSON is dumped."""
    if isinstance(value, (str, list)) or value is None:
        return value if value is not None else ""
    return json.dumps(value, ensure_ascii=False, default=str)


def items_to_chat(items: list[Any]) -> Chat:
    """Responses items -> chat-completions messages (module docstring).

    Raises:
        mcpgym.evaluation.formats.common.EpisodeError: an item that is not an object.
    """
    from mcpgym.evaluation.formats.common import EpisodeError

    out: list[dict[str, Any]] = []
    tools: list[dict[str, Any]] = []
    warnings: list[str] = []
    turn: dict[str, Any] | None = None  # the assistant message the next calls join
    for i, it in enumerate(items, start=1):
        if not isinstance(it, dict):
            raise EpisodeError(f"item {i} is not an object (got {type(it).__name__})")
        kind = it.get("type") if isinstance(it.get("type"), str) else None
        role = it.get("role")
        if kind in (None, "message") and role in ("user", "system", "developer"):
            out.append({"role": role, "content": _text(it.get("content"))})
            turn = None
        elif kind in (None, "message") and role == "assistant":
            turn = {"role": "assistant", "content": _text(it.get("content")), "tool_calls": []}
            out.append(turn)
        elif kind in CALL_TYPES:
            cid = it.get("call_id") or it.get("id")
            args = it.get("arguments", it.get("input"))
            call = {"id": cid, "type": "function", "function": {"name": it.get("name"), "arguments": args}}
            if turn is None:
                turn = {"role": "assistant", "content": "", "tool_calls": []}
                out.append(turn)
            turn["tool_calls"].append(call)
            if kind == "mcp_call":  # the hosted call carries its own answer
                err = it.get("error")
                failed = err not in (None, "", {}, [])
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": cid,
                        "content": _output(err if failed else it.get("output")),
                        "error": failed,
                    }
                )
                turn = None
        elif kind in OUTPUT_TYPES:
            out.append({"role": "tool", "tool_call_id": it.get("call_id"), "content": _output(it.get("output"))})
            turn = None
        elif kind == "mcp_list_tools":
            for t in it.get("tools") or []:
                if isinstance(t, dict) and isinstance(t.get("name"), str):
                    tools.append(
                        {
                            "name": t["name"],
                            "description": t.get("description") or "",
                            "annotations": t.get("annotations"),
                        }
                    )
        elif kind not in SKIPPED_TYPES:
            warnings.append(f"item {i}: item type {kind!r} is no message or call; skipped")
    for m in out:
        if m.get("role") == "assistant" and not m.get("tool_calls"):
            m.pop("tool_calls", None)
    return Chat(messages=out, tools=tools, warnings=warnings)


def split(value: Any, base: str, line: int | None) -> list[Found] | None:
    """The episodes of one record (module docstring, "Containers"); None when it holds no
    Responses items."""
    if isinstance(value, dict) and isinstance(value.get("input"), list) and isinstance(value.get("output"), list):
        items = [*value["input"], *value["output"]]
        return [Found(label=base, line=line, items=items, record=value)] if is_item_list(items) else None
    return split_lists(value, base, line, is_item_list, ("output", "items", "messages", "input"))


def load(path: str | Path) -> LoadResult:
    """Read a JSON or JSONL file of Responses item lists (module docstring)."""
    return load_message_lists(
        path,
        FORMAT,
        split,
        lambda ep: items_to_chat(ep.items),
        "a Responses-API item list (function_call / function_call_output / mcp_call items)",
    )


__all__ = [
    "CALL_TYPES",
    "FORMAT",
    "ITEM_TYPES",
    "OUTPUT_TYPES",
    "SKIPPED_TYPES",
    "is_item",
    "is_item_list",
    "items_to_chat",
    "load",
    "split",
]
