"""RL reward figure: what the ``shaped`` reward profile costs a whole rollout.

* ``shaped_reward_rollouts``: whole Gymnasium rollouts per second (``reset``, the careful
  agent's recorded actions on ``flights.book_cheapest_berlin_paris`` with ``harsh`` faults at
  fault seed 7, the final message; the episode is judged and rewarded at its end) with
  ``reward="shaped"`` (behaviour terms and per-step process rewards, which resolve the calls
  once more) / the same rollouts with ``reward="outcome"``, interleaved rollout by rollout in
  one process; each rollout timed in CPU seconds of this process (it does no I/O, so CPU time
  is its cost, and other processes on the machine do not move it). Target at least 0.9x.

Unavailable (not a zero) without ``mcpgym[gym]``.
"""

from __future__ import annotations

import importlib.util
import json
import time
from typing import Any

import anyio

from mcpgym.benchmarks.harness import Figure, Settings, gc_paused, median

TASK = "flights.book_cheapest_berlin_paris"
FAULTS = "harsh"
SEED = 7
TARGET = 0.9


def recorded_actions() -> list[str]:
    """The careful agent's actions (JSON) on the episode of :data:`SEED`, the final one last."""
    from mcpgym.evaluation.agents import AgentContext, make_agent
    from mcpgym.evaluation.agents.base import CallResult
    from mcpgym.evaluation.run.gym import GymEpisode

    ep = GymEpisode.create(TASK, faults=FAULTS, fault_seed=SEED)
    actions: list[str] = []

    async def call(name: str, arguments: Any = None) -> CallResult:
        actions.append(json.dumps({"tool": name, "arguments": arguments or {}}))
        return ep.step(name, arguments)

    result = anyio.run(lambda: make_agent("careful").run(ep.task, ep.tools, call, AgentContext(trial=0)))
    return [*actions, json.dumps({"final": result.final_message})]


def _rollout(env: Any, actions: list[str]) -> float:
    """One whole rollout through ``env``: its CPU seconds."""
    t0 = time.process_time()
    env.reset(seed=SEED)
    for action in actions:
        _obs, _reward, terminated, truncated, _info = env.step(action)
    t1 = time.process_time()
    assert terminated and not truncated
    return t1 - t0


def shaped_reward_rollouts(settings: Settings) -> Figure:
    """Figure: rollouts per second under ``shaped`` / under ``outcome`` (module docstring)."""
    title = "Gymnasium rollouts/s, shaped reward (behaviour + process terms)"
    if importlib.util.find_spec("gymnasium") is None:
        return Figure(
            name="shaped_reward_rollouts",
            title=title,
            value=None,
            unit="x",
            target=TARGET,
            op=">=",
            available=False,
            note="not available: gymnasium is not installed (pip install 'mcpgym[gym]')",
        )
    from mcpgym.integrations.gymnasium_env import EpisodeEnv

    actions = recorded_actions()
    shaped_env = EpisodeEnv(TASK, faults=FAULTS, reward="shaped")
    outcome_env = EpisodeEnv(TASK, faults=FAULTS, reward="outcome")
    n = max(settings.inproc_calls // 100, 3)
    ratios: list[float] = []
    shaped_rates: list[float] = []
    outcome_rates: list[float] = []
    for _ in range(settings.reps):
        t_shaped: list[float] = []
        t_outcome: list[float] = []
        with gc_paused():
            for _ in range(n):
                t_shaped.append(_rollout(shaped_env, actions))
                t_outcome.append(_rollout(outcome_env, actions))
        shaped_rate, outcome_rate = 1.0 / median(t_shaped), 1.0 / median(t_outcome)
        ratios.append(shaped_rate / outcome_rate)
        shaped_rates.append(shaped_rate)
        outcome_rates.append(outcome_rate)
    value = round(median(ratios), 3)
    return Figure(
        name="shaped_reward_rollouts",
        title=title,
        value=value,
        unit="x outcome",
        target=TARGET,
        op=">=",
        baseline="the same rollouts with the outcome reward, interleaved",
        ratio=value,
        details={
            "shaped_rollouts_per_cpu_second": round(median(shaped_rates), 1),
            "outcome_rollouts_per_cpu_second": round(median(outcome_rates), 1),
            "actions_per_rollout": len(actions),
            "rollouts_per_rep": n,
            "ratio_per_rep": [round(r, 3) for r in ratios],
        },
    )


__all__ = ["recorded_actions", "shaped_reward_rollouts"]
