"""``mcpgym view RUN_DIR...``: a thin adapter over :mod:`mcpgym.evaluation.report.browser`."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from mcpgym.kernel.exceptions import InputError

if TYPE_CHECKING:
    from mcpgym.evaluation.report.browser import BrowserServer


def view(
    run_dirs: list[Path] = typer.Argument(..., metavar="RUN_DIR", help="Run directories (from `mcpgym run`)."),
    port: int = typer.Option(0, "--port", metavar="PORT", help="Port to serve on (0: pick a free one)."),
    host: str = typer.Option(
        "127.0.0.1", "--host", metavar="HOST", help="Loopback address to bind (127.0.0.1, ::1 or localhost only)."
    ),
    open_browser: bool = typer.Option(False, "--open", help="Open the run list in the default web browser."),
    check: bool = typer.Option(
        False,
        "--check",
        help="Render every page once over HTTP, print each page's status, and exit (1 when a run cannot be "
        "shown or a page fails).",
    ),
    serve_for: float | None = typer.Option(
        None, "--serve-for", metavar="SECONDS", min=0, help="Stop after SECONDS (default: until Ctrl-C)."
    ),
) -> None:
    """A local results browser over runs: run list, comparison, condition charts, episodes.

    Serves on loopback only and prints its URL on stdout. Read-only: nothing is written into
    the run directories. Pages: the run list (agents, tasks, episodes, success with its 95%
    interval, date, fault profile; a run that cannot be read is an error row), the paired
    comparison of the selected runs (as `mcpgym compare`), each run's condition charts, and its
    episodes in report.html's trajectory viewer. Ctrl-C stops it.
    """
    from mcpgym.evaluation.report.browser import BrowserServer, ResultsBrowser, check_pages

    browser = ResultsBrowser(run_dirs)
    try:
        server = BrowserServer(browser, host=host, port=port)
    except OSError as exc:
        raise InputError(f"cannot serve on {host} port {port}: {exc.strerror or exc}") from None
    server.start()
    try:
        if check:
            _check(server, check_pages(server))
            return
        typer.echo(server.url)
        sys.stdout.flush()
        if open_browser:
            import webbrowser

            webbrowser.open(server.url)
        bad = [r for r in browser.runs if not r.ok]
        for r in bad:
            typer.echo(f"warning: {r.label} cannot be shown: {r.problem}", err=True)
        threading.Event().wait(serve_for)  # None: until Ctrl-C
    except KeyboardInterrupt:
        typer.echo("stopped", err=True)
    finally:
        server.stop()


def _check(server: BrowserServer, results: list[tuple[str, int]]) -> None:
    """Print each page's status; exit 1 when a run cannot be shown (422) or a page failed (5xx)."""
    for target, status in results:
        typer.echo(f"{status} {target}")
    bad = [r for r in server.browser.runs if not r.ok]
    for r in bad:
        typer.echo(f"error: {r.label} cannot be shown: {r.problem}", err=True)
    failed = [t for t, s in results if s >= 500]
    if failed:
        typer.echo(f"error: {len(failed)} pages failed: {', '.join(failed[:5])}", err=True)
    if bad or failed:
        raise typer.Exit(1)
    typer.echo(f"checked {len(results)} pages of {len(server.browser.runs)} runs at {server.url}")


__all__ = ["view"]
