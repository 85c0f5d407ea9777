"""Seeded fault injection (tools/faults.py, tools/invoke.py), checked on the throwaway
``faultlab`` app of tests/support/fault_app.py plus the ``system`` app.

The lab app is registered by a module fixture and unregistered in its teardown; it is never
imported at collection time, so tests that iterate over every registered app never see it.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpgym.kernel.world import World
from mcpgym.tools.faults import (
    BUILTIN_PROFILES,
    FaultProfile,
    FaultProfileError,
    FaultRates,
    ToolSchedule,
    fault_schedule,
    load_profile,
    plan_unavailable,
    scheduled_kind,
)
from mcpgym.tools.invoke import CallOutcome, ToolInvoker
from tests.conftest import ROOT

LAB = "faultlab"
ADD, INSERT, IMPORT = "faultlab_add_item", "faultlab_insert_item", "faultlab_import_items"
LIST, GET = "faultlab_list_items", "faultlab_get_item"
INC, COUNTER = "faultlab_increment_counter", "faultlab_get_counter"


@pytest.fixture(scope="module", autouse=True)
def lab():
    """Register the faultlab app for this module only."""
    from tests.support import fault_app

    fault_app.register()
    yield fault_app
    fault_app.unregister()


# -- helpers ---------------------------------------------------------------------------------
def make(faults: Any, fault_seed: int = 0, world_seed: int = 7) -> tuple[World, ToolInvoker]:
    world = World(world_seed, [LAB])
    return world, ToolInvoker(world, faults, fault_seed)


def only(tool: str, kind: str, rate: float = 1.0, **fields: Any) -> FaultProfile:
    """A profile with one non-zero rate: ``kind`` on ``tool``."""
    return FaultProfile(tools={tool: {kind: rate}}, **fields)


def ok(outcome: CallOutcome) -> dict[str, Any]:
    assert not outcome.is_error, outcome.payload
    return outcome.payload


def err(outcome: CallOutcome, code: str) -> dict[str, Any]:
    assert outcome.is_error, outcome.payload
    assert outcome.payload["error"]["code"] == code, outcome.payload
    return outcome.payload["error"]


def names(world: World) -> list[str]:
    return sorted(i.name for i in world.apps[LAB].state.items.values())


def ledger(inv: ToolInvoker, tool: str | None = None) -> list[tuple[int, str, bool | None, bool]]:
    return [(e.call_index, e.kind, e.applied, e.persisting) for e in inv.ledger if tool in (None, e.tool)]


def find_seed(profile: FaultProfile, tool: str, tool_kind: str, want: dict[int, str | None]) -> int:
    """The smallest fault seed whose schedule for ``tool`` has ``want[n]`` at every n."""
    count = max(want) + 1
    for seed in range(10_000):
        plan = fault_schedule(profile, seed, tool, LAB, tool_kind, count)
        if all(plan[n] == kind for n, kind in want.items()):
            return seed
    raise AssertionError(f"no fault seed below 10000 gives {want}")


# -- the decision rule -------------------------------------------------------------------------
@settings(max_examples=60)
@given(
    seed=st.integers(0, 2**32),
    rates=st.fixed_dictionaries(
        {k: st.sampled_from([0.0, 0.1, 0.3, 0.5]) for k in ("transient", "rate_limited", "stale_read")}
    ),
    cap=st.integers(1, 4),
)
def test_schedule_is_pure_capped_and_holds_one_stale_read_per_run(seed, rates, cap):
    profile = FaultProfile(rates=FaultRates(**rates), max_consecutive=cap)
    plan = fault_schedule(profile, seed, LIST, LAB, "read", 80)
    assert plan == ToolSchedule(profile, seed, LIST, LAB, "read").first(80)  # pure
    run, stale_in_run = 0, False
    for n, kind in enumerate(plan):
        raw = scheduled_kind(profile, seed, LIST, LAB, "read", n)
        if kind is None:
            # a None where the raw draw was a fault is the cap or the stale rule, nothing else
            assert raw is None or run == cap or (raw == "stale_read" and stale_in_run)
            run, stale_in_run = 0, False
        else:
            assert kind == raw
            run += 1
            assert run <= cap
            assert not (kind == "stale_read" and stale_in_run)
            stale_in_run = stale_in_run or kind == "stale_read"


def test_max_consecutive_caps_faults_in_a_row_per_tool():
    world, inv = make(only(INC, "transient", max_consecutive=3))
    errors = [inv.call(INC, {"by": 1}).is_error for _ in range(12)]
    assert errors == [True, True, True, False] * 3
    assert world.apps[LAB].state.counter == 3
    # another tool keeps its own count: its first call is not capped by INC's run
    _, inv2 = make(FaultProfile(tools={INC: {"transient": 1.0}, ADD: {"transient": 1.0}}, max_consecutive=1))
    assert [
        inv2.call(INC, {}).is_error,
        inv2.call(ADD, {"name": "a"}).is_error,
        inv2.call(INC, {}).is_error,
        inv2.call(ADD, {"name": "a"}).is_error,
    ] == [True, True, False, False]


# -- independence ------------------------------------------------------------------------------
# Calls of other tools, drawn by hypothesis. None of them is a cure for the tool under test
# in NO_CURES; WITH_CURES adds system_wait and system_authenticate.
NO_CURES = [
    (INC, {"by": 2}),
    (COUNTER, {}),
    (LIST, {}),
    (INSERT, {"name": "i"}),
    (IMPORT, {"names": ["x", "y"]}),
    (GET, {"item_id": "it-seed"}),
    (GET, {"item_id": "nope"}),
    ("system_get_wallet_balance", {}),
    ("system_update_setting", {"key": "theme", "value": "dark"}),
    ("system_authorize_payment", {"limit_cents": 500}),
    ("system_transfer_from_savings", {"amount_cents": 100}),
    (INC, {"by": 0}),
    ("no_such_tool", {}),
    ("system_get_time", {}),
]
WITH_CURES = NO_CURES + [("system_wait", {"seconds": 30}), ("system_wait", {"seconds": 7}), ("system_authenticate", {})]
OTHERS_FAULTED = {
    "transient": 0.15,
    "rate_limited": 0.1,
    "timeout": 0.1,
    "auth_challenge": 0.1,
    "lost_write": 0.1,
    "stale_read": 0.2,
}


def _run(
    profile: FaultProfile, seed: int, tool: str, own: list[dict], groups: list[list[tuple[str, dict]]]
) -> ToolInvoker:
    """Call ``tool`` with each of ``own`` in turn, each preceded by its group of other calls."""
    _, inv = make(profile, seed)
    for args, group in zip(own, groups, strict=False):
        for other, other_args in group:
            inv.call(other, other_args)
        inv.call(tool, args)
    return inv


def _outcomes(inv: ToolInvoker, tool: str) -> list[tuple]:
    entries = {e.step: e for e in inv.ledger}
    return [
        (
            c.call_index,
            c.is_error,
            c.error_code,
            c.fault,
            entries[c.step].applied if c.step in entries else None,
            entries[c.step].persisting if c.step in entries else None,
        )
        for c in inv.calls
        if c.tool == tool
    ]


OWN_ARGS = {ADD: [{"name": "bolt"}, {"name": "nut"}, {"name": ""}], LIST: [{}, {"bogus": 1}]}


@settings(max_examples=80)
@given(
    seed=st.integers(0, 2**32),
    tool=st.sampled_from([ADD, LIST]),
    picks=st.lists(st.integers(0, 2), min_size=1, max_size=12),
    groups=st.lists(st.lists(st.sampled_from(NO_CURES), max_size=4), min_size=12, max_size=12),
)
def test_other_tools_in_any_order_and_number_do_not_change_a_tools_faults(seed, tool, picks, groups):
    """Everything about a tool's calls (errors, faults, applied, persisting) is the same with or
    without other calls in between, when none of them cures its faults in force (long
    rate-limit windows, no system_wait/system_authenticate). For the read, the others do not
    write its resource family either (a write there is what a stale read shows), but they
    write other families, which must not make its reads stale."""
    profile = FaultProfile(
        rates=FaultRates(**OTHERS_FAULTED),
        tools={
            ADD: {"transient": 0.2, "timeout": 0.2, "lost_write": 0.15, "rate_limited": 0.05, "auth_challenge": 0.05},
            LIST: {"transient": 0.2, "rate_limited": 0.05, "stale_read": 0.5},
        },
        max_consecutive=2,
        retry_after=86_400,
    )
    own = [OWN_ARGS[tool][p % len(OWN_ARGS[tool])] for p in picks]
    skip = {tool, INSERT, IMPORT} if tool == LIST else {tool}
    groups = [[c for c in g if c[0] not in skip] for g in groups]
    alone = _run(profile, seed, tool, own, [[] for _ in own])
    mixed = _run(profile, seed, tool, own, groups)
    assert _outcomes(mixed, tool) == _outcomes(alone, tool)
    assert len(_outcomes(alone, tool)) == len(own)


@settings(max_examples=60)
@given(
    seed=st.integers(0, 2**32),
    tool=st.sampled_from([ADD, LIST]),
    count=st.integers(1, 12),
    groups=st.lists(st.lists(st.sampled_from(WITH_CURES), max_size=4), min_size=12, max_size=12),
)
def test_fault_decisions_follow_the_tools_own_schedule_even_with_cures_between(seed, tool, count, groups):
    """With cures in between, other tools may end a fault in force earlier (that is their job),
    but every call that reaches its own decision gets exactly ``schedule[call_index]``, and
    calls that reach it in both runs agree."""
    profile = FaultProfile(
        rates=FaultRates(**OTHERS_FAULTED),
        tools={
            ADD: {"transient": 0.15, "rate_limited": 0.15, "timeout": 0.15, "auth_challenge": 0.15, "lost_write": 0.1},
            LIST: {"transient": 0.15, "rate_limited": 0.15, "stale_read": 0.3},
        },
    )
    tool_kind = "write" if tool == ADD else "read"
    plan = fault_schedule(profile, seed, tool, LAB, tool_kind, count)
    args = {"name": "bolt"} if tool == ADD else {}
    groups = [[c for c in group if c[0] != tool] for group in groups]  # other tools only
    runs = [_run(profile, seed, tool, [args] * count, g) for g in ([[] for _ in range(count)], groups)]
    reached = []
    for inv in runs:
        seen = {}
        for index, _, _, fault, applied, persisting in _outcomes(inv, tool):
            if persisting:
                continue  # refused by a fault still in force: the decision was not consulted
            if plan[index] == "stale_read":
                assert fault in ("stale_read", None)  # injected only when an older, different version exists
            else:
                assert fault == plan[index]
            seen[index] = (fault, applied)
        reached.append(seen)
    common = reached[0].keys() & reached[1].keys()
    assert {i: reached[0][i] for i in common if plan[i] != "stale_read"} == {
        i: reached[1][i] for i in common if plan[i] != "stale_read"
    }


def test_the_schedule_does_not_depend_on_the_world_seed(lab):
    profile = load_profile("harsh")
    a = lab.run_script(1, 42, profile)["ledger"]
    b = lab.run_script(2, 42, profile)["ledger"]
    strip = lambda rows: [(r["tool"], r["call_index"], r["kind"]) for r in rows]  # noqa: E731
    assert a and strip(a) == strip(b)


# -- determinism across processes ---------------------------------------------------------------
PROFILE_ALL_KINDS = {
    "rates": {
        "transient": 0.1,
        "rate_limited": 0.05,
        "timeout": 0.1,
        "auth_challenge": 0.05,
        "lost_write": 0.1,
        "stale_read": 0.2,
        "unavailable": 0.5,
    },
    "max_consecutive": 2,
}
SNIPPET = """
import json, sys
from tests.support import fault_app  # importable: the subprocess runs with the repository as its cwd
print(json.dumps(fault_app.run_script(int(sys.argv[2]), int(sys.argv[3]), json.loads(sys.argv[4])), sort_keys=True))
"""


def _in_subprocess(world_seed: int, fault_seed: int, hash_seed: str) -> dict:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    out = subprocess.run(
        [sys.executable, "-c", SNIPPET, str(ROOT), str(world_seed), str(fault_seed), json.dumps(PROFILE_ALL_KINDS)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_same_seeds_and_calls_give_the_same_ledger_in_two_processes(lab):
    first = _in_subprocess(5, 11, "0")
    second = _in_subprocess(5, 11, "4242")
    assert first == second
    assert first == json.loads(json.dumps(lab.run_script(5, 11, PROFILE_ALL_KINDS), sort_keys=True))
    kinds = {row["kind"] for row in first["ledger"]}
    assert len(first["ledger"]) >= 5 and len(kinds) >= 3, first["ledger"]


def test_another_fault_seed_gives_another_schedule_over_the_same_world(lab):
    assert World(5, [LAB]).snapshot() == World(5, [LAB]).snapshot()
    ledgers = {seed: lab.run_script(5, seed, PROFILE_ALL_KINDS)["ledger"] for seed in (11, 12, 13)}
    assert ledgers[11] != ledgers[12] and ledgers[12] != ledgers[13] and ledgers[11] != ledgers[13]
    # the world seed fixed the data; the fault seed only the weather
    w11, w12 = make(PROFILE_ALL_KINDS, 11, 5), make(PROFILE_ALL_KINDS, 12, 5)
    assert w11[0].snapshot() == w12[0].snapshot()


# -- each kind, asserted on state ----------------------------------------------------------------
def test_timeout_on_checkout_applied_the_order_and_the_charge():
    world, inv = make(only("faultlab_place_order", "timeout"))
    price = world.apps[LAB].state.unit_price_cents
    balance = world.apps["system"].state.wallet.balance_cents
    auth = ok(inv.call("system_authorize_payment", {"limit_cents": 10_000}))["authorization"]["auth_id"]
    e = err(inv.call("faultlab_place_order", {"quantity": 2, "authorization_id": auth}), "timeout")
    assert e["retryable"] is True
    orders = ok(inv.call("faultlab_list_orders"))["orders"]
    assert [(o["quantity"], o["amount_cents"]) for o in orders] == [(2, 2 * price)]
    assert world.apps["system"].state.wallet.balance_cents == balance - 2 * price
    assert ledger(inv) == [(0, "timeout", True, False)]
    # a blind retry reuses the spent one-use authorisation: the real error wins, no fault is injected
    err(inv.call("faultlab_place_order", {"quantity": 2, "authorization_id": auth}), "precondition_failed")
    assert ledger(inv) == [(0, "timeout", True, False)]
    assert len(world.apps[LAB].state.orders) == 1


def test_timeout_then_a_blind_retry_makes_a_second_write():
    world, inv = make(only(ADD, "timeout"))  # max_consecutive 2: two timeouts, then a success
    before = names(world)
    err(inv.call(ADD, {"name": "bolt"}), "timeout")
    assert names(world) == sorted(before + ["bolt"])  # the write exists
    err(inv.call(ADD, {"name": "bolt"}), "timeout")  # blind retry
    assert names(world) == sorted(before + ["bolt", "bolt"])
    listed = ok(inv.call(LIST))["items"]  # a read shows the truth
    assert [i["name"] for i in listed].count("bolt") == 2
    ok(inv.call(ADD, {"name": "bolt"}))
    assert names(world).count("bolt") == 3
    assert ledger(inv) == [(0, "timeout", True, False), (1, "timeout", True, False)]


def test_lost_write_said_success_but_nothing_changed():
    world, inv = make(only(ADD, "lost_write"))
    lab_before = world.apps[LAB].state.model_dump()
    comparable_before = world.comparable()
    out = ok(inv.call(ADD, {"name": "ghost"}))
    assert out["item"]["name"] == "ghost"
    assert world.apps[LAB].state.model_dump() == lab_before
    assert world.comparable() == comparable_before
    assert "ghost" not in [i["name"] for i in ok(inv.call(LIST))["items"]]
    err(inv.call(GET, {"item_id": out["item"]["item_id"]}), "not_found")
    assert ledger(inv) == [(0, "lost_write", False, False)]


def test_transient_applies_nothing():
    world, inv = make(only(INC, "transient"))
    state_hash = world.state_hash()
    e = err(inv.call(INC, {"by": 5}), "transient")
    assert e["retryable"] is True
    assert world.state_hash() == state_hash  # not even the clock moved
    assert world.apps[LAB].state.counter == 0
    assert ledger(inv) == [(0, "transient", False, False)]


def test_rate_limited_blocks_until_the_clock_passes_retry_after_and_system_wait_cures_it():
    profile = only(ADD, "rate_limited", 0.5)
    seed = find_seed(profile, ADD, "write", {0: "rate_limited", 4: None})
    world, inv = make(profile, seed)
    before = names(world)
    assert err(inv.call(ADD, {"name": "a"}), "rate_limited")["retry_after"] == 30
    assert err(inv.call(ADD, {"name": "a"}), "rate_limited")["retry_after"] == 30  # the clock has not moved
    ok(inv.call(INC, {"by": 1}))  # another tool works, and its write moves the clock 5 s
    assert err(inv.call(ADD, {"name": "a"}), "rate_limited")["retry_after"] == 25
    ok(inv.call("system_wait", {"seconds": 24}))
    assert err(inv.call(ADD, {"name": "a"}), "rate_limited")["retry_after"] == 1
    assert names(world) == before  # nothing applied while limited
    ok(inv.call("system_wait", {"seconds": 1}))
    ok(inv.call(ADD, {"name": "a"}))
    assert names(world) == sorted(before + ["a"])
    assert ledger(inv, ADD) == [
        (0, "rate_limited", False, False),
        (1, "rate_limited", False, True),
        (2, "rate_limited", False, True),
        (3, "rate_limited", False, True),
    ]


def test_unavailable_is_down_all_episode_while_its_declared_alternative_works():
    for seed in range(5):
        world, inv = make(only(ADD, "unavailable"), seed)
        assert inv.down == {ADD}
        for _ in range(4):
            e = err(inv.call(ADD, {"name": "a"}), "unavailable")
            assert e["retryable"] is False and e["details"]["alternatives"] == [INSERT]
        assert ok(inv.call(INSERT, {"name": "b"}))["item"]["name"] == "b"
        assert names(world).count("b") == 1 and "a" not in names(world)
        assert ledger(inv) == [(0, "unavailable", False, False)] + [(i, "unavailable", False, True) for i in (1, 2, 3)]


def test_every_down_tool_keeps_a_working_alternative():
    """add -> insert -> import is a chain of alternatives; import has none. Even at rate 1 for
    all three, exactly one goes down and its alternative stays up (the old plan could put
    both add and insert down, leaving add without a working alternative)."""
    profile = FaultProfile(tools={t: {"unavailable": 1.0} for t in (ADD, INSERT, IMPORT)})
    specs = make("none")[1].specs
    seen = set()
    for seed in range(200):
        down = plan_unavailable(profile, seed, specs)
        assert len(down) == 1 and IMPORT not in down
        for tool in down:
            assert any(a in specs and a not in down for a in specs[tool].alternatives)
        seen |= down
    assert seen == {ADD, INSERT}
    # tools without alternatives are never down, whatever the rate
    assert plan_unavailable(FaultProfile(rates=FaultRates(unavailable=1.0)), 0, specs) <= {ADD, INSERT}


def test_auth_challenge_needs_system_authenticate():
    profile = only(ADD, "auth_challenge", 0.5)
    seed = find_seed(profile, ADD, "write", {0: "auth_challenge", 2: None})
    world, inv = make(profile, seed)
    before = names(world)
    e = err(inv.call(ADD, {"name": "a"}), "auth_required")
    assert "system_authenticate" in e["message"]
    err(inv.call(ADD, {"name": "a"}), "auth_required")  # still, until authenticated
    ok(inv.call(INC, {"by": 1}))  # other tools are not challenged
    assert names(world) == before
    ok(inv.call("system_authenticate"))
    ok(inv.call(ADD, {"name": "a"}))
    assert names(world) == sorted(before + ["a"])
    assert ledger(inv) == [(0, "auth_challenge", False, False), (1, "auth_challenge", False, True)]


def test_stale_read_shows_the_state_before_the_last_write_and_a_second_read_is_current():
    profile = FaultProfile(tools={LIST: {"stale_read": 1.0}, GET: {"stale_read": 1.0}})
    world, inv = make(profile)
    seeded = [i.name for i in world.apps[LAB].state.items.values()]
    ok(inv.call(ADD, {"name": "first"}))
    second = ok(inv.call(ADD, {"name": "second"}))["item"]
    ok(inv.call(INC, {"by": 1}))  # a later write to another resource does not hide the item write
    stale = [i["name"] for i in ok(inv.call(LIST))["items"]]
    assert stale == seeded + ["first"]  # the state before the last write to faultlab.item
    current = [i["name"] for i in ok(inv.call(LIST))["items"]]
    assert current == seeded + ["first", "second"]
    # a single item read right after its creation: the older version has no such item
    err(inv.call(GET, {"item_id": second["item_id"]}), "not_found")
    assert ok(inv.call(GET, {"item_id": second["item_id"]}))["item"]["name"] == "second"
    assert [(e.tool, e.call_index, e.kind, e.applied) for e in inv.ledger] == [
        (LIST, 0, "stale_read", None),
        (GET, 0, "stale_read", None),
    ]


def test_stale_read_without_an_older_version_injects_nothing():
    world, inv = make(FaultProfile(tools={LIST: {"stale_read": 1.0}}))
    ok(inv.call(INC, {"by": 1}))  # a write, but not to faultlab.item
    assert [i["name"] for i in ok(inv.call(LIST))["items"]] == [i.name for i in world.apps[LAB].state.items.values()]
    assert inv.ledger == [] and inv.calls[-1].fault is None


# -- profile files --------------------------------------------------------------------------------
def _toml(data: dict) -> str:
    lines: list[str] = []

    def table(prefix: str, body: dict) -> None:
        scalars = {k: v for k, v in body.items() if not isinstance(v, dict)}
        if scalars or not body:
            lines.append(f"[{prefix}]")
            lines.extend(f"{k} = {json.dumps(v)}" for k, v in scalars.items())
        for k, v in body.items():
            if isinstance(v, dict):
                table(f"{prefix}.{k}", v)

    lines.extend(f"{k} = {json.dumps(v)}" for k, v in data.items() if not isinstance(v, dict))
    for k, v in data.items():
        if isinstance(v, dict):
            table(k, v)
    return "\n".join(lines) + "\n"


WRITERS = {"toml": _toml, "json": json.dumps, "yaml": yaml.safe_dump}
BAD_PROFILES = {
    "unknown kind": (
        {"rates": {"transient": 0.1, "explode": 0.2}},
        "rates.explode",
        "0.2",
        "unknown fault kind 'explode'",
    ),
    "rate above 1": ({"rates": {"timeout": 1.5}}, "rates.timeout", "1.5", "[0, 1]"),
    "negative rate": ({"rates": {"timeout": -0.25}}, "rates.timeout", "-0.25", "[0, 1]"),
    "rate not a number": (
        {"rates": {"transient": "high"}},
        "rates.transient",
        '"high"',
        "a rate must be a number in [0, 1], not a string",
    ),
    "override with unknown kind": (
        {"tools": {ADD: {"explode": 0.5}}},
        f"tools.{ADD}.explode",
        "0.5",
        "unknown fault kind",
    ),
    "override rate out of range": ({"apps": {LAB: {"timeout": 2}}}, f"apps.{LAB}.timeout", "2", "[0, 1]"),
    "override not a table": ({"apps": {LAB: 0.3}}, f"apps.{LAB}", "0.3", "table"),
    "override of an unknown tool": (
        {"tools": {"faultlab_add_itme": {"timeout": 0.5}}},
        "tools.faultlab_add_itme",
        "{'timeout': 0.5}",
        "no tool named 'faultlab_add_itme'; closest: faultlab_add_item",
    ),
    "override of an unknown app": (
        {"apps": {"faultlub": {"timeout": 0.5}}},
        "apps.faultlub",
        "{'timeout': 0.5}",
        "no app named",
    ),
    "bad max_consecutive": ({"max_consecutive": 0}, "max_consecutive", "0", "greater than or equal to 1"),
    # were coerced: true to 1 fault in a row, "45" to 45 virtual seconds
    "max_consecutive a bool": (
        {"max_consecutive": True},
        "max_consecutive",
        "true",
        "valid integer, got a JSON boolean",
    ),
    "retry_after a string": ({"retry_after": "45"}, "retry_after", '"45"', "valid integer, got a JSON string"),
}


@pytest.mark.parametrize("fmt", sorted(WRITERS))
@pytest.mark.parametrize("case", sorted(BAD_PROFILES))
def test_a_bad_profile_file_names_the_file_the_field_and_the_value(tmp_path, fmt, case):
    data, field, value, why = BAD_PROFILES[case]
    path = tmp_path / f"bad.{fmt}"
    path.write_text(WRITERS[fmt](data), encoding="utf-8")
    with pytest.raises(FaultProfileError) as info:
        load_profile(path)
    message = str(info.value)
    assert str(path) in message and f"'{field}'" in message and f"= {value}" in message and why in message, message


def test_a_field_with_an_empty_name_is_named_so_not_the_top_level():
    # an inline profile (the control API's `faults` object) with the key "" (a hostile try's finding)
    with pytest.raises(FaultProfileError) as info:
        load_profile({"": 1})
    assert "field '' = 1: unknown field" in str(info.value) and "top level" not in str(info.value)


def test_rates_of_one_tool_adding_up_to_more_than_one_are_refused(tmp_path):
    path = tmp_path / "sum.toml"
    path.write_text(f"[rates]\ntransient = 0.5\n[tools.{ADD}]\ntimeout = 0.6\n", encoding="utf-8")
    with pytest.raises(
        FaultProfileError, match=re.escape(f"rates.transient = 0.5 + tools.{ADD}.timeout = 0.6")
    ) as info:
        load_profile(path)
    assert str(path) in str(info.value) and "1.1 > 1" in str(info.value)
    with pytest.raises(FaultProfileError, match="unknown fault profile 'gentle'"):
        load_profile("gentle")


@pytest.mark.parametrize("fmt", sorted(WRITERS))
def test_a_good_profile_file_loads_in_every_format(tmp_path, fmt):
    data = {
        "max_consecutive": 3,
        "retry_after": 45,
        "rates": {"transient": 0.05, "unavailable": 0.1},
        "apps": {LAB: {"timeout": 0.2}},
        "tools": {ADD: {"lost_write": 0.1, "timeout": 0.0}},
    }
    path = tmp_path / f"lab.{fmt}"
    path.write_text(WRITERS[fmt](data), encoding="utf-8")
    profile = load_profile(path)
    assert (profile.name, profile.source, profile.max_consecutive, profile.retry_after) == ("lab", str(path), 3, 45)
    assert profile.rate(ADD, LAB, "timeout") == 0.0  # tool beats app
    assert profile.rate(INC, LAB, "timeout") == 0.2  # app beats base
    assert profile.rate(INC, LAB, "transient") == 0.05  # base
    assert profile.rate("system_update_setting", "system", "timeout") == 0.0


def test_the_example_profile_in_docs_loads(tmp_path):
    text = (ROOT / "docs" / "faults.md").read_text(encoding="utf-8")
    block = re.search(r"```toml\n(.*?)```", text, re.S)
    assert block, "docs/faults.md has no ```toml example"
    path = tmp_path / "my-faults.toml"
    path.write_text(block.group(1), encoding="utf-8")
    profile = load_profile(path)
    assert profile.apps and profile.tools
    for tool, over in profile.tools.items():
        app = tool.split("_")[0]
        for kind, rate in over.items():
            assert profile.rate(tool, app, kind) == rate


# -- the default profile: faults per 10-call episode -----------------------------------------------
PLAN = [
    ("system_get_wallet_balance", {}),
    (LIST, {}),
    (ADD, {"name": "bolt"}),
    (COUNTER, {}),
    (INC, {"by": 2}),
    ("system_update_setting", {"key": "theme", "value": "dark"}),
    (ADD, {"name": "nut"}),
    (LIST, {}),
    ("system_transfer_from_savings", {"amount_cents": 500}),
    ("system_get_wallet_balance", {}),
]
"""A plausible 10-call episode: 5 reads, 5 writes, over two apps (one write has an alternative)."""


def faults_per_episode(profile: Any, seeds: range) -> list[int]:
    """Distinct injected faults (ledger entries not persisting) met by PLAN, per fault seed."""
    counts = []
    for seed in seeds:
        _, inv = make(profile, seed)
        for tool, args in PLAN:
            inv.call(tool, args)
        counts.append(sum(not e.persisting for e in inv.ledger))
    return counts


def test_default_profile_meets_one_or_two_faults_per_ten_calls():
    counts = faults_per_episode("default", range(500))
    mean = statistics.mean(counts)
    one_or_two = sum(c in (1, 2) for c in counts) / len(counts)
    assert 1.2 <= mean <= 1.7, mean
    assert one_or_two >= 0.55, one_or_two
    assert statistics.mean(faults_per_episode("none", range(20))) == 0
    assert statistics.mean(faults_per_episode("harsh", range(200))) > mean
    assert BUILTIN_PROFILES["default"].max_consecutive == 2
