"""The control API's routes for RL trainers across a process boundary: the tasks, an episode
made from a task, and the reward of a finished episode (docs/design.md §5, docs/rl.md: the
verifiers and NeMo Gym doors use them). The wire models are :mod:`mcpgym.server.rl_models`.

- ``GET /control/tasks?suite=S&task=ID...``: :class:`TaskList`: the suite's tasks (default
  ``core``), or the named ones in that order, with their instructions and the system prompt.
- ``POST /control/task-episodes``: :class:`TaskEpisodeRequest` -> 201 :class:`TaskEpisodeCreated`:
  the episode of a task's world seed and apps, its fault seed ``fault_seed_for(task, trial)``
  (as ``mcpgym run`` and ``GymEpisode.create`` derive it), its MCP URL and the task's instruction.
- ``POST /control/episodes/{id}/reward``: :class:`RewardRequest` -> :class:`EpisodeReward`:
  the episode ended with the agent's final message, judged and scored as ``mcpgym run`` does,
  and rewarded by the one reward function (``mcpgym.evaluation.scoring.reward.episode_reward``)
  under a named profile. The episode stays live (``DELETE`` it when done) unless the request
  says ``"delete": true``: then it is deleted once rewarded, so a trainer's verify is one
  round trip (a refused request keeps it, for a corrected one or a ``DELETE``); ``steps`` adds its tool calls to the answer.
  The judge and reward of an episode of at most :data:`INLINE_REWARD_CALLS` tool calls run on
  the event loop (:func:`reward_inline`); a larger one's in a worker thread, so that a long
  judge does not hold up other episodes' MCP traffic.

The server layer knows no tasks and no judge: what these routes need of them comes through an
:class:`RLHooks` (``mcpgym serve`` passes :mod:`mcpgym.evaluation.run.served_rl`'s). A server
built without hooks answers these routes 501. Refusals are :class:`ControlError` bodies: 404 no
such episode, 409 the episode is not that task's (or its outcome is unknown), 422 a bad body,
an unknown task, suite or tool exposure, or a bad reward profile, 429 past the episode cap.
"""

from __future__ import annotations

from typing import Any, Protocol

from mcpgym.kernel.exceptions import MCPGymError
from mcpgym.server.episode import Episode
from mcpgym.server.rl_models import EpisodeReward, RewardRequest, TaskEpisodeRequest, TaskList

INLINE_REWARD_CALLS = 32
"""Most tool calls an episode may hold for its reward to be computed on the event loop.

A worker thread's hop (``anyio.to_thread.run_sync``) costs more than the reward of a small
episode: 0.5-0.8 ms a request on a loaded 2-vCPU machine, around a 0.3-0.6 ms judge and
reward of a one-app episode with a few calls (docs/performance.md, ``nemo_gym_seed_verify``).
The judge's and the process rewards' work grows with the call log, so past this size the
hop is the smaller cost and the loop stays free for other episodes' MCP calls meanwhile."""


def reward_inline(episode: Episode) -> bool:
    """True when ``episode``'s reward should run on the event loop: at most
    :data:`INLINE_REWARD_CALLS` tool calls in its log, and its lock free (a call or another
    reward in a worker thread holding it would block the loop until done)."""
    return episode.invoker.call_count <= INLINE_REWARD_CALLS and not episode.lock.locked()


class RLRefused(MCPGymError):
    """A hook refuses a request: ``status`` (404, 409, 422) and the one-line reason."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class RLHooks(Protocol):
    """What the routes need from above the server layer (tasks, judge, reward)."""

    def tasks(self, suite: str, ids: list[str]) -> TaskList:
        """The tasks of ``suite``, or those ``ids`` name (in that order) when any. Raises
        :class:`RLRefused` (422: unknown suite or task, more than ``MAX_TASKS_LISTED``)."""
        ...

    def episode_body(self, request: TaskEpisodeRequest) -> tuple[dict[str, Any], str]:
        """The ``POST /control/episodes`` body of ``request``'s episode and the task's
        instruction. Raises :class:`RLRefused` (422: unknown task, bad profile or exposure)."""
        ...

    def reward(self, episode: Episode, task: str, trial: int, request: RewardRequest) -> EpisodeReward:
        """The reward of ``episode`` playing ``task``/``trial``, ended with ``request``'s final
        message. Runs on the event loop for a small episode (:func:`reward_inline`), else in
        a worker thread. Raises :class:`RLRefused`."""
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
