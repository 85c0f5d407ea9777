"""The tool catalog: every registered tool's metadata as JSON rows (DESIGN section 3).

``mcpgym tools --json`` prints it; the scorer reads it, also for trajectories recorded
elsewhere.
"""

from __future__ import annotations

from typing import Any

from mcpgym.kernel.app import app_names, get_app


def catalog(app: str | None = None) -> list[dict[str, Any]]:
    """Return the catalog rows (``name, app, kind, resources, preconditions, remedies,
    alternatives, id_args, description, input_schema``), apps in catalog order.

    Args:
        app: only this app's tools (None: all registered apps).

    Raises:
        KeyError: for an unknown app.
    """
    names = [app] if app else app_names()
    rows: list[dict[str, Any]] = []
    for name in names:
        cls = get_app(name)
        rows.extend(spec.catalog_entry() for spec in cls.tools.values())
    return rows
