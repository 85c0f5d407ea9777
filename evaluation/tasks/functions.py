"""The functions oracle expressions may call (:data:`FUNCTIONS`).

Python built-ins with JSON-friendly behaviour (``len min max sum sorted any all abs round int
str bool``; ``min``/``max``/``sorted``/``sum`` take ``key="field"``, a field name instead of a
function) and helpers over lists of JSON objects: ``first``, ``where``, ``count``,
``cheapest``, ``pluck``, ``money``, ``get``, ``join``, ``lower``. Each raises
:class:`mcpgym.evaluation.tasks.expr.EvalError` for input it cannot handle.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mcpgym.evaluation.tasks.errors import EvalError


def _matches(item: Any, eq: Mapping[str, Any]) -> bool:
    return isinstance(item, dict) and all(item.get(k) == v for k, v in eq.items())


def _seq(value: Any, fn: str) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return list(value)
    raise EvalError(f"{fn}() needs a list, got {type(value).__name__}")


def _keyed(fn: str, key: Any) -> Callable[[Any], Any] | None:
    if key is None:
        return None
    if not isinstance(key, str):
        raise EvalError(f"{fn}(key=...) must be a field name (a string)")

    def get(item: Any) -> Any:
        if not isinstance(item, dict) or key not in item:
            raise EvalError(f"{fn}(key={key!r}): an element has no field {key!r}")
        return item[key]

    return get


def h_first(items: Any, **eq: Any) -> Any:
    """``first(items, field=value, ...)``: the first element whose fields equal the given
    values (the first element when none are given), or None."""
    for item in _seq(items, "first"):
        if not eq or _matches(item, eq):
            return item
    return None


def h_where(items: Any, **eq: Any) -> list[Any]:
    """``where(items, field=value, ...)``: the elements whose fields equal the given values."""
    return [item for item in _seq(items, "where") if _matches(item, eq)]


def h_count(items: Any, **eq: Any) -> int:
    """``count(items, field=value, ...)``: how many elements match (all when none given)."""
    return sum(1 for item in _seq(items, "count") if not eq or _matches(item, eq))


def h_cheapest(items: Any, **eq: Any) -> Any:
    """``cheapest(items, field=value, ...)``: the matching element with the lowest
    ``price_cents`` (ties: lowest ``item_id``), or None when nothing matches."""
    found = [i for i in _seq(items, "cheapest") if _matches(i, eq)]
    for i in found:
        if not isinstance(i.get("price_cents"), (int, float)):
            raise EvalError("cheapest(): every element needs a numeric price_cents")
    if not found:
        return None
    return min(found, key=lambda i: (i["price_cents"], str(i.get("item_id", ""))))


def h_pluck(items: Any, field: str) -> list[Any]:
    """``pluck(items, "field")``: that field of every element."""
    get = _keyed("pluck", field)
    return [get(i) for i in _seq(items, "pluck")]  # type: ignore[misc]


def h_money(cents: Any) -> str:
    """``money(cents)``: an amount in integer cents as dollars, e.g. ``$1,234.56``."""
    if isinstance(cents, bool) or not isinstance(cents, (int, float)):
        raise EvalError(f"money() needs a number of cents, got {type(cents).__name__}")
    sign = "-" if cents < 0 else ""
    whole, frac = divmod(abs(int(round(cents))), 100)
    return f"{sign}${whole:,}.{frac:02d}"


def h_get(mapping: Any, key: Any, default: Any = None) -> Any:
    """``get(obj, "key", default)``: a key of an object, or ``default`` when absent."""
    if not isinstance(mapping, dict):
        raise EvalError(f"get() needs an object, got {type(mapping).__name__}")
    return mapping.get(key, default)


def h_join(items: Any, sep: Any = ", ") -> str:
    """``join(items, sep=", ")``: the elements as strings joined by ``sep``."""
    if not isinstance(sep, str):
        raise EvalError("join(sep=...) must be a string")
    return sep.join("" if i is None else str(i) for i in _seq(items, "join"))


def h_lower(text: Any) -> str:
    """``lower(text)``: the string in lower case."""
    if not isinstance(text, str):
        raise EvalError(f"lower() needs a string, got {type(text).__name__}")
    return text.lower()


def _b_min_max(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def inner(*args: Any, key: Any = None, default: Any = None) -> Any:
        seq = _seq(args[0], name) if len(args) == 1 else list(args)
        if not seq:
            return default
        k = _keyed(name, key)
        return fn(seq, key=k) if k else fn(seq)

    return inner


def b_sorted(items: Any, key: Any = None, reverse: bool = False) -> list[Any]:
    """``sorted(items, key="field", reverse=False)``."""
    seq = _seq(items, "sorted")
    k = _keyed("sorted", key)
    return sorted(seq, key=k, reverse=bool(reverse)) if k else sorted(seq, reverse=bool(reverse))


def b_sum(items: Any, key: Any = None) -> Any:
    """``sum(numbers)`` or ``sum(items, key="field")``."""
    seq = _seq(items, "sum")
    k = _keyed("sum", key)
    return sum(k(i) for i in seq) if k else sum(seq)


def b_len(value: Any) -> int:
    """``len(list | string | object)``."""
    if not isinstance(value, (list, tuple, str, dict)):
        raise EvalError(f"len() needs a list, string or object, got {type(value).__name__}")
    return len(value)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "len": b_len,
    "min": _b_min_max("min", min),
    "max": _b_min_max("max", max),
    "sum": b_sum,
    "sorted": b_sorted,
    "any": lambda items: any(_seq(items, "any")),
    "all": lambda items: all(_seq(items, "all")),
    "abs": abs,
    "round": round,
    "int": int,
    "str": str,
    "bool": bool,
    "first": h_first,
    "where": h_where,
    "count": h_count,
    "cheapest": h_cheapest,
    "pluck": h_pluck,
    "money": h_money,
    "get": h_get,
    "join": h_join,
    "lower": h_lower,
}
"""Every function an expression may call, by name."""
