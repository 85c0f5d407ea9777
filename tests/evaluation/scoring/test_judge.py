"""The outcome judge on real ``system`` worlds and on hand-made comparable states."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from mcpgym.evaluation.scoring.judge import ExtraCheck, diff_states, flatten, judge, run_checks
from mcpgym.kernel.world import World
from mcpgym.tools.invoke import ToolInvoker

SEED = 7


def _run(calls: list[tuple[str, dict]]) -> tuple[dict, dict]:
    """Run ``calls`` (faults off) on a fresh system world; return (initial, final) snapshots."""
    world = World(SEED, ["system"])
    initial = world.snapshot()
    inv = ToolInvoker(world, "none")
    for name, args in calls:
        out = inv.call(name, args)
        assert not out.is_error, out.payload
    # a JSON round trip, as the snapshot travels over the control API and through JSONL files
    return json.loads(json.dumps(initial)), json.loads(json.dumps(world.snapshot()))


TRANSFER = ("system_transfer_from_savings", {"amount_cents": 5000})


@pytest.fixture(scope="module")
def gold() -> tuple[dict, dict]:
    return _run([TRANSFER])


def test_gold_transfer_changes_three_fields(gold):
    initial, gold_snap = gold
    # wallet.balance_cents (+5000), wallet.savings_cents (-5000) and one added transaction
    # {"amount_cents": 5000, "memo": "transfer from savings"}: 3 fields. The clock, the
    # transaction's id/time and id_counter are volatile or not part of the state compared.
    res = judge(initial, initial, gold_snap)
    assert (res.total, res.recall, res.misbehave, res.success) == (3, 0, 0, False)
    assert res.missed == [
        "/system/transactions[+] "
        + json.dumps({"amount_cents": 5000, "memo": "transfer from savings"}, separators=(",", ":")),
        "/system/wallet/balance_cents",
        "/system/wallet/savings_cents",
    ]


def test_agent_does_the_transfer(gold):
    initial, gold_snap = gold
    _, final = _run([TRANSFER])
    res = judge(initial, final, gold_snap)
    assert (res.total, res.recall, res.misbehave, res.success) == (3, 3, 0, True)


def test_volatile_only_differences_do_not_count(gold):
    initial, gold_snap = gold
    # An extra payment authorisation (payment_auths is volatile) and a re-authentication
    # (authenticated_at volatile) draw ids first, so the transaction id differs from gold's:
    # the transactions dict is VOLATILE_KEYS, compared as a multiset of its non-volatile values.
    _, final = _run([("system_authorize_payment", {"limit_cents": 100}), ("system_authenticate", {}), TRANSFER])
    assert final["state"]["system"]["transactions"].keys() != gold_snap["state"]["system"]["transactions"].keys()
    res = judge(initial, final, gold_snap)
    assert (res.total, res.recall, res.misbehave, res.success) == (3, 3, 0, True)


def test_agent_does_something_else(gold):
    initial, gold_snap = gold
    _, final = _run([("system_update_setting", {"key": "theme", "value": "dark"})])
    res = judge(initial, final, gold_snap)
    # 3 gold fields missed; the theme is a field gold left alone: misbehave 1
    assert (res.total, res.recall, res.misbehave, res.success) == (3, 0, 1, False)
    assert res.misbehaved == ["/system/settings/theme"]


def test_agent_does_nothing(gold):
    initial, gold_snap = gold
    res = judge(initial, initial, gold_snap)
    assert (res.total, res.recall, res.misbehave, res.success) == (3, 0, 0, False)


def test_wrong_amount_is_a_wrong_value_not_misbehaviour(gold):
    initial, gold_snap = gold
    _, final = _run([("system_transfer_from_savings", {"amount_cents": 3000})])
    res = judge(initial, final, gold_snap)
    # balance and savings changed to wrong values (gold changed them too); the 3000-cent
    # transaction takes the place of the missed 5000-cent one: 0 recalled, 0 misbehaviour
    assert (res.total, res.recall, res.misbehave) == (3, 0, 0)


def test_duplicate_transfer(gold):
    initial, gold_snap = gold
    _, final = _run([TRANSFER, TRANSFER])
    res = judge(initial, final, gold_snap)
    # balance/savings wrong (-); the multiset gets two equal transactions where gold added
    # one: 1 recalled, and the second is an addition beyond gold's: misbehave 1
    assert (res.total, res.recall, res.misbehave, res.success) == (3, 1, 1, False)
    assert len(res.misbehaved) == 1 and res.misbehaved[0].startswith("/system/transactions[+]")


def test_right_thing_plus_extra_change(gold):
    initial, gold_snap = gold
    _, final = _run([TRANSFER, ("system_mark_notification_read", {"notification_id": "n-1"})])
    res = judge(initial, final, gold_snap)
    assert (res.total, res.recall, res.misbehave, res.success) == (3, 3, 1, False)
    assert res.misbehaved == ["/system/notifications/n-1/read"]


def test_extra_checks_gate_success(gold):
    initial, gold_snap = gold
    _, final = _run([TRANSFER])
    ok = judge(
        initial,
        final,
        gold_snap,
        checks=[{"kind": "number", "value": 50}],
        final_message="Moved $50.00 to your wallet.",
    )
    assert ok.success is True and [c.passed for c in ok.checks] == [True]
    bad = judge(initial, final, gold_snap, checks=[ExtraCheck(kind="contains", value="savings")], final_message="Done.")
    assert bad.success is False and (bad.recall, bad.total) == (3, 3)


def test_flatten_paths_and_multisets():
    flat = flatten({"a": {"b": 1, "c/d": None, "e": {}}, "l": [{"x": 1}, {"x": 1}, 2]})
    # the empty dict contributes no path; "/" in a key is escaped as in JSON pointer
    assert set(flat) == {"/a/b", "/a/c~1d", "/l"}
    assert flat["/l"] == Counter({'{"x":1}': 2, "2": 1})


def test_multiset_rules_by_hand():
    i = {"s": {"m": ["a", "b"], "v": 1}}
    # gold removes b; the agent removes a instead: the removal of b is missed (total 1,
    # recall 0) and removing a, kept by gold, is misbehaviour (1)
    res = diff_states(i, {"s": {"m": ["b"], "v": 1}}, {"s": {"m": ["a"], "v": 1}})
    assert (res.total, res.recall, res.misbehave) == (1, 0, 1)
    # gold adds c and d, the agent adds c, x, y: c recalled; x takes the place of the
    # missed d (wrong value), y is beyond it: misbehave 1
    res = diff_states(i, {"s": {"m": ["a", "b", "c", "x", "y"], "v": 1}}, {"s": {"m": ["a", "b", "c", "d"], "v": 1}})
    assert (res.total, res.recall, res.misbehave) == (2, 1, 1)
    # 1 vs 1.0 are the same JSON number; True vs 1 are not the same value
    res = diff_states({"v": 1}, {"v": True}, {"v": 1.0})
    assert (res.total, res.recall, res.misbehave) == (0, 0, 1)
    # a key that appears (MISSING -> value) is one field; a deleted key too
    res = diff_states({"d": {"k1": 1}}, {"d": {"k2": 2}}, {"d": {"k1": 1, "k2": 2}})
    assert (res.total, res.recall, res.misbehave) == (1, 1, 1)


def test_extra_check_kinds():
    results = run_checks(
        [
            {"kind": "contains", "value": "ORDER"},
            {"kind": "not_contains", "value": "error"},
            {"kind": "regex", "value": r"ord-[0-9a-f]{8}"},
            {"kind": "number", "value": 1234.5, "tolerance": 0.01},
            {"kind": "number", "value": 7},
            {"kind": "declares_impossible", "value": False},
        ],
        "Your order ord-1a2b3c4d totals $1,234.50.",
    )
    assert [r.passed for r in results] == [True, True, True, True, False, True]
    refused = run_checks(
        [{"kind": "declares_impossible", "value": True}], "I'm unable to book that flight: it is full."
    )
    assert refused[0].passed is True


def test_initial_and_gold_states_are_validated_once_per_content(monkeypatch):
    """The judge keeps each app's initial and gold views by content (not object identity): equal
    snapshots held in new objects, as a fresh ``gold_snapshot(task)`` per episode, are not
    validated again; the final state is computed from its changed app only."""
    from mcpgym.evaluation.scoring import judge as judge_mod
    from mcpgym.kernel.world import World

    judge_mod.clear_judge_cache()
    computed = []
    real = judge_mod.comparable
    monkeypatch.setattr(judge_mod, "comparable", lambda state: computed.append(type(state).__name__) or real(state))
    results = []
    for _ in range(3):
        initial = World(5, ["system", "stocks"]).snapshot()
        gold = World(5, ["system", "stocks"]).snapshot()
        gold["state"]["system"]["settings"]["theme"] = "dark"
        final = World(5, ["system", "stocks"]).snapshot()
        final["state"]["system"]["settings"]["theme"] = "dark"
        results.append(judge_mod.judge(initial, final, gold, task="t-shared"))
    assert [(r.total, r.recall, r.misbehave, r.success) for r in results] == [(1, 1, 0, True)] * 3
    # initial and gold, two apps each, once; the final's system app changed: only its changed
    # field is recomputed (comparable_changed), the untouched stocks app reuses the initial view
    assert sorted(computed) == sorted(["SystemState", "StocksState"] * 2)
    assert results == [judge_mod.judge_restored(initial, final, gold)] * 3


def test_a_shared_state_is_restored_once_even_through_a_models_shallow_copy(monkeypatch):
    """A run hands the judge one gold/initial snapshot per task, but each Trajectory holds a
    shallow copy of it (pydantic copies the outer dict): the judge must still restore it once."""
    from pydantic import BaseModel

    from mcpgym.evaluation.scoring import judge as judge_mod
    from mcpgym.kernel.world import World

    class Holder(BaseModel):
        snapshot: dict

    snap = World(5, ["shop"]).snapshot()
    restores = []
    real = judge_mod.comparable_state
    monkeypatch.setattr(judge_mod, "comparable_state", lambda s: restores.append(1) or real(s))
    first = judge_mod.shared_comparable_state(Holder(snapshot=snap).snapshot)
    again = judge_mod.shared_comparable_state(Holder(snapshot=snap).snapshot)
    assert Holder(snapshot=snap).snapshot is not snap  # the copy the cache must see through
    assert again is first and len(restores) == 1
    # an equal state held in another object is computed again (identity, never a guess)
    other = World(5, ["shop"]).snapshot()
    assert judge_mod.shared_comparable_state(other) == first and len(restores) == 2


def test_an_equal_dump_takes_the_kept_ones_place():
    """A dump equal to a kept one (a new gold object equal to the warm-up's) gets the kept view
    and replaces the kept object, so its next call is found by identity, without a deep ``==``."""
    from mcpgym.evaluation.scoring import judge as judge_mod
    from mcpgym.kernel.world import World

    judge_mod.clear_judge_cache()
    first = World(5, ["system"]).snapshot()["state"]["system"]
    second = World(5, ["system"]).snapshot()["state"]["system"]
    assert first == second and first is not second
    view = judge_mod.comparable_app("system", first, ("gold", "t", 5))
    assert judge_mod.comparable_app("system", second, ("gold", "t", 5)) is view
    kept = judge_mod._app_cache[(("gold", "t", 5), "system")]
    assert [d for d, _ in kept] == [second] and kept[0][0] is second and kept[0][1] is view


def test_an_untouched_apps_diff_is_kept_per_view_pair():
    """An app the agent left alone is diffed once per (initial view, gold view); the verdict,
    counts and listed paths are those of the whole-world judge, call after call."""
    from mcpgym.evaluation.scoring import judge as judge_mod
    from mcpgym.kernel.world import World

    judge_mod.clear_judge_cache()
    initial = World(5, ["system", "stocks"]).snapshot()
    gold = World(5, ["system", "stocks"]).snapshot()
    gold["state"]["system"]["settings"]["theme"] = "dark"
    gold["state"]["stocks"]["account"]["cash_cents"] += 100
    final = World(5, ["system", "stocks"]).snapshot()
    final["state"]["system"]["settings"]["theme"] = "dark"
    final["state"]["stocks"] = initial["state"]["stocks"]
    first = judge_mod.judge(initial, final, gold, task="t-untouched")
    assert [key[0] for key in judge_mod._untouched] == ["stocks"]
    kept = next(iter(judge_mod._untouched.values()))[2]
    assert judge_mod.judge(initial, final, gold, task="t-untouched") == first
    assert next(iter(judge_mod._untouched.values()))[2] is kept and len(judge_mod._untouched) == 1
    assert (first.total, first.recall, first.misbehave, first.success) == (2, 1, 0, False)
    assert first.missed == ["/stocks/account/cash_cents"]
    assert first == judge_mod.judge_restored(initial, final, gold)
