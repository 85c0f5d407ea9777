"""The built distribution: one top-level import name, ``mcpgym``, that works outside the repository.

Builds a real wheel from a copy of the working tree (pip, the project's own build backend),
unpacks it into a fresh target directory and imports the public API from there, with the
repository nowhere on the path.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

SKIP = shutil.ignore_patterns(
    ".git",
    ".venv",
    "node_modules",
    "__pycache__",
    "build",
    "dist",
    "*.egg-info",
    "runs",
    ".hypothesis",
    ".pytest_cache",
)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("dist")
    src = work / "src"
    shutil.copytree(ROOT, src, ignore=SKIP)
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(work / "wheels"),
            str(src),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    (found,) = (work / "wheels").glob("mcpgym-*.whl")
    return found


def test_the_wheel_has_its_two_top_level_names(wheel):
    """mcpgym, and mcpgym_verifiers: the module verifiers' loader imports for the taskset
    ``mcpgym-verifiers`` (a taskset id names a top-level module), which only re-exports it."""
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    dist_info = f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info"
    assert tops == {"mcpgym", "mcpgym_verifiers", dist_info}
    assert [n for n in names if n.startswith("mcpgym_verifiers/")] == ["mcpgym_verifiers/__init__.py"]
    assert "mcpgym/kernel/spec.py" in names and "mcpgym/server/mcp_server.py" in names
    assert sum(n.startswith("mcpgym/evaluation/tasks/data/") and n.endswith(".yaml") for n in names) >= 10
    entry_points = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "[mcpgym.apps]" in entry_points and "mcpgym = mcpgym.evaluation.cli:main" in entry_points


def test_the_installed_wheel_serves_the_public_api_outside_the_repository(wheel, tmp_path):
    site = tmp_path / "site"
    out = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    installed = sorted(p.name for p in site.iterdir() if p.name != "bin" and not p.name.endswith(".dist-info"))
    assert installed == ["mcpgym", "mcpgym_verifiers"]
    code = (
        "import json, mcpgym, mcpgym.server.mcp_server as s\n"
        "from mcpgym import App, AppState, tool, ToolError, VOLATILE, World, check_app\n"
        "from mcpgym.kernel.app import app_names\n"
        "print(json.dumps({'init': mcpgym.__file__, 'server': s.__file__, 'apps': app_names(),\n"
        "                  'hash': World(3, ['system', 'shop']).state_hash(), 'check_app': check_app.__name__}))\n"
    )
    env = {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin", "PYTHONNOUSERSITE": "1"}
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120
    )
    assert run.returncode == 0, run.stderr[-2000:]
    got = json.loads(run.stdout)
    assert got["init"].startswith(str(site)) and got["server"].startswith(str(site))
    assert got["apps"] == ["system", "shop", "talk", "flights", "stocks", "weather", "news", "office"]
    from mcpgym.kernel.world import World

    assert got["hash"] == World(3, ["system", "shop"]).state_hash()
    assert got["check_app"] == "check_app"
