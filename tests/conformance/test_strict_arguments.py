"""Strict arguments (issue 14): the advertised input schema is the contract.

A value of the wrong JSON type for any parameter of any tool is refused with ``invalid_argument``
naming the field and the expected type (a hypothesis property over every app); the schema a
client sees and the server's validation agree (the conformance check, and a deliberately lax
tool that it catches); the coercion case end to end over the SDK's stdio client.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from pydantic import ConfigDict, create_model

from mcpgym.kernel.app import app_names, get_app
from mcpgym.kernel.errors import ToolError
from mcpgym.kernel.spec import json_type_name
from mcpgym.kernel.world import World
from mcpgym.tools.conformance import check_schema_agreement, example_arguments
from mcpgym.tools.invoke import ToolInvoker
from mcpgym.tools.mcp_bridge import payload_of
from tests.support.mcp_helpers import stdio_params

APPS = app_names()
PARAMS = [
    (app, tool, name)
    for app in APPS
    for tool, spec in sorted(get_app(app).tools.items())
    for name in sorted(spec.input_schema().get("properties", {}))
]
JSON_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")


def _allowed(schema: dict[str, Any]) -> set[str]:
    """JSON types a property schema allows (``integer`` implied by ``number``)."""
    branches = schema.get("anyOf", [schema])
    found: set[str] = set()
    for b in branches:
        kind = b.get("type")
        if kind is None and "enum" in b:
            kind = "string"
        found.add(kind)
    if "number" in found:
        found.add("integer")
    return found


def _values_of(kind: str) -> st.SearchStrategy[Any]:
    return {
        "null": st.none(),
        "boolean": st.booleans(),
        "integer": st.integers(-(10**6), 10**6),
        "number": st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not f.is_integer()),
        "string": st.text(max_size=12),
        "array": st.lists(st.one_of(st.integers(), st.text(max_size=4)), max_size=3),
        "object": st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
    }[kind]


@st.composite
def wrong_type_call(draw: st.DrawFn) -> tuple[str, str, str, dict[str, Any], Any]:
    app, tool, name = draw(st.sampled_from(PARAMS))
    spec = get_app(app).tools[tool]
    schema = spec.input_schema()["properties"][name]
    allowed = _allowed(schema)
    wrong = [k for k in JSON_TYPES if k not in allowed]
    kind = draw(st.sampled_from(wrong))
    value = draw(_values_of(kind))
    return app, tool, name, schema, value


def test_every_app_has_typed_parameters() -> None:
    assert len(PARAMS) > 200
    assert {a for a, _, _ in PARAMS} == set(APPS)


@functools.cache
def _base_arguments(app: str, tool: str) -> dict[str, Any]:
    """Plausible arguments of ``tool`` in a seed-3 world (cached: worlds take time to build)."""
    world = _world(app)
    return example_arguments(get_app(app).tools[tool], world, "strict")


@functools.cache
def _world(app: str) -> World:
    return World(3, ["system"] if app == "system" else ["system", app])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wrong_type_call())
def test_a_value_of_the_wrong_json_type_is_refused_for_any_parameter(case: tuple) -> None:
    app, tool, name, schema, value = case
    spec = get_app(app).tools[tool]
    args = {**_base_arguments(app, tool), name: value}
    with pytest.raises(ToolError) as info:
        spec.validate_arguments(args)
    err = info.value.payload()
    assert err["code"] == "invalid_argument"
    assert err["field"] == name, (tool, args, err)
    assert f"{name}: expected " in err["message"] and f"got {json_type_name(value)}" in err["message"], err["message"]


@pytest.mark.parametrize("app", APPS)
def test_advertised_schema_and_server_validation_agree(app: str) -> None:
    assert check_schema_agreement(app) == []


def test_schema_agreement_check_catches_a_coercing_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = get_app("shop").tools["shop_add_to_cart"]
    lax = create_model(
        "LaxArguments", __config__=ConfigDict(extra="forbid"), item_id=(str, ...), quantity=(int, 1)
    )  # pydantic's lax mode: "3" -> 3, True -> 1
    monkeypatch.setattr(spec, "input_model", lax)
    problems = check_schema_agreement("shop")
    mine = [p for p in problems if p.startswith("shop_add_to_cart:")]
    assert any('"quantity": "3"' in p and "refuses it but the server accepts it" in p for p in mine), problems
    assert any('"quantity": true' in p for p in mine), problems
    assert all(p.startswith("shop_add_to_cart:") for p in problems)


def test_integral_float_passes_and_others_are_refused_in_process() -> None:
    inv = ToolInvoker(World(11, ["system", "shop"]))
    item = example_arguments(inv.specs["shop_add_to_cart"], inv.world, 0)["item_id"]
    for bad, got in ((True, "boolean"), ("3", "string"), (2.5, "number"), ([2], "array")):
        out = inv.call("shop_add_to_cart", {"item_id": item, "quantity": bad})
        assert out.is_error and out.payload["error"]["code"] == "invalid_argument"
        assert out.payload["error"]["field"] == "quantity"
        assert out.payload["error"]["message"].endswith(f"quantity: expected integer, got {got}")
    assert (
        inv.world.apps["shop"].state.model_dump()["cart"]
        == inv.world.apps["shop"].generate(inv.world).model_dump()["cart"]
    )


async def test_coercion_case_over_stdio_with_the_sdk_client() -> None:
    async with Client(stdio_params("--seed", "11")) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert listed["shop_add_to_cart"].input_schema["properties"]["quantity"]["type"] == "integer"
        search = await client.call_tool("shop_search_items", {"query": "a"})
        item = search.structured_content["items"][0]["item_id"]
        answers = {}
        for value in (True, "3", 2.5):
            res = await client.call_tool("shop_add_to_cart", {"item_id": item, "quantity": value})
            assert res.is_error
            answers[json.dumps(value)] = payload_of(res)["error"]
        assert {a["code"] for a in answers.values()} == {"invalid_argument"}
        assert {a["field"] for a in answers.values()} == {"quantity"}
        assert "expected integer, got string" in answers['"3"']["message"]
        assert "expected integer, got boolean" in answers["true"]["message"]
        res = await client.call_tool("shop_get_item", {"item_id": 101})
        assert res.is_error and payload_of(res)["error"]["field"] == "item_id"
        assert "expected string, got integer" in payload_of(res)["error"]["message"]
        ok = await client.call_tool("shop_add_to_cart", {"item_id": item, "quantity": 2.0})
        assert not ok.is_error
        cart = (await client.call_tool("shop_get_cart", {})).structured_content
        assert [(line["item_id"], line["quantity"]) for line in cart["lines"]] == [(item, 2)]
