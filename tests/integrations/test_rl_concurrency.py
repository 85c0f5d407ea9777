"""64 concurrent rollouts through each RL door of this tree (Gymnasium, OpenEnv's real client
over one ``mcpgym serve --openenv``), interleaved call by call: every rollout is its own
episode (own id, own world, own fault schedule), a rollout repeated with the same seed gives
the same trajectory (observations, scores, reward), and each equals the same agent on a lone
``GymEpisode`` of that seed, so nothing leaked between the 64."""

from __future__ import annotations

import json

import anyio
import pytest

from mcpgym.evaluation.agents import AgentContext, make_agent
from mcpgym.evaluation.agents.base import CallResult
from mcpgym.evaluation.run.gym import GymEpisode

gymnasium = pytest.importorskip("gymnasium", reason="needs the [gym] extra (pip install 'mcpgym[gym]')")
pytest.importorskip("openenv", reason="needs the [openenv] extra (pip install 'mcpgym[openenv]')")

from openenv import GenericEnvClient  # noqa: E402

from mcpgym.integrations import gymnasium_env  # noqa: E402
from mcpgym.integrations.openenv_process import openenv_server  # noqa: E402

TASK = "flights.book_cheapest_berlin_paris"
ROLLOUTS = 64
SEEDS = [100 + i % (ROLLOUTS // 2) for i in range(ROLLOUTS)]
"""Rollout i and i + 32 share a seed; the 32 seeds differ."""

Rollout = tuple[list[str], dict, float]
"""(observations seen, final scores without the episode id and agent name, reward)."""

NAMES = ("episode_id", "agent")
"""Score fields that name the episode and the door, not what happened."""


def _lone(seed: int) -> tuple[dict, float, list[dict]]:
    """The careful agent on a lone ``GymEpisode``: scores (no names), reward, fault ledger."""
    ep = GymEpisode.create(TASK, faults="harsh", fault_seed=seed)
    anyio.run(ep.run_agent, make_agent("careful"))
    scores = {k: v for k, v in ep.scores.model_dump(mode="json").items() if k not in NAMES}
    ledger = list(ep.trajectory().ledger or [])
    return scores, ep.reward, ledger


def _check(rollouts: dict[int, Rollout], episode_ids: set[str]) -> None:
    assert sorted(rollouts) == list(range(ROLLOUTS)) and len(episode_ids) == ROLLOUTS
    lone = {seed: _lone(seed) for seed in set(SEEDS)}
    for i, (observations, scores, reward) in rollouts.items():
        twin = rollouts[(i + ROLLOUTS // 2) % ROLLOUTS]
        assert observations == twin[0] and scores == twin[1] and reward == twin[2], f"rollout {i} != its twin"
        assert scores == lone[SEEDS[i]][0] and reward == lone[SEEDS[i]][1] == 1.0
    schedules = {json.dumps(ledger, sort_keys=True) for _s, _r, ledger in lone.values()}
    assert len(schedules) > ROLLOUTS // 4, "different seeds draw different fault schedules"
    assert sum(s["recoverable_errors"] for _o, s, _r in rollouts.values()) > ROLLOUTS, "harsh faults were met"


def test_64_gymnasium_rollouts_interleaved_are_isolated_and_seeded() -> None:
    rollouts: dict[int, Rollout] = {}
    ids: set[str] = set()

    async def one(i: int) -> None:
        env = gymnasium.make(gymnasium_env.ENV_ID, task=TASK, faults="harsh")
        obs, _info = env.reset(seed=SEEDS[i])
        seen = [obs]
        ids.add(env.unwrapped.episode.episode_id)

        async def call(name: str, arguments: object = None) -> CallResult:
            await anyio.sleep(0)  # let the other 63 rollouts step in between
            obs, _r, _te, _tr, _info = env.step(json.dumps({"tool": name, "arguments": arguments or {}}))
            seen.append(obs)
            got = json.loads(obs)
            return CallResult(is_error=got["is_error"], payload=got["result"])

        ep = env.unwrapped.episode
        result = await make_agent("careful").run(ep.task, ep.tools, call, AgentContext(trial=0))
        _obs, reward, terminated, _tr, info = env.step(json.dumps({"final": result.final_message}))
        assert terminated
        rollouts[i] = (seen, {k: v for k, v in info["scores"].items() if k not in NAMES}, reward)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            for i in range(ROLLOUTS):
                tg.start_soon(one, i)

    anyio.run(main)
    _check(rollouts, ids)


def test_64_openenv_sessions_at_once_are_isolated_and_seeded() -> None:
    rollouts: dict[int, Rollout] = {}
    ids: set[str] = set()

    async def one(url: str, i: int) -> None:
        async with GenericEnvClient(base_url=url, message_timeout_s=120) as env:
            first = await env.reset(task=TASK, seed=SEEDS[i])
            seen = [first.observation["text"]]

            async def call(name: str, arguments: object = None) -> CallResult:
                res = await env.step({"tool": name, "arguments": arguments or {}})
                seen.append(res.observation["text"])
                got = json.loads(res.observation["text"])
                return CallResult(is_error=got["is_error"], payload=got["result"])

            ep = GymEpisode.create(TASK, faults="harsh", fault_seed=SEEDS[i])  # only for the tools list
            result = await make_agent("careful").run(ep.task, ep.tools, call, AgentContext(trial=0))
            last = await env.step({"final": result.final_message})
            state = await env.state()
            assert last.done and state["done"]
            ids.add(state["episode_id"])
            scores = {k: v for k, v in last.observation["info"]["scores"].items() if k not in NAMES}
            rollouts[i] = (seen, scores, float(last.reward))

    with openenv_server("--max-episodes", str(ROLLOUTS), "--faults", "harsh") as url:

        async def main() -> None:
            with anyio.fail_after(300):
                async with anyio.create_task_group() as tg:
                    for i in range(ROLLOUTS):
                        tg.start_soon(one, url, i)

        anyio.run(main)
    _check(rollouts, ids)
