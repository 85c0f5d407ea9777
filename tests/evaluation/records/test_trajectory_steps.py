"""Trajectories keep everything the agent did (issue 14): a whole ``run_evaluation`` of an
OpenAI-compatible agent against a loopback fake provider and our HTTP server.

The model first calls a tool that does not exist and a tool with unparsable arguments, then a
real tool with an argument of the wrong JSON type, then the right call, then answers. The
trajectory line holds every model message (text, reasoning, tokens per turn) and every call in
order, invalid ones flagged with the error the model got back; re-scoring the file, and
replaying it, give the same scores.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mcpgym.evaluation.cli import app
from mcpgym.evaluation.records.trajectory import MessageStep, ToolCallStep, read_trajectories
from mcpgym.evaluation.run.run_dir import trajectories_file
from mcpgym.evaluation.run.runner import AgentEntry, RunConfig, run_evaluation
from mcpgym.evaluation.tasks import get_task
from tests.support.fake_provider import OpenAIDialect, Raw  # the `fake` fixture is in tests/conftest.py

D = OpenAIDialect()
TASK = "system.dark_mode"


def _script(d: OpenAIDialect) -> list:
    first = d.reply(
        [("h1", "system_enable_dark_mode", {}), ("j1", "system_update_setting", Raw('{"key": "theme",'))],
        text="Let me switch the theme.",
        usage=(100, 20),
    )
    first["choices"][0]["message"]["reasoning_content"] = "The user wants dark mode."

    def second(body: dict) -> dict:
        (h, hp, _), (j, jp, _) = d.results(body)
        assert (h, hp["error"]["code"], hp["error"]["field"]) == ("h1", "not_found", "name")
        assert (j, jp["error"]["code"]) == ("j1", "invalid_argument")
        return d.reply([("t1", "system_update_setting", {"key": "theme", "value": 1})], usage=(150, 10))

    def third(body: dict) -> dict:
        [(cid, payload, _)] = d.results(body)
        assert cid == "t1" and payload["error"]["code"] == "invalid_argument" and payload["error"]["field"] == "value"
        return d.reply([("ok", "system_update_setting", {"key": "theme", "value": "dark"})], usage=(180, 10))

    return [first, second, third, d.reply(text="Dark mode is on now.", usage=(200, 8))]


def test_every_action_is_a_step_and_rescoring_gives_the_same_scores(fake, http_server, tmp_path: Path) -> None:  # noqa: F811
    url, token = http_server
    fake.play(*_script(D))
    agent = D.agent(fake)
    out = tmp_path / "llm"
    result = run_evaluation(
        [get_task(TASK)],
        [AgentEntry("openai:gpt-test", agent)],
        RunConfig(out=out, trials=1, faults="none", server_url=url, token=token, progress=False),
    )
    assert result.ran == 1 and not result.failures
    [traj] = read_trajectories(trajectories_file(out))
    kinds = [(s.type, getattr(s, "tool", None), getattr(s, "step", None)) for s in traj.steps]
    assert kinds == [
        ("message", None, None),
        ("tool_call", "system_enable_dark_mode", None),
        ("tool_call", "system_update_setting", None),
        ("message", None, None),
        ("tool_call", "system_update_setting", 1),
        ("message", None, None),
        ("tool_call", "system_update_setting", 2),
        ("message", None, None),
    ]
    m0, hallucinated, unparsable, _, schema_break, _, good, last = traj.steps
    assert isinstance(m0, MessageStep) and m0.text == "Let me switch the theme." and m0.tool_calls == 2
    assert m0.reasoning == "The user wants dark mode." and (m0.tokens.input, m0.tokens.output) == (100, 20)
    assert isinstance(hallucinated, ToolCallStep) and hallucinated.invalid and hallucinated.call_id == "h1"
    assert (
        hallucinated.error_code == "not_found" and "system_enable_dark_mode" in hallucinated.result["error"]["message"]
    )
    assert (
        unparsable.invalid
        and unparsable.error_code == "invalid_argument"
        and unparsable.raw_arguments == '{"key": "theme",'
    )
    assert "not valid JSON" in unparsable.result["error"]["message"]
    assert (
        schema_break.invalid and schema_break.error_code == "invalid_argument" and schema_break.arguments["value"] == 1
    )
    assert "value: expected string, got integer" in schema_break.result["error"]["message"]
    assert not good.invalid and not good.is_error
    assert isinstance(last, MessageStep) and last.text == "Dark mode is on now." and last.turn == 3
    assert traj.final_message == "Dark mode is on now." and traj.invalid_calls == 0
    assert (traj.tokens.input, traj.tokens.output) == (630, 48)
    scores = traj.scores
    assert scores is not None
    assert scores.invalid_calls == 3 and scores.valid_calls == 1 and scores.success is True

    # Re-scoring the trajectory file alone gives the same scores.
    res = CliRunner().invoke(app, ["score", str(trajectories_file(out)), "--json"])
    assert res.exit_code == 0, res.output
    rescored = json.loads(res.output)
    stored = json.loads((out / "scores.json").read_text())
    assert rescored["agents"] == stored["agents"]
    assert stored["agents"]["openai:gpt-test"]["invalid_calls"] == 3


def test_replaying_a_trajectory_keeps_its_steps_and_scores(fake, http_server, tmp_path: Path) -> None:  # noqa: F811
    url, token = http_server
    fake.play(*_script(D))
    first = tmp_path / "first"
    run_evaluation(
        [get_task(TASK)],
        [AgentEntry("openai:gpt-test", D.agent(fake))],
        RunConfig(out=first, trials=1, faults="none", server_url=url, token=token, progress=False),
    )
    from mcpgym.evaluation.agents import make_agent

    replay = make_agent(f"replay:{trajectories_file(first)}")
    again = tmp_path / "again"
    run_evaluation(
        [get_task(TASK)],
        [AgentEntry("replay", replay)],
        RunConfig(out=again, trials=1, faults="none", server_url=url, token=token, progress=False),
    )
    [a] = read_trajectories(trajectories_file(first))
    [b] = read_trajectories(trajectories_file(again))
    strip = {"episode_id", "agent", "scores", "metadata", "tokens", "stop_reason"}
    assert [s.model_dump(exclude={"time"}) for s in a.steps] == [s.model_dump(exclude={"time"}) for s in b.steps]
    assert a.scores is not None and b.scores is not None
    assert a.scores.model_dump(exclude={"episode_id", "agent"}) == b.scores.model_dump(exclude={"episode_id", "agent"})
    assert a.model_dump(exclude=strip | {"steps"}) == b.model_dump(exclude=strip | {"steps"})
