"""Hypothesis strategies for tool calls (valid, invalid and hostile) and the checks every
outcome must pass. Shared by the in-process and the over-MCP fuzz tests.

A drawn call is ``(name, arguments)``. Arguments come from one of:

- ``valid``: schema-valid arguments (:func:`mcpgym.tools.conformance.args.arguments_strategy`, with
  ids that exist in the world mixed in), so calls reach the sandbox code;
- ``mutated``: valid arguments with one field replaced by a hostile value, an extra field
  added, or a required field dropped;
- ``hostile``: a hostile JSON value in place of the whole argument object (null, an array,
  a number, a huge string...), only where the transport allows it.

Hostile values: wrong types, huge strings (past every ``maxLength``), deep nesting, unicode
(control characters, bidi overrides, astral planes; lone surrogates in-process only: the MCP
SDK client cannot encode them, so raw JSON-RPC tests send them instead), NaN and infinities,
huge integers, null, arrays instead of objects, objects instead of scalars.
"""

from __future__ import annotations

import functools
import json
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck
from hypothesis import strategies as st

from mcpgym.kernel.errors import ERROR_CODES
from mcpgym.kernel.spec import ToolSpec
from mcpgym.tools.conformance.args import arguments_strategy, input_schema, known_values

FUZZ_SETTINGS = dict(
    deadline=None,
    database=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=list(HealthCheck),
)
"""Hypothesis settings of every fuzz test: deterministic in CI (``derandomize``), no deadline."""

NASTY_STRINGS = (
    "",
    " ",
    "\x00",
    "\x00\x01\x1f\x7f",
    "\u202e\u2066evil\u2069",
    "\ufeff",
    "\U0001f642" * 3,
    "e\u0301" * 5,
    "'; DROP TABLE users; --",
    "../../etc/passwd",
    "%s%n%x",
    "{{7*7}}${7*7}",
    "<script>alert(1)</script>",
    "null",
    "NaN",
    "Infinity",
    "-0",
    "1e309",
    "0x10",
    "true",
    "[]",
    "{}",
    "\\",
    '"',
    "\r\n\r\n",
    "system_get_wallet_balance",
    "ledger",
    "__proto__",
    "constructor",
)
"""Strings that commonly break parsers, templates, logs and shells."""


@dataclass(frozen=True)
class Recipe:
    """A large hostile value, built only when the call is made (:func:`materialize`), so that
    hypothesis can print a failing example without printing megabytes or recursing 3 000 deep.

    Kinds: ``deep-list`` / ``deep-dict`` (``leaf`` nested ``size`` levels), ``text`` (``leaf``
    repeated ``size`` times), ``wide`` (a list of ``size`` integers), ``huge-int`` (``leaf`` times
    ten to the ``size``).
    """

    kind: str
    size: int
    leaf: Any = None

    def build(self) -> Any:
        """The value this recipe stands for."""
        if self.kind == "text":
            return self.leaf * self.size
        if self.kind == "wide":
            return list(range(self.size))
        if self.kind == "huge-int":
            return self.leaf * 10**self.size
        value = self.leaf
        for _ in range(self.size):
            value = [value] if self.kind == "deep-list" else {"a": value}
        return value

    def __repr__(self) -> str:
        return f"<{self.kind} {self.size} {self.leaf!r:.20}>"


def materialize(value: Any) -> Any:
    """``value`` with every :class:`Recipe` inside it built."""
    if isinstance(value, Recipe):
        return value.build()
    if isinstance(value, dict):
        return {k: materialize(v) for k, v in value.items()}
    if isinstance(value, list):
        return [materialize(v) for v in value]
    return value


def safe_repr(value: Any, limit: int = 160) -> str:
    """A short repr for assertion messages that never raises (huge ints, deep nesting...)."""
    try:
        return repr(value)[:limit]
    except Exception:  # noqa: BLE001
        return f"<{type(value).__name__}>"


@functools.cache
def hostile_values(wire: bool) -> st.SearchStrategy[Any]:
    """Hostile JSON-ish values.

    Args:
        wire: True for values that go through the MCP SDK client (no lone surrogates, nesting
            at most 60 deep, strings at most 60 000 characters); False for in-process calls
            (also lone surrogates, nesting up to 3 000 deep, non-JSON Python values).
    """
    max_depth = 60 if wire else 3000
    text = st.text(alphabet=st.characters(codec="utf-8") if wire else st.characters(exclude_categories=()), max_size=40)
    leaves = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.sampled_from([2**31, 2**53 + 1, 2**63, -(2**63) - 1, 10**40, -(10**40)]),
        st.floats(allow_nan=True, allow_infinity=True),
        st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 1e308, 5e-324]),
        text,
        st.sampled_from(NASTY_STRINGS),
        st.integers(10_001, 60_000 if wire else 300_000).map(lambda n: Recipe("text", n, "x")),
        st.integers(1_000, 12_000 if wire else 60_000).map(lambda n: Recipe("text", n, "\U0001f642\u202e")),
    )
    if not wire:
        leaves = st.one_of(
            leaves,
            st.sampled_from(["\ud800", "a\udfffb", "\udc00\ud800", "ok\ud83d"]),
            st.sampled_from([1, -1]).map(
                lambda sign: Recipe("huge-int", 5000, sign)
            ),  # past the 4300-digit str() limit
            st.sampled_from([b"\xff\xfe", (1, 2), {1, 2}, object()]),
        )
    nested = st.recursive(
        leaves,
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.dictionaries(st.one_of(text, st.sampled_from(NASTY_STRINGS)), children, max_size=4),
        ),
        max_leaves=8,
    )
    deep = st.builds(
        Recipe,
        st.sampled_from(["deep-list", "deep-dict"]),
        st.integers(30, max_depth),
        st.one_of(st.none(), st.integers(), st.sampled_from(NASTY_STRINGS)),
    )
    wide = st.integers(100, 5_000).map(lambda n: Recipe("wide", n))
    return st.one_of(leaves, nested, deep, wide)


def hostile_names(specs: dict[str, ToolSpec], wire: bool) -> st.SearchStrategy[Any]:
    """Tool names an agent should not get anything from: unknown, hidden, malformed."""
    names = st.one_of(
        st.sampled_from(
            [
                "",
                " ",
                "no_such_tool",
                "system",
                "system_get_wallet_balance ",
                "SYSTEM_GET_WALLET_BALANCE",
                "search_tools",
                "shop_checkout\x00",
                "../control/episodes",
                "ledger",
                "get_ledger",
                "system_get_call_log",
                "a" * 65,
                "x" * 10_000,
            ]
        ),
        st.sampled_from(sorted(specs)).map(lambda n: n + "_"),
        st.text(alphabet=st.characters(codec="utf-8") if wire else st.characters(exclude_categories=()), max_size=30),
    )
    if not wire:
        names = st.one_of(
            names, st.sampled_from([None, 7, 2.5, ["system_get_wallet_balance"], {"name": "x"}, "\ud800"])
        )
    return names


ARGUMENT_MIX = ("valid",) * 6 + ("mutated",) * 3 + ("whole",)
"""How often each kind of argument object is drawn (6 valid : 3 mutated : 1 hostile whole)."""


def _mutations(spec: ToolSpec, valid: st.SearchStrategy[dict[str, Any]], wire: bool) -> st.SearchStrategy[Any]:
    """Valid arguments with one field replaced, one extra field, or one required field dropped."""
    hostile = hostile_values(wire)
    props = sorted(input_schema(spec).get("properties", {}))
    required = sorted(input_schema(spec).get("required", []))
    options: list[st.SearchStrategy[Any]] = []
    if props:
        options.append(st.tuples(valid, st.sampled_from(props), hostile).map(lambda t: {**t[0], t[1]: t[2]}))
    extra = st.one_of(st.sampled_from(NASTY_STRINGS[1:]), st.text(min_size=1, max_size=12)).filter(
        lambda k: k not in props
    )
    options.append(st.tuples(valid, extra, hostile).map(lambda t: {**t[0], t[1]: t[2]}))
    if required:
        options.append(
            st.tuples(valid, st.sampled_from(required)).map(lambda t: {k: v for k, v in t[0].items() if k != t[1]})
        )
    return st.one_of(options)


def arguments_for(spec: ToolSpec, known: dict[str, list[str]], wire: bool) -> st.SearchStrategy[Any]:
    """Arguments for one tool, drawn per :data:`ARGUMENT_MIX`: valid, mutated, or a whole
    argument object that is null, empty or (in-process) not an object at all."""
    valid = arguments_strategy(spec, known)
    whole = (
        st.one_of(st.none(), st.just({}))
        if wire
        else st.one_of(st.none(), st.just({}), hostile_values(wire).filter(lambda v: not isinstance(v, dict)))
    )
    branches = {"valid": valid, "mutated": _mutations(spec, valid, wire), "whole": whole}
    return st.sampled_from(ARGUMENT_MIX).flatmap(branches.__getitem__)


def _pair(name: str, arguments: Any) -> tuple[str, Any]:
    return name, arguments


def call_strategy(
    specs: dict[str, ToolSpec], focus: list[str], known: dict[str, list[str]], wire: bool
) -> st.SearchStrategy[tuple[Any, Any]]:
    """``(name, arguments)`` pairs: mostly tools in ``focus``, some other exposed tools of the
    episode, some hostile names with hostile or empty arguments."""
    # Build each tool's strategy once: a strategy made inside flatmap per draw would be
    # re-validated every time, which costs more than the calls themselves.
    per_tool = {
        name: arguments_for(specs[name], known, wire).map(functools.partial(_pair, name)) for name in sorted(specs)
    }
    focused = st.sampled_from(sorted(focus)).flatmap(per_tool.__getitem__)
    anywhere = st.sampled_from(sorted(specs)).flatmap(per_tool.__getitem__)
    bogus = st.tuples(
        hostile_names(specs, wire),
        st.one_of(st.just({}), st.none(), hostile_values(wire).filter(lambda v: isinstance(v, dict) or not wire)),
    )
    return st.one_of(focused, focused, focused, focused, focused, focused, anywhere, bogus)


def strict_json(value: Any) -> str:
    """Serialise ``value`` as strict JSON (no NaN/Infinity) that encodes to UTF-8; raise if it cannot."""
    text = json.dumps(value, allow_nan=False, ensure_ascii=False)
    text.encode("utf-8")
    return text


@dataclass
class FuzzTally:
    """What a fuzz run did: calls, successes and error codes per tool."""

    calls: int = 0
    ok: Counter = field(default_factory=Counter)
    errors: Counter = field(default_factory=Counter)
    called: Counter = field(default_factory=Counter)

    def add(self, name: Any, is_error: bool, code: str | None) -> None:
        """Count one call of ``name``."""
        self.calls += 1
        if isinstance(name, str):
            self.called[name] += 1
        if is_error:
            self.errors[str(code) if code is not None else None] += 1  # an ErrorCode is counted by its value
        elif isinstance(name, str):
            self.ok[name] += 1


def check_error_payload(payload: Any, where: str) -> str:
    """Assert ``payload`` is ``{"error": {code, message, retryable, retry_after, field}}`` with a
    known code and no sign of an internal error; return the code."""
    assert isinstance(payload, dict) and set(payload) == {"error"}, f"{where}: malformed error payload {payload!r:.300}"
    err = payload["error"]
    assert err["code"] in ERROR_CODES, f"{where}: unknown error code {err['code']!r}"
    assert isinstance(err["message"], str) and err["message"], where
    assert not err["message"].startswith("internal error"), f"{where}: {err['message'][:300]}"
    assert isinstance(err["retryable"], bool), where
    assert err["retry_after"] is None or (isinstance(err["retry_after"], int) and err["retry_after"] >= 0), where
    return err["code"]


def scaled(n: int) -> int:
    """``n`` times ``$MCPGYM_FUZZ_SCALE`` (default 1): run deeper fuzzing locally or nightly."""
    import os

    return max(1, int(n * float(os.environ.get("MCPGYM_FUZZ_SCALE", "1"))))


__all__ = [
    "FUZZ_SETTINGS",
    "FuzzTally",
    "Recipe",
    "arguments_for",
    "call_strategy",
    "check_error_payload",
    "hostile_names",
    "hostile_values",
    "known_values",
    "materialize",
    "safe_repr",
    "scaled",
    "strict_json",
]
