"""The control API's two routes for RL trainers across a process boundary: an episode made from
a task, and the reward of a finished episode (docs/design.md §5, docs/rl.md "NeMo Gym").

- ``POST /control/task-episodes``: :class:`TaskEpisodeRequest` -> 201 :class:`TaskEpisodeCreated`:
  the episode of a task's world seed and apps, its fault seed ``fault_seed_for(task, trial)``
  (as ``mcpgym run`` and ``GymEpisode.create`` derive it), its MCP URL and the task's instruction.
- ``POST /control/episodes/{id}/reward``: :class:`RewardRequest` -> :class:`EpisodeReward`:
  the episode ended with the agent's final message, judged and scored as ``mcpgym run`` does,
  and rewarded by the one reward function (``mcpgym.evaluation.scoring.reward.episode_reward``)
  under a named profile. The episode stays live (``DELETE`` it when done).

The server layer knows no tasks and no judge: what these routes need of them comes through an
:class:`RLHooks` (``mcpgym serve`` passes :mod:`mcpgym.evaluation.run.served_rl`'s). A server
built without hooks answers both routes 501. Refusals are :class:`ControlError` bodies: 404 no
such episode, 409 the episode is not that task's (or its outcome is unknown), 422 a bad body,
an unknown task or a bad reward profile, 429 past the episode cap.
"""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from mcpgym.server.control_models import MAX_SEED, EpisodeCreated
from mcpgym.server.episode import Episode

MAX_FINAL_MESSAGE = 200_000
"""Longest final message a reward request may carry, in characters."""


class TaskEpisodeRequest(BaseModel):
    """Body of ``POST /control/task-episodes``.

    Attributes:
        task: a task id (any suite). trial: 0-based trial; fixes the fault seed unless
            ``fault_seed`` is given. faults: a built-in fault profile name or an inline profile
            (the task's own ``faults`` wins, as in ``mcpgym run``; None: the server's default,
            ``serve --faults``, as for ``POST /control/episodes``).
        fault_seed: the fault seed itself (0 .. 2**63-1).
    """

    model_config = ConfigDict(extra="forbid")

    task: str = Field(min_length=1, max_length=200)
    trial: int = Field(0, ge=0, le=MAX_SEED, strict=True)
    faults: str | dict[str, Any] | None = None
    fault_seed: int | None = Field(None, ge=0, le=MAX_SEED, strict=True)


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
    """

    model_config = ConfigDict(extra="forbid")

    final_message: str = Field("", max_length=MAX_FINAL_MESSAGE)
    reward: str | dict[str, Any] | None = None
    task: str | None = Field(None, min_length=1, max_length=200)
    trial: int | None = Field(None, ge=0, le=MAX_SEED, strict=True)


class EpisodeReward(BaseModel):
    """Answer of ``POST /control/episodes/{id}/reward``.

    Attributes:
        episode_id: the episode. task, trial: what it played. total: the reward.
        components: ``{term: signed contribution}`` plus ``process`` (``RewardBreakdown.components()``).
        breakdown: the whole ``RewardBreakdown`` as JSON (terms, per-step process rewards, profile).
        success: the judge's verdict.
    """

    model_config = ConfigDict(extra="forbid")

    episode_id: str
    task: str
    trial: int = Field(ge=0)
    total: float
    components: dict[str, float]
    breakdown: dict[str, Any]
    success: bool | None


class RLRefused(Exception):
    """A hook refuses a request: ``status`` (404, 409, 422) and the one-line reason."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class RLHooks(Protocol):
    """What the two routes need from above the server layer (tasks, judge, reward)."""

    def episode_body(self, request: TaskEpisodeRequest) -> tuple[dict[str, Any], str]:
        """The ``POST /control/episodes`` body of ``request``'s episode and the task's
        instruction. Raises :class:`RLRefused` (422: unknown task, bad profile)."""
        ...

    def reward(self, episode: Episode, task: str, trial: int, request: RewardRequest) -> EpisodeReward:
        """The reward of ``episode`` playing ``task``/``trial``, ended with ``request``'s final
        message. Runs in a worker thread. Raises :class:`RLRefused`."""
        ...


def task_of(episode: Episode, request: RewardRequest) -> tuple[str, int]:
    """The task and trial of a reward request: the episode's own (:attr:`Episode.plays`), which
    a request may repeat but not contradict; the request's for an episode made on ``/control/episodes``.

    Raises:
        RLRefused: 409 when the request names another task or trial; 422 when neither names one.
    """
    known = episode.plays
    if known is None:
        if request.task is None:
            raise RLRefused(
                422, "this episode was not made from a task: give 'task' (and 'trial') in the reward request"
            )
        return request.task, request.trial or 0
    if (request.task is not None and request.task != known[0]) or (
        request.trial is not None and request.trial != known[1]
    ):
        raise RLRefused(409, f"this episode plays task {known[0]!r} trial {known[1]}, not the one requested"[:300])
    return known
