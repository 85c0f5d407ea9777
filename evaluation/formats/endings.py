"""Calls by which the agent ends its episode itself: hand-offs and end calls.

Status from the transcript (docs/design.md §6, "Outside trajectories"): an episode whose last
call is a hand-off (``transfer_to_human_agents``) or an end call (ToolBench's ``Finish``) was
ended by the agent, not cut by the harness. Tool kinds: :class:`mcpgym.kernel.spec.ToolKind`.
"""

from __future__ import annotations

from typing import Any

from mcpgym.evaluation.scoring.tool_catalog import classify_tool
from mcpgym.kernel.spec import ToolKind

ANSWER_ARGS: tuple[str, ...] = ("final_answer", "answer", "response", "message", "result", "summary", "text")
"""Arguments of an ``end`` call (ToolBench's ``Finish``) that hold the agent's final answer."""
GIVE_UP_RETURN_TYPES: frozenset[str] = frozenset({"give_up_and_restart", "give_up"})
"""``return_type`` values of an ``end`` call by which the agent gives up (ToolBench)."""
GIVE_UP_MESSAGE = "I give up and restart."
"""The final message of an ``end`` call that gives up (the agent's choice, in words the refusal
patterns read as giving up)."""


def ending_kind(tool: str) -> ToolKind | None:
    """``handoff`` or ``end`` when a call of ``tool`` ends the episode by the agent's own
    choice (:func:`mcpgym.evaluation.scoring.tool_catalog.classify_tool` on its name), else None."""
    kind = classify_tool(tool).kind
    return kind if kind in (ToolKind.HANDOFF, ToolKind.END) else None


def end_call_message(arguments: Any) -> str:
    """The final message an ``end`` call carries: :data:`GIVE_UP_MESSAGE` for a give-up
    ``return_type``, else the first string among :data:`ANSWER_ARGS`, else ``""``."""
    if not isinstance(arguments, dict):
        return arguments if isinstance(arguments, str) else ""
    if str(arguments.get("return_type", "")).strip().lower() in GIVE_UP_RETURN_TYPES:
        return GIVE_UP_MESSAGE
    for key in ANSWER_ARGS:
        if isinstance(arguments.get(key), str) and arguments[key].strip():
            return str(arguments[key])
    return ""


__all__ = ["ANSWER_ARGS", "GIVE_UP_MESSAGE", "GIVE_UP_RETURN_TYPES", "end_call_message", "ending_kind"]
