"""Who owns a proxy record folder, and for how long (docs/proxy.md, "Recording and scoring";
docs/guarantees.md, "No user file is deleted"). Found by a hostile new-user try:

1. a live ``mcpgym proxy --record D --resume`` holds D in use for its whole life: ``--force`` on D
   and ``mcpgym run --out D`` are refused naming the holder, while a second ``--resume`` session
   records beside it;
2. a copied ``.mcpgym-run`` marker is no proof for a ``trajectories.jsonl`` of the user's:
   ``--force`` and ``--resume`` refuse naming it, and nothing is deleted or appended;
3. a ``catalog.json`` changed by hand is kept byte for byte and classifies later sessions;
5. ``mcpgym run --resume --out D`` on a proxy record folder is refused naming what D is (and
   ``mcpgym proxy --force`` on a run of ``mcpgym run``);
6. an empty ``--record``, a dangling symlink, a path through a file and an unwritable folder
   get one line naming the path and what is wrong.

The proxy is the real command line (a subprocess driven by the SDK client, or typer's CliRunner
for a refusal, which comes before anything is served) over the SDK test upstream
(tests/support/proxy_upstream.py).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest
from mcp import Client
from typer.testing import CliRunner

from mcpgym.evaluation.cli import app
from mcpgym.evaluation.run.run_owner import MARKER_NAME, write_marker
from mcpgym.evaluation.tasks import load_tasks
from tests.support.proxy_helpers import proxy_params, recorded, score_json

UNREACHABLE = ["--server", "http://127.0.0.1:9", "--token", "t"]  # a refusal comes before any server use
RUN = ["run", "--task", load_tasks("smoke")[0].id, "--trials", "1", "--agent", "careful", "--quiet"]


def upstream(tmp_path: Path) -> list[str]:
    """The SDK test upstream keeping its notes in ``tmp_path/notes``."""
    (tmp_path / "notes").mkdir(exist_ok=True)
    return [sys.executable, "-m", "tests.support.proxy_upstream", str(tmp_path / "notes")]


def cli(*args: str) -> tuple[int, str]:
    """The real command line through CliRunner: (exit code, output on one line)."""
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, " ".join(result.output.split())


def refused(tmp_path: Path, *args: str) -> str:
    """``mcpgym proxy ARGS... --upstream UPSTREAM`` refused before it serves (exit 2): what it said."""
    code, said = cli("proxy", "--faults", "none", *args, "--upstream", *upstream(tmp_path))
    assert code == 2, said
    return said


def snapshot(folder: Path) -> dict[str, str]:
    """Every entry of ``folder`` (but the lock file of a live holder) with its content's hash."""
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.name != ".mcpgym.lock"
    }


async def session(rec: Path, tmp_path: Path, *options: str, text: str = "hello") -> None:
    """One proxy session recorded into ``rec``: tools/list and a ``note_write`` call."""
    async with Client(proxy_params(rec, "--faults", "none", *options, upstream=upstream(tmp_path))) as client:
        await client.list_tools()
        await client.call_tool("note_write", {"name": "a", "text": text})


async def test_a_live_resume_session_holds_the_folder_against_force_and_run(tmp_path):
    rec = tmp_path / "rec"
    await session(rec, tmp_path)
    async with Client(proxy_params(rec, "--faults", "none", "--resume", upstream=upstream(tmp_path))) as first:
        await first.list_tools()  # served: the claim is made and held
        before = snapshot(rec)
        said = refused(tmp_path, "--record", str(rec), "--force")
        assert f"record directory {rec} is in use by process" in said and "mcpgym proxy --record" in said, said
        assert "wait for it to finish, or write to another --record" in said
        said = refused(tmp_path, "--record", str(rec))  # a plain claim may delete too: refused alike
        assert "is in use by process" in said
        code, said = cli(*RUN, *UNREACHABLE, "--out", str(rec), "--force")
        assert code == 2 and f"run directory {rec} is in use by process" in said, said
        assert snapshot(rec) == before  # the earlier session is still there
        # a second --resume session beside it: both record (their writes take turns)
        await session(rec, tmp_path, "--resume", text="second")
        await first.call_tool("note_write", {"name": "b", "text": "first"})
    assert len(recorded(rec)) == 3
    assert not (rec / ".mcpgym.lock").exists()  # the last holder took the lock file with it
    await session(rec, tmp_path, "--force")  # unused now: --force starts over
    assert len(recorded(rec)) == 1


def test_a_copied_marker_is_no_proof_for_the_users_trajectories(tmp_path):
    made, made_run = tmp_path / "made", tmp_path / "made-run"
    made.mkdir()
    made_run.mkdir()
    write_marker(made, kind="proxy")  # a proxy's marker, and a run's
    write_marker(made_run)
    for extra in (["--force"], ["--resume"], []):
        fm3 = tmp_path / f"fm3{''.join(extra)}"
        fm3.mkdir()
        (fm3 / MARKER_NAME).write_bytes((made / MARKER_NAME).read_bytes())  # cp r1/.mcpgym-run fm3/
        (fm3 / "trajectories.jsonl").write_text("keep\n")
        before = snapshot(fm3)
        said = refused(tmp_path, "--record", str(fm3), *extra)
        assert "trajectories.jsonl" in said and "Nothing was deleted" in said, said
        assert snapshot(fm3) == before and (fm3 / "trajectories.jsonl").read_text() == "keep\n"
        (fm3 / MARKER_NAME).write_bytes((made_run / MARKER_NAME).read_bytes())  # mcpgym run: the same
        before = snapshot(fm3)
        code, said = cli(*RUN, *UNREACHABLE, "--out", str(fm3), *extra)
        assert code == 2 and "trajectories.jsonl" in said, said
        assert snapshot(fm3) == before


async def test_a_catalog_edited_by_hand_is_kept_and_classifies_later_sessions(tmp_path):
    rec = tmp_path / "rec"
    await session(rec, tmp_path)
    (first,) = recorded(rec)
    assert first["metadata"]["proxy"]["tool_sources"]["note_write"] == "annotations"
    rows = json.loads((rec / "catalog.json").read_text())
    assert {r["name"]: r["kind"] for r in rows}["note_write"] == "write"
    digest = json.loads((rec / MARKER_NAME).read_text())["catalog_sha256"]  # what mcpgym wrote last
    assert digest == hashlib.sha256((rec / "catalog.json").read_bytes()).hexdigest()
    # the user fixes a classification, in their own layout
    mine = '[\n  {"name": "note_write", "kind": "read"},   // not JSON5: kept as text anyway\n]\n'
    (rec / "catalog.json").write_text(mine)
    said = refused(tmp_path, "--record", str(rec), "--resume")  # not JSON: named, nothing lost
    assert "catalog.json" in said and (rec / "catalog.json").read_text() == mine
    mine = '[\n  {"name": "note_write",   "kind": "read"}\n]\n'
    (rec / "catalog.json").write_text(mine)
    await session(rec, tmp_path, "--resume", text="again")
    assert (rec / "catalog.json").read_text() == mine  # byte for byte
    second = recorded(rec)[1]
    assert second["metadata"]["proxy"]["tool_sources"]["note_write"] == "catalog"
    assert second["metadata"]["proxy"]["catalog"] == str(rec / "catalog.json")
    report = score_json(rec, explicit=False)  # mcpgym score DIR: the folder's catalog, the user's
    assert report["catalog"] == str(rec / "catalog.json"), report["catalog"]
    # a session with tools the user's catalog has no row for: kept all the same, and said
    import mcp_types

    from mcpgym.evaluation.proxy.classify import ToolClassifier
    from mcpgym.evaluation.proxy.record import CatalogKeptWarning, record_session
    from mcpgym.evaluation.records.trajectory import Trajectory

    classifier = ToolClassifier(rec / "catalog.json")
    for name in ("note_write", "note_read"):
        classifier.proxied(mcp_types.Tool(name=name, input_schema={"type": "object"}))
    with pytest.warns(CatalogKeptWarning, match=r"changed by hand since mcpgym wrote it.*no row for note_read"):
        record_session(rec, Trajectory(episode_id="e", agent="a"), classifier)
    assert (rec / "catalog.json").read_text() == mine
    # --force deletes only what mcpgym wrote: the user's catalog is in the way
    before = snapshot(rec)
    said = refused(tmp_path, "--record", str(rec), "--force")
    assert "in the way: catalog.json" in said and snapshot(rec) == before


def test_run_resume_refuses_a_proxy_record_folder_and_proxy_a_run(tmp_path):
    from mcpgym.evaluation.proxy.classify import ToolClassifier
    from mcpgym.evaluation.proxy.record import hold_record_dir
    from mcpgym.evaluation.records.trajectory import Trajectory

    rec = tmp_path / "rec"
    with hold_record_dir(rec) as held:
        held.record(Trajectory(episode_id="e", agent="a"), ToolClassifier(None))
    before = snapshot(rec)
    for extra in (["--resume"], ["--force"], []):
        code, said = cli(*RUN, *UNREACHABLE, "--out", str(rec), *extra)
        assert code == 2 and "is a record directory of mcpgym proxy" in said, said
        assert f"mcpgym proxy --record {rec} --resume" in said
        assert snapshot(rec) == before
    run = tmp_path / "run"  # a run of mcpgym run (its marker says so)
    run.mkdir()
    run_id = write_marker(run)
    (run / "manifest.json").write_text(json.dumps({"manifest_version": 1, "run_id": run_id}))
    (run / "trajectories.jsonl.zst").write_bytes(b"")
    before = snapshot(run)
    for extra in (["--force"], []):
        said = refused(tmp_path, "--record", str(run), *extra)
        assert "is a run directory of mcpgym run, not a record directory of mcpgym proxy" in said, said
        assert snapshot(run) == before


def test_bad_record_paths_get_one_line_naming_the_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    said = refused(tmp_path, "--record", "")
    assert said == "error: --record needs a directory: an empty path would record into the current directory"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes"]  # nothing written here
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "gone")
    said = refused(tmp_path, "--record", str(dangling))
    assert f"--record {dangling} is a symlink to {tmp_path / 'gone'}, which does not exist" in said
    code, said = cli(*RUN, *UNREACHABLE, "--out", str(dangling))  # mcpgym run --out: the same line
    assert code == 2 and f"--out {dangling} is a symlink to {tmp_path / 'gone'}, which does not exist" in said
    (tmp_path / "file").write_text("mine\n")
    said = refused(tmp_path, "--record", str(tmp_path / "file" / "rec"))
    assert "a part of that path is a file, not a directory" in said and "Errno" not in said, said
    said = refused(tmp_path, "--record", "/proc/self")
    assert said.startswith("error: --record /proc/self: mcpgym cannot create its files in that directory"), said
    assert "Errno" not in said and said.count("error:") == 1


def test_a_resume_waits_for_an_exclusive_claim_to_end_and_never_for_a_run(tmp_path):
    import threading

    from mcpgym.evaluation.proxy.record import RecordDirError, hold_record_dir
    from mcpgym.evaluation.run.run_lock import hold_lock

    rec = tmp_path / "rec"
    with hold_record_dir(rec) as held:  # claimed: the marker is written, no catalog of the user's
        assert (held.path, held.user_catalog) == (rec, None) and (rec / MARKER_NAME).is_file()
    claimed, release = threading.Event(), threading.Event()

    def another_proxy_claiming() -> None:  # what a --force claim holds for a moment
        with hold_lock(rec, command="mcpgym proxy --record rec --force"):
            claimed.set()
            release.wait(30)

    worker = threading.Thread(target=another_proxy_claiming)
    worker.start()
    claimed.wait(30)
    threading.Timer(0.3, release.set).start()
    with hold_record_dir(rec, resume=True) as held:  # waited for the claim, then shared the folder
        assert held.path == rec
    worker.join(30)
    with (
        hold_lock(rec, command="mcpgym run --out rec"),  # a run holds it for its whole life
        pytest.raises(RecordDirError, match="is in use by process .*mcpgym run --out rec"),
        hold_record_dir(rec, resume=True),
    ):
        raise AssertionError("a --resume proxy was let into a folder a run holds")
