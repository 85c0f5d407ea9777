"""The tasks, judge and reward behind ``mcpgym serve``'s RL routes
(:mod:`mcpgym.server.rl_routes`): the task list, a task's episode body, and a finished
episode's reward.

A served episode is rewarded exactly as an in-process one: it is adopted by a
:class:`mcpgym.evaluation.run.gym.GymEpisode` (the same trajectory builder and scorer as
``mcpgym run``), finished with the agent's final message, and rewarded by
:func:`mcpgym.evaluation.scoring.reward.episode_reward`. So a rollout played over MCP through
``mcpgym serve`` and the same actions through ``GymEpisode`` get the same number
(tests/integrations/test_reward_doors.py).
"""

from __future__ import annotations

import threading
from typing import Any

from mcpgym.server.episode import Episode
from mcpgym.server.rl_models import (
    MAX_TASKS_LISTED,
    EpisodeReward,
    RewardRequest,
    RewardStep,
    TaskEpisodeRequest,
    TaskInfo,
    TaskList,
)
from mcpgym.server.rl_routes import RLRefused


class ServedRL:
    """:class:`mcpgym.server.rl_routes.RLHooks` over this process's task registry. Gold states
    are computed once per task and shared (never modified: the judge only reads them)."""

    def __init__(self) -> None:
        self._gold: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _task(task_id: str) -> Any:
        from mcpgym.evaluation import tasks as registry

        try:
            return registry.get_task(task_id)
        except KeyError:
            raise RLRefused(422, f"unknown task {task_id[:200]!r}") from None

    def tasks(self, suite: str, ids: list[str]) -> TaskList:
        """The tasks of ``suite`` (or those ``ids`` name, in that order), with the system
        prompt of mcpgym's LLM agents.

        Raises:
            RLRefused: 422 for an unknown suite or task, or more than ``MAX_TASKS_LISTED``.
        """
        from mcpgym.evaluation import tasks as registry
        from mcpgym.evaluation.llm.agent import DEFAULT_SYSTEM_PROMPT

        try:
            chosen = [self._task(t) for t in ids] if ids else registry.load_tasks(suite)
        except (KeyError, ValueError) as exc:
            raise RLRefused(422, str(exc)[:500]) from None
        if len(chosen) > MAX_TASKS_LISTED:
            raise RLRefused(422, f"{len(chosen)} tasks: at most {MAX_TASKS_LISTED} per listing; name them with task=")
        listed = [
            TaskInfo(
                task=t.id,
                instruction=t.instruction,
                apps=list(t.apps),
                world_seed=t.seed,
                level=getattr(t, "level", None),
            )
            for t in chosen
        ]
        return TaskList(tasks=listed, system_prompt=DEFAULT_SYSTEM_PROMPT)

    def episode_body(self, request: TaskEpisodeRequest) -> tuple[dict[str, Any], str]:
        """The ``POST /control/episodes`` body of the task's episode (world seed and apps the
        task's; faults: the task's own, else the request's, else the server's default
        (``serve --faults``); fault seed
        ``fault_seed_for(task, trial)`` unless given; the tool exposure of ``mcpgym run
        --tools``), and the task's instruction.

        Raises:
            RLRefused: 422 for an unknown task, fault profile or tool exposure.
        """
        from mcpgym.evaluation import tasks as registry
        from mcpgym.evaluation.run.episode_runner import exposure_request
        from mcpgym.evaluation.run.runner import faults_payload
        from mcpgym.tools.faults import FaultProfile, FaultProfileError

        task = self._task(request.task)
        body: dict[str, Any] = {"seed": task.seed, "apps": list(task.apps)}
        spec = task.faults or request.faults
        if spec is not None:  # else the server's own default (`serve --faults`), as for POST /control/episodes
            try:
                body["faults"], _ = faults_payload(
                    FaultProfile.model_validate(spec) if isinstance(spec, dict) else spec
                )
            except (FaultProfileError, ValueError) as exc:
                raise RLRefused(422, f"invalid field 'faults': {exc}"[:500]) from None
        body["fault_seed"] = (
            registry.fault_seed_for(task, request.trial) if request.fault_seed is None else request.fault_seed
        )
        try:
            body |= exposure_request(request.tools or "all", task)
        except ValueError as exc:
            raise RLRefused(422, f"invalid field 'tools': {exc}"[:500]) from None
        return body, str(task.instruction)

    def _gold_of(self, task: Any) -> dict[str, Any]:
        from mcpgym.evaluation import tasks as registry

        with self._lock:
            gold = self._gold.get(task.id)
        if gold is None:
            gold = registry.gold_snapshot(task)
            with self._lock:
                gold = self._gold.setdefault(task.id, gold)
        return gold

    def reward(self, episode: Episode, task: str, trial: int, request: RewardRequest) -> EpisodeReward:
        """The reward of ``episode`` as task ``task``'s trial ``trial``, ended with the request's
        final message, under the request's profile (on the event loop or in a worker thread,
        :func:`mcpgym.server.rl_routes.reward_inline`; the episode's lock is held
        while its trajectory is read).

        Raises:
            RLRefused: 422 unknown task or bad profile; 409 the episode's world is not the
                task's, or the judge cannot decide its outcome (``RewardUnavailable``).
        """
        from mcpgym.evaluation.run.gym import GymEpisode
        from mcpgym.evaluation.scoring.reward import RewardUnavailable, episode_reward, load_profile
        from mcpgym.kernel.world import normalise_apps

        the_task = self._task(task)
        if isinstance(request.reward, str) and request.reward not in ("outcome", "shaped"):
            raise RLRefused(422, "invalid field 'reward': a built-in profile name (outcome, shaped) or an object")
        try:
            profile = load_profile(request.reward)
        except ValueError as exc:
            raise RLRefused(422, f"invalid field 'reward': {exc}"[:500]) from None
        if episode.seed != the_task.seed or list(episode.apps) != normalise_apps(the_task.apps):
            raise RLRefused(409, f"this episode's world (seed, apps) is not task {task[:200]!r}'s")
        gold = self._gold_of(the_task)
        listener = episode.park_listener  # adopting sets it; the MCP session's stays
        with episode.lock:
            gym = GymEpisode(the_task, episode, trial=trial, agent_name="served", gold=gold)
            episode.park_listener = listener
            gym.finish(request.final_message)
        trajectory = gym.trajectory()
        try:
            breakdown = episode_reward(trajectory, profile)
        except RewardUnavailable as exc:
            raise RLRefused(409, str(exc)[:500]) from None
        calls = trajectory.tool_calls
        steps = (
            [
                RewardStep(
                    step=s.step, tool=s.tool, arguments=s.arguments, is_error=s.is_error, error_code=s.error_code
                )
                for s in calls
            ]
            if request.steps
            else None
        )
        return EpisodeReward(
            episode_id=episode.episode_id,
            task=task,
            trial=trial,
            total=breakdown.total,
            components=breakdown.components(),
            breakdown=breakdown.model_dump(mode="json"),
            success=gym.scores.success,
            scores=gym.scores.model_dump(mode="json"),
            calls=len(calls),
            steps=steps,
        )
