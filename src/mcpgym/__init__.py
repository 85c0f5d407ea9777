"""mcpgym: stateful, seeded MCP sandbox apps with deterministic fault injection, and an
evaluation client that scores agents on outcome, verification, recovery and defeatism.

The public API for app authors (documented in the README's "Adding a sandbox app" and in
docs/design.md)::

    from mcpgym import App, AppState, tool, ToolError, ErrorCode, VOLATILE, World, check_app, AppCheckError

``check_app`` and ``AppCheckError`` (the conformance suite) are imported on first use, so
``import mcpgym`` stays light.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from mcpgym.kernel.app import App, AppState, register_app, unregister_app
from mcpgym.kernel.errors import ErrorCode, ToolError
from mcpgym.kernel.spec import tool
from mcpgym.kernel.volatile import VOLATILE, VOLATILE_KEYS
from mcpgym.kernel.world import World

if TYPE_CHECKING:
    from mcpgym.tools.conformance import AppCheckError, check_app

try:
    __version__ = version("mcpgym")
except PackageNotFoundError:  # pragma: no cover - running from a tree that was never installed
    __version__ = "0+unknown"


def __getattr__(name: str) -> Any:
    """Import ``check_app`` and ``AppCheckError`` lazily (PEP 562): they pull in the conformance suite."""
    if name in ("check_app", "AppCheckError"):
        from mcpgym.tools import conformance

        return getattr(conformance, name)
    raise AttributeError(f"module 'mcpgym' has no attribute {name!r}")


__all__ = [
    "AppCheckError",
    "App",
    "AppState",
    "ErrorCode",
    "ToolError",
    "VOLATILE",
    "VOLATILE_KEYS",
    "World",
    "check_app",
    "register_app",
    "tool",
    "unregister_app",
    "__version__",
]
