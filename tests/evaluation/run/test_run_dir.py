"""Compact, race-free run directories (issue 14).

Snapshots stored once per distinct state and finals as diffs, re-judged by ``score`` and
``report``; old self-contained directories still load; one writer per directory (a second
run or ``--resume`` is refused naming the holder; two concurrent resumes record each
episode once); repeated records are loaded once with a warning; a failed start leaves the
directory reusable; the interrupt message names only files that exist.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from mcpgym.evaluation.agents import make_agent
from mcpgym.evaluation.cli.app import app
from mcpgym.evaluation.cli.run import interrupt_message
from mcpgym.evaluation.records.snapshots import apply_diff, state_diff
from mcpgym.evaluation.records.trajectory import read_trajectories, write_trajectories
from mcpgym.evaluation.run.run_dir import DuplicateRecordWarning, compute_scores, load_run, prepare_out_dir, rescore
from mcpgym.evaluation.run.run_lock import LOCK_NAME, RunDirLocked, run_lock
from mcpgym.evaluation.run.run_owner import MARKER_NAME, SERVER_LOG_HEADER, read_marker
from mcpgym.evaluation.run.runner import AgentEntry, RunConfig, RunError, run_evaluation
from mcpgym.evaluation.scoring.tool_catalog import Catalog
from mcpgym.evaluation.tasks import get_task
from tests.conftest import ROOT, run_text

TASKS = ["system.dark_mode", "system.moved_to_porto"]


def _run(
    out: Path, server: tuple[str, str], *, agents=("careful", "overconfident"), trials: int = 2, resume: bool = False
):
    url, token = server
    return run_evaluation(
        [get_task(t) for t in TASKS],
        [AgentEntry(a, make_agent(a)) for a in agents],
        RunConfig(out=out, trials=trials, faults="default", server_url=url, token=token, progress=False, resume=resume),
    )


@pytest.fixture(scope="module")
def compact_run(http_server, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("compact") / "run"
    result = _run(out, http_server)
    assert result.ran == 8 and not result.failures
    return out


def test_snapshots_are_stored_once_and_finals_as_diffs(compact_run: Path) -> None:
    lines = [json.loads(line) for line in run_text(compact_run).splitlines()]
    assert len(lines) == 8
    files = sorted(p.name for p in (compact_run / "snapshots").iterdir())
    # one initial and one gold state per task, whatever the number of agents and trials
    assert len(files) == 4, files
    for line in lines:
        assert line["initial_snapshot"] is None and line["final_snapshot"] is None and line["gold_snapshot"] is None
        assert (
            line["stored"]["initial"].startswith("snapshots/") and (compact_run / line["stored"]["initial"]).is_file()
        )
        assert len(json.dumps(line)) < 20_000
    by_task = {}
    for line in lines:
        by_task.setdefault(line["task_id"], set()).add((line["stored"]["initial"], line["stored"]["gold"]))
    assert all(len(refs) == 1 for refs in by_task.values())


def test_score_and_report_rejudge_a_compact_run(compact_run: Path) -> None:
    trajs = load_run(compact_run)
    assert all(t.initial_snapshot and t.final_snapshot and t.gold_snapshot and t.stored is None for t in trajs)
    fresh, changed = rescore(trajs, Catalog.from_apps())
    assert changed == 0 and len(fresh) == 8
    assert {(s.agent, s.success) for s in fresh} >= {("careful", True)}
    res = CliRunner().invoke(app, ["score", str(compact_run / "trajectories.jsonl.zst"), "--json"])
    assert res.exit_code == 0, res.output
    stored = json.loads((compact_run / "scores.json").read_text())
    assert json.loads(res.output)["agents"] == stored["agents"]
    res = CliRunner().invoke(app, ["report", str(compact_run)])
    assert res.exit_code == 0, res.output
    assert (compact_run / "report.html").is_file()


def test_an_old_self_contained_run_still_loads(compact_run: Path, tmp_path: Path) -> None:
    full = read_trajectories(compact_run / "trajectories.jsonl.zst")
    old = tmp_path / "old"
    old.mkdir()
    write_trajectories(old / "trajectories.jsonl", full)  # snapshots inline, as before compact runs
    line = json.loads((old / "trajectories.jsonl").read_text().splitlines()[0])
    assert line["stored"] is None and line["initial_snapshot"]["state"]
    reloaded = load_run(old)
    assert [t.final_snapshot for t in reloaded] == [t.final_snapshot for t in full]
    assert compute_scores(reloaded).model_dump(mode="json") == json.loads((compact_run / "scores.json").read_text())
    assert rescore(reloaded, Catalog.from_apps())[1] == 0


def test_a_missing_snapshot_file_names_line_and_field(compact_run: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "trajectories.jsonl").write_text(run_text(compact_run))
    with pytest.raises(ValueError, match=r"trajectories.jsonl:1: field stored: snapshot file .* is missing"):
        load_run(broken)
    assert len(load_run(broken, states=False)) == 8


def test_a_locked_run_directory_is_refused_naming_the_holder(http_server, tmp_path: Path) -> None:
    out = tmp_path / "locked"
    with run_lock(out, command="mcpgym run --out locked"):
        with pytest.raises(RunError, match=rf"in use by process {os.getpid()} on .*mcpgym run --out locked"):
            _run(out, http_server, agents=("careful",), trials=1)
        with pytest.raises(RunDirLocked), run_lock(out):
            raise AssertionError("a second lock on a locked run directory was granted")
    assert not (out / "trajectories.jsonl").exists() and not (out / "trajectories.jsonl.zst").exists()
    result = _run(out, http_server, agents=("careful",), trials=1)  # released: the directory is usable
    assert result.ran == 2
    assert not (out / LOCK_NAME).exists()  # the run's own lock file goes with it


def test_the_lock_file_is_removed_when_ours_and_never_granted_twice(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    out = tmp_path / "lockfile"
    with run_lock(out) as path:
        assert json.loads(path.read_text())["pid"] == os.getpid()
    assert not path.exists()  # mcpgym's lock file: removed as the lock ends
    path.write_text("")  # an empty file of that name that mcpgym did not create: locked, left alone
    with run_lock(out) as held:
        assert held == path and path.read_text() == ""  # locked in place, not rewritten
    assert path.exists() and path.read_text() == ""
    path.unlink()
    # a writer that locked the file a finishing holder removed meanwhile opens the path again
    from mcpgym.evaluation.run import run_lock as lock_module

    real_open, opened = lock_module._open_locked, []

    def open_a_removed_file_first(root: Path, at: Path, **how: object) -> tuple[int, bool]:
        fd, created = real_open(root, at, **how)
        if not opened:  # what a writer holds when the holder before it unlinked the file
            at.unlink()
        opened.append(fd)
        return fd, created

    monkeypatch.setattr(lock_module, "_open_locked", open_a_removed_file_first)
    with run_lock(out) as fresh:
        assert len(opened) == 2 and fresh.exists()  # the second open: a new file at the path, locked
        assert os.fstat(opened[1]).st_ino == os.stat(fresh).st_ino
        monkeypatch.setattr(lock_module, "_open_locked", real_open)
        with pytest.raises(RunDirLocked), run_lock(out):
            raise AssertionError("a second lock on a locked run directory was granted")


def test_two_concurrent_resumes_record_each_episode_once(http_server, tmp_path: Path) -> None:
    url, token = http_server
    first = tmp_path / "first"
    base = [
        "run",
        "--agent",
        "careful",
        "--task",
        TASKS[0],
        "--trials",
        "3",
        "--faults",
        "default",
        "--server",
        url,
        "--token",
        token,
        "-q",
    ]
    assert CliRunner().invoke(app, [*base, "--out", str(first)]).exit_code == 0
    race = tmp_path / "race"
    race.mkdir()
    (race / "manifest.json").write_text((first / "manifest.json").read_text())
    (race / "trajectories.jsonl").write_text(run_text(first).splitlines(keepends=True)[0])
    cmd = [sys.executable, "-m", "mcpgym.evaluation.cli", *base, "--out", str(race), "--resume"]
    procs = [
        subprocess.Popen(cmd, cwd=str(ROOT), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outcomes = [(p.wait(timeout=120), p.stderr.read()) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    refused = [err for code, err in outcomes if code != 0]
    assert all("is in use by process" in err for err in refused), outcomes
    assert len(refused) <= 1
    rows = [json.loads(line) for line in run_text(race).splitlines()]
    keys = [(r["agent"], r["task_id"], r["trial"]) for r in rows]
    assert sorted(keys) == [("careful", TASKS[0], t) for t in range(3)]
    scores = json.loads((race / "scores.json").read_text())["agents"]["careful"]
    assert scores["episodes"] == 3


def test_repeated_records_are_loaded_once_with_a_warning(compact_run: Path, tmp_path: Path) -> None:
    dup = tmp_path / "dup"
    (dup / "snapshots").mkdir(parents=True)
    for f in (compact_run / "snapshots").iterdir():
        (dup / "snapshots" / f.name).write_bytes(f.read_bytes())
    lines = run_text(compact_run).splitlines(keepends=True)
    second = json.loads(lines[0])
    second["episode_id"] = "ep-copy"
    second["scores"]["success"] = not second["scores"]["success"]
    (dup / "trajectories.jsonl").write_text("".join(lines) + json.dumps(second) + "\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trajs = load_run(dup)
    assert len(trajs) == 8 and "ep-copy" not in {t.episode_id for t in trajs}
    [w] = [w for w in caught if issubclass(w.category, DuplicateRecordWarning)]
    assert f"{second['agent']}/{second['task_id']}/trial {second['trial']}" in str(w.message)
    assert compute_scores(trajs).model_dump(mode="json") == json.loads((compact_run / "scores.json").read_text())
    res = CliRunner().invoke(app, ["score", str(dup / "trajectories.jsonl"), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["agents"] == json.loads((compact_run / "scores.json").read_text())["agents"]


def test_a_failed_start_leaves_the_directory_reusable(tmp_path: Path) -> None:
    out = tmp_path / "failed"
    out.mkdir()
    (out / LOCK_NAME).write_text("")
    assert prepare_out_dir(out, resume=False, force=False) == out  # empty but for the lock: claimed
    run_id = read_marker(out)
    assert run_id is not None
    # what a run that failed before its first episode leaves behind, under its own marker
    for name, text in (
        ("manifest.json", json.dumps({"manifest_version": 1, "run_id": run_id})),
        ("scores.json", '{"agents": {}}'),
        ("server.log", SERVER_LOG_HEADER + "boom\n"),
        ("trajectories.jsonl", ""),
    ):
        (out / name).write_text(text)
    assert prepare_out_dir(out, resume=False, force=False) == out
    assert sorted(p.name for p in out.iterdir()) == [MARKER_NAME, LOCK_NAME]
    assert read_marker(out) not in (None, run_id)  # a new run, a new id
    # the same files without the marker are not proof: refused, listed, kept
    (out / MARKER_NAME).unlink()
    (out / "notes.txt").write_text("mine")
    (out / "manifest.json").write_text("{}")
    with pytest.raises(RunError, match=r"no \.mcpgym-run marker\); in the way: manifest\.json, notes\.txt"):
        prepare_out_dir(out, resume=False, force=False)
    assert sorted(p.name for p in out.iterdir()) == [LOCK_NAME, "manifest.json", "notes.txt"]


def test_the_interrupt_message_names_only_files_that_exist(tmp_path: Path) -> None:
    out = tmp_path / "int"
    out.mkdir()
    msg = interrupt_message(out)
    assert "before any episode finished" in msg and "trajectories.jsonl" not in msg
    (out / "trajectories.jsonl").write_text('{"x": 1}\n')
    msg = interrupt_message(out)
    assert str(out / "trajectories.jsonl") in msg and "scores.json" not in msg and "--resume" in msg
    (out / "scores.json").write_text("{}")
    assert str(out / "scores.json") in interrupt_message(out)


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=5)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=4)),
    max_leaves=20,
)


@settings(max_examples=80, deadline=None)
@given(
    st.dictionaries(st.text(max_size=4), json_values, max_size=5),
    st.dictionaries(st.text(max_size=4), json_values, max_size=5),
)
def test_state_diff_round_trips(a: dict, b: dict) -> None:
    before = copy.deepcopy(a)
    diff = state_diff(a, b)
    assert apply_diff(a, diff) == b
    assert a == before  # the base is never changed (it is a run's shared initial state)
    assert json.loads(json.dumps(diff)) == diff


def test_apply_diff_copies_only_the_changed_path() -> None:
    base = {"state": {"shop": {"cart": [1], "orders": {"o1": {"total": 5}}}, "talk": {"chats": [{"id": "c1"}]}}}
    diff = state_diff(base, {**base, "state": {**base["state"], "shop": {**base["state"]["shop"], "cart": [1, 2]}}})
    final = apply_diff(base, diff)
    assert final["state"]["shop"]["cart"] == [1, 2] and base["state"]["shop"]["cart"] == [1]
    assert final["state"]["talk"] is base["state"]["talk"]  # untouched: shared, not copied
    assert final["state"]["shop"]["orders"] is base["state"]["shop"]["orders"]
    assert final["state"] is not base["state"] and final["state"]["shop"] is not base["state"]["shop"]
    with pytest.raises(ValueError, match="does not fit"):
        apply_diff(base, {"set": {"/state/shop/cart/x": 1}, "del": []})  # a list is not descended into
    with pytest.raises(ValueError, match="does not fit"):
        apply_diff(base, {"set": {}, "del": ["/state/nope/x"]})
