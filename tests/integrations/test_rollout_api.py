"""``mcpgym serve --transport http --rollouts``: the rollout API's episodes are seeded as
``mcpgym run`` seeds them, its reward is ``GymEpisode``'s for the same calls, and what it
refuses it refuses with the status and wording of its wire contract
(:mod:`mcpgym.integrations.rollout_models`)."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import httpx
import pytest
from mcp import Client

from mcpgym.evaluation.run.gym import GymEpisode
from mcpgym.evaluation.scoring.reward import episode_reward
from mcpgym.evaluation.tasks import fault_seed_for, get_task
from mcpgym.integrations.rollout_models import RolloutCreated, RolloutReward, RolloutTasks
from tests.support.servers import HttpServer, spawn_server

TASK = "system.dark_mode"


@pytest.fixture(scope="module")
def server() -> Iterator[HttpServer]:
    srv = spawn_server("--rollouts")
    try:
        yield srv
    finally:
        srv.stop()


def test_a_rollout_is_seeded_as_mcpgym_run_and_rewarded_as_gym_episode(server: HttpServer) -> None:
    task = get_task(TASK)
    with httpx.Client(base_url=server.url, headers=server.auth, timeout=60) as http:
        listed = RolloutTasks.model_validate(http.get("/rollouts/tasks", params={"task": TASK}).json())
        assert [t.task_id for t in listed.tasks] == [TASK] and listed.tasks[0].instruction == task.instruction
        answer = http.post("/rollouts", json={"task_id": TASK, "trial": 2, "faults": "harsh"})
        assert answer.status_code == 201, answer.text
        made = RolloutCreated.model_validate(answer.json())
        assert (made.world_seed, made.fault_seed, made.faults) == (task.seed, fault_seed_for(task, 2), "harsh")
        summary = http.get(f"/control/episodes/{made.episode_id}").json()
        assert (summary["seed"], summary["fault_seed"]) == (task.seed, made.fault_seed)

        async def play() -> None:
            async with Client(made.mcp_url) as client:
                await client.call_tool("system_get_settings", {})

        anyio.run(play)
        answer = http.post(f"/rollouts/{made.episode_id}/reward", json={"final_message": "Done.", "reward": "shaped"})
        assert answer.status_code == 200, answer.text
        got = RolloutReward.model_validate(answer.json())
        assert http.get(f"/control/episodes/{made.episode_id}").status_code == 404  # ended with its reward
        again = http.post(f"/rollouts/{made.episode_id}/reward", json={})
        assert again.status_code == 404 and "waiting for its reward" in again.json()["error"]

    ep = GymEpisode.create(TASK, trial=2, faults="harsh")
    ep.step("system_get_settings", {})
    ep.finish("Done.")
    want = episode_reward(ep.trajectory(), "shaped")
    assert got.calls == 1 and got.total == want.total
    assert got.reward["terms"] == want.model_dump(mode="json")["terms"]
    scores = ep.trajectory().scores.model_dump(mode="json")
    own = {"episode_id", "agent"}  # the episode's own id and the agent's name differ; nothing else
    assert {k: v for k, v in got.scores.items() if k not in own} == {k: v for k, v in scores.items() if k not in own}


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "words"),
    [
        ("post", "/rollouts", {"task_id": "no.such_task"}, 404, "no.such_task"),
        ("post", "/rollouts", {"task_id": TASK, "trial": -1}, 422, "trial"),
        ("post", "/rollouts", {"task_id": TASK, "faults": "stormy"}, 422, "stormy"),
        ("post", "/rollouts", {"task_id": TASK, "extra": 1}, 422, "extra"),
        ("post", "/rollouts/0123/reward", {"final_message": "x"}, 404, "no rollout"),
        ("post", "/rollouts/0123/reward", {"reward": "greedy"}, 422, "reward"),
        ("get", "/rollouts/tasks?suite=no_such_suite", None, 404, "no_such_suite"),
    ],
)
def test_refusals_name_what_is_wrong(
    server: HttpServer, method: str, path: str, body: dict | None, status: int, words: str
) -> None:
    with httpx.Client(base_url=server.url, headers=server.auth, timeout=60) as http:
        answer = http.request(method.upper(), path, json=body)
    assert answer.status_code == status, answer.text
    assert words in answer.json()["error"]


def test_every_route_needs_the_control_token(server: HttpServer) -> None:
    with httpx.Client(base_url=server.url, timeout=60) as http:
        for method, path in [("GET", "/rollouts/tasks"), ("POST", "/rollouts"), ("POST", "/rollouts/x/reward")]:
            answer = http.request(method, path, json={}, headers={"Authorization": "Bearer wrong"})
            assert answer.status_code == 401 and "token" in answer.json()["error"]
