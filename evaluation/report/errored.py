"""Errored episodes, loudly: their causes for stderr and report.md.

An episode ends ``errored`` when its provider or the harness failed (docs/design.md §7): it
is in no success figure, so a run in which most episodes errored shows a table of dashes that
reads like a finished run. :func:`errored_causes` groups the errored episodes by their
``stop_reason`` (which names the endpoint, the HTTP status or connection error and the
attempts, e.g. ``provider_error: connection failed: ConnectError: ... (POST
http://127.0.0.1:9/v1/chat/completions; gave up after 5 attempts)``), :func:`mostly_errored`
says when the run failed as a whole, and :func:`errored_lines` renders the first causes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from mcpgym.evaluation.records.status import EpisodeStatus
from mcpgym.evaluation.records.trajectory import Trajectory
from mcpgym.kernel.shorten import short_text
from mcpgym.kernel.wording import counted

MAX_CAUSES = 3
"""Distinct causes listed (the first ones met, in episode order)."""

MAX_CAUSE_CHARS = 400
"""Longest cause text shown (a provider's error body is cut in the middle beyond it)."""


@dataclass(frozen=True)
class ErroredCause:
    """One distinct ``stop_reason`` of errored episodes: the first episode that met it (agent,
    task, trial) and how many episodes ended so."""

    reason: str
    agent: str
    task: str
    trial: int
    episodes: int


def errored_causes(trajectories: Iterable[Trajectory]) -> tuple[list[ErroredCause], int, int]:
    """Group the errored episodes of ``trajectories`` by ``stop_reason`` (episode order).

    Returns:
        The causes (every distinct one), the number of errored episodes, and of all episodes.
    """
    first: dict[str, ErroredCause] = {}
    counts: dict[str, int] = {}
    errored = total = 0
    for t in trajectories:
        total += 1
        if t.status != EpisodeStatus.ERRORED:
            continue
        errored += 1
        reason = t.stop_reason or "no stop_reason recorded"
        counts[reason] = counts.get(reason, 0) + 1
        if reason not in first:
            first[reason] = ErroredCause(reason, t.agent or "external", t.task_id or t.episode_id, t.trial, 0)
    causes = [ErroredCause(c.reason, c.agent, c.task, c.trial, counts[c.reason]) for c in first.values()]
    return causes, errored, total


def mostly_errored(errored: int, total: int) -> bool:
    """True when more than half of the episodes errored: the run failed as a whole
    (``mcpgym run`` then exits 1)."""
    return total > 0 and 2 * errored > total


def errored_lines(causes: list[ErroredCause], errored: int, total: int) -> list[str]:
    """The headline and one line per cause (at most :data:`MAX_CAUSES`), e.g.
    ``"16 of 16 episodes errored (provider or harness failures); the first causes:"`` and
    ``"openai:gpt-x, system.dark_mode trial 0 (and 15 more episodes): provider_error: ..."``.
    Empty when nothing errored."""
    if not errored:
        return []
    head = f"{errored} of {counted(total, 'episode')} errored (provider or harness failures, in no success figure)"
    head += "; the run failed: most episodes errored" if mostly_errored(errored, total) else ""
    lines = [head + ("; the first causes:" if len(causes) > 1 else "; the cause:")]
    for c in causes[:MAX_CAUSES]:
        more = f" (and {counted(c.episodes - 1, 'more episode')})" if c.episodes > 1 else ""
        lines.append(f"{c.agent}, {c.task} trial {c.trial}{more}: {short_text(c.reason, MAX_CAUSE_CHARS)}")
    if len(causes) > MAX_CAUSES:
        lines.append(f"... and {counted(len(causes) - MAX_CAUSES, 'other cause')} (mcpgym cat RUN_DIR: stop_reason)")
    return lines


__all__ = ["MAX_CAUSES", "ErroredCause", "errored_causes", "errored_lines", "mostly_errored"]
