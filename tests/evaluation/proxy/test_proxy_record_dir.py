"""``mcpgym proxy --record DIR`` claims DIR by the run-directory ownership rules before it serves
anything (docs/proxy.md, "Recording and scoring"): a user's own files there, a regular file given
as DIR, or a catalog passed with ``--catalog DIR/catalog.json`` are refused at start with a clear
error, and stay byte for byte as they were; a directory the proxy made is appended to only with
``--resume`` and started over only with ``--force`` (only mcpgym's files deleted). The same rules
hold for ``mcpgym run --proxy --out DIR``. A proxy that serves is the real command line in a
subprocess with ``mcpgym serve --transport stdio`` as the upstream; a refusal, which comes before
anything is served, is the same command line through typer's CliRunner (no interpreter start)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client
from typer.testing import CliRunner

from mcpgym.evaluation.cli import app
from mcpgym.evaluation.run.run_owner import MARKER_NAME, write_marker
from tests.conftest import ROOT
from tests.support.proxy_helpers import proxy_params, recorded

CLI = [sys.executable, "-m", "mcpgym.evaluation.cli"]
UPSTREAM = [*CLI, "serve", "--transport", "stdio"]


def proxy(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``mcpgym proxy ARGS... --upstream mcpgym serve --transport stdio`` with the client's pipe
    closed at once (a session without calls, recorded when the proxy may record)."""
    return subprocess.run(
        [*CLI, "proxy", "--faults", "none", *args, "--upstream", *UPSTREAM],
        input="",
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )


def refused(*args: str) -> str:
    """``mcpgym proxy ARGS... --upstream mcpgym serve --transport stdio`` refused before it serves:
    exit status 2; returns what it printed."""
    result = CliRunner().invoke(app, ["proxy", "--faults", "none", *args, "--upstream", *UPSTREAM])
    assert result.exit_code == 2, result.output
    return " ".join(result.output.split())


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every entry of ``folder`` (names, with their bytes): what must not change."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def user_dir(folder: Path) -> dict[str, bytes]:
    """A directory of the user's own, with a hand catalog and a log named like the proxy's files."""
    folder.mkdir()
    (folder / "catalog.json").write_text('[{"name": "shop_get_item", "kind": "read"}]\n')
    (folder / "trajectories.jsonl").write_text("my own log line\n")
    return snapshot(folder)


def test_a_directory_of_the_users_own_files_is_refused_before_the_proxy_starts(tmp_path):
    before = user_dir(tmp_path / "ud")
    for extra in ([], ["--resume"], ["--force"]):
        said = refused("--record", str(tmp_path / "ud"), *extra)
        assert "in the way: catalog.json, trajectories.jsonl" in said and "no .mcpgym-run marker" in said
        assert "Nothing was deleted" in said and ("another --record" in said or "Give the directory" in said)
        assert "recorded by an mcpgym proxy before record directories carried the .mcpgym-run marker" in said
        assert snapshot(tmp_path / "ud") == before  # byte for byte, and no marker or lock left behind
    said = refused("--catalog", str(tmp_path / "ud" / "catalog.json"), "--record", str(tmp_path / "ud"))
    assert "the proxy never rewrites a catalog you pass" in said
    assert snapshot(tmp_path / "ud") == before


def test_an_existing_file_given_as_the_record_directory_is_refused_at_start(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_bytes(b"my precious notes\n")
    assert f"--record {notes} is a file, not a directory" in refused("--record", str(notes))
    assert notes.read_bytes() == b"my precious notes\n"
    assert "exclude each other" in refused("--record", str(tmp_path / "new"), "--resume", "--force")
    assert "--resume needs --record DIR" in refused("--resume")
    assert not (tmp_path / "new").exists()


async def test_a_directory_the_proxy_made_is_continued_with_resume_and_started_over_with_force(tmp_path):
    rec = tmp_path / "rec"
    async with Client(proxy_params(rec, "--faults", "none", upstream=UPSTREAM)) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        await client.call_tool("shop_list_items" if "shop_list_items" in names else names[0], {})
    (first,) = recorded(rec)
    assert first["steps"] and (rec / MARKER_NAME).is_file() and (rec / "catalog.json").is_file()

    (rec / "catalog.json").write_text('[{"name": "shop_get_item", "kind": "write"}]\n')  # edited by hand
    before = snapshot(rec)
    said = refused("--record", str(rec))  # it holds a session: as `run --out` on its own run
    assert "Pass --resume to continue it, --force to replace its run files" in said
    said = refused("--resume", "--catalog", str(rec / "catalog.json"), "--record", str(rec))
    assert "never rewrites a catalog you pass: copy it out" in said
    assert snapshot(rec) == before

    copy = tmp_path / "my-catalog.json"
    copy.write_bytes(before["catalog.json"])
    out = proxy("--resume", "--catalog", str(copy), "--record", str(rec))  # the copy is read, never written
    assert out.returncode == 0, out.stderr
    assert copy.read_bytes() == before["catalog.json"]
    assert [t["episode_id"] for t in recorded(rec)][0] == first["episode_id"] and len(recorded(rec)) == 2

    (rec / "notes.txt").write_text("mine\n")  # a file of the user's in mcpgym's directory
    before = snapshot(rec)  # and the catalog edited by hand: the user's too (docs/proxy.md)
    assert "in the way: catalog.json, notes.txt" in refused("--record", str(rec), "--force")
    assert snapshot(rec) == before
    (rec / "notes.txt").unlink()
    (rec / "catalog.json").unlink()
    assert proxy("--record", str(rec), "--force").returncode == 0
    (only,) = recorded(rec)
    assert only["episode_id"] != first["episode_id"] and json.loads((rec / "catalog.json").read_text())


def test_resume_refuses_a_run_of_mcpgym_run_and_a_symlinked_catalog(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    write_marker(run)
    (run / "trajectories.jsonl.zst").write_bytes(b"")
    before = snapshot(run)
    assert "holds what a run of mcpgym run holds" in refused("--record", str(run), "--resume")
    assert snapshot(run) == before
    old_run = tmp_path / "old-run"  # a run from before markers: refused without gaining one
    old_run.mkdir()
    (old_run / "manifest.json").write_text('{"versions": {}, "invocations": [], "started_at": "2025"}\n')
    before = snapshot(old_run)
    assert "holds what a run of mcpgym run holds" in refused("--record", str(old_run), "--resume")
    assert snapshot(old_run) == before

    rec, elsewhere = tmp_path / "rec", tmp_path / "elsewhere.json"
    rec.mkdir()
    write_marker(rec)
    elsewhere.write_text("[]\n")
    (rec / "catalog.json").symlink_to(elsewhere)
    said = refused("--record", str(rec), "--resume")
    assert "not regular files; in the way: catalog.json" in said
    assert elsewhere.read_text() == "[]\n" and (rec / "catalog.json").is_symlink()


def test_run_proxy_claims_its_out_directory_by_the_same_rules(tmp_path):
    before = user_dir(tmp_path / "ud")
    tasks = tmp_path / "tasks.json"
    tasks.write_text(
        json.dumps([{"id": "t", "instruction": "Answer.", "checks": [{"kind": "contains", "value": "x"}]}])
    )
    replay = tmp_path / "replay.jsonl"  # the agent answers at once: an episode without calls
    replay.write_text(json.dumps({"episode_id": "r", "task_id": "t", "agent": "recorded", "steps": []}) + "\n")
    args = [
        "run",
        "--proxy",
        shlex.join(UPSTREAM),
        "--tasks",
        str(tasks),
        "--agent",
        f"replay:{replay}",
        "--trials",
        "1",
    ]

    def run(out: Path, *extra: str) -> tuple[int, str]:
        result = CliRunner().invoke(app, [*args, "--out", str(out), *extra])
        return result.exit_code, " ".join(result.output.split())

    code, said = run(tmp_path / "ud")  # refused before any episode
    assert code == 2 and "no .mcpgym-run marker" in said and "in the way: catalog.json" in said, said
    assert "choose another --out" in said and "--record" not in said, said  # run --proxy's own option
    assert snapshot(tmp_path / "ud") == before

    out = tmp_path / "out"
    assert run(out)[0] == 0 and len(recorded(out)) == 1
    code, said = run(out)
    assert code == 2 and "Pass --resume to continue it" in said and len(recorded(out)) == 1, said
    assert "or choose another --out" in said and "--record" not in said, said
    # --resume skips the (agent, task, trial) already recorded, as mcpgym run --resume does: it
    # once ran trial 0 again, and mcpgym score then left the second line out as a duplicate
    code, said = run(out, "--resume")
    assert code == 0 and len(recorded(out)) == 1, said
    assert "1 episode already recorded" in said and "not run again" in said, said
    code, said = run(out, "--resume", "--trials", "2")  # more trials: only the new one runs
    assert code == 0 and [t["trial"] for t in recorded(out)] == [0, 1], said
    assert "trial 1:" in said and "trial 0:" not in said, said
    # another fault seed or profile would mix two conditions in one directory: refused, nothing run
    for extra, says in ((("--fault-seed", "5"), "--fault-seed 5 differs"), (("--faults", "harsh"), "--faults harsh")):
        code, said = run(out, "--resume", "--trials", "3", *extra)
        assert code == 2 and says in said and len(recorded(out)) == 2, said


def test_run_proxy_names_the_flags_the_user_typed(tmp_path):
    """``mcpgym run --proxy`` errors name ``--out`` (they said ``--record``, the flag of
    ``mcpgym proxy``), and an empty ``--proxy`` says it needs a command or URL (it spoke of
    ``--upstream``)."""
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps([{"id": "t", "instruction": "A.", "checks": [{"kind": "contains", "value": "x"}]}]))
    replay = tmp_path / "replay.jsonl"
    replay.write_text(json.dumps({"episode_id": "r", "task_id": "t", "agent": "recorded", "steps": []}) + "\n")
    base = ["run", "--tasks", str(tasks), "--agent", f"replay:{replay}"]

    def said(*args: str) -> str:
        result = CliRunner().invoke(app, [*base, *args])
        assert result.exit_code == 2, result.output
        return " ".join(result.output.split())

    for empty in ("", "   "):
        text = said("--proxy", empty, "--out", str(tmp_path / "o"))
        assert "--proxy needs a command or URL" in text and "--upstream" not in text, text
    assert not (tmp_path / "o").exists()
    upstream = shlex.join(UPSTREAM)
    a_file = tmp_path / "a-file"
    a_file.write_text("mine\n")
    text = said("--proxy", upstream, "--out", str(a_file))
    assert f"--out {a_file} is a file, not a directory" in text and "--record" not in text, text
    out = tmp_path / "o"
    out.mkdir()
    write_marker(out)
    (out / "catalog.json").write_text("[]\n")
    text = said("--proxy", upstream, "--out", str(out), "--catalog", str(out / "catalog.json"))
    assert f"the file --out {out} rewrites" in text and "--record" not in text, text
    (out / "catalog.json").unlink()
    (out / "trajectories.jsonl").mkdir()  # named like the proxy's file, not a regular file
    text = said("--proxy", upstream, "--out", str(out), "--resume")
    assert "choose another --out" in text and "--record" not in text, text


def test_a_session_ending_in_a_directory_that_stopped_being_mcpgyms_writes_nothing(tmp_path):
    from mcpgym.evaluation.proxy.classify import ToolClassifier
    from mcpgym.evaluation.proxy.record import RecordDirError, hold_record_dir, record_session
    from mcpgym.evaluation.records.trajectory import Trajectory

    rec, traj, classifier = tmp_path / "rec", Trajectory(episode_id="e", agent="a"), ToolClassifier(None)
    with hold_record_dir(rec) as held:  # claimed: the marker is written, no catalog of the user's
        assert (held.path, held.user_catalog) == (rec, None) and (rec / MARKER_NAME).is_file()
    (rec / MARKER_NAME).unlink()  # the user emptied it during the session and put a file of theirs there
    (rec / "catalog.json").write_text("mine\n")
    before = snapshot(rec)
    with pytest.raises(RecordDirError, match="lost its .mcpgym-run marker during the session"):
        record_session(rec, traj, classifier)
    assert snapshot(rec) == before
    (rec / "catalog.json").unlink()  # removed whole: made again, with a new marker
    record_session(rec, traj, classifier)
    assert (rec / MARKER_NAME).is_file() and [t["episode_id"] for t in recorded(rec)] == ["e"]
