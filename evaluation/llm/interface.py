"""The agent interface the LLM agents implement: ``mcpgym.evaluation.agents.base``'s types.

``ToolInfo``, ``CallResult``, ``AgentResult``, ``CallLimitReached`` and ``recorder_of`` are re-exported from
``mcpgym.evaluation.agents.base`` (which imports nothing of ``mcpgym.evaluation.llm``, so there is no
cycle when ``mcpgym.evaluation.agents`` registers the LLM agents).

The LLM agents only read attributes of what they are given (``tool.name``,
``tool.description``, ``tool.input_schema``; ``result.is_error``, ``result.payload``), so the
runner's own classes work unchanged.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from mcpgym.evaluation.agents.base import AgentResult, CallLimitReached, CallResult, ToolInfo, recorder_of

CallFn = Callable[[str, dict[str, Any]], Awaitable[Any]]
"""``await call(name, arguments)`` -> a :class:`CallResult`-shaped object. It may raise
:class:`CallLimitReached` (the runner's call budget), which ends the episode with status ``limit``.
A runner's call function may also have a ``record(step)`` method (see :func:`recorder_of`)."""


class TaskLike(Protocol):
    """Anything with an ``instruction`` (an ``mcpgym.evaluation.tasks.Task``)."""

    instruction: str


def make_result(**fields: Any) -> AgentResult:
    """An :class:`AgentResult` with ``fields`` (``final_message`` defaults to "").

    Raises:
        pydantic.ValidationError: for invalid fields.
    """
    fields.setdefault("final_message", "")
    return AgentResult(**fields)


def instruction_of(task: Any) -> str:
    """The instruction text of ``task`` (an object with ``.instruction``, or a string)."""
    if isinstance(task, str):
        return task
    text = getattr(task, "instruction", None)
    if not isinstance(text, str):
        raise TypeError(f"task must be a string or have a str 'instruction', got {type(task).__name__}")
    return text


__all__ = [
    "AgentResult",
    "CallFn",
    "CallLimitReached",
    "CallResult",
    "TaskLike",
    "ToolInfo",
    "instruction_of",
    "make_result",
    "recorder_of",
]
