"""The task model and the oracle's step models.

A :class:`Task` is what a user asks (``instruction``) over a seeded world (``seed``,
``apps``), with the oracle that solves it (a list of steps, see :mod:`mcpgym.evaluation.tasks.oracle`
for the language) and extra checks on the final message. Tasks are validated when they are
built: the step structure, every tool name and argument name against the registered catalog,
every expression against the whitelist of :mod:`mcpgym.evaluation.tasks.expr`, and the rules that
tie ``feasible``, ``tags`` and ``checks`` together. Problems raise :class:`TaskError`, which
names the task id and the field (``oracle[2].then[0].call``).
"""

from __future__ import annotations

import re
import types
import typing
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from mcpgym.evaluation.scoring.judge import ExtraCheck
from mcpgym.evaluation.tasks.expr import Expr, ExprError, Template, compile_expr, compile_template, compile_value
from mcpgym.evaluation.users.profile import UserProfile
from mcpgym.kernel.exceptions import InputError
from mcpgym.kernel.validation_text import plain_reason

KNOWN_TAGS: tuple[str, ...] = (
    "verification",
    "recovery",
    "interdependency",
    "retrieval",
    "infeasible",
    "payment",
    "conditional",
    "multi_step",
    "clarification",
    "confirmation",
)
"""Tags a task may carry. ``verification``: the instruction is conditional on state the agent
must read; ``recovery``: the plan runs through writes whose faults have remedies or
alternatives; ``interdependency``: one app's state decides what another app's write may do;
``retrieval``: the answer is information; ``infeasible``: the right outcome is to change
nothing and say why; ``clarification``: the instruction is ambiguous and only the user can
settle it (the oracle asks); ``confirmation``: a write needs the user's confirmation first."""

TASK_ID_RE = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,99}$")
NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")


class TaskError(InputError, ValueError):
    """A task is malformed.

    Attributes:
        task_id: the task's id (``?`` when it has none).
        field: the offending field, e.g. ``oracle[3].call`` or ``seed``.
        problem: what is wrong.
        source: the file it came from, when known.
    """

    def __init__(self, task_id: str, field: str, problem: str, source: str | None = None) -> None:
        self.task_id, self.field, self.problem, self.source = task_id, field, problem, source
        where = f"{source}: " if source else ""
        super().__init__(f"{where}task {task_id!r}: field {field!r}: {problem}")

    def with_source(self, source: str) -> TaskError:
        """The same error, naming the file ``source``."""
        return TaskError(self.task_id, self.field, self.problem, source)


class StepError(InputError, ValueError):
    """A problem inside the oracle, before the task id is attached (internal)."""

    def __init__(self, field: str, problem: str) -> None:
        self.field, self.problem = field, problem
        super().__init__(f"{field}: {problem}")


# -- steps ---------------------------------------------------------------------------------
class _StepBase(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, serialize_by_alias=True)


class CallStep(_StepBase):
    """``call``: one tool call. ``args`` values are templates; ``save`` names the result;
    ``fallback`` runs instead when the tool answers ``unavailable``."""

    call: str
    args: dict[str, Any] = Field(default_factory=dict)
    save: str | None = None
    fallback: list[Step] | None = None
    _args: dict[str, Any] = PrivateAttr(default_factory=dict)

    def model_post_init(self, __context: Any) -> None:
        self._args = compile_value(self.args)

    @property
    def compiled_args(self) -> dict[str, Any]:
        """``args`` with every string compiled as a template."""
        return self._args


class LetStep(_StepBase):
    """``let``: name -> expression, evaluated in order."""

    let: dict[str, str]
    _exprs: dict[str, Expr] = PrivateAttr(default_factory=dict)

    def model_post_init(self, __context: Any) -> None:
        self._exprs = {k: compile_expr(v) for k, v in self.let.items()}

    @property
    def exprs(self) -> dict[str, Expr]:
        """The compiled expressions."""
        return self._exprs


class IfStep(_StepBase):
    """``if``/``then``/``else``: run ``then`` when the expression is truthy, else ``else``."""

    if_: str = Field(alias="if")
    then: list[Step]
    else_: list[Step] = Field(default_factory=list, alias="else")
    _cond: Expr | None = PrivateAttr(None)

    def model_post_init(self, __context: Any) -> None:
        self._cond = compile_expr(self.if_)

    @property
    def cond(self) -> Expr:
        """The compiled condition."""
        return self._cond  # type: ignore[return-value]


class ForStep(_StepBase):
    """``for``/``in``/``do``: run ``do`` once per element of a list, bound to the ``for`` name."""

    for_: str = Field(alias="for")
    in_: str = Field(alias="in")
    do: list[Step]
    _seq: Expr | None = PrivateAttr(None)

    def model_post_init(self, __context: Any) -> None:
        self._seq = compile_expr(self.in_)

    @property
    def seq(self) -> Expr:
        """The compiled sequence expression."""
        return self._seq  # type: ignore[return-value]


class AnswerStep(_StepBase):
    """``answer``: the final message (a template); ends the plan with success."""

    answer: str
    _tpl: Template | None = PrivateAttr(None)

    def model_post_init(self, __context: Any) -> None:
        self._tpl = compile_template(self.answer)

    @property
    def template(self) -> Template:
        """The compiled message template."""
        return self._tpl  # type: ignore[return-value]


class RefuseStep(_StepBase):
    """``refuse``: the final message of an infeasible outcome (a template); ends the plan."""

    refuse: str
    _tpl: Template | None = PrivateAttr(None)

    def model_post_init(self, __context: Any) -> None:
        self._tpl = compile_template(self.refuse)

    @property
    def template(self) -> Template:
        """The compiled message template."""
        return self._tpl  # type: ignore[return-value]


class AskStep(_StepBase):
    """``ask``: a question to the user (a template) about the profile topic ``about``; the
    answer (the profile's value) is bound to ``save``. ``guess``: what an agent that does not
    ask would assume instead (a template, e.g. ``"{matches[0].name}"`` or ``true``), used by
    the scripted ``overconfident`` agent."""

    ask: str
    about: str
    save: str
    guess: Any = None
    _tpl: Template | None = PrivateAttr(None)
    _guess: Any = PrivateAttr(None)

    def model_post_init(self, __context: Any) -> None:
        self._tpl = compile_template(self.ask)
        self._guess = compile_value(self.guess)

    @property
    def template(self) -> Template:
        """The compiled question template."""
        return self._tpl  # type: ignore[return-value]

    @property
    def compiled_guess(self) -> Any:
        """``guess`` with every string compiled as a template."""
        return self._guess


Step = CallStep | LetStep | IfStep | ForStep | AnswerStep | RefuseStep | AskStep
"""One oracle step."""

for _m in (CallStep, IfStep, ForStep):
    _m.model_rebuild()

_STEP_KEYS: dict[str, tuple[type[BaseModel], frozenset[str]]] = {
    "call": (CallStep, frozenset({"call", "args", "save", "fallback"})),
    "let": (LetStep, frozenset({"let"})),
    "if": (IfStep, frozenset({"if", "then", "else"})),
    "for": (ForStep, frozenset({"for", "in", "do"})),
    "answer": (AnswerStep, frozenset({"answer"})),
    "refuse": (RefuseStep, frozenset({"refuse"})),
    "ask": (AskStep, frozenset({"ask", "about", "save", "guess"})),
}


def parse_steps(raw: Any, path: str) -> list[Step]:
    """Build step models from YAML data (a list of one-key-kind mappings).

    Args:
        raw: the list as loaded from YAML (already-built step models pass through).
        path: where the list is, e.g. ``oracle`` or ``oracle[2].then``.

    Raises:
        StepError: naming the field (``oracle[2].then[0].if``) for a structural problem or an
            expression outside the whitelist.
    """
    if not isinstance(raw, list):
        raise StepError(path, f"must be a list of steps, got {type(raw).__name__}")
    out: list[Step] = []
    for i, item in enumerate(raw):
        here = f"{path}[{i}]"
        if isinstance(item, (CallStep, LetStep, IfStep, ForStep, AnswerStep, RefuseStep, AskStep)):
            out.append(item)
            continue
        if not isinstance(item, dict):
            raise StepError(here, f"a step must be a mapping with one of {', '.join(_STEP_KEYS)}")
        kinds = [k for k in _STEP_KEYS if k in item]
        if len(kinds) != 1:
            what = "none" if not kinds else ", ".join(kinds)
            raise StepError(here, f"a step needs exactly one of {', '.join(_STEP_KEYS)} (found {what})")
        kind = kinds[0]
        model, allowed = _STEP_KEYS[kind]
        extra = sorted(set(map(str, item)) - allowed)
        if extra:
            raise StepError(
                f"{here}.{extra[0]}", f"unknown key in a {kind!r} step; allowed: {', '.join(sorted(allowed))}"
            )
        data = dict(item)
        try:
            for key in ("then", "else", "do", "fallback"):
                if key in data and data[key] is not None:
                    data[key] = parse_steps(data[key], f"{here}.{key}")
            if kind == "if" and "then" not in data:
                raise StepError(f"{here}.then", "an 'if' step needs 'then' steps")
            if kind == "for" and ("in" not in data or "do" not in data):
                raise StepError(f"{here}.{'in' if 'in' not in data else 'do'}", "a 'for' step needs 'in' and 'do'")
            if kind == "call" and "args" in data and data["args"] is None:
                data["args"] = {}
            out.append(model.model_validate(data))  # type: ignore[arg-type]
        except ExprError as exc:
            raise StepError(f"{here}.{_expr_field(kind, exc, item)}", str(exc)) from None
        except ValidationError as exc:
            err = exc.errors(include_url=False)[0]
            ctx_err = (err.get("ctx") or {}).get("error")
            if isinstance(ctx_err, ExprError):
                raise StepError(f"{here}.{_expr_field(kind, ctx_err, item)}", str(ctx_err)) from None
            loc = ".".join(str(p) for p in err.get("loc", ()))
            raise StepError(f"{here}.{loc}" if loc else here, str(err.get("msg"))) from None
    return out


def _expr_field(kind: str, exc: ExprError, item: dict[str, Any]) -> str:
    """Best guess of which key of a step holds the bad expression (for the error's field)."""
    text = str(exc)
    if kind == "call":
        for k, v in (item.get("args") or {}).items():
            if isinstance(v, str) and v and v in text:
                return f"args.{k}"
        return "args"
    if kind == "let":
        for k, v in (item.get("let") or {}).items():
            if isinstance(v, str) and v in text:
                return f"let.{k}"
        return "let"
    return {"if": "if", "for": "in", "ask": "ask"}.get(kind, kind)


# -- the task --------------------------------------------------------------------------------
class Task(BaseModel):
    """One benchmark task (docs/design.md §6).

    Attributes:
        id: unique id, lowercase (``shop.buy_cheapest_mouse``).
        instruction: what the user says.
        apps: the episode's apps (``system`` is added first when missing).
        seed: the world seed.
        level: difficulty 1-3.
        tags: a subset of :data:`KNOWN_TAGS`.
        feasible: false when the right outcome is to change nothing and say why; such a task
            carries the ``infeasible`` tag and a ``declares_impossible`` check with value true.
        faults: a fault profile overriding the run's (None: the run's profile).
        oracle: the steps that solve the task (see :mod:`mcpgym.evaluation.tasks.oracle`).
        checks: :class:`mcpgym.evaluation.scoring.judge.ExtraCheck` items on the final message.
        max_calls: most tool calls an agent may make in an episode.
        notes: authoring notes (why this seed, what the gold state is).
        user: the user's profile (:class:`mcpgym.evaluation.users.profile.UserProfile`): what the
            simulated user answers to the oracle's ``ask`` steps and to tools' questions.

    Raises:
        pydantic.ValidationError: wrapping a :class:`TaskError` (see :func:`task_error`) for
            anything malformed.
    """

    model_config = ConfigDict(extra="forbid", serialize_by_alias=True)

    id: str
    instruction: str = Field(min_length=1, max_length=4_000)
    apps: list[str] = Field(min_length=1)
    # strict: `seed: true` or `level: "2"` in a task file is a typo to report, not a value to coerce
    seed: int = Field(ge=0, le=2**63 - 1, strict=True)
    level: int = Field(ge=1, le=3, strict=True)
    tags: list[str] = Field(default_factory=list)
    feasible: bool = Field(True, strict=True)
    faults: str | None = None
    oracle: list[Step] = Field(min_length=1)
    checks: list[ExtraCheck] = Field(default_factory=list)
    max_calls: int = Field(40, ge=1, le=1_000, strict=True)
    notes: str = ""
    user: UserProfile | None = None

    @model_validator(mode="before")
    @classmethod
    def _parse_oracle(cls, data: Any) -> Any:
        if isinstance(data, dict) and "oracle" in data:
            tid = str(data.get("id", "?"))
            try:
                data = {**data, "oracle": parse_steps(data["oracle"], "oracle")}
            except StepError as exc:
                raise TaskError(tid, exc.field, exc.problem) from None
        return data

    @field_validator("id")
    @classmethod
    def _check_id(cls, v: str) -> str:
        if not TASK_ID_RE.match(v):
            raise ValueError("a task id is lowercase letters, digits, '_', '.', '-' (at most 100), e.g. shop.buy_mouse")
        return v

    @field_validator("apps")
    @classmethod
    def _check_apps(cls, v: list[str]) -> list[str]:
        from mcpgym.kernel.world import normalise_apps

        try:
            return normalise_apps(v)
        except KeyError as exc:
            raise ValueError(str(exc).strip("'\"")) from None

    @field_validator("tags")
    @classmethod
    def _check_tags(cls, v: list[str]) -> list[str]:
        for t in v:
            if t not in KNOWN_TAGS:
                raise ValueError(f"unknown tag {t!r}; known tags: {', '.join(KNOWN_TAGS)}")
        return list(dict.fromkeys(v))

    @field_validator("faults")
    @classmethod
    def _check_faults(cls, v: str | None) -> str | None:
        if v is not None:
            from mcpgym.tools.faults import FaultProfileError, load_profile

            try:
                load_profile(v)
            except FaultProfileError as exc:
                raise ValueError(str(exc)) from None
        return v

    @model_validator(mode="after")
    def _check_semantics(self) -> Task:
        from mcpgym.evaluation.tasks.oracle import check_task

        try:
            check_task(self)
        except StepError as exc:
            raise TaskError(self.id, exc.field, exc.problem) from None
        return self


def task_error(exc: ValidationError, data: Any) -> TaskError:
    """Turn the ``ValidationError`` of ``Task.model_validate(data)`` into a :class:`TaskError`
    naming the task id and the first offending field."""
    tid = str(data.get("id", "?")) if isinstance(data, dict) else "?"
    err = exc.errors(include_url=False)[0]
    inner = (err.get("ctx") or {}).get("error")
    if isinstance(inner, TaskError):
        return TaskError(inner.task_id if inner.task_id != "?" else tid, inner.field, inner.problem)
    loc = [p for p in err.get("loc", ()) if not (isinstance(p, str) and p in ("function-after", "function-before"))]
    field = (
        "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else str(p)) for i, p in enumerate(loc)) or "(task)"
    )
    msg = plain_reason(err, err.get("input"))  # the shared plain wording (kernel.validation_text)
    if err.get("type") == "missing":
        msg = "missing required field"
    elif err.get("type") == "extra_forbidden":
        owner = _model_at(loc[:-1])
        msg = f"unknown field; allowed: {', '.join(owner.model_fields)}" if owner else "unknown field"
    return TaskError(tid, field, msg)


def _model_at(loc: list[Any]) -> type[BaseModel] | None:
    """The model whose fields are at ``loc`` inside a task (``[]``: :class:`Task`,
    ``["user"]``: the user profile, ``["checks", 0]``: a check), or None when the path goes
    through something else (a union of step kinds, a plain mapping)."""
    model: type[BaseModel] = Task
    i = 0
    while i < len(loc):
        info = model.model_fields.get(str(loc[i]))
        if info is None:
            return None
        kind: Any = info.annotation
        i += 1
        while True:  # unwrap Optional[X] and list[X] (an int position follows a list)
            args = [a for a in typing.get_args(kind) if a is not type(None)]
            if typing.get_origin(kind) is list and args:
                kind = args[0]
                if i < len(loc) and isinstance(loc[i], int):
                    i += 1
            elif len(args) == 1 and typing.get_origin(kind) in (typing.Union, types.UnionType):
                kind = args[0]
            else:
                break
        if not (isinstance(kind, type) and issubclass(kind, BaseModel)):
            return None
        model = kind
    return model


__all__ = [
    "AnswerStep",
    "AskStep",
    "CallStep",
    "ForStep",
    "IfStep",
    "KNOWN_TAGS",
    "LetStep",
    "RefuseStep",
    "Step",
    "StepError",
    "Task",
    "TaskError",
    "parse_steps",
    "task_error",
]
