"""``mcpgym tasks``: a thin adapter over the task registry (:mod:`mcpgym.evaluation.tasks`)
and :func:`mcpgym.evaluation.report.listings.print_tasks`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from mcpgym.evaluation.cli.common import console
from mcpgym.evaluation.run.config import CORE_DEFAULT_LIMIT
from mcpgym.evaluation.run.launch import load_task_files
from mcpgym.kernel.exceptions import InputError, MCPGymError
from mcpgym.kernel.shorten import short

if TYPE_CHECKING:
    from mcpgym.evaluation.tasks import Task


def tasks(
    suite: str | None = typer.Option(
        None,
        metavar="NAME",
        help=f"List only this suite (see the error of an unknown name for the list). Without it: core and the app bundles' tasks, which is not what a bare `mcpgym run` runs (core while it has at most {CORE_DEFAULT_LIMIT} tasks, else smoke).",
    ),
    task_file: list[Path] | None = typer.Option(
        None, "--tasks", metavar="FILE", help="List the tasks of this YAML/JSON task file (repeatable)."
    ),
    as_json: bool = typer.Option(
        False,
        "--json",
        help="Print a JSON list of {id, source, apps, level, tags, feasible, oracle_apps, oracle_calls, needs_user}.",
    ),
) -> None:
    """List tasks: the core suite and the app bundles' own, one suite, or a task file's.

    By default the built-in ``core`` suite and every app bundle's own tasks (source: the
    suite, or the file); ``--suite S`` one suite; ``--tasks FILE`` a file's. JSON rows also
    carry ``oracle_apps`` (the apps whose tools the oracle calls), ``oracle_calls`` (the calls
    of its gold run; null for the generated ``full`` suite) and ``needs_user`` (the oracle asks
    the user)."""
    from mcpgym.evaluation import tasks as registry

    groups: list[tuple[str, list[Task]]] = []
    if task_file:
        if suite:
            raise InputError("--tasks FILE and --suite are exclusive: give one")
        groups = [(str(f), load_task_files([str(f)])) for f in task_file]
    else:
        names = registry.suite_names()
        if suite is not None and suite not in names:
            raise InputError(f"unknown suite {short(suite)}; suites: {', '.join(names)}")
        picked = [suite] if suite is not None else ["core", *registry.bundled_suites()]
        try:
            groups = [(name, registry.load_tasks(name)) for name in picked]
        except MCPGymError:
            raise
        except (KeyError, ValueError) as exc:  # a KeyError's message without the quotes str() adds
            raise InputError(exc.args[0] if exc.args else str(exc)) from None
    from mcpgym.evaluation.tasks.model import AskStep
    from mcpgym.evaluation.tasks.oracle import iter_steps
    from mcpgym.kernel.app import load_apps

    owner = {name: app for app, cls in load_apps().items() for name in cls.tools}

    def gold_calls(source: str, index: int, t: Any) -> int | None:
        """Calls of the task's gold run; exits naming the file, task and line when its oracle fails."""
        if source == "full":
            return None
        try:
            return len(registry.gold_run(t).calls)
        except registry.OracleRuntimeError as exc:
            line = registry.task_field_line(source, index, "oracle") if task_file else None
            raise InputError(f"{source}: {exc}" + (f" (line {line})" if line else "")) from None

    rows = [
        {
            "id": t.id,
            "source": source,
            "apps": list(t.apps),
            "level": t.level,
            "tags": list(t.tags),
            "feasible": t.feasible,
            "oracle_apps": sorted({owner.get(n, "?") for n in registry.oracle_calls(t)}),
            "oracle_calls": gold_calls(source, i, t),
            "needs_user": any(isinstance(s, AskStep) for s in iter_steps(t.oracle)),
        }
        for source, items in groups
        for i, t in enumerate(items)
    ]
    if as_json:
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return
    from mcpgym.evaluation.report.listings import print_tasks

    for source, items in groups:
        print_tasks(console(), source, [r for r in rows if r["source"] == source][: len(items)])


__all__ = ["tasks"]
