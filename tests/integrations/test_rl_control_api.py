"""The control API's routes for trainers (``mcpgym serve --transport http``; the verifiers and
NeMo Gym doors both use them): a task's episode is seeded as ``mcpgym run`` seeds it, its reward
is ``GymEpisode``'s for the same calls, the list of tasks and the tool exposure are the run's,
and what the routes refuse they refuse with the status and wording of the control API
(:mod:`mcpgym.server.rl_models`)."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import httpx
import pytest
from mcp import Client

from mcpgym.evaluation.run.gym import GymEpisode
from mcpgym.evaluation.scoring.reward import episode_reward
from mcpgym.evaluation.tasks import fault_seed_for, get_task
from mcpgym.server.episode import Episode
from mcpgym.server.rl_models import EpisodeReward, TaskEpisodeCreated, TaskList
from mcpgym.server.rl_routes import INLINE_REWARD_CALLS, reward_inline
from tests.support.servers import HttpServer, spawn_server

TASK = "system.dark_mode"


@pytest.fixture(scope="module")
def server() -> Iterator[HttpServer]:
    srv = spawn_server()
    try:
        yield srv
    finally:
        srv.stop()


def test_a_task_episode_is_seeded_as_mcpgym_run_and_rewarded_as_gym_episode(server: HttpServer) -> None:
    task = get_task(TASK)
    with httpx.Client(base_url=server.url, headers=server.auth, timeout=60) as http:
        listed = TaskList.model_validate(http.get("/control/tasks", params={"task": TASK}).json())
        assert [t.task for t in listed.tasks] == [TASK] and listed.tasks[0].instruction == task.instruction
        assert listed.tasks[0].world_seed == task.seed and listed.system_prompt
        answer = http.post("/control/task-episodes", json={"task": TASK, "trial": 2, "faults": "harsh"})
        assert answer.status_code == 201, answer.text
        made = TaskEpisodeCreated.model_validate(answer.json())
        assert (made.seed, made.fault_seed, made.faults) == (task.seed, fault_seed_for(task, 2), "harsh")

        async def play() -> None:
            async with Client(made.mcp_url) as client:
                await client.call_tool("system_get_settings", {})

        anyio.run(play)
        body = {"final_message": "Done.", "reward": "shaped", "steps": True, "delete": True}
        answer = http.post(f"/control/episodes/{made.episode_id}/reward", json=body)
        assert answer.status_code == 200, answer.text
        got = EpisodeReward.model_validate(answer.json())
        assert got.deleted and http.get(f"/control/episodes/{made.episode_id}").status_code == 404
        again = http.post(f"/control/episodes/{made.episode_id}/reward", json={})
        assert again.status_code == 404 and "no such episode" in again.json()["error"]

    ep = GymEpisode.create(TASK, trial=2, faults="harsh")
    ep.step("system_get_settings", {})
    ep.finish("Done.")
    want = episode_reward(ep.trajectory(), "shaped")
    assert got.calls == 1 and got.total == want.total and got.components == want.components()
    assert [(s.step, s.tool, s.arguments) for s in got.steps or []] == [(1, "system_get_settings", {})]
    assert got.breakdown["terms"] == want.model_dump(mode="json")["terms"]
    scores = ep.trajectory().scores.model_dump(mode="json")
    own = {"episode_id", "agent"}  # the episode's own id and the agent's name differ; nothing else
    assert {k: v for k, v in got.scores.items() if k not in own} == {k: v for k, v in scores.items() if k not in own}


def test_a_large_episode_is_rewarded_as_gym_episode_too(server: HttpServer) -> None:
    """Past ``INLINE_REWARD_CALLS`` calls the reward runs in a worker thread, not on the event
    loop (``reward_inline``); its number is the same as ``GymEpisode``'s for the same calls."""
    calls = INLINE_REWARD_CALLS + 3
    with httpx.Client(base_url=server.url, headers=server.auth, timeout=60) as http:
        made = TaskEpisodeCreated.model_validate(
            http.post("/control/task-episodes", json={"task": TASK, "trial": 1, "faults": "harsh"}).json()
        )

        async def play() -> None:
            async with Client(made.mcp_url) as client:
                for _ in range(calls):
                    await client.call_tool("system_get_settings", {})

        anyio.run(play)
        body = {"final_message": "Done.", "reward": "shaped", "delete": True}
        got = EpisodeReward.model_validate(http.post(f"/control/episodes/{made.episode_id}/reward", json=body).json())
    ep = GymEpisode.create(TASK, trial=1, faults="harsh")
    for _ in range(calls):
        ep.step("system_get_settings", {})
    ep.finish("Done.")
    want = episode_reward(ep.trajectory(), "shaped")
    assert got.calls == calls and got.deleted
    assert got.total == want.total and got.components == want.components()


def test_only_a_small_episode_with_its_lock_free_is_rewarded_on_the_event_loop() -> None:
    ep = Episode.create(5, ["system"], "none")
    assert reward_inline(ep)
    with ep.lock:  # a call or a reward holding it in a worker thread: the loop must not wait on it
        assert not reward_inline(ep)
    for _ in range(INLINE_REWARD_CALLS + 1):
        ep.call("system_get_settings", {})
    assert not reward_inline(ep)


def test_without_steps_or_delete_the_answer_is_short_and_the_episode_stays(server: HttpServer) -> None:
    with httpx.Client(base_url=server.url, headers=server.auth, timeout=60) as http:
        made = http.post("/control/task-episodes", json={"task": TASK}).json()
        got = EpisodeReward.model_validate(http.post(f"/control/episodes/{made['episode_id']}/reward", json={}).json())
        assert got.steps is None and not got.deleted and got.calls == 0
        assert http.get(f"/control/episodes/{made['episode_id']}").status_code == 200
        assert http.delete(f"/control/episodes/{made['episode_id']}").status_code == 204


def test_tool_exposure_is_the_runs(server: HttpServer) -> None:
    """``tools: "task"`` offers the task's oracle tools only, as ``mcpgym run --tools task`` does."""
    from mcpgym.evaluation.run.episode_runner import exposure_request

    want = exposure_request("task", get_task(TASK))["tools"]
    with httpx.Client(base_url=server.url, headers=server.auth, timeout=60) as http:
        made = http.post("/control/task-episodes", json={"task": TASK, "tools": "task"}).json()
        assert made["tools"] == len(want)
        every = http.post("/control/task-episodes", json={"task": TASK}).json()
        assert every["tools"] > len(want)
        for eid in (made["episode_id"], every["episode_id"]):
            http.delete(f"/control/episodes/{eid}")


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "words"),
    [
        ("post", "/control/task-episodes", {"task": "no.such_task"}, 422, "no.such_task"),
        ("post", "/control/task-episodes", {"task": TASK, "trial": -1}, 422, "trial"),
        ("post", "/control/task-episodes", {"task": TASK, "faults": "stormy"}, 422, "stormy"),
        ("post", "/control/task-episodes", {"task": TASK, "tools": "some"}, 422, "tools"),
        ("post", "/control/task-episodes", {"task": TASK, "extra": 1}, 422, "extra"),
        ("post", "/control/episodes/0123/reward", {"final_message": "x"}, 404, "no such episode"),
        ("get", "/control/tasks?suite=no_such_suite", None, 422, "no_such_suite"),
        ("get", "/control/tasks?task=no.such_task", None, 422, "no.such_task"),
    ],
)
def test_refusals_name_what_is_wrong(
    server: HttpServer, method: str, path: str, body: dict | None, status: int, words: str
) -> None:
    with httpx.Client(base_url=server.url, headers=server.auth, timeout=60) as http:
        answer = http.request(method.upper(), path, json=body)
    assert answer.status_code == status, answer.text
    assert words in answer.json()["error"]


def test_a_bad_reward_profile_is_refused_and_the_episode_kept(server: HttpServer) -> None:
    with httpx.Client(base_url=server.url, headers=server.auth, timeout=60) as http:
        made = http.post("/control/task-episodes", json={"task": TASK}).json()
        answer = http.post(f"/control/episodes/{made['episode_id']}/reward", json={"reward": "greedy", "delete": True})
        assert answer.status_code == 422 and "reward" in answer.json()["error"]
        assert http.delete(f"/control/episodes/{made['episode_id']}").status_code == 204


def test_every_route_needs_the_control_token(server: HttpServer) -> None:
    with httpx.Client(base_url=server.url, timeout=60) as http:
        routes = [("GET", "/control/tasks"), ("POST", "/control/task-episodes"), ("POST", "/control/episodes/x/reward")]
        for method, path in routes:
            answer = http.request(method, path, json={}, headers={"Authorization": "Bearer wrong"})
            assert answer.status_code == 401 and "token" in answer.json()["error"]
