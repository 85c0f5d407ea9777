"""docs/design.md §1 names real modules: the layout of ``evaluation/`` lists every module of
``run/`` and ``cli/``, and every module path the section names (the "Where a change goes"
walkthroughs: a run option's ``run/config.py`` and ``run/episode_runner.py``...) exists."""

from __future__ import annotations

import re

from tests.conftest import ROOT

LAYOUT_DOC = ROOT / "docs" / "design.md"
SECTION = LAYOUT_DOC.read_text(encoding="utf-8").split("## 1. Layout", 1)[1].split("\n## 2.", 1)[0]
ROOTS = [ROOT / "evaluation", ROOT]
"""Where a path of the section is looked up: relative to ``evaluation/`` (``run/config.py``),
then to the repository (``tools/faults.py``, ``src/mcpgym/kernel/fault_kinds.py``)."""


def _tree_entry(package: str) -> str:
    """The text of ``package``'s entry in the section's layout block (its line and the indented
    lines after it)."""
    block = SECTION.split("```text", 1)[1].split("```", 1)[0]
    found = re.search(rf"^  {package}/ (.*?)(?=^  \S|\Z)", block, re.M | re.S)
    assert found, f"docs/design.md §1 lists no {package}/"
    return found.group(1)


def test_every_module_path_named_in_section_1_exists() -> None:
    paths = sorted(set(re.findall(r"`((?:[\w.-]+/)+[\w.-]+\.(?:py|json))`", SECTION)))
    assert "run/config.py" in paths and "run/episode_runner.py" in paths and "cli/run.py" in paths
    missing = [p for p in paths if not any((base / p).is_file() for base in ROOTS)]
    assert not missing, f"docs/design.md §1 names modules that do not exist: {missing}"


def test_the_layout_lists_every_module_of_run_and_cli() -> None:
    for package in ("run", "cli"):
        entry = _tree_entry(package)
        named = set(re.findall(r"[a-z_]+", entry))
        modules = sorted(
            p.stem for p in (ROOT / "evaluation" / package).glob("*.py") if p.stem not in ("__init__", "__main__")
        )
        assert modules and not [m for m in modules if m not in named], (package, modules, entry)
