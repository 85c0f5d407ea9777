"""Conditions inside one run (``--faults A,B --tools X,Y``): the axes parse and are refused
clearly, every (agent, task, trial) is planned once per condition with the trial's one fault
seed, a real run records each episode's condition and keeps the conditions apart in its
scores, manifest and resume, and a run without axes writes no condition at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mcpgym.evaluation.agents import SCRIPTED_AGENTS, make_agent
from mcpgym.evaluation.cli.app import app
from mcpgym.evaluation.records.condition import ConditionAxis, EpisodeCondition, condition_key
from mcpgym.evaluation.run.conditions import axis_values, condition_axis, conditions_of, tool_values
from mcpgym.evaluation.run.config import RunConfig
from mcpgym.evaluation.run.episode_spec import job_from_spec, spec_for
from mcpgym.evaluation.run.runner import AgentEntry, plan_jobs
from mcpgym.evaluation.tasks import fault_seed_for, get_task, load_tasks
from mcpgym.kernel.exceptions import InvalidValue
from tests.conftest import run_text

TASKS = [t.id for t in load_tasks("smoke")[:2]]
AXES = ["--faults", "none,harsh", "--tools", "task,all"]
CONDITIONS = [EpisodeCondition(faults=f, tools=t) for f in ("none", "harsh") for t in ("task", "all")]


def test_axes_parse_and_bad_lists_are_refused() -> None:
    assert axis_values(" none, default ,harsh", "--faults") == ["none", "default", "harsh"]
    with pytest.raises(ValueError, match=r"--tools 'task,task\+0' lists task twice"):
        tool_values("task,task+0")  # task+0 is task
    assert tool_values("task,task+20,ALL,retrieval") == ["task", "task+20", "all", "retrieval"]
    assert condition_axis("harsh", "task+5") is None  # one value each: no conditions, a run as before
    assert conditions_of(None) == [None]
    axis = condition_axis("none,harsh", "all")
    assert axis == ConditionAxis(faults=["none", "harsh"], tools=["all"])
    assert conditions_of(axis) == [
        EpisodeCondition(faults="none", tools="all"),
        EpisodeCondition(faults="harsh", tools="all"),
    ]
    with pytest.raises(ValueError, match="an empty value"):
        axis_values("none,,harsh", "--faults")
    with pytest.raises(ValueError, match="lists none twice"):
        axis_values("none,harsh,none", "--faults")
    with pytest.raises(ValueError, match="at most 16"):
        axis_values(",".join(f"task+{i}" for i in range(17)), "--tools")
    with pytest.raises(InvalidValue, match="unknown tool exposure mode"):
        RunConfig.build({"tool_exposure": "task,nope"})
    with pytest.raises(InvalidValue, match="an empty value"):
        RunConfig.build({"faults": "none,"})
    assert condition_key("careful", None) == "careful"
    assert condition_key("careful", CONDITIONS[1]) == "careful [faults=none, tools=all]"


def test_every_condition_is_planned_once_with_the_trials_fault_seed() -> None:
    tasks = [get_task(t) for t in TASKS]
    agents = [AgentEntry(s, make_agent(s)) for s in SCRIPTED_AGENTS]
    jobs = plan_jobs(tasks, agents, 2, "none", fault_seed_for, conditions=CONDITIONS)
    assert len(jobs) == len(tasks) * len(agents) * 2 * len(CONDITIONS)
    keys = {(j.agent.name, j.task.id, j.trial, j.condition) for j in jobs}
    assert len(keys) == len(jobs)
    for j in jobs:
        assert j.fault_seed == fault_seed_for(j.task, j.trial)  # paired: the same draw in every condition
        assert j.condition is not None and j.profile_name == j.condition.faults  # no smoke task sets its own
        assert j.tool_exposure("all") == j.condition.tools
        assert j.label.endswith(f"[{j.condition.label}]")
    # the written keys are skipped, and a run without conditions keeps its 3-tuples
    done = {(j.agent.name, j.task.id, j.trial, j.condition) for j in jobs[:5]}
    assert len(plan_jobs(tasks, agents, 2, "none", fault_seed_for, done, CONDITIONS)) == len(jobs) - 5
    plain = plan_jobs(tasks, agents, 1, "harsh", fault_seed_for, {("careful", TASKS[0], 0)})
    assert len(plain) == len(tasks) * len(agents) - 1 and {j.condition for j in plain} == {None}
    assert {j.tool_exposure("task+3") for j in plain} == {"task+3"}
    # the condition travels to a Ray worker
    back = job_from_spec(json.loads(json.dumps(spec_for(jobs[-1]).model_dump(mode="json"))), RunConfig())
    assert back.condition == jobs[-1].condition and spec_for(back).key[3] == jobs[-1].condition


def _run(out: Path, *extra: str) -> tuple[int, str]:
    args = ["run", *[a for t in TASKS for a in ("--task", t)], "--trials", "1", "--quiet", "--out", str(out), *extra]
    result = CliRunner().invoke(app, args)
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def axes_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real `mcpgym run` of the 3 scripted agents x 2 tasks x 1 trial x 4 conditions."""
    out = tmp_path_factory.mktemp("conditions") / "run"
    code, output = _run(out, *AXES)
    assert code == 0, output
    assert "4 conditions (faults none,harsh x tools task,all)" in output.replace("\n", " ")
    return out


def test_a_run_records_each_episodes_condition(axes_run: Path) -> None:
    lines = [json.loads(line) for line in run_text(axes_run).splitlines()]
    assert len(lines) == len(SCRIPTED_AGENTS) * len(TASKS) * len(CONDITIONS)
    seen = {(d["agent"], d["task_id"], d["trial"], EpisodeCondition(**d["condition"])) for d in lines}
    assert len(seen) == len(lines) and {c for *_, c in seen} == set(CONDITIONS)
    for d in lines:
        assert d["scores"]["condition"] == d["condition"]
        assert d["fault_profile"] == d["condition"]["faults"]
    seeds = {}
    for d in lines:  # one fault seed per (task, trial), whatever the condition
        seeds.setdefault((d["task_id"], d["trial"]), set()).add(d["fault_seed"])
    assert all(len(s) == 1 for s in seeds.values())
    listed = {}
    for d in lines:  # the exposure is the condition's: "task" offers fewer tools than "all"
        listed.setdefault((d["task_id"], d["condition"]["tools"]), set()).add(d["metadata"]["tools_listed"])
    for task in TASKS:
        assert max(listed[(task, "task")]) < min(listed[(task, "all")])
    harsh = [d for d in lines if d["condition"]["faults"] == "harsh"]
    none = [d for d in lines if d["condition"]["faults"] == "none"]
    assert all(not d["ledger"] for d in none) and any(d["ledger"] for d in harsh)


def test_scores_and_manifest_keep_the_conditions_apart(axes_run: Path) -> None:
    scores = json.loads((axes_run / "scores.json").read_text())["agents"]
    assert set(scores) == {condition_key(a, c) for a in SCRIPTED_AGENTS for c in CONDITIONS}
    for key, row in scores.items():
        assert row["episodes"] == len(TASKS)
        assert condition_key(row["agent"], EpisodeCondition(**row["condition"])) == key
    manifest = json.loads((axes_run / "manifest.json").read_text())
    assert manifest["conditions"] == {"faults": ["none", "harsh"], "tools": ["task", "all"]}
    assert [p["name"] for p in manifest["fault_profiles"]] == ["none", "harsh"]
    assert manifest["fault_profile"]["name"] == "none"


def test_resume_keeps_the_axes_and_refuses_others(axes_run: Path) -> None:
    before = run_text(axes_run)
    code, output = _run(axes_run, "--resume")
    assert code == 0, output
    assert "0 episodes run, 24 resumed" in output.replace("\n", " ") and run_text(axes_run) == before
    code, output = _run(axes_run, "--resume", "--faults", "none,default")
    assert code != 0 and "cannot resume it with --faults none,default --tools task,all" in output.replace("\n", " ")
    code, output = _run(axes_run, "--resume", "--tools", "all")
    assert code != 0 and "--tools all differs from this run's task,all" in output.replace("\n", " ")
    assert run_text(axes_run) == before


def test_a_run_without_axes_records_no_condition(tmp_path: Path) -> None:
    code, output = _run(tmp_path / "plain", "--faults", "harsh", "--tools", "task")
    assert code == 0, output
    lines = [json.loads(line) for line in run_text(tmp_path / "plain").splitlines()]
    assert lines and all("condition" not in d and "condition" not in d["scores"] for d in lines)
    scores = json.loads((tmp_path / "plain" / "scores.json").read_text())["agents"]
    assert set(scores) == set(SCRIPTED_AGENTS) and all(
        "condition" not in r and "agent" not in r for r in scores.values()
    )
    manifest = json.loads((tmp_path / "plain" / "manifest.json").read_text())
    assert "conditions" not in manifest and "fault_profiles" not in manifest
    # and a plain run is not resumed with axes
    code, output = _run(tmp_path / "plain", "--resume", "--faults", "harsh,none", "--tools", "task")
    assert code != 0 and "conditions are no condition axes" in output.replace("\n", " ")
