"""``mcpgym run --executor ray`` on a local Ray cluster (``ray.init(num_cpus=2)``, started once
for the module): the same scores as ``--executor local`` for the same seeds, a worker killed
mid-episode whose episode is sent again and recorded once, and ``--resume`` after the driver
was killed. Skipped only when Ray is not installed (``pip install 'mcpgym[ray]'``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'mcpgym[ray]' (.ci/run installs it)")

from mcpgym.evaluation.agents import SCRIPTED_AGENTS, make_agent  # noqa: E402
from mcpgym.evaluation.run.ray_executor import WORKER_PREFIX  # noqa: E402
from mcpgym.evaluation.run.run_dir import load_run  # noqa: E402
from mcpgym.evaluation.run.runner import AgentEntry, RunConfig, run_evaluation  # noqa: E402
from mcpgym.evaluation.tasks import get_task  # noqa: E402
from tests.conftest import ROOT, run_text  # noqa: E402

TASKS = ["flights.cheapest_fare_lookup", "flights.book_cheapest_berlin_paris"]
TRIALS = 2
EPISODES = len(SCRIPTED_AGENTS) * len(TASKS) * TRIALS
STEP_KEYS = ("step", "tool", "arguments", "is_error", "error_code", "fault", "result")


@pytest.fixture(scope="module")
def cluster():
    """A local 2-CPU Ray cluster for the module; yields its GCS address."""
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


def _settings(out: Path, **kw) -> RunConfig:  # noqa: ANN003
    return RunConfig(out=out, trials=TRIALS, faults="default", concurrency=4, progress=False, **kw)


def _run(out: Path, **kw):  # noqa: ANN003, ANN202
    agents = [AgentEntry(s, make_agent(s)) for s in SCRIPTED_AGENTS]
    return run_evaluation([get_task(t) for t in TASKS], agents, _settings(out, **kw))


def _strip(x):  # noqa: ANN001, ANN202
    """scores.json without its wall-clock figures."""
    if isinstance(x, dict):
        return {k: _strip(v) for k, v in x.items() if "second" not in k and "wall" not in k and k != "episode_id"}
    if isinstance(x, list):
        return [_strip(v) for v in x]
    return x


def _by_key(out: Path) -> dict:
    trajs = load_run(out)
    keys = [(t.agent, t.task_id, t.trial) for t in trajs]
    assert len(keys) == len(set(keys)), f"an episode was recorded twice: {sorted(keys)}"
    return {k: t for k, t in zip(keys, trajs, strict=True)}


def _same_as_local(out: Path, local: Path) -> None:
    assert _strip(json.loads((out / "scores.json").read_text())) == _strip(
        json.loads((local / "scores.json").read_text())
    )
    mine, ref = _by_key(out), _by_key(local)
    assert set(mine) == set(ref) and len(mine) == EPISODES
    for key, t in ref.items():
        assert [s.model_dump(include=set(STEP_KEYS)) for s in mine[key].steps] == [
            s.model_dump(include=set(STEP_KEYS)) for s in t.steps
        ], key
        assert mine[key].final_snapshot == t.final_snapshot, key
        assert {k: v for k, v in mine[key].scores.model_dump().items() if k != "episode_id"} == {
            k: v for k, v in t.scores.model_dump().items() if k != "episode_id"
        }, key


@pytest.fixture(scope="module")
def local_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reference: the same episodes with ``--executor local`` (a spawned server)."""
    out = tmp_path_factory.mktemp("ray") / "local"
    result = _run(out)
    assert result.ran == EPISODES and not result.failures
    return out


def test_ray_scores_equal_local(cluster: str, local_run: Path, tmp_path: Path) -> None:
    result = _run(tmp_path / "ray", executor="ray")
    assert result.ran == EPISODES and not result.failures and result.retried == 0
    assert result.server_url == ""
    _same_as_local(tmp_path / "ray", local_run)
    manifest = json.loads((tmp_path / "ray" / "manifest.json").read_text())
    assert manifest["invocations"][-1]["settings"]["executor"] == "ray" and manifest["finished_at"]
    assert not [a for a in ray.util.list_named_actors() if a.startswith(WORKER_PREFIX)], "workers left behind"


def test_killed_worker_episode_is_sent_again_and_recorded_once(cluster: str, local_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "killed"
    box: dict = {}
    runner = threading.Thread(target=lambda: box.update(result=_run(out, executor="ray", ray_workers=2)))
    runner.start()
    # Once the first episode is written the workers are busy with the next ones: kill one.
    deadline = time.monotonic() + 240
    while not (out / "trajectories.jsonl.zst").exists() or not run_text(out).strip():
        assert time.monotonic() < deadline and runner.is_alive(), "no episode was written"
        time.sleep(0.05)
    # Kill a worker that is playing an episode (one between two episodes would cost nothing).
    while True:
        assert time.monotonic() < deadline and runner.is_alive(), "no worker was seen playing an episode"
        names = sorted(a for a in ray.util.list_named_actors() if a.startswith(WORKER_PREFIX))
        busy = [i for i in ray.get([ray.get_actor(n).info.remote() for n in names]) if i["in_flight"]]
        if busy:
            break
        time.sleep(0.01)
    os.kill(busy[0]["pid"], signal.SIGKILL)
    runner.join(timeout=300)
    assert not runner.is_alive()
    result = box["result"]
    assert result.retried >= 1, "the kill should have hit an episode in flight"
    assert not result.failures and result.ran == EPISODES
    assert len(run_text(out).splitlines()) == EPISODES
    _same_as_local(out, local_run)


def test_resume_after_the_driver_is_killed(cluster: str, local_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "resumed"
    args = [
        sys.executable,
        "-m",
        "mcpgym.evaluation.cli",
        "run",
        *[a for t in TASKS for a in ("--task", t)],
        "--trials",
        str(TRIALS),
        "--faults",
        "default",
        "--concurrency",
        "2",
        "--quiet",
        "--executor",
        "ray",
        "--ray-address",
        cluster,
        "--ray-workers",
        "1",
        "--out",
        str(out),
    ]
    driver = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    lines = out / "trajectories.jsonl.zst"
    deadline = time.monotonic() + 240
    while not lines.exists() or len(run_text(out).splitlines()) < 2:
        assert driver.poll() is None, driver.stdout.read().decode()
        assert time.monotonic() < deadline, "the driver wrote nothing"
        time.sleep(0.05)
    driver.send_signal(signal.SIGKILL)
    driver.wait(timeout=30)
    done = len(run_text(out).splitlines())
    assert done < EPISODES, "the driver should die mid-run"
    resumed = subprocess.run([*args, "--resume"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"{EPISODES - done} episodes run, {done} resumed" in " ".join(resumed.stdout.split())
    _same_as_local(out, local_run)


def test_cli_refuses_ray_options_without_the_ray_executor(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from mcpgym.evaluation.cli import app

    res = CliRunner().invoke(app, ["run", "--task", TASKS[0], "--ray-address", "auto", "--out", str(tmp_path / "x")])
    assert res.exit_code == 2 and "--ray-address and --ray-workers need --executor ray" in res.output
    res = CliRunner().invoke(
        app,
        [
            "run",
            "--task",
            TASKS[0],
            "--executor",
            "ray",
            "--server",
            "http://127.0.0.1:1",
            "--token",
            "t",
            "--out",
            str(tmp_path / "y"),
        ],
    )
    assert res.exit_code == 2 and "exclude each other" in res.output
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()
