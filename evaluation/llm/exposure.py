"""Tool-exposure modes: which tools an episode offers, to measure retrieval saturation.

An agent that sees 40 tools chooses worse than one that sees the 3 it needs; how much worse
is what these modes measure (in the spirit of ToolSandbox's distraction tools and of
tool-retrieval benchmarks):

| mode | the episode offers | extra fields of ``POST /control/episodes`` |
| --- | --- | --- |
| ``all`` | every tool of the task's apps | none |
| ``task`` | only the tools the task's oracle calls | ``{"tools": [...]}`` |
| ``task+N`` | the oracle's tools plus N distractors drawn from the task's apps' other tools | ``{"tools": [...]}`` |
| ``retrieval`` | only ``search_tools``; what a search returns is unlocked | ``{"search_tools": true}`` |

Distractors come from ``mcpgym.kernel.rng.rng(seed, "exposure", "distractors")`` over the sorted
candidate names, so they depend only on the seed, the task's tools and the candidate set:
not on argument order, the process or the machine.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from mcpgym.kernel.rng import rng
from mcpgym.kernel.shorten import short

EXPOSURE_MODES = ("all", "task", "task+N", "retrieval")
"""The mode names (``task+N`` with N a non-negative integer, e.g. ``task+5``)."""

_TASK_PLUS = re.compile(r"^task\+(\d{1,6})$")


@dataclass(frozen=True)
class Exposure:
    """A parsed tool-exposure mode.

    Attributes:
        kind: ``all`` | ``task`` | ``retrieval`` (``task+N`` is ``task`` with ``distractors=N``).
        distractors: how many distractor tools ``task+N`` adds (0 otherwise).
    """

    kind: str
    distractors: int = 0

    @property
    def mode(self) -> str:
        """The canonical mode string (``all``, ``task``, ``task+5``, ``retrieval``)."""
        return f"task+{self.distractors}" if self.kind == "task" and self.distractors else self.kind


def parse_exposure(mode: str) -> Exposure:
    """Parse a tool-exposure mode string.

    Args:
        mode: ``all``, ``task``, ``task+N`` (N an integer >= 0; ``task+0`` is ``task``) or
            ``retrieval``; surrounding blanks and case are ignored.

    Raises:
        ValueError: for anything else, listing the valid modes.
    """
    if not isinstance(mode, str):
        raise ValueError(f"tool exposure mode must be a string, got {type(mode).__name__}")
    text = mode.strip().lower()
    if text in ("all", "task", "retrieval"):
        return Exposure(text)
    match = _TASK_PLUS.match(text)
    if match:
        return Exposure("task", int(match.group(1)))
    raise ValueError(
        f"unknown tool exposure mode {short(mode)}: expected 'all', 'task', 'task+N' (N an integer >= 0, e.g. task+5) "
        "or 'retrieval'"
    )


def _names(tools: Iterable[Any], what: str) -> list[str]:
    out: list[str] = []
    for t in tools:
        name = t if isinstance(t, str) else t.get("name") if isinstance(t, dict) else getattr(t, "name", None)
        if not isinstance(name, str) or not name:
            raise ValueError(f"{what} must be tool names (or objects with a name), got {t!r}")
        out.append(name)
    return out


def pick_distractors(task_tools: Iterable[Any], all_tools: Iterable[Any], n: int, seed: int) -> list[str]:
    """``n`` tools of ``all_tools`` that are not in ``task_tools``, drawn by
    ``rng(seed, "exposure", "distractors")`` from the sorted candidates (all of them when
    fewer than ``n``), returned sorted."""
    task = set(_names(task_tools, "task_tools"))
    pool = sorted(set(_names(all_tools, "all_tools")) - task)
    if n >= len(pool):
        return pool
    return sorted(rng(int(seed), "exposure", "distractors").sample(pool, n))


def episode_request(mode: str, task_tools: Iterable[Any], all_tools: Iterable[Any], seed: int) -> dict[str, Any]:
    """The extra fields of ``POST /control/episodes`` for a tool-exposure mode.

    Args:
        mode: ``all`` | ``task`` | ``task+N`` | ``retrieval`` (see :func:`parse_exposure`).
        task_tools: the tools the task's oracle calls (names, or objects/dicts with ``name``).
        all_tools: every tool the episode's apps have (the candidates for distractors).
        seed: the seed of the distractor draw (the runner passes the task's world seed, so
            every trial and every agent sees the same distractors).

    Returns:
        ``{}`` for ``all``; ``{"tools": sorted names}`` for ``task`` and ``task+N``;
        ``{"search_tools": True}`` for ``retrieval``.

    Raises:
        ValueError: for a bad mode, or (``task`` modes) a task tool missing from ``all_tools``
            or no task tools at all.
    """
    exposure = parse_exposure(mode)
    if exposure.kind == "all":
        return {}
    if exposure.kind == "retrieval":
        return {"search_tools": True}
    task = sorted(set(_names(task_tools, "task_tools")))
    every = set(_names(all_tools, "all_tools"))
    if not task:
        raise ValueError(f"tool exposure {exposure.mode!r} needs the task's oracle tools, and none were given")
    missing = [t for t in task if t not in every]
    if missing:
        raise ValueError(f"task tools not among the episode's tools: {', '.join(missing)}")
    return {"tools": sorted(task + pick_distractors(task, every, exposure.distractors, seed))}


__all__ = ["EXPOSURE_MODES", "Exposure", "episode_request", "parse_exposure", "pick_distractors"]
