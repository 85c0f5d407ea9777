"""One rollout, one reward: the same actions through Gymnasium, OpenEnv's environment and a
plain ``GymEpisode`` give the same reward number and breakdown under each built-in profile
(verifiers and NeMo Gym: their own tests below, through the real packages in their own venvs)."""

from __future__ import annotations

import json

import pytest

from mcpgym.evaluation.run.gym import GymEpisode
from mcpgym.evaluation.scoring.reward import episode_reward

gymnasium = pytest.importorskip("gymnasium", reason="needs the [gym] extra (pip install 'mcpgym[gym]')")
pytest.importorskip("openenv", reason="needs the [openenv] extra (pip install 'mcpgym[openenv]')")

from openenv import GenericEnvClient  # noqa: E402

from mcpgym.integrations import gymnasium_env  # noqa: E402
from mcpgym.integrations.openenv_env import McpgymAction, McpgymEnvironment  # noqa: E402
from mcpgym.integrations.openenv_process import openenv_server  # noqa: E402

TASK = "flights.book_cheapest_berlin_paris"
SEED = 7


def _actions() -> list[dict]:
    """The careful agent's actions on the harsh-fault episode of :data:`SEED` (the benchmark's
    recording: the same task, faults and seed)."""
    from mcpgym.benchmarks.rl_reward import FAULTS, recorded_actions
    from mcpgym.benchmarks.rl_reward import SEED as BENCH_SEED
    from mcpgym.benchmarks.rl_reward import TASK as BENCH_TASK

    assert (BENCH_TASK, FAULTS, BENCH_SEED) == (TASK, "harsh", SEED)
    return [json.loads(a) for a in recorded_actions()]


def _played(actions: list[dict]) -> GymEpisode:
    """The plain ``GymEpisode`` of :data:`TASK` (harsh faults, :data:`SEED`) after ``actions``."""
    direct = GymEpisode.create(TASK, faults="harsh", fault_seed=SEED)
    for a in actions[:-1]:
        direct.step(a["tool"], a["arguments"])
    direct.finish(actions[-1]["final"])
    return direct


@pytest.mark.parametrize("profile", ["outcome", "shaped"])
def test_one_rollout_has_one_reward_through_every_door(profile: str) -> None:
    actions = _actions()
    direct = _played(actions)
    want = episode_reward(direct.trajectory(), profile)

    env = gymnasium.make(gymnasium_env.ENV_ID, task=TASK, faults="harsh", reward=profile)
    env.reset(seed=SEED)
    for a in actions:
        _obs, gym_reward, terminated, truncated, gym_info = env.step(json.dumps(a))
    assert terminated and not truncated

    oe = McpgymEnvironment(faults="harsh", reward=profile)
    oe.reset(task=TASK, seed=SEED)
    for a in actions:
        obs = oe.step(McpgymAction(**a))
    assert obs.done

    assert gym_reward == obs.reward == want.total
    assert want.total == pytest.approx(1.3 if profile == "shaped" else 1.0)
    strip = lambda d: {k: v for k, v in d.items() if k != "profile"}  # noqa: E731
    assert strip(gym_info["reward"]) == strip(obs.info["reward"]) == strip(want.model_dump(mode="json"))
    assert gym_info["reward"]["profile"]["name"] == obs.info["reward"]["profile"]["name"] == profile


def test_serve_openenv_reward_option_gives_the_same_number_over_the_wire() -> None:
    """``mcpgym serve --openenv --reward shaped``: OpenEnv's own client gets 1.30 at the end."""
    import anyio

    actions = _actions()

    async def play(url: str) -> tuple[float, dict]:
        async with GenericEnvClient(base_url=url, message_timeout_s=120) as env:
            await env.reset(task=TASK, seed=SEED)
            for a in actions:
                result = await env.step(a)
            assert result.done
            return float(result.reward), result.observation["info"]["reward"]

    with openenv_server("--faults", "harsh", "--reward", "shaped", "--max-episodes", "2") as url:
        reward, breakdown = anyio.run(play, url)
    assert reward == pytest.approx(1.3) and breakdown["profile"]["name"] == "shaped"


@pytest.mark.parametrize("profile", ["outcome", "shaped"])
def test_the_verifiers_door_gives_the_same_reward(profile: str) -> None:
    """The same rollout through verifiers (its real package in ``.venv-vf``, the model a replay
    of the same actions, the episode on ``mcpgym serve --transport http``) gets the number
    ``GymEpisode``, Gymnasium and OpenEnv give (the test above)."""
    from mcpgym.benchmarks.replay_model import ReplayModel
    from mcpgym.evaluation.tasks import get_task
    from tests.support.servers import spawn_server
    from tests.support.verifiers import drive, verifiers_python

    python = verifiers_python()
    actions = _actions()
    direct = _played(actions)
    want = episode_reward(direct.trajectory(), profile)

    server = spawn_server()
    try:
        with ReplayModel({get_task(TASK).instruction: actions}) as model:
            got = drive(
                python,
                url=server.url,
                token=server.token,
                model_url=model.url,
                tasks=[TASK],
                faults="harsh",
                fault_seed=SEED,
                reward=profile,
            )
    finally:
        server.stop()
    [rollout] = got["rollouts"]
    assert rollout["ok"], rollout["errors"]
    assert rollout["reward"] == want.total == pytest.approx(1.3 if profile == "shaped" else 1.0)
    strip = lambda d: {k: v for k, v in d.items() if k != "profile"}  # noqa: E731
    assert strip(rollout["mcpgym"]["reward"]) == strip(want.model_dump(mode="json"))
    assert rollout["mcpgym"]["reward"]["profile"]["name"] == profile


def test_one_rollout_has_the_same_reward_through_nemo_gym() -> None:
    """NeMo Gym's client against ``integrations/nemo_gym_server.py`` (in ``.venv-nemo``, over a
    real ``mcpgym serve``): the same actions give ``episode_reward``'s number and components
    under each built-in profile, as the plain ``GymEpisode`` does."""
    from tests.conftest import spawn_http_server
    from tests.support.nemo_venv import nemo_python, run_driver

    python = nemo_python()
    actions = _actions()
    direct = _played(actions)
    proc, url, token = spawn_http_server("--faults", "harsh")
    try:
        for profile in ("outcome", "shaped"):
            rollout = {"task": TASK, "fault_seed": SEED, "actions": actions[:-1], "final": actions[-1]["final"]}
            job = {"mcpgym_url": url, "token": token, "reward": profile, "rollouts": [rollout]}
            (got,) = run_driver(python, job)["rollouts"]
            want = episode_reward(direct.trajectory(), profile)
            assert got["verify"]["reward"] == want.total == pytest.approx(1.3 if profile == "shaped" else 1.0)
            assert got["verify"]["reward_components"] == want.components()
            assert got["verify"]["reward_breakdown"] == want.model_dump(mode="json")
    finally:
        proc.terminate()
        proc.wait(timeout=10)
