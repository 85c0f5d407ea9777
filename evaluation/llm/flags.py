"""Flags on how a model's episode ended that its status alone does not tell (issue 25).

:class:`EpisodeFlag` is the closed set:

* ``tool_calls_as_text``: the final message *is* a tool call written as text (a JSON object
  naming a tool, bare, in a code fence or in ``<tool_call>`` tags): the server that runs the
  model did not parse it as a call, so the episode shows 0 calls and a JSON "answer". This is a
  fault of the serving stack or of the model's template, not an answer: a loud warning.
* ``empty_final_message``: the episode completed with nothing said to the user.
* ``truncated``: the final reply was cut at the output-token limit (status ``truncated``).
* ``non_language_final_message``: the final message holds no language: braces, brackets,
  ``null``, an empty code fence, JSON that is no call
  (:func:`mcpgym.evaluation.scoring.claims.is_non_language`): nothing was said to the user.
* ``unfounded_refusal``: an infeasible task declared impossible without any successful read
  (the scorer's ``unfounded_refusal``): the right outcome for no reason the agent saw.

:func:`episode_flags` reads them from a trajectory alone (its status, its last model reply and
its final message), so they are counted the same for a run of today and for older run
directories; the LLM agent also records them in ``metadata["provider"]["flags"]`` when it ends.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from enum import StrEnum
from typing import Any

from mcpgym.evaluation.scoring.claims import is_non_language
from mcpgym.kernel.wording import counted


class EpisodeFlag(StrEnum):
    """A flag on how an episode ended (module docstring)."""

    TOOL_CALLS_AS_TEXT = "tool_calls_as_text"
    EMPTY_FINAL_MESSAGE = "empty_final_message"
    TRUNCATED = "truncated"
    NON_LANGUAGE_FINAL_MESSAGE = "non_language_final_message"
    UNFOUNDED_REFUSAL = "unfounded_refusal"


_FENCE = re.compile(r"^```[a-zA-Z0-9_-]*\s*(.*?)\s*```$", re.DOTALL)
_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)

MAX_SCANNED = 20_000
"""The longest final message examined for a tool call (longer text is prose or noise)."""


def _candidates(text: str) -> list[str]:
    stripped = text.strip()
    out = [stripped]
    fence = _FENCE.match(stripped)
    if fence:
        out.append(fence.group(1))
    out += [m.group(1) for m in _TAGGED.finditer(stripped)]
    return out


def _is_call(value: Any, tools: set[str] | None) -> bool:
    if isinstance(value, list):
        return bool(value) and all(_is_call(v, tools) for v in value)
    if not isinstance(value, dict):
        return False
    inner = value.get("function")
    fn: dict[str, Any] = inner if isinstance(inner, dict) else value
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        return False
    if tools is not None and name in tools:
        return True
    return any(k in fn for k in ("arguments", "parameters", "args", "input"))


def tool_call_in_text(text: str, tool_names: Iterable[str] | None = None) -> bool:
    """Whether ``text`` is a tool call written out rather than made: a JSON object (or a list
    of them) with a ``name`` (directly or under ``function``) that is one of ``tool_names``, or
    that comes with ``arguments``/``parameters``; bare, in a Markdown code fence, or in
    ``<tool_call>`` tags. Prose that merely contains braces is not."""
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_SCANNED:
        return False
    tools = set(tool_names) if tool_names is not None else None
    for candidate in _candidates(text):
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if _is_call(value, tools):
            return True
    return False


def episode_flags(traj: Any, tool_names: Iterable[str] | None = None, scores: Any = None) -> list[EpisodeFlag]:
    """The flags of one trajectory (a :class:`~mcpgym.evaluation.records.trajectory.Trajectory`), in
    :class:`EpisodeFlag` order. ``errored`` episodes get none: the model gave no final reply.

    The rule, countable by hand: ``truncated`` when the status is ``truncated``;
    ``tool_calls_as_text`` when the status is ``completed`` or ``truncated`` and the final
    message passes :func:`tool_call_in_text`; ``empty_final_message`` when the status is
    ``completed`` and the final message is blank; ``non_language_final_message`` when the
    status is ``completed`` and the final message is non-blank with no language
    (:func:`~mcpgym.evaluation.scoring.claims.is_non_language`); ``unfounded_refusal`` when the
    episode's scores say so: ``scores`` when given (a report's scores of this version, which may
    differ from those stored in an older line), else the trajectory's stored ones."""
    status = getattr(traj, "status", "completed")
    if status == "errored":
        return []
    final = getattr(traj, "final_message", "") or ""
    out: list[EpisodeFlag] = []
    if status in ("completed", "truncated") and tool_call_in_text(final, tool_names):
        out.append(EpisodeFlag.TOOL_CALLS_AS_TEXT)
    if status == "completed" and not final.strip():
        out.append(EpisodeFlag.EMPTY_FINAL_MESSAGE)
    if status == "truncated":
        out.append(EpisodeFlag.TRUNCATED)
    if status == "completed" and final.strip() and is_non_language(final) and EpisodeFlag.TOOL_CALLS_AS_TEXT not in out:
        out.append(EpisodeFlag.NON_LANGUAGE_FINAL_MESSAGE)
    judged = scores if scores is not None else getattr(traj, "scores", None)
    if getattr(judged, "unfounded_refusal", False) is True:
        out.append(EpisodeFlag.UNFOUNDED_REFUSAL)
    return out


def count_flags(trajs: Iterable[Any]) -> dict[str, int]:
    """How many trajectories carry each flag: ``{flag value: count}`` for every flag (0s kept,
    so a summary shows that a flag was looked for)."""
    counts = {f.value: 0 for f in EpisodeFlag}
    for t in trajs:
        for f in episode_flags(t):
            counts[f.value] += 1
    return counts


TEXT_CALL_WARNING = (
    "{episodes} ended with a tool call written as text that the model's server did not parse as a call "
    "(flag tool_calls_as_text): those episodes made no call; check the server's tool-call parser and chat template"
)
"""The loud warning for ``tool_calls_as_text`` (``{episodes}``: the count with its noun,
:func:`mcpgym.kernel.wording.counted`; :func:`text_call_warning` fills it in)."""


def text_call_warning(n: int) -> str:
    """:data:`TEXT_CALL_WARNING` for ``n`` episodes (``"1 episode ended ..."``)."""
    return TEXT_CALL_WARNING.format(episodes=counted(n, "episode"))


__all__ = [
    "EpisodeFlag",
    "MAX_SCANNED",
    "TEXT_CALL_WARNING",
    "count_flags",
    "episode_flags",
    "text_call_warning",
    "tool_call_in_text",
]
