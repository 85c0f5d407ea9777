"""Plain words for what a user's input got wrong: JSON type names and pydantic validation errors.

Every input file mcpgym reads (a fault profile, a task file, a catalog, a run manifest, a
trajectory line) is checked by a pydantic model, and pydantic's own text ("1 validation error
for FaultProfile\\ntransient\\n  Extra inputs are not permitted [type=extra_forbidden, ...
https://errors.pydantic.dev/...]", "Input tag 'bogus' found using _step_type() does not match
any of the expected tags") names the model's internals, not the user's file. Here each error
becomes ``field 'a.b' = value: why`` (the field as the file spells it, the value it holds as
JSON, the reason in plain words), and :func:`validation_line` joins them into the one line an
error message carries, e.g. ``field 'trials' = "x": input should be a valid integer, got a
JSON string``. Every command's input files go through it: fault profiles
(:func:`mcpgym.tools.faults.load_profile`, for ``mcpgym run``, ``play``, ``serve`` and
``proxy``), catalogs, run manifests, proxy task files and trajectory lines.

A type is named as JSON names it (:func:`json_type`): null, boolean, number, string, array,
object -- never Python's ``NoneType``, ``str`` or ``list``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from mcpgym.kernel.shorten import short_text
from mcpgym.kernel.spec import json_type_name

VALUE_SHOWN = 80
"""The most characters of a value an error message repeats."""

ERRORS_SHOWN = 5
"""The most problems :func:`validation_line` names (the rest are counted)."""


def json_type(value: Any) -> str:
    """The JSON name of ``value``'s type: ``null``, ``boolean``, ``number``, ``string``,
    ``array``, ``object`` (a tuple is an array; any other Python object its class name). The
    coarse form of :func:`mcpgym.kernel.spec.json_type_name`: an integer is a ``number``."""
    name = json_type_name(value)
    return "number" if name == "integer" else name.removeprefix("a ")


def shown_value(value: Any, limit: int = VALUE_SHOWN) -> str:
    """``value`` as JSON (as the file wrote it), cut to ``limit`` characters."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return short_text(text, limit)


def _walk(data: Any, loc: tuple[Any, ...]) -> tuple[list[Any], Any, bool]:
    """The parts of ``loc`` that name fields of ``data`` (a key of a mapping, an index of a
    list), the value found there, and whether it was found. A part that is neither (a union
    member's tag such as ``tool_call``, a validator's name such as ``function-after[...]``)
    is pydantic's, not the file's: it is skipped, except the last (a missing field)."""
    path: list[Any] = []
    here, found = data, True
    for i, part in enumerate(loc):
        last = i == len(loc) - 1
        in_map = isinstance(here, dict) and part in here
        in_list = isinstance(here, (list, tuple)) and isinstance(part, int) and -len(here) <= part < len(here)
        if in_map or in_list:
            here = here[part]
        elif last and isinstance(part, (str, int)) and part != "[key]":
            path.append(part)
            return path, None, False
        else:
            continue  # pydantic's own step, or data not given
        path.append(part)
    return path, here, found


def plain_reason(err: ErrorDetails, value: Any) -> str:
    """The reason of one error (an entry of ``ValidationError.errors()``; ``value`` the value
    it refused) in plain words: pydantic's message without its prefixes and class names, the
    JSON type of a value of the wrong type."""
    kind = err["type"]
    ctx = err.get("ctx") or {}
    if kind == "missing":
        return "missing (required)"
    if kind == "extra_forbidden":
        return "unknown field"
    if kind == "union_tag_invalid":
        expected = str(ctx.get("expected_tags", "")).replace("'", "")
        return f"not one of {expected}"
    if kind == "union_tag_not_found":
        return f"the field {ctx.get('discriminator', '')} that says which kind this is is missing".replace("  ", " ")
    msg = str(err.get("msg", "invalid")).removeprefix("Value error, ").removeprefix("Assertion failed, ")
    msg = re.sub(r" or instance of \w+", "", msg)  # the model's class name means nothing in a file
    msg = short_text(msg[:1].lower() + msg[1:], 300)
    if kind.endswith("_type") or kind.endswith("_parsing"):
        return f"{msg}, got a JSON {json_type(value)}"
    return msg


def describe_error(err: ErrorDetails, data: Any = None) -> tuple[str, str]:
    """One entry of ``ValidationError.errors()`` as ``(field, " = value: why")`` parts:
    ``field`` dotted and quoted as the file spells it (``'steps.0.type'``, ``(top level)`` for
    the whole document); ``data`` is what was validated (for the value and to tell the file's keys from
    pydantic's tags; None: the value pydantic reports)."""
    loc = tuple(err.get("loc", ()))
    if loc and loc[-1] == "[key]":  # a bad key of a mapping: the key is the value
        loc = loc[:-1]
    if data is not None:
        path, value, found = _walk(data, loc)
        if not found:
            value = err.get("input")
    else:
        path = [p for p in loc if not (isinstance(p, str) and ("[" in p or "(" in p))]
        value = err.get("input")
        found = err["type"] != "missing"
    if err["type"] == "union_tag_invalid" and isinstance(value, dict):
        tag = (err.get("ctx") or {}).get("tag")
        key = next((k for k, v in value.items() if v == tag and isinstance(k, str)), None)
        if key is not None:  # name the field that holds the tag (a discriminator function hides it)
            path, value = [*path, key], tag
    if err["type"] == "extra_forbidden" and tuple(err.get("loc", ()))[-1:] == ("[key]",):
        value = err.get("input")
    field = f"'{short_text('.'.join(str(p) for p in path), 120)}'" if path else "(top level)"
    why = plain_reason(err, value)
    if err["type"] == "missing" or not found:
        return field, f": {why}"
    if isinstance(value, (dict, list)) and err["type"] != "extra_forbidden":
        return field, f" (a JSON {json_type(value)}): {why}"
    return field, f" = {shown_value(value)}: {why}"


def validation_problems(
    exc: ValidationError,
    data: Any = None,
    explain: Callable[[ErrorDetails, tuple[Any, ...]], str | None] | None = None,
) -> list[str]:
    """Every error of ``exc`` as ``field 'F' = value: why`` (:func:`describe_error`).

    Args:
        exc: the error pydantic raised validating ``data``.
        data: what was validated (a dict read from the file), or None.
        explain: ``explain(err, loc) -> why`` for a caller's own wording of an error (e.g. the
            fault kinds a profile takes), None to keep the plain one.
    """
    out = []
    for err in exc.errors(include_url=False):
        field, rest = describe_error(err, data)
        own = explain(err, tuple(err.get("loc", ()))) if explain is not None else None
        if own is not None:
            head, sep, _ = rest.rpartition(": ")
            rest = f"{head}{sep}{own}" if sep else f": {own}"
        out.append(f"field {field}{rest}")
    return out


def validation_line(
    exc: ValidationError,
    data: Any = None,
    explain: Callable[[ErrorDetails, tuple[Any, ...]], str | None] | None = None,
    limit: int = ERRORS_SHOWN,
) -> str:
    """``exc`` as one line: its first ``limit`` problems (:func:`validation_problems`) joined
    with ``; ``, and how many more there are."""
    problems = validation_problems(exc, data, explain)
    line = "; ".join(problems[:limit])
    if len(problems) > limit:
        line += f"; and {len(problems) - limit} more"
    return line


__all__ = [
    "ERRORS_SHOWN",
    "VALUE_SHOWN",
    "describe_error",
    "json_type",
    "plain_reason",
    "shown_value",
    "validation_line",
    "validation_problems",
]
