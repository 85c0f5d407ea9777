"""The oracle language: a script of tool calls with the logic between them.

An oracle is a list of steps (YAML mappings, one kind per step)::

    - call: shop_search_items              # a tool call
      args: {query: "Wireless Mouse", in_stock_only: true}
      save: found                          # name the result (read and auth tools only)
      fallback:                            # steps used instead when the tool is `unavailable`
        - call: shop_fuzzy_search_items
          args: {query: "Wireless Mouse", in_stock_only: true}
          save: found
    - let: {item: "cheapest(found.items, name='Wireless Mouse')"}
    - if: "item is None"
      then:
        - refuse: "No Wireless Mouse is in stock, so I bought nothing."
    - call: system_get_wallet_balance
      save: wallet
    - if: "wallet.balance_cents >= item.price_cents"
      then:
        - call: system_authorize_payment
          args: {limit_cents: "{item.price_cents}", purpose: "shop order"}
          save: pay
        - call: shop_buy_item
          args: {item_id: "{item.item_id}", quantity: 1, authorization_id: "{pay.authorization.auth_id}"}
        - answer: "I bought the {item.brand} {item.name} for {money(item.price_cents)}."
      else:
        - refuse: "The cheapest one costs {money(item.price_cents)}, more than your balance."
    - for: it                              # a loop over a list
      in: "where(found.items, stock=1)"
      do: [...]

Step kinds: ``call`` (``args`` values are templates, see :mod:`mcpgym.evaluation.tasks.expr`:
``"{expr}"`` keeps the value's type, ``"text {expr}"`` is a string), ``let`` (name ->
expression), ``if``/``then``/``else`` (a condition), ``for``/``in``/``do``, ``answer`` (final
message template; the plan succeeded) and ``refuse`` (final message template of an infeasible
outcome), ``ask`` (a question to the user about a topic of the task's user profile, the
answer saved under ``save``; ``guess`` is what an agent that does not ask assumes). ``answer``
and ``refuse`` end the plan.

Rules checked when a task is built (:func:`check_task`; each problem names the field, e.g.
``oracle[3].then[1].args.item_id``): the tool is registered and belongs to one of the task's
apps; argument names are the tool's parameters and required ones are present; expressions
use only whitelisted syntax and names defined by an earlier step (in document order); ``save``
is not used on ``write`` tools (a timed-out write returns no result, so a plan must compute
what it needs from reads); ``fallback`` is given only for tools that can be ``unavailable``
(those with a declared alternative) and defines the name its call saves; no step follows an
``answer``/``refuse`` in the same list; every path ends with ``answer`` or ``refuse``; a feasible
task has an ``answer``, an infeasible one a ``refuse``, the ``infeasible`` tag and a
``declares_impossible`` check.

Logic reads belong BEFORE writes: an oracle reads what its decisions need and never reads
back what it wrote, so that the scripted ``overconfident`` agent (which runs only the
oracle's calls) shows what skipping verification looks like.

:func:`execute` runs a plan as a generator that yields :class:`CallRequest` objects and
receives results; the gold run drives it with a ``ToolInvoker`` (faults off), the scripted
agents with their own habits (pre-checks, read-backs, retries, remedies).
"""

from __future__ import annotations

import difflib
from collections.abc import Generator, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from mcpgym.evaluation.tasks.expr import FUNCTIONS, EvalError, evaluate, render, render_value, value_names
from mcpgym.evaluation.tasks.model import (
    NAME_RE,
    AnswerStep,
    AskStep,
    CallStep,
    ForStep,
    IfStep,
    LetStep,
    RefuseStep,
    Step,
    StepError,
)
from mcpgym.kernel.errors import ErrorCode
from mcpgym.kernel.exceptions import InputError
from mcpgym.kernel.spec import ToolKind

if TYPE_CHECKING:
    from mcpgym.evaluation.tasks.model import Task

MAX_LOOP = 200
"""Most iterations of one ``for`` step."""


# -- load-time checks ------------------------------------------------------------------------
def _specs(apps: Iterable[str]) -> dict[str, Any]:
    from mcpgym.kernel.app import get_app

    out: dict[str, Any] = {}
    for app in apps:
        out.update(get_app(app).tools)
    return out


def _all_tools() -> dict[str, Any]:
    from mcpgym.kernel.app import load_apps

    out: dict[str, Any] = {}
    for cls in load_apps().values():
        out.update(cls.tools)
    return out


def _need(names: Iterable[str], defined: set[str], where: str) -> None:
    for n in sorted(names):
        if n not in defined:
            hint = f"; defined so far: {', '.join(sorted(defined))}" if defined else "; nothing is defined yet"
            what = "function" if n in FUNCTIONS else "name"
            raise StepError(where, f"{what} {n!r} is not defined by an earlier step{hint}")


def _check_name(name: Any, where: str) -> str:
    if not isinstance(name, str) or not NAME_RE.match(name) or name in FUNCTIONS:
        raise StepError(
            where, f"{name!r} is not a usable name (letters, digits, '_'; not a function name such as len or first)"
        )
    return name


def _walk(steps: list[Step], path: str, defined: set[str], specs: dict[str, Any], task_apps: list[str]) -> None:
    terminal_at: int | None = None
    for i, step in enumerate(steps):
        here = f"{path}[{i}]"
        if terminal_at is not None:
            raise StepError(here, f"unreachable: {path}[{terminal_at}] already ends the plan")
        if isinstance(step, CallStep):
            spec = specs.get(step.call)
            if spec is None:
                owner = _all_tools().get(step.call)
                if owner is not None:
                    raise StepError(
                        f"{here}.call",
                        f"tool {step.call!r} belongs to app {owner.app!r}, which is not among "
                        f"the task's apps ({', '.join(task_apps)})",
                    )
                close = difflib.get_close_matches(step.call, list(specs), n=3, cutoff=0.5)
                hint = (
                    f"did you mean {', '.join(close)}?"
                    if close
                    else f"tools of the task's apps: {', '.join(sorted(specs))}"
                )
                raise StepError(f"{here}.call", f"unknown tool {step.call!r}; {hint}")
            for arg in step.args:
                if arg not in spec.params:
                    raise StepError(
                        f"{here}.args.{arg}",
                        f"{step.call} has no argument {arg!r}; its arguments: {', '.join(spec.params) or '(none)'}",
                    )
            for pname, finfo in spec.input_model.model_fields.items():
                if finfo.is_required() and pname not in step.args:
                    raise StepError(f"{here}.args", f"{step.call} needs argument {pname!r}")
            for arg, value in step.compiled_args.items():
                _need(value_names(value), defined, f"{here}.args.{arg}")
            if step.save is not None:
                _check_name(step.save, f"{here}.save")
                if spec.kind == ToolKind.WRITE:
                    raise StepError(
                        f"{here}.save",
                        f"save is not allowed on the write tool {step.call}: a timed-out "
                        "write returns no result, so compute what later steps need from reads",
                    )
            if step.fallback is not None:
                alts = [a for a in spec.alternatives if a in specs]
                if not alts:
                    raise StepError(
                        f"{here}.fallback",
                        f"{step.call} declares no alternative among the task's tools, "
                        "so it is never unavailable: a fallback would never run",
                    )
                inner = set(defined)
                _walk(step.fallback, f"{here}.fallback", inner, specs, task_apps)
                if step.save is not None and step.save not in inner:
                    raise StepError(
                        f"{here}.fallback", f"the fallback must define {step.save!r} (the name the call saves)"
                    )
                defined |= inner
            if step.save is not None:
                defined.add(step.save)
        elif isinstance(step, LetStep):
            if not step.let:
                raise StepError(f"{here}.let", "a let step needs at least one name")
            for name, expr in step.exprs.items():
                _check_name(name, f"{here}.let.{name}")
                _need(expr.names, defined, f"{here}.let.{name}")
                defined.add(name)
        elif isinstance(step, IfStep):
            _need(step.cond.names, defined, f"{here}.if")
            _walk(step.then, f"{here}.then", defined, specs, task_apps)
            _walk(step.else_, f"{here}.else", defined, specs, task_apps)
        elif isinstance(step, ForStep):
            _need(step.seq.names, defined, f"{here}.in")
            defined.add(_check_name(step.for_, f"{here}.for"))
            _walk(step.do, f"{here}.do", defined, specs, task_apps)
        elif isinstance(step, AskStep):
            _need(step.template.names, defined, f"{here}.ask")
            _need(value_names(step.compiled_guess), defined, f"{here}.guess")
            defined.add(_check_name(step.save, f"{here}.save"))
        elif isinstance(step, (AnswerStep, RefuseStep)):
            key = "answer" if isinstance(step, AnswerStep) else "refuse"
            _need(step.template.names, defined, f"{here}.{key}")
            terminal_at = i


def ends(steps: list[Step]) -> bool:
    """True when every path through ``steps`` ends with ``answer`` or ``refuse``."""
    if not steps:
        return False
    last = steps[-1]
    if isinstance(last, (AnswerStep, RefuseStep)):
        return True
    if isinstance(last, IfStep):
        return ends(last.then) and ends(last.else_)
    return False


def iter_steps(steps: list[Step]) -> Iterable[Step]:
    """Every step, depth first, including ``then``/``else``/``do``/``fallback`` steps."""
    for s in steps:
        yield s
        if isinstance(s, IfStep):
            yield from iter_steps(s.then)
            yield from iter_steps(s.else_)
        elif isinstance(s, ForStep):
            yield from iter_steps(s.do)
        elif isinstance(s, CallStep) and s.fallback:
            yield from iter_steps(s.fallback)


def check_task(task: Task) -> None:
    """Check a task's oracle and its consistency rules (see the module docstring).

    Raises:
        StepError: naming the field (``oracle[2].call``, ``checks``, ``tags``...).
    """
    specs = _specs(task.apps)
    _walk(task.oracle, "oracle", set(), specs, task.apps)
    for step in (s for s in iter_steps(task.oracle) if isinstance(s, AskStep)):
        if task.user is None or not task.user.knows(step.about):
            raise StepError(
                "user",
                f"the oracle asks about {step.about!r}: the task's user profile needs a fact "
                "(user.facts) or a refusal (user.refuses) for it",
            )
    if not ends(task.oracle):
        raise StepError("oracle", "every path of the oracle must end with an 'answer' or a 'refuse' step")
    kinds = {type(s) for s in iter_steps(task.oracle)}
    if task.feasible:
        if AnswerStep not in kinds:
            raise StepError("oracle", "a feasible task's oracle needs an 'answer' step")
        if "infeasible" in task.tags:
            raise StepError("tags", "the 'infeasible' tag needs feasible: false")
    else:
        if "infeasible" not in task.tags:
            raise StepError("tags", "an infeasible task (feasible: false) needs the 'infeasible' tag")
        if not any(c.kind == "declares_impossible" and c.value is True for c in task.checks):
            raise StepError(
                "checks",
                "an infeasible task needs a check {kind: declares_impossible, value: true}, so "
                "that doing nothing and saying 'done' fails",
            )
        if RefuseStep not in kinds:
            raise StepError("oracle", "an infeasible task's oracle needs a 'refuse' step")


# -- execution -------------------------------------------------------------------------------
@dataclass
class CallRequest:
    """One tool call the plan wants made.

    Attributes:
        tool: the tool name.
        args: rendered arguments (JSON values).
        path: the step's field path, e.g. ``oracle[4].then[1]``.
        save: the name the result will be bound to, if any.
        has_fallback: whether the plan runs a fallback when the result is ``unavailable``.
    """

    tool: str
    args: dict[str, Any]
    path: str
    save: str | None = None
    has_fallback: bool = False


@dataclass
class AskRequest:
    """A question the plan puts to the user; the driver sends back the answer's value.

    Attributes:
        question: the rendered question.
        about: the profile topic.
        path: the step's field path.
        guess: what an agent that does not ask assumes (rendered; None when the step has none).
    """

    question: str
    about: str
    path: str
    guess: Any = None


class ResultLike(Protocol):
    """What the driver sends back: ``is_error`` and the structured ``payload``."""

    is_error: bool
    payload: dict[str, Any]


@dataclass
class OracleOutcome:
    """How a plan ended.

    Attributes:
        kind: ``answer``, ``refuse``, or None when the plan ran out of steps (lenient mode).
        message: the rendered final message (None when it could not be rendered).
        path: the step that ended it.
        problems: what went wrong on the way (lenient mode): failed calls, expressions that
            could not be evaluated, skipped steps.
    """

    kind: Literal["answer", "refuse"] | None
    message: str | None
    path: str | None = None
    problems: list[str] = field(default_factory=list)


class OracleRuntimeError(InputError, RuntimeError):
    """A plan failed in strict mode (a failed call or expression); the message names the task
    and the step."""


class _End(Exception):
    def __init__(self, outcome: OracleOutcome) -> None:
        self.outcome = outcome


def error_code(result: ResultLike) -> str | None:
    """The error code of a result's payload (``payload["error"]["code"]``), or None."""
    if not result.is_error:
        return None
    err = result.payload.get("error") if isinstance(result.payload, dict) else None
    return err.get("code") if isinstance(err, dict) else None


class _Run:
    def __init__(self, task: Task, strict: bool, use_fallbacks: bool) -> None:
        self.task, self.strict, self.use_fallbacks = task, strict, use_fallbacks
        self.env: dict[str, Any] = {}
        self.problems: list[str] = []

    def fail(self, path: str, message: str) -> None:
        if self.strict:
            raise OracleRuntimeError(f"task {self.task.id!r}: oracle step {path}: {message}")
        self.problems.append(f"{path}: {message}")

    def steps(self, steps: list[Step], path: str) -> Generator[CallRequest | AskRequest, Any, None]:
        for i, step in enumerate(steps):
            yield from self.step(step, f"{path}[{i}]")

    def step(self, step: Step, here: str) -> Generator[CallRequest | AskRequest, Any, None]:  # noqa: C901
        env = self.env
        if isinstance(step, CallStep):
            try:
                args = render_value(step.compiled_args, env)
            except EvalError as exc:
                self.fail(here, f"cannot build the arguments of {step.call}: {exc}")
                return
            has_fallback = bool(step.fallback) and self.use_fallbacks
            result = yield CallRequest(tool=step.call, args=args, path=here, save=step.save, has_fallback=has_fallback)
            if result.is_error:
                code = error_code(result)
                if code == ErrorCode.UNAVAILABLE and has_fallback:
                    yield from self.steps(step.fallback or [], f"{here}.fallback")
                    return
                err = result.payload.get("error", {}) if isinstance(result.payload, dict) else {}
                self.fail(here, f"{step.call} failed: {code}: {err.get('message', '')}")
                if step.save is not None:
                    env.pop(step.save, None)
                return
            if step.save is not None:
                env[step.save] = result.payload
        elif isinstance(step, AskStep):
            try:
                question = str(render(step.template, env))
                guess = render_value(step.compiled_guess, env)
            except EvalError as exc:
                self.fail(here, f"cannot build the question: {exc}")
                return
            env[step.save] = yield AskRequest(question=question, about=step.about, path=here, guess=guess)
        elif isinstance(step, LetStep):
            for name, expr in step.exprs.items():
                try:
                    env[name] = evaluate(expr, env)
                except EvalError as exc:
                    self.fail(f"{here}.let.{name}", str(exc))
                    env.pop(name, None)
        elif isinstance(step, IfStep):
            try:
                cond = evaluate(step.cond, env)
            except EvalError as exc:
                self.fail(f"{here}.if", f"{exc} (step skipped)")
                return
            if cond:
                yield from self.steps(step.then, f"{here}.then")
            else:
                yield from self.steps(step.else_, f"{here}.else")
        elif isinstance(step, ForStep):
            try:
                seq = evaluate(step.seq, env)
            except EvalError as exc:
                self.fail(f"{here}.in", f"{exc} (loop skipped)")
                return
            if not isinstance(seq, list):
                self.fail(f"{here}.in", f"needs a list, got {type(seq).__name__} (loop skipped)")
                return
            if len(seq) > MAX_LOOP:
                self.fail(f"{here}.in", f"{len(seq)} elements, more than {MAX_LOOP}; only the first {MAX_LOOP} run")
            for value in seq[:MAX_LOOP]:
                env[step.for_] = value
                yield from self.steps(step.do, f"{here}.do")
        else:
            kind: Literal["answer", "refuse"] = "answer" if isinstance(step, AnswerStep) else "refuse"
            try:
                message = render(step.template, env)
            except EvalError as exc:
                self.fail(f"{here}.{kind}", f"cannot render the message: {exc}")
                message = None
            raise _End(
                OracleOutcome(
                    kind=kind, message=None if message is None else str(message), path=here, problems=self.problems
                )
            )


def execute(
    task: Task, *, strict: bool = True, use_fallbacks: bool = True
) -> Generator[CallRequest | AskRequest, Any, OracleOutcome]:
    """Run ``task``'s oracle as a generator of calls.

    The driver ``send``s each :class:`CallRequest`'s result (anything with ``is_error`` and
    ``payload``: ``mcpgym.tools.invoke.CallOutcome`` or ``mcpgym.evaluation.agents.CallResult``) and gets the
    next request; the generator's return value (``StopIteration.value``) is the
    :class:`OracleOutcome`.

    Args:
        task: the task.
        strict: raise :class:`OracleRuntimeError` at the first failed call or expression (the
            gold run); otherwise record it in ``problems`` and skip the step (agents).
        use_fallbacks: run a call's ``fallback`` when it answers ``unavailable``.

    Raises:
        OracleRuntimeError: in strict mode, naming the task and step.
    """
    run = _Run(task, strict, use_fallbacks)
    try:
        yield from run.steps(task.oracle, "oracle")
    except _End as end:
        return end.outcome
    return OracleOutcome(kind=None, message=None, problems=run.problems)


def called_tools(task: Task) -> list[str]:
    """Every tool an oracle may call (any branch, loop or fallback), in order of first appearance."""
    seen: dict[str, None] = {}
    for s in iter_steps(task.oracle):
        if isinstance(s, CallStep):
            seen.setdefault(s.call, None)
    return list(seen)


__all__ = [
    "AskRequest",
    "CallRequest",
    "MAX_LOOP",
    "OracleOutcome",
    "OracleRuntimeError",
    "called_tools",
    "check_task",
    "ends",
    "error_code",
    "execute",
    "iter_steps",
]
