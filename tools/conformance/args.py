"""Tool arguments for the conformance checks, derived from each tool's input JSON schema.

Three sources, all deterministic:

- :func:`example_arguments`: one plausible argument set per ``(tool, salt)``, drawn with
  :func:`mcpgym.kernel.rng.stable_uniform` and filled with ids that exist in the world (a
  ``contact_id`` argument gets a ``contact_id`` value found in the app state), so scripted
  calls reach real code paths;
- :func:`arguments_strategy`: a hypothesis strategy generating schema-valid arguments (with
  known ids mixed in), for property-based calls;
- :func:`hostile_arguments`: a fixed list of malformed calls (wrong types, huge numbers,
  NaN, overlong and control-character strings, unknown and missing fields, non-objects);
- :func:`long_text_arguments`: valid calls whose string arguments are long (typical lengths
  and the schema's ``maxLength`` itself, :data:`mcpgym.kernel.spec.MAX_STRING` unless the tool
  says less) and full of unicode, one argument at a time.

Generated strings cover the whole accepted range: most are short (up to 30 characters), the
others typical (31-500) or long (up to and just under the limit), all drawn from all of
unicode, so that a tool body that breaks past some length is reached (the hostile 12,000
characters are refused before the tool runs).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from mcpgym.kernel.rng import stable_uniform
from mcpgym.kernel.spec import MAX_STRING, ToolSpec
from mcpgym.kernel.world import World

MAX_KNOWN = 40
"""Most known values kept per key (the first ones in canonical order)."""
BOGUS_ID = "does-not-exist-0"
"""A value no app knows: exercises ``not_found`` paths."""

HOSTILE_VALUES: tuple[Any, ...] = (
    None,
    -1,
    2**63,
    1e308,
    float("nan"),
    float("inf"),
    "",
    " ",
    "x" * 12_000,
    "\x00\u202e\U0001f642'\"; DROP",
    True,
    [None, 1, "a"],
    {"nested": {"deep": [1]}},
)
"""Values substituted for each argument in turn by :func:`hostile_arguments`."""

SHORT_TEXT = 30
"""Longest string of the short kind hypothesis draws (the most common kind)."""
TYPICAL_TEXT = 500
"""Longest string of the typical kind (31 to this many characters)."""
LONG_TEXT_LENGTHS: tuple[int, ...] = (64, 300)
"""Lengths :func:`long_text_arguments` tries below the limit (then the limit itself)."""
UNICODE_TEXT = "Grüße aus Köln, naïve café — 東京の天気 🙂👍🏽 e\u0301 Ω≈ç√ ∑ «quoted» 'x' "
"""Repeated to make long valid strings: accents, CJK, astral emoji with a modifier, a combining
mark, symbols and quotes (control characters are the hostile values' job)."""


# -- known values --------------------------------------------------------------------------
def known_values(world: World, app: str) -> dict[str, list[str]]:
    """Strings found in ``app``'s state (and the people directory), grouped by the key they sit
    under, plus the values the app derives (:meth:`mcpgym.kernel.app.App.derived_values`, e.g.
    dated flight ids and served dates, which the state does not hold).

    A dict field's keys are also recorded under the field name and its singular
    (``privileges`` -> ``privilege``). Order is canonical (sorted keys), so the result does
    not depend on the process.

    Returns:
        key name -> up to :data:`MAX_KNOWN` distinct strings; ``"*"`` holds every short string.
    """
    out: dict[str, list[str]] = {}

    def add(key: str, value: str) -> None:
        if not value or len(value) > 64:
            return
        bucket = out.setdefault(key, [])
        if len(bucket) < MAX_KNOWN and value not in bucket:
            bucket.append(value)

    def walk(node: Any, key: str) -> None:
        if isinstance(node, dict):
            for k in sorted(node):
                if isinstance(node[k], dict) and key:
                    add(key, k)
                    if key.endswith("s"):
                        add(key[:-1], k)
                walk(node[k], k)
        elif isinstance(node, list):
            for item in node:
                walk(item, key)
        elif isinstance(node, str):
            add(key, node)
            add("*", node)

    app_obj = world.apps.get(app)
    if app_obj is not None:
        walk(app_obj.state_dump(), "")
        derived = app_obj.derived_values()
        for key in sorted(derived):
            for value in derived[key]:
                add(key, value)
    for p in world.people:
        add("person_id", p.person_id)
    return out


def candidates_for(name: str, known: dict[str, list[str]]) -> list[str]:
    """Known strings that suit an argument called ``name`` (exact key, ``<name>_id``, singular,
    ``*_<name>``; for a name containing ``date`` with none of those, the values under ``date``)."""
    keys = [name, f"{name}_id"]
    if name.endswith("_ids"):
        keys.append(name[:-1])
    if name.endswith("s"):
        keys.append(name[:-1])
    for key in keys:
        if known.get(key):
            return known[key]
    suffix = "_" + (name[:-1] if name.endswith("_ids") else name)
    for key in sorted(known):
        if key.endswith(suffix) and known[key]:
            return known[key]
    if "date" in name and name != "date":
        return known.get("date", [])
    return []


# -- schema helpers ------------------------------------------------------------------------
def resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """Follow a local ``$ref`` (``#/$defs/X``) once; other schemas are returned as they are."""
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target = defs.get(ref.split("/")[-1], {})
        merged = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        return merged
    return schema


def _bounds(schema: dict[str, Any], integer: bool) -> tuple[float, float]:
    lo = schema.get("minimum", schema.get("exclusiveMinimum", -1000))
    hi = schema.get("maximum", schema.get("exclusiveMaximum", 1000))
    if "exclusiveMinimum" in schema:
        lo = lo + 1 if integer else lo + 1e-6
    if "exclusiveMaximum" in schema:
        hi = hi - 1 if integer else hi - 1e-6
    return lo, hi


# -- deterministic examples ----------------------------------------------------------------
def example_value(
    schema: dict[str, Any], defs: dict[str, Any], name: str, known: dict[str, list[str]], salt: tuple[Any, ...]
) -> Any:
    """A plausible value for ``schema`` (argument ``name``), chosen by stable draws on ``salt``."""
    schema = resolve(schema, defs)

    def u(tag: str) -> float:
        return stable_uniform("conformance", *salt, tag)

    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        options = list(schema["enum"])
        return options[int(u("enum") * len(options))]
    if "anyOf" in schema or "oneOf" in schema:
        branches = [resolve(b, defs) for b in schema.get("anyOf", schema.get("oneOf", []))]
        real = [b for b in branches if b.get("type") != "null"] or branches
        return example_value(real[int(u("branch") * len(real))], defs, name, known, salt + ("b",))
    kind = schema.get("type")
    if kind == "boolean":
        return u("bool") < 0.5
    if kind == "integer":
        lo, hi = _bounds(schema, True)
        lo, hi = int(lo), int(hi)
        span = max(0, min(hi, lo + 50) - lo)
        return lo + int(u("int") * (span + 1)) if span else lo
    if kind == "number":
        lo, hi = _bounds(schema, False)
        return round(lo + u("num") * (hi - lo), 3)
    if kind == "string":
        if schema.get("format") == "date":
            return "2026-06-0" + str(1 + int(u("date") * 9))
        pool = candidates_for(name, known)
        if pool and u("bogus") >= 0.1:
            value = pool[int(u("pick") * len(pool))]
        elif pool:
            value = BOGUS_ID
        elif "date" in name:
            value = "2026-06-0" + str(1 + int(u("date") * 9))
        else:
            generic = known.get("*", [])
            value = generic[int(u("pick") * len(generic))] if generic and u("generic") < 0.5 else "example text"
        lo = int(schema.get("minLength", 0))
        hi = int(schema.get("maxLength", 10_000))
        value = value[:hi]
        return value + "x" * max(0, lo - len(value))
    if kind == "array":
        item = schema.get("items", {})
        n = max(int(schema.get("minItems", 0)), 1 + int(u("len") * 2))
        n = min(n, int(schema.get("maxItems", n)))
        return [example_value(item, defs, name, known, salt + ("item", i)) for i in range(n)]
    if kind == "object":
        return {}
    return "example"


_SCHEMAS: dict[int, tuple[ToolSpec, dict[str, Any]]] = {}


def input_schema(spec: ToolSpec) -> dict[str, Any]:
    """``spec.input_schema()``, computed once per spec object (pydantic schema generation is slow)."""
    hit = _SCHEMAS.get(id(spec))
    if hit is None or hit[0] is not spec:
        hit = (spec, spec.input_schema())
        _SCHEMAS[id(spec)] = hit
    return hit[1]


def example_arguments(
    spec: ToolSpec, world: World, salt: Any = 0, known: dict[str, list[str]] | None = None
) -> dict[str, Any]:
    """One deterministic, plausible argument set for ``spec`` in ``world`` (see the module docstring).

    Required arguments are always present; each optional one is included with probability 1/2.
    ``known`` (from :func:`known_values`) may be passed to save recomputing it.
    """
    schema = input_schema(spec)
    defs = schema.get("$defs", {})
    if known is None:
        known = known_values(world, spec.app)
    required = set(schema.get("required", []))
    args: dict[str, Any] = {}
    for name in sorted(schema.get("properties", {})):
        if name not in required and stable_uniform("conformance", spec.name, name, salt, "include") < 0.5:
            continue
        args[name] = example_value(schema["properties"][name], defs, name, known, (spec.name, name, salt))
    return args


# -- hypothesis strategies -----------------------------------------------------------------
def value_strategy(
    schema: dict[str, Any], defs: dict[str, Any], name: str, known: dict[str, list[str]], depth: int = 0
) -> Any:
    """A hypothesis strategy of values valid for ``schema`` (known ids mixed in for strings)."""
    from hypothesis import strategies as st

    schema = resolve(schema, defs)
    if depth > 4:
        return st.none()
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(list(schema["enum"]))
    if "anyOf" in schema or "oneOf" in schema:
        branches = schema.get("anyOf", schema.get("oneOf", []))
        return st.one_of([value_strategy(b, defs, name, known, depth + 1) for b in branches])
    kind = schema.get("type")
    if kind == "null":
        return st.none()
    if kind == "boolean":
        return st.booleans()
    if kind == "integer":
        lo, hi = _bounds(schema, True)
        return st.integers(
            min_value=int(lo) if "minimum" in schema or "exclusiveMinimum" in schema else -(2**40),
            max_value=int(hi) if "maximum" in schema or "exclusiveMaximum" in schema else 2**40,
        )
    if kind == "number":
        lo, hi = _bounds(schema, False)
        return st.floats(
            min_value=lo if not math.isinf(lo) else None,
            max_value=hi if not math.isinf(hi) else None,
            allow_nan=False,
            allow_infinity=False,
        )
    if kind == "string":
        lo = int(schema.get("minLength", 0))
        hi = int(schema.get("maxLength", MAX_STRING))
        texts = text_strategy(lo, hi)
        if schema.get("format") == "date" or "date" in name:
            texts = st.one_of(texts, st.dates().map(lambda d: d.isoformat()))
        pool = [v for v in candidates_for(name, known) if lo <= len(v) <= hi]
        return st.one_of(st.sampled_from(pool), texts) if pool else texts
    if kind == "array":
        item = schema.get("items", {})
        lo = int(schema.get("minItems", 0))
        hi = int(schema.get("maxItems", lo + 3))
        return st.lists(
            value_strategy(item, defs, name, known, depth + 1), min_size=lo, max_size=max(lo, min(hi, lo + 3))
        )
    if kind == "object":
        return st.dictionaries(
            st.text(max_size=8), st.one_of(st.none(), st.integers(), st.text(max_size=8)), max_size=3
        )
    return st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=20))


def _repeated(n: int, chunk: str) -> str:
    """``chunk`` repeated to exactly ``n`` characters (code points)."""
    return (chunk * (n // len(chunk) + 1))[:n]


def text_strategy(lo: int, hi: int) -> Any:
    """A hypothesis strategy of strings of ``lo`` to ``hi`` characters (a schema's
    ``minLength``/``maxLength``) over all of unicode, in four kinds drawn alike: short (up to
    :data:`SHORT_TEXT`), typical (to :data:`TYPICAL_TEXT`), long (to ``hi``) and just under or
    at ``hi``. A long string repeats a drawn unicode chunk (1-16 characters) to a drawn length:
    drawing 10,000 characters one by one would cost hypothesis seconds per example."""
    from hypothesis import strategies as st

    hi = max(lo, hi)
    kinds = [st.text(min_size=lo, max_size=max(lo, min(hi, SHORT_TEXT)))]
    chunks = st.text(min_size=1, max_size=16)
    for a, b in (
        (SHORT_TEXT + 1, TYPICAL_TEXT),
        (TYPICAL_TEXT + 1, hi),
        (hi - 2, hi),
    ):
        a, b = max(a, lo), min(b, hi)
        if a <= b:
            kinds.append(st.builds(_repeated, st.integers(min_value=a, max_value=b), chunks))
    return st.one_of(kinds)


def arguments_strategy(spec: ToolSpec, known: dict[str, list[str]]) -> Any:
    """A hypothesis strategy of argument dicts valid for ``spec``'s input schema."""
    from hypothesis import strategies as st

    schema = input_schema(spec)
    defs = schema.get("$defs", {})
    props = schema.get("properties", {})
    required = set(schema.get("required", []))
    req = {n: value_strategy(s, defs, n, known) for n, s in sorted(props.items()) if n in required}
    opt = {n: value_strategy(s, defs, n, known) for n, s in sorted(props.items()) if n not in required}
    return st.fixed_dictionaries(req, optional=opt)


# -- hostile calls ---------------------------------------------------------------------------
def hostile_arguments(spec: ToolSpec, world: World, known: dict[str, list[str]] | None = None) -> Iterator[Any]:
    """Malformed argument payloads for ``spec``: non-objects, unknown/missing fields, and every
    argument replaced in turn by each of :data:`HOSTILE_VALUES` (the others kept plausible;
    ``known`` as in :func:`example_arguments`)."""
    base = example_arguments(spec, world, "hostile", known)
    yield from ([], "not an object", 42, None)
    yield {**base, "__unexpected__": 1}
    required = input_schema(spec).get("required", [])
    if required:
        yield {k: v for k, v in base.items() if k != required[0]}
    for name in sorted(input_schema(spec).get("properties", {})):
        for value in HOSTILE_VALUES:
            yield {**base, name: value}


def _string_schema(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any] | None:
    """The free-text string schema ``schema`` accepts (itself, or its string branch of an
    ``anyOf``/``oneOf``), or None (not a string, or an enum, a constant or a date)."""
    schema = resolve(schema, defs)
    for branch in schema.get("anyOf", schema.get("oneOf", [])):
        found = _string_schema(branch, defs)
        if found is not None:
            return found
    if schema.get("type") != "string" or "enum" in schema or "const" in schema or schema.get("format"):
        return None
    return schema


def long_text_arguments(spec: ToolSpec, world: World, known: dict[str, list[str]] | None = None) -> Iterator[Any]:
    """Valid calls of ``spec`` with long unicode text: each free-text string argument in turn
    (in a list of strings, its first item) set to :data:`UNICODE_TEXT` repeated to each of
    :data:`LONG_TEXT_LENGTHS` and to the schema's ``maxLength`` (:data:`MAX_STRING` by
    default), kept within its ``minLength``; the other arguments plausible, as in
    :func:`example_arguments` (``known`` the same)."""
    schema = input_schema(spec)
    defs = schema.get("$defs", {})
    base = example_arguments(spec, world, "long-text", known)
    for name, prop in sorted(schema.get("properties", {}).items()):
        prop = resolve(prop, defs)
        text = _string_schema(prop, defs)
        items = None
        if text is None and prop.get("type") == "array":
            text = _string_schema(prop.get("items", {}), defs)
            items = max(1, int(prop.get("minItems", 1)))
        if text is None:
            continue
        lo = int(text.get("minLength", 0))
        hi = int(text.get("maxLength", MAX_STRING))
        for n in sorted({max(lo, min(hi, length)) for length in (*LONG_TEXT_LENGTHS, hi)}):
            value = _repeated(n, UNICODE_TEXT)
            yield {**base, name: value if items is None else [value] * items}
