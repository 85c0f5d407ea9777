"""``python -m mcpgym.benchmarks [--quick] [--check] [--json OUT] [--markdown OUT] [--only NAME]``.

Prints a rich table of every figure (see :mod:`benchmarks`). ``--check`` exits 1 when a
target is missed or a figure could not be measured because of an error; ``--quick`` is the
short run (under ~2 minutes on 2 cores); ``--tiny`` runs every code path with tiny counts
(what the unit test uses; its numbers mean nothing).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from mcpgym.benchmarks import FIGURES, figure_functions
from mcpgym.benchmarks.harness import Figure, Mode, Settings, machine
from mcpgym.benchmarks.report import markdown_table, rich_table
from mcpgym.benchmarks.transport import shared_servers


def _preload() -> None:
    """Import what the figures import, and load the app registry, in this thread."""
    import importlib

    for mod in (
        "mcp",
        "mcp.client.stdio",
        "mcp.client.streamable_http",
        "mcp.server.mcpserver",
        "httpx2",
        "mcpgym.benchmarks.noop_server",
        "mcpgym.evaluation.run.server_process",
        "mcpgym.evaluation.scoring.tool_catalog",
        "mcpgym.evaluation.scoring.scorer",
        "mcpgym.evaluation.records.trajectory",
        "mcpgym.server.episode",
        "mcpgym.tools.mcp_bridge",
        "mcpgym.tools.invoke",
    ):
        importlib.import_module(mod)
    # The integration figures' optional packages, when installed (openenv-core's client imports
    # gradio: compiling it in a worker thread tripped CPython 3.11's AST recursion-depth check).
    import importlib.util

    for package, mods in (
        ("gymnasium", ("mcpgym.integrations.gymnasium_env",)),
        ("openenv", ("openenv", "openenv.core.env_server.http_server", "mcpgym.integrations.openenv_env")),
    ):
        if importlib.util.find_spec(package) is not None:
            for mod in mods:
                importlib.import_module(mod)
    from mcpgym.kernel.app import load_apps

    load_apps()


def run(settings: Settings, only: list[str] | None = None, progress: Any = None) -> dict[str, Any]:
    """Measure the figures (all, or ``only``) and return the JSON document.

    Returns:
        ``{"mode", "settings", "machine", "started", "seconds", "figures": [row...],
        "errors": [{"figure", "error"}], "passed"}``; ``passed`` is True when every checked
        figure met its target and nothing failed.

    Raises:
        ValueError: for an unknown figure name in ``only``.
    """
    fns = figure_functions()
    names = list(only or FIGURES)
    unknown = [n for n in names if n not in fns]
    if unknown:
        raise ValueError(f"unknown figure(s) {', '.join(unknown)}; figures: {', '.join(FIGURES)}")
    started = time.time()
    t0 = time.perf_counter()
    errors: list[dict[str, str]] = []

    def measure(name: str) -> Figure:
        if progress is not None:
            progress(f"measuring {name}...")
        f0 = time.perf_counter()
        try:
            fig = fns[name](settings)
        except Exception as exc:  # noqa: BLE001 - one broken figure must not hide the others
            errors.append(
                {"figure": name, "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc(limit=8)}
            )
            fig = Figure(
                name=name,
                title=name,
                value=None,
                unit="",
                target=None,
                available=False,
                note=f"error: {type(exc).__name__}: {exc}"[:300],
            )
        fig.details["seconds"] = round(time.perf_counter() - f0, 2)
        return fig

    with shared_servers():
        if settings.mode == "tiny":
            # Tiny mode checks that every code path runs, not what it measures: the figures run
            # side by side (mostly waiting for child interpreters to start) to keep tests fast.
            # Imports and the app registry are loaded first: module imports racing in threads
            # trip circular imports in the SDK, and sandboxes.base.load_apps is not thread-safe.
            _preload()
            with ThreadPoolExecutor(max_workers=len(names)) as pool:
                figures = list(pool.map(measure, names))
        else:
            figures = [measure(name) for name in names]
    passed = not errors and all(f.ok is not False for f in figures)
    return {
        "mode": settings.mode,
        "settings": settings.__dict__.copy(),
        "machine": machine(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "seconds": round(time.perf_counter() - t0, 1),
        "figures": [f.to_json() for f in figures],
        "errors": errors,
        "passed": passed,
    }


def _figures(doc: dict[str, Any]) -> list[Figure]:
    fields = set(Figure.__dataclass_fields__)
    return [Figure(**{k: v for k, v in row.items() if k in fields}) for row in doc["figures"]]


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status (1: ``--check`` failed)."""
    parser = argparse.ArgumentParser(prog="python -m mcpgym.benchmarks", description=__doc__.split("\n\n")[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="shorter run (under ~2 minutes on 2 cores)")
    size.add_argument(
        "--tiny", action="store_true", help="every code path with tiny counts (tests; numbers mean nothing)"
    )
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed or a figure failed")
    parser.add_argument("--json", metavar="OUT", type=Path, help="also write the results as JSON to OUT")
    parser.add_argument("--markdown", metavar="OUT", type=Path, help="also write the table as Markdown to OUT")
    parser.add_argument(
        "--only", metavar="NAME", action="append", choices=FIGURES, help="measure only this figure (repeatable)"
    )
    args = parser.parse_args(argv)
    mode: Mode = "quick" if args.quick else "tiny" if args.tiny else "full"
    settings = Settings.for_mode(mode)

    from rich.console import Console

    console = Console(stderr=True)
    doc = run(settings, args.only, progress=lambda msg: console.print(f"[dim]{msg}[/]"))
    figures = _figures(doc)
    m = doc["machine"]
    title = (
        f"mcpgym benchmarks ({mode}, {doc['seconds']:.0f} s): {m['nproc']} cores, {m['cpu']}, "
        f"Python {m['python']}, load {m['load_average']}"
    )
    out = Console()
    if not out.is_terminal:
        out = Console(width=200)
    out.print(rich_table(figures, title))
    for err in doc["errors"]:
        console.print(f"[red]{err['figure']} failed:[/] {err['error']}", markup=True)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(markdown_table(figures) + "\n", encoding="utf-8")
    if args.check and not doc["passed"]:
        missed = [f.name for f in figures if f.ok is False] + [e["figure"] for e in doc["errors"]]
        console.print(f"[bold red]check failed:[/] {', '.join(missed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
