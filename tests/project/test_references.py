"""The repository points only at itself, and every design reference is to docs/design.md.

Scanned: every text file of the repository's own folders (README, pyproject, .ci, docs, the
package folders, tests). A reference to the design must read ``docs/design.md §N`` (or
``§N-§M``) with N a numbered section of docs/design.md; any other mention of the old design
card (its upper-case name, with or without a section) fails, and so does a path outside the
repository (a shared folder beside it, an absolute workplace path) or a relative Markdown link
that leaves the repository or names a missing file.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import ROOT

SCANNED = [
    "README.md",
    "pyproject.toml",
    ".ci",
    "docs",
    "src",
    "server",
    "tools",
    "sandboxes",
    "evaluation",
    "benchmarks",
    "integrations",
    "tests",
]
SUFFIXES = {
    ".py",
    ".md",
    ".toml",
    ".yaml",
    ".yml",
    ".json",
    ".jsonl",
    ".txt",
    ".sh",
    ".cfg",
    ".ini",
    ".html",
    ".ts",
    ".js",
    ".mjs",
    "",
}
SKIP_DIRS = {"__pycache__", "node_modules", ".hypothesis", ".pytest_cache", ".ruff_cache", ".mypy_cache"}

# Spelled in parts so that this file does not match itself.
CARD = "DES" + "IGN"
SHARED = "sha" + "red"
UP = "." + "./"
OLD_CARD = re.compile(rf"\b{CARD}\b")
DESIGN_REF = re.compile(r"docs/design\.md\s*§(\d+)(?:\s*-\s*§?(\d+))?")
OUTSIDE = [re.compile(p) for p in (re.escape(UP) + "+" + SHARED, "/wo" + "rk/", r"(?<![\w.-])" + SHARED + "/" + CARD)]
MD_LINK = re.compile(r"\]\(([^)\s]+)\)")


def repo_files(root: Path = ROOT) -> list[Path]:
    """Text files of the repository's own folders (no virtual environments, caches or run outputs)."""
    out: list[Path] = []
    for name in SCANNED:
        top = root / name
        paths = [top] if top.is_file() else sorted(top.rglob("*")) if top.is_dir() else []
        for p in paths:
            if p.is_file() and p.suffix in SUFFIXES and not SKIP_DIRS & set(p.relative_to(root).parts):
                out.append(p)
    return out


def design_sections(root: Path = ROOT) -> set[int]:
    """Numbers of the ``## N.`` sections of docs/design.md."""
    text = (root / "docs" / "design.md").read_text(encoding="utf-8")
    return {int(m) for m in re.findall(r"^## (\d+)\. ", text, flags=re.M)}


def problems(root: Path = ROOT) -> list[str]:
    """Every bad reference as ``file:line: what``."""
    sections = design_sections(root)
    out: list[str] = []
    for path in repo_files(root):
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        rel = path.relative_to(root)
        for n, line in enumerate(text.splitlines(), 1):
            where = f"{rel}:{n}"
            if OLD_CARD.search(line):
                out.append(f"{where}: design reference not in docs/design.md form: {line.strip()[:100]}")
            for m in DESIGN_REF.finditer(line):
                for num in filter(None, m.groups()):
                    if int(num) not in sections:
                        out.append(f"{where}: docs/design.md has no section {num}")
            if any(pat.search(line) for pat in OUTSIDE):
                out.append(f"{where}: points outside the repository: {line.strip()[:100]}")
            if path.suffix == ".md":
                for target in MD_LINK.findall(line):
                    if re.match(r"^[a-z][a-z0-9+.-]*:|^#", target):
                        continue  # a URL or an anchor
                    dest = (path.parent / target.split("#")[0]).resolve()
                    if not dest.is_relative_to(root.resolve()):
                        out.append(f"{where}: link {target} leaves the repository")
                    elif not dest.exists():
                        out.append(f"{where}: link {target} names a missing file")
    return out


def test_repository_references_point_inside_it() -> None:
    assert design_sections() == set(range(1, 9))
    assert problems() == []


def test_the_check_finds_each_kind_of_bad_reference(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "design.md").write_text("# d\n\n## 1. Layout\n\n## 7. Scores\n", encoding="utf-8")
    (tmp_path / "docs" / "faults.md").write_text("x\n", encoding="utf-8")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "m.py").write_text(
        f'"""Rules ({CARD} section 7); see docs/design.md §7 and docs/design.md §1-§7."""\n'
        "X = 'docs/design.md §" + "9'\n"
        f"Y = '{UP}{SHARED}/{CARD}.md'\n",
        encoding="utf-8",
    )
    (tmp_path / "README.md").write_text(
        f"[faults](docs/faults.md) [gone](docs/gone.md) [up]({UP}outside.md) [web](https://example.org) [a](#x)\n",
        encoding="utf-8",
    )
    found = problems(tmp_path)
    assert found == [
        "README.md:1: link docs/gone.md names a missing file",
        f"README.md:1: link {UP}outside.md leaves the repository",
        f'src/m.py:1: design reference not in docs/design.md form: """Rules ({CARD} section 7); see docs/design.md '
        '§7 and docs/design.md §1-§7."""',
        "src/m.py:2: docs/design.md has no section 9",
        f"src/m.py:3: design reference not in docs/design.md form: Y = '{UP}{SHARED}/{CARD}.md'",
        f"src/m.py:3: points outside the repository: Y = '{UP}{SHARED}/{CARD}.md'",
    ]
