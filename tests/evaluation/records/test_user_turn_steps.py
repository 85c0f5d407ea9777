"""``ask_user`` turns are steps of the trajectory (type ``user_turn``), in order with the tool
calls: recorded so by `mcpgym run` (real spawned server, MCP client), kept by re-scoring the
file, read from old lines that carried a separate ``user_turns`` list, and replayed."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
from typer.testing import CliRunner

from mcpgym.evaluation.agents import make_agent
from mcpgym.evaluation.agents.inprocess import run_in_process, score_in_process
from mcpgym.evaluation.agents.replay import ReplayAgent
from mcpgym.evaluation.cli import app
from mcpgym.evaluation.records.trajectory import Trajectory, UserTurnStep, read_trajectories
from mcpgym.evaluation.tasks import get_task
from tests.conftest import run_text

TASK = "users.tell_maya_3"  # careful reads the contacts, asks which Maya, then writes
USER_KEYS = ("user_questions", "clarification_skips", "unconfirmed_writes", "user_burden")


def test_a_recorded_run_has_the_question_and_answer_between_the_tool_calls(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        [
            "run",
            "--agent",
            "careful",
            "--task",
            TASK,
            "--trials",
            "1",
            "--faults",
            "none",
            "--out",
            str(out),
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    line = json.loads(run_text(out).splitlines()[0])
    assert "user_turns" not in line
    kinds = [s["type"] for s in line["steps"]]
    assert kinds[:3] == ["tool_call", "user_turn", "tool_call"] and kinds.count("user_turn") == 1, kinds
    turn = line["steps"][1]
    task = get_task(TASK)
    assert turn["question"].startswith("Which") and turn["value"] == task.user.facts[turn["topic"]]
    assert turn["answer"] and turn["before_step"] == 2 == line["steps"][2]["step"]
    assert line["scores"]["success"] is True
    recorded = {k: line["scores"][k] for k in USER_KEYS}
    assert recorded == {"user_questions": 1, "clarification_skips": [], "unconfirmed_writes": [], "user_burden": 0}

    scored = CliRunner().invoke(app, ["score", str(out / "trajectories.jsonl.zst"), "--json"])
    assert scored.exit_code == 0, scored.output
    text = scored.output
    episodes = json.loads(text[text.index("{") :])["episodes"]
    assert {k: episodes[0]["scores"][k] for k in USER_KEYS} == recorded


def test_old_lines_with_a_user_turns_list_load_as_steps_in_order() -> None:
    call = {"tool": "talk_search_contacts", "arguments": {}, "result": {}}
    old = {
        "episode_id": "e1",
        "agent": "careful",
        "steps": [{**call, "step": 1}, {**call, "step": 2, "tool": "talk_send_message"}],
        "user_turns": [{"before_step": 2, "question": "Which Maya?", "answer": "Maya Chen", "value": "Maya Chen"}],
    }
    traj = Trajectory.model_validate_json(json.dumps(old))
    assert [s.type for s in traj.steps] == ["tool_call", "user_turn", "tool_call"]
    assert isinstance(traj.steps[1], UserTurnStep) and traj.user_turns[0].value == "Maya Chen"
    again = Trajectory.model_validate_json(traj.model_dump_json())
    assert again == traj and "user_turns" not in json.loads(traj.model_dump_json())
    # a turn placed after the last call stays at the end
    late = Trajectory.model_validate({**old, "user_turns": [{**old["user_turns"][0], "before_step": 3}]})
    assert [s.type for s in late.steps] == ["tool_call", "tool_call", "user_turn"]


def test_replay_keeps_the_recorded_turns_and_the_user_scores(tmp_path: Path) -> None:
    task = get_task(TASK)
    first = anyio.run(lambda: run_in_process(make_agent("careful"), task, faults="none", trial=0))
    path = tmp_path / "t.jsonl"
    path.write_text(first.model_dump_json() + "\n", encoding="utf-8")
    replayed = anyio.run(lambda: run_in_process(ReplayAgent(path), task, faults="none", trial=0))
    assert [s.type for s in replayed.steps] == [s.type for s in first.steps]
    assert replayed.user_turns == first.user_turns
    s1, s2 = score_in_process(first, task), score_in_process(replayed, task)
    assert [getattr(s1, k) for k in USER_KEYS] == [getattr(s2, k) for k in USER_KEYS]
    assert s2.user_questions == 1 and s2.success
    assert read_trajectories(path)[0].user_turns == first.user_turns


def test_the_report_viewer_shows_the_turn_between_the_calls() -> None:
    from mcpgym.evaluation.report.viewer import step_views

    task = get_task(TASK)
    traj = anyio.run(lambda: run_in_process(make_agent("careful"), task, faults="none", trial=0))
    views = step_views(traj, score_in_process(traj, task))
    assert [v.kind for v in views[:3]] == ["tool_call", "user_turn", "tool_call"]
    turn = traj.user_turns[0]
    assert views[1].title == "ask_user" + (f" ({turn.about})" if turn.about else "")
    assert views[1].text == f"Agent asked: {turn.question}\n\nUser answered: {turn.answer}"
