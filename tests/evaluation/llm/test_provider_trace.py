"""What a model's provider did, in the trajectory and the report (issue 25), with the loopback
fake provider: per-turn latency and retries with their cause, the steps and the failed request
of an errored episode, errored episodes out of every success figure and note, the
``truncated`` status, the ``tool_calls_as_text`` and ``empty_final_message`` flags, and
retrieval over parameter descriptions that finds nothing when nothing matches.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from mcpgym.evaluation.llm import CallResult, LLMLimits, RetryPolicy, ToolInfo
from mcpgym.evaluation.llm.flags import EpisodeFlag, count_flags, episode_flags, tool_call_in_text
from mcpgym.evaluation.records.trajectory import MessageStep, Trajectory
from tests.conftest import run_text
from tests.support.fake_provider import Fail, OpenAIDialect

TIME_TOOLS = [ToolInfo("system_get_time", "Current virtual time.", {"type": "object"}, "read")]
FAST = RetryPolicy(max_retries=2, backoff_base=0.0, request_timeout=5.0)


class Recorder:
    """A recording call function without a server: every call succeeds."""

    def __init__(self) -> None:
        self.steps: list[Any] = []

    async def __call__(self, name: str, arguments: dict) -> CallResult:
        return CallResult(False, {"time": 1})

    def record(self, step: Any) -> None:
        self.steps.append(step)


class Task:
    instruction = "What time is it?"


def agent(fake, **kw: Any):
    return OpenAIDialect().agent(fake, retry=kw.pop("retry", FAST), **kw)


async def test_a_turn_records_its_latency_and_each_retry_with_its_cause(fake):
    d = OpenAIDialect()
    fake.play(Fail(503, body="overloaded"), Fail(429, {"Retry-After": "0"}), d.reply(text="It is noon."))
    call = Recorder()
    result = await agent(fake).run(Task(), TIME_TOOLS, call)
    assert result.status == "completed" and result.provider is None
    [message] = call.steps
    assert isinstance(message, MessageStep) and message.latency is not None and message.latency > 0
    assert [(r.attempt, r.status) for r in message.retries] == [(1, 503), (2, 429)]
    assert message.retries[0].reason == "HTTP 503: overloaded" and message.retries[1].reason.startswith("HTTP 429")


async def test_a_final_reply_cut_at_the_token_limit_is_truncated_not_completed(fake):
    d = OpenAIDialect()
    cut = d.reply(text="The time is twelve o'cl", usage=(10, 8))
    cut["choices"][0]["finish_reason"] = "length"
    fake.play(cut)
    result = await agent(fake, limits=LLMLimits(max_output_tokens=8)).run(Task(), TIME_TOOLS, Recorder())
    assert result.status == "truncated" and result.final_message == "The time is twelve o'cl"
    assert result.stop_reason == "final reply cut off by the output-token limit (length, max 8 tokens)"
    assert result.provider == {"flags": ["truncated"]}


async def test_a_tool_call_written_as_text_is_flagged_and_warned_about(fake, caplog):
    d = OpenAIDialect()
    fake.play(d.reply(text='{"name": "system_get_time", "arguments": {}}'))
    with caplog.at_level(logging.WARNING, logger="mcpgym.llm"):
        result = await agent(fake).run(Task(), TIME_TOOLS, Recorder())
    assert result.status == "completed" and result.provider == {"flags": ["tool_calls_as_text"]}
    assert any("tool_calls_as_text" in r.getMessage() for r in caplog.records)


async def test_an_empty_final_message_is_flagged(fake):
    fake.play(OpenAIDialect().reply(text=""))
    result = await agent(fake).run(Task(), TIME_TOOLS, Recorder())
    assert result.status == "completed" and result.provider == {"flags": ["empty_final_message"]}


def test_flags_are_read_from_the_trajectory_alone():
    def traj(status: str, final: str) -> Trajectory:
        return Trajectory(episode_id=f"{status}-{final}", agent="m", status=status, final_message=final)

    assert tool_call_in_text('```json\n{"name": "shop_buy", "arguments": {"id": 1}}\n```')
    assert tool_call_in_text('<tool_call>\n{"name": "x_y", "arguments": {}}\n</tool_call>')
    assert tool_call_in_text('{"name": "system_get_time"}', ["system_get_time"])
    assert not tool_call_in_text('I set {"theme": "dark"} for you.')
    assert not tool_call_in_text('{"name": "Ada"}', ["system_get_time"])
    trajs = [
        traj("completed", '[{"name": "a", "arguments": {}}]'),
        traj("completed", "  "),
        traj("truncated", "Half an ans"),
        traj("errored", ""),  # no reply at all: nothing to flag
        traj("completed", "Done."),
    ]
    assert [episode_flags(t) for t in trajs] == [
        [EpisodeFlag.TOOL_CALLS_AS_TEXT],
        [EpisodeFlag.EMPTY_FINAL_MESSAGE],
        [EpisodeFlag.TRUNCATED],
        [],
        [],
    ]
    assert count_flags(trajs) == {
        "tool_calls_as_text": 1,
        "empty_final_message": 1,
        "truncated": 1,
        "non_language_final_message": 0,
        "unfounded_refusal": 0,
    }


def test_an_errored_episode_keeps_its_steps_and_leaves_every_figure_and_note(fake, http_server, tmp_path):
    """One infeasible task (its check: the final message declares it impossible), the careful
    agent and a model whose provider fails after one tool call: the model's episode is errored,
    keeps the call it made and the failed request, and appears in no success figure, no note
    about its (never given) answer and no infeasible count."""
    from mcpgym.evaluation.agents import make_agent
    from mcpgym.evaluation.report.run_report import build_report, episode_note, render_markdown, task_rows, write_report
    from mcpgym.evaluation.run.runner import AgentEntry, RunConfig, run_evaluation
    from mcpgym.evaluation.tasks import get_task

    base, token = http_server
    d = OpenAIDialect()
    fake.play(d.reply([("w1", "system_get_wallet_balance", {})], usage=(12, 3)), *[Fail(503, body="down")] * 3)
    model = agent(fake)
    settings = RunConfig(out=tmp_path / "run", trials=1, server_url=base, token=token, progress=False)
    task = get_task("system.transfer_more_than_savings")
    result = run_evaluation(
        [task], [AgentEntry("careful", make_agent("careful")), AgentEntry(model.name, model)], settings
    )
    assert result.ran == 2

    lines = [json.loads(x) for x in run_text(tmp_path / "run").splitlines()]
    errored = next(t for t in lines if t["agent"] == model.name)
    assert errored["status"] == "errored" and errored["stop_reason"].startswith("provider_error: HTTP 503: down")
    assert [s["type"] for s in errored["steps"]] == ["message", "tool_call"]
    assert errored["steps"][1]["tool"] == "system_get_wallet_balance" and errored["steps"][1]["step"] == 1
    failed = errored["metadata"]["provider"]["failed_request"]
    assert failed["turn"] == 1 and failed["attempts"] == 3 and failed["status"] == 503
    assert [(r["attempt"], r["status"], r["reason"]) for r in failed["retries"]] == [
        (1, 503, "HTTP 503: down"),
        (2, 503, "HTTP 503: down"),
    ]
    assert errored["tokens"] == {"input": 12, "output": 3}

    board = result.scores.agents
    assert (board[model.name].episodes, board[model.name].scored_episodes, board[model.name].errored_episodes) == (
        1,
        0,
        1,
    )
    assert board[model.name].success_rate is None and board[model.name].infeasible_episodes == 0
    assert board[model.name].declared_impossible == 0
    assert board["careful"].infeasible_episodes == 1

    report = build_report(tmp_path / "run")
    header, rows = task_rows(report)
    assert rows == [["system.transfer_more_than_savings", "1", "1/1", "0/0 (+1 errored)"]]
    [note] = [episode_note(e) for e in report.notable() if e.agent == model.name]
    assert note == "status errored: a provider or harness failure, left out of every success figure"
    md = render_markdown(report)
    assert "- **Episodes**: 2 run, 1 scored, 1 errored (provider or harness failures" in md
    assert f"| {model.name} | 1/0/1 | – |" in md and "| careful | 1/1/0 | 100%" in md
    assert "failed the check" not in md
    _, html_path = write_report(tmp_path / "run")
    html = html_path.read_text()
    assert "0/0 (+1 errored)" in html and "2 run, 1 scored, 1 errored" in html


def test_retrieval_indexes_parameter_descriptions_and_finds_nothing_for_no_match():
    from mcpgym.kernel.world import World
    from mcpgym.server.retrieval import parameter_text, rank_tools
    from mcpgym.tools.invoke import ToolInvoker

    specs = list(ToolInvoker(World(1, "all")).specs.values())
    setting = next(s for s in specs if s.name == "system_update_setting")
    assert "theme light|dark (dark mode)" in parameter_text(setting.input_schema())
    assert [s.name for s in rank_tools(specs, "dark mode", 5)][0] == "system_update_setting"
    assert rank_tools(specs, "xylophone quantum", 5) == []
    assert rank_tools(specs, "!!!", 5) == []


def test_the_scorability_summary_counts_errored_episodes_and_flags(tmp_path, capsys):
    import pytest

    from mcpgym.evaluation.cli.app import main
    from mcpgym.evaluation.records.trajectory import write_trajectories

    path = tmp_path / "trajectories.jsonl"
    write_trajectories(
        path,
        [
            Trajectory(episode_id="a", agent="m", final_message='{"name": "shop_buy", "arguments": {}}'),
            Trajectory(episode_id="b", agent="m", final_message=""),
            Trajectory(episode_id="c", agent="m", status="truncated", final_message="Half"),
            Trajectory(episode_id="d", agent="m", status="errored"),
        ],
    )
    with pytest.raises(SystemExit):
        main(["score", str(path), "--json"])
    summary = json.loads(capsys.readouterr().out)["scorability"]
    assert summary["errored"] == 1
    assert summary["flags"] == {
        "tool_calls_as_text": 1,
        "empty_final_message": 1,
        "truncated": 1,
        "non_language_final_message": 0,
        "unfounded_refusal": 0,
    }
    assert any("tool_calls_as_text" in w for w in summary["warnings"])


def test_the_terminal_summary_counts_run_scored_and_errored_episodes(fake, http_server, tmp_path, monkeypatch, capsys):
    """``mcpgym run`` in the terminal: the title line and the agent's row count the errored
    episode apart (the issue's "Episodes: 4" when 3 were scored), and a warning names it."""
    import pytest

    from mcpgym.evaluation.cli.app import main

    base, token = http_server
    monkeypatch.setenv("OPENAI_BASE_URL", f"{fake.url}/v1")
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    fake.play(Fail(503, body="down"))
    args = ["run", "--agent", "careful", "--agent", "openai:m", "--task", "system.dark_mode", "--trials", "1"]
    args += ["--faults", "none", "--server", base, "--token", token, "--out", str(tmp_path / "run")]
    args += ["--agent-option", "max_retries=0", "-q"]
    with pytest.raises(SystemExit) as exc:
        main(args)
    out, err = capsys.readouterr()
    assert exc.value.code == 0, err
    assert "faults none: 2 episodes run in " in out and "; 1 scored, 1 errored in all" in out
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.startswith(("careful", "openai:m"))}
    assert rows["careful"][1:3] == ["1/1/0", "100%"]  # the three counts, also when every episode scored
    assert rows["openai:m"][1:3] == ["1/0/1", "–"]  # run/scored/errored, and no success rate
    # the warning names the count and the first cause, with the endpoint and the attempts
    assert "WARNING: 1 of 2 episodes errored (provider or harness failures, in no success figure)" in err
    assert "openai:m, system.dark_mode trial 0: provider_error: HTTP 503: down" in err
    assert f"POST {fake.url}/v1/chat/completions; gave up after 1 attempt)" in " ".join(err.split())
