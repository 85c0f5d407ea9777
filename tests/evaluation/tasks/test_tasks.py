"""The task registry, the oracle language and gold states (evaluation/tasks, docs/tasks.md)."""

from __future__ import annotations

import copy
import textwrap
from pathlib import Path

import pytest

from mcpgym.evaluation.scoring.judge import comparable_state, diff_states
from mcpgym.evaluation.scoring.refusal import match_refusal
from mcpgym.evaluation.tasks import (
    KNOWN_TAGS,
    OracleRuntimeError,
    Task,
    TaskLoadError,
    execute,
    fault_seed_for,
    get_task,
    gold_run,
    gold_snapshot,
    initial_snapshot,
    load_file,
    load_tasks,
    oracle_calls,
    oracle_tools,
    parse_task,
    register_suite,
    suite_names,
    unregister_suite,
)
from mcpgym.evaluation.tasks.expr import EvalError, ExprError, compile_expr, compile_template, evaluate, render
from mcpgym.kernel.rng import stable_hash
from mcpgym.kernel.world import World

# World.state_hash() of every core task's gold world (oracle on the task's seed, faults off).
# A change here means the seed data, a tool's effect or an oracle changed: re-pin on purpose.
GOLD_HASHES = {
    "shop.buy_cheapest_earbuds": "7cdc50a17de9db1c501ed7be1adb8eeeb61f79dc1ac996e6d72c127ac46ded8f",
    "shop.buy_sold_out_mouse": "998d9e6d7f083fdc39442bcb17a5ca6a2c94b857e66dedfdc5f9aa6fd9d1c056",
    "shop.buy_two_if_in_stock": "cd7d66950dcee7e5aeefbb96cf40d0ccd27642f0cedc31d12885e681ee70abb1",
    "shop.buy_two_low_stock": "998d9e6d7f083fdc39442bcb17a5ca6a2c94b857e66dedfdc5f9aa6fd9d1c056",
    "shop.buy_two_tvs_unaffordable": "a891df17329dee48d2334b3fd245d7a3ebe17418af728494e2f6d65bffe66c15",
    "shop.laptop_with_savings": "c0490a4204b8eba8c3a7efc51ae9142938448700cd7eb14c4ac93d76c9749e23",
    "shop.best_toy_under_30": "275e0b1bed46bddd387e5e1d5e1b7ded0b6f3724247e9d4b237f21d2ff126645",
    "shop.star_shop": "af4fa56dbc0126355a6c74178e58d385e3412f0038fdf8cc7a730c1931bc2aef",
    "shop.star_top_rated": "26ba425f5feb2c07a083e8de5ccc44d86250bc23db3f2774db6f5040b4e0490c",
    "shop.unstar_sold_out": "6172ed7a08647d68790e7e1141aff52a5f34ae6d143d336dd9a4f46ff682ad59",
    "shop.last_order_total": "daeeef5c4a0636a0f22d77cd2fc12be01e2d45dc1a5051aca2cbd6dace1624df",
    "shop.return_latest_order": "2b5e309ffa92090c8e718d34cb1a389fe9ea4ecee940689aab8c14bdc8266328",
    "shop.return_expired_order": "fb69fb14c0a34f9033eafa5bdf126c78c3e2fdff8c44b7c69dde3a1316263d8d",
    "shop.cancel_delivered_order": "40d03cb07e076040501fa60c7243ae7be1665612254f525e7c46acf9e0381ff6",
    "shop.review_purchase": "fc0c834917700c8ee6f3f9d49116573d1acbc4545a038412667600369d248a59",
    "shop.buy_honey_and_review": "e0272e764698bf84d8068f913f6404700aeba01d5b67afc418c3c1a17b7145f9",
    "shop.reorder_last_order": "1129ce6b7bb4fef51571a3dcce9cd43890f8ab759b4e9e3ef1958729afa8f809",
    "shop.groceries_with_coupon": "ce2de822ea90c0f2ad8b9e312ce710914049b9ec5bd0dfe12705485729dfdbcc",
    "system.dark_mode": "f3fbe46c58bda1b04bb37789db0d4c50705fd8c509e3ff3d4f7ea3e445c947b6",
    "system.moved_to_porto": "6f205a116058774f3d278c305b0bb7fa8bf13c7a199872dd52b15456fa49fab2",
    "system.read_all_then_dnd": "768cd712a27a7a95f9fc0201741ea51e080828477f8807a935d93e340b5eb5f6",
    "system.top_up_balance": "d170407916317204396eeb9f8cd478fce1ccd671a5dd151737f632f1919bc560",
    "system.transfer_more_than_savings": "6cbc254b0af7fcd0d42a9e5f7d0aaf0c82f660259cf49acb2fd56778a3cc0eca",
}


# -- the registry ----------------------------------------------------------------------------
def _base_tasks() -> list[Task]:
    """The system/shop tasks of core (other apps' tasks are pinned in test_tasks_social.py
    and test_tasks_travel.py, the tasks that need the user in test_tasks_users.py)."""
    return [t for t in load_tasks() if set(t.apps) <= {"system", "shop"} and not t.id.startswith("users.")]


def test_core_suite_loads_with_the_promised_mix() -> None:
    tasks = _base_tasks()
    assert [t.id for t in tasks] == list(GOLD_HASHES)
    assert suite_names()[:3] == ["smoke", "baseline", "core"]
    assert {t.level for t in tasks} == {1, 2, 3}
    assert {a for t in tasks for a in t.apps} == {"system", "shop"}
    tags = {tag for t in tasks for tag in t.tags}
    assert {"verification", "recovery", "interdependency", "retrieval", "infeasible"} <= tags <= set(KNOWN_TAGS)
    infeasible = [t.id for t in tasks if not t.feasible]
    assert len(infeasible) == 6
    assert sum(t.feasible for t in tasks) == 17
    for t in tasks:
        assert t.apps[0] == "system" and t.max_calls == 40
        if not t.feasible:
            assert "infeasible" in t.tags
            assert any(c.kind == "declares_impossible" and c.value is True for c in t.checks)


def test_smoke_suite_and_lookup() -> None:
    smoke = load_tasks("smoke")
    core_ids = {t.id for t in load_tasks("core")}
    assert 5 <= len(smoke) <= 10 and {t.id for t in smoke} <= core_ids
    assert len({a for t in smoke for a in t.apps}) >= 5  # spread over several apps
    assert get_task("shop.star_shop") is next(t for t in load_tasks("core") if t.id == "shop.star_shop")
    with pytest.raises(KeyError, match=r"unknown task 'shop\.star_shops'; did you mean shop\.star_shop"):
        get_task("shop.star_shops")
    with pytest.raises(KeyError, match="known suites: smoke, baseline, core, full"):
        load_tasks("nightly")


def test_generator_suites_are_validated_and_listed() -> None:
    base = get_task("system.dark_mode").model_dump(mode="json")

    def make() -> list[Task]:
        return [Task.model_validate({**base, "id": f"gen.dark_{s}", "seed": s}) for s in (11, 12)]

    register_suite("gen_test", make)
    try:
        assert "gen_test" in suite_names()
        assert [t.seed for t in load_tasks("gen_test")] == [11, 12]
        assert get_task("gen.dark_12").seed == 12
        with pytest.raises(ValueError, match="already exists"):
            register_suite("core", make)
    finally:
        unregister_suite("gen_test")
    register_suite("gen_bad", lambda: [{"id": "not-a-task"}])  # type: ignore[list-item]
    try:
        with pytest.raises(TaskLoadError, match="item 0 is a dict, not a Task"):
            load_tasks("gen_bad")
    finally:
        unregister_suite("gen_bad")


def test_fault_seed_per_trial() -> None:
    t = get_task("shop.groceries_with_coupon")
    seeds = [fault_seed_for(t, k) for k in range(3)]
    assert seeds == [stable_hash(103, k) % 2**31 for k in range(3)]
    assert len(set(seeds)) == 3 and all(0 <= s < 2**31 for s in seeds)


def test_oracle_tools_cover_calls_alternatives_remedies_and_read_backs() -> None:
    t = get_task("shop.buy_two_if_in_stock")
    assert oracle_calls(t) == [
        "shop_list_shops",
        "shop_get_shop",
        "system_get_wallet_balance",
        "system_authorize_payment",
        "shop_buy_item",
        "shop_add_to_cart",
        "shop_checkout",
    ]
    tools = oracle_tools(t)
    assert set(oracle_calls(t)) <= set(tools)
    # remedies (wait, authenticate, payment cures), the read-back tools of the writes' families
    assert {
        "system_wait",
        "system_authenticate",
        "system_transfer_from_savings",
        "shop_get_cart",
        "shop_list_orders",
        "shop_get_item",
        "system_list_payment_authorizations",
    } <= set(tools)
    assert "shop_add_star" not in tools and "system_update_setting" not in tools
    dark = oracle_tools(get_task("system.dark_mode"))
    assert dark == ["system_authenticate", "system_get_settings", "system_update_setting", "system_wait"]


# -- gold states -----------------------------------------------------------------------------
@pytest.mark.parametrize("task_id", list(GOLD_HASHES))
def test_gold_state_is_pinned_and_consistent(task_id: str) -> None:
    task = get_task(task_id)
    run = gold_run(task)
    assert run.state_hash == GOLD_HASHES[task_id]
    assert World.restore(gold_snapshot(task)).state_hash() == GOLD_HASHES[task_id]
    res = diff_states(
        comparable_state(initial_snapshot(task)),
        comparable_state(gold_snapshot(task)),
        comparable_state(gold_snapshot(task)),
    )
    message = run.outcome.message or ""
    if task.feasible:
        assert run.outcome.kind == "answer" and match_refusal(message) is None
        assert res.total >= (0 if "retrieval" in task.tags else 1)
    else:
        assert run.outcome.kind == "refuse" and match_refusal(message) is not None
        assert res.total == 0  # change nothing
    assert all(c.evaluate(message) for c in task.checks), (task_id, message)


def test_gold_is_reproducible_from_scratch() -> None:
    task = get_task("shop.reorder_last_order")
    fresh = Task.model_validate(task.model_dump(mode="json"))
    assert fresh == task
    from mcpgym.evaluation.tasks import clear_caches

    clear_caches()
    again = gold_run(fresh)
    assert again.state_hash == GOLD_HASHES["shop.reorder_last_order"]
    assert again.calls == [
        "shop_list_orders",
        "shop_get_item",
        "shop_get_item",
        "system_get_wallet_balance",
        "shop_add_to_cart",
        "shop_add_to_cart",
        "system_authorize_payment",
        "shop_checkout",
    ]
    assert gold_snapshot(fresh) is not gold_snapshot(fresh)  # callers get copies


def test_gold_run_rejects_a_feasible_task_whose_oracle_refuses() -> None:
    data = get_task("shop.buy_sold_out_mouse").model_dump(mode="json")
    data.update(id="broken.mouse", feasible=True, tags=["verification"], checks=[])
    data["oracle"].insert(-1, {"if": "False", "then": [{"answer": "never"}]})
    task = parse_task(data)
    with pytest.raises(OracleRuntimeError, match="ended with 'refuse'.*feasible task must end with 'answer'"):
        gold_run(task)


def test_gold_run_names_a_failing_call() -> None:
    data = get_task("system.dark_mode").model_dump(mode="json")
    data.update(id="broken.dark")
    data["oracle"][0]["args"]["value"] = "purple"
    with pytest.raises(
        OracleRuntimeError,
        match=r"task 'broken\.dark': oracle step oracle\[0\]: system_update_setting "
        r"failed: invalid_argument",
    ):
        gold_run(parse_task(data))


# -- malformed task files ------------------------------------------------------------------
GOOD = """
tasks:
  - id: t.ok
    instruction: Switch to dark mode.
    apps: [system]
    seed: 3
    level: 1
    oracle:
      - call: system_get_settings
        save: s
      - if: s.settings.theme != 'dark'
        then:
          - call: system_update_setting
            args: {key: theme, value: dark}
      - answer: "Theme: dark (was {s.settings.theme})."
"""


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "tasks.yaml"
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


def test_a_good_file_loads(tmp_path: Path) -> None:
    (task,) = load_file(_write(tmp_path, GOOD))
    assert task.id == "t.ok" and task.apps == ["system"] and task.feasible
    assert gold_run(task).outcome.message == "Theme: dark (was light)."


@pytest.mark.parametrize(
    ("old", "new", "field", "problem"),
    [
        ("    seed: 3\n", "", "seed", "missing required field"),
        ("    level: 1\n", "    level: 1\n    colour: red\n", "colour", "unknown field"),
        (
            "call: system_update_setting",
            "call: system_update_settings",
            "oracle[1].then[0].call",
            "unknown tool 'system_update_settings'; did you mean system_update_setting",
        ),
        (
            "call: system_get_settings",
            "call: shop_get_cart",
            "oracle[0].call",
            "belongs to app 'shop', which is not among the task's apps (system)",
        ),
        (
            "s.settings.theme != 'dark'",
            "__import__('os').system('id')",
            "oracle[1].if",
            "call of \"__import__('os').system\" is not allowed",
        ),
        ("s.settings.theme != 'dark'", "s.settings.__class__", "oracle[1].if", "starting with '_'"),
        ("s.settings.theme != 'dark'", "open('/etc/passwd')", "oracle[1].if", "call of 'open' is not allowed"),
        ("s.settings.theme != 'dark'", "2 ** 99999", "oracle[1].if", "'**' is not allowed"),
        (
            "s.settings.theme != 'dark'",
            '"[x for x in s.settings].clear()"',
            "oracle[1].if",
            "call of '[x for x in s.settings].clear' is not allowed",
        ),
        ("s.settings.theme != 'dark'", "t.settings", "oracle[1].if", "name 't' is not defined by an earlier step"),
        (
            "{key: theme, value: dark}",
            "{key: theme, value: dark, colour: red}",
            "oracle[1].then[0].args.colour",
            "system_update_setting has no argument 'colour'",
        ),
        ("{key: theme, value: dark}", "{key: theme}", "oracle[1].then[0].args", "needs argument 'value'"),
        (
            "args: {key: theme, value: dark}",
            "args: {key: theme, value: dark}\n            save: r",
            "oracle[1].then[0].save",
            "save is not allowed on the write tool",
        ),
        (
            '      - answer: "Theme: dark (was {s.settings.theme})."\n',
            "",
            "oracle",
            "every path of the oracle must end with an 'answer' or a 'refuse' step",
        ),
        ("    apps: [system]\n", "    apps: [system]\n    feasible: false\n", "tags", "needs the 'infeasible' tag"),
        (
            "    apps: [system]\n",
            "    apps: [system]\n    feasible: false\n    tags: [infeasible]\n",
            "checks",
            "needs a check {kind: declares_impossible, value: true}",
        ),
        ("    level: 1\n", "    level: 1\n    tags: [verifcation]\n", "tags", "unknown tag 'verifcation'"),
        ("    level: 1\n", "    level: 4\n", "level", "less than or equal to 3"),
        (
            "      - call: system_get_settings\n        save: s\n",
            "      - call: system_get_settings\n        save: s\n        fallback: [{answer: x}]\n",
            "oracle[0].fallback",
            "declares no alternative",
        ),
        (
            "      - call: system_get_settings\n",
            "      - cal: system_get_settings\n",
            "oracle[0]",
            "a step needs exactly one of call, let, if, for, answer, refuse",
        ),
    ],
)
def test_malformed_task_is_rejected_naming_file_task_and_field(
    tmp_path: Path, old: str, new: str, field: str, problem: str
) -> None:
    text = textwrap.dedent(GOOD)
    assert old in text
    path = _write(tmp_path, text.replace(old, new, 1))
    with pytest.raises(TaskLoadError) as info:
        load_file(path)
    msg = str(info.value)
    assert msg.startswith(f"{path}: task 't.ok': field '{field}': "), msg
    assert problem in msg, msg


def test_malformed_files_and_ids(tmp_path: Path) -> None:
    p = tmp_path / "x.yaml"
    p.write_text("tasks: [\n", encoding="utf-8")
    with pytest.raises(TaskLoadError, match="not valid YAML"):
        load_file(p)
    p.write_text("tasks:\n  - instruction: hi\n", encoding="utf-8")
    with pytest.raises(TaskLoadError, match=r"task #1 \(no id\): field 'id': missing required field"):
        load_file(p)
    with pytest.raises(TaskLoadError, match="field 'id'"):
        load_file(_write(tmp_path, GOOD.replace("id: t.ok", "id: T OK")))


# -- the expression language ------------------------------------------------------------------
ENV = {
    "found": {
        "items": [
            {"item_id": "i-2", "name": "Mouse", "price_cents": 900, "stock": 0, "rating": 4.9},
            {"item_id": "i-1", "name": "Mouse", "price_cents": 1200, "stock": 3, "rating": 4.1},
            {"item_id": "i-3", "name": "Pad", "price_cents": 300, "stock": 9, "rating": 3.0},
        ]
    },
    "wallet": {"balance_cents": 100_050},
}


@pytest.mark.parametrize(
    ("source", "value"),
    [
        ("cheapest(found.items, name='Mouse')['item_id']", "i-2"),
        ("cheapest([i for i in found.items if i.stock > 0], name='Mouse').item_id", "i-1"),
        ("first(found.items, stock=9).name", "Pad"),
        ("first(where(found.items, name='Nope'))", None),
        ("count(found.items, name='Mouse')", 2),
        ("pluck(sorted(found.items, key='price_cents'), 'item_id')", ["i-3", "i-2", "i-1"]),
        ("max(found.items, key='rating').item_id", "i-2"),
        ("sum(found.items, key='stock')", 12),
        ("money(wallet.balance_cents)", "$1,000.50"),
        ("money(-5)", "-$0.05"),
        ("wallet.balance_cents >= 1000 and not len(found.items) < 3", True),
        ("any([i.stock == 0 for i in found.items])", True),
        ("'Pad' in pluck(found.items, 'name')", True),
        ("found.items[-1].price_cents // 7 % 5", 2),
        ("'x' if wallet.balance_cents > 1 else 'y'", "x"),
        ("join(pluck(found.items, 'name'), sep=' / ')", "Mouse / Mouse / Pad"),
        ("get(wallet, 'savings_cents', 0) + 1", 1),
        ("found.items[0:1][0].item_id", "i-2"),
    ],
)
def test_expressions_evaluate(source: str, value: object) -> None:
    assert evaluate(compile_expr(source), ENV) == value


@pytest.mark.parametrize(
    "source",
    [
        "__import__('os')",
        "found.items.pop()",
        "(lambda: 1)()",
        "2 ** 8",
        "(x := 3)",
        "f'{wallet}'",
        "{1, 2}",
        "found.__dict__",
        "_secret",
        "getattr(found, 'items')",
        "eval('1')",
        "[*found.items]",
        "min(**found)",
        "wallet.balance_cents @ 2",
        "~1",
        "1 <<",
        "",
    ],
)
def test_forbidden_expressions_are_rejected(source: str) -> None:
    with pytest.raises(ExprError):
        compile_expr(source)


def test_runtime_errors_and_templates() -> None:
    with pytest.raises(EvalError, match="no field 'balance'"):
        evaluate(compile_expr("wallet.balance"), ENV)
    with pytest.raises(EvalError, match="name 'nope' has no value"):
        evaluate(compile_expr("nope.x"), ENV)
    with pytest.raises(EvalError, match="repetition longer than"):
        evaluate(compile_expr("'ab' * 100000"), ENV)
    with pytest.raises(EvalError, match="ZeroDivisionError"):
        evaluate(compile_expr("1 // 0"), ENV)
    whole = compile_template("{wallet.balance_cents}")
    assert whole.whole and render(whole, ENV) == 100_050  # keeps the int
    mixed = compile_template("Pay {money(wallet.balance_cents)} {{not an expr}}")
    assert render(mixed, ENV) == "Pay $1,000.50 {not an expr}"
    with pytest.raises(ExprError, match="unclosed"):
        compile_template("{wallet")
    with pytest.raises(ExprError, match="single '}'"):
        compile_template("a } b")


def test_lenient_execution_skips_failed_steps() -> None:
    task = get_task("shop.buy_cheapest_earbuds")
    gen = execute(task, strict=False)
    req = next(gen)
    assert req.tool == "shop_search_items" and req.has_fallback

    class Err:
        is_error = True
        payload = {"error": {"code": "transient", "message": "boom"}}

    req = gen.send(Err())  # the search failed: 'found' is unbound, the logic that needs it is skipped
    assert req.tool == "system_get_wallet_balance"
    outcome = None
    try:
        while True:
            req = gen.send(Err())
    except StopIteration as stop:
        outcome = stop.value
    assert outcome.kind == "answer" and outcome.message is None
    assert any("shop_search_items failed: transient" in p for p in outcome.problems)
    assert any("cannot build the arguments of shop_buy_item" in p for p in outcome.problems)


def test_copy_of_task_data_is_not_shared() -> None:
    t = get_task("shop.star_top_rated")
    data = copy.deepcopy(t.model_dump(mode="json"))
    data["oracle"][0]["call"] = "shop_get_cart"
    parse_task(data)
    assert get_task("shop.star_top_rated").oracle[0].call == "shop_list_shops"
