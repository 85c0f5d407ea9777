"""The ``mcpgym`` command line.

Subcommands: ``serve`` (MCP server over stdio or HTTP), ``tools`` (the tool catalog),
``tasks`` (the task registry), ``run`` (evaluate agents), ``score`` (score runs or external
trajectories), ``report`` (Markdown + HTML report of a run).
"""

from __future__ import annotations

import json
import sys
from enum import Enum
from typing import Optional

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True, help="mcpgym: stateful MCP sandboxes with seeded faults, and an agent evaluation harness.")


class Transport(str, Enum):
    """Server transports."""

    stdio = "stdio"
    http = "http"


def _fail(message: str, code: int = 2) -> None:
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    raise typer.Exit(code)


@app.command()
def serve(
    transport: Transport = typer.Option(Transport.stdio, help="stdio: one episode per process; http: control API + per-episode MCP URLs."),
    host: str = typer.Option("127.0.0.1", help="HTTP bind address (loopback unless told otherwise)."),
    port: int = typer.Option(8765, help="HTTP port (0: any free port, printed on the MCPGYM_READY line)."),
    seed: int = typer.Option(0, help="stdio: world seed of the episode."),
    apps: str = typer.Option("system,shop", help="stdio: comma-separated apps, or 'all'."),
    faults: str = typer.Option("none", help="stdio: fault profile (none, default, harsh, or a .toml/.json/.yaml file)."),
    fault_seed: Optional[int] = typer.Option(None, help="stdio: fault seed (default: the world seed)."),
    token: Optional[str] = typer.Option(None, help="HTTP control token (default: $MCPGYM_TOKEN, else generated and printed once)."),
    max_episodes: int = typer.Option(1000, help="HTTP: most live episodes."),
    idle_timeout: float = typer.Option(1800.0, help="HTTP: wall seconds before an idle episode expires."),
    search_tools: bool = typer.Option(False, "--search-tools", help="stdio: retrieval mode (only the search_tools meta-tool at first)."),
) -> None:
    """Run the MCP server."""
    import anyio

    from server.serve import serve_http, serve_stdio
    from tools.faults import FaultProfileError, load_profile

    try:
        load_profile(faults)
    except FaultProfileError as exc:
        _fail(str(exc))
    if transport is Transport.http:
        try:
            serve_http(host=host, port=port, token=token, max_episodes=max_episodes, idle_timeout=idle_timeout)
        except OSError as exc:
            _fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
        return
    try:
        from sandboxes.world import normalise_apps

        normalise_apps(apps)
    except KeyError as exc:
        _fail(str(exc).strip("'\""))
    anyio.run(lambda: serve_stdio(seed=seed, apps=apps, faults=faults, fault_seed=fault_seed, search_tools=search_tools))


@app.command()
def tools(
    app_name: Optional[str] = typer.Option(None, "--app", help="Only this app's tools."),
    as_json: bool = typer.Option(False, "--json", help="Print the catalog as JSON."),
) -> None:
    """List the tool catalog: name, app, kind, resources, preconditions, remedies, alternatives."""
    from tools.catalog import catalog

    try:
        rows = catalog(app_name)
    except KeyError as exc:
        _fail(str(exc).strip("'\""))
    if as_json:
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{len(rows)} tools")
    for col in ("name", "kind", "resources", "preconditions", "remedies", "alternatives"):
        table.add_column(col, overflow="fold")
    for r in rows:
        remedies = "; ".join(f"{k}: {', '.join(v)}" for k, v in r["remedies"].items())
        table.add_row(r["name"], r["kind"], ", ".join(r["resources"]), ", ".join(r["preconditions"]), remedies,
                      ", ".join(r["alternatives"]))
    Console().print(table)


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
