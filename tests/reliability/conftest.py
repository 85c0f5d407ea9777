"""Reliability suite: figures (calls fuzzed, RSS, latencies...) and CPU seconds per test,
printed in pytest's terminal summary so that every CI log carries them."""

from __future__ import annotations

import resource
from collections.abc import Iterator
from typing import Any

import pytest

FIGURES: dict[str, str] = {}
CPU: dict[str, float] = {}


@pytest.fixture()
def figures() -> dict[str, str]:
    """Where a test records a figure for the summary: ``figures["load"] = "5000 calls..."``."""
    return FIGURES


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: Any) -> Iterator[None]:
    """Count the CPU seconds (this process and its finished children) of each reliability test."""
    before = _cpu()
    yield
    if "reliability" in str(item.path):
        CPU[item.nodeid.split("::", 1)[-1]] = _cpu() - before


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print the recorded figures and the CPU seconds per test."""
    if not FIGURES and not CPU:
        return
    write = terminalreporter.write_line
    terminalreporter.section("reliability figures")
    for name, text in FIGURES.items():
        write(f"{name}: {text}")
    if CPU:
        write(
            f"CPU seconds (pytest + servers and runners it started): {sum(CPU.values()):.1f} in all; "
            + ", ".join(f"{k} {v:.1f}" for k, v in sorted(CPU.items(), key=lambda kv: -kv[1]))
        )
