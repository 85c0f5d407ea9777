"""``mcpgym play`` and ``mcpgym run --agent human`` (issue 25): a person plays a task as the
agent. Driven here through standard input for a whole episode, in a real process with its own
server: the instruction, a tool search, calls refused before the server (arguments that are not
JSON or no JSON object, a tool name the episode does not offer: recorded as invalid steps and
counted, as an LLM agent's are), a fault shown exactly as an agent gets it, the retry, the
answer; then the trajectory and its scores as for any agent.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

from mcpgym.evaluation.records.compressed import trajectories_file
from mcpgym.evaluation.records.trajectory import ToolCallStep, read_trajectories

# every first call of system_update_setting fails (transient), the next one cannot (max 1 in a row)
PROFILE = "max_consecutive = 1\n[tools.system_update_setting]\ntransient = 1.0\n"

LINES = [
    "help",
    "tools theme",
    "show system_update_setting",
    'system_update_setting {"key": "theme", "value": "dark"',  # not JSON: refused, invalid call 1
    'system_update_setting {"key": "theme", "value": "dark"}',  # the injected fault: call-log step 1
    'system_update_setting {"key": "theme", "value": "dark"}',  # the retry: step 2
    "system_get_setings",  # no such tool: refused, invalid call 2
    'system_get_settings ["theme"]',  # JSON but no object: refused, invalid call 3
    "system_get_settings",  # step 3
    "answer Dark mode is on.",
]


def play(args: list[str], lines: list[str], tmp_path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from mcpgym.evaluation.cli.app import main; main()", *args],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )


def test_a_whole_episode_played_through_standard_input(tmp_path):
    profile = tmp_path / "always-once.toml"
    profile.write_text(PROFILE, encoding="utf-8")
    out = tmp_path / "run"
    done = play(["play", "system.dark_mode", "--faults", str(profile), "--out", str(out)], LINES, tmp_path)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "Please switch my phone to dark mode." in text
    assert "system_get_settings  Return device settings" in text  # found by a word of its description
    assert "the arguments are not valid JSON" in text and "not sent: counted as an invalid call" in text
    assert "there is no tool named 'system_get_setings'" in text and "did you mean system_get_settings," in text
    assert "the arguments must be a JSON object, got a JSON array" in text
    assert '"code": "transient"' in text and '"retryable": true' in text  # the fault, as an agent sees it
    assert '"theme": "dark"' in text
    # by hand from LINES: 3 calls reached the server (steps 1-3), one of them the transient
    # fault (an error call); 3 were refused before it (invalid)
    assert "trial 0: status completed, success True, 3 valid / 3 invalid / 1 error calls" in text

    [traj] = read_trajectories(trajectories_file(out))
    calls = [s for s in traj.steps if isinstance(s, ToolCallStep)]
    assert [(c.step, c.tool, c.error_code, c.invalid) for c in calls] == [
        (None, "system_update_setting", "invalid_argument", True),
        (1, "system_update_setting", "transient", False),
        (2, "system_update_setting", None, False),
        (None, "system_get_setings", "not_found", True),
        (None, "system_get_settings", "invalid_argument", True),
        (3, "system_get_settings", None, False),
    ]
    assert calls[0].raw_arguments == '{"key": "theme", "value": "dark"' and calls[0].arguments == {}
    assert calls[4].raw_arguments == '["theme"]'
    assert traj.scores.tool_calls == 3 and traj.scores.valid_calls == 3
    assert traj.scores.invalid_calls == 3 and traj.scores.error_calls == 1
    assert traj.agent == "human" and traj.final_message == "Dark mode is on." and traj.status == "completed"
    assert traj.scores.success is True and traj.scores.recoveries == 1 and traj.scores.defeatism is False
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["agents"][0]["describe"]["kind"] == "human"
    assert (out / "report.html").is_file()


def test_run_with_the_human_agent_plays_each_episode_and_end_of_input_leaves_without_an_answer(tmp_path):
    out = tmp_path / "run"
    args = ["run", "--agent", "human", "--task", "system.dark_mode", "--task", "weather.use_fahrenheit"]
    args += ["--trials", "1", "--faults", "none", "--out", str(out)]
    lines = ['system_update_setting {"key": "theme", "value": "dark"}', "answer Done."]
    done = play(args, lines, tmp_path)
    assert done.returncode == 0, done.stderr
    trajs = {t.task_id: t for t in read_trajectories(trajectories_file(out))}
    assert trajs["system.dark_mode"].status == "completed" and trajs["system.dark_mode"].scores.success is True
    # the input ended during the second task: no answer, status limit, nothing invented
    assert trajs["weather.use_fahrenheit"].status == "limit"
    assert trajs["weather.use_fahrenheit"].final_message == ""
    assert "input ended: no final message" in done.stdout


def test_tab_completes_a_tool_name_at_a_terminal(tmp_path):
    """At a terminal (a pseudo-terminal here), Tab completes a tool's name: the player types
    ``system_upd``, Tab (the common part: ``system_update_``), ``se``, Tab (the whole name and
    the space before the arguments), then the arguments, and the call sent is
    ``system_update_setting``. (Python's readline appends no space to a unique match; the
    completer gives it, else the line read ``system_update_setting{...}``, one unknown word.)"""
    import os
    import pty
    import select
    import time

    out = tmp_path / "run"
    master, slave = pty.openpty()
    env = {"COLUMNS": "200", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "TERM": "dumb", "NO_COLOR": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-c", "from mcpgym.evaluation.cli.app import main; main()"]
        + ["play", "system.dark_mode", "--faults", "none", "--out", str(out)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=tmp_path,
        env=env,
        start_new_session=True,
    )
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 120

    def read_until(marker: bytes, count: int) -> None:
        nonlocal seen
        while seen.count(marker) < count:
            left = deadline - time.monotonic()
            assert left > 0, f"no {marker!r} within the deadline; the terminal showed {seen[-2000:]!r}"
            ready, _, _ = select.select([master], [], [], min(left, 1.0))
            if ready:
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # the child closed the terminal
                    chunk = b""
                if not chunk:
                    raise AssertionError(f"the terminal closed before {marker!r}: {seen[-2000:]!r}")
                seen += chunk

    try:
        read_until(b"> ", 1)
        os.write(master, b"system_upd\t")  # Tab: system_update_ (what every such tool starts with)
        os.write(master, b"se\t")  # Tab: system_update_setting, the only one
        os.write(master, b'{"key": "theme", "value": "dark"}\r')
        read_until(b"> ", 2)
        os.write(master, b"answer Dark mode is on.\r")
        assert proc.wait(timeout=max(1.0, deadline - time.monotonic())) == 0, seen[-2000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        os.close(master)
    [traj] = read_trajectories(trajectories_file(out))
    calls = [s for s in traj.steps if isinstance(s, ToolCallStep)]
    assert [(c.tool, c.arguments, c.error_code) for c in calls] == [
        ("system_update_setting", {"key": "theme", "value": "dark"}, None)
    ]
    assert traj.final_message == "Dark mode is on." and traj.scores is not None and traj.scores.success is True


def test_refused_calls_are_counted_without_a_recording_call_function():
    """In process (``run_in_process``: its call function has no ``record``), the player's refused
    calls are counted in the result's ``invalid_calls`` as an LLM agent's are; arguments nested
    too deeply to parse are refused like any unparsable arguments, not a crash of the episode."""
    import io

    import anyio
    from rich.console import Console

    from mcpgym.evaluation.agents.human import HumanAgent
    from mcpgym.evaluation.agents.inprocess import run_in_process, score_in_process
    from mcpgym.evaluation.tasks import get_task

    lines = iter(
        [
            "nosuchtool",  # refused 1
            "system_get_settings " + "[" * 50_000,  # refused 2: nested too deeply to parse
            'system_update_setting {"key": "theme", "value": "dark"}',  # reaches the tools
            "answer Dark mode is on.",
        ]
    )

    def read(prompt: str) -> str:
        return next(lines)

    human = HumanAgent(read=read, console=Console(file=io.StringIO(), width=200))
    task = get_task("system.dark_mode")
    traj = anyio.run(lambda: run_in_process(human, task, faults="none", trial=0))
    assert traj.status == "completed" and traj.final_message == "Dark mode is on."
    assert traj.invalid_calls == 2  # the two refused lines, counted (no step to record them in)
    scores = score_in_process(traj, task)
    assert (scores.tool_calls, scores.valid_calls, scores.invalid_calls, scores.error_calls) == (1, 1, 2, 0)
    assert "nested too deeply" in human.console.file.getvalue()


def test_bytes_that_are_not_utf8_cost_no_episode(tmp_path):
    """A line holding bytes that are not UTF-8 (Latin-1 'café', a stray 0xff) is read with
    U+FFFD in their place: the episode is recorded (it crashed at the end, losing it)."""
    out = tmp_path / "run"
    lines = b"system_get_settings {}\n\xff\nanswer caf\xe9 done\n"
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from mcpgym.evaluation.cli.app import main; main()",
            "play",
            "system.dark_mode",
            "--faults",
            "none",
            "--out",
            str(out),
        ],
        input=lines,
        capture_output=True,
        timeout=120,
        cwd=tmp_path,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    [traj] = read_trajectories(trajectories_file(out))
    assert traj.final_message == "caf\ufffd done"
    calls = [s for s in traj.steps if isinstance(s, ToolCallStep)]
    assert [(c.tool, c.invalid) for c in calls] == [("system_get_settings", False), ("\ufffd", True)]


def _play_bytes(data: bytes, out, tmp_path, **env: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-c", "from mcpgym.evaluation.cli.app import main; main()"]
        + ["play", "system.dark_mode", "--faults", "none", "--out", str(out)],
        input=data,
        capture_output=True,
        timeout=120,
        cwd=tmp_path,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **env},
    )


def test_a_call_line_over_the_limit_is_refused_and_counted_as_an_invalid_call(tmp_path):
    """A call line over MAX_LINE characters is not sent, and counted as an invalid call (play's
    help says a refused call is); an over-long ``answer`` line is a malformed command: a hint,
    no call. Counted by hand: 1 invalid call, 1 valid call."""
    from mcpgym.evaluation.agents.human import MAX_LINE

    out = tmp_path / "run"
    long_call = 'system_update_setting {"key": "theme", "value": "' + "d" * MAX_LINE + '"}'
    lines = [
        long_call,
        "answer " + "x" * MAX_LINE,
        'system_update_setting {"key": "theme", "value": "dark"}',
        "answer Done.",
    ]
    done = _play_bytes(("\n".join(lines) + "\n").encode(), out, tmp_path)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    text = done.stdout.decode()
    assert text.count("not sent: counted as an invalid call") == 1
    assert "the line is over 100,000 characters, the limit: not sent" in text
    assert "trial 0: status completed, success True, 1 valid / 1 invalid / 0 error calls" in text
    [traj] = read_trajectories(trajectories_file(out))
    calls = [s for s in traj.steps if isinstance(s, ToolCallStep)]
    assert [(c.step, c.tool, c.error_code, c.invalid) for c in calls] == [
        (None, "system_update_setting", "invalid_argument", True),
        (1, "system_update_setting", None, False),
    ]
    assert calls[0].raw_arguments is not None and len(calls[0].raw_arguments) <= 4_000  # kept bounded
    assert traj.scores.invalid_calls == 1 and traj.scores.valid_calls == 1 and traj.final_message == "Done."


def test_no_byte_sequence_on_standard_input_ends_the_episode(tmp_path):
    """Standard input decoded strictly (PYTHONIOENCODING=utf-8): a Latin-1 byte inside a tool's
    JSON arguments, a lone-surrogate escape, NUL and control bytes, a stray 0xff... each line is
    read (U+FFFD for a bad byte) or refused as an invalid call; the episode goes on and the
    answer is taken. Argument type errors name JSON types (null, string, number, boolean)."""
    out = tmp_path / "run"
    data = (
        b'system_update_setting {"key":"theme","value":"caf\xe9"}\n'  # sent, the app refuses it
        b'system_update_setting {"key":"theme","value":"\\ud800"}\n'  # refused: no text
        b"\xff\xfe\x00\x1b[2J\r\n"
        b'system_get_settings null\nsystem_get_settings "x"\nsystem_get_settings 3\nsystem_get_settings true\n'
        b'system_update_setting {"key":"theme","value":"dark"}\n'
        b"answer ok caf\xe9\n"
    )
    done = _play_bytes(data, out, tmp_path, PYTHONIOENCODING="utf-8")
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    text = done.stdout.decode(errors="replace")
    for name in ("null", "string", "number", "boolean"):
        assert f"the arguments must be a JSON object, got a JSON {name}" in text
    assert not re.search(r"NoneType|got a JSON (str|int|bool|list)\b", text)
    assert "half a UTF-16 pair" in text
    [traj] = read_trajectories(trajectories_file(out))
    assert traj.status == "completed", traj.stop_reason
    assert traj.final_message == "ok caf\ufffd"
    calls = [s for s in traj.steps if isinstance(s, ToolCallStep)]
    assert calls[0].arguments == {"key": "theme", "value": "caf\ufffd"} and calls[0].step == 1
    assert calls[1].invalid and calls[1].error_code == "invalid_argument"
    assert traj.scores.success is True


def test_play_refusals_and_help_name_only_what_play_has(tmp_path):
    """play has no --resume: a refused --out says so in play's own options; its help names the
    file it writes (trajectories.jsonl.zst) and what --force does (never a folder of other
    files), both checked against what play does."""
    from typer.testing import CliRunner

    from mcpgym.evaluation.cli.app import app

    said = " ".join(CliRunner().invoke(app, ["play", "--help"], env={"COLUMNS": "200"}).output.split())
    assert "trajectories.jsonl.zst" in said and "(trajectories.jsonl," not in said
    assert "--resume" not in said
    assert "an --out holding files mcpgym did not write is refused, and nothing in it is deleted" in said

    out = tmp_path / "run"
    assert _play_bytes(b"answer ok\n", out, tmp_path).returncode == 0
    assert (out / "trajectories.jsonl.zst").is_file() and not (out / "trajectories.jsonl").exists()
    again = _play_bytes(b"answer ok\n", out, tmp_path)
    err = " ".join(again.stderr.decode().split())
    assert again.returncode == 2 and "holds a run with recorded episodes" in err, err
    assert "--resume" not in err and "Pass --force to replace its run files, or choose another --out." in err
    assert _play_bytes(b"answer again\n", out, tmp_path, COLUMNS="200").returncode == 2  # still refused
    forced = subprocess.run(
        [sys.executable, "-c", "from mcpgym.evaluation.cli.app import main; main()"]
        + ["play", "system.dark_mode", "--faults", "none", "--out", str(out), "--force"],
        input=b"answer again\n",
        capture_output=True,
        timeout=120,
        cwd=tmp_path,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert forced.returncode == 0, forced.stderr.decode()[-2000:]
    [traj] = read_trajectories(trajectories_file(out))
    assert traj.final_message == "again"

    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine\n")
    refused = subprocess.run(
        [sys.executable, "-c", "from mcpgym.evaluation.cli.app import main; main()"]
        + ["play", "system.dark_mode", "--faults", "none", "--out", str(mine), "--force"],
        input=b"answer ok\n",
        capture_output=True,
        timeout=120,
        cwd=tmp_path,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    err = " ".join(refused.stderr.decode().split())
    assert refused.returncode == 2 and "in the way: notes.txt" in err and "choose another --out" in err, err
    assert (mine / "notes.txt").read_text() == "mine\n" and sorted(p.name for p in mine.iterdir()) == ["notes.txt"]
