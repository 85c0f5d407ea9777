"""Progress of a run on a stream that is no terminal (a CI log, a file, a pipe, a Ray driver's
captured stderr): one plain line at most every :data:`PLAIN_INTERVAL` seconds, where a terminal
gets rich's live bar.

    progress: 12/72 episodes done (1 errored), 34 s elapsed, about 2 min 50 s left

The estimate is the mean wall time per finished episode so far times the episodes left
(``unknown`` before the first one finishes).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TextIO

import anyio

PLAIN_INTERVAL = 10.0
"""Wall seconds between two progress lines (at most one line per interval)."""


def duration_text(seconds: float) -> str:
    """``"34 s"``, ``"2 min 50 s"``, ``"1 h 05 min"`` (rounded to whole seconds)."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def progress_line(done: int, total: int, errored: int, elapsed: float) -> str:
    """The line for ``done`` of ``total`` episodes (``errored`` of them errored or not run)
    after ``elapsed`` wall seconds; see the module docstring."""
    left = "about " + duration_text(elapsed / done * (total - done)) + " left" if done else "time left unknown"
    return f"progress: {done}/{total} episodes done ({errored} errored), {duration_text(elapsed)} elapsed, {left}"


def is_terminal(console: Any) -> bool:
    """Whether a rich console writes to a terminal (rich's own test, ``Console.is_terminal``)."""
    return bool(getattr(console, "is_terminal", False))


async def print_progress_lines(
    state: Callable[[], tuple[int, int, int]],
    stream: TextIO,
    *,
    interval: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """Write :func:`progress_line` of ``state()`` (done, total, errored) to ``stream`` every
    ``interval`` seconds (default :data:`PLAIN_INTERVAL`, read when called) until cancelled.
    A stream that fails (closed, a broken pipe) ends the lines, never the run."""
    wait = PLAIN_INTERVAL if interval is None else interval
    start = clock()
    while True:
        await anyio.sleep(wait)
        done, total, errored = state()
        try:
            stream.write(progress_line(done, total, errored, clock() - start) + "\n")
            stream.flush()
        except (OSError, ValueError):
            return


__all__ = ["PLAIN_INTERVAL", "duration_text", "is_terminal", "print_progress_lines", "progress_line"]
