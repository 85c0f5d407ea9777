"""The episode runner end to end: `mcpgym run` against a real spawned HTTP server with the
scripted agents, --resume, a run killed with SIGKILL and resumed, `score`, `tasks`, and the
statuses of agents that crash, hang or exceed their call budget."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import httpx
import pytest
from typer.testing import CliRunner

from mcpgym.evaluation.agents import SCRIPTED_AGENTS, AgentResult
from mcpgym.evaluation.cli.app import app
from mcpgym.evaluation.records.compressed import decompress_frames
from mcpgym.evaluation.run.runner import AgentEntry, RunConfig, run_evaluation
from mcpgym.evaluation.tasks import fault_seed_for, get_task, load_tasks
from tests.conftest import ROOT, run_text
from tests.support.score_keys import EPISODE_KEYS

TASKS = [t.id for t in load_tasks("smoke")[:3]]
TRIALS = 2
EPISODES = len(SCRIPTED_AGENTS) * len(TASKS) * TRIALS
RUN_ARGS = [arg for t in TASKS for arg in ("--task", t)] + ["--trials", str(TRIALS), "--quiet"]
AGENT_KEYS = {
    "episodes",
    "success_rate",
    "success_ci95",
    "pass_k",
    "verification_rate",
    "precheck_rate",
    "recovery_attempt_rate",
    "recovery_rate",
    "defeatism_rate",
}


def _lines(run: Path) -> list[str]:
    return run_text(run).splitlines(keepends=True)


@pytest.fixture(scope="module")
def full_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One uninterrupted `mcpgym run` (spawned server, 3 scripted agents x 3 tasks x 2 trials)."""
    out = tmp_path_factory.mktemp("runs") / "full"
    result = CliRunner().invoke(app, ["run", *RUN_ARGS, "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out, result.output


def test_run_writes_one_scored_line_per_episode(full_run: tuple[Path, str]) -> None:
    run, _ = full_run
    lines = _lines(run)
    assert len(lines) == EPISODES and all(line.endswith("\n") for line in lines)
    trajs = [json.loads(line) for line in lines]
    assert {(t["agent"], t["task_id"], t["trial"]) for t in trajs} == {
        (a, tid, trial) for a in SCRIPTED_AGENTS for tid in TASKS for trial in range(TRIALS)
    }
    for t in trajs:
        task = get_task(t["task_id"])
        assert set(t["scores"]) >= EPISODE_KEYS
        assert t["status"] == "completed" and t["steps"] and isinstance(t["ledger"], list)
        assert t["world_seed"] == task.seed and t["fault_seed"] == fault_seed_for(task, t["trial"])
        assert t["fault_profile"] == "default" and t["level"] == task.level and t["feasible"] == task.feasible
        # a compact line: initial and gold in snapshots/, the final state as a diff
        assert t["stored"]["initial"] and t["stored"]["gold"] and t["stored"]["final_diff"] is not None
        assert [s["step"] for s in t["steps"]] == list(range(1, len(t["steps"]) + 1))
        assert t["metadata"]["extra_checks"] == [c.model_dump(mode="json") for c in task.checks]
    # The scripted agents' habits show in the scores.
    by_agent = {a: [t["scores"] for t in trajs if t["agent"] == a] for a in SCRIPTED_AGENTS}
    assert all(s["verified_writes"] == 0 for s in by_agent["overconfident"])
    assert all(s["recovery_attempts"] == 0 for s in by_agent["defeatist"])
    assert sum(s["success"] for s in by_agent["careful"]) >= sum(s["success"] for s in by_agent["overconfident"])


def test_run_writes_manifest_scores_and_report(full_run: tuple[Path, str]) -> None:
    run, output = full_run
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["versions"]["mcpgym"] and manifest["versions"]["mcp"].startswith("2.")
    assert manifest["versions"]["python"] == ".".join(map(str, sys.version_info[:3]))
    assert manifest["task_ids"] == TASKS and manifest["trials"] == TRIALS and manifest["suite"] is None
    assert [a["name"] for a in manifest["agents"]] == list(SCRIPTED_AGENTS)
    assert manifest["fault_profile"]["name"] == "default" and manifest["fault_profile"]["rates"]["transient"] > 0
    for tid in TASKS:
        task = get_task(tid)
        assert manifest["seeds"][tid] == {
            "world_seed": task.seed,
            "fault_seeds": [fault_seed_for(task, i) for i in range(TRIALS)],
        }
    assert manifest["server"]["spawned"] is True and manifest["server"]["url"].startswith("http://127.0.0.1:")
    assert manifest["concurrency"] == 4 and manifest["client"] == {"mcp_mode": "auto", "validate_output": False}
    assert manifest["started_at"] and manifest["finished_at"] and isinstance(manifest["command"], list)
    assert manifest["invocations"][0]["settings"]["trials"] == TRIALS
    assert manifest["invocations"][0]["settings"]["out"] == str(run)

    scores = json.loads((run / "scores.json").read_text())
    assert set(scores["agents"]) == set(SCRIPTED_AGENTS)
    for agent, m in scores["agents"].items():
        assert set(m) >= AGENT_KEYS, agent
        assert m["episodes"] == len(TASKS) * TRIALS
        assert set(m["pass_k"]) == {"1", "2"} and len(m["success_ci95"]) == 2
    assert scores["agents"]["overconfident"]["verification_rate"] == 0.0

    html = (run / "report.html").read_text()
    md = (run / "report.md").read_text()
    for name in SCRIPTED_AGENTS:
        assert name in html and name in md and name in output
    assert "<svg" in html and "report.html" in output


def test_resume_skips_finished_episodes_and_dirty_dirs_are_refused(full_run: tuple[Path, str]) -> None:
    run, _ = full_run
    before, scores_before = (run / "trajectories.jsonl.zst").read_bytes(), (run / "scores.json").read_text()
    result = CliRunner().invoke(app, ["run", *RUN_ARGS, "--out", str(run), "--resume"])
    assert result.exit_code == 0, result.output
    assert f"0 episodes run, {EPISODES} resumed" in " ".join(result.output.split())  # the title wraps at spaces
    assert (run / "trajectories.jsonl.zst").read_bytes() == before
    assert json.loads((run / "scores.json").read_text()) == json.loads(scores_before)
    assert len(json.loads((run / "manifest.json").read_text())["invocations"]) == 2

    refused = CliRunner().invoke(app, ["run", *RUN_ARGS, "--out", str(run)])
    assert refused.exit_code == 2 and "is not empty" in refused.output and "--resume" in refused.output


def _server_down(url: str, wait: float = 15.0) -> bool:
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            httpx.get(f"{url}/health", timeout=1.0)
        except httpx.HTTPError:
            return True
        time.sleep(0.1)
    return False


def test_killed_run_resumes_to_the_same_scores(
    full_run: tuple[Path, str], http_server: tuple[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpgym.evaluation.cli", "run", *RUN_ARGS, "--out", str(out), "--concurrency", "1"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    path = out / "trajectories.jsonl.zst"  # one zstd frame per line
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if path.exists() and decompress_frames(path.read_bytes())[0].count(b"\n") >= EPISODES // 2:
                break
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    data, _, torn = decompress_frames(path.read_bytes())
    assert not torn and data.endswith(b"\n")  # every frame whole, never a partial line
    assert EPISODES // 2 <= data.count(b"\n") < EPISODES
    for line in data.splitlines():
        json.loads(line)
    # The killed runner's server went with it (PR_SET_PDEATHSIG).
    assert _server_down(json.loads((out / "manifest.json").read_text())["server"]["url"])

    url, token = http_server  # resume against another server: the episodes do not depend on it
    result = CliRunner().invoke(
        app, ["run", *RUN_ARGS, "--out", str(out), "--resume", "--server", url, "--token", token]
    )
    assert result.exit_code == 0, result.output
    lines = _lines(out)
    assert len(lines) == EPISODES
    assert len({(t["agent"], t["task_id"], t["trial"]) for t in map(json.loads, lines)}) == EPISODES
    full, _ = full_run
    assert json.loads((out / "scores.json").read_text()) == json.loads((full / "scores.json").read_text())


def test_score_command_rescores_a_run_dir(full_run: tuple[Path, str]) -> None:
    run, _ = full_run
    result = CliRunner().invoke(app, ["score", str(run), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    stored = json.loads((run / "scores.json").read_text())
    assert data["agents"] == stored["agents"]  # re-scoring with the same scorer changes nothing
    assert len(data["episodes"]) == EPISODES and all(set(e["scores"]) >= EPISODE_KEYS for e in data["episodes"])
    assert data["problems"] == [] and all(e["faults"] == "ledger" for e in data["episodes"])
    table = CliRunner().invoke(app, ["score", str(run)])
    assert table.exit_code == 0 and "careful" in table.output
    missing = CliRunner().invoke(app, ["score", str(run / "nope")])
    assert missing.exit_code == 2 and "no such file or directory" in missing.output


def test_tasks_command_lists_the_suite() -> None:
    result = CliRunner().invoke(app, ["tasks", "--suite", "smoke", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert [r["id"] for r in rows] == [t.id for t in load_tasks("smoke")]
    keys = {"id", "source", "apps", "level", "tags", "feasible", "oracle_apps", "oracle_calls", "needs_user"}
    assert all(set(r) == keys for r in rows)
    unknown = CliRunner().invoke(app, ["tasks", "--suite", "nope"])
    assert unknown.exit_code == 2 and "smoke" in unknown.output


class _Crash:
    name = "crash"

    async def run(self, task, tools, call, context=None):  # noqa: ANN001, ANN201
        await call("system_get_time", {})
        raise RuntimeError("boom")


class _Hang:
    name = "hang"

    async def run(self, task, tools, call, context=None):  # noqa: ANN001, ANN201
        await call("system_get_time", {})
        await anyio.sleep(60)


class _Greedy:
    name = "greedy"

    async def run(self, task, tools, call, context):  # noqa: ANN001, ANN201
        assert context.trial == 0 and {t.name for t in tools} >= {"system_get_time"}
        assert {t.kind for t in tools} <= {"read", "write", "auth"}
        while True:  # never stops by itself: the call budget does (CallLimitReached)
            await call("system_get_time", {})


class _Sloppy:
    name = "sloppy"

    async def run(self, task, tools, call, context=None):  # noqa: ANN001, ANN201
        bad = await call("system_get_time", ["not", "an", "object"])
        missing = await call("no_such_tool", {})
        return AgentResult(final_message=f"{bad.payload['error']['code']} {missing.payload['error']['code']}")


def test_agents_that_crash_hang_overrun_or_misbehave(http_server: tuple[str, str], tmp_path: Path) -> None:
    url, token = http_server
    task = get_task(TASKS[0])
    # The hang gets a 2-second episode timeout in a run of its own; the others a generous one,
    # so that a loaded machine (a parallel test run) cannot turn their ends into timeouts.
    trajs = {}
    for out, odd, timeout in (("odd", (_Crash(), _Greedy(), _Sloppy()), 120.0), ("hang", (_Hang(),), 2.0)):
        settings = RunConfig(
            out=tmp_path / out, trials=1, server_url=url, token=token, episode_timeout=timeout, progress=False
        )
        result = run_evaluation([task], [AgentEntry(a.name, a) for a in odd], settings)
        assert result.ran == len(odd) and not result.failures and result.server_url == url
        trajs |= {t["agent"]: t for t in map(json.loads, _lines(tmp_path / out))}
        assert os.path.exists(tmp_path / out / "scores.json")
    assert trajs["crash"]["status"] == "errored" and trajs["crash"]["stop_reason"] == "agent raised RuntimeError: boom"
    assert trajs["hang"]["status"] == "limit" and "timed out after 2 wall seconds" in trajs["hang"]["stop_reason"]
    assert trajs["greedy"]["status"] == "limit" and len(trajs["greedy"]["steps"]) == task.max_calls
    assert trajs["sloppy"]["status"] == "completed" and trajs["sloppy"]["invalid_calls"] == 0
    assert trajs["sloppy"]["final_message"] == "invalid_argument not_found"
    bad, missing = trajs["sloppy"]["steps"]  # the bad call never left the runner: a step without a call-log number
    assert (bad["tool"], bad["step"], bad["invalid"], bad["error_code"]) == (
        "system_get_time",
        None,
        True,
        "invalid_argument",
    )
    assert bad["raw_arguments"] == '["not", "an", "object"]'
    assert (missing["tool"], missing["step"], missing["invalid"], missing["error_code"]) == (
        "no_such_tool",
        1,
        True,
        "not_found",
    )
    assert trajs["sloppy"]["scores"]["invalid_calls"] == 2
    for t in trajs.values():  # every episode still has its final state and scores
        assert t["stored"]["final_diff"] is not None and t["scores"]["success"] is False
    # Episodes are deleted on the server once read.
    live = httpx.get(f"{url}/control/episodes", headers={"Authorization": f"Bearer {token}"}).json()["episodes"]
    assert not set(live) & {t["episode_id"] for t in trajs.values()}


def test_out_dir_rules_and_tail_repair(tmp_path: Path) -> None:
    from mcpgym.evaluation.run.runner import RunError, load_run, prepare_out_dir

    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    (out / "scores.json").write_text("{}")
    for force in (False, True):  # not proven mcpgym's (no marker): refused either way, nothing deleted
        with pytest.raises(RunError, match="in the way: notes.txt, scores.json"):
            prepare_out_dir(out, resume=False, force=force)
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt", "scores.json"]
    # A complete last record that only lacks its newline is kept (and gets the newline).
    record = json.dumps({"episode_id": "e1", "agent": "a", "task_id": "t", "trial": 0, "steps": []}).encode()
    second = record.replace(b"e1", b"e2").replace(b'"trial": 0', b'"trial": 1')
    (out / "trajectories.jsonl").write_bytes(record + b"\n" + second)
    assert [t.episode_id for t in load_run(out, repair=True)] == ["e1", "e2"]
    assert (out / "trajectories.jsonl").read_bytes().endswith(b"\n")
