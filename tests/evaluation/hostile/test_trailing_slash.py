"""A trailing ``/`` on a path option (the hostile pass of issue 36): ``run -o runs/x/`` makes and
resumes the run directory ``runs/x`` (labels ``agent@x``), and ``export -o out/``, which wrote
a file named ``out``, is refused naming the folder, nothing written."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

ARGS = ["run", "--task", "system.dark_mode", "--agent", "careful", "--faults", "none", "-q"]


def _mcpgym(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("mcpgym")
    assert exe
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=120, check=False, cwd=cwd)


def test_a_trailing_slash_names_the_same_run_directory_and_no_file(tmp_path: Path) -> None:
    done = _mcpgym(tmp_path, *ARGS, "--trials", "1", "-o", "runs/x/")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["x"]
    manifest = json.loads((tmp_path / "runs" / "x" / "manifest.json").read_text(encoding="utf-8"))
    assert not str(manifest.get("out", "x")).endswith("/")
    for out in ("runs/x/", "runs/x//", str(tmp_path / "runs" / "x") + "/"):
        again = _mcpgym(tmp_path, *ARGS, "--trials", "2", "-o", out, "--resume")
        assert again.returncode == 0, (out, again.stderr)
    shutil.copytree(tmp_path / "runs" / "x", tmp_path / "runs" / "y")
    scored = _mcpgym(tmp_path, "score", "runs/x/", "runs/y/", "--json")
    assert {e["agent"] for e in json.loads(scored.stdout)["episodes"]} == {"careful@x", "careful@y"}, scored.stderr
    refused = _mcpgym(tmp_path, "export", "runs/x/", "--format", "csv", "-o", "out/")
    assert refused.returncode == 2 and "--out out/ names a folder" in refused.stderr, refused.stderr
    assert not (tmp_path / "out").exists()
    wrote = _mcpgym(tmp_path, "export", "runs/x/", "--format", "csv", "-o", "out.csv")
    assert wrote.returncode == 0 and (tmp_path / "out.csv").is_file(), wrote.stderr
