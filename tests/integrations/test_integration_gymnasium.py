"""Gymnasium (the real package): ``gymnasium.make("mcpgym/Episode-v0", ...)``, Gymnasium's own
``check_env``, seeds honoured, terminated / truncated, the reward at the end only, the scores in
info, and an agent played through the env scoring as the same agent on ``GymEpisode``."""

from __future__ import annotations

import json
import re
import warnings

import anyio
import pytest

from mcpgym.evaluation.agents import AgentContext

gymnasium = pytest.importorskip("gymnasium", reason="needs the [gym] extra (pip install 'mcpgym[gym]')")

from gymnasium.utils.env_checker import check_env  # noqa: E402

from mcpgym.evaluation.agents import make_agent  # noqa: E402
from mcpgym.evaluation.agents.base import CallResult  # noqa: E402
from mcpgym.evaluation.run.gym import GymEpisode  # noqa: E402
from mcpgym.integrations import gymnasium_env  # noqa: E402
from mcpgym.integrations.stepping import EpisodeStepper  # noqa: E402

TASK = "flights.book_cheapest_berlin_paris"
SEARCH = {
    "tool": "flights_search_flights_by_city",
    "arguments": {"origin_city": "Berlin", "destination_city": "Paris", "date": "2026-06-04"},
}


def test_check_env_passes_without_a_warning() -> None:
    env = gymnasium.make(gymnasium_env.ENV_ID, task=TASK, faults="default")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
    assert [str(w.message) for w in caught] == []
    # The id also resolves with the module named in it (Gymnasium loads no plugins by itself).
    named = gymnasium.make(f"mcpgym.integrations.gymnasium_env:{gymnasium_env.ENV_ID}", task=TASK)
    assert isinstance(named.unwrapped, gymnasium_env.EpisodeEnv)


def _play(env, actions: list) -> list:  # noqa: ANN001
    return [env.step(json.dumps(a)) for a in actions]


def test_reset_seed_is_the_fault_seed_and_the_same_seed_gives_the_same_episode() -> None:
    actions = [SEARCH, SEARCH, {"tool": "system_get_wallet_balance"}, SEARCH]
    runs = []
    for _ in range(2):
        env = gymnasium.make(gymnasium_env.ENV_ID, task=TASK, faults="harsh")
        obs, info = env.reset(seed=11)
        assert info["fault_seed"] == 11 and obs == env.unwrapped.episode.instruction
        runs.append([o for o, *_ in _play(env, actions)])
    assert runs[0] == runs[1]
    direct = GymEpisode.create(TASK, faults="harsh", fault_seed=11)
    assert [direct.step(a["tool"], a.get("arguments")) and direct.observation for a in actions] == runs[0]
    other = gymnasium.make(gymnasium_env.ENV_ID, task=TASK, faults="harsh")
    others = []
    for seed in range(12, 20):
        other.reset(seed=seed)
        others.append([o for o, *_ in _play(other, actions)])
    assert any(o != runs[0] for o in others), "other seeds, other fault schedules"


def test_terminated_on_the_final_message_reward_only_at_the_end() -> None:
    env = gymnasium.make(gymnasium_env.ENV_ID, task=TASK, faults="none")
    env.reset(seed=3)
    obs, reward, terminated, truncated, info = env.step(json.dumps(SEARCH))
    assert (reward, terminated, truncated) == (0.0, False, False) and json.loads(obs)["result"]["count"] > 0
    obs, reward, terminated, truncated, info = env.step(json.dumps({"final": "I booked nothing."}))
    assert (reward, terminated, truncated) == (0.0, True, False)
    scores = env.unwrapped.episode.scores
    assert info["scores"] == scores.model_dump(mode="json") and info["status"] == "completed"
    assert scores.tool_calls == 1 and scores.success is False and "verification_rate" in info["scores"]


def test_truncated_at_the_step_limit_and_bad_actions_are_invalid_calls() -> None:
    env = gymnasium.make(gymnasium_env.ENV_ID, task=TASK, faults="none", max_steps=3)
    env.reset(seed=0)
    obs, *_ = env.step("not json")
    err = json.loads(obs)["result"]["error"]
    assert err["code"] == "invalid_argument" and "not JSON" in err["message"]
    obs, *_ = env.step(json.dumps({"tool": "x", "final": "y"}))
    assert "exactly one" in json.loads(obs)["result"]["error"]["message"]
    obs, reward, terminated, truncated, info = env.step(json.dumps(SEARCH))
    assert (terminated, truncated, reward) == (False, True, 0.0)
    assert info["status"] == "limit" and info["scores"]["invalid_calls"] == 2 and info["scores"]["tool_calls"] == 1


def test_an_agent_played_through_the_env_scores_as_on_gym_episode() -> None:
    """The careful agent's tool calls go through ``env.step`` as JSON actions: reward 1.0 at the
    end, and the scores equal those of the same agent on ``GymEpisode`` (same fault seed)."""
    env = gymnasium.make(gymnasium_env.ENV_ID, task=TASK, faults="default", agent_name="careful")
    _, info = env.reset(seed=5)
    tools = env.unwrapped.episode.tools
    rewards: list[float] = []

    async def call(name: str, arguments: object = None) -> CallResult:
        obs, reward, _te, _tr, _info = env.step(json.dumps({"tool": name, "arguments": arguments or {}}))
        rewards.append(reward)
        seen = json.loads(obs)
        return CallResult(is_error=seen["is_error"], payload=seen["result"])

    agent = make_agent("careful")
    result = anyio.run(lambda: agent.run(env.unwrapped.task, tools, call, AgentContext(trial=0)))
    _obs, reward, terminated, _tr, info = env.step(json.dumps({"final": result.final_message}))
    assert terminated and reward == 1.0 and set(rewards) == {0.0}
    direct = GymEpisode.create(TASK, faults="default", fault_seed=5, agent_name="careful")
    anyio.run(direct.run_agent, make_agent("careful"))
    mine = {k: v for k, v in info["scores"].items() if k != "episode_id"}
    assert mine == {k: v for k, v in direct.scores.model_dump(mode="json").items() if k != "episode_id"}


def test_observations_are_ascii_and_cut_when_long() -> None:
    text, cut = EpisodeStepper.text("é" + "x" * 70_000)
    assert cut and text.isascii() and text.startswith("\\xe9") and text.endswith("more characters]")
    assert len(text) == 65_536


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"max_steps": 0}, "max_steps must be a whole number of at least 1, got 0"),
        ({"max_steps": -5}, "max_steps must be a whole number of at least 1, got -5"),
        ({"max_steps": 2.5}, "max_steps must be a whole number"),
        ({"max_steps": True}, "max_steps must be a whole number"),
        ({"trial": -1}, "trial must be a whole number of at least 0, got -1"),
        ({"trial": "1"}, "trial must be a whole number of at least 0, got '1'"),
    ],
)
def test_out_of_range_max_steps_and_trial_are_refused_at_make(kwargs: dict, says: str) -> None:
    """newuser3 finding 14: ``max_steps=0`` silently meant the task's limit, -5 and ``trial=-1``
    were taken. 0 is refused (None is "the task's limit"), as the control API and the CLI refuse
    their out-of-range numbers."""
    with pytest.raises(ValueError, match=re.escape(says)):
        gymnasium.make(gymnasium_env.ENV_ID, task="system.dark_mode", **kwargs)


def test_max_steps_one_truncates_after_one_step_and_bad_reset_trial_is_refused() -> None:
    env = gymnasium.make(gymnasium_env.ENV_ID, task="system.dark_mode", max_steps=1)
    _obs, info = env.reset(seed=1)
    assert info["max_steps"] == 1
    _o, _r, terminated, truncated, info = env.step(json.dumps({"tool": "system_get_settings"}))
    assert (terminated, truncated, info["status"]) == (False, True, "limit")
    with pytest.raises(ValueError, match="trial must be a whole number of at least 0, got -2"):
        env.reset(seed=1, options={"trial": -2})
    with pytest.raises(ValueError, match="fault seed must be a whole number from 0 to"):
        GymEpisode.create("system.dark_mode", fault_seed=-1)
    # the task's own limit when max_steps is left out
    _obs, info = gymnasium.make(gymnasium_env.ENV_ID, task="system.dark_mode").reset(seed=1)
    assert info["max_steps"] == GymEpisode.create("system.dark_mode").task.max_calls
