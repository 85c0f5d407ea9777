"""Bad input a user can hand the CLI: each is one ``error:`` line with exit 2, no traceback, and
nothing already written is lost (the run's files are left as they were)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mcpgym.evaluation.records.trajectory import Trajectory, write_trajectories
from mcpgym.evaluation.run.run_owner import write_marker
from tests.conftest import run_text
from tests.support.cli_runs import cli_at_width

RESUME = ["--agent", "careful", "--task", "system.dark_mode", "--trials", "2", "--resume", "-q"]


def cli(args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> tuple[int, str, str]:
    """Run ``mcpgym ARGS`` at 100 columns; return (exit code, stdout, stderr)."""
    return cli_at_width(args, 100, monkeypatch, capsys)


def one_error_line(code: int, err: str, *says: str) -> None:
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    assert "Traceback" not in err and "unexpected" not in err, err
    for s in says:
        assert s in err, err


def finished_run(tmp_path: Path) -> Path:
    """A run directory holding one finished episode (trial 0 of careful on system.dark_mode)."""
    run = tmp_path / "run"
    write_trajectories(
        run / "trajectories.jsonl",
        [
            Trajectory(
                episode_id="ep0",
                task_id="system.dark_mode",
                agent="careful",
                trial=0,
                level=1,
                apps=["system"],
                steps=[],
                final_message="done",
                ledger=[],
            )
        ],
    )
    write_marker(run)  # mcpgym's run by proof (evaluation.run_owner)
    return run


MANIFESTS = [
    ("not json {", "invalid JSON at line 1"),
    ("[1, 2]", "expected a JSON object, got a JSON array"),
    ('{"agents": 5}', "field 'agents' = 5: input should be a valid list, got a JSON number"),
    ('{"agents": [{"spec": "careful"}]}', "field 'agents.0.name': missing (required)"),
    (
        '{"seeds": {"system.dark_mode": 3}}',
        "field 'seeds.system.dark_mode' = 3: input should be a valid dictionary, got a JSON number",
    ),
    (
        '{"fault_profile": "default"}',
        "field 'fault_profile' = \"default\": input should be a valid dictionary, got a JSON string",
    ),
    ('{"trials": true}', "field 'trials' = true: input should be a valid integer, got a JSON boolean"),
    ('{"trials": 0}', "field 'trials' = 0: input should be greater than or equal to 1"),
    ('{"recovery_window": "3"}', "field 'recovery_window' = \"3\": input should be a valid integer, got a JSON string"),
    ('{"recovery_window": 2.5}', "field 'recovery_window' = 2.5: input should be a valid integer, got a JSON number"),
]


@pytest.mark.parametrize(("text", "says"), MANIFESTS, ids=[m[1][:30] for m in MANIFESTS])
def test_resume_with_a_malformed_manifest_is_refused_and_keeps_the_run(text, says, tmp_path, monkeypatch, capsys):
    run = finished_run(tmp_path)
    (run / "manifest.json").write_text(text, encoding="utf-8")
    before = (run / "trajectories.jsonl").read_bytes()
    code, out, err = cli(["run", "--out", str(run), *RESUME], monkeypatch, capsys)
    one_error_line(code, err, "cannot resume", str(run / "manifest.json"), says)
    assert out == ""
    assert (run / "trajectories.jsonl").read_bytes() == before
    assert (run / "manifest.json").read_text(encoding="utf-8") == text


@pytest.mark.parametrize("command", ["score", "report"])
@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[]", "expected a JSON object"),
        # the recovery window the scores use: "3" was an unexpected TypeError in score (and
        # silently 3 in report), true silently K=1, 0 an error naming no file
        ('{"recovery_window": "3"}', "field 'recovery_window'"),
        ('{"recovery_window": true}', "field 'recovery_window'"),
        ('{"recovery_window": 0}', "field 'recovery_window'"),
    ],
    ids=["list", "window-str", "window-bool", "window-0"],
)
def test_score_and_report_name_a_malformed_manifest(command, text, says, tmp_path, monkeypatch, capsys):
    run = finished_run(tmp_path)
    (run / "manifest.json").write_text(text, encoding="utf-8")
    code, _, err = cli([command, str(run)], monkeypatch, capsys)
    one_error_line(code, err, str(run / "manifest.json"), says)


def test_resume_over_a_malformed_middle_line_names_it_and_keeps_the_run(tmp_path, monkeypatch, capsys):
    run = finished_run(tmp_path)
    path = run / "trajectories.jsonl"  # an older run's plain file; the compressed one: below
    good = path.read_bytes()
    path.write_bytes(b'{"broken\n' + good)  # a whole line, not a torn tail: a crash cannot leave it
    before = path.read_bytes()
    code, out, err = cli(["run", "--out", str(run), *RESUME], monkeypatch, capsys)
    # An older run's plain file comes without a manifest: such a run is not resumed at all (its
    # plan is unknown, issue 36); the damaged compressed frames of a run with one are resumed
    # in tests/reliability/test_damaged_runs.py.
    one_error_line(code, err, "cannot be resumed", "no manifest.json")
    assert path.read_bytes() == before
    assert not (run / "manifest.json").exists()


def test_a_good_manifest_still_reads(tmp_path):
    from mcpgym.evaluation.records.manifest import read_manifest

    (tmp_path / "manifest.json").write_text(
        json.dumps({"agents": [{"name": "careful"}], "suite": None, "seeds": {"t": {"world_seed": 1}}, "trials": 3})
    )
    manifest = read_manifest(tmp_path)
    assert manifest is not None and [a.name for a in manifest.agents] == ["careful"]
    assert manifest.to_json() == json.loads((tmp_path / "manifest.json").read_text())  # nothing added


def test_report_scores_a_trajectory_written_without_scores(tmp_path, monkeypatch, capsys):
    run = finished_run(tmp_path)
    code, out, err = cli(["report", str(run)], monkeypatch, capsys)
    assert (code, err) == (0, ""), err
    assert "report.html" in out
    assert "careful" in (run / "report.md").read_text(encoding="utf-8")


BAD_BODIES = [
    ('{"seed": true}', "seed"),
    ('{"seed": "7"}', "seed"),
    ('{"fault_seed": false}', "fault_seed"),
    ('{"search_tools": "yes"}', "search_tools"),
    ('{"search_tools": 1}', "search_tools"),
    ('{"seed": -1}', "seed"),
    ('{"apps": ["nosuch"]}', "nosuch"),
    ("[]", "must be a JSON object"),
    ("{bad", "invalid JSON"),
]


@pytest.mark.parametrize(("body", "says"), BAD_BODIES, ids=[b for b, _ in BAD_BODIES])
def test_control_api_refuses_wrong_types_with_a_message(body, says, http_server):
    import httpx

    url, token = http_server
    r = httpx.post(
        f"{url}/control/episodes",
        content=body,
        timeout=30,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    assert r.status_code in (400, 422), r.text
    assert says in r.json()["error"]


def test_control_api_still_takes_well_typed_bodies(http_server):
    import httpx

    url, token = http_server
    r = httpx.post(
        f"{url}/control/episodes",
        json={"seed": 3, "fault_seed": 4, "search_tools": False, "apps": "system,shop"},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    assert r.status_code == 201, r.text
    assert (r.json()["seed"], r.json()["fault_seed"]) == (3, 4)
    httpx.delete(f"{url}/control/episodes/{r.json()['episode_id']}", headers={"Authorization": f"Bearer {token}"})


TASK = {"id": "mine.t", "instruction": "x", "apps": ["shop"], "seed": 1, "level": 1, "oracle": [{"answer": "ok"}]}
WRONG_TYPES = [("seed", True), ("seed", "7"), ("level", "2"), ("level", 1.5), ("feasible", "no"), ("max_calls", "9")]


@pytest.mark.parametrize(("field", "value"), WRONG_TYPES, ids=[f"{f}={v!r}" for f, v in WRONG_TYPES])
def test_a_task_file_with_a_wrong_type_is_refused_naming_the_field(field, value, tmp_path, monkeypatch, capsys):
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps({"tasks": [{**TASK, field: value}]}), encoding="utf-8")
    code, out, err = cli(["tasks", "--tasks", str(path)], monkeypatch, capsys)
    one_error_line(code, err, str(path), "task 'mine.t'", f"field '{field}'")
    assert out == ""


def test_a_well_typed_task_file_still_loads(tmp_path, monkeypatch, capsys):
    path = tmp_path / "tasks.yaml"
    path.write_text(
        "tasks:\n  - id: mine.t\n    instruction: x\n    apps: [shop]\n    seed: 1\n    level: 2\n"
        "    feasible: true\n    max_calls: 9\n    oracle:\n      - answer: ok\n",
        encoding="utf-8",
    )
    code, out, err = cli(["tasks", "--tasks", str(path)], monkeypatch, capsys)
    assert (code, err) == (0, "")
    assert "mine.t" in out


def test_a_task_error_names_the_line_of_its_field(tmp_path, monkeypatch, capsys):
    path = tmp_path / "tasks.yaml"
    path.write_text(
        "tasks:\n  - id: mine.ok\n    instruction: x\n    apps: [shop]\n    seed: 1\n    level: 1\n"
        "    oracle:\n      - answer: ok\n"
        "  - id: mine.bad\n    instruction: x\n    apps: [shop]\n    seed: 1\n    level: 7\n"
        "    oracle:\n      - answer: ok\n",
        encoding="utf-8",
    )
    code, out, err = cli(["tasks", "--tasks", str(path)], monkeypatch, capsys)
    one_error_line(code, err, "task 'mine.bad'", "field 'level'", "(line 13)")
    path.write_text('{"tasks": [\n  {"id": "mine.bad", "instruction": "x",\n   "apps": ["shop"], "seed": 1}\n]}\n')
    code, out, err = cli(["tasks", "--tasks", str(path)], monkeypatch, capsys)
    one_error_line(code, err, "task 'mine.bad'", "(line 2)")


BAD_CHECKS = [
    ({"kind": "regex", "value": "(("}, "does not compile"),
    ({"kind": "number", "value": "abc"}, "finite number"),
    ({"kind": "number", "value": True}, "finite number"),
    ({"kind": "declares_impossible", "value": "no"}, "true or false"),
    ({"kind": "contains", "value": 630}, "a string"),
]


@pytest.mark.parametrize(("check", "says"), BAD_CHECKS, ids=[f"{c['kind']}={c['value']!r}" for c, _ in BAD_CHECKS])
def test_a_check_value_the_judge_cannot_use_is_refused_when_the_task_loads(check, says, tmp_path, monkeypatch, capsys):
    """A bad check used to load, then fail every episode's scoring: the run wrote nothing."""
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps({"tasks": [{**TASK, "checks": [check]}]}), encoding="utf-8")
    code, out, err = cli(["tasks", "--tasks", str(path)], monkeypatch, capsys)
    one_error_line(code, err, str(path), "task 'mine.t'", "field 'checks[0]'", says)


def test_good_checks_still_load(tmp_path, monkeypatch, capsys):
    checks = [
        {"kind": "regex", "value": r"\bdone\b"},
        {"kind": "number", "value": 2},
        {"kind": "number", "value": 1.5, "tolerance": 0.01},
        {"kind": "declares_impossible", "value": False},
        {"kind": "contains", "value": "ok"},
    ]
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps({"tasks": [{**TASK, "checks": checks}]}), encoding="utf-8")
    code, out, err = cli(["tasks", "--tasks", str(path)], monkeypatch, capsys)
    assert (code, err) == (0, "")


def test_a_run_where_no_episode_finished_lists_the_failures(http_server, tmp_path, monkeypatch, capsys):
    """Every episode failing in the harness (here: the scorer raises) used to end in
    "not a run directory" from the report step, with the failures never shown."""
    import mcpgym.evaluation.run.episode_runner as episode_runner

    def broken(*args, **kwargs):
        raise RuntimeError("scorer exploded")

    monkeypatch.setattr(episode_runner, "score_episode", broken)
    url, token = http_server
    out_dir = tmp_path / "r"
    args = ["run", "--task", "system.dark_mode", "--agent", "careful", "--trials", "1"]
    code, out, err = cli([*args, "--out", str(out_dir), "--server", url, "--token", token, "-q"], monkeypatch, capsys)
    assert code == 1, err
    assert "no episode finished, so there is no report: 1 episode could not be run" in err, err
    assert "scoring failed: RuntimeError: scorer exploded" in err, err
    assert "not a run directory" not in err + out and "Traceback" not in err
    assert not (out_dir / "report.md").exists()


ORACLE_FAILS = [
    ([{"call": "system_update_setting", "args": {"key": ["a", "b"], "value": "dark"}}, {"answer": "ok"}], "failed"),
    ([{"answer": "{10 // 0}"}], "ZeroDivisionError"),
]


@pytest.mark.parametrize(("steps", "says"), ORACLE_FAILS, ids=["bad-call", "bad-answer"])
def test_tasks_names_the_file_task_and_line_of_an_oracle_that_fails(steps, says, tmp_path, monkeypatch, capsys):
    """The oracle runs only when its gold state is needed; a failure there used to be an
    'unexpected OracleRuntimeError' with exit 1 from `mcpgym tasks`."""
    path = tmp_path / "tasks.yaml"
    good = "  - id: mine.ok\n    instruction: x\n    apps: [system]\n    seed: 2\n    level: 1\n    oracle: [{answer: ok}]\n"
    bad = "  - id: mine.bad\n    instruction: x\n    apps: [system]\n    seed: 2\n    level: 1\n    oracle:\n"
    path.write_text(f"tasks:\n{good}{bad}" + "".join(f"      - {json.dumps(s)}\n" for s in steps), encoding="utf-8")
    code, out, err = cli(["tasks", "--tasks", str(path)], monkeypatch, capsys)
    one_error_line(code, err, str(path), "task 'mine.bad'", "oracle[0]", says, "(line 13)")


def test_a_duplicate_task_id_names_both_lines(tmp_path, monkeypatch, capsys):
    path = tmp_path / "tasks.yaml"
    one = "  - id: mine.t\n    instruction: x\n    apps: [system]\n    seed: 2\n    level: 1\n    oracle: [{answer: ok}]\n"
    path.write_text(f"tasks:\n{one}{one}", encoding="utf-8")
    code, out, err = cli(["tasks", "--tasks", str(path)], monkeypatch, capsys)
    one_error_line(
        code, err, f"{path}: task 'mine.t': field 'id': duplicate id, first used by task #1 at line 2 (line 8)"
    )


def test_a_run_of_absurd_size_is_refused_before_it_starts(tmp_path, monkeypatch, capsys):
    """--trials 10^20 used to hang while the run listed its episodes, filling memory."""
    out_dir = tmp_path / "r"
    args = ["run", "--task", "system.dark_mode", "--agent", "careful", "--agent", "defeatist", "-q"]
    code, out, err = cli([*args, "--trials", str(10**20), "--out", str(out_dir)], monkeypatch, capsys)
    one_error_line(code, err, "1 task x 100000000000000000000 trials x 2 agents", "at most 1,000,000")
    assert not out_dir.exists()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--examples", "0", "system"], "--examples: must be at least 1, got 0"),
        (["--seed", "-5", "--probe", "system"], "--seed: must be at least 0"),
    ],
    ids=["examples-0", "seed-negative"],
)
def test_conformance_refuses_a_count_it_cannot_use(args, says, capsys):
    """--examples 0 used to run into hypothesis and end in its InvalidArgument traceback."""
    from mcpgym.tools.conformance.__main__ import main as conformance_main

    with pytest.raises(SystemExit) as exc:
        conformance_main(args)
    err = capsys.readouterr().err
    assert exc.value.code == 2, err
    assert says in err.splitlines()[-1], err
    assert "Traceback" not in err


GOOD_LINE = {
    "episode_id": "ep0",
    "task_id": "system.dark_mode",
    "agent": "careful",
    "trial": 0,
    "steps": [{"type": "tool_call", "step": 1, "tool": "system_get_settings", "is_error": False, "result": {}}],
    "final_message": "done",
}
BAD_LINES = [
    ({"trial": True}, "field 'trial' = true: input should be a valid integer, got a JSON boolean"),
    ({"trial": "1"}, "field 'trial' = \"1\": input should be a valid integer, got a JSON string"),
    ({"world_seed": "7"}, "field 'world_seed' = \"7\""),
    ({"steps": [{**GOOD_LINE["steps"][0], "is_error": "no"}]}, "field 'steps.0.is_error' = \"no\""),
    ({"steps": [{**GOOD_LINE["steps"][0], "step": "1"}]}, "field 'steps.0.step' = \"1\""),
    ({"steps": None}, "field 'steps' = null"),
]


@pytest.mark.parametrize(
    ("change", "says"), BAD_LINES, ids=[f"{k}={v!r}"[:40] for c, _ in BAD_LINES for k, v in c.items()]
)
def test_a_trajectory_line_of_the_wrong_type_names_its_line_and_field(change, says, tmp_path, monkeypatch, capsys):
    """trial true, "1" or is_error "no" used to be coerced (to trial 1, is_error false)."""
    from mcpgym.evaluation.records.trajectory import TrajectoryFileError, read_trajectories

    path = tmp_path / "trajectories.jsonl"
    path.write_text(json.dumps(GOOD_LINE) + "\n" + json.dumps({**GOOD_LINE, "episode_id": "ep1", **change}) + "\n")
    with pytest.raises(TrajectoryFileError, match=f"trajectories.jsonl:2: {says}"):
        read_trajectories(path)
    code, out, err = cli(["score", str(path), "--format", "mcpgym", "--json"], monkeypatch, capsys)
    problems = json.loads(out)["problems"]
    assert code == 1 and [p["line"] for p in problems] == [2], problems
    assert re.match(says, problems[0]["message"]), problems


def test_a_trajectory_line_without_steps_is_not_an_episode_without_calls(tmp_path, monkeypatch, capsys):
    """A line that does not carry "steps" used to score as an episode that made no call."""
    from mcpgym.evaluation.records.trajectory import TrajectoryFileError, read_trajectories

    path = tmp_path / "trajectories.jsonl"
    no_steps = {k: v for k, v in GOOD_LINE.items() if k != "steps"}
    path.write_text(json.dumps(GOOD_LINE) + "\n" + json.dumps({**no_steps, "episode_id": "ep1", "trial": 1}) + "\n")
    with pytest.raises(TrajectoryFileError, match="trajectories.jsonl:2: field steps: missing"):
        read_trajectories(path)
    code, out, err = cli(["score", str(path), "--format", "mcpgym", "--json"], monkeypatch, capsys)
    report = json.loads(out)
    assert code == 1 and [p["line"] for p in report["problems"]] == [2]
    assert [e["scores"]["tool_calls"] for e in report["episodes"]] == [1]
    path.write_text(json.dumps({**GOOD_LINE, "steps": []}) + "\n")  # no call at all: said so
    assert read_trajectories(path)[0].steps == []


def test_output_the_terminal_cannot_encode_is_escaped_not_fatal(tmp_path):
    """With an ASCII stdout the table's dashes, and on any stdout a lone surrogate from a JSON
    "\\ud800" escape, ended the command in a UnicodeEncodeError after its work was done."""
    import os
    import subprocess
    import sys

    msgs = [
        {"role": "user", "content": "Show my cart."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "shop_get_cart", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": '{"lines": []}'},
        {"role": "assistant", "content": "Empty."},
    ]
    path = tmp_path / "conv.jsonl"
    path.write_text(json.dumps({"task_id": "caf\u00e9 \ud800", "agent": "b\u00e9a", "messages": msgs}) + "\n")
    for encoding in ("ascii", "utf-8"):
        env = {**os.environ, "PYTHONIOENCODING": encoding, "COLUMNS": "100"}
        done = subprocess.run(
            [sys.executable, "-m", "mcpgym.evaluation.cli", "score", str(path), "--format", "openai"],
            capture_output=True,
            env=env,
            timeout=120,
        )
        out = done.stdout.decode(encoding)
        assert done.returncode == 0, done.stderr.decode(errors="replace")
        assert "\\ud800" in out and ("b\\xe9a" if encoding == "ascii" else "b\u00e9a") in out, out


def test_a_bare_resume_continues_the_run_as_it_was_started(http_server, tmp_path, monkeypatch, capsys):
    """`run --resume --out D` (what the interrupt message says to type) used to fill in the
    defaults for what it was not told: a 1-trial run of one agent on one task became the smoke
    suite x 3 scripted agents x 3 trials."""
    url, token = http_server
    out_dir = tmp_path / "r"
    where = ["--out", str(out_dir), "--server", url, "--token", token, "-q"]
    first = ["run", "--task", "system.dark_mode", "--agent", "careful", "--trials", "1", "--faults", "none"]
    code, out, err = cli([*first, *where], monkeypatch, capsys)
    assert code == 0, err
    code, out, err = cli(["run", "--resume", *where], monkeypatch, capsys)
    assert code == 0, err
    assert "0 episodes run, 1 resumed" in out, out
    manifest = json.loads((out_dir / "manifest.json").read_text())
    assert (manifest["trials"], [a["name"] for a in manifest["agents"]], manifest["task_ids"]) == (
        1,
        ["careful"],
        ["system.dark_mode"],
    )
    # what is given still extends the run: one more trial, same agent, task and profile
    code, out, err = cli(["run", "--resume", "--trials", "2", *where], monkeypatch, capsys)
    assert code == 0, err
    lines = [json.loads(x) for x in run_text(out_dir).splitlines()]
    assert [(t["agent"], t["task_id"], t["trial"], t["fault_profile"]) for t in lines] == [
        ("careful", "system.dark_mode", 0, "none"),
        ("careful", "system.dark_mode", 1, "none"),
    ]


def test_resume_options_resolve_files_against_the_directory_the_run_started_in():
    """A bare --resume from another directory must find the run's --tasks files, fault
    profile file and replay file where the first invocation found them."""
    from mcpgym.evaluation.records.manifest import Manifest
    from mcpgym.evaluation.run.config import RunConfig, resume_config

    manifest = Manifest.model_validate(
        {
            "cwd": "/home/u/proj",
            "trials": 2,
            "agents": [{"name": "replay", "spec": "replay:runs/a/trajectories.jsonl"}, {"name": "careful"}],
            "task_ids": ["mine.t"],
            "episode_timeout": 30,
            "invocations": [
                {"settings": {"task_files": ["tasks/mine.yaml"], "faults": "profiles/p.toml"}},
                {"settings": {"task_files": ["/home/u/proj/tasks/mine.yaml"], "faults": "profiles/p.toml"}},
            ],
        }
    )
    bare = RunConfig(out="/elsewhere/run", resume=True)
    resumed = resume_config(bare, {"out", "resume"}, manifest)
    assert (resumed.trials, resumed.agents, resumed.task_ids, resumed.task_files, resumed.faults) == (
        2,
        ["replay:/home/u/proj/runs/a/trajectories.jsonl", "careful"],
        ["mine.t"],
        ["/home/u/proj/tasks/mine.yaml"],
        "/home/u/proj/profiles/p.toml",
    )
    assert resumed.episode_timeout == 30.0 and resumed.out == bare.out and resumed.resume
    # what the command line gives wins; a task selection given replaces the recorded one whole
    given = RunConfig(out="/elsewhere/run", resume=True, trials=5, suite="smoke")
    mine = resume_config(given, {"out", "resume", "trials", "suite"}, manifest)
    assert (mine.trials, mine.suite, mine.task_ids, mine.task_files) == (5, "smoke", [], [])
    plain = resume_config(
        bare,
        {"out", "resume"},
        Manifest.model_validate({"trials": 1, "invocations": [{"settings": {"faults": "harsh"}}]}),
    )
    assert (plain.trials, plain.faults, plain.agents) == (1, "harsh", [])


@pytest.mark.parametrize(
    ("extra", "field", "allowed"),
    [
        ({"user": {"facts": {}, "bogus": 1}}, "user.bogus", "facts, refuses, in_world, persona"),
        (
            {"checks": [{"kind": "contains", "value": "ok", "bogus": 1}]},
            "checks[0].bogus",
            "kind, value, case_sensitive",
        ),
        ({"bogus": 1}, "bogus", "id, instruction, apps, seed"),
    ],
    ids=["user", "check", "task"],
)
def test_an_unknown_nested_field_lists_the_fields_of_its_own_object(
    extra, field, allowed, tmp_path, monkeypatch, capsys
):
    """An unknown key in the user profile or a check listed the *task's* fields as allowed."""
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps({"tasks": [{**TASK, **extra}]}), encoding="utf-8")
    code, out, err = cli(["tasks", "--tasks", str(path)], monkeypatch, capsys)
    one_error_line(code, err, f"field '{field}': unknown field; allowed: {allowed}")


def test_an_unknown_agent_lists_every_form_one_can_name(tmp_path, monkeypatch, capsys):
    """`mcpgym run --agent nosuch` listed the scripted names, replay and the LLM prefixes as
    "openai:..." but not `human` (found by a new-user try): the error names every form
    `make_agent` takes, each as one types it, and every form it names is one that builds."""
    import mcpgym.evaluation.agents as agents_pkg
    from mcpgym.evaluation.agents.human import HumanAgent
    from mcpgym.evaluation.llm.spec import PROVIDERS

    forms = [*agents_pkg.SCRIPTED_AGENTS, "replay:FILE.jsonl", *(f"{p}:MODEL" for p in PROVIDERS), "human"]
    for spec in ("nosuch", "nosuch:model"):
        code, out, err = cli(["run", "--agent", spec, "--out", str(tmp_path / "r"), "-q"], monkeypatch, capsys)
        one_error_line(code, err, f"unknown agent '{spec}'; known agents: {', '.join(forms)}")
        assert not (tmp_path / "r").exists()
    assert isinstance(agents_pkg.make_agent("human"), HumanAgent)
    # an LLM form builds without a registration made first (its options are the defaults)
    monkeypatch.setattr(agents_pkg, "_FACTORIES", {})
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert agents_pkg.make_agent("openai:some-model").name == "openai:some-model"


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN"])
def test_a_non_finite_temperature_is_refused_as_not_finite(value, tmp_path, monkeypatch, capsys):
    """newuser3 finding 8: NaN passed typer's range check with the wrong reason ("should be
    <= 2"); every float flag of run now says it must be a finite number, and names the range."""
    args = ["run", "--task", "system.dark_mode", "--agent", "openai:fake", "--out", str(tmp_path / "r"), "-q"]
    code, _out, err = cli([*args, "--temperature", value], monkeypatch, capsys)
    one_error_line(code, err, "--temperature", "must be a finite number from 0 to 2", repr(value))
    assert "less than" not in err and "greater than" not in err
    code, _out, err = cli([*args, "--request-timeout", value], monkeypatch, capsys)
    one_error_line(code, err, "--request-timeout", "must be a finite number of at least 0.001")
    code, _out, err = cli([*args, "--temperature", "3"], monkeypatch, capsys)
    one_error_line(code, err, "--temperature", "must be a number from 0 to 2, got '3'")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("apps", [",", " , ,", ""])
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_serve_refuses_an_apps_list_naming_no_app(apps, transport, monkeypatch, capsys):
    """newuser3 finding 6: ``serve --apps ,`` served a system-only episode while the control API
    and ``/mcp?apps=`` refuse the same list; one rule (kernel.world.names_no_app) everywhere."""
    code, _out, err = cli(["serve", "--transport", transport, "--port", "0", "--apps", apps], monkeypatch, capsys)
    one_error_line(code, err, "--apps names no app", "system is always included")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["serve", "--transport", "http", "--port", "0", "--idle-timeout", "nan"], "of at least 0.1, got 'nan'"),
        (["play", "system.dark_mode", "--timeout", "inf"], "of at least 10, got 'inf'"),
    ],
)
def test_other_float_options_refuse_non_finite_values_too(args, says, monkeypatch, capsys):
    code, _out, err = cli(args, monkeypatch, capsys)
    one_error_line(code, err, "must be a finite number " + says)
