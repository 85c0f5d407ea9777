"""Helpers for the apps' in-process tests: call a tool through a ToolInvoker and assert the outcome."""

from __future__ import annotations

from typing import Any

from tools.invoke import ToolInvoker


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
