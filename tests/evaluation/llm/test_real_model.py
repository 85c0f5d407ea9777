"""A real model in the loop (issue 25): Qwen2.5-Coder-0.5B-Instruct (Q4_K_M GGUF from PyPI) run
by llama.cpp (xllamacpp 0.2.0) behind the OpenAI-compatible shim of
:mod:`mcpgym.evaluation.llm.local_model`, on loopback, against our real MCP server.

What is asserted is the harness, not the model: every reply is a message step with its tokens
and latency, the trajectory's tokens are the sum of its steps', calls that reached the server
carry the server's step numbers 1..n, calls the agent refused are invalid steps without one,
two runs at temperature 0 with one seed give the same trajectory, and a provider that does not
answer in time ends the episode ``errored`` with its attempts recorded.

``.ci/run`` installs ``mcpgym[local-model]`` and sets ``MCPGYM_REQUIRE_MODEL=1``: there a
missing model fails these tests; elsewhere they skip, saying what to install. The model runs
under ``nice`` with 1 thread and a 2,048-token context; an episode is at most 2 turns of 40
output tokens, offered only the task's tools.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

import pytest

from mcpgym.evaluation.llm import LLMLimits, OpenAIAgent, RetryPolicy
from mcpgym.evaluation.llm.local_model import MODEL_NAME, ModelUnavailable, serve_local_model
from mcpgym.evaluation.records.compressed import trajectories_file
from mcpgym.evaluation.records.trajectory import MessageStep, ToolCallStep, read_trajectories
from mcpgym.evaluation.run.runner import AgentEntry, RunConfig, run_evaluation
from mcpgym.evaluation.tasks import get_task
from tests.conftest import run_text

TASK = "system.dark_mode"


@contextlib.contextmanager
def local_model(log: Path):
    """A freshly started shim's base URL; skips (or fails with MCPGYM_REQUIRE_MODEL=1) without
    the model."""
    try:
        with serve_local_model(threads=1, context=2048, niceness=10, log=log) as url:
            yield url
    except ModelUnavailable as exc:
        if os.environ.get("MCPGYM_REQUIRE_MODEL") == "1":
            pytest.fail(f"MCPGYM_REQUIRE_MODEL=1 and the model is not installed: {exc}")
        pytest.skip(f"no local model (the package registry could not provide it): {exc}")


def agent(url: str, **retry: float) -> OpenAIAgent:
    return OpenAIAgent(
        MODEL_NAME,
        base_url=url,
        temperature=0.0,
        seed=7,
        limits=LLMLimits(max_turns=2, max_output_tokens=40),
        retry=RetryPolicy(**{"max_retries": 0, "request_timeout": 240.0, **retry}),
        name="qwen",
    )


def run_once(url: str, http_server, out: Path, **retry: float):
    base, token = http_server
    settings = RunConfig(
        out=out,
        trials=1,
        server_url=base,
        token=token,
        episode_timeout=300.0,
        tool_exposure="task",
        progress=False,
        concurrency=1,
    )
    a = agent(url, **retry)
    run_evaluation([get_task(TASK)], [AgentEntry(a.name, a)], settings)
    [traj] = read_trajectories(trajectories_file(out))
    return traj


def without_timing(traj) -> list[dict]:
    """The steps as JSON without the wall-clock latency (the only field two runs may differ in)."""
    return [{k: v for k, v in s.model_dump(mode="json").items() if k != "latency"} for s in traj.steps]


def check_books(traj) -> None:
    """The harness invariants of one model episode (module docstring)."""
    assert traj.status in ("completed", "limit", "truncated"), traj.stop_reason
    messages = [s for s in traj.steps if isinstance(s, MessageStep)]
    calls = [s for s in traj.steps if isinstance(s, ToolCallStep)]
    assert 1 <= len(messages) <= 2 and [m.turn for m in messages] == list(range(len(messages)))
    # the episode's tokens are the sum of its replies', each reply within its output cap
    assert all(m.tokens is not None and m.tokens.input > 0 for m in messages)
    assert traj.tokens is not None
    assert traj.tokens.input == sum(m.tokens.input for m in messages if m.tokens)
    assert traj.tokens.output == sum(m.tokens.output for m in messages if m.tokens)
    assert all(0 < m.tokens.output <= 40 for m in messages if m.tokens)
    assert all(m.latency is not None and m.latency > 0 and m.retries == [] for m in messages)
    # each call a reply asked for is one step; those that reached the server are numbered 1..n
    assert sum(m.tool_calls for m in messages) == len(calls)
    reached = [c.step for c in calls if c.step is not None]
    assert reached == list(range(1, len(reached) + 1))
    assert all(c.invalid for c in calls if c.step is None)
    assert traj.invalid_calls == 0 and traj.scores is not None
    assert traj.scores["status"] == traj.status


def test_a_real_model_gives_the_same_trajectory_twice_and_an_errored_one_when_too_slow(http_server, tmp_path):
    """Each run starts its own server: llama.cpp's prompt cache changes the arithmetic of a
    request (a cached prefix is not evaluated again), and a greedy choice between two close
    tokens can then differ; from the same server state, temperature 0 and one seed repeat."""
    with local_model(tmp_path / "a.log") as url:
        first = run_once(url, http_server, tmp_path / "a")
    with local_model(tmp_path / "b.log") as url:
        second = run_once(url, http_server, tmp_path / "b")
        slow = run_once(url, http_server, tmp_path / "slow", request_timeout=0.05, max_retries=1, backoff_base=0.0)
    for traj in (first, second):
        check_books(traj)
    assert without_timing(first) == without_timing(second)
    assert (first.final_message, first.status, first.tokens) == (second.final_message, second.status, second.tokens)

    # the errored path: no answer within the request timeout, one retry, then errored
    assert slow.status == "errored" and slow.stop_reason.startswith("provider_error: no answer within 0.05 s")
    failed = slow.metadata["provider"]["failed_request"]
    assert failed["turn"] == 0 and failed["attempts"] == 2 and failed["status"] is None
    assert [r["attempt"] for r in failed["retries"]] == [1] and "no answer within" in failed["retries"][0]["reason"]
    assert slow.steps == [] and slow.scores["status"] == "errored"
    line = json.loads(run_text(tmp_path / "slow"))
    assert line["metadata"]["provider"]["failed_request"]["attempts"] == 2
