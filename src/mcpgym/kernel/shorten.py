"""Values quoted in error messages, shortened (``reprlib``-style) so that no error echoes an input whole.

An error names the value that was wrong, but a value can be 900 KB long (a control-API body,
a field of a profile, a command-line option): :func:`short` quotes it like ``repr`` with long
strings cut in the middle and long containers ended by ``...``, and :func:`cap_message` bounds a
whole message that was built from pieces nobody shortened.
"""

from __future__ import annotations

import reprlib
from typing import Annotated, Any

from pydantic import AfterValidator

MAX_QUOTED_CHARS = 80
"""Longest quote of one value in an error message (characters, ``...`` included)."""

MAX_MESSAGE_CHARS = 2000
"""Longest error message (characters): what :func:`cap_message` keeps of a longer one."""


class _Short(reprlib.Repr):
    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 3000:  # ~900 digits: never convert (Python refuses past 4300 digits)
            return f"<an integer of about {int(x.bit_length() * 0.30103):,} digits>"
        return super().repr_int(x, level)


def _repr() -> reprlib.Repr:
    r = _Short()
    r.maxstring = MAX_QUOTED_CHARS
    r.maxother = MAX_QUOTED_CHARS
    r.maxlong = 40
    r.maxdict = r.maxlist = r.maxtuple = r.maxset = r.maxfrozenset = r.maxdeque = r.maxarray = 6
    r.maxlevel = 3
    return r


_REPR = _repr()


def short(value: Any) -> str:
    """``repr(value)`` of at most about :data:`MAX_QUOTED_CHARS` characters.

    Strings keep their start and end around ``...`` (``'aaaa...aaaa'``), containers show their
    first six items and nesting three levels deep, integers of more than 40 digits keep their
    ends. The result is always at most ``MAX_QUOTED_CHARS + 10`` characters long (a repr that is
    still longer, e.g. of an object with a long ``__repr__``, is cut in the middle).
    """
    try:
        text = _REPR.repr(value)
    except Exception:  # noqa: BLE001 - a broken __repr__ must not hide the error being reported
        text = f"<{type(value).__name__} object>"
    limit = MAX_QUOTED_CHARS + 10
    if len(text) > limit:
        half = (limit - 3) // 2
        text = f"{text[:half]}...{text[-half:]}"
    return text


def short_text(text: str, limit: int = MAX_QUOTED_CHARS) -> str:
    """``text`` itself (no quotes) when at most ``limit`` characters, else its start and end
    around ``...`` (``limit`` characters in all): a name or key quoted without ``repr``."""
    if len(text) <= limit:
        return text
    half = (limit - 3) // 2
    return f"{text[:half]}...{text[-half:]}"


MAX_NAME_CHARS = 120
"""Longest name, id or label echoed in an output (a tool name, an episode or task id, a fault
profile's name, an Inspect argument): longer ones keep their start and end around ``...``.
MCP tool names are at most 128 characters; mcpgym's at most 64."""


def short_name(text: str) -> str:
    """``text`` as an output echoes a name, id or label: itself when at most
    :data:`MAX_NAME_CHARS` characters, else shortened by :func:`short_text` (start ``...`` end).
    The one shortening rule of every echo in mcpgym's outputs (reports, ``--json``, the control
    API's and the OpenEnv server's views)."""
    return short_text(text, MAX_NAME_CHARS) if isinstance(text, str) else text


EchoName = Annotated[str, AfterValidator(short_name)]
"""A model field holding a name read from input and echoed in an output: stored shortened
(:func:`short_name`), so no view, report or ``--json`` of it can carry a megabyte."""


def cap_message(message: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``message`` when at most ``limit`` characters, else its first ``limit - 40`` characters
    and a note of how many were left out (an error built from unshortened pieces stays bounded)."""
    if len(message) <= limit:
        return message
    keep = max(0, limit - 40)
    return f"{message[:keep]}... ({len(message) - keep:,} characters left out)"


__all__ = [
    "MAX_MESSAGE_CHARS",
    "MAX_NAME_CHARS",
    "MAX_QUOTED_CHARS",
    "EchoName",
    "cap_message",
    "short",
    "short_name",
    "short_text",
]
