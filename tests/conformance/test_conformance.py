"""Conformance suite: runs over every registered app (``mcpgym.kernel.app.app_names()``).

A new app is checked without new test code. The checks themselves live in
:mod:`mcpgym.tools.conformance` (each returns a list of problems), so app authors can also run
``python -m mcpgym.tools.conformance APP``. The last tests feed deliberately broken apps to the
checks to show that they catch what they claim to catch.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
from pydantic import BaseModel

from mcpgym.kernel.app import App, AppState, app_names, get_app, register_app, unregister_app
from mcpgym.kernel.errors import ErrorCode, ToolError
from mcpgym.kernel.spec import tool
from mcpgym.tools.conformance import (
    check_determinism_many,
    check_in_process_determinism,
    check_metadata,
    check_read_tools_pure,
    check_snapshot_roundtrip,
    check_source,
    check_tool_fuzz,
    lint_source,
)
from mcpgym.tools.conformance.checks import import_extra

APPS = app_names()
TOOLS = [(app, name) for app in APPS for name in sorted(get_app(app).tools)]
MAX_EXAMPLES = 15


def _report(problems: list[str]) -> str:
    return f"{len(problems)} problem(s):\n" + "\n".join(f"  - {p}" for p in problems)


@pytest.fixture(scope="session")
def determinism_problems() -> dict[str, list[str]]:
    """Cross-process determinism of every app, from one pair of subprocesses."""
    return check_determinism_many(APPS, seed=7)


def test_every_builtin_app_is_registered() -> None:
    assert APPS[0] == "system"
    assert {"system", "talk", "weather"} <= set(APPS)
    assert len(TOOLS) >= 60


@pytest.mark.parametrize("app", APPS)
def test_metadata(app: str) -> None:
    problems = check_metadata(app)
    assert not problems, _report(problems)


@pytest.mark.parametrize("app", APPS)
def test_source_has_no_wall_clock_or_global_random(app: str) -> None:
    problems = check_source(app)
    assert not problems, _report(problems)


@pytest.mark.parametrize("app", APPS)
def test_deterministic_across_processes(app: str, determinism_problems: dict[str, list[str]]) -> None:
    problems = determinism_problems[app]
    assert not problems, _report(problems)


@pytest.mark.parametrize("app", APPS)
def test_deterministic_within_a_process(app: str) -> None:
    problems = check_in_process_determinism(app)
    assert not problems, _report(problems)


@pytest.mark.parametrize("app", APPS)
def test_snapshot_restore_roundtrip(app: str) -> None:
    problems = check_snapshot_roundtrip(app)
    assert not problems, _report(problems)


@pytest.mark.parametrize("app", APPS)
def test_read_tools_do_not_change_state(app: str) -> None:
    problems = check_read_tools_pure(app)
    assert not problems, _report(problems)


@pytest.mark.parametrize(("app", "tool_name"), TOOLS, ids=[t for _, t in TOOLS])
def test_tool_survives_generated_and_hostile_arguments(app: str, tool_name: str) -> None:
    problems = check_tool_fuzz(app, tool_name, max_examples=MAX_EXAMPLES)
    assert not problems, _report(problems)


# -- the checks catch broken apps -------------------------------------------------------------
BROKEN_SOURCES = {
    "random": ("brokenrandom", "random.randrange", "import random", "random.randrange(10**12)"),
    "time": ("brokentime", "time.time()", "import time", "time.time()"),
}


def _broken_app_source(name: str, import_line: str, expr: str) -> str:
    return textwrap.dedent(f'''
        """A throwaway app that breaks the determinism rules (written by the conformance tests)."""
        {import_line}

        from pydantic import BaseModel

        from mcpgym.kernel.app import App, AppState, register_app
        from mcpgym.kernel.spec import tool


        class BrokenState(AppState):
            """State: one number drawn at generation."""

            value: float = 0


        class ValueView(BaseModel):
            """The stored number."""

            value: float


        @register_app
        class BrokenApp(App):
            """Generates its state from a nondeterministic source."""

            name = "{name}"
            title = "Broken"
            State = BrokenState

            @classmethod
            def generate(cls, world):
                """Seed-independent, process-dependent state: exactly what the checks must catch."""
                return BrokenState(value={expr})

            @tool("read", ["{name}.value"])
            def {name}_get_value(self) -> ValueView:
                """Return the number drawn when the world was generated."""
                return ValueView(value=self.state.value)
    ''')


def test_determinism_check_fails_broken_apps(tmp_path: Path) -> None:
    """One app draws from the global ``random`` in generate(), one reads ``time.time()``: both
    must fail the cross-process check (one pair of subprocesses checks both) and the lint."""
    paths = {}
    for kind, (name, _, import_line, expr) in BROKEN_SOURCES.items():
        paths[kind] = tmp_path / f"{name}_app.py"
        paths[kind].write_text(_broken_app_source(name, import_line, expr), encoding="utf-8")
    names = [BROKEN_SOURCES[k][0] for k in sorted(paths)]
    import_extra([str(paths[k]) for k in sorted(paths)])
    try:
        assert set(names) <= set(app_names())
        results = check_determinism_many(names, seed=7, imports=[str(paths[k]) for k in sorted(paths)])
        for kind in sorted(paths):
            name, lint_hit, _, _ = BROKEN_SOURCES[kind]
            assert check_metadata(name) == []  # well-formed: only its determinism is broken
            problems = results[name]
            assert problems, f"the cross-process check missed the nondeterministic generate() of {name}"
            assert problems[0].startswith(
                f"{name} (seed 7, PYTHONHASHSEED=0 vs 4242): generate() is not deterministic"
            ), problems
            assert "first difference at state.value" in problems[0]
            lint = check_source(name)
            assert len(lint) == 1 and lint_hit in lint[0], lint
            assert lint[0].startswith(f"{paths[kind]}:") or f"{paths[kind].name}:" in lint[0]
    finally:
        for kind, path in paths.items():
            unregister_app(BROKEN_SOURCES[kind][0])
            sys.modules.pop(path.stem, None)
    assert not set(names) & set(app_names())


def test_lint_source_finds_each_kind_of_nondeterminism() -> None:
    src = textwrap.dedent("""
        import random, time, uuid, os
        from datetime import datetime, date
        from random import choice
        import datetime as dt

        def f(world, cls):
            r = random.Random(3)          # fine: a seeded instance
            r.random()                    # fine
            a = random.random()           # global random
            b = choice([1, 2])            # global random via from-import
            c = time.time()               # wall clock
            d = datetime.now()            # wall clock
            e = dt.datetime.utcnow()      # wall clock
            f_ = date.today()             # wall clock
            g = uuid.uuid4()              # uuid4
            h = os.urandom(4)             # entropy
            i = hash("x")                 # salted hash
            return datetime.fromtimestamp(0)  # fine
    """)
    found = lint_source(src, "x.py")
    lines = sorted(int(p.split(":")[1]) for p in found)
    assert lines == [10, 11, 12, 13, 14, 15, 16, 17, 18], found
    assert any("global random.random()" in p for p in found)
    assert any("uuid.uuid4()" in p for p in found)
    assert any("builtin hash()" in p for p in found)


class _FlawState(AppState):
    """State of the flawed app."""

    counter: int = 0
    names: dict[str, str] = {}


class _CounterView(BaseModel):
    """The counter."""

    counter: int


@pytest.fixture()
def flawed_app():
    """A registered throwaway app with three classic bugs (unregistered afterwards)."""

    class FlawedApp(App):
        """An app whose tools crash, mutate on read, and half-apply failing writes."""

        name = "flawed"
        title = "Flawed"
        State = _FlawState

        @classmethod
        def generate(cls, world):  # noqa: ANN001
            """Deterministic state from the seed."""
            return _FlawState(counter=cls.stream(world, "x").randrange(100), names={"a": "Ada"})

        @tool("read", ["flawed.counter"])
        def flawed_get_counter(self) -> _CounterView:
            """Return the counter, but increment it (a read that writes)."""
            self.state.counter += 1
            return _CounterView(counter=self.state.counter)

        @tool("read", ["flawed.name"])
        def flawed_get_name(self, key: str) -> _CounterView:
            """Look a name up without handling unknown keys (a KeyError escapes)."""
            return _CounterView(counter=len(self.state.names[key]))

        @tool("write", ["flawed.counter"])
        def flawed_add(self, amount: int) -> _CounterView:
            """Add to the counter, then reject negative amounts (too late: the write happened)."""
            self.state.counter += amount
            if amount < 0:
                raise ToolError(ErrorCode.INVALID_ARGUMENT, "amount must be >= 0", field="amount")
            return _CounterView(counter=self.state.counter)

        @tool("write", ["flawed.counter"], remedies={"not_found": ["flawed_no_such_tool"]}, alternatives=["flawed_add"])
        def flawed_reset(self) -> _CounterView:
            """Reset."""
            self.state.counter = 0
            return _CounterView(counter=0)

    register_app(FlawedApp)
    try:
        yield "flawed"
    finally:
        unregister_app("flawed")


def test_checks_report_crashes_impure_reads_partial_writes_and_bad_metadata(flawed_app: str) -> None:
    meta = check_metadata(flawed_app)
    assert any("remedy 'flawed_no_such_tool' for not_found is not a registered tool" in p for p in meta), meta
    assert any("flawed_reset: description 'Reset.' is too short" in p for p in meta), meta

    reads = check_read_tools_pure(flawed_app)
    assert any("flawed_get_counter" in p and "changed the state" in p for p in reads), reads

    crash = check_tool_fuzz(flawed_app, "flawed_get_name", max_examples=5)
    assert any("raised a non-tool error" in p and "KeyError" in p for p in crash), crash

    partial = check_tool_fuzz(flawed_app, "flawed_add", max_examples=10)
    assert any("failed (invalid_argument) but changed the state" in p for p in partial), partial

    assert check_tool_fuzz(flawed_app, "flawed_reset", max_examples=5) == []
