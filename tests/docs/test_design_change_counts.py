"""docs/design.md §1 "Where a change goes" names real modules and keeps its counts.

Every module path the walkthrough names exists (paths under ``evaluation/`` may be written
from inside it, e.g. ``run/runner.py``), every class or constant it names is defined in the
source (up to a "not yet", after which it may say what is to come), and a change it says
touches **two modules** names at most two before saying so.
"""

from __future__ import annotations

import re

import pytest

from tests.conftest import ROOT

SOURCE_FOLDERS = ("src", "tools", "server", "sandboxes", "evaluation", "integrations")


def _items() -> list[str]:
    doc = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    section = doc[doc.index("**Where a change goes.**") : doc.index("A new stored field is")]
    return re.split(r"\n(?=\d\. \*)", section)[1:]


def _module(path: str) -> bool:
    return (ROOT / path).is_file() or (ROOT / "evaluation" / path).is_file()


def _defined(name: str) -> bool:
    rx = re.compile(rf"^\s*(?:class {name}\b|def {name}\b|{name}\s*(?::[^=\n]+)?=)", re.M)
    return any(
        rx.search(p.read_text(encoding="utf-8")) for folder in SOURCE_FOLDERS for p in (ROOT / folder).rglob("*.py")
    )


def test_the_walkthrough_has_its_four_changes() -> None:
    items = _items()
    assert [re.match(r"\d\. \*([^*]+)\*", i).group(1) for i in items] == [  # type: ignore[union-attr]
        "A fault kind",
        "A trajectory format",
        "A behaviour score",
        "A run option",
    ]


@pytest.mark.parametrize("index", range(4))
def test_every_module_and_name_of_a_change_exists(index: int) -> None:
    item = _items()[index]
    paths = re.findall(r"`([\w/]+\.py)`", item)
    assert paths, item[:60]
    assert [p for p in paths if not _module(p)] == []
    done = re.split(r"not yet", item, flags=re.IGNORECASE)[0]  # what remains may name what is to come
    names = set(re.findall(r"`([A-Z][A-Za-z0-9_]+)`", done))
    assert [n for n in sorted(names) if not _defined(n)] == []


@pytest.mark.parametrize("index", range(4))
def test_a_two_module_change_names_at_most_two_modules_first(index: int) -> None:
    item = " ".join(_items()[index].split())
    if "**Two modules" not in item:
        pytest.skip("this change does not claim two modules yet")
    before = item[: item.index("**Two modules")]
    modules = {p for p in re.findall(r"`([\w/]+\.py)`", before)}
    assert len(modules) <= 2, modules
