"""``mcpgym tools``: a thin adapter over :func:`mcpgym.tools.catalog.catalog` and the listings
of :mod:`mcpgym.evaluation.report.listings`."""

from __future__ import annotations

import json
import sys

import typer

from mcpgym.evaluation.cli.common import console


def tools(
    app_name: str | None = typer.Option(None, "--app", metavar="APP", help="Only this app's tools."),
    full: bool = typer.Option(
        False,
        "--full",
        help="One block per tool: whole description, arguments, resources, preconditions, remedies, alternatives.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the catalog as JSON."),
) -> None:
    """List the tools: one line each (name, kind, what it does); --full for everything.

    The full view adds each tool's resources, preconditions, remedies and alternatives.
    """
    from mcpgym.tools.catalog import catalog

    rows = catalog(app_name)  # an unknown app: UnknownAppError, printed by MCPGymGroup
    if as_json:
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return
    from mcpgym.evaluation.report.listings import print_tools_compact, print_tools_full

    (print_tools_full if full else print_tools_compact)(console(), rows)


__all__ = ["tools"]
