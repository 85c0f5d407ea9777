"""mcpgym: stateful, seeded MCP sandbox apps with deterministic fault injection, and an
evaluation client that scores agents on outcome, verification, recovery and defeatism.

The public API for app authors (documented in the README's "Adding a sandbox app" and in
docs/design.md)::

    from mcpgym import App, AppState, tool, ToolError, VOLATILE, World, check_app

``check_app`` (the conformance suite) is imported on first use, so ``import mcpgym`` stays light.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from mcpgym.kernel.app import App, AppState, register_app, unregister_app
from mcpgym.kernel.errors import ToolError
from mcpgym.kernel.spec import tool
from mcpgym.kernel.volatile import VOLATILE, VOLATILE_KEYS
from mcpgym.kernel.world import World

if TYPE_CHECKING:
    from mcpgym.tools.conformance import check_app

try:
    __version__ = version("mcpgym")
except PackageNotFoundError:  # pragma: no cover - running from a tree that was never installed
    __version__ = "0+unknown"


def __getattr__(name: str) -> Any:
    """Import ``check_app`` lazily (PEP 562): it pulls in the conformance suite."""
    if name == "check_app":
        from mcpgym.tools.conformance import check_app

        return check_app
    raise AttributeError(f"module 'mcpgym' has no attribute {name!r}")


__all__ = [
    "App",
    "AppState",
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
