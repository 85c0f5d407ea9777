"""An outside app bundle, built and installed from its own directory, runs under mcpgym.

The test writes a tiny distribution in ``tmp_path`` (its own pyproject.toml declaring an
``mcpgym.apps`` entry point, the app module and a bundled tasks file), builds a wheel with
its declared build backend, installs it with pip into a separate target directory and puts
that directory on ``PYTHONPATH`` of the ``mcpgym`` processes it starts (so the entry point is
found by ``importlib.metadata`` exactly as for any installed plugin, and the test venv is
left untouched). Then ``mcpgym tasks`` lists the bundle's tasks, ``mcpgym run --tasks FILE``
runs the careful scripted agent on them through a spawned server, and ``scores.json``,
``manifest.json`` and the trajectories are checked value by value.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mcpgym.evaluation.run.run_dir import load_run
from tests.conftest import run_text

PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "mcpgym-notes-plugin"
version = "2.5.0"

[project.entry-points."mcpgym.apps"]
notes = "notes_plugin.app:NotesApp"

[tool.setuptools]
packages = ["notes_plugin"]

[tool.setuptools.package-data]
notes_plugin = ["tasks.yaml"]
"""

APP = '''\
"""A notes app: an outside mcpgym app bundle."""

from typing import Annotated

from pydantic import BaseModel, Field

from mcpgym import App, AppState, ToolError, tool


class Note(BaseModel):
    note_id: str
    text: str


class NotesState(AppState):
    notes: dict[str, Note] = {}


class NoteView(BaseModel):
    note: Note


class NoteList(BaseModel):
    notes: list[Note]


class NotesApp(App):
    name = "notes"
    title = "Notes"
    version = "2.5.0-notes"
    tasks = "tasks.yaml"
    State = NotesState

    @classmethod
    def generate(cls, world):
        rnd = cls.stream(world, "notes")
        first = Note(note_id="n-1", text=rnd.choice(["milk", "eggs", "tea"]))
        return NotesState(notes={first.note_id: first})

    @tool("read", ["notes.note"])
    def notes_list_notes(self) -> NoteList:
        """List every note, oldest first."""
        return NoteList(notes=list(self.state.notes.values()))

    @tool("write", ["notes.note"])
    def notes_add_note(self, text: Annotated[str, Field(min_length=1, max_length=200, description="note text")]) -> NoteView:
        """Add a note with this text and return it."""
        note = Note(note_id=f"n-{len(self.state.notes) + 1}", text=text)
        self.state.notes[note.note_id] = note
        return NoteView(note=note)

    @tool("write", ["notes.note"], id_args=["note_id"], destructive=True)
    def notes_delete_note(self, note_id: Annotated[str, Field(description="id of the note")]) -> NoteView:
        """Delete the note with this id and return it."""
        note = self.state.notes.pop(note_id, None)
        if note is None:
            raise ToolError("not_found", f"no note {note_id!r}", field="note_id")
        return NoteView(note=note)
'''

TASKS = """\
tasks:
  - id: notes.add_bread
    instruction: Add a note saying "bread".
    apps: [notes]
    seed: 11
    level: 1
    tags: [verification]
    oracle:
      - call: notes_add_note
        args: {text: bread}
      - answer: I added the note "bread".
  - id: notes.delete_first
    instruction: Delete my first note.
    apps: [notes]
    seed: 12
    level: 1
    tags: [verification]
    oracle:
      - call: notes_list_notes
        save: listing
      - call: notes_delete_note
        args: {note_id: "{listing.notes[0].note_id}"}
      - answer: I deleted your first note.
"""


def _run(cmd: list[str], env: dict[str, str], cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)


@pytest.fixture(scope="module")
def plugin_env(tmp_path_factory) -> dict[str, str]:
    """Environment whose Python finds the notes bundle, installed from its own directory."""
    work = tmp_path_factory.mktemp("notes_dist")
    src = work / "src"
    (src / "notes_plugin").mkdir(parents=True)
    (src / "pyproject.toml").write_text(PYPROJECT)
    (src / "notes_plugin" / "__init__.py").write_text("")
    (src / "notes_plugin" / "app.py").write_text(APP)
    (src / "notes_plugin" / "tasks.yaml").write_text(TASKS)
    build = _run(
        [
            sys.executable,
            "-c",
            "import sys; from setuptools import build_meta as b; print(b.build_wheel(sys.argv[1]))",
            str(work / "wheels"),
        ],
        dict(os.environ),
        src,
    )
    assert build.returncode == 0, build.stderr[-2000:]
    (wheel,) = (work / "wheels").glob("mcpgym_notes_plugin-2.5.0-*.whl")
    site = work / "site"
    inst = _run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", str(site), str(wheel)],
        dict(os.environ),
        work,
    )
    assert inst.returncode == 0, inst.stderr[-2000:]
    assert (site / "notes_plugin" / "tasks.yaml").is_file()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(site), *filter(None, [env.get("PYTHONPATH")])])
    return env


def _cli(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return _run([sys.executable, "-m", "mcpgym.evaluation.cli", *args], env, cwd)


def test_the_bundle_is_found_through_its_entry_point(plugin_env, tmp_path):
    out = _run(
        [
            sys.executable,
            "-c",
            textwrap.dedent("""
        import json
        from mcpgym import check_app
        from mcpgym.kernel.app import app_names, get_app
        cls = get_app("notes")
        check_app(cls)
        print(json.dumps({"apps": app_names(), "version": cls.version, "tasks": str(cls.tasks_path()),
                          "module": cls.__module__}))
    """),
        ],
        plugin_env,
        tmp_path,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout)
    assert got["apps"][-1] == "notes" and got["apps"][0] == "system"
    assert got["version"] == "2.5.0-notes" and got["module"] == "notes_plugin.app"
    assert got["tasks"].endswith("notes_plugin/tasks.yaml") and "notes_dist" in got["tasks"]


def test_mcpgym_tasks_lists_the_bundled_and_a_files_tasks(plugin_env, tmp_path):
    listed = _cli(plugin_env, tmp_path, "tasks", "--json")
    assert listed.returncode == 0, listed.stderr[-2000:]
    rows = json.loads(listed.stdout)
    bundled = [r for r in rows if r["source"] == "notes"]
    assert [r["id"] for r in bundled] == ["notes.add_bread", "notes.delete_first"]
    assert bundled[0]["apps"] == ["system", "notes"]
    assert sum(r["source"] == "core" for r in rows) >= 100
    f = tmp_path / "mine.json"
    f.write_text(
        json.dumps(
            {
                "tasks": [
                    {
                        "id": "notes.only_add",
                        "instruction": "Add a note saying 'jam'.",
                        "apps": ["notes"],
                        "seed": 5,
                        "level": 1,
                        "oracle": [{"call": "notes_add_note", "args": {"text": "jam"}}, {"answer": "Added."}],
                    }
                ]
            }
        )
    )
    one = _cli(plugin_env, tmp_path, "tasks", "--tasks", str(f), "--json")
    assert one.returncode == 0, one.stderr[-2000:]
    assert [(r["id"], r["source"]) for r in json.loads(one.stdout)] == [("notes.only_add", str(f))]


def test_careful_scores_on_the_outside_apps_tasks(plugin_env, tmp_path):
    tasks_file = tmp_path / "notes_tasks.yaml"
    tasks_file.write_text(TASKS)  # any file: here a copy of the bundle's own
    out = tmp_path / "run"
    ran = _cli(
        plugin_env,
        tmp_path,
        "run",
        "--tasks",
        str(tasks_file),
        "--agent",
        "careful",
        "--trials",
        "1",
        "--faults",
        "none",
        "--concurrency",
        "2",
        "--out",
        str(out),
        "--quiet",
    )
    assert ran.returncode == 0, (ran.stdout[-2000:], ran.stderr[-3000:])
    scores = json.loads((out / "scores.json").read_text())
    careful = scores["agents"]["careful"]
    assert careful["episodes"] == 2
    assert careful["success_rate"] == 1.0
    assert careful["verification_rate"] == 1.0  # both writes read back
    assert careful["writes"] == 2
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["task_ids"] == ["notes.add_bread", "notes.delete_first"]
    assert manifest["versions"]["apps"] == {"system": manifest["versions"]["mcpgym"], "notes": "2.5.0-notes"}
    assert manifest["invocations"][0]["settings"]["task_files"] == [str(tasks_file)]
    trajs = [json.loads(line) for line in run_text(out).splitlines()]
    assert {t["task_id"] for t in trajs} == {"notes.add_bread", "notes.delete_first"}
    for t in trajs:
        assert t["app_versions"]["notes"] == "2.5.0-notes"
        assert t["scores"]["success"] is True
    # Lines store states once per run (snapshots/, final states as diffs): load_run expands them.
    added = next(t for t in load_run(out) if t.task_id == "notes.add_bread")
    notes = added.final_snapshot["state"]["notes"]["notes"]
    assert [n["text"] for n in notes.values()][-1] == "bread"
