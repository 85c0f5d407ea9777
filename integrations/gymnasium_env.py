"""Gymnasium: one mcpgym episode as a ``gymnasium.Env`` (``pip install 'mcpgym[gym]'``).

Importing this module registers ``mcpgym/Episode-v0``; Gymnasium 1.x loads no plugin entry
points, so either import it first or name it in the id::

    import gymnasium
    env = gymnasium.make("mcpgym.integrations.gymnasium_env:mcpgym/Episode-v0",
                         task="flights.book_cheapest_berlin_paris", faults="default")
    obs, info = env.reset(seed=7)        # obs: the instruction; info["tools"]: the tools
    obs, reward, terminated, truncated, info = env.step('{"tool": "system_get_time"}')

Spaces: observations and actions are ``gymnasium.spaces.Text`` over printable ASCII (plus
newline and tab). An action is a JSON object, a tool call ``{"tool", "arguments"}`` or the
final message ``{"final"}`` (contract and limits: :mod:`mcpgym.integrations.stepping`); the
observation is the instruction after ``reset``, then each tool result as
``{"is_error", "result"}`` JSON. ``terminated`` when the agent gives its final message,
``truncated`` when the step limit (``max_steps``, at least 1; default, None, the task's
``max_calls``) or the call budget ends the episode; ``max_steps`` below 1 and ``trial`` below 0
are refused with a ``ValueError`` at ``make``. Reward: 0.0 until the end, then the episode's reward
under ``reward`` (a profile of :mod:`mcpgym.evaluation.scoring.reward`; default ``outcome``: 1.0 on
success); the final info carries ``scores`` (every :class:`EpisodeScores` field) and ``reward``
(the breakdown: total, profile, terms, per-step process rewards).

Seeds: ``reset(seed=s)`` plays the episode with fault seed ``s`` (the world seed is the
task's): the same seed gives the same episode. ``reset()`` without a seed draws the fault
seed from the environment's generator (``self.np_random``), which the last seed fixed.
``reset(options={"task": ..., "faults": ..., "trial": ...})`` switches task or profile.
"""

from __future__ import annotations

import string
from typing import Any

import gymnasium
from gymnasium import spaces

from mcpgym.evaluation.run.gym import GymEpisode, whole_number
from mcpgym.evaluation.scoring.reward import RewardProfile, load_profile
from mcpgym.integrations.stepping import MAX_ACTION_CHARS, MAX_OBSERVATION_CHARS, EpisodeStepper, check_max_steps

ENV_ID = "mcpgym/Episode-v0"
"""The registered id."""

CHARSET = frozenset(c for c in string.printable if c not in "\x0b\x0c\r")
"""Characters of observations and actions: printable ASCII, newline and tab."""


class EpisodeEnv(gymnasium.Env[str, str]):
    """A Gymnasium environment whose episodes are mcpgym episodes of one task.

    Args:
        task: a task id or :class:`mcpgym.evaluation.tasks.Task`.
        faults: fault profile (a built-in name, a file, or a mapping), as ``GymEpisode.create``.
        trial: the trial recorded in the trajectory (a whole number, at least 0).
        max_steps: step limit, at least 1 (None: the task's ``max_calls``).
        tool_exposure: ``all`` | ``task`` | ``task+N`` | ``retrieval``.
        agent_name: the trajectory's ``agent``.
        reward: reward profile (``outcome`` | ``shaped`` | a file | a ``RewardProfile``).

    Raises:
        KeyError: unknown task id (at construction, so a typo fails at ``make``).
        ValueError: a ``trial`` below 0 or a ``max_steps`` below 1, or either not a whole
            number, or an unknown reward profile (at construction too).
    """

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(
        self,
        task: Any,
        faults: str | dict[str, Any] | None = None,
        trial: int = 0,
        max_steps: int | None = None,
        tool_exposure: str = "all",
        agent_name: str = "gymnasium",
        reward: str | RewardProfile | None = "outcome",
    ) -> None:
        from mcpgym.evaluation.tasks import get_task, gold_snapshot

        self.reward_profile = load_profile(reward)
        self.task = get_task(task) if isinstance(task, str) else task
        self.faults = faults
        self.trial = whole_number(trial, "trial", minimum=0)
        self.max_steps = None if max_steps is None else check_max_steps(max_steps)
        self.tool_exposure = tool_exposure
        self.agent_name = agent_name
        self._gold = gold_snapshot(self.task)  # shared by every episode of this env (not modified)
        self.observation_space = spaces.Text(max_length=MAX_OBSERVATION_CHARS, charset=CHARSET)
        self.action_space = spaces.Text(max_length=MAX_ACTION_CHARS, charset=CHARSET)
        self.stepper: EpisodeStepper | None = None

    @property
    def episode(self) -> GymEpisode:
        """The current episode (its trajectory, scores...).

        Raises:
            RuntimeError: before the first ``reset``.
        """
        if self.stepper is None:
            raise RuntimeError("call reset() first")
        return self.stepper.episode

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Start a fresh episode; returns ``(instruction, info)`` (info: task_id, trial,
        fault_seed, max_steps, tools). See the module docstring for seeds and options."""
        super().reset(seed=seed)
        options = dict(options or {})
        if "task" in options:
            from mcpgym.evaluation.tasks import get_task, gold_snapshot

            task = options.pop("task")
            self.task = get_task(task) if isinstance(task, str) else task
            self._gold = gold_snapshot(self.task)
        self.faults = options.pop("faults", self.faults)
        self.trial = whole_number(options.pop("trial", self.trial), "trial", minimum=0)
        if options:
            raise ValueError(f"unknown reset options {sorted(options)}; allowed: task, faults, trial")
        fault_seed = seed if seed is not None else int(self.np_random.integers(0, 2**31 - 1))
        episode = GymEpisode.create(
            self.task,
            trial=self.trial,
            faults=self.faults,
            fault_seed=fault_seed,
            agent_name=self.agent_name,
            tool_exposure=self.tool_exposure,
            gold=self._gold,
        )
        self.stepper = EpisodeStepper(episode, max_steps=self.max_steps, reward=self.reward_profile)
        return self.stepper.first()

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """One action (a JSON tool call or final message): ``(observation, reward,
        terminated, truncated, info)``.

        Raises:
            RuntimeError: before ``reset``. EpisodeFinished: after the episode ended.
        """
        if self.stepper is None:
            raise RuntimeError("call reset() first")
        out = self.stepper.step(action)
        return out.observation, out.reward, out.terminated, out.truncated, out.info


def register() -> None:
    """Register :data:`ENV_ID` with Gymnasium (idempotent)."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point=f"{__name__}:EpisodeEnv", disable_env_checker=False)


register()

__all__ = ["CHARSET", "ENV_ID", "EpisodeEnv", "register"]
