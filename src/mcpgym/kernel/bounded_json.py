"""JSON text read with bounds: one reader behind every JSON input a user or a peer gives mcpgym.

Python's ``json`` fails in three ways no caller should see raw: a value nested past the
interpreter's recursion limit raises ``RecursionError`` (100,000 ``[`` bring down whatever
loop called it), an integer of more than 4,300 digits raises ``ValueError`` with Python's own
advice about ``sys.set_int_max_str_digits``, and a syntax error's message names no input.
:func:`load_json` turns each into a :class:`JSONLimitError` (a ``ValueError``) whose message
says what is wrong, in plain words, after the name of the input it was given (a file and line,
a field, a route), and refuses nesting past :data:`MAX_JSON_DEPTH` before parsing (checked in
one linear pass over the text, so depth cannot cost recursion anywhere later: pydantic,
``json.dumps``, the scorer).
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

from mcpgym.kernel.exceptions import InvalidValue
from mcpgym.kernel.shorten import short_text

MAX_JSON_DEPTH = 200
"""Deepest nesting of arrays and objects accepted (a trajectory line, a catalog, a control body,
a tool's arguments hold less than 20; the MCP SDK's own validator stops near 250)."""

MAX_JSON_INT_DIGITS = 4300
"""Most digits of one integer (Python's own default limit for ``int(str)``)."""


class JSONLimitError(InvalidValue):
    """JSON text that cannot be read: a syntax error, nesting deeper than :data:`MAX_JSON_DEPTH`,
    or an integer of more than :data:`MAX_JSON_INT_DIGITS` digits. ``str()`` is one line that
    starts with the input's name when one was given. ``reason`` is the message without it."""

    def __init__(self, where: str, reason: str) -> None:
        self.where = where
        self.reason = reason
        super().__init__(f"{where}: {reason}" if where else reason)


_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_BRACKETS = bytes.maketrans(b"", b"")
_NOT_BRACKETS = bytes(set(range(256)) - set(b"[]{}"))
_STEP = {0x5B: 1, 0x7B: 1, 0x5D: -1, 0x7D: -1}


def json_depth(text: str | bytes) -> int:
    """The deepest nesting of ``[``/``{`` in the JSON ``text`` (brackets inside strings not
    counted). No recursion: strings are cut out by a regular expression, every other byte but
    a bracket is deleted, and the running depth is a C-level ``accumulate``."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    if b'"' in data:
        data = _STRING.sub(b"", data)
    brackets = data.translate(_BRACKETS, _NOT_BRACKETS)
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


def check_json_depth(text: str | bytes, where: str = "", limit: int = MAX_JSON_DEPTH) -> None:
    """Refuse ``text`` nested deeper than ``limit``.

    Raises:
        JSONLimitError: naming ``where`` and the limit.
    """
    if len(text) > 2 * limit and json_depth(text) > limit:  # nesting needs two brackets a level
        raise JSONLimitError(where, f"JSON nested more than {limit} levels deep (arrays or objects within each other)")


def load_json(
    text: str | bytes, where: str = "", *, limit: int | None = MAX_JSON_DEPTH, unique_keys: bool = False
) -> Any:
    """``json.loads(text)`` with its bounds made errors.

    Args:
        text: the JSON text. where: the input's name for the message (``tasks.json``,
            ``body field 'faults'``, ``line 3``). limit: deepest nesting accepted (None: only
            Python's own recursion limit, for a hot reader of records mcpgym wrote).
            unique_keys: refuse an object that gives one key twice (a file the user wrote,
            where ``json`` would silently keep the last value).

    Raises:
        JSONLimitError: invalid JSON (with line and column), nesting past ``limit``, an integer
            of more than 4,300 digits, a key given twice in one object (``unique_keys``; the
            message names the key).
    """
    if limit is not None:
        check_json_depth(text, where, limit)
    if _LONG_DIGITS.search(text if isinstance(text, str) else bytes(text).decode("latin-1")):
        _refuse_long_integer(text, where)
    try:
        return json.loads(text, object_pairs_hook=_unique_object) if unique_keys else json.loads(text)
    except _DuplicateKey as exc:
        raise JSONLimitError(where, str(exc)) from None
    except json.JSONDecodeError as exc:
        raise JSONLimitError(where, f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise JSONLimitError(where, "JSON nested too deeply to read") from None
    except ValueError as exc:  # int(str) past sys.get_int_max_str_digits(), bytes that are not UTF-8
        raise JSONLimitError(where, f"invalid JSON: {exc}") from None


class _DuplicateKey(ValueError):
    """One object of a user's file gives the same key twice (``key`` names it)."""

    def __init__(self, key: str) -> None:
        self.key = key
        super().__init__(f"the key {short_text(key, 80)!r} is given twice in one object (remove one)")


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json``'s ``object_pairs_hook``: the object, or :class:`_DuplicateKey` for a key given twice."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


_LONG_DIGITS = re.compile(rf"\d{{{MAX_JSON_INT_DIGITS + 1}}}")
"""A run of digits longer than any integer Python converts (a cheap test before a slow parse)."""


class _TooLong:
    """What an integer past :data:`MAX_JSON_INT_DIGITS` reads as while its field is looked for."""

    def __init__(self, digits: int) -> None:
        self.digits = digits


def _refuse_long_integer(text: str | bytes, where: str) -> None:
    """Parse ``text`` with integers past the limit left unconverted and raise, naming the field
    of the first one (``tasks[0].seed``); return when none is an integer (a long run of digits
    inside a string, a float)."""

    def bounded_int(token: str) -> object:
        return _TooLong(len(token.lstrip("-"))) if len(token.lstrip("-")) > MAX_JSON_INT_DIGITS else int(token)

    try:
        data = json.loads(text, parse_int=bounded_int)
    except (ValueError, RecursionError):
        return  # json.loads reports it
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, _TooLong):
            field = f"field {short_text(path, 80)!r}: " if path else ""
            raise JSONLimitError(
                where, f"{field}an integer of {value.digits:,} digits (at most {MAX_JSON_INT_DIGITS:,})"
            )
        if isinstance(value, dict):
            stack.extend((v, f"{path}.{k}" if path else str(k)) for k, v in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend((v, f"{path}[{i}]") for i, v in reversed(list(enumerate(value))))


__all__ = ["MAX_JSON_DEPTH", "MAX_JSON_INT_DIGITS", "JSONLimitError", "check_json_depth", "json_depth", "load_json"]
