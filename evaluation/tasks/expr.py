"""Safe expressions and ``{expr}`` templates of the oracle language.

An oracle's logic (``if`` conditions, ``let`` values, ``for`` sequences and the ``{...}`` parts
of argument and message templates) is written in a small, pure subset of Python expression
syntax. It is parsed with :mod:`ast` and every node is checked against a whitelist when the
task is loaded (:func:`compile_expr`); evaluation (:func:`evaluate`) walks the tree itself.
Python's ``eval`` is never used, so no code outside this whitelist can run.

Allowed:

* literals: strings, numbers, ``True``/``False``/``None``, lists, tuples, dicts;
* names: results saved by earlier steps, ``let`` names, ``for`` variables, comprehension
  variables;
* ``a.b`` (a key of a saved JSON object; names starting with ``_`` are rejected), ``a[i]``,
  ``a[i:j]``, ``a["key"]``;
* comparisons (``== != < <= > >= in not in is is not``), ``and``/``or``/``not``, ``x if c else y``,
  arithmetic ``+ - * / // %`` (no ``**``; repeating a string or list is capped);
* list comprehensions and generator expressions (``[i for i in xs if i.stock > 0]``);
* calls of the functions in :data:`FUNCTIONS` (:mod:`mcpgym.evaluation.tasks.functions`) only,
  with positional and keyword arguments:
  ``len min max sum sorted any all abs round int str bool`` and the helpers ``first where
  count cheapest pluck money get join lower``. ``min``/``max``/``sorted``/``sum`` accept
  ``key="field"`` (a field name, not a function).

Values are JSON data (what tools return), so there are no objects whose methods could be
reached, and method calls are not syntax the whitelist accepts anyway.

Templates: in a string, ``{expr}`` is replaced by the expression's value and ``{{``/``}}``
stand for literal braces. A string that is exactly one ``{expr}`` keeps the value's type
(``"{item.price_cents}"`` is an int), which is how numbers reach tool arguments.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcpgym.evaluation.tasks.errors import EvalError, ExprError
from mcpgym.evaluation.tasks.functions import FUNCTIONS
from mcpgym.kernel import ast_parse

MAX_SEQUENCE = 10_000
"""Longest list or string an expression may build by repetition (``*``)."""

_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
_CMPOPS: dict[type, Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.Not: operator.not_, ast.USub: operator.neg, ast.UAdd: operator.pos}
_ALLOWED: tuple[type, ...] = (
    ast.Expression,
    ast.Constant,
    ast.Name,
    ast.Load,
    ast.Store,
    ast.Attribute,
    ast.Subscript,
    ast.Slice,
    ast.Compare,
    ast.BoolOp,
    ast.And,
    ast.Or,
    ast.UnaryOp,
    ast.BinOp,
    ast.IfExp,
    ast.Call,
    ast.keyword,
    ast.List,
    ast.Tuple,
    ast.Dict,
    ast.ListComp,
    ast.GeneratorExp,
    ast.comprehension,
    *_BINOPS,
    *_CMPOPS,
    *_UNARY,
)


@dataclass(frozen=True)
class Expr:
    """A compiled expression.

    Attributes:
        source: the text as written.
        tree: its checked AST.
        names: free names it reads (saved results, ``let`` and ``for`` names), excluding
            called functions and comprehension variables.
    """

    source: str
    tree: ast.Expression = field(compare=False, repr=False)
    names: frozenset[str] = frozenset()


def _describe(node: ast.AST) -> str:
    return {
        ast.Pow: "'**'",
        ast.Lambda: "lambda",
        ast.NamedExpr: "':='",
        ast.Await: "await",
        ast.JoinedStr: "f-strings",
        ast.SetComp: "set comprehensions",
        ast.DictComp: "dict comprehensions",
        ast.Set: "set literals",
        ast.Starred: "'*' unpacking",
        ast.BitAnd: "'&'",
        ast.BitOr: "'|'",
        ast.BitXor: "'^'",
        ast.LShift: "'<<'",
        ast.RShift: "'>>'",
        ast.MatMult: "'@'",
        ast.Invert: "'~'",
    }.get(type(node), type(node).__name__)


def _check(node: ast.AST, bound: frozenset[str], free: set[str], source: str) -> None:
    """Reject nodes outside the whitelist; collect free names."""
    if not isinstance(node, _ALLOWED):
        raise ExprError(f"{_describe(node)} is not allowed in {source!r}")
    if isinstance(node, ast.Constant) and not (node.value is None or isinstance(node.value, (str, int, float, bool))):
        raise ExprError(f"constant {node.value!r} is not allowed in {source!r}")
    if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
        raise ExprError(f"field names starting with '_' ({node.attr!r}) are not allowed in {source!r}")
    if isinstance(node, ast.Name):
        if node.id.startswith("_"):
            raise ExprError(f"names starting with '_' ({node.id!r}) are not allowed in {source!r}")
        if node.id not in bound:
            free.add(node.id)
        return
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            what = node.func.id if isinstance(node.func, ast.Name) else ast.unparse(node.func)
            raise ExprError(
                f"call of {what!r} is not allowed in {source!r}; allowed functions: {', '.join(sorted(FUNCTIONS))}"
            )
        for kw in node.keywords:
            if kw.arg is None:
                raise ExprError(f"'**' unpacking is not allowed in {source!r}")
        for arg in [*node.args, *(kw.value for kw in node.keywords)]:
            _check(arg, bound, free, source)
        return
    if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
        inner = set(bound)
        for gen in node.generators:
            if gen.is_async:
                raise ExprError(f"async comprehensions are not allowed in {source!r}")
            _check(gen.iter, frozenset(inner), free, source)
            if not isinstance(gen.target, ast.Name):
                raise ExprError(f"a comprehension variable must be a plain name in {source!r}")
            inner.add(gen.target.id)
            for cond in gen.ifs:
                _check(cond, frozenset(inner), free, source)
        _check(node.elt, frozenset(inner), free, source)
        return
    for child in ast.iter_child_nodes(node):
        _check(child, bound, free, source)


def compile_expr(source: str) -> Expr:
    """Parse and check an expression.

    Args:
        source: the expression text, e.g. ``wallet.balance_cents >= item.price_cents * 2``.

    Raises:
        ExprError: for a syntax error or anything outside the whitelist (the message names
            the construct and the expression).
    """
    if not isinstance(source, str) or not source.strip():
        raise ExprError("an expression must be a non-empty string")
    if len(source) > 2_000:
        raise ExprError("an expression may have at most 2000 characters")
    try:
        tree = ast_parse.parse_expression(source.strip())  # one thread at a time (CPython 3.11)
    except SyntaxError as exc:
        raise ExprError(f"invalid expression {source!r}: {exc.msg}") from None
    free: set[str] = set()
    _check(tree, frozenset(), free, source)
    return Expr(source=source, tree=tree, names=frozenset(free))


# -- evaluation ------------------------------------------------------------------------------
def evaluate(expr: Expr, env: Mapping[str, Any]) -> Any:
    """Evaluate a compiled expression over ``env`` (name -> JSON value).

    Raises:
        EvalError: for an undefined name, a missing field or index, a type error, a division
            by zero, or an over-long repetition; the message names the expression.
    """
    try:
        return _eval(expr.tree.body, env)
    except EvalError as exc:
        raise EvalError(f"{expr.source!r}: {exc}") from None
    except (TypeError, ValueError, ZeroDivisionError, OverflowError, RecursionError) as exc:
        raise EvalError(f"{expr.source!r}: {type(exc).__name__}: {exc}") from None


def _eval(node: ast.AST, env: Mapping[str, Any]) -> Any:  # noqa: C901 - one branch per node type
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in env:
            raise EvalError(f"name {node.id!r} has no value")
        return env[node.id]
    if isinstance(node, ast.Attribute):
        base = _eval(node.value, env)
        if not isinstance(base, dict):
            raise EvalError(f"cannot read field {node.attr!r} of a {type(base).__name__}")
        if node.attr not in base:
            keys = ", ".join(sorted(map(str, base))[:12])
            raise EvalError(f"no field {node.attr!r} (fields: {keys})")
        return base[node.attr]
    if isinstance(node, ast.Subscript):
        base = _eval(node.value, env)
        if isinstance(node.slice, ast.Slice):
            lo = _eval(node.slice.lower, env) if node.slice.lower else None
            hi = _eval(node.slice.upper, env) if node.slice.upper else None
            step = _eval(node.slice.step, env) if node.slice.step else None
            if not isinstance(base, (list, str)):
                raise EvalError(f"cannot slice a {type(base).__name__}")
            return base[lo:hi:step]
        key = _eval(node.slice, env)
        try:
            if isinstance(base, dict):
                return base[key]
            if isinstance(base, (list, str)) and isinstance(key, int) and not isinstance(key, bool):
                return base[key]
        except (KeyError, IndexError):
            raise EvalError(f"no element {key!r}") from None
        raise EvalError(f"cannot index a {type(base).__name__} with {type(key).__name__}")
    if isinstance(node, ast.BoolOp):
        if isinstance(node.op, ast.And):
            value: Any = True
            for v in node.values:
                value = _eval(v, env)
                if not value:
                    return value
            return value
        value = False
        for v in node.values:
            value = _eval(v, env)
            if value:
                return value
        return value
    if isinstance(node, ast.UnaryOp):
        return _UNARY[type(node.op)](_eval(node.operand, env))
    if isinstance(node, ast.BinOp):
        left, right = _eval(node.left, env), _eval(node.right, env)
        if isinstance(node.op, ast.Mult):
            for seq, n in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and isinstance(n, int) and len(seq) * max(n, 0) > MAX_SEQUENCE:
                    raise EvalError(f"repetition longer than {MAX_SEQUENCE}")
        return _BINOPS[type(node.op)](left, right)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, env)
        for op, comp in zip(node.ops, node.comparators, strict=False):
            right = _eval(comp, env)
            if not _CMPOPS[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.IfExp):
        return _eval(node.body, env) if _eval(node.test, env) else _eval(node.orelse, env)
    if isinstance(node, ast.Call):
        fn = FUNCTIONS[node.func.id]  # type: ignore[attr-defined]
        args = [_eval(a, env) for a in node.args]
        kwargs = {kw.arg: _eval(kw.value, env) for kw in node.keywords if kw.arg is not None}  # _check refused '**'
        return fn(*args, **kwargs)
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_eval(e, env) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {_eval(k, env): _eval(v, env) for k, v in zip(node.keys, node.values, strict=False)}  # type: ignore[arg-type]
    if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
        return _comprehension(node, list(node.generators), dict(env))
    raise EvalError(f"unsupported syntax {type(node).__name__}")  # pragma: no cover - rejected by _check


def _comprehension(
    node: ast.ListComp | ast.GeneratorExp, gens: list[ast.comprehension], env: dict[str, Any]
) -> list[Any]:
    gen, rest = gens[0], gens[1:]
    seq = _eval(gen.iter, env)
    if not isinstance(seq, (list, tuple, str, dict)):
        raise EvalError(f"cannot iterate over a {type(seq).__name__}")
    out: list[Any] = []
    for value in seq:
        env[gen.target.id] = value  # type: ignore[attr-defined]
        if all(_eval(c, env) for c in gen.ifs):
            out.extend(_comprehension(node, rest, env) if rest else [_eval(node.elt, env)])
        if len(out) > MAX_SEQUENCE:
            raise EvalError(f"a comprehension built more than {MAX_SEQUENCE} elements")
    return out


# -- templates -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Template:
    """A compiled ``{expr}`` template.

    Attributes:
        source: the text as written.
        parts: literal strings and :class:`Expr` parts, in order.
        whole: true when the text is exactly one ``{expr}`` (the value keeps its type).
    """

    source: str
    parts: tuple[str | Expr, ...]
    whole: bool

    @property
    def names(self) -> frozenset[str]:
        """Free names of every expression part."""
        out: set[str] = set()
        for p in self.parts:
            if isinstance(p, Expr):
                out |= p.names
        return frozenset(out)


def compile_template(text: str) -> Template:
    """Compile a template string: ``{expr}`` parts, ``{{`` and ``}}`` for literal braces.

    Raises:
        ExprError: for an unbalanced brace or an invalid expression part.
    """
    parts: list[str | Expr] = []
    buf: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "{" and text.startswith("{{", i):
            buf.append("{")
            i += 2
        elif ch == "}" and text.startswith("}}", i):
            buf.append("}")
            i += 2
        elif ch == "{":
            end = text.find("}", i + 1)
            if end < 0:
                raise ExprError(f"unclosed '{{' in template {text!r}")
            if buf:
                parts.append("".join(buf))
                buf = []
            parts.append(compile_expr(text[i + 1 : end]))
            i = end + 1
        elif ch == "}":
            raise ExprError(f"single '}}' in template {text!r} (write '}}}}' for a literal brace)")
        else:
            buf.append(ch)
            i += 1
    if buf:
        parts.append("".join(buf))
    whole = len(parts) == 1 and isinstance(parts[0], Expr)
    return Template(source=text, parts=tuple(parts), whole=whole)


def render(template: Template, env: Mapping[str, Any]) -> Any:
    """Render a template: the value itself for a whole-expression template, else a string
    (``None`` renders as ``""``; numbers and strings as ``str()``).

    Raises:
        EvalError: when an expression part fails.
    """
    if template.whole:
        return evaluate(template.parts[0], env)  # type: ignore[arg-type]
    out = []
    for p in template.parts:
        if isinstance(p, Expr):
            v = evaluate(p, env)
            out.append("" if v is None else str(v))
        else:
            out.append(p)
    return "".join(out)


def compile_value(value: Any) -> Any:
    """Compile every string of a JSON-like value (dicts, lists) as a template; other
    scalars stay as they are.

    Raises:
        ExprError: for an invalid template inside.
    """
    if isinstance(value, str):
        return compile_template(value)
    if isinstance(value, dict):
        return {k: compile_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [compile_value(v) for v in value]
    return value


def render_value(value: Any, env: Mapping[str, Any]) -> Any:
    """Render a value built by :func:`compile_value`.

    Raises:
        EvalError: when a template fails.
    """
    if isinstance(value, Template):
        return render(value, env)
    if isinstance(value, dict):
        return {k: render_value(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [render_value(v, env) for v in value]
    return value


def value_names(value: Any) -> frozenset[str]:
    """Free names of every template inside a compiled value."""
    if isinstance(value, Template):
        return value.names
    if isinstance(value, dict):
        return frozenset().union(*(value_names(v) for v in value.values())) if value else frozenset()
    if isinstance(value, list):
        return frozenset().union(*(value_names(v) for v in value)) if value else frozenset()
    return frozenset()


__all__ = [
    "EvalError",
    "Expr",
    "ExprError",
    "FUNCTIONS",
    "Template",
    "compile_expr",
    "compile_template",
    "compile_value",
    "evaluate",
    "render",
    "render_value",
    "value_names",
]
