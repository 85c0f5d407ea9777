"""Helpers for the apps' in-process tests: call a tool through a ToolInvoker and assert the outcome."""

from __future__ import annotations

import random
from typing import Any

from mcpgym.tools.invoke import ToolInvoker


def ok(inv: ToolInvoker, tool: str, /, **args: Any) -> dict[str, Any]:
    """Call ``tool`` with ``args`` and return its payload, failing the test on an error."""
    out = inv.call(tool, args)
    assert not out.is_error, (tool, args, out.payload)
    return out.payload


def err(inv: ToolInvoker, tool: str, code: str | None = None, /, **args: Any) -> dict[str, Any]:
    """Call ``tool``, assert a domain error (never an internal one), with ``code`` when given;
    return the error payload."""
    out = inv.call(tool, args)
    assert out.is_error, (tool, args, out.payload)
    assert not out.record.internal, out.payload
    if code is not None:
        assert out.payload["error"]["code"] == code, out.payload
    return out.payload["error"]


def random_value(r: random.Random, schema: dict[str, Any], values: dict[str, list[Any]]) -> Any:
    """A random argument for a JSON ``schema``: enum members (plus one bogus), a branch of an
    ``anyOf``, short arrays, else a pick from ``values[type]`` (app-specific ids and hostile
    strings)."""
    if "enum" in schema:
        return r.choice(schema["enum"] + ["bogus"])
    if "anyOf" in schema:
        return random_value(r, r.choice(schema["anyOf"]), values)
    kind = schema.get("type")
    if kind == "null":
        return None
    if kind == "array":
        return [random_value(r, schema.get("items", {"type": "string"}), values) for _ in range(r.randint(0, 2))]
    return r.choice(values.get(kind, ["x", 1, None]))
