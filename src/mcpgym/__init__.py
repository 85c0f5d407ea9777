"""mcpgym: stateful, seeded MCP sandbox apps with deterministic fault injection, and an
evaluation client that scores agents on outcome, verification, recovery and defeatism.

The public API for app authors (documented in the README's "Adding a sandbox app" and in
docs/design.md)::

    from mcpgym import App, AppState, tool, ToolError, ErrorCode, VOLATILE, World, check_app, AppCheckError

Every name is imported on first use, so ``import mcpgym`` stays light (and the ``mcpgym``
command guards Ctrl-C before any heavy import).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpgym.kernel.app import App, AppState, register_app, unregister_app
    from mcpgym.kernel.errors import ErrorCode, ToolError
    from mcpgym.kernel.spec import tool
    from mcpgym.kernel.volatile import VOLATILE, VOLATILE_KEYS
    from mcpgym.kernel.world import World
    from mcpgym.tools.conformance import AppCheckError, check_app

_LAZY = {
    "App": "mcpgym.kernel.app",
    "AppState": "mcpgym.kernel.app",
    "register_app": "mcpgym.kernel.app",
    "unregister_app": "mcpgym.kernel.app",
    "ErrorCode": "mcpgym.kernel.errors",
    "ToolError": "mcpgym.kernel.errors",
    "tool": "mcpgym.kernel.spec",
    "VOLATILE": "mcpgym.kernel.volatile",
    "VOLATILE_KEYS": "mcpgym.kernel.volatile",
    "World": "mcpgym.kernel.world",
    "check_app": "mcpgym.tools.conformance",
    "AppCheckError": "mcpgym.tools.conformance",
}
"""Each public name and the module it is loaded from on first use."""


def __getattr__(name: str) -> Any:
    """Load each public name on first use (PEP 562), so ``import mcpgym`` runs no import of its
    own: the ``mcpgym`` command's Ctrl-C guard (:mod:`mcpgym.evaluation.cli`) is in place
    before anything heavy is imported."""
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("mcpgym")
        except PackageNotFoundError:  # pragma: no cover - running from a tree that was never installed
            found = "0+unknown"
        globals()[name] = found
        return found
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
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
