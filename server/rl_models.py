"""The wire contract of the control API's routes for RL trainers (:mod:`mcpgym.server.rl_routes`):
one pydantic model per request and answer body, shared by the server and by trainers' clients in
other processes and virtual environments (the verifiers environment,
:mod:`mcpgym.integrations.verifiers_env`, runs beside ``mcp==2.0.0``: this module, and
:mod:`mcpgym.server.control_models` which it extends, import pydantic and no MCP SDK). The JSON
Schemas are ``docs/schemas/control-task*.schema.json`` and ``control-reward*.schema.json``.

- ``GET /control/tasks?suite=S&task=ID...``: :class:`TaskList`.
- ``POST /control/task-episodes``: :class:`TaskEpisodeRequest` -> 201 :class:`TaskEpisodeCreated`.
- ``POST /control/episodes/{id}/reward``: :class:`RewardRequest` -> :class:`EpisodeReward`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from mcpgym.server.control_models import MAX_SEED, EpisodeCreated

MAX_FINAL_MESSAGE = 200_000
"""Longest final message a reward request may carry, in characters."""
MAX_TASKS_LISTED = 10_000
"""Most tasks one ``GET /control/tasks`` answers."""


class TaskEpisodeRequest(BaseModel):
    """Body of ``POST /control/task-episodes``.

    Attributes:
        task: a task id (any suite). trial: 0-based trial; fixes the fault seed unless
            ``fault_seed`` is given. faults: a built-in fault profile name or an inline profile
            (the task's own ``faults`` wins, as in ``mcpgym run``; None: the server's default,
            ``serve --faults``, as for ``POST /control/episodes``).
        fault_seed: the fault seed itself (0 .. 2**63-1).
        tools: the tool exposure of ``mcpgym run --tools`` (``all``, ``task``, ``task+N``,
            ``retrieval``; None: ``all``), distractors drawn from the task's world seed as the
            runner draws them.
    """

    model_config = ConfigDict(extra="forbid")

    task: str = Field(min_length=1, max_length=200)
    trial: int = Field(0, ge=0, le=MAX_SEED, strict=True)
    faults: str | dict[str, Any] | None = None
    fault_seed: int | None = Field(None, ge=0, le=MAX_SEED, strict=True)
    tools: str | None = Field(None, min_length=1, max_length=100)


class TaskEpisodeCreated(EpisodeCreated):
    """Answer of ``POST /control/task-episodes`` (201): the episode (as ``POST /control/episodes``
    answers) and the task it plays.

    Attributes:
        task: the task id. trial: the trial. instruction: the task's instruction to the agent.
    """

    task: str
    trial: int = Field(ge=0)
    instruction: str


class RewardRequest(BaseModel):
    """Body of ``POST /control/episodes/{id}/reward``.

    Attributes:
        final_message: the agent's last message to the user (the judge's checks and the
            false-success term read it). reward: the reward profile: ``outcome`` (None),
            ``shaped``, or a mapping of ``RewardProfile`` fields (a server reads no files a
            request names). task, trial: needed only for an episode not made by
            ``/control/task-episodes`` (then its seed and apps must be the task's).
        steps: also answer the episode's tool calls (:class:`RewardStep`, in order).
        delete: delete the episode once rewarded (the ``DELETE`` a trainer would send next;
            the episode's MCP session is ended as a ``DELETE`` ends it). A refused request
            (409 or 422 by the task, judge or profile) keeps the episode either way.
    """

    model_config = ConfigDict(extra="forbid")

    final_message: str = Field("", max_length=MAX_FINAL_MESSAGE)
    reward: str | dict[str, Any] | None = None
    task: str | None = Field(None, min_length=1, max_length=200)
    trial: int | None = Field(None, ge=0, le=MAX_SEED, strict=True)
    steps: bool = Field(False, strict=True)
    delete: bool = Field(False, strict=True)


class RewardStep(BaseModel):
    """One tool call of a rewarded episode, as its trajectory records it.

    Attributes:
        step: 1-based position in the server's call log (None: a call refused before it was
            logged). tool: the tool called. arguments: as sent. is_error: the call answered an
            error. error_code: its code (an ``ErrorCode`` value, or None).
    """

    model_config = ConfigDict(extra="forbid")

    step: int | None = Field(None, ge=1)
    tool: str
    arguments: Any
    is_error: bool
    error_code: str | None = None


class EpisodeReward(BaseModel):
    """Answer of ``POST /control/episodes/{id}/reward``.

    Attributes:
        episode_id: the episode. task, trial: what it played. total: the reward.
        components: ``{term: signed contribution}`` plus ``process`` (``RewardBreakdown.components()``).
        breakdown: the whole ``RewardBreakdown`` as JSON (terms, per-step process rewards, profile).
        success: the judge's verdict. scores: the episode's whole ``EpisodeScores`` as JSON
        (success, recall, verification_rate, recoveries...), as ``mcpgym run`` records them.
        calls: tool calls the episode's log holds. steps: its tool calls when the request asked
        for them (``steps: true``), else None. deleted: the episode was deleted (``delete: true``).
    """

    model_config = ConfigDict(extra="forbid")

    episode_id: str
    task: str
    trial: int = Field(ge=0)
    total: float
    components: dict[str, float]
    breakdown: dict[str, Any]
    success: bool | None
    scores: dict[str, Any] = Field(default_factory=dict)
    calls: int = Field(0, ge=0)
    steps: list[RewardStep] | None = None
    deleted: bool = False


class TaskInfo(BaseModel):
    """One task a trainer can make episodes of (an element of :class:`TaskList`).

    Attributes:
        task: the task id. instruction: what the user asks (the model's first user message).
        apps: the apps its episodes serve. world_seed: the task's world seed. level: 1-3 or None.
    """

    model_config = ConfigDict(extra="forbid")

    task: str
    instruction: str
    apps: list[str]
    world_seed: int
    level: int | None = None


class TaskList(BaseModel):
    """Answer of ``GET /control/tasks``.

    Attributes:
        tasks: the selected tasks, in the suite's order (or the order the ``task`` parameters
            name them). system_prompt: the system prompt mcpgym's LLM agents give the model
            (``mcpgym run --agent openai:...``), so a trainer's model is shown what a run shows.
    """

    model_config = ConfigDict(extra="forbid")

    tasks: list[TaskInfo]
    system_prompt: str
