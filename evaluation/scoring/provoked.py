"""Provoked errors (docs/design.md §7, "Recovery"): an error the agent set out to meet, to test a
guard it built or a constraint it was asked to enforce. Such an error is the answer the agent
wanted, not an obstacle between it and its goal: it is still an error call, but not a
recoverable one (no attempt is owed, and a later call that succeeds recovers nothing).

The rule, :func:`provoked`, reads only what the transcript carries, in any format:

* **own guard**: the error text repeats the fixed text of an exception the agent's own earlier
  call raises in its arguments (:data:`RAISE_RE`: SQL ``RAISE EXCEPTION '...'`` /
  ``RAISE_APPLICATION_ERROR(n, '...')`` / ``SIGNAL ... MESSAGE_TEXT = '...'``, Python
  ``raise ...Error("...")``, JavaScript ``throw new Error("...")``): the agent built the guard
  and the guard fired;
* **said to fail**: a comment in the call's own arguments (SQL ``--``, shell or Python ``#``,
  ``//``) says the call should fail (:data:`EXPECT_FAIL_RE`: "should fail", "expected to fail",
  "should be rejected", "should raise"...).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

RAISE_RE = re.compile(
    r"""(?:\braise\s+exception\s+(?:using\s+message\s*=\s*)?|\braise_application_error\s*\(\s*-?\d+\s*,\s*"""
    r"""|\bmessage_text\s*=\s*|\braise\s+\w*(?:error|exception)\w*\s*\(\s*f?|\bthrow\s+new\s+\w*error\s*\(\s*)"""
    r"""(['"`])(.*?)\1""",
    re.I | re.S,
)
"""An exception raised with a literal message; group 2 is the message."""
EXPECT_FAIL_RE = re.compile(
    r"(?:--|#|//)[^\n]*\b(?:should|must|expect(?:ed)?\s+to|is\s+expected\s+to|will)\s+"
    r"(?:fail|error|raise|be\s+(?:rejected|refused|blocked|denied))\b",
    re.I,
)
"""A comment saying the call it sits in should fail."""
MIN_MESSAGE = 12
"""Characters of fixed message text an error must repeat (shorter says too little)."""
_PLACEHOLDER_RE = re.compile(r"%[sd]?|\{[^}]*\}|\$\{[^}]*\}")


def _strings(value: Any, depth: int = 0) -> Iterable[str]:
    if depth > 6:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v, depth + 1)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, depth + 1)


def raised_messages(arguments: Any) -> list[str]:
    """The fixed pieces (at least :data:`MIN_MESSAGE` characters, lowercased) of every exception
    message the string arguments of one call raise (:data:`RAISE_RE`); a placeholder (``%``,
    ``{...}``, ``${...}``) splits a message into pieces."""
    out: list[str] = []
    for s in _strings(arguments):
        if len(s) > 200_000:
            continue
        for m in RAISE_RE.finditer(s):
            for piece in _PLACEHOLDER_RE.split(m.group(2)):
                piece = piece.strip(" :=,.").lower()
                if len(piece) >= MIN_MESSAGE:
                    out.append(piece)
    return out


def said_to_fail(arguments: Any) -> bool:
    """True when a comment in the call's string arguments says the call should fail
    (:data:`EXPECT_FAIL_RE`)."""
    return any(len(s) <= 200_000 and EXPECT_FAIL_RE.search(s) for s in _strings(arguments))


def provoked(error_text: str, arguments: Any, earlier_arguments: Iterable[Any]) -> bool:
    """True when an error is one the agent provoked on purpose (module docstring).

    Args:
        error_text: the failing call's error text.
        arguments: the failing call's arguments.
        earlier_arguments: the arguments of the episode's earlier successful calls.
    """
    if said_to_fail(arguments):
        return True
    text = error_text.lower()
    return any(piece in text for a in earlier_arguments for piece in raised_messages(a))


__all__ = ["EXPECT_FAIL_RE", "MIN_MESSAGE", "RAISE_RE", "provoked", "raised_messages", "said_to_fail"]
