"""Reliability suite: figures (calls fuzzed, RSS, latencies...) and CPU seconds per test,
printed in pytest's terminal summary so that every CI log carries them.

Both travel in the test reports' ``user_properties``, so that they reach the summary from
pytest-xdist workers too; tests/conftest.py collects and prints them (the controlling process
of an xdist run loads only that conftest).
"""

from __future__ import annotations

import resource
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import CPU_PROPERTY, FIGURE_PROPERTY

_STARTED: dict[str, float] = {}


class _Figures(dict):
    """``figures[name] = text`` keeps the figure and puts it in the test's report."""

    def __init__(self, item: pytest.Item) -> None:
        super().__init__()
        self._item = item

    def __setitem__(self, key: str, value: str) -> None:
        super().__setitem__(key, value)
        self._item.user_properties.append((FIGURE_PROPERTY, (key, value)))


@pytest.fixture()
def figures(request: pytest.FixtureRequest) -> dict[str, str]:
    """Where a test records a figure for the summary: ``figures["load"] = "5000 calls..."``."""
    return _Figures(request.node)


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Iterator[None]:
    """Count the CPU seconds (this process and its finished children) of each reliability test,
    from its setup to its teardown, into the teardown report."""
    if "reliability" in str(item.path):
        if call.when == "setup":
            _STARTED[item.nodeid] = _cpu()
        elif call.when == "teardown" and item.nodeid in _STARTED:
            item.user_properties.append((CPU_PROPERTY, _cpu() - _STARTED.pop(item.nodeid)))
    yield
