"""The tool catalog: every registered tool's metadata as JSON rows (docs/design.md §3).

``mcpgym tools --json`` prints it; the scorer reads it, also for trajectories recorded
elsewhere.
"""

from __future__ import annotations

from typing import Any

from mcpgym.kernel.app import app_names, get_app


def catalog(app: str | None = None) -> list[dict[str, Any]]:
    """Return the catalog rows (``name, app, kind, resources, preconditions, remedies,
    alternatives, id_args, description, input_schema`` and the declarations ``role``,
    ``destructive``, ``never_faulted``), apps in catalog order. Remedies include the ones
    derived from roles over every registered tool (``rate_limited`` -> the ``wait`` tools,
    ``auth_required`` -> the ``reauth`` tools).

    Args:
        app: only this app's tools (None: all registered apps).

    Raises:
        KeyError: for an unknown app.
    """
    names = [app] if app else app_names()
    peers = [spec for name in app_names() for spec in get_app(name).tools.values()]
    rows: list[dict[str, Any]] = []
    for name in names:
        cls = get_app(name)
        rows.extend(spec.catalog_entry(peers) for spec in cls.tools.values())
    return rows
