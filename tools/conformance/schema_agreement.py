"""Conformance check: the input schema a client sees and the validation the server applies agree.

A client validates (or a model is prompted) with the ``inputSchema`` of ``tools/list``; the
server validates with :meth:`mcpgym.kernel.spec.ToolSpec.validate_arguments`. When the two
disagree, a call the schema allows is refused (a false ``invalid_argument``), or a call the
schema forbids is quietly coerced (``"3"`` taken for ``3``, ``true`` for ``1``) and the
agent's invalid call is never counted. :func:`check_schema_agreement` probes every argument of
every tool with a value of each JSON type and the values at the edges of the schema's bounds,
and compares the verdict of a JSON-schema validator (``jsonschema``, draft 2020-12, on the
schema of :func:`mcpgym.tools.mcp_bridge.mcp_tool`) with the server's.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from jsonschema import Draft202012Validator

from mcpgym.kernel.errors import ToolError
from mcpgym.kernel.spec import ToolSpec
from mcpgym.kernel.world import World
from mcpgym.tools.conformance.args import example_arguments, known_values, resolve
from mcpgym.tools.conformance.common import app_cls, short, world_apps
from mcpgym.tools.mcp_bridge import mcp_tool

JSON_TYPE_PROBES: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    1,
    -1,
    2.0,
    2.5,
    "",
    "3",
    "true",
    "x",
    [],
    ["a"],
    [1],
    {},
    {"a": 1},
)
"""One or more values of every JSON type, substituted for each argument in turn."""


def edge_values(schema: dict[str, Any], defs: dict[str, Any]) -> Iterator[Any]:
    """Values on and just past the bounds of one argument's schema (minimum/maximum, string
    lengths, enum members and a non-member, array sizes), for every branch of an ``anyOf``."""
    schema = resolve(schema, defs)
    for branch in schema.get("anyOf", schema.get("oneOf", [])):
        yield from edge_values(branch, defs)
    for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        if isinstance(schema.get(key), (int, float)):
            bound = schema[key]
            yield from (bound - 1, bound, bound + 1, float(bound))
    for key in ("minLength", "maxLength"):
        if isinstance(schema.get(key), int):
            n = schema[key]
            yield from ("a" * max(0, n - 1), "a" * n, "a" * (n + 1))
    for key in ("minItems", "maxItems"):
        if isinstance(schema.get(key), int):
            n = schema[key]
            yield from (["a"] * max(0, n - 1), ["a"] * n, ["a"] * (n + 1))
    if isinstance(schema.get("enum"), list):
        yield from schema["enum"]
        yield "not-a-member"


def probes(spec: ToolSpec, schema: dict[str, Any], base: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Argument objects to test: ``base``, each argument replaced by every JSON-type probe and
    edge value, each required argument left out, and an unknown extra argument."""
    defs = schema.get("$defs", {})
    yield dict(base)
    yield {**base, "__unexpected__": 1}
    for name in schema.get("required", []):
        yield {k: v for k, v in base.items() if k != name}
    for name, prop in sorted(schema.get("properties", {}).items()):
        for value in (*JSON_TYPE_PROBES, *edge_values(prop, defs)):
            yield {**base, name: value}


def server_accepts(spec: ToolSpec, arguments: dict[str, Any]) -> bool:
    """Whether the server's validation accepts ``arguments`` (no tool is run)."""
    try:
        spec.validate_arguments(arguments)
    except ToolError:
        return False
    return True


def check_schema_agreement(app: str | type, seed: int = 5, salts: int = 2) -> list[str]:
    """For every tool of ``app``, compare the advertised input schema with the server's validation.

    Args:
        app: a registered app name (or class).
        seed: world seed of the examples' ids.
        salts: base argument sets per tool (from :func:`example_arguments`).

    Returns:
        One problem per disagreement, e.g. ``shop_add_to_cart: {"quantity": "3"}: the
        advertised schema refuses it but the server accepts it``; empty when they agree.
    """
    cls = app_cls(app)
    world = World(seed, world_apps(cls.name))
    known = known_values(world, cls.name)
    problems: list[str] = []
    for name, spec in sorted(cls.tools.items()):
        schema = mcp_tool(spec).input_schema
        validator = Draft202012Validator(schema)
        seen: set[str] = set()
        for salt in range(salts):
            base = example_arguments(spec, world, f"agree-{salt}", known)
            for args in probes(spec, schema, base):
                key = short(args) + repr(sorted((k, type(v).__name__) for k, v in args.items()))
                if key in seen:
                    continue
                seen.add(key)
                client_ok = validator.is_valid(args)
                if client_ok != server_accepts(spec, args):
                    verdict = (
                        "the advertised schema allows it but the server refuses it"
                        if client_ok
                        else "the advertised schema refuses it but the server accepts it"
                    )
                    problems.append(f"{name}: {short(args)}: {verdict}")
                    if len(problems) >= 50:
                        return problems
    return problems


__all__ = ["JSON_TYPE_PROBES", "check_schema_agreement", "edge_values", "probes", "server_accepts"]
