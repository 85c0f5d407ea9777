"""One installed app plugin that cannot be loaded leaves only its own app out.

The plugin is a real installed distribution as ``importlib.metadata`` finds any: a
``.dist-info`` directory (METADATA and an ``entry_points.txt`` declaring an ``mcpgym.apps``
entry point) and the package it names, in a directory on ``PYTHONPATH`` of the ``mcpgym``
processes the tests start. Its module raises on import. Commands that do not need the app
(listing the system tools, scoring an OpenAI transcript, running a built-in task) work as
without the plugin, with one warning line naming the entry point, its module and the error;
a command that names the app fails with one ``error:`` line saying why (exit code 2).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

FORMATS = Path(__file__).resolve().parents[1] / "data" / "formats"
WARNING = (
    "warning: entry point notes = 'broken_notes.app:NotesApp' (group mcpgym.apps): cannot load module "
    "broken_notes.app: ImportError: plugin broken on purpose (at {site}/broken_notes/app.py:2); "
    "the app 'notes' is left out (installed by broken-notes 0.1: fix it or pip uninstall broken-notes)"
)


def _site(root: Path) -> Path:
    """A directory holding the broken plugin as pip would install it (dist-info + package)."""
    site = root / "site"
    info = site / "broken_notes-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-notes\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[mcpgym.apps]\nnotes = broken_notes.app:NotesApp\n")
    (site / "broken_notes").mkdir()
    (site / "broken_notes" / "__init__.py").write_text("")
    (site / "broken_notes" / "app.py").write_text(
        '"""A plugin that fails on import."""\nraise ImportError("plugin broken on purpose")\n'
    )
    return site


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return _site(tmp_path_factory.mktemp("broken_plugin"))


def _env(site: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    if site is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(site), *filter(None, [env.get("PYTHONPATH")])])
    return env


def _cli(site: Path | None, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mcpgym.evaluation.cli", *args],
        capture_output=True,
        text=True,
        env=_env(site),
        cwd=cwd,
        timeout=240,
    )


def test_a_command_not_needing_the_app_works_with_one_warning_line(site, tmp_path):
    listed = _cli(site, tmp_path, "tools", "--app", "system", "--json")
    assert listed.returncode == 0, listed.stderr[-3000:]
    assert listed.stderr.splitlines() == [WARNING.format(site=site)]
    assert {t["name"] for t in json.loads(listed.stdout)} >= {"system_update_setting", "system_get_settings"}


def test_scoring_an_openai_transcript_gives_the_same_scores_as_without_the_plugin(site, tmp_path):
    from typer.testing import CliRunner

    from mcpgym.evaluation.cli import app

    args = ["score", str(FORMATS / "talk_episode.openai.json"), "--format", "openai", "--json"]
    broken = _cli(site, tmp_path, *args)
    clean = CliRunner().invoke(app, args)  # this process has no broken plugin
    assert clean.exit_code == 0, clean.output[-3000:]
    assert broken.returncode == 0, broken.stderr[-3000:]
    na = "WARNING: success cannot be computed for 1 of the 1 episode ('no initial, final and gold states'): their success is n/a"
    assert broken.stderr.splitlines() == [WARNING.format(site=site), na]
    assert json.loads(broken.stdout) == json.loads(clean.stdout)
    assert json.loads(broken.stdout)["episodes"][0]["scores"]["tool_calls"] == 6


def test_a_built_in_task_runs(site, tmp_path):
    out = tmp_path / "run"
    ran = _cli(
        site, tmp_path, "run", "--task", "system.dark_mode", "--agent", "careful", "--trials", "1", "--out", str(out)
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert WARNING.format(site=site) in ran.stderr.splitlines() and "Traceback" not in ran.stderr
    scores = json.loads((out / "scores.json").read_text())
    assert scores["agents"]["careful"]["episodes"] == 1 and scores["agents"]["careful"]["success_rate"] == 1.0


def test_a_command_naming_the_app_fails_with_one_error_line(site, tmp_path):
    failed = _cli(site, tmp_path, "serve", "--apps", "system,notes")
    assert failed.returncode == 2, (failed.stdout[-2000:], failed.stderr[-3000:])
    warning, error = failed.stderr.splitlines()  # nothing else: no traceback
    assert warning == WARNING.format(site=site)
    assert error.startswith("error: app 'notes' is installed but cannot be used: entry point notes = ")
    assert "ImportError: plugin broken on purpose" in error and "broken_notes.app" in error


def test_the_conformance_command_says_why_the_app_cannot_be_checked(site, tmp_path):
    checked = subprocess.run(
        [sys.executable, "-m", "mcpgym.conformance", "notes"],
        capture_output=True,
        text=True,
        env=_env(site),
        cwd=tmp_path,
        timeout=120,
    )
    assert checked.returncode == 2, checked.stderr[-3000:]
    reason = WARNING.format(site=site).removeprefix("warning: ").split("; the app")[0]
    assert checked.stderr.splitlines() == [
        WARNING.format(site=site),
        f"error: app 'notes' is installed but cannot be used: {reason}",
    ]


def test_the_python_api_names_the_broken_app(site, tmp_path):
    script = textwrap.dedent("""
        import json
        from mcpgym.kernel.app import UnknownAppError, app_names, broken_apps, get_app
        try:
            get_app("notes")
        except UnknownAppError as exc:
            error = str(exc)
        print(json.dumps({"apps": app_names(), "broken": broken_apps(), "error": error}))
    """)
    got = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=_env(site), cwd=tmp_path, timeout=120
    )
    assert got.returncode == 0, got.stderr[-3000:]
    assert got.stderr.splitlines() == [WARNING.format(site=site)]  # once per process, however often asked
    data = json.loads(got.stdout)
    assert "notes" not in data["apps"] and data["apps"][:2] == ["system", "shop"]
    reason = WARNING.format(site=site).removeprefix("warning: ").split("; the app")[0]
    assert data["broken"] == {"notes": reason}
    assert data["error"] == f"app 'notes' is installed but cannot be used: {reason}"
