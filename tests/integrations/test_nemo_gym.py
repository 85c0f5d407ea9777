"""NeMo Gym's own client (``nemo_gym.server_utils.ServerClient``, in ``.venv-nemo``) against
mcpgym's resources server (integrations/nemo_gym_server.py) over a real ``mcpgym serve``:
seed_session -> the episode's tools over its MCP URL -> verify with the reward's components;
refused seeds and lost sessions as NeMo Gym answers them; 64 concurrent rollouts, each its
own episode, twins of one seed giving the same trajectory and reward as a lone ``GymEpisode``.

Needs ``.venv-nemo`` (tests/support/nemo_venv.py: skips saying how to make it, fails under
``MCPGYM_REQUIRE_NEMO=1``)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from mcpgym.evaluation.agents import make_agent
from mcpgym.evaluation.run.gym import GymEpisode
from mcpgym.evaluation.scoring.reward import episode_reward
from tests.conftest import spawn_http_server
from tests.support.nemo_venv import nemo_python, run_driver

TASK = "flights.book_cheapest_berlin_paris"
ROLLOUTS = 64
SEEDS = [300 + i % (ROLLOUTS // 2) for i in range(ROLLOUTS)]
"""Rollout i and i + 32 share a fault seed; the 32 seeds differ."""


@pytest.fixture(scope="module")
def nemo() -> Any:
    """The ``.venv-nemo`` interpreter (or a skip naming how to make it)."""
    return nemo_python()


@pytest.fixture(scope="module")
def served():
    """``mcpgym serve --transport http`` for this module: (url, token)."""
    proc, url, token = spawn_http_server("--max-episodes", str(ROLLOUTS), "--faults", "harsh")
    try:
        yield url, token
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def careful(fault_seed: int) -> tuple[list[dict[str, Any]], str, GymEpisode]:
    """The careful agent on a lone ``GymEpisode`` of ``fault_seed`` (harsh faults): its tool
    calls, its final message, and the finished episode."""
    ep = GymEpisode.create(TASK, faults="harsh", fault_seed=fault_seed)
    calls: list[dict[str, Any]] = []
    step = ep.acall

    async def record(name: str, arguments: Any = None) -> Any:
        calls.append({"tool": name, "arguments": arguments or {}})
        return await step(name, arguments)

    ep.acall = record  # type: ignore[method-assign]
    traj = anyio.run(ep.run_agent, make_agent("careful"))
    return calls, traj.final_message, ep


def test_seed_tools_verify_through_nemo_gyms_client(nemo, served) -> None:
    url, token = served
    calls, final, lone = careful(7)
    job = {"mcpgym_url": url, "token": token, "reward": "shaped", "rollouts": []}
    job["rollouts"] = [{"task": TASK, "fault_seed": 7, "actions": calls, "final": final}]
    (got,) = run_driver(nemo, job)["rollouts"]
    seed, verify = got["seed"], got["verify"]
    assert seed["mcp"]["url_path"] == f"{url}/episodes/{seed['episode_id']}/mcp" and seed["mcp"]["transport"] == "http"
    assert (seed["task"], seed["world_seed"], seed["fault_seed"], seed["tools"]) == (TASK, lone.task.seed, 7, 39)
    assert seed["instruction"] == lone.instruction
    assert [r["is_error"] for r in got["results"]] == [
        s.is_error for s in lone.trajectory().steps if hasattr(s, "is_error")
    ]
    want = episode_reward(lone.trajectory(), "shaped")
    assert verify["reward"] == want.total == pytest.approx(1.3)
    assert verify["reward_components"] == want.components()
    assert verify["reward_components"]["outcome"] == 1.0 and verify["reward_components"]["process"] == pytest.approx(
        0.1
    )
    assert verify["success"] is True and verify["reward_breakdown"]["profile"]["name"] == "shaped"
    assert verify["response"]["output"][0]["content"][0]["text"] == final  # NeMo Gym's request comes back


def test_refused_seeds_and_lost_sessions_are_nemo_gym_errors(nemo) -> None:
    proc, url, token = spawn_http_server("--max-episodes", "1")
    try:
        job = {
            "mcpgym_url": url,
            "token": token,
            "rollouts": [
                {"task": "no.such_task"},  # refused by mcpgym: 422 with its reason
                {"task": TASK, "trial": -1},  # refused by the request model: FastAPI's 422
                {"task": TASK, "seed": False},  # never seeded: lost session
                {"task": TASK, "delete_before_verify": True},  # its episode is gone on mcpgym
                {"task": TASK, "verify": False},  # holds the only episode ...
                {"task": TASK},  # ... so this seed is refused: 429
            ],
        }
        unknown, negative, unseeded, deleted, holding, full = run_driver(nemo, job)["rollouts"]
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert unknown["seed"]["status"] == 422 and "unknown task 'no.such_task'" in unknown["seed"]["detail"]
    assert negative["seed"]["status"] == 422 and negative["seed"]["detail"][0]["loc"] == ["body", "trial"]
    assert unseeded["verify"] == {
        "status": 400,
        "detail": "session not seeded: call /seed_session first (or it was verified already)",
    }
    assert deleted["verify"]["status"] == 410 and deleted["seed"]["episode_id"] in deleted["verify"]["detail"]
    assert "episode_id" in holding["seed"] and "verify" not in holding
    assert full["seed"]["status"] == 429 and "episode limit reached" in full["seed"]["detail"]


def test_64_concurrent_rollouts_are_isolated_and_seeded(nemo, served) -> None:
    url, token = served
    lone = {seed: careful(seed) for seed in set(SEEDS)}
    job = {"mcpgym_url": url, "token": token, "reward": "shaped", "concurrency": ROLLOUTS, "rollouts": []}
    for seed in SEEDS:
        calls, final, _ep = lone[seed]
        job["rollouts"].append({"task": TASK, "fault_seed": seed, "actions": calls, "final": final})
    rollouts = run_driver(nemo, job, timeout=600)["rollouts"]
    ids = {r["seed"]["episode_id"] for r in rollouts}
    assert len(ids) == ROLLOUTS, "each rollout its own episode"
    for i, r in enumerate(rollouts):
        twin = rollouts[(i + ROLLOUTS // 2) % ROLLOUTS]
        assert r["seed"]["fault_seed"] == SEEDS[i]
        assert r["results"] == twin["results"], f"rollout {i}: same seed, same observations"
        assert r["verify"]["reward_breakdown"] == twin["verify"]["reward_breakdown"]
        want = episode_reward(lone[SEEDS[i]][2].trajectory(), "shaped")
        assert r["verify"]["reward"] == want.total and r["verify"]["reward_components"] == want.components()
    schedules = {json.dumps(r["results"], sort_keys=True) for r in rollouts}
    assert len(schedules) > ROLLOUTS // 4, "different seeds met different faults"


def test_the_resources_server_imports_no_mcpgym() -> None:
    """integrations/nemo_gym_server.py runs where mcpgym cannot be installed (mcp<2): its
    imports are NeMo Gym's, FastAPI's, httpx, pydantic, omegaconf, uvicorn and the standard library."""
    import ast
    import sys

    from tests.conftest import ROOT

    tree = ast.parse((ROOT / "integrations" / "nemo_gym_server.py").read_text(encoding="utf-8"))
    names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    outside = names - set(sys.stdlib_module_names)
    assert outside == {"fastapi", "httpx", "nemo_gym", "omegaconf", "pydantic", "uvicorn"}
