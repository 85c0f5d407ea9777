"""The agent interface (docs/design.md §6) shared by scripted and LLM agents.

An agent gets the task, the episode's tools (:class:`ToolInfo`), an async ``call`` function
and an :class:`AgentContext` (trial, seeds, the user channel, the deadline), makes tool calls
through ``call``, and returns an :class:`AgentResult` with its final message. Runners call
every agent through :func:`run_agent`, which also keeps agents written for the older
interface (``run(task, tools, call, *, trial=None, user=None)``) working for one release,
with a :class:`AgentInterfaceDeprecation` warning. The runner owns the episode (world, fault plan, call log, ledger); the agent sees
only what ``call`` returns: :class:`CallResult` (``payload`` is the structured content, or
``{"error": {code, message, retryable, retry_after, field, details?}}`` when ``is_error``).
"""

from __future__ import annotations

import inspect
import warnings
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from mcpgym.evaluation.records.status import EpisodeStatus
from mcpgym.evaluation.records.trajectory import TokenUsage, ToolCallStep
from mcpgym.kernel.exceptions import MCPGymError

if TYPE_CHECKING:
    from mcpgym.evaluation.tasks.model import Task
    from mcpgym.evaluation.users.channel import UserChannel


@dataclass
class ToolInfo:
    """A tool as an agent sees it.

    Attributes:
        name: tool name.
        description: what the tool does (the docstring's first paragraph).
        input_schema: JSON schema of the arguments.
        kind: ``read`` | ``write`` | ``auth`` from the MCP tool's ``_meta["mcpgym/kind"]``, or
            derived from its annotations (read-only hint -> ``read``), or None when unknown.
    """

    name: str
    description: str
    input_schema: dict[str, Any] = field(default_factory=dict)
    kind: str | None = None

    @property
    def params(self) -> list[str]:
        """Argument names of the input schema."""
        props = self.input_schema.get("properties") if isinstance(self.input_schema, dict) else None
        return list(props) if isinstance(props, dict) else []

    @property
    def required(self) -> list[str]:
        """Required argument names of the input schema."""
        req = self.input_schema.get("required") if isinstance(self.input_schema, dict) else None
        return [str(r) for r in req] if isinstance(req, list) else []

    @classmethod
    def from_spec(cls, spec: Any) -> ToolInfo:
        """The :class:`ToolInfo` of a :class:`mcpgym.kernel.spec.ToolSpec` (in-process
        episodes): built once per spec and shared by every episode listing it, its schema the
        spec's own (:meth:`~mcpgym.kernel.spec.ToolSpec.shared_input_schema`), so read-only."""
        hit = _SPEC_INFOS.get(id(spec))
        if hit is not None and hit[0] is spec and type(hit[1]) is cls:
            return hit[1]
        info = cls(
            name=spec.name, description=spec.description, input_schema=spec.shared_input_schema(), kind=spec.kind
        )
        _SPEC_INFOS[id(spec)] = (spec, info)
        return info

    @classmethod
    def from_mcp(cls, tool: Any) -> ToolInfo:
        """Build from an MCP ``Tool`` (``mcp_types.Tool`` or its dict): ``kind`` from
        ``_meta["mcpgym/kind"]``, else ``read`` when ``annotations.readOnlyHint`` is true,
        else ``write`` when it is false, else None."""
        data = tool.model_dump(by_alias=True) if isinstance(tool, BaseModel) else dict(tool)
        meta = data.get("_meta") or data.get("meta") or {}
        kind = meta.get("mcpgym/kind") if isinstance(meta, dict) else None
        if kind is None:
            ann = data.get("annotations") or {}
            hint = ann.get("readOnlyHint", ann.get("read_only_hint")) if isinstance(ann, dict) else None
            kind = "read" if hint is True else "write" if hint is False else None
        schema = data.get("inputSchema") or data.get("input_schema") or {}
        return cls(
            name=str(data.get("name", "")),
            description=str(data.get("description") or ""),
            input_schema=schema if isinstance(schema, dict) else {},
            kind=kind,
        )


_SPEC_INFOS: dict[int, tuple[Any, ToolInfo]] = {}
"""Tool spec id -> (spec, its shared ToolInfo); the spec is kept so its id is never reused."""


@dataclass
class CallResult:
    """What one tool call returned.

    Attributes:
        is_error: true for a tool error.
        payload: the structured content; ``{"error": {...}}`` on error.
    """

    is_error: bool
    payload: dict[str, Any]

    @property
    def error(self) -> dict[str, Any]:
        """The error payload (``{}`` when the call succeeded)."""
        err = self.payload.get("error") if self.is_error and isinstance(self.payload, dict) else None
        return err if isinstance(err, dict) else {}

    @property
    def code(self) -> str | None:
        """The error code, or None for a success."""
        return self.error.get("code") if self.is_error else None


CallFn = Callable[[str, dict[str, Any]], Awaitable[CallResult]]
"""``await call(tool_name, arguments) -> CallResult``."""


def recorder_of(call: Any) -> Callable[[Any], None] | None:
    """The ``record`` method of a recording call function, else None.

    ``call.record(step)`` takes a :class:`~mcpgym.evaluation.records.trajectory.MessageStep` (a model
    reply) or a :class:`~mcpgym.evaluation.records.trajectory.ToolCallStep` with ``step=None`` (a call
    the agent refused before the server) and keeps it in the trajectory at its place among the
    calls the server logged (:class:`mcpgym.evaluation.run.episode_runner.EpisodeCaller`).
    """
    record = getattr(call, "record", None)
    return record if callable(record) else None


def record_refused_call(
    record: Callable[[Any], None] | None,
    tool: str,
    payload: dict[str, Any],
    *,
    arguments: dict[str, Any] | None = None,
    raw_arguments: str | None = None,
    call_id: str | None = None,
) -> bool:
    """Keep a tool call the agent refused before it reached the server (a tool the episode does
    not offer, arguments that are no JSON object): the one way every agent records one (the LLM
    agents, the human player).

    With a runner's ``record`` (:func:`recorder_of`), the call becomes an invalid
    :class:`~mcpgym.evaluation.records.trajectory.ToolCallStep` without a call-log number
    (``step=None``, ``invalid=True``, the error ``payload`` as its result), counted in
    ``invalid_calls`` by the scorer (docs/design.md §7, "Calls").

    Args:
        record: the call function's ``record`` method, or None (the call function does not record).
        tool: the tool name as the agent gave it (cut to a readable length by the caller).
        payload: the error the agent got, ``{"error": {code, message, ...}}``.
        arguments: the arguments when they were a JSON object (None: unusable, kept as ``{}``).
        raw_arguments: the argument text when it was unusable.
        call_id: the provider's id of the call, when there is one.

    Returns:
        True when recorded; False when there is no ``record``: the agent then counts the call in
        its :attr:`AgentResult.invalid_calls`, or it is lost.
    """
    if record is None:
        return False
    record(
        ToolCallStep(
            step=None,
            tool=tool,
            arguments=arguments if arguments is not None else {},
            raw_arguments=raw_arguments,
            call_id=call_id,
            is_error=True,
            error_code=payload["error"]["code"],
            result=payload,
            invalid=True,
        )
    )
    return True


class CallLimitReached(MCPGymError):
    """Raised by a runner's ``call`` function when the episode's call budget is spent; agents
    stop and report status ``limit``."""


class AgentResult(BaseModel):
    """How an agent finished an episode.

    Attributes:
        final_message: the agent's last message to the user.
        status: ``completed`` (it answered), ``errored`` (the agent failed), ``limit`` (a call,
            step or token limit stopped it).
        stop_reason: free text about why it stopped.
        tokens: token usage (LLM agents).
        invalid_calls: calls the agent produced that never reached a tool (malformed).
        error: the error text when ``status`` is ``errored``.
        provider: what the model's provider did that no step shows (LLM agents), kept in the
            trajectory's ``metadata["provider"]``: ``failed_request`` (the request that ended an
            errored episode: ``turn``, ``attempts``, ``status``, ``error``, ``latency``,
            ``retries``) and ``flags`` (``tool_calls_as_text``...; see
            :mod:`mcpgym.evaluation.llm.flags`).
    """

    final_message: str
    status: EpisodeStatus = EpisodeStatus.COMPLETED
    stop_reason: str | None = None
    tokens: TokenUsage | None = None
    invalid_calls: int = 0
    error: str | None = None
    provider: dict[str, Any] | None = None


@dataclass(frozen=True)
class AgentContext:
    """What the runner tells an agent about its episode, passed to :meth:`Agent.run` as ``context``.

    Attributes:
        trial: the 0-based trial index, or None when the caller does not say (the replay
            agent then counts its runs of a task).
        world_seed, fault_seed: the episode's seeds (None: not known to the caller).
        user: the episode's :class:`mcpgym.evaluation.users.UserChannel` (``await
            user.ask(question, about)``), or None: the user cannot be asked.
        deadline: the ``anyio.current_time()`` at which the runner stops the episode (an LLM
            agent ends a provider wait before it, as errored), or None: no deadline.
    """

    trial: int | None = None
    world_seed: int | None = None
    fault_seed: int | None = None
    user: UserChannel | None = None
    deadline: float | None = None


NO_CONTEXT = AgentContext()
"""The context of an episode whose caller says nothing (the default of :meth:`Agent.run`)."""


class Agent(ABC):
    """An agent: ``await agent.run(task, tools, call, context) -> AgentResult``.

    Attributes:
        name: the name trajectories and scores are grouped under.

    An agent object may run several episodes at once: keep per-episode state local to
    :meth:`run`.
    """

    name: str = "agent"

    @abstractmethod
    async def run(
        self, task: Task, tools: list[ToolInfo], call: CallFn, context: AgentContext = NO_CONTEXT
    ) -> AgentResult:
        """Work on ``task`` with ``tools`` through ``call`` and return the result.

        Args:
            task: the task (agents read ``task.instruction``; scripted agents follow
                ``task.oracle``).
            tools: the tools of the episode.
            call: the call function (see :data:`CallFn`); it may raise
                :class:`CallLimitReached`.
            context: the episode's :class:`AgentContext` (trial, seeds, user channel,
                deadline); runners pass it as the keyword ``context``.
        """


class AgentInterfaceDeprecation(DeprecationWarning):
    """An agent written for the interface before :class:`AgentContext`: its ``run`` takes no
    ``context`` (but ``trial=``, ``user=`` or ``deadline=`` keywords). It still runs, for one
    release; this warning is shown by default (a filter below), once per agent class."""


warnings.simplefilter("default", AgentInterfaceDeprecation)

LEGACY_KEYWORDS = ("trial", "user", "deadline")
"""The keywords the runners passed before :class:`AgentContext`, to a ``run`` that accepted them."""

_INTERFACES: dict[type, frozenset[str] | None] = {}


def legacy_keywords(agent: Any) -> frozenset[str] | None:
    """None when ``agent.run`` takes ``context`` (the interface of :class:`Agent`); for an agent
    written before it, the :data:`LEGACY_KEYWORDS` its ``run`` accepts (all of them with
    ``**kwargs``). Read once per agent class; the one place the interface is read from a
    signature, kept for one release."""
    kind = type(agent)
    if kind in _INTERFACES:
        return _INTERFACES[kind]
    try:
        params = inspect.signature(agent.run).parameters
    except (TypeError, ValueError):
        params = {}  # type: ignore[assignment]
    found: frozenset[str] | None
    if "context" in params:
        found = None
    else:
        any_keyword = any(p.kind is p.VAR_KEYWORD for p in params.values())
        found = frozenset(k for k in LEGACY_KEYWORDS if any_keyword or k in params)
    _INTERFACES[kind] = found
    return found


def takes_user(agent: Any) -> bool:
    """Whether ``agent`` gets the episode's user channel (its context, or a legacy ``user=``)."""
    legacy = legacy_keywords(agent)
    return legacy is None or "user" in legacy


async def run_agent(agent: Any, task: Any, tools: list[Any], call: Any, context: AgentContext) -> AgentResult:
    """``await agent.run(task, tools, call, context=context)``: how every runner calls an agent.

    An agent whose ``run`` takes no ``context`` (written before :class:`AgentContext`) is called
    the old way, with the context's ``trial``, ``user`` and ``deadline`` as the keywords its
    ``run`` accepts, and an :class:`AgentInterfaceDeprecation` warning (once per class): this
    path is removed in the next release.

    Raises:
        whatever ``agent.run`` raises.
    """
    legacy = legacy_keywords(agent)
    if legacy is None:
        result: AgentResult = await agent.run(task, tools, call, context=context)
        return result
    name = getattr(agent, "name", type(agent).__name__)
    warnings.warn(
        f"agent {name!r} ({type(agent).__qualname__}): run() without a `context` parameter is deprecated "
        "and stops working in the next mcpgym release; declare `context: AgentContext = NO_CONTEXT` and read "
        'context.trial, context.user and context.deadline (docs/tasks.md, "Agents")',
        AgentInterfaceDeprecation,
        stacklevel=2,
    )
    given = {"trial": context.trial, "user": context.user, "deadline": context.deadline}
    old: AgentResult = await agent.run(task, tools, call, **{k: v for k, v in given.items() if k in legacy})
    return old


__all__ = [
    "LEGACY_KEYWORDS",
    "NO_CONTEXT",
    "Agent",
    "AgentContext",
    "AgentInterfaceDeprecation",
    "AgentResult",
    "CallFn",
    "CallLimitReached",
    "CallResult",
    "ToolInfo",
    "legacy_keywords",
    "record_refused_call",
    "recorder_of",
    "run_agent",
    "takes_user",
]
