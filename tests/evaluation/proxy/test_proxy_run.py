"""``mcpgym run --proxy`` (issue 28): a scripted replay agent against ``mcp-server-git`` through
the proxy, tasks given as instructions plus checks on the final message and on a read-back
call (no gold world), scored by checks alone; ``mcpgym score`` gives the same verdict."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from mcpgym.evaluation.proxy.run import load_proxy_tasks
from mcpgym.evaluation.records.trajectory import ToolCallStep, Trajectory
from tests.conftest import ROOT
from tests.server.test_proxy_git import head_message, make_repo
from tests.support.proxy_helpers import profile_file, recorded, score_json

GIT_SERVER = shutil.which("mcp-server-git")


def replay_file(path, repo) -> None:
    """A recorded episode for the replay agent: add b.txt, commit it, read the log, answer."""
    calls = [
        ("git_add", {"repo_path": str(repo), "files": ["b.txt"]}),
        ("git_commit", {"repo_path": str(repo), "message": "add b"}),
        ("git_log", {"repo_path": str(repo), "max_count": 1}),
    ]
    lines = []
    for task_id in ("commit_b", "commit_b_wrong"):
        traj = Trajectory(
            episode_id=f"rec-{task_id}",
            task_id=task_id,
            agent="recorded",
            steps=[ToolCallStep(step=i + 1, tool=t, arguments=a) for i, (t, a) in enumerate(calls)],
            final_message="Committed b.txt as 'add b'.",
        )
        lines.append(traj.model_dump_json())
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.skipif(GIT_SERVER is None, reason="mcp-server-git is not installed")
def test_run_proxy_replays_an_agent_and_judges_by_final_message_and_read_back(tmp_path):
    repo, out = make_repo(tmp_path / "repo"), tmp_path / "run"
    (repo / "b.txt").write_text("b\n")
    replay_file(tmp_path / "recorded.jsonl", repo)
    tasks = tmp_path / "tasks.yaml"
    log = {"tool": "git_log", "arguments": {"repo_path": str(repo), "max_count": 1}}
    tasks.write_text(
        json.dumps(
            [
                {
                    "id": "commit_b",
                    "instruction": "Stage b.txt and commit it with the message 'add b'.",
                    "checks": [{"kind": "contains", "value": "committed"}],
                    "read_back": {**log, "checks": [{"kind": "contains", "value": "add b"}]},
                },
                {
                    "id": "commit_b_wrong",
                    "instruction": "Commit b.txt with the message 'something else'.",
                    "read_back": {**log, "checks": [{"kind": "contains", "value": "something else"}]},
                },
            ]
        )
    )
    assert [t.id for t in load_proxy_tasks(tasks)] == ["commit_b", "commit_b_wrong"]
    faults = profile_file(tmp_path, "t", {"tools": {"git_commit": {"timeout": 1.0}}, "max_consecutive": 1})
    proc = subprocess.run(
        [
            sys.executable, "-m", "mcpgym.evaluation.cli", "run",
            "--proxy", f"{GIT_SERVER} --repository {repo}",
            "--tasks", str(tasks), "--agent", f"replay:{tmp_path / 'recorded.jsonl'}",
            "--out", str(out), "--faults", faults, "--trials", "1", "--fault-seed", "3",
        ],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    first, second = recorded(out)
    # task 1: the commit timed out for the agent but applied; its final message and the
    # read-back (git_log shows "add b") pass: success by checks alone, no gold state
    assert first["task_id"] == "commit_b" and first["instruction"].startswith("Stage b.txt")
    assert [s["tool"] for s in first["steps"]] == ["git_add", "git_commit", "git_log"]
    assert [(e["kind"], e["applied"]) for e in first["ledger"]] == [("timeout", True)]
    assert first["fault_seed"] == 3 and first["metadata"]["read_back"]["is_error"] is False
    assert first["scores"]["success"] is True and first["scores"]["total"] is None
    assert [c["passed"] for c in first["scores"]["extra_checks"]] == [True, True]
    # task 2 (the same repository: its log head is still "add b"): the read-back check fails
    assert second["scores"]["success"] is False
    assert [c["passed"] for c in second["scores"]["extra_checks"]] == [False]
    assert head_message(repo) == "add b"
    rescored = {e["scores"]["task_id"]: e["scores"]["success"] for e in score_json(out)["episodes"]}
    assert rescored == {"commit_b": True, "commit_b_wrong": False}


def test_the_task_file_of_docs_proxy_md_loads(tmp_path):
    import re

    text = (ROOT / "docs" / "proxy.md").read_text(encoding="utf-8")
    block = re.findall(r"```json\n(.*?)```", text, flags=re.S)[1]
    (tmp_path / "tasks.json").write_text(block)
    (task,) = load_proxy_tasks(tmp_path / "tasks.json")
    assert task.id == "commit_b" and task.read_back is not None and task.read_back.tool == "git_log"


def test_proxy_task_files_refuse_what_cannot_be_judged(tmp_path):
    bad = tmp_path / "t.json"
    bad.write_text(json.dumps([{"id": "x", "instruction": "do it"}]))
    with pytest.raises(ValueError, match=r"t.json: task 0 \(x\).*nothing to judge"):
        load_proxy_tasks(bad)
    bad.write_text(json.dumps([{"id": "x", "instruction": "i", "read_back": {"tool": "t", "checks": []}}]))
    with pytest.raises(
        ValueError, match=r"task 0 \(x\): field 'read_back.checks' \(a JSON array\): list should have at least 1 item"
    ):
        load_proxy_tasks(bad)
    out = subprocess.run(
        [sys.executable, "-m", "mcpgym.evaluation.cli", "run", "--proxy", "x", "--out", str(tmp_path / "o")],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip
    assert out.returncode == 2 and "--proxy needs --tasks FILE" in out.stderr
