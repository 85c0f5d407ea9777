"""The agent interface the LLM agents implement: ``mcpgym.evaluation.agents.base``'s types.

``ToolInfo``, ``CallResult``, ``AgentResult`` and ``CallLimitReached`` are re-exported from
``mcpgym.evaluation.agents.base`` (which imports nothing of ``mcpgym.evaluation.llm``, so there is no cycle
when ``mcpgym.evaluation.agents`` registers the LLM agents); structurally identical local versions
stand in when that module cannot be imported.

The LLM agents only read attributes of what they are given (``tool.name``,
``tool.description``, ``tool.input_schema``; ``result.is_error``, ``result.payload``), so the
runner's own classes work unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from mcpgym.evaluation.trajectory import TokenUsage

try:  # the runner's own types, when evaluation.agents is importable (it imports nothing of ours)
    from mcpgym.evaluation.agents.base import AgentResult, CallLimitReached, CallResult, ToolInfo

    SHARED_TYPES = True
except ImportError:  # pragma: no cover - evaluation.agents absent: structurally identical local types
    SHARED_TYPES = False

    @dataclass
    class ToolInfo:
        """One tool as the agent sees it.

        Attributes:
            name: the MCP tool name.
            description: what the model reads about the tool.
            input_schema: the JSON Schema of its arguments (an object schema).
            kind: ``read`` | ``write`` | ``auth`` when known (``_meta["mcpgym/kind"]``), else None.
        """

        name: str
        description: str
        input_schema: dict
        kind: str | None = None

    @dataclass
    class CallResult:
        """The outcome of one tool call.

        Attributes:
            is_error: whether the tool answered with an error.
            payload: the JSON payload: the structured result, or ``{"error": {code, message,
                retryable, retry_after, field}}`` for an error.
        """

        is_error: bool
        payload: dict

    class AgentResult(BaseModel):
        """What an agent returns for one episode.

        Attributes:
            final_message: the agent's last message to the user ("" when it never answered).
            status: ``completed`` (the model answered without a tool call), ``errored`` (the
                provider or the agent failed; see ``error``), ``limit`` (a turn, tool-call or token
                limit stopped it; see ``stop_reason``).
            stop_reason: why the episode stopped (the provider's finish reason when completed).
            tokens: provider-reported token usage summed over the episode.
            invalid_calls: tool calls refused before reaching the server (unparsable arguments,
                unknown tool names).
            error: the failure, when ``status == "errored"``.
        """

        model_config = ConfigDict(extra="forbid")

        final_message: str = ""
        status: Literal["completed", "errored", "limit"] = "completed"
        stop_reason: str | None = None
        tokens: TokenUsage | None = None
        invalid_calls: int = Field(0, ge=0)
        error: str | None = None

    class CallLimitReached(Exception):
        """Raised by a runner's ``call`` when the episode's call budget is spent."""


CallFn = Callable[[str, dict], Awaitable[Any]]
"""``await call(name, arguments)`` -> a :class:`CallResult`-shaped object. It may raise
:class:`CallLimitReached` (the runner's call budget), which ends the episode with status ``limit``."""


class TaskLike(Protocol):
    """Anything with an ``instruction`` (an ``mcpgym.evaluation.tasks.Task``)."""

    instruction: str


def make_result(**fields: Any) -> Any:
    """An :class:`AgentResult` (the runner's, when shared) with ``fields``.

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


__all__ = ["SHARED_TYPES", "AgentResult", "CallFn", "CallLimitReached", "CallResult", "TaskLike", "ToolInfo",
           "instruction_of", "make_result"]
