"""Every ``ast`` parse of the package goes through :mod:`mcpgym.kernel.ast_parse`, one thread at
a time (CPython 3.11's "AST constructor recursion depth mismatch", seen twice in CI)."""

from __future__ import annotations

import re
import threading

from mcpgym.kernel import ast_parse
from tests.conftest import ROOT

PACKAGE_DIRS = ("src", "evaluation", "server", "sandboxes", "tools", "integrations", "benchmarks")
DIRECT_RE = re.compile(r"\bast\.(?:parse|literal_eval)\(")


def test_no_module_parses_with_ast_directly() -> None:
    found = [
        f"{p.relative_to(ROOT)}:{n}"
        for d in PACKAGE_DIRS
        for p in sorted((ROOT / d).rglob("*.py"))
        if p.name != "ast_parse.py"
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1)
        if DIRECT_RE.search(line)
    ]
    assert found == [], found


def test_a_parse_waits_for_another_threads_parse() -> None:
    done = threading.Event()

    def parse() -> None:
        ast_parse.literal_eval("{'a': [1, 2]}")
        ast_parse.parse_expression("1 + 2")
        done.set()

    with ast_parse.AST_LOCK:  # another thread is parsing
        t = threading.Thread(target=parse)
        t.start()
        assert not done.wait(0.2)
    assert done.wait(30)
    t.join(30)
