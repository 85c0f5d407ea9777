"""The task registry: YAML task files, suites, gold and initial states, fault seeds.

Hand-written tasks live in ``evaluation/tasks/data/*.yaml`` (each file: ``tasks: [...]``);
``data/suites.yaml`` names the task ids of the small suites (``smoke: [...]``). Suites:

* ``core``: every hand-written task, in file order (files sorted by name);
* a suite named in ``suites.yaml`` (``smoke``): those core tasks, in the listed order;
* a suite registered with :func:`register_suite`: a Python generator of :class:`Task`
  objects (procedural templates), validated like file tasks;
* a suite per app bundle that ships a tasks file (``App.tasks``, found through the
  ``mcpgym.apps`` entry points, see :mod:`mcpgym.kernel.app`): named after the app, its tasks
  in file order (:func:`bundled_suites`);
* any task file, outside every suite: :func:`load_file` (``mcpgym run --tasks FILE``).

Gold state (docs/design.md §6): the oracle's final world on the task's seed with faults off
(``ToolInvoker(world, "none")``), computed once per task and cached.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from mcpgym.evaluation.tasks.model import Task, TaskError, task_error
from mcpgym.evaluation.tasks.oracle import AskRequest, OracleOutcome, OracleRuntimeError, called_tools, execute
from mcpgym.kernel.exceptions import InputError, InvalidValue, UnknownName
from mcpgym.kernel.input_files import InputFileError, load_yaml, read_input_text, yaml_error_text
from mcpgym.kernel.shorten import short
from mcpgym.kernel.spec import ToolKind

_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader when present (about 10x faster on the task files), else PyYAML's."""

DATA_DIR = Path(__file__).resolve().parent / "data"
"""Where the hand-written task files are."""

SUITES_FILE = "suites.yaml"
CORE = "core"

_GENERATORS: dict[str, Callable[[], Iterable[Task]]] = {}
_CACHE: dict[str, list[Task]] = {}
_GOLD: dict[str, GoldRun] = {}
_INITIAL: dict[str, dict[str, Any]] = {}


class TaskLoadError(InputError, ValueError):
    """A task file or suite could not be loaded; the message names the file, the task id and
    the field."""


# -- loading ---------------------------------------------------------------------------------
def parse_task(data: Any, source: str = "<data>", index: int = 0) -> Task:
    """Build one :class:`Task` from a YAML mapping.

    Raises:
        TaskLoadError: ``<source>: task '<id>': field '<field>': <problem>``.
    """
    if not isinstance(data, dict):
        raise TaskLoadError(f"{source}: tasks[{index}]: a task must be a mapping, got {type(data).__name__}")
    if "id" not in data:
        raise TaskLoadError(f"{source}: task #{index + 1} (no id): field 'id': missing required field")
    try:
        return Task.model_validate(data)
    except ValidationError as exc:
        raise TaskLoadError(str(task_error(exc, data).with_source(source))) from None
    except TaskError as exc:  # pragma: no cover - pydantic wraps validator errors
        raise TaskLoadError(str(exc.with_source(source))) from None


def load_file(path: str | Path) -> list[Task]:
    """Load the tasks of one YAML or JSON file (``tasks: [...]`` or a bare list; JSON is read
    by the YAML parser, as a YAML 1.2 subset). Task ids must be unique within the file.

    Raises:
        TaskLoadError: naming the file (and task id, field and, at the end, ``(line N)`` of
            the field or task for a bad task; the line and column for a syntax error).
    """
    p = Path(path)
    try:
        raw = load_yaml(read_input_text(p, what="task file"))
    except InputFileError as exc:
        raise TaskLoadError(str(exc)) from None
    except yaml.YAMLError as exc:
        raise TaskLoadError(f"{p}: not valid YAML or JSON: {yaml_error_text(exc)}") from None
    items = raw.get("tasks") if isinstance(raw, dict) else raw
    if not isinstance(items, list):
        raise TaskLoadError(f"{p}: a task file holds 'tasks:' followed by a list of tasks")
    tasks = []
    for i, item in enumerate(items):
        try:
            tasks.append(parse_task(item, str(p), i))
        except TaskLoadError as exc:
            line = _line_of(p, i, str(exc))
            raise TaskLoadError(f"{exc} (line {line})" if line else str(exc)) from None
    first: dict[str, int] = {}
    for i, t in enumerate(tasks):
        if t.id in first:
            was, line = _line_of(p, first[t.id], "field 'id'"), _line_of(p, i, "field 'id'")
            raise TaskLoadError(
                f"{p}: task {t.id!r}: field 'id': duplicate id, first used by task #{first[t.id] + 1}"
                + (f" at line {was}" if was else "")
                + (f" (line {line})" if line else "")
            )
        first[t.id] = i
    return tasks


def task_field_line(path: str | Path, index: int, field: str) -> int | None:
    """The 1-based line, in the task file ``path``, of the top-level ``field`` (``oracle``,
    ``checks``...) of its ``index``-th task (0-based), else of that task; None when the file
    cannot be read or has no such task."""
    return _line_of(Path(path), index, f"field {field!r}")


_TOP_FIELD = re.compile(r"field '([A-Za-z_]+)")


def _line_of(path: Path, index: int, message: str) -> int | None:
    """The 1-based line of the top-level field a task error names (else of the task itself), in
    the file's node tree; only computed once a task failed, so loading stays one parse."""
    try:
        root = yaml.compose(read_input_text(path, what="task file"), Loader=_YAML_LOADER)
        if root is None:
            return None
        if isinstance(root, yaml.MappingNode):  # tasks: [...]
            root = next(v for k, v in root.value if k.value == "tasks")
        node = root.value[index]
    except Exception:  # noqa: BLE001 - the line is a courtesy; the error itself stands without it
        return None
    m = _TOP_FIELD.search(message)
    if m and isinstance(node, yaml.MappingNode):
        for k, _v in node.value:
            if k.value == m.group(1):
                return int(k.start_mark.line) + 1
    return int(node.start_mark.line) + 1


def _check_unique(tasks: list[Task], sources: list[str], what: str) -> None:
    seen: dict[str, str] = {}
    for t, src in zip(tasks, sources, strict=False):
        if t.id in seen:
            raise TaskLoadError(f"{src}: task {t.id!r}: field 'id': duplicate id (also in {seen[t.id]}) in {what}")
        seen[t.id] = src


def _core(data_dir: Path = DATA_DIR) -> list[Task]:
    key = f"{CORE}@{data_dir}"
    if key not in _CACHE:
        tasks: list[Task] = []
        sources: list[str] = []
        for f in sorted(data_dir.glob("*.yaml")):
            if f.name == SUITES_FILE:
                continue
            loaded = load_file(f)
            tasks += loaded
            sources += [str(f)] * len(loaded)
        _check_unique(tasks, sources, "suite 'core'")
        _CACHE[key] = tasks
    return _CACHE[key]


def _named_suites(data_dir: Path = DATA_DIR) -> dict[str, list[str]]:
    path = data_dir / SUITES_FILE
    if not path.exists():
        return {}
    try:
        raw = load_yaml(read_input_text(path, what="suites file")) or {}
    except InputFileError as exc:
        raise TaskLoadError(str(exc)) from None
    except yaml.YAMLError as exc:
        raise TaskLoadError(f"{path}: not valid YAML: {yaml_error_text(exc)}") from None
    if not isinstance(raw, dict) or not all(isinstance(v, list) for v in raw.values()):
        raise TaskLoadError(f"{path}: expected 'suite_name: [task ids]' entries")
    return {str(k): [str(x) for x in v] for k, v in raw.items()}


def register_suite(name: str, factory: Callable[[], Iterable[Task]]) -> None:
    """Register a suite built by Python code (e.g. procedural templates).

    Args:
        name: suite name (not ``core`` or a name of ``suites.yaml``).
        factory: returns the suite's tasks; called once, on first use, and cached.

    Raises:
        ValueError: when the name is taken.
    """
    if name == CORE or name in _named_suites() or name in _GENERATORS:
        raise InvalidValue(f"suite {name!r} already exists")
    _GENERATORS[name] = factory


def unregister_suite(name: str) -> None:
    """Remove a suite registered with :func:`register_suite` (and its cached tasks)."""
    _GENERATORS.pop(name, None)
    _CACHE.pop(name, None)


def bundled_suites() -> dict[str, Path]:
    """App name -> tasks file of every registered app bundle that ships one (``App.tasks``),
    in catalog order. Each is a suite named after its app.

    Raises:
        TaskLoadError: when a bundle's tasks file does not exist, or its app's name is also the
            name of another suite.
    """
    from mcpgym.kernel.app import app_names, get_app

    out: dict[str, Path] = {}
    taken = {CORE, *_named_suites(), *_GENERATORS}
    for name in app_names():
        path = get_app(name).tasks_path()
        if path is None:
            continue
        if name in taken:
            raise TaskLoadError(
                f"app {name!r}: its bundled tasks ({path}) would be suite {name!r}, "
                "which is already a suite; rename the app"
            )
        if not path.is_file():
            raise TaskLoadError(
                f"app {name!r}: its tasks file {path} does not exist (App.tasks = {get_app(name).tasks!r})"
            )
        out[name] = path
    return out


def suite_names() -> list[str]:
    """Every suite: those of ``suites.yaml`` (``smoke``), ``core``, registered ones, then one
    per app bundle with a tasks file (:func:`bundled_suites`)."""
    return [*_named_suites(), CORE, *_GENERATORS, *bundled_suites()]


def load_tasks(suite: str = CORE) -> list[Task]:
    """Return the tasks of ``suite``.

    Raises:
        KeyError: for an unknown suite, naming the known ones.
        TaskLoadError: for a malformed task file, an unknown task id in ``suites.yaml``, a
            generator that yields something other than a :class:`Task`, or a duplicate id.
    """
    if suite == CORE:
        return list(_core())
    named = _named_suites()
    if suite in named:
        by_id = {t.id: t for t in _core()}
        out = []
        for tid in named[suite]:
            if tid not in by_id:
                raise TaskLoadError(f"{DATA_DIR / SUITES_FILE}: suite {suite!r}: unknown task id {tid!r}")
            out.append(by_id[tid])
        return out
    if suite in _GENERATORS:
        if suite not in _CACHE:
            tasks = list(_GENERATORS[suite]())
            for i, t in enumerate(tasks):
                if not isinstance(t, Task):
                    raise TaskLoadError(f"suite {suite!r}: item {i} is a {type(t).__name__}, not a Task")
            _check_unique(tasks, [f"suite {suite!r}"] * len(tasks), f"suite {suite!r}")
            _CACHE[suite] = tasks
        return list(_CACHE[suite])
    bundled = bundled_suites()
    if suite in bundled:
        key = f"bundle:{suite}@{bundled[suite]}"
        if key not in _CACHE:
            tasks = load_file(bundled[suite])
            for t in tasks:
                if suite not in t.apps:
                    raise TaskLoadError(
                        f"{bundled[suite]}: task {t.id!r}: field 'apps': a task bundled with app "
                        f"{suite!r} must list it (apps: {', '.join(t.apps)})"
                    )
            _CACHE[key] = tasks
        return list(_CACHE[key])
    raise UnknownName(f"unknown suite {short(suite)}; known suites: {', '.join(suite_names())}")


def get_task(task_id: str) -> Task:
    """Return the task ``task_id`` from ``core`` or a registered suite.

    Raises:
        KeyError: naming the closest known ids when there is no such task.
    """
    for t in _core():
        if t.id == task_id:
            return t
    for name in [*_GENERATORS, *bundled_suites()]:
        for t in load_tasks(name):
            if t.id == task_id:
                return t
    import difflib

    close = difflib.get_close_matches(task_id, [t.id for t in _core()], n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise UnknownName(f"unknown task {short(task_id)}{hint}")


# -- states ----------------------------------------------------------------------------------
def _task_key(task: Task) -> str:
    text = json.dumps(task.model_dump(mode="json", by_alias=True), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class GoldRun:
    """The oracle's run on a fresh world with faults off.

    Attributes:
        snapshot: the final ``World.snapshot()`` (the gold state).
        state_hash: ``World.state_hash()`` of that world.
        outcome: how the plan ended (``answer`` or ``refuse``) and its message.
        calls: the tools called, in order.
    """

    snapshot: dict[str, Any]
    state_hash: str
    outcome: OracleOutcome
    calls: list[str]


def gold_run(task: Task) -> GoldRun:
    """Run ``task``'s oracle on ``World(task.seed, task.apps)`` (made from the process's
    template of that seed and app set) through ``ToolInvoker(world, "none")`` (cached per task
    content).

    Raises:
        OracleRuntimeError: when a call or expression of the oracle fails, or a feasible
            task's oracle ends with ``refuse`` (an infeasible one with ``answer``): the task is
            broken for its seed.
    """
    key = _task_key(task)
    if key not in _GOLD:
        from mcpgym.kernel.world import World
        from mcpgym.tools.invoke import ToolInvoker

        world = World.from_template(task.seed, task.apps)
        inv = ToolInvoker(world, "none")
        gen = execute(task, strict=True)
        try:
            req = next(gen)
            while True:
                if isinstance(req, AskRequest):  # the user answers from the task's profile
                    req = gen.send(task.user.answer(req.about) if task.user is not None else None)
                else:
                    req = gen.send(inv.call(req.tool, req.args))
        except StopIteration as stop:
            outcome: OracleOutcome = stop.value
        want = "answer" if task.feasible else "refuse"
        if outcome.kind != want:
            raise OracleRuntimeError(
                f"task {task.id!r}: the oracle ended with {outcome.kind!r} at {outcome.path} on "
                f"seed {task.seed}, but a {'feasible' if task.feasible else 'infeasible'} task "
                f"must end with {want!r}"
            )
        _GOLD[key] = GoldRun(
            snapshot=world.snapshot(), state_hash=world.state_hash(), outcome=outcome, calls=[c.tool for c in inv.calls]
        )
    return _GOLD[key]


def gold_snapshot(task: Task) -> dict[str, Any]:
    """The gold state: ``World.snapshot()`` after the oracle (faults off). A fresh copy.

    Raises:
        OracleRuntimeError: see :func:`gold_run`.
    """
    return copy.deepcopy(gold_run(task).snapshot)


def initial_snapshot(task: Task) -> dict[str, Any]:
    """``World(task.seed, task.apps).snapshot()`` before any call. A fresh copy."""
    key = f"{task.seed}:{','.join(task.apps)}"
    if key not in _INITIAL:
        from mcpgym.kernel.world import template

        _INITIAL[key] = template(task.seed, task.apps).snapshot
    return copy.deepcopy(_INITIAL[key])


def fault_seed_for(task: Task, trial: int) -> int:
    """The fault seed of ``trial`` (0-based) of ``task``: ``stable_hash(task.seed, trial) % 2**31``.

    The world seed fixes the data, the fault seed the weather; trials vary only the latter.
    """
    from mcpgym.kernel.rng import stable_hash

    return stable_hash(task.seed, trial) % 2**31


def oracle_calls(task: Task) -> list[str]:
    """The tools the oracle itself may call (every branch, loop and fallback)."""
    return called_tools(task)


def oracle_tools(task: Task) -> list[str]:
    """The tool set of the ``--tools task`` mode: what a good agent needs for this task.

    That is :func:`oracle_calls` plus, from the task's apps, the declared alternatives and
    remedies of those tools, declared or derived from roles (so every injected fault keeps its cure) and every read tool
    sharing a resource family with a write's resources or preconditions (so writes can be
    pre-checked and read back). Sorted in catalog order.
    """
    from mcpgym.kernel.app import get_app
    from mcpgym.kernel.spec import role_remedies

    specs: dict[str, Any] = {}
    for app in task.apps:
        specs.update(get_app(app).tools)
    want: set[str] = set()
    families: set[str] = set()
    for name in oracle_calls(task):
        spec = specs[name]
        group = [name, *(a for a in spec.alternatives if a in specs)]
        for member in group:
            mspec = specs[member]
            want.add(member)
            for cures in role_remedies(mspec, specs.values()).values():
                want.update(c for c in cures if c in specs)
            if mspec.kind == ToolKind.WRITE:
                families.update(mspec.resources)
                families.update(mspec.preconditions)
    want.update(n for n, s in specs.items() if s.kind == ToolKind.READ and families & set(s.resources))
    return [n for n in specs if n in want]


def clear_caches() -> None:
    """Forget loaded tasks and computed states (for tests that edit task files)."""
    _CACHE.clear()
    _GOLD.clear()
    _INITIAL.clear()


__all__ = [
    "DATA_DIR",
    "GoldRun",
    "TaskLoadError",
    "bundled_suites",
    "clear_caches",
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
    "unregister_suite",
]
