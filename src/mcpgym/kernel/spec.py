"""The ``@tool`` decorator and the tool specification it records.

A sandbox operation is a method of an :class:`mcpgym.kernel.app.App` subclass decorated with
:func:`tool`. The decorator reads the signature (type hints become the input schema, the
return annotation, a pydantic model, becomes the output schema) and records the metadata the
scorer needs: kind, resource families, preconditions, remedies and alternatives, and the
declarations the generic layers derive their behaviour from instead of tool names: a *role*
(:data:`ROLES`), ``destructive`` and ``never_faulted``.

This module does not import the MCP SDK; :mod:`mcpgym.tools.mcp_bridge` maps specs onto MCP types.
"""

from __future__ import annotations

import copy
import inspect
import re
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints, ValidationError, create_model

from mcpgym.kernel.errors import ERROR_CODES, ErrorCode, ToolError


class ToolKind(StrEnum):
    """What a tool does to the world, as the scorer sees it (docs/design.md §7, "Terms").

    The closed set of tool kinds, defined here once. An app's tool declares one of
    :data:`APP_TOOL_KINDS` on ``@tool``; the other two exist for tools known only by name
    (:func:`mcpgym.evaluation.scoring.tool_catalog.classify_tool`): ``handoff`` (the agent hands the
    conversation to a human or another agent, e.g. tau-bench's ``transfer_to_human_agents``;
    no write) and ``unknown`` (the name gives no strong evidence; left out of verification and
    counted in the scorability summary). ``end`` is a call by which the agent ends its episode
    (ToolBench's ``Finish``, ``submit``, ``final_answer``).
    """

    READ = "read"
    WRITE = "write"
    AUTH = "auth"
    HANDOFF = "handoff"
    END = "end"
    UNKNOWN = "unknown"


APP_TOOL_KINDS: tuple[ToolKind, ...] = (ToolKind.READ, ToolKind.WRITE, ToolKind.AUTH)
"""The kinds an app's ``@tool`` may declare."""
ToolRole = Literal["wait", "reauth", "grant"]
ROLES: tuple[str, ...] = ("wait", "reauth", "grant")
"""Roles a tool may declare on ``@tool(role=...)``; the fault layer, the scorer and the
scripted agents find these tools by role, never by name:

``wait``
    Waits out a rate limit: one required integer parameter, virtual seconds to wait; it moves
    the virtual clock by exactly that (no write tick). Cures ``rate_limited``; never faulted.
``reauth``
    Re-authenticates: no required parameters; a success clears every pending auth challenge
    of the episode. Cures ``auth_required``; never faulted.
``grant``
    Grants a privilege: one required string parameter, the privilege named in a
    ``permission_denied`` error's ``details.privilege``. It may be faulted like any tool.
"""
ROLE_REMEDIES: dict[str, dict[str, str]] = {
    "read": {"rate_limited": "wait"},
    "write": {"rate_limited": "wait", "auth_required": "reauth"},
    "auth": {},
}
"""Tool kind -> error code -> the role whose tools cure it for every tool of that kind, on top
of its declared remedies (see :func:`role_remedies`)."""
TOOL_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_STRING = 10_000
"""Longest string any tool argument accepts (characters)."""

_SPEC_ATTR = "__mcpgym_tool__"


@dataclass
class ToolSpec:
    """Everything mcpgym knows about one tool.

    Attributes:
        name: ``<app>_<verb>_<noun>``, matching ``^[a-zA-Z0-9_-]{1,64}$``.
        app: the app that owns it (set when the app is registered).
        kind: ``read`` | ``write`` (mutates state) | ``auth`` (obtains a permission or token).
        resources: resource families read or written (``shop.cart``...).
        preconditions: families whose state decides whether a write is valid.
        remedies: error code -> tools that cure it.
        alternatives: tools that reach the same goal another way.
        description: from the docstring's first paragraph.
        id_args: argument names that identify a resource (default: those ending in ``_id``).
        role: one of :data:`ROLES`, or None.
        destructive: a write that destroys or undoes something (delete, cancel, sell...):
            declared, never guessed from the name; it sets the MCP ``destructiveHint``.
        never_faulted: fault injection skips this tool (implied by the roles ``wait`` and
            ``reauth``, so every injected fault keeps a cure); see :attr:`fault_exempt`.
        input_model: pydantic model validating the arguments.
        output_model: pydantic model of the structured result.
        func: the unbound method.
        time_dependent: None, or how the judge must compare a state this write leaves when
            its effect really depends on the virtual time (a market order filled only in
            trading hours): the conformance clock-shift check then skips the tool, and the
            text is shown in the catalog for task authors.
        user_arguments: argument name -> ``confirm`` | ``choose`` | ``provide`` for the
            arguments only the user may settle (see :mod:`mcpgym.kernel.user`).
        user_check: name of the app method that, given the validated arguments, returns the
            :class:`mcpgym.kernel.user.UserRequest` the call would raise (or None), without
            changing anything; the server calls it to elicit before the call.
    """

    name: str
    kind: ToolKind
    resources: tuple[str, ...]
    preconditions: tuple[str, ...]
    remedies: dict[str, tuple[str, ...]]
    alternatives: tuple[str, ...]
    description: str
    id_args: tuple[str, ...]
    input_model: type[BaseModel]
    output_model: type[BaseModel]
    func: Callable[..., Any]
    app: str = ""
    params: tuple[str, ...] = field(default_factory=tuple)
    role: str | None = None
    destructive: bool = False
    never_faulted: bool = False
    time_dependent: str | None = None
    user_arguments: dict[str, str] = field(default_factory=dict)
    user_check: str | None = None
    _schemas: dict[str, dict[str, Any]] = field(default_factory=dict, init=False, repr=False, compare=False)
    """Generated JSON schemas by kind (pydantic regenerates them on every call, slowly)."""

    @property
    def read_only(self) -> bool:
        """True for ``read`` tools."""
        return self.kind == ToolKind.READ

    @property
    def fault_exempt(self) -> bool:
        """True when fault injection never hits this tool: declared ``never_faulted``, or a
        ``wait`` / ``reauth`` tool (a cure must always work)."""
        return self.never_faulted or self.role in ("wait", "reauth")

    def input_schema(self) -> dict[str, Any]:
        """JSON schema of the arguments (an object schema); a fresh copy on every call."""
        return copy.deepcopy(self.shared_input_schema())

    def shared_input_schema(self) -> dict[str, Any]:
        """JSON schema of the arguments, generated once and shared by every caller (every
        episode's tool listing): read-only, use :meth:`input_schema` for a copy to change."""
        schema = self._schemas.get("input")
        if schema is None:
            schema = self.input_model.model_json_schema()
            schema.pop("title", None)
            self._schemas["input"] = schema
        return schema

    def output_schema(self) -> dict[str, Any]:
        """JSON schema of the structured result (an object schema); a fresh copy on every call."""
        schema = self._schemas.get("output")
        if schema is None:
            schema = self._schemas["output"] = self.output_model.model_json_schema()
        return copy.deepcopy(schema)

    def catalog_entry(self, peers: Iterable[ToolSpec] | None = None) -> dict[str, Any]:
        """The catalog row of docs/design.md §3 for this tool.

        Args:
            peers: the tools this one is served with (an episode's, or every registered
                tool); its remedies then include the role-derived ones (:func:`role_remedies`).
                None: the declared remedies only.
        """
        remedies = self.remedies if peers is None else role_remedies(self, peers)
        return {
            "name": self.name,
            "app": self.app,
            "kind": self.kind,
            "role": self.role,
            "destructive": self.destructive,
            "never_faulted": self.fault_exempt,
            "resources": list(self.resources),
            "preconditions": list(self.preconditions),
            "remedies": {k: list(v) for k, v in remedies.items()},
            "alternatives": list(self.alternatives),
            "id_args": list(self.id_args),
            "description": self.description,
            "input_schema": self.input_schema(),
            **({"time_dependent": self.time_dependent} if self.time_dependent else {}),
            **({"user_arguments": dict(self.user_arguments)} if self.user_arguments else {}),
        }

    def validate_arguments(self, arguments: Any) -> dict[str, Any]:
        """Validate raw JSON ``arguments`` strictly against the advertised input schema and
        return keyword arguments for the method.

        Strict: no coercion of strings to numbers, booleans to integers or numbers to strings;
        the only conversion is an integral float (``2.0``) for an integer field, since JSON
        has one number type. The advertised schema (:meth:`input_schema`) is the contract.

        Raises:
            ToolError: ``invalid_argument`` with ``field`` set to the first offending field;
                the message names each field and, for a type error, the expected and the
                received JSON type (``quantity: expected integer, got string``).
        """
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "arguments must be a JSON object", field=None)
        try:
            model = self.input_model.__pydantic_validator__.validate_python(arguments)  # = model_validate
        except ValidationError as exc:
            errors = exc.errors(include_url=False)
            first = errors[0]
            loc = ".".join(str(p) for p in first.get("loc", ())) or None
            parts = []
            for err in errors[:5]:
                where = ".".join(str(p) for p in err.get("loc", ())) or "(arguments)"
                parts.append(f"{where}: {_error_text(err)}")
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT,
                f"invalid arguments for {self.name}: " + "; ".join(parts),
                field=loc,
                details={
                    "errors": [
                        {"field": ".".join(str(p) for p in e.get("loc", ())), "type": e.get("type")}
                        for e in errors[:10]
                    ]
                },
            ) from None
        # The model's fields are exactly ``self.params`` (extra="forbid"), in the same order;
        # its __dict__ holds them, and copying it is cheaper than a getattr per field.
        return dict(model.__dict__)


_EXPECTED = {
    "int_type": "integer",
    "int_from_float": "integer",
    "float_type": "number",
    "string_type": "string",
    "bool_type": "boolean",
    "list_type": "array",
    "dict_type": "object",
    "none_required": "null",
}
"""pydantic error type -> the JSON schema type it stands for (strict mode: only type errors)."""


def json_type_name(value: Any) -> str:
    """The JSON type of a Python value as parsed from JSON: ``null``, ``boolean``, ``integer``,
    ``number``, ``string``, ``array``, ``object`` (``a <type name>`` for anything else)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return f"a {type(value).__name__}"


def _error_text(err: Any) -> str:
    """One pydantic error as ``expected <JSON type>, got <JSON type>`` for a type error, else its message."""
    kind = err.get("type", "")
    got = json_type_name(err.get("input"))
    expected = _EXPECTED.get(kind)
    if expected is not None:
        return f"expected {expected}, got {got}"
    if kind in ("literal_error", "enum"):
        options = (err.get("ctx") or {}).get("expected", "")
        shown = f" {err['input']!r}"[:60] if isinstance(err.get("input"), str) else ""
        return f"expected one of {options}, got {got}{shown}"
    return str(err.get("msg"))


def _integral_float(value: Any) -> Any:
    """``2.0`` -> ``2`` (JSON has one number type, so an integral float is an integer); any
    other value unchanged, for the strict ``int`` validator to judge."""
    if type(value) is float and value.is_integer():
        return int(value)
    return value


def _limit_strings(annotation: Any) -> Any:
    """Add the :data:`MAX_STRING` length limit to every ``str`` in an argument annotation (also
    inside ``Annotated``, ``list``, ``dict`` and ``Optional``/unions); an explicit ``max_length``
    of the tool's own (``Field(max_length=...)``) still wins, being applied after this one.

    The limit also makes pydantic refuse strings that are not valid Unicode (lone surrogates),
    which could otherwise be stored in the state and break its UTF-8 JSON snapshot and hash.
    """
    if annotation is str:
        return Annotated[str, StringConstraints(max_length=MAX_STRING)]
    origin = get_origin(annotation)
    if origin is Annotated:
        inner, *metadata = get_args(annotation)
        return Annotated[(_limit_strings(inner), *metadata)]
    if origin in (list, typing.List):  # noqa: UP006
        (inner,) = get_args(annotation) or (Any,)
        return list[_limit_strings(inner)]  # type: ignore[misc]
    if origin in (dict, typing.Dict):  # noqa: UP006
        key, value = get_args(annotation) or (Any, Any)
        return dict[_limit_strings(key), _limit_strings(value)]  # type: ignore[misc]
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        args = tuple(_limit_strings(a) for a in get_args(annotation))
        return typing.Union[args]  # noqa: UP007 - a union of a runtime tuple of types
    return annotation


def _mentions_int(annotation: Any) -> bool:
    """True when ``int`` appears in ``annotation`` at the top level (bare, ``Annotated`` or in a union)."""
    if annotation is int:
        return True
    origin = get_origin(annotation)
    if origin is Annotated:
        return _mentions_int(get_args(annotation)[0])
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return any(_mentions_int(a) for a in get_args(annotation))
    return False


def _description(func: Callable[..., Any]) -> str:
    doc = inspect.getdoc(func) or ""
    paragraphs = [p.strip() for p in doc.split("\n\n") if p.strip()]
    keep = []
    for p in paragraphs:
        if p.split(":")[0].strip() in {"Args", "Returns", "Raises", "Errors"}:
            break
        keep.append(" ".join(line.strip() for line in p.splitlines()))
    return " ".join(keep)


def build_spec(
    func: Callable[..., Any],
    *,
    kind: str,
    resources: tuple[str, ...],
    preconditions: tuple[str, ...] = (),
    remedies: dict[str, tuple[str, ...]] | None = None,
    alternatives: tuple[str, ...] = (),
    id_args: tuple[str, ...] | None = None,
    name: str | None = None,
    role: str | None = None,
    destructive: bool = False,
    never_faulted: bool = False,
    time_dependent: str | None = None,
    user_arguments: dict[str, str] | None = None,
    user_check: str | None = None,
) -> ToolSpec:
    """Build the :class:`ToolSpec` of ``func`` (see :func:`tool` for the arguments).

    Raises:
        TypeError: when the function lacks type hints, its return annotation is not a pydantic
            model, or a parameter is positional-only/variadic.
        ValueError: for a bad name, kind, role, error code or an empty ``resources``; for
            ``destructive`` on a tool that is not a write; for a role tool whose parameters
            break the role's contract (:data:`ROLES`); for a user argument that is not a parameter or has an
            unknown kind.
    """
    tool_name = name or func.__name__
    if not TOOL_NAME_RE.match(tool_name):
        raise ValueError(f"tool name {tool_name!r} must match {TOOL_NAME_RE.pattern}")
    if kind not in APP_TOOL_KINDS:
        raise ValueError(f"tool {tool_name}: kind must be read, write or auth, not {kind!r}")
    if not resources:
        raise ValueError(f"tool {tool_name}: resources must name at least one resource family")
    if role is not None and role not in ROLES:
        raise ValueError(f"tool {tool_name}: role must be one of {', '.join(ROLES)} or None, not {role!r}")
    if destructive and kind != ToolKind.WRITE:
        raise ValueError(f"tool {tool_name}: only a write tool can be destructive (kind is {kind!r})")
    remedies = {k: tuple(v) for k, v in (remedies or {}).items()}
    for code in remedies:
        if code not in ERROR_CODES:
            raise ValueError(f"tool {tool_name}: remedy for unknown error code {code!r}")
    hints = typing.get_type_hints(func, include_extras=True)
    ret = hints.get("return")
    if not (inspect.isclass(ret) and issubclass(ret, BaseModel)):
        raise TypeError(f"tool {tool_name}: return annotation must be a pydantic model, got {ret!r}")
    fields: dict[str, Any] = {}
    params: list[str] = []
    sig = inspect.signature(func)
    for pname, param in sig.parameters.items():
        if pname == "self":
            continue
        if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            raise TypeError(f"tool {tool_name}: parameter {pname} must be a plain named parameter")
        if pname not in hints:
            raise TypeError(f"tool {tool_name}: parameter {pname} needs a type hint")
        ann = _limit_strings(hints[pname])
        if _mentions_int(ann):
            # An integral float passes as an integer (JSON has one number type); wrapped around
            # the whole annotation so that ge/le stay minimum/maximum in the JSON schema.
            ann = Annotated[ann, BeforeValidator(_integral_float)]
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[pname] = (ann, default if isinstance(default, type(Field())) else Field(default))
        params.append(pname)
    model_name = "".join(part.capitalize() for part in tool_name.split("_")) + "Arguments"
    input_model = create_model(
        model_name, __config__=ConfigDict(extra="forbid", allow_inf_nan=False, strict=True), **fields
    )
    if role is not None:
        _check_role(tool_name, role, input_model)
    for arg, how in (user_arguments or {}).items():
        if arg not in params:
            raise ValueError(f"tool {tool_name}: user argument {arg!r} is not one of its parameters")
        if how not in ("confirm", "choose", "provide"):
            raise ValueError(f"tool {tool_name}: user argument {arg!r}: kind must be confirm, choose or provide")
    if user_arguments and not user_check:
        raise ValueError(f"tool {tool_name}: user arguments need a user_check method")
    ids = tuple(id_args) if id_args is not None else tuple(p for p in params if p.endswith("_id") or p.endswith("_ids"))
    return ToolSpec(
        name=tool_name,
        kind=ToolKind(kind),
        resources=tuple(resources),
        preconditions=tuple(preconditions),
        remedies=remedies,
        alternatives=tuple(alternatives),
        description=_description(func) or tool_name.replace("_", " "),
        id_args=ids,
        input_model=input_model,
        output_model=ret,
        func=func,
        params=tuple(params),
        role=role,
        destructive=bool(destructive),
        never_faulted=bool(never_faulted),
        time_dependent=time_dependent or None,
        user_arguments=dict(user_arguments or {}),
        user_check=user_check,
    )


def _check_role(tool_name: str, role: str, input_model: type[BaseModel]) -> None:
    """Raise ValueError when the parameters of ``tool_name`` break the contract of ``role``."""
    schema = input_model.model_json_schema()
    required = list(schema.get("required", []))
    props = schema.get("properties", {})
    want = {"wait": "integer", "grant": "string"}.get(role)
    if want is None:  # reauth
        if required:
            raise ValueError(f"tool {tool_name}: a reauth tool takes no required parameters, not {required}")
        return
    if len(required) != 1 or props.get(required[0], {}).get("type") != want:
        raise ValueError(
            f"tool {tool_name}: a {role} tool takes exactly one required {want} parameter "
            f"({'virtual seconds' if role == 'wait' else 'the privilege name'})"
        )


def role_tools(specs: Iterable[ToolSpec], role: str) -> list[str]:
    """Names of the tools of ``specs`` that declare ``role``, in the order given."""
    return [s.name for s in specs if s.role == role]


def role_parameter(spec: ToolSpec) -> str | None:
    """The one required parameter of a ``wait`` or ``grant`` tool (seconds / privilege name);
    None for other tools."""
    if spec.role not in ("wait", "grant"):
        return None
    required = spec.input_model.model_json_schema().get("required", [])
    return required[0] if required else None


def role_remedies(spec: ToolSpec, peers: Iterable[ToolSpec]) -> dict[str, tuple[str, ...]]:
    """The remedies of ``spec`` among ``peers`` (the tools served with it): its declared ones,
    then for each code of :data:`ROLE_REMEDIES` of its kind, every peer with the curing role
    (``rate_limited`` -> the ``wait`` tools, ``auth_required`` -> the ``reauth`` tools)."""
    peers = list(peers)
    out = {k: tuple(v) for k, v in spec.remedies.items()}
    for code, role in ROLE_REMEDIES.get(spec.kind, {}).items():
        cures = role_tools(peers, role)
        if cures:
            out[code] = tuple(dict.fromkeys((*out.get(code, ()), *cures)))
    return out


def tool(
    kind: str,
    resources: tuple[str, ...] | list[str],
    *,
    preconditions: tuple[str, ...] | list[str] = (),
    remedies: Mapping[str, Sequence[str]] | None = None,
    alternatives: tuple[str, ...] | list[str] = (),
    id_args: tuple[str, ...] | list[str] | None = None,
    name: str | None = None,
    role: ToolRole | None = None,
    destructive: bool = False,
    never_faulted: bool = False,
    time_dependent: str | None = None,
    user_arguments: dict[str, str] | None = None,
    user_check: str | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare an app method as an MCP tool.

    Args:
        kind: ``"read"``, ``"write"`` or ``"auth"``.
        resources: resource families the tool reads or writes, e.g. ``["shop.cart"]``.
        preconditions: families whose state decides whether the write is valid.
        remedies: error code -> tool names that cure it, e.g.
            ``{"permission_denied": ["system_request_privilege"]}``.
        alternatives: tool names that reach the same goal another way.
        id_args: argument names naming a resource (default: parameters ending in ``_id``).
        name: tool name (default: the method name).
        role: ``"wait"``, ``"reauth"`` or ``"grant"`` (see :data:`ROLES`): what the generic
            layers (faults, scorer, scripted agents) find this tool by.
        destructive: True for a write that destroys or undoes something (MCP
            ``destructiveHint``); only a write may be destructive.
        never_faulted: True to keep fault injection off this tool (e.g. a clock read).
        time_dependent: for a write whose effect really depends on the virtual time, how the
            judge must compare the state it leaves (e.g. ``"filled only in trading hours: the
            oracle must run at the agent's clock"``). Without it, the conformance suite's
            clock-shift check requires the write's state to be the same at any nearby time
            (clock-derived fields marked ``VOLATILE``).
        user_arguments: argument -> ``confirm`` | ``choose`` | ``provide``: arguments only the
            user may settle (:mod:`mcpgym.kernel.user`).
        user_check: the app method name returning the pending
            :class:`mcpgym.kernel.user.UserRequest` for given arguments (None: nothing to ask).

    Returns:
        The method, unchanged, with its :class:`ToolSpec` attached; the spec is built when
        the app class is registered (see :func:`mcpgym.kernel.app.register_app`).
    """

    def deco(func: Callable[..., Any]) -> Callable[..., Any]:
        setattr(
            func,
            _SPEC_ATTR,
            dict(
                kind=kind,
                resources=tuple(resources),
                preconditions=tuple(preconditions),
                remedies={k: tuple(v) for k, v in (remedies or {}).items()},
                alternatives=tuple(alternatives),
                id_args=None if id_args is None else tuple(id_args),
                name=name,
                role=role,
                destructive=destructive,
                never_faulted=never_faulted,
                time_dependent=time_dependent,
                user_arguments=dict(user_arguments or {}),
                user_check=user_check,
            ),
        )
        return func

    return deco


def collect_specs(cls: type) -> dict[str, ToolSpec]:
    """Return the :class:`ToolSpec` of every ``@tool`` method of ``cls``, by tool name."""
    specs: dict[str, ToolSpec] = {}
    for attr in dir(cls):
        func = getattr(cls, attr, None)
        meta = getattr(func, _SPEC_ATTR, None)
        if meta is None or func is None:
            continue
        spec = build_spec(func, **meta)
        specs[spec.name] = spec
    return specs
