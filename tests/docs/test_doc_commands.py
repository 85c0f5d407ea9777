"""Every ``python -m MODULE`` that README.md or docs/ shows runs as written from any directory:
the module is importable from the installed package, not only from the repository root (where
a folder of the same name would shadow it)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

MODULE = re.compile(r"python3? -m ([A-Za-z_][\w.]*)")
NOT_OURS = {"venv", "pip", "pytest"}


def shown_modules() -> dict[str, list[str]]:
    """Module name -> the files (relative to the repository) that show ``python -m`` it."""
    found: dict[str, list[str]] = {}
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for name in MODULE.findall(path.read_text(encoding="utf-8")):
            if name not in NOT_OURS:
                found.setdefault(name, []).append(str(path.relative_to(ROOT)))
    return found


def test_every_python_dash_m_in_the_docs_imports_outside_the_repository(tmp_path: Path):
    modules = shown_modules()
    assert "mcpgym.benchmarks" in modules and "mcpgym.conformance" in modules, modules
    probe = (
        "import importlib.util, json, sys; "
        "print(json.dumps([m for m in sys.argv[1:] if importlib.util.find_spec(m) is None]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, *modules], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=True
    )
    missing = json.loads(out.stdout)
    assert missing == [], {m: modules[m] for m in missing}


def test_the_benchmark_preload_imports_outside_the_repository(tmp_path: Path):
    """``python -m mcpgym.benchmarks`` imports its figures' modules first; by their installed
    names, so that it runs from any directory (not only where the layer folders shadow them)."""
    probe = "from mcpgym.benchmarks.__main__ import _preload; _preload(); print('ok')"
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert (out.returncode, out.stdout.strip()) == (0, "ok"), out.stderr[-800:]


def test_the_readme_tool_counts_match_the_catalog():
    """README's total of tools and its per-app (read / write / auth) counts are the catalog's."""
    import collections
    import re as _re

    from mcpgym.tools.catalog import catalog

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    entries = catalog()
    kinds = collections.Counter((e["app"], e["kind"]) for e in entries)
    total = _re.search(r"whose (\d+) tools", text)
    assert total and int(total.group(1)) == len(entries)
    rows = _re.findall(r"^\| `(\w+)` \| (\d+) \((\d+) / (\d+)(?: / (\d+))?\) \|", text, flags=_re.M)
    assert len(rows) == len({a for a, _ in kinds}), rows
    for app, n, read, write, auth in rows:
        got = (kinds[(app, "read")], kinds[(app, "write")], kinds[(app, "auth")])
        assert (int(n), int(read), int(write), int(auth or 0)) == (sum(got), *got), app


def test_a_ray_session_folder_in_the_working_directory_is_not_ray(tmp_path: Path):
    """Run from a directory holding a ``ray`` folder (Ray's own ``/tmp/ray``) without Ray
    installed, the ray_overhead figure is "not available", not a child's traceback."""
    import importlib.util

    import pytest

    if importlib.util.find_spec("ray") is not None:
        pytest.skip("Ray is installed here: the figure would really run")
    (tmp_path / "ray" / "session_latest").mkdir(parents=True)
    # settings are read only once Ray is found, so None stands in for them
    probe = (
        "from mcpgym.benchmarks.ray_overhead import ray_overhead; f = ray_overhead(None); print(f.available, f.note)"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-800:]
    assert out.stdout.startswith("False not available: Ray is not installed"), out.stdout
