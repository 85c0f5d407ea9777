"""The rollout API's wire contract (``mcpgym serve --transport http --rollouts``): one pydantic
model per request and answer body, shared by the server (:mod:`mcpgym.integrations.rollout_api`)
and its clients in other processes and virtual environments (the verifiers environment,
:mod:`mcpgym.integrations.verifiers_env`, runs beside ``mcp==2.0.0`` and must not import the MCP
SDK mcpgym needs). This module imports pydantic and nothing else of mcpgym's.

Routes (each needs the control token, ``Authorization: Bearer <token>``):

- ``GET /rollouts/tasks?suite=S&task=ID&task=ID``: :class:`RolloutTasks`.
- ``POST /rollouts``: :class:`CreateRollout` -> 201 :class:`RolloutCreated` (an episode of the
  task, its world seed the task's, its fault seed ``fault_seed_for(task, trial)`` as
  ``mcpgym run`` derives it; the model plays it over ``mcp_url``).
- ``POST /rollouts/{episode_id}/reward``: :class:`FinishRollout` -> :class:`RolloutReward` (the
  episode ended, judged and rewarded as ``mcpgym run`` scores it; the episode is deleted).
- Refusals (4xx): ``{"error": str}`` (the control API's :class:`ControlError` shape).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

MAX_FINAL_MESSAGE = 64_000
"""Longest final message (characters) a :class:`FinishRollout` may carry."""
MAX_TRIAL = 1_000_000
"""Largest trial index a :class:`CreateRollout` may name."""


class RolloutTask(BaseModel):
    """One task a rollout can play.

    Attributes:
        task_id: the task's id. instruction: what the user asks (the model's first user
            message). apps: the apps its episodes serve. world_seed: the task's world seed.
        level: its level (1-3) or None.
    """

    task_id: str
    instruction: str
    apps: list[str]
    world_seed: int
    level: int | None = None


class RolloutTasks(BaseModel):
    """Answer of ``GET /rollouts/tasks``.

    Attributes:
        tasks: the selected tasks, in the suite's order. system_prompt: the system prompt
            mcpgym's LLM agents give the model (``mcpgym run --agent openai:...``), so a rollout
            shows the model what a run shows it.
    """

    tasks: list[RolloutTask]
    system_prompt: str


class CreateRollout(BaseModel):
    """Body of ``POST /rollouts``.

    Attributes:
        task_id: the task. trial: the rollout's index (0-based); the fault seed is
            ``fault_seed_for(task, trial)`` unless ``fault_seed`` is given. faults: the fault
            profile name (``none``, ``default``, ``harsh``; a task's own profile wins, as in
            ``mcpgym run``). fault_seed: a fixed fault seed instead of the trial's.
            tools: tool exposure, ``mcpgym run --tools``: ``all``, ``task``, ``task+N``, ``retrieval``.
    """

    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(min_length=1, max_length=500)
    trial: int = Field(0, ge=0, le=MAX_TRIAL, strict=True)
    faults: str = Field("default", max_length=100)
    fault_seed: int | None = Field(None, ge=0, le=2**63 - 1, strict=True)
    tools: str = Field("all", max_length=100)


class RolloutCreated(BaseModel):
    """Answer of ``POST /rollouts``: the rollout's episode.

    Attributes:
        episode_id: the episode (its id is the capability of ``mcp_url``). mcp_url: the
            episode's streamable-HTTP MCP endpoint. task_id, trial: as asked. world_seed,
            fault_seed: the seeds the episode was made with. faults: the fault profile's name.
    """

    episode_id: str
    mcp_url: str
    task_id: str
    trial: int
    world_seed: int
    fault_seed: int
    faults: str


class FinishRollout(BaseModel):
    """Body of ``POST /rollouts/{episode_id}/reward``.

    Attributes:
        final_message: the model's last message to the user (the judge's checks read it).
        reward: a reward profile: a built-in name (``outcome``, ``shaped``) or the fields of a
            ``RewardProfile``. agent: the agent name the trajectory records.
    """

    model_config = ConfigDict(extra="forbid")

    final_message: str = Field("", max_length=MAX_FINAL_MESSAGE)
    reward: str | dict[str, Any] = "outcome"
    agent: str = Field("verifiers", min_length=1, max_length=200)


class RolloutReward(BaseModel):
    """Answer of ``POST /rollouts/{episode_id}/reward``: the finished episode's reward.

    Attributes:
        episode_id: the episode. total: the reward (``episode_reward(trajectory, profile).total``).
        reward: the whole ``RewardBreakdown`` as JSON (profile, terms, process rewards).
        scores: the episode's ``EpisodeScores`` as JSON (success, recall, verification_rate...).
        calls: tool calls the episode's log holds. trajectory: the scored trajectory as
            ``mcpgym run`` writes it (one JSON line of ``trajectories.jsonl.zst``).
    """

    episode_id: str
    total: float
    reward: dict[str, Any]
    scores: dict[str, Any]
    calls: int = Field(ge=0)
    trajectory: dict[str, Any]


__all__ = [
    "MAX_FINAL_MESSAGE",
    "MAX_TRIAL",
    "CreateRollout",
    "FinishRollout",
    "RolloutCreated",
    "RolloutReward",
    "RolloutTask",
    "RolloutTasks",
]
