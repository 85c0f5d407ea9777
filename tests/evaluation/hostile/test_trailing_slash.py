"""A trailing ``/`` on a path option (the hostile pass of issue 36): ``run -o runs/x/`` makes and
resumes the run directory ``runs/x`` (labels ``agent@x``), and ``export -o out/``, which wrote
a file named ``out``, is refused naming the folder, nothing written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.support.cli_runs import mcpgym_process

ARGS = ["run", "--task", "system.dark_mode", "--agent", "careful", "--faults", "none", "-q"]


def test_a_trailing_slash_names_the_same_run_directory_and_no_file(tmp_path: Path) -> None:
    done = mcpgym_process(*ARGS, "--trials", "1", "-o", "runs/x/", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["x"]
    manifest = json.loads((tmp_path / "runs" / "x" / "manifest.json").read_text(encoding="utf-8"))
    assert not str(manifest.get("out", "x")).endswith("/")
    for out in ("runs/x/", "runs/x//", str(tmp_path / "runs" / "x") + "/"):
        again = mcpgym_process(*ARGS, "--trials", "2", "-o", out, "--resume", cwd=tmp_path)
        assert again.returncode == 0, (out, again.stderr)
    shutil.copytree(tmp_path / "runs" / "x", tmp_path / "runs" / "y")
    scored = mcpgym_process("score", "runs/x/", "runs/y/", "--json", cwd=tmp_path)
    assert {e["agent"] for e in json.loads(scored.stdout)["episodes"]} == {"careful@x", "careful@y"}, scored.stderr
    refused = mcpgym_process("export", "runs/x/", "--format", "csv", "-o", "out/", cwd=tmp_path)
    assert refused.returncode == 2 and "--out out/ names a folder" in refused.stderr, refused.stderr
    assert not (tmp_path / "out").exists()
    wrote = mcpgym_process("export", "runs/x/", "--format", "csv", "-o", "out.csv", cwd=tmp_path)
    assert wrote.returncode == 0 and (tmp_path / "out.csv").is_file(), wrote.stderr
