"""The README's "Adding a sandbox app" example is real: it registers and passes the conformance
suite, and an MCP episode of it serves its tools."""

from __future__ import annotations

import importlib.util
import re
import sys

import pytest

from mcpgym.kernel.app import unregister_app
from tests.conftest import ROOT


@pytest.fixture()
def readme_app(tmp_path, monkeypatch):
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Adding a sandbox app") :]
    block = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    code = "\n".join(line[3:] if line.startswith("   ") else line for line in block.splitlines())
    module = tmp_path / "readme_notes_app.py"
    module.write_text(code + "\n", encoding="utf-8")
    tasks = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    (tmp_path / "tasks.yaml").write_text("\n".join(line[3:] for line in tasks.splitlines()) + "\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setenv("MCPGYM_CONFORMANCE_IMPORTS", "readme_notes_app")
    spec = importlib.util.spec_from_file_location("readme_notes_app", module)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["readme_notes_app"] = mod
    spec.loader.exec_module(mod)
    yield "notes"
    unregister_app("notes")
    sys.modules.pop("readme_notes_app", None)


def test_readme_example_app_passes_conformance(readme_app):
    from mcpgym import check_app

    results = check_app(sys.modules["readme_notes_app"].NotesApp, max_examples=5)
    assert {k: v for k, v in results.items() if v} == {}
    assert set(results) >= {"metadata", "determinism", "snapshot_roundtrip", "tool_fuzz"}


def test_readme_example_bundle_declares_version_tasks_and_entry_point(readme_app):
    from mcpgym.evaluation.tasks import gold_run, load_file

    cls = sys.modules["readme_notes_app"].NotesApp
    assert cls.version == "1.0.0"
    assert cls.tasks_path() == cls.tasks_path().parent / "tasks.yaml" and cls.tasks_path().is_file()
    (task,) = load_file(cls.tasks_path())
    assert task.id == "notes.add_water" and task.apps == ["system", "notes"]
    gold = gold_run(task)
    assert [n["text"] for n in gold.snapshot["state"]["notes"]["notes"].values()][-1] == "water the plants"
    assert cls.tools["notes_clear_notes"].destructive and not cls.tools["notes_add_note"].destructive
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Adding a sandbox app") :]
    toml = re.search(r"```toml\n(.*?)```", section, re.S).group(1)
    assert '[project.entry-points."mcpgym.apps"]' in toml and 'notes = "notes_app.app:NotesApp"' in toml


def test_readme_example_app_is_served(readme_app):
    from mcpgym.server.episode import Episode

    ep = Episode.create(seed=3, apps=["notes"])
    names = [s.name for s in ep.tool_specs()]
    assert "notes_add_note" in names and "notes_list_notes" in names
    out = ep.call("notes_add_note", {"text": "water the plants"})
    assert not out.is_error and [n["text"] for n in out.payload["notes"]][-1] == "water the plants"
    assert ep.call("notes_add_note", {"text": "  "}).payload["error"]["field"] == "text"
