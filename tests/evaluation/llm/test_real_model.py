"""A real model in the loop (issue 25): Qwen2.5-Coder-0.5B-Instruct (Q4_K_M GGUF from PyPI) run
by llama.cpp (xllamacpp 0.2.0) behind the OpenAI-compatible shim of
:mod:`mcpgym.evaluation.llm.local_model`, on loopback, against our real MCP server.

What is asserted is the harness, not the model: every reply is a message step with its tokens
and latency, the trajectory's tokens are the sum of its steps', calls that reached the server
carry the server's step numbers 1..n, calls the agent refused are invalid steps without one and
are counted as invalid calls, two runs at temperature 0 with one seed give the same trajectory,
a final reply cut at the output-token limit ends the episode ``truncated``, and a provider that
does not answer in time ends the episode ``errored`` with its attempts recorded.

One model server serves the whole module (:func:`runs`, loaded once). llama.cpp's prompt cache
changes a request's arithmetic (a prompt evaluated whole, or only its last token against a
cached prefix), and a greedy choice between two close tokens can then differ; so the first
episode, cut at 1 output token (the ``truncated`` case), evaluates the task's first prompt once,
and both compared runs then start from that same cache: each evaluates only the prompt's last
token, and they repeat exactly. The errored episode comes last, also capped at 1 output token,
so that the requests it gave up on cost the server next to nothing.

Cost (the model's CPU, whatever the machine's load): one model load, one whole first prompt
(716 tokens), and per compared run the last token, the second turn's ~105 new prompt tokens and
at most 2 x 40 output tokens. ``.ci/run`` installs ``mcpgym[local-model]`` and sets
``MCPGYM_REQUIRE_MODEL=1``: there a missing model fails these tests; elsewhere they skip,
saying what to install. The model runs under ``nice`` with 1 thread and a 2,048-token context;
an episode is at most 2 turns of 40 output tokens, offered only the task's tools.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from mcpgym.evaluation.llm import LLMLimits, OpenAIAgent, RetryPolicy
from mcpgym.evaluation.llm.local_model import MODEL_NAME, ModelUnavailable, serve_local_model
from mcpgym.evaluation.records.compressed import trajectories_file
from mcpgym.evaluation.records.trajectory import MessageStep, ToolCallStep, Trajectory, read_trajectories
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


TWO_TURNS = LLMLimits(max_turns=2, max_output_tokens=40)
"""The compared runs: two turns (a call and what follows its result) of at most 40 tokens."""
ONE_TOKEN = LLMLimits(max_turns=1, max_output_tokens=1)
"""The primer and the errored episode: one turn of one output token."""


def agent(url: str, limits: LLMLimits = TWO_TURNS, **retry: float) -> OpenAIAgent:
    return OpenAIAgent(
        MODEL_NAME,
        base_url=url,
        temperature=0.0,
        seed=7,
        limits=limits,
        retry=RetryPolicy(**{"max_retries": 0, "request_timeout": 240.0, **retry}),
        name="qwen",
    )


def run_once(url: str, http_server, out: Path, limits: LLMLimits | None = None, **retry: float):
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
    a = agent(url, limits or TWO_TURNS, **retry)
    run_evaluation([get_task(TASK)], [AgentEntry(a.name, a)], settings)
    [traj] = read_trajectories(trajectories_file(out))
    return traj


@dataclass
class Runs:
    primer: Trajectory  # cut at 1 output token: truncated
    first: Trajectory
    second: Trajectory
    slow: Trajectory  # no answer within 0.05 s: errored
    out: Path


@pytest.fixture(scope="module")
def runs(http_server, tmp_path_factory) -> Runs:
    """The module's four episodes on one model server, in the order the module docstring gives."""
    tmp = tmp_path_factory.mktemp("real-model")
    with local_model(tmp / "model.log") as url:
        primer = run_once(url, http_server, tmp / "primer", ONE_TOKEN)
        first = run_once(url, http_server, tmp / "a")
        second = run_once(url, http_server, tmp / "b")
        slow = run_once(
            url, http_server, tmp / "slow", ONE_TOKEN, request_timeout=0.05, max_retries=1, backoff_base=0.0
        )
    return Runs(primer, first, second, slow, tmp)


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
    reached = [c for c in calls if c.step is not None]
    assert [c.step for c in reached] == list(range(1, len(reached) + 1))
    refused = [c for c in calls if c.step is None]
    assert all(c.invalid and c.error_code for c in refused)
    # invalid calls: those refused before the server plus the logged ones the server found invalid
    assert traj.scores is not None and traj.scores.status == traj.status
    assert traj.scores.invalid_calls == len(refused) + sum(c.invalid for c in reached)
    assert traj.scores.valid_calls == sum(not c.invalid for c in reached)


def test_every_reply_and_call_is_a_step_and_the_tokens_add_up(runs):
    for traj in (runs.first, runs.second):
        check_books(traj)


def test_two_runs_at_temperature_0_with_one_seed_give_the_same_trajectory(runs):
    first, second = runs.first, runs.second
    assert without_timing(first) == without_timing(second)
    assert (first.final_message, first.status, first.tokens) == (second.final_message, second.status, second.tokens)


def test_a_final_reply_cut_at_the_output_token_limit_is_truncated(runs):
    primer = runs.primer
    assert primer.status == "truncated" and primer.scores.status == "truncated"
    assert primer.stop_reason == "final reply cut off by the output-token limit (length, max 1 tokens)"
    [message] = primer.steps
    assert isinstance(message, MessageStep) and message.tokens is not None and message.tokens.output == 1
    assert primer.final_message and primer.tokens == message.tokens


def test_a_provider_that_does_not_answer_in_time_errors_the_episode(runs):
    # no answer within the request timeout, one retry, then errored
    slow = runs.slow
    assert slow.status == "errored" and slow.stop_reason.startswith("provider_error: no answer within 0.05 s")
    failed = slow.metadata["provider"]["failed_request"]
    assert failed["turn"] == 0 and failed["attempts"] == 2 and failed["status"] is None
    assert [r["attempt"] for r in failed["retries"]] == [1] and "no answer within" in failed["retries"][0]["reason"]
    assert slow.steps == [] and slow.scores.status == "errored"
    line = json.loads(run_text(runs.out / "slow"))
    assert line["metadata"]["provider"]["failed_request"]["attempts"] == 2
