"""The package's layering, read from the import statements themselves (no import is executed).

Layers, lowest first: ``mcpgym.kernel`` < ``mcpgym.sandboxes`` < ``mcpgym.tools`` <
``mcpgym.server`` < ``mcpgym.evaluation`` < ``mcpgym.integrations`` < ``mcpgym.benchmarks`` < the public facade
(``mcpgym/__init__.py``, ``mcpgym.conformance``). A module may import its own layer and the
layers below it, never one above; module-level imports between our modules form no cycle; and
nothing imports the old top-level names (``tools``, ``server``, ...). See docs/design.md §1.

Inside ``mcpgym.evaluation`` the same rule holds between its packages, lowest first:
``records`` < ``scoring`` < the episode's parties (``tasks``, ``users``, ``agents``, ``llm``,
one sub-layer: they import each other) < ``formats`` < ``run`` < ``report`` < ``cli`` <
the package's own ``__init__`` (the public surface).
"""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

from tests.conftest import ROOT

FOLDERS = {
    "src/mcpgym": "mcpgym",
    "server": "mcpgym.server",
    "tools": "mcpgym.tools",
    "sandboxes": "mcpgym.sandboxes",
    "evaluation": "mcpgym.evaluation",
    "benchmarks": "mcpgym.benchmarks",
    "integrations": "mcpgym.integrations",
}
LAYERS = [
    "mcpgym.kernel",
    "mcpgym.sandboxes",
    "mcpgym.tools",
    "mcpgym.server",
    "mcpgym.evaluation",
    "mcpgym.integrations",
    "mcpgym.benchmarks",
]
EVALUATION_LAYERS: list[tuple[str, ...]] = [
    ("records",),
    ("scoring",),
    ("tasks", "users", "agents", "llm"),
    ("formats",),
    ("run", "proxy", "complexmcp"),
    ("report",),
    ("cli",),
]
"""The sub-layers of ``mcpgym.evaluation``, lowest first (docs/design.md §1)."""
OLD_TOP_LEVEL = {"tools", "server", "sandboxes", "evaluation", "benchmarks", "integrations"}


def modules() -> dict[str, Path]:
    """Every module of the distribution: dotted name -> file."""
    out: dict[str, Path] = {}
    for folder, package in FOLDERS.items():
        base = ROOT / folder
        for path in sorted(base.rglob("*.py")):
            rel = path.relative_to(base).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            out[".".join([package, *parts])] = path
    return out


def layer(module: str) -> int:
    """The layer index of a module: 0 for the kernel ... len(LAYERS) for the facade."""
    for index, prefix in enumerate(LAYERS):
        if module == prefix or module.startswith(prefix + "."):
            return index
    return len(LAYERS)


def evaluation_layer(module: str) -> int | None:
    """The sub-layer index of an ``mcpgym.evaluation`` module (``len(EVALUATION_LAYERS)`` for the
    package's ``__init__``), or None for a module outside ``mcpgym.evaluation``.

    Raises:
        ValueError: for an evaluation module in no sub-layer (a new package must be placed).
    """
    if module == "mcpgym.evaluation":
        return len(EVALUATION_LAYERS)
    if not module.startswith("mcpgym.evaluation."):
        return None
    package = module.split(".")[2]
    for index, packages in enumerate(EVALUATION_LAYERS):
        if package in packages:
            return index
    raise ValueError(
        f"{module} is in no sub-layer of mcpgym.evaluation: move it into the package its change belongs to"
        " (docs/design.md §1), or add a new package to EVALUATION_LAYERS"
    )


def evaluation_violations(graph: dict[str, list[tuple[str, int, bool]]]) -> list[str]:
    """Every import of a higher ``mcpgym.evaluation`` sub-layer, as ``module:line imports target``."""
    violations = []
    for name, deps in graph.items():
        own = evaluation_layer(name)
        if own is None:
            continue
        for target, line, _top in deps:
            theirs = evaluation_layer(target)
            if theirs is not None and theirs > own:
                violations.append(f"{name}:{line} imports {target} (a higher sub-layer of mcpgym.evaluation)")
    return violations


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(name: str, path: Path, known: set[str]) -> list[tuple[str, int, bool]]:
    """The project modules ``name`` imports: (module, line, at module level and executed at import)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[str, int, bool]] = []

    def resolve(base: str, names: list[str]) -> list[str]:
        targets = [f"{base}.{n}" for n in names if f"{base}.{n}" in known]
        return targets or [base]

    def visit(node: ast.AST, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                for sub in child.body:
                    visit_stmt(sub, False)
                for sub in child.orelse:
                    visit_stmt(sub, top)
                continue
            visit_stmt(child, top)

    def visit_stmt(child: ast.AST, top: bool) -> None:
        if isinstance(child, ast.Import):
            for alias in child.names:
                found.append((alias.name, child.lineno, top))
        elif isinstance(child, ast.ImportFrom):
            if child.level:
                base_parts = package.split(".")[: len(package.split(".")) - child.level + 1]
                base = ".".join(base_parts + ([child.module] if child.module else []))
            else:
                base = child.module or ""
            for target in resolve(base, [a.name for a in child.names]):
                found.append((target, child.lineno, top))
        elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            visit(child, False)
        else:
            visit(child, top)

    visit(tree, True)
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, list[tuple[str, int, bool]]]:
    mods = modules()
    known = set(mods)
    return {name: imports_of(name, path, known) for name, path in mods.items()}


def test_every_module_is_mapped_into_the_namespace(graph):
    assert "mcpgym" in graph and "mcpgym.kernel.spec" in graph and "mcpgym.sandboxes.shop.app" in graph
    assert len(graph) > 150


def test_no_module_imports_a_higher_layer(graph):
    violations = []
    for name, deps in graph.items():
        for target, line, _top in deps:
            if not target.startswith("mcpgym"):
                continue
            if target == "mcpgym" and layer(name) < len(LAYERS):
                violations.append(f"{name}:{line} imports the facade `mcpgym` (import from the layer instead)")
            elif layer(target) > layer(name):
                violations.append(
                    f"{name}:{line} imports {target} (layer {LAYERS[layer(target)] if layer(target) < len(LAYERS) else 'facade'})"
                )
    assert violations == []


def test_no_evaluation_package_imports_a_higher_one(graph):
    evaluation = [n for n in graph if evaluation_layer(n) is not None]
    assert len(evaluation) > 80
    # Every package of mcpgym.evaluation is placed (evaluation_layer raises for one that is not),
    # and the top level holds only packages and the public surface.
    assert {evaluation_layer(n) for n in evaluation} == set(range(len(EVALUATION_LAYERS) + 1))
    assert sorted(p.name for p in (ROOT / "evaluation").glob("*.py")) == ["__init__.py"]
    assert evaluation_violations(graph) == []


def test_the_evaluation_sub_layer_check_catches_a_violation(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from mcpgym.evaluation.report.tables import Column\n\ndef f():\n    from mcpgym.evaluation.cli import app\n"
    )
    known = {"mcpgym.evaluation.report.tables", "mcpgym.evaluation.cli"}
    graph = {"mcpgym.evaluation.scoring.bad": imports_of("mcpgym.evaluation.scoring.bad", bad, known)}
    assert evaluation_violations(graph) == [
        "mcpgym.evaluation.scoring.bad:1 imports mcpgym.evaluation.report.tables (a higher sub-layer of mcpgym.evaluation)",
        "mcpgym.evaluation.scoring.bad:4 imports mcpgym.evaluation.cli (a higher sub-layer of mcpgym.evaluation)",
    ]
    # The same imports from the CLI are allowed; a package in no sub-layer is an error.
    assert evaluation_violations({"mcpgym.evaluation.cli.bad": graph["mcpgym.evaluation.scoring.bad"]}) == []
    with pytest.raises(ValueError, match="no sub-layer"):
        evaluation_layer("mcpgym.evaluation.newpackage.mod")


def test_the_kernel_imports_nothing_above_it(graph):
    kernel = {n: d for n, d in graph.items() if layer(n) == 0}
    assert len(kernel) >= 8
    above = [
        (n, t)
        for n, deps in kernel.items()
        for t, _l, _top in deps
        if t.startswith("mcpgym") and not t.startswith("mcpgym.kernel")
    ]
    assert above == []


def test_no_module_level_import_cycles(graph):
    sorter: graphlib.TopologicalSorter[str] = graphlib.TopologicalSorter()
    for name, deps in graph.items():
        sorter.add(name, *sorted({t for t, _l, top in deps if top and t in graph and t != name}))
    try:
        sorter.prepare()
    except graphlib.CycleError as exc:
        pytest.fail(f"module-level import cycle: {' -> '.join(exc.args[1])}")


def test_nothing_imports_the_old_top_level_names(graph):
    old = [(n, t, line) for n, deps in graph.items() for t, line, _top in deps if t.split(".")[0] in OLD_TOP_LEVEL]
    test_files = sorted((ROOT / "tests").rglob("*.py"))
    for path in test_files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.ImportFrom)
                and not node.level
                and (node.module or "").split(".")[0] in OLD_TOP_LEVEL
            ):
                old.append((str(path.relative_to(ROOT)), node.module, node.lineno))
            elif isinstance(node, ast.Import):
                old += [
                    (str(path.relative_to(ROOT)), a.name, node.lineno)
                    for a in node.names
                    if a.name.split(".")[0] in OLD_TOP_LEVEL
                ]
    assert old == []


def test_the_layering_check_catches_a_violation(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from mcpgym.server.episode import Episode\n\ndef f():\n    from mcpgym.evaluation import cli\n")
    deps = imports_of("mcpgym.kernel.bad", bad, {"mcpgym.server.episode", "mcpgym.evaluation.cli"})
    assert [(t, line, top) for t, line, top in deps] == [
        ("mcpgym.server.episode", 1, True),
        ("mcpgym.evaluation.cli", 4, False),
    ]
    assert all(layer(t) > layer("mcpgym.kernel.bad") for t, _l, _top in deps)
