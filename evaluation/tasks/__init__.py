"""Tasks: the task model, the oracle language, the registry of suites and gold states.

Public API (see :mod:`mcpgym.evaluation.tasks.registry`, :mod:`mcpgym.evaluation.tasks.model`,
:mod:`mcpgym.evaluation.tasks.oracle`, :mod:`mcpgym.evaluation.tasks.expr` and docs/tasks.md)::

    load_tasks(suite="core") -> list[Task]      suite_names() -> list[str]
    load_file(path) -> list[Task]               bundled_suites() -> {app: tasks file}
    get_task(task_id) -> Task                   gold_snapshot(task) -> dict
    initial_snapshot(task) -> dict              oracle_tools(task) -> list[str]
    fault_seed_for(task, trial) -> int          register_suite(name, factory) / unregister_suite(name)
    template_task(name, seed) -> Task           template_tasks(names=None, seeds=None) -> list[Task]

Importing this package registers the procedural suite ``full`` (core + template instances,
:mod:`mcpgym.evaluation.tasks.templates`).
"""

from mcpgym.evaluation.tasks.model import KNOWN_TAGS, Step, Task, TaskError
from mcpgym.evaluation.tasks.oracle import CallRequest, OracleOutcome, OracleRuntimeError, execute
from mcpgym.evaluation.tasks.registry import (
    GoldRun,
    TaskLoadError,
    bundled_suites,
    clear_caches,
    fault_seed_for,
    get_task,
    gold_run,
    gold_snapshot,
    initial_snapshot,
    load_file,
    load_tasks,
    oracle_calls,
    oracle_tools,
    parse_task,
    register_suite,
    suite_names,
    task_field_line,
    unregister_suite,
)
from mcpgym.evaluation.tasks.templates import template_task, template_tasks  # registers the suite "full"

__all__ = [
    "CallRequest",
    "GoldRun",
    "KNOWN_TAGS",
    "OracleOutcome",
    "OracleRuntimeError",
    "Step",
    "Task",
    "TaskError",
    "TaskLoadError",
    "bundled_suites",
    "clear_caches",
    "execute",
    "fault_seed_for",
    "get_task",
    "gold_run",
    "gold_snapshot",
    "initial_snapshot",
    "load_file",
    "load_tasks",
    "oracle_calls",
    "oracle_tools",
    "parse_task",
    "register_suite",
    "suite_names",
    "task_field_line",
    "template_task",
    "template_tasks",
    "unregister_suite",
]
