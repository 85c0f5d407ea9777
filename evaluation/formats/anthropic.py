"""Format ``anthropic``: Messages-API conversations with ``tool_use`` / ``tool_result`` blocks.

Messages: ``assistant`` messages whose content holds ``{"type": "tool_use", "id", "name",
"input"}`` blocks, and ``user`` messages holding ``{"type": "tool_result", "tool_use_id",
"content", "is_error"}`` blocks (content: a string or a list of text blocks). Containers:
see :mod:`mcpgym.evaluation.formats.conversations`.

Conversion rules:

* One step per ``tool_use`` block, in order, matched to its ``tool_result`` by id (blocks
  sharing an id pair with their results in order); a call that never got a result is left
  out (a warning names it). The ``tool_use`` blocks of one assistant message ran in
  parallel: they share a ``batch``, so a read among them verifies none of their writes.
* The MCP connector's blocks count the same: ``mcp_tool_use`` (``id``, ``name``,
  ``server_name``, ``input``) is a call and ``mcp_tool_result`` (``tool_use_id``,
  ``is_error``, ``content``) its result. Both sit in the assistant's own message, since the
  API ran the call; the text after the last ``mcp_tool_result`` of a message is what the
  model said after seeing it. (Before, these blocks were skipped without a word: a connector
  transcript scored as an episode without calls.)
* ``input`` is the arguments: an object, or a JSON string holding one (parsed, as in every
  format; ``""`` is ``{}``). Anything else is kept as is, and an error result then has
  code ``invalid_argument``.
* ``is_error: true`` makes the result an error. Without it, the shared content rules apply
  (:func:`mcpgym.evaluation.formats.layers.read_result`: a JSON ``{"error": ...}``
  object, ``"isError": true``, a ``{"status": "failed" | "error" | "internal error", ...}``
  envelope, or text starting with ``Error`` / ``ERROR`` / ``error:``), since many harnesses
  never set the flag. The error code is the payload's ``error.code`` when it is one of mcpgym's codes, else
  guessed from the text (:data:`mcpgym.evaluation.formats.common.ERROR_TEXT_PATTERNS`); injected
  faults found that way are marked inferred.
* The instruction is the first ``user`` message with text; the final message is the text of
  the last ``assistant`` message when it comes after the last tool result and makes no tool
  call, else empty: the conversation stopped in the middle, and the trajectory gets status
  ``limit`` (errors in its last K calls are not counted as given up).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from mcpgym.evaluation.formats.common import (
    EXTERNAL_AGENT,
    EpisodeError,
    LoadResult,
    id_key,
)
from mcpgym.evaluation.formats.conversations import answer_beside_notes, conversation_trajectory, load_conversations
from mcpgym.evaluation.formats.endings import ending_kind
from mcpgym.evaluation.formats.layers import read_result
from mcpgym.evaluation.formats.results import (
    make_step,
    parse_arguments,
)
from mcpgym.evaluation.records.trajectory import ToolCallStep, Trajectory
from mcpgym.kernel.spec import ToolKind

FORMAT = "anthropic"


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return content
    return []


def _text(blocks: list[Any]) -> str:
    return "\n".join(
        b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    )


MCP_USE, MCP_RESULT = "mcp_tool_use", "mcp_tool_result"
"""The block types of the Messages API's MCP connector (calls the API made to an MCP server)."""


def _is(block: Any, *types: str) -> bool:
    return isinstance(block, dict) and block.get("type") in types


def _answer(block: dict[str, Any], by_id: dict[Any, list[dict[str, Any]]], i: int, warnings: list[str]) -> bool:
    """Give ``block`` (a result) to the oldest open call of its ``tool_use_id``; False (and a
    warning) when none is open."""
    answered = next((c for c in by_id.get(id_key(block.get("tool_use_id")), []) if c["result"] is None), None)
    if answered is None:
        warnings.append(
            f"message {i}: a {block['type']} for tool_use_id {block.get('tool_use_id')!r} with no open call; ignored"
        )
        return False
    answered["result"] = block
    return True


def trajectory_from_messages(
    messages: list[Any],
    *,
    episode_id: str,
    agent: str = EXTERNAL_AGENT,
    task_id: str | None = None,
    trial: int = 0,
    metadata: dict[str, Any] | None = None,
) -> tuple[Trajectory, list[str]]:
    """Convert one Messages-API conversation into a :class:`Trajectory` (no ledger).

    Args:
        messages: the message dicts, in order.
        episode_id, agent, task_id, trial, metadata: copied into the trajectory.

    Returns:
        ``(trajectory, warnings)``; warnings name what was left out.

    Raises:
        EpisodeError: a message that is not an object (a ``tool_use`` / ``mcp_tool_use``
            block without a name is counted in ``invalid_calls``, with a warning naming its message).
    """
    calls: list[dict[str, Any]] = []
    by_id: dict[Any, list[dict[str, Any]]] = {}  # id -> its calls, in order (an id may be repeated)
    warnings: list[str] = []
    malformed = 0  # call blocks without a name (Trajectory.invalid_calls)
    instruction: str | None = None
    last_result_at = -1
    last_assistant: tuple[int, str, bool] | None = None  # (message, text, made tool calls)
    user_last: str | None = None  # the last message's text when a user wrote it (no tool result)
    note_answer: str | None = None  # an answer given beside note calls only (answer_beside_notes)
    for i, m in enumerate(messages, start=1):
        if not isinstance(m, dict):
            raise EpisodeError(f"message {i} is not an object (got {type(m).__name__})")
        role = m.get("role")
        blocks = _blocks(m.get("content"))
        if role != "system":
            spoke = role == "user" and not any(_is(b, "tool_result", MCP_RESULT) for b in blocks)
            user_last = _text(blocks) if spoke else None
            if spoke:
                note_answer = None
        if role == "assistant":
            # MCP connector results sit in this message: what follows the last one is the
            # model's answer to them, and a connector call without a result after it is pending
            last_mcp = max((j for j, b in enumerate(blocks) if _is(b, MCP_RESULT)), default=-1)
            uses = [b for b in blocks if _is(b, "tool_use", MCP_USE)]
            text, note_answer = answer_beside_notes(
                _text(blocks[last_mcp + 1 :]),
                [b["name"] if isinstance(b.get("name"), str) else None for b in uses],
                note_answer,
            )
            last_assistant = (
                i,
                text,
                any(_is(b, "tool_use") for b in blocks) or any(_is(b, MCP_USE) for b in blocks[last_mcp + 1 :]),
            )
            if last_mcp >= 0:
                last_result_at = max(last_result_at, i - 1)
            for b in blocks:
                if _is(b, "tool_use", MCP_USE):
                    if not isinstance(b.get("name"), str) or not b["name"]:
                        malformed += 1  # kept as a malformed call: counted, never silently dropped
                        warnings.append(f"message {i}: a {b['type']} block without a name; counted as a malformed call")
                        continue
                    call = {
                        "id": id_key(b.get("id")),
                        "name": b["name"],
                        "input": b.get("input", {}),
                        "where": i,
                        "result": None,
                        "text": _text(blocks),
                        "client": _is(b, "tool_use"),  # the client runs these: in parallel
                    }
                    calls.append(call)
                    if call["id"] is not None:
                        by_id.setdefault(call["id"], []).append(call)
                elif _is(b, MCP_RESULT):
                    _answer(b, by_id, i, warnings)
                elif isinstance(b, dict) and str(b.get("type", "")).endswith("tool_use"):
                    # e.g. server_tool_use: a tool the API itself ran (web search), not an MCP call
                    warnings.append(f"message {i}: a {b['type']} block is not a call of the episode's tools; ignored")
        elif role == "user":
            text = _text(blocks)
            if instruction is None and text:
                instruction = text
            for b in blocks:
                if _is(b, "tool_result", MCP_RESULT) and _answer(b, by_id, i, warnings):
                    last_result_at = i
        elif role != "system":
            warnings.append(f"message {i}: unknown role {role!r}; ignored")
    steps: list[ToolCallStep] = []
    per_message = Counter(c["where"] for c in calls if c["client"])
    for c in calls:
        if ending_kind(c["name"]) == ToolKind.END:
            continue  # the agent's answer, no call of the world's tools
        res = c["result"]
        if res is None:
            warnings.append(f"message {c['where']}: the call of {c['name']} (id {c['id']!r}) has no result; left out")
            continue
        r = read_result(res.get("content"), flag=res.get("is_error") is True, tool=c["name"])
        args, ok = parse_arguments(
            c["input"], warnings=warnings, where=f"message {c['where']}: the call of {c['name']}"
        )
        code = "invalid_argument" if r.is_error and not ok else r.code
        step = make_step(len(steps) + 1, c["name"], args, is_error=r.is_error, code=code, result=r.result, rule=r.rule)
        if c["client"] and per_message[c["where"]] > 1:
            step.batch = c["where"]  # parallel tool_use blocks of one assistant message
        steps.append(step)
    traj = conversation_trajectory(
        steps,
        last_assistant,
        last_result_at,
        episode_id=episode_id,
        task_id=task_id,
        agent=agent,
        trial=trial,
        instruction=instruction,
        metadata=metadata,
        last_call=(calls[-1]["name"], parse_arguments(calls[-1]["input"])[0], calls[-1]["text"]) if calls else None,
        user_last=user_last,
    )
    traj.invalid_calls += malformed
    return traj, warnings


def load(path: str | Path) -> LoadResult:
    """Read a JSON or JSONL file of Messages-API conversations (module docstring)."""
    return load_conversations(path, FORMAT, trajectory_from_messages)


__all__ = ["FORMAT", "load", "trajectory_from_messages"]
