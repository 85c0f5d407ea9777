"""``mcpgym cat`` prints trajectory lines, and only those: any other file (notes, another
format, zstd frames of something else) is refused with one bounded error line, exit 2 and
nothing on stdout (it printed any file as if it were trajectories, exit 0; found by a new-user try).

The command runs for real through typer's CliRunner on real files in ``tmp_path``; the
trajectories are real episodes of the scripted ``careful`` agent.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from typer.testing import CliRunner

from mcpgym.evaluation.agents import make_agent
from mcpgym.evaluation.cli.app import app
from mcpgym.evaluation.formats.atif import write_atif
from mcpgym.evaluation.records.compressed import compress_line
from mcpgym.evaluation.records.snapshots import SnapshotStore
from mcpgym.evaluation.records.trajectory import append_trajectory, write_trajectories
from mcpgym.evaluation.run.gym import GymEpisode
from mcpgym.evaluation.run.run_dir import TRAJECTORIES, TRAJECTORIES_ZST
from mcpgym.evaluation.tasks import load_tasks


@pytest.fixture(scope="module")
def trajs():
    out = []
    for task in load_tasks("smoke")[:2]:
        ep = GymEpisode.create(task, trial=0, agent_name="careful")
        out.append(anyio.run(ep.run_agent, make_agent("careful")))
    return out


def cat(path: Path):
    return CliRunner().invoke(app, ["cat", str(path)])


def assert_refused(res, *names: str) -> None:
    assert res.exit_code == 2, res.output
    assert res.stdout == "", res.stdout[:300]
    assert "Not a trajectories file" in res.stderr and "nothing was printed" in res.stderr, res.stderr
    for name in names:
        assert name in res.stderr, res.stderr


def test_a_file_that_is_not_trajectory_lines_is_refused(tmp_path: Path, trajs) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("my precious notes\n")
    assert_refused(cat(notes), "notes.txt:1: invalid JSON")

    # JSON Lines, but of another format: mcpgym's own ATIF export of the same episodes
    atif = tmp_path / "trajectories.atif.jsonl"
    write_atif(trajs, atif)
    assert_refused(cat(atif), "trajectories.atif.jsonl:1: field 'episode_id': missing (required)")

    # JSON objects that are no trajectory, one of them on line 3
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(trajs[0].model_dump_json() + "\n\n" + json.dumps({"steps": [], "hello": 1}) + "\n")
    assert_refused(cat(mixed), "mixed.jsonl:3: field 'episode_id': missing (required)")

    # a JSON value that is not an object
    listed = tmp_path / "list.jsonl"
    listed.write_text("[1, 2]\n")
    assert_refused(cat(listed), "must be a JSON object, got a JSON array")

    # zstd frames as a run writes them, holding something else
    frames = tmp_path / "other.jsonl.zst"
    frames.write_bytes(compress_line(b"hello world\n") + compress_line(b"second\n"))
    assert_refused(cat(frames), "other.jsonl.zst:1: invalid JSON")

    # a run directory whose trajectories file holds something else is refused the same way
    run = tmp_path / "run"
    run.mkdir()
    (run / TRAJECTORIES_ZST).write_bytes(compress_line(b'{"not": "a trajectory"}\n'))
    assert_refused(cat(run), TRAJECTORIES_ZST)

    # a folder without trajectories, and a binary file, as before: one error line, exit 2
    (tmp_path / "empty_dir").mkdir()
    res = cat(tmp_path / "empty_dir")
    assert (
        res.exit_code == 2
        and res.stdout == ""
        and "is not a run directory: it has no trajectories.jsonl.zst" in res.stderr
    )
    binary = tmp_path / "blob.bin"
    binary.write_bytes(bytes(range(256)) * 4)
    res = cat(binary)
    assert res.exit_code == 2 and res.stdout == "" and "not UTF-8" in res.stderr


def test_the_echo_of_a_bad_line_is_bounded(tmp_path: Path) -> None:
    huge_key = "k" * 200_000
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({huge_key: "v" * 200_000, "episode_id": "e", "agent": "a", "steps": []}) + "\n")
    res = cat(bad)
    assert_refused(res, ": unknown field")
    assert len(res.stderr) < 1000, len(res.stderr)
    assert "kkkk" in res.stderr and "v" * 100 not in res.stderr


def test_trajectory_files_print_as_written(tmp_path: Path, trajs) -> None:
    # a run directory (zstd frames, compact lines), its file given directly, and plain JSON Lines
    run = tmp_path / "run"
    store = SnapshotStore(run)
    for t in trajs:
        append_trajectory(run / TRAJECTORIES_ZST, t.compacted(store))
    for target in (run, run / TRAJECTORIES_ZST):
        res = cat(target)
        assert res.exit_code == 0, res.output
        assert [json.loads(ln)["episode_id"] for ln in res.stdout.splitlines()] == [t.episode_id for t in trajs]
    plain = tmp_path / "old" / TRAJECTORIES
    write_trajectories(plain, trajs)
    for target in (plain.parent, plain):
        res = cat(target)
        assert res.exit_code == 0, res.output
        assert res.stdout == plain.read_text()

    # a plain file whose last line was cut short (a killed write): the rest prints, the tail is said
    whole = plain.read_text()
    plain.write_text(whole + trajs[0].model_dump_json()[:50])
    res = cat(plain)
    assert res.exit_code == 0, res.output
    assert res.stdout == whole
    assert "the last line is torn" in res.stderr

    # an empty trajectories file (a run that recorded nothing): nothing printed, said on stderr
    empty = tmp_path / "empty" / TRAJECTORIES
    empty.parent.mkdir()
    empty.write_text("")
    res = cat(empty)
    assert (res.exit_code, res.stdout) == (0, "") and "holds no trajectory lines" in res.stderr


def test_cat_says_what_is_wrong_in_plain_words(tmp_path: Path, trajs) -> None:
    """A run directory whose trajectories.jsonl.zst is a folder, a FIFO or a symlink to
    /dev/zero is named as such (not "it has no trajectories.jsonl.zst"); pretty-printed JSON
    (a run's scores.json) is said not to be JSON Lines; a schema error names the field and the
    value, not pydantic's internals; blank lines of a plain file are not echoed."""
    import os

    cases = {"folder": "is a directory, not a file", "fifo": "is a named pipe (FIFO), not a file"}
    cases["zero"] = "is a symlink to /dev/zero (a character device), not a file"
    cases["dangling"] = "is a symlink to nowhere-at-all, which does not exist"
    for name, said in cases.items():
        run = tmp_path / name
        run.mkdir()
        file = run / TRAJECTORIES_ZST
        if name == "folder":
            file.mkdir()
        elif name == "fifo":
            os.mkfifo(file)
        else:
            file.symlink_to("/dev/zero" if name == "zero" else "nowhere-at-all")
        res = cat(run)
        assert res.exit_code == 2 and res.stdout == "", res.output
        assert f"{run} is not a run directory: its {TRAJECTORIES_ZST} {said}" in res.stderr, res.stderr

    scores = tmp_path / "scores.json"
    scores.write_text(json.dumps({"agents": {"careful": {"episodes": 2}}}, indent=2) + "\n")
    res = cat(scores)
    assert res.exit_code == 2 and res.stdout == ""
    assert f"{scores} is not a JSONL trajectory file: it holds one JSON object over several lines" in res.stderr

    line = json.loads(trajs[0].model_dump_json())
    line["steps"][0]["type"] = "bogus"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(line) + "\n")
    res = cat(bad)
    assert_refused(res, "bad.jsonl:1: field 'steps.0.type' = \"bogus\": not one of tool_call, message, user_turn")
    assert "Input tag" not in res.stderr and "_step_type" not in res.stderr
    line = json.loads(trajs[0].model_dump_json()) | {"trial": "first"}
    bad.write_text(json.dumps(line) + "\n")
    res = cat(bad)
    assert_refused(res, "field 'trial' = \"first\": input should be a valid integer, got a JSON string")

    blank = tmp_path / "blank.jsonl"
    records = [t.model_dump_json() for t in trajs]
    blank.write_text("\n" + records[0] + "\n\n  \n" + records[1] + "\n\n")
    res = cat(blank)
    assert res.exit_code == 0 and res.stdout == records[0] + "\n" + records[1] + "\n", res.stdout[:300]
