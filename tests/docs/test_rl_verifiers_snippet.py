"""docs/rl.md's verifiers Python snippet runs as written in the verifiers venv (``.venv-vf``;
the block is marked not-run for tests/docs/test_doc_blocks.py, which runs blocks in mcpgym's
venv), against ``mcpgym serve --transport http`` and a scripted model on loopback."""

from __future__ import annotations

import os
import re
import subprocess

from mcpgym.benchmarks.replay_model import ReplayModel
from mcpgym.evaluation.tasks import fault_seed_for, get_task
from tests.support.servers import spawn_server
from tests.support.verifiers import ROOT, scripted_actions, verifiers_python

MARK = "tests/docs/test_rl_verifiers_snippet.py runs it there as written -->\n```python\n"


def test_the_verifiers_snippet_runs_in_the_verifiers_venv(tmp_path) -> None:
    python = verifiers_python()
    text = (ROOT / "docs" / "rl.md").read_text(encoding="utf-8")
    assert MARK in text
    block = text.split(MARK, 1)[1].split("\n```", 1)[0]
    (tmp_path / "snippet.py").write_text(block, encoding="utf-8")
    task = get_task("system.dark_mode")
    server = spawn_server()
    try:
        with ReplayModel({task.instruction: scripted_actions(task.id)}) as model:
            env = {
                **os.environ,
                "MCPGYM_URL": server.url,
                "MCPGYM_TOKEN": server.token,
                "OPENAI_BASE_URL": model.url,
                "OPENAI_API_KEY": "sk-test",
            }
            run = subprocess.run(
                [python, "snippet.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
            )
    finally:
        server.stop()
    assert run.returncode == 0, run.stderr[-3000:]
    lines = [line.split() for line in run.stdout.splitlines() if re.match(r"system\.dark_mode \d", line)]
    assert len(lines) == 6
    by_trial: dict[str, set[float]] = {}
    for _task_id, trial, fault_seed, reward in lines:
        assert int(fault_seed) == fault_seed_for(task, int(trial))
        by_trial.setdefault(trial, set()).add(float(reward))
    # the careful agent's actions, replayed: success (1.0) plus shaped terms, one number per group
    assert sorted(by_trial) == ["0", "1"] and all(len(r) == 1 and min(r) >= 1.0 for r in by_trial.values())
