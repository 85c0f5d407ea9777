"""Static checks: app and tool metadata (names, kinds, resources, remedies, schemas, docs; tool
descriptions and schema texts in plain text, :func:`check_plain_text`) and a lint of the app's source for nondeterminism (wall clock, global random, uuid, hash())."""

from __future__ import annotations

import ast
import inspect
import json
import re
from pathlib import Path
from typing import Any

from mcpgym.kernel import ast_parse
from mcpgym.kernel.app import App, AppState, app_names, get_app
from mcpgym.kernel.errors import ERROR_CODES
from mcpgym.kernel.spec import APP_TOOL_KINDS, ROLES, TOOL_NAME_RE, ToolKind
from mcpgym.tools.conformance.args import input_schema
from mcpgym.tools.conformance.common import ROOT, app_cls

_META: list[Any] = []


def _meta_validator() -> Any:
    """A reusable validator of JSON schemas against the draft-07 meta-schema (None without
    ``jsonschema``). Draft 07 rather than 2020-12: it checks the same keyword shapes that
    pydantic emits and is about 20 times faster to run."""
    if not _META:
        try:
            from jsonschema import Draft7Validator

            _META.append(Draft7Validator(Draft7Validator.META_SCHEMA))
        except ImportError:  # pragma: no cover - jsonschema comes with the mcp SDK
            _META.append(None)
    return _META[0]


def _schema_problems(schema: Any, what: str) -> list[str]:
    problems = []
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return [f"{what} is not a JSON-schema object (type must be 'object')"]
    if not isinstance(schema.get("properties", {}), dict):
        problems.append(f"{what}: 'properties' must be an object")
    meta = _meta_validator()
    if meta is not None:
        for err in list(meta.iter_errors(schema))[:3]:
            where = "/".join(str(p) for p in err.absolute_path) or "(root)"
            problems.append(f"{what} is not a valid JSON schema at {where}: {err.message[:200]}")
    try:
        json.dumps(schema, allow_nan=False)
    except (TypeError, ValueError) as exc:
        problems.append(f"{what} is not JSON-serialisable: {exc}")
    return problems


MARKUP: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("reStructuredText literal ``...``", re.compile(r"``")),
    ("reStructuredText role :role:`...`", re.compile(r":[a-z][\w-]*:`")),
    ("reStructuredText link `...`_", re.compile(r"`_\b|`__")),
    ("reStructuredText directive .. name::", re.compile(r"(^|\s)\.\. [\w-]+::")),
    ("backtick code `...`", re.compile(r"`")),
    ("bold **...**", re.compile(r"\*\*\S")),
)
"""Markup a model would read verbatim in a tool description: (what it is, pattern)."""


def markup_problems(text: str, where: str) -> list[str]:
    """Markup left in text a model reads (a tool description, a schema description or title).

    Tool descriptions and schemas are sent to models as plain text (MCP ``tools/list``), so
    reStructuredText or Markdown markup (double backticks, roles, links, directives, backticks,
    bold) reaches the model as noise. Returns one problem per kind found, naming ``where`` and
    quoting the text around the first occurrence.
    """
    problems = []
    for what, pattern in MARKUP:
        m = pattern.search(text)
        if m:
            around = " ".join(text[max(0, m.start() - 30) : m.end() + 30].split())
            problems.append(f"{where}: {what} in text a model reads (write plain text): ...{around}...")
    return problems


def _schema_texts(schema: Any, path: str = "") -> list[tuple[str, str]]:
    """(JSON path, text) of every ``description`` and ``title`` string in a JSON schema."""
    out: list[tuple[str, str]] = []
    if isinstance(schema, dict):
        for key, value in schema.items():
            here = f"{path}/{key}"
            if key in ("description", "title") and isinstance(value, str):
                out.append((here, value))
            else:
                out += _schema_texts(value, here)
    elif isinstance(schema, list):
        for i, value in enumerate(schema):
            out += _schema_texts(value, f"{path}/{i}")
    return out


def check_plain_text(app: str | type[App]) -> list[str]:
    """Every tool's description and every description/title in its input and output schemas
    is plain text: no markup of :data:`MARKUP` (see :func:`markup_problems`)."""
    cls = app_cls(app)
    problems: list[str] = []
    for tname, spec in sorted(cls.tools.items()):
        where = f"{cls.name}.{tname}"
        problems += markup_problems(spec.description or "", f"{where} description")
        try:
            schemas = (("input", spec.input_schema()), ("output", spec.output_schema()))
        except Exception:  # noqa: BLE001 - check_metadata reports schemas that cannot be built
            continue
        for kind, schema in schemas:
            for path, text in _schema_texts(schema):
                problems += markup_problems(text, f"{where} {kind} schema {path}")
    return problems


def check_metadata(app: str | type[App]) -> list[str]:
    """Check the app class (title, state, the bundle's ``version`` and ``tasks`` file) and every
    tool spec (names, kinds, roles, resources, remedies, schemas, docs)."""
    cls = app_cls(app)
    problems: list[str] = []
    name = cls.name
    if not cls.title:
        problems.append(f"{name}: the app class needs a `title`")
    if not isinstance(cls.version, str):
        problems.append(f"{name}: `version` must be a string such as '1.0'")
    if cls.tasks is not None:
        try:
            path = cls.tasks_path()
        except (TypeError, OSError) as exc:
            path, problems = None, [*problems, f"{name}: cannot locate its tasks file {cls.tasks!r}: {exc}"]
        if path is not None and not path.is_file():
            problems.append(f"{name}: its tasks file {path} (App.tasks = {cls.tasks!r}) does not exist")
    if not (inspect.isclass(cls.State) and issubclass(cls.State, AppState)):
        problems.append(f"{name}: State must subclass mcpgym.kernel.app.AppState")
    if not cls.tools:
        problems.append(f"{name}: the app has no tools")
    all_tools = {t for a in app_names() for t in get_app(a).tools}
    all_tools |= set(cls.tools)
    for tname, spec in sorted(cls.tools.items()):
        where = f"{name}.{tname}"
        if not TOOL_NAME_RE.match(tname):
            problems.append(f"{where}: name does not match {TOOL_NAME_RE.pattern}")
        if not tname.startswith(name + "_"):
            problems.append(f"{where}: name must start with '{name}_'")
        if spec.kind not in APP_TOOL_KINDS:
            problems.append(f"{where}: kind {spec.kind!r} is not read, write or auth")
        if spec.role is not None and spec.role not in ROLES:
            problems.append(f"{where}: role {spec.role!r} is not one of {', '.join(ROLES)}")
        if spec.destructive and spec.kind != ToolKind.WRITE:
            problems.append(f"{where}: only a write tool can be destructive")
        if not spec.resources or not all(isinstance(r, str) and r.strip() for r in spec.resources):
            problems.append(f"{where}: resources must be non-empty strings")
        for family in (*spec.resources, *spec.preconditions):
            if isinstance(family, str) and "." not in family:
                problems.append(f"{where}: resource family {family!r} should look like '<area>.<thing>'")
        for code, cures in spec.remedies.items():
            if code not in ERROR_CODES:
                problems.append(f"{where}: remedy for unknown error code {code!r}")
            for cure in cures:
                if cure not in all_tools:
                    problems.append(f"{where}: remedy {cure!r} for {code} is not a registered tool")
        for alt in spec.alternatives:
            if alt == tname:
                problems.append(f"{where}: lists itself as an alternative")
            elif alt not in all_tools:
                problems.append(f"{where}: alternative {alt!r} is not a registered tool")
        params = set(input_schema(spec).get("properties", {}))
        for arg in spec.id_args:
            if arg not in params:
                problems.append(f"{where}: id_args names {arg!r}, which is not a parameter")
        desc = (spec.description or "").strip()
        if not desc or desc == tname.replace("_", " "):
            problems.append(f"{where}: needs a docstring (its first paragraph is the description)")
        elif len(desc) < 15:
            problems.append(f"{where}: description {desc!r} is too short to guide an agent")
        try:
            problems += _schema_problems(spec.input_schema(), f"{where} input schema")
            problems += _schema_problems(spec.output_schema(), f"{where} output schema")
        except Exception as exc:  # pydantic could not build a schema
            problems.append(f"{where}: cannot build its schemas: {type(exc).__name__}: {exc}")
    return problems + check_plain_text(cls)


# -- source lint ------------------------------------------------------------------------------
_WALL_CLOCK = {
    "time": {"time", "time_ns", "monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns", "localtime", "ctime"},
    "datetime": {"now", "utcnow", "today"},
    "date": {"today"},
    "uuid": {"uuid1", "uuid4"},
    "os": {"urandom", "getrandom"},
}


def source_files(app: str | type[App]) -> list[Path]:
    """The source files of an app: its package directory, or its single module."""
    cls = app_cls(app)
    try:
        path = Path(inspect.getfile(cls)).resolve()
    except (TypeError, OSError):
        return []
    if (path.parent / "__init__.py").exists() and path.parent.name not in ("sandboxes",):
        return sorted(path.parent.glob("*.py"))
    return [path]


def lint_source(text: str, filename: str = "<source>") -> list[str]:
    """Find nondeterminism in Python source: wall clock, the global ``random`` module's functions,
    ``uuid1/uuid4``, ``os.urandom``, ``secrets`` and the builtin ``hash()``.

    Returns:
        ``"file:line: what"`` strings.
    """
    try:
        tree = ast_parse.parse(text, filename=filename)  # one thread at a time (CPython 3.11)
    except SyntaxError as exc:
        return [f"{filename}:{exc.lineno}: syntax error: {exc.msg}"]
    found: list[str] = []
    modules: dict[str, str] = {}  # local name -> module
    direct: dict[str, str] = {}  # local name -> "module.func" for from-imports
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                modules[a.asname or a.name.split(".")[0]] = a.name
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                local = a.asname or a.name
                if node.module in ("datetime",) and a.name in ("datetime", "date"):
                    modules[local] = a.name
                else:
                    direct[local] = f"{node.module}.{a.name}"
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        bad = None
        if isinstance(f, ast.Name):
            if f.id == "hash" and "hash" not in direct:
                bad = "builtin hash() (salted per process)"
            target = direct.get(f.id, "")
            mod, _, func = target.rpartition(".")
            if mod == "random" and func not in ("Random",):
                bad = f"global random.{func}"
            elif mod in _WALL_CLOCK and func in _WALL_CLOCK[mod] or mod == "secrets":
                bad = f"{target}()"
        elif isinstance(f, ast.Attribute):
            base = f.value
            owner = None
            if isinstance(base, ast.Name):
                owner = modules.get(base.id)
            elif (
                isinstance(base, ast.Attribute)
                and isinstance(base.value, ast.Name)
                and modules.get(base.value.id) == "datetime"
                and base.attr in ("datetime", "date")
            ):
                owner = base.attr
            if owner == "random" and f.attr not in ("Random",):
                bad = f"global random.{f.attr}()"
            elif owner == "secrets":
                bad = f"secrets.{f.attr}()"
            elif owner in _WALL_CLOCK and f.attr in _WALL_CLOCK[owner]:
                bad = f"{owner}.{f.attr}()"
        if bad:
            found.append(f"{filename}:{node.lineno}: {bad}: use the app's stream, self.new_id or self.now")
    return found


def check_source(app: str | type[App]) -> list[str]:
    """Lint every source file of the app with :func:`lint_source`."""
    problems = []
    for path in source_files(app):
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            problems.append(f"{path}: cannot read: {exc}")
            continue
        try:
            shown = str(path.relative_to(ROOT))
        except ValueError:
            shown = str(path)
        problems += lint_source(text, shown)
    return problems
