"""``mcpgym run --agent local:MODEL --model-context N``: the run starts the bundled model's
server with a context window of N tokens (:mod:`mcpgym.evaluation.llm.local_agent`). Before,
``mcpgym run`` could not set it: the server always had 4,096 tokens, and a baseline episode
whose prompt outgrew them errored with HTTP 400.

Without the model: the option's bounds and combinations (through the real CLI), and that the
value reaches the server's command line and llama.cpp's parameters (xllamacpp's own
``CommonParams``, nothing loaded). With the model: a window too small for the task's first
prompt (512 tokens; the prompt is ~716, see test_real_model.py, and fits the default 4,096)
makes llama.cpp refuse it, so the episode errors with llama.cpp's context error, and the
manifest records 512 twice.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from mcpgym.evaluation.cli import app
from mcpgym.evaluation.llm.local_agent import UNSTARTED_URL, LocalModelAgent
from mcpgym.evaluation.llm.local_model import (
    DEFAULT_CONTEXT,
    MAX_CONTEXT,
    MIN_CONTEXT,
    MODEL_NAME,
    ModelUnavailable,
    check_available,
    check_context,
    server_command,
    server_params,
)
from mcpgym.evaluation.records.compressed import trajectories_file
from mcpgym.evaluation.records.trajectory import read_trajectories

LOCAL = f"local:{MODEL_NAME}"


def invoke(args: list[str]):
    return CliRunner().invoke(app, args)


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("100", f"greater than or equal to {MIN_CONTEXT}"),
        ("0", f"greater than or equal to {MIN_CONTEXT}"),
        ("-4096", f"greater than or equal to {MIN_CONTEXT}"),
        ("40000", f"less than or equal to {MAX_CONTEXT}"),
        ("4k", "valid integer"),
        ("2048.5", "valid integer"),
    ],
)
def test_a_context_out_of_bounds_or_not_a_whole_number_is_refused_before_the_run(tmp_path, value, says):
    out = tmp_path / "run"
    done = invoke(["run", "--agent", LOCAL, "--task", "system.dark_mode", "--model-context", value, "--out", str(out)])
    assert done.exit_code == 2, done.output
    assert "--model-context" in done.output and says in done.output
    assert not out.exists()


def test_model_context_without_a_local_agent_is_refused(tmp_path):
    out = tmp_path / "run"
    done = invoke(
        ["run", "--agent", "careful", "--task", "system.dark_mode", "--model-context", "8192", "--out", str(out)]
    )
    assert done.exit_code == 2, done.output
    assert "--model-context sets the model server of local: agents, and this run has none" in done.output
    assert not out.exists()


def test_the_local_provider_serves_only_the_bundled_model(tmp_path):
    """An unknown model name is said first, before whether the bundled model is installed
    (without it, the error spoke of a missing piece package: installing would not help)."""
    for name in ("gpt-4o", "nonexistent-model"):
        done = invoke(["run", "--agent", f"local:{name}", "--task", "system.dark_mode", "--out", str(tmp_path / "r")])
        assert done.exit_code == 2, done.output
        said = " ".join(done.output.split())
        assert f"unknown local model '{name}'; known: {MODEL_NAME}" in said, said
        assert "pip install" not in said and not (tmp_path / "r").exists()
    with pytest.raises(ValueError, match="takes no base_url"):
        LocalModelAgent(MODEL_NAME, base_url="http://127.0.0.1:8080/v1")


def test_check_context_bounds():
    assert check_context(MIN_CONTEXT) == MIN_CONTEXT and check_context(str(MAX_CONTEXT)) == MAX_CONTEXT
    for bad in (MIN_CONTEXT - 1, MAX_CONTEXT + 1, 0, -1, True, 2048.0, "4k", None):
        with pytest.raises(ValueError, match=f"from {MIN_CONTEXT} to {MAX_CONTEXT}"):
            check_context(bad)


def test_the_context_reaches_the_server_command_line_and_its_own_check():
    command = server_command(threads=1, context=8192)
    assert command[command.index("--context") + 1] == "8192"
    assert server_command()[-1] == str(DEFAULT_CONTEXT)
    # the child checks it too, before it assembles or loads anything
    done = subprocess.run(
        [sys.executable, "-m", "mcpgym.evaluation.llm.local_model", "--context", "100"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and f"from {MIN_CONTEXT} to {MAX_CONTEXT}, got '100'" in done.stderr


@pytest.mark.skipif(
    importlib.util.find_spec("xllamacpp") is None,
    reason="xllamacpp is not installed (pip install 'mcpgym[local-model]'): llama.cpp's parameters cannot be read",
)
def test_the_context_is_llama_cpps_n_ctx(tmp_path):
    """xllamacpp's real ``CommonParams`` (no model is loaded: only the parameters are built)."""
    params = server_params(tmp_path / "model.gguf", threads=1, context=8192)
    assert params.n_ctx == 8192 and params.n_parallel == 1
    assert server_params(tmp_path / "model.gguf").n_ctx == DEFAULT_CONTEXT


def test_an_agent_without_its_server_is_described_as_such():
    agent = LocalModelAgent(MODEL_NAME)
    assert agent.base_url == UNSTARTED_URL and agent.describe()["server"] is None
    assert agent.describe()["provider"] == "local" and agent.name == LOCAL
    agent.attach("http://127.0.0.1:5555/v1/", context=8192, threads=1)
    assert agent.base_url == "http://127.0.0.1:5555/v1"
    assert agent.describe()["server"] == {"module": "mcpgym.evaluation.llm.local_model", "context": 8192, "threads": 1}


def test_a_context_too_small_for_the_prompt_is_refused_by_the_server_the_run_started(tmp_path):
    """The real model: ``--model-context 512`` reaches llama.cpp, which refuses the first prompt
    (HTTP 400); with the default 4,096 tokens it would fit. One model load, no generation."""
    try:
        check_available()
    except ModelUnavailable as exc:
        if os.environ.get("MCPGYM_REQUIRE_MODEL") == "1":
            pytest.fail(f"MCPGYM_REQUIRE_MODEL=1 and the model is not installed: {exc}")
        pytest.skip(f"no local model (the package registry could not provide it): {exc}")
    out = tmp_path / "run"
    args = ["run", "--agent", LOCAL, "--model-context", "512", "--task", "system.dark_mode", "--tools", "task"]
    args += ["--trials", "1", "--faults", "none", "--max-turns", "1", "--max-output-tokens", "1"]
    args += ["--agent-option", "max_retries=0", "--quiet", "--out", str(out)]
    done = invoke(args)
    # its one episode errored: a run that mostly failed exits 1, naming the cause (HTTP 400)
    assert done.exit_code == 1 and "most episodes errored" in done.output, done.output
    [traj] = read_trajectories(trajectories_file(out), states=False)
    assert traj.agent == LOCAL and traj.status == "errored"
    assert traj.stop_reason.startswith("provider_error: HTTP 400")
    assert "exceeds the available context size" in traj.stop_reason
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["invocations"][-1]["settings"]["model_context"] == 512
    assert manifest["agents"][0]["describe"]["server"]["context"] == 512

    # --resume (no model load): another --model-context would mix two windows in one run, so it
    # is refused naming both (it was taken silently, the manifest and report keeping 512)
    before = (out / "manifest.json").read_bytes()
    done = invoke(["run", "--resume", "--out", str(out), "--model-context", "1024", "--quiet"])
    said = " ".join(done.output.split())
    assert done.exit_code == 2 and "--model-context 1024 differs from this run's 512" in said, said
    assert (out / "manifest.json").read_bytes() == before
    # more trials for careful alone would leave the local agent short: the usual refusal
    done = invoke(["run", "--resume", "--out", str(out), "--agent", "careful", "--trials", "2", "--quiet"])
    said = " ".join(done.output.split())
    assert done.exit_code == 2 and f"leaves out agent {LOCAL}" in said, said
    # adding a scripted agent works as on a scripted run (it was refused: "--model-context sets
    # the model server of local: agents, and this run has none", though nobody passed it)
    done = invoke(["run", "--resume", "--out", str(out), "--agent", "careful", "--quiet"])
    assert done.exit_code == 0, done.output
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert [a["name"] for a in manifest["agents"]] == [LOCAL, "careful"]
    assert manifest["invocations"][-1]["settings"]["model_context"] == 512
