"""Travel and money tasks (flights, stocks, cross-app) and the procedural templates.

Pins the gold state of every hand-written task of evaluation/tasks/data/flights.yaml,
stocks.yaml and cross_travel.yaml and of 20 template instances, checks the promised mix
(levels, tags, cross-app and infeasible tasks), the ``smoke`` and ``full`` suites (``full``:
>= 1,000 instances, unique ids, validated at load time without computing golds), template
determinism, and that the scripted ``careful`` agent reaches gold with faults off (and refuses
the infeasible ones without changing anything). docs/tasks.md has the figures measured under
the ``default`` profile.
"""

from __future__ import annotations

import re

import anyio
import pytest

from mcpgym.evaluation.agents import make_agent
from mcpgym.evaluation.agents.inprocess import run_in_process, score_in_process
from mcpgym.evaluation.scoring.judge import comparable_state
from mcpgym.evaluation.tasks import (
    get_task,
    gold_run,
    initial_snapshot,
    load_file,
    load_tasks,
    registry,
    template_task,
    template_tasks,
)
from mcpgym.evaluation.tasks.registry import DATA_DIR
from mcpgym.evaluation.tasks.templates import SEEDS_PER_TEMPLATE, TEMPLATES
from mcpgym.kernel.world import World

FILES = ("flights.yaml", "stocks.yaml", "cross_travel.yaml")

# World.state_hash() of each gold world (oracle on the task's seed, faults off). A change means
# the seed data, a tool's effect or an oracle changed: re-pin on purpose.
GOLD_HASHES = {
    "flights.cheapest_fare_lookup": "194797915b24e4df18deb7a9d4d182266ab99ef4abb6e60d4f401da264b31fdc",
    "flights.book_cheapest_berlin_paris": "8bcbb54e6cac400f2f47df5668b1265cfad2c195c7dc0f23d2431d030abb5af6",
    "flights.premium_for_two": "13b38f4c3ffb0df05b82fe1f11c6054cc6fd096ffba1650f01724bd4bb1d95f8",
    "flights.business_sold_out": "52f01437afc534f7696fcfd647b735f4a68a36d17ad059edf384f83e6963727e",
    "flights.booking_closed": "de8792ebddb92266d0f72271abd25de321b6d701e74e2ebc03d9160dbd9a199b",
    "flights.no_direct_route": "5fdc9f4a61314f0d39d4b7853de038b7e7962f9ac2f34c8e8c4b76d25ff5445b",
    "flights.business_within_balance_only": "a3481b0fe7da978b834f109e495a9309665033e6452fa14cf9967d46142c8c6e",
    "flights.top_up_then_book_business": "35f545288028417ddc0ac005b0355af76f4ddd678155eef4bbe81a7331c31f6e",
    "flights.business_if_cheap_enough": "52cfc768aaf19b20f6d500c3d13446e7e93ff225952546ad55f325ede72e5564",
    "flights.book_with_bags": "65cec68b12eca3acdcb0956375aacd576ca54e6e4583b21bd28ed50840192a54",
    "flights.new_companion_and_book": "cf0aa7a6d2f09f22841b73c6eba8922991289ed184711359caa3eb5a3b8bc190",
    "flights.book_and_check_in": "a5b85c2097584033650b12bb1ac24ec0672cd9d0a7d4d607b90ef14cec9cc75e",
    "flights.cheapest_in_date_range": "6315a4f3068aceefeb0157c23bf6919e61fd673dad5fe67afcfbabd95c2b1a9b",
    "flights.update_passenger_email": "8534558a8de51a6ec60b0d562331ee7275f2a324441689a79615c80ae9f10019",
    "flights.remove_saved_passenger": "d92f4bf046b5a66ccbdc1f340925d4a8568ae396d69d5134a9be1cd8897a1f2e",
    "stocks.portfolio_value": "cd69d59ac9f3e56d09932da6aef3cd9b85c96424e46067460fc7ea6ce2978484",
    "stocks.watch_novalith": "275cd8c8e1442040deae1bd8b0830a31d372a59311bdcf260cb140ff6a708e54",
    "stocks.buy_at_open": "d1006f65ae544834ae91c53f9bc39271a339f724ab49c6d7808a456c677ec369",
    "stocks.cheapest_tech_at_open": "77a61e01cd9926728226ee994c2218f52c148a3ac15f6890d6ee0122186cc18f",
    "stocks.cancel_pending_limit": "f96ef17168ef9c7fe69ada5ab5a74b565a19daf2b69c9d78380f84f8513f43e4",
    "stocks.cancel_filled_order": "197d6ee8bf7c3f964bcc39ca70c5fd4d9648c7a494991fc7487aa1d5bba91c89",
    "stocks.vip_for_big_order": "a2633544e400026fafde9b326dab7dd0a41eca8878199ef67fdfdafee409f7a2",
    "stocks.over_limit_no_deposit": "6ba84a57066e8c92bdde44bd26033e7fc987aa245870814564f49d22a3c7a3c9",
    "stocks.short_at_open": "11c218e193686192175cc23d4811b667488c0caf097758531020a012eb4d18e6",
    "stocks.sell_more_than_held": "197d6ee8bf7c3f964bcc39ca70c5fd4d9648c7a494991fc7487aa1d5bba91c89",
    "stocks.withdraw_to_wallet": "e6ee182663c8d3ca6c59d987f4e2990abbc053961ad0c4868635640933ae4724",
    "stocks.withdraw_too_much": "3406158b8e0721e88fcafb6ba41b0da104aa1ed7c48eefcae0970638c186b738",
    "stocks.sell_biggest_loser": "38cdb59e3c09468693853d4a61a75f182fa022c570fed78e184178143d8b575c",
    "stocks.limit_buy_below_quote": "3bc9bfb924154e0683cde12248b2b6b27084a7ff62746cfdf9f93342775802cb",
    "cross.flight_into_calendar": "549b59bc6444acf480c4d798d50015ba19185b59b2f95b54946b4b9b8ef508e6",
    "cross.brokerage_tops_up_wallet_for_flight": "fcacb73465906d654f3275621ade847e5ed7944c3bd3c8766100415cd639449e",
    "cross.sell_shares_to_fund_trip": "f9f874958ec3c79182a9f7f1f78f9c0f8028faa720e6ac581e0c18ca7e54295f",
    "cross.rain_jacket_for_dublin": "6478b90ea727a03cf1fea5523937fc6fd39c7dfc2b3327c365af098b4bdcb8d9",
    "cross.tell_companion_on_talk": "a4068df5a1cf8ca4d0696f326be61cdc9dbfffb6a625888048ea8035cbb45c76",
    "cross.email_itinerary_to_coworker": "c9cc12a6813f306a416ee89087021986b5b305ad0abe6b6f5157be7cb39b93a9",
    "cross.fly_to_the_warmer_city": "110d4355bb9d90aab7a87ed8e0ea57f6b2629f4435d09a656632694cbe223914",
    "cross.flight_only_if_calendar_free": "caa25a81e69eb9a908f6c17140abc0122f4f220f2df45b18b76d0b5c03ca22e6",
    "cross.stock_price_to_friend": "36f9c2ccc7a403271fcaa7b1ebffd15368c7b37e5a1cd34c6a6113eee1586d51",
    "cross.trip_city_weather_alerts": "5a2994e6bd8189177daf77aea50bce1d558a959915e65166b8a3bebf529cfba0",
    "cross.portfolio_value_by_mail": "fd5dd78a389587ee0b5f1b0fe77b7f9e7f0693e14da35551c443b5cf682491fd",
    "cross.sale_cannot_cover_business": "aa39a7b4576569ff52b149a3b6a6021f83b34e3c1e56885475287c1c90f42d5d",
}

# 20 template instances (two per template, infeasible ones included), pinned the same way.
TEMPLATE_HASHES = {
    "tmpl.shop_buy_if_affordable.s0003": "93c653abc809437e8126a6df9933e3cd12cebe5ba22650a197c015fdc3e95555",
    "tmpl.shop_buy_if_affordable.s0011": "0f4ff0cddb88a474ca8ec184b9fa202d8de3db95d0b68768c51a19fac115bd7b",
    "tmpl.system_top_up.s0008": "bc86f939876475cb1fb7dd64b44fb10ea81b9c8e98b3a1f3f4e4e31340cb5ef4",
    "tmpl.system_top_up.s0042": "2bef59fd81c9f5abc7b52885f0cf4032a550cf3f9dcc97db2cd2f4f4bc751e12",
    "tmpl.stocks_buy_cheapest_sector.s0005": "907ca5cfb47e94c54da7c7ad4ac7aeef39a457ce6cb9789dff9927a117f5ca87",
    "tmpl.stocks_buy_cheapest_sector.s0042": "4480292cd79851b97c75d353a8dbee2f35296d0e7d2b4b6c14d5363115c84e66",
    "tmpl.stocks_watchlist_add.s0011": "7fb37622cdf1112dd533b724fcddef02749ed96cc0be1e70ee08dbf929196d33",
    "tmpl.stocks_watchlist_add.s0073": "df92ffffdb27ee9a129167d681d630d648e1bcf11fc2b6fa91610d78b2cadfce",
    "tmpl.stocks_limit_buy.s0011": "9e2c6bbda4f4c512644b28ab51568fd50158e7cc6908a5c0b4cff0fe62407388",
    "tmpl.stocks_limit_buy.s0073": "dabfc7f2d28b1dfacd7b1c4e4b66adf0f4f65486294f8a0294a494a5dcef53de",
    "tmpl.flights_book_cheapest.s0011": "c350286030126434666fed874e8173725168e4195c2c6cc1f1c814977c958b73",
    "tmpl.flights_book_cheapest.s0073": "435ec643ab8619265488474721f577d5dcf36bc610d7989293dbecc498ff251b",
    "tmpl.flights_fare_lookup.s0011": "52f01437afc534f7696fcfd647b735f4a68a36d17ad059edf384f83e6963727e",
    "tmpl.flights_fare_lookup.s0073": "27b97b8ca6a764ea54ecc64fc2882f1d676f8deb2dc5133d37313409bc834456",
    "tmpl.weather_move_home.s0011": "c81874611ba3c5db14ad16db60a23812406b4e2873c32bea503544f396cf3bc9",
    "tmpl.weather_move_home.s0073": "1d1a47efc9614cd6f7df868b9c6cf92db154f2cd583024cbc45bb44b21412dd3",
    "tmpl.news_bookmark_latest.s0011": "52317b78022342d47aa43727d576342e24b426b8da780d872e9ce1b9148e329f",
    "tmpl.news_bookmark_latest.s0073": "5fca33b7e09a920f737662d0e6e087432c834c626c30b579604324928798ed91",
    "tmpl.talk_message_contact.s0003": "75c87de0aee8dc565d8df6060dcdae7c8e357abbf78f975dc5e87d8f76e73916",
    "tmpl.talk_message_contact.s0042": "b1c6605aaef8cc0d1312057e5c2fdbb8a49114631bfca7e8952178547eb87509",
}


def _travel_tasks() -> list:
    return [t for f in FILES for t in load_file(DATA_DIR / f)]


def _careful(task, faults: str = "none", trial: int = 0):  # noqa: ANN001, ANN202
    traj = anyio.run(lambda: run_in_process(make_agent("careful"), task, faults=faults, trial=trial))
    return traj, score_in_process(traj, task)


# -- the hand-written tasks ------------------------------------------------------------------
def test_travel_tasks_have_the_promised_mix() -> None:
    tasks = _travel_tasks()
    assert [t.id for t in tasks] == list(GOLD_HASHES)
    assert len(tasks) >= 35
    assert {t.level for t in tasks} == {1, 2, 3}
    cross = [t for t in tasks if len(set(t.apps) - {"system"}) >= 2]
    assert len(cross) >= 10
    assert {a for t in cross for a in t.apps} >= {"flights", "stocks", "office", "talk", "weather", "shop"}
    infeasible = [t for t in tasks if not t.feasible]
    assert len(infeasible) >= 5
    for t in infeasible:
        assert "infeasible" in t.tags
        assert any(c.kind == "declares_impossible" and c.value is True for c in t.checks)
    tags = {tag for t in tasks for tag in t.tags}
    assert {"verification", "recovery", "interdependency", "retrieval", "infeasible"} <= tags
    # every hand-written task is in core, and the core ids stay unique
    core = [t.id for t in load_tasks("core")]
    assert set(GOLD_HASHES) <= set(core) and len(core) == len(set(core))


@pytest.mark.parametrize("task_id", list(GOLD_HASHES))
def test_travel_gold_is_pinned_and_consistent(task_id: str) -> None:
    task = get_task(task_id)
    run = gold_run(task)
    assert run.state_hash == GOLD_HASHES[task_id]
    assert run.outcome.kind == ("answer" if task.feasible else "refuse")
    for check in task.checks:  # the oracle's own message passes the task's checks
        assert check.evaluate(run.outcome.message or ""), (task_id, check, run.outcome.message)
    before = comparable_state(initial_snapshot(task))
    after = comparable_state(run.snapshot)
    if not task.feasible or task.tags == ["retrieval"]:
        assert after == before  # refused or answered without changing anything
    else:
        assert after != before


def test_oracle_plans_read_only_what_their_logic_needs() -> None:
    # the logic's reads come before the writes; the one read after a write finds the booking's
    # generated id (needed for the bags), it is not a read-back: skipping verification is left
    # to the overconfident agent, which runs exactly these calls
    task = get_task("flights.book_with_bags")
    assert gold_run(task).calls == [
        "flights_find_cheapest_flight",
        "flights_get_fare_rules",
        "system_request_privilege",
        "system_authorize_payment",
        "flights_book_flight",
        "flights_list_bookings",
        "system_authorize_payment",
        "flights_add_baggage",
    ]
    assert gold_run(get_task("stocks.buy_at_open")).calls == [
        "system_request_privilege",
        "stocks_get_market_status",
        "system_wait",
        "stocks_buy_shares",
    ]


@pytest.mark.parametrize("task_id", list(GOLD_HASHES))
def test_careful_reaches_gold_without_faults(task_id: str) -> None:
    task = get_task(task_id)
    traj, sc = _careful(task)
    assert sc.success is True, (task_id, sc.missed, sc.misbehaved, traj.final_message)
    assert sc.error_calls == 0 and sc.invalid_calls == 0 and traj.status == "completed"
    assert sc.declared_impossible is (not task.feasible), (task_id, traj.final_message)
    assert sc.verification_skips == [] and sc.precheck_skips == []
    if not task.feasible:
        assert sc.writes == 0 and World.restore(traj.final_snapshot).state_hash() == GOLD_HASHES[task_id]


def test_careful_reads_bags_back_with_a_plain_read() -> None:
    # the read-back of flights_add_baggage is flights_get_booking, not flights_get_boarding_pass
    # (which fails with precondition_failed until check-in and once counted as defeatism)
    traj, sc = _careful(get_task("flights.book_with_bags"))
    tools = [s.tool for s in traj.steps]
    assert "flights_get_boarding_pass" not in tools
    bags = tools.index("flights_add_baggage")
    assert tools[bags - 1] == tools[bags + 1] == "flights_get_booking"
    assert sc.defeatism is False and sc.verification_rate == 1.0


def test_market_orders_wait_for_the_open_and_fill_at_the_first_quote() -> None:
    task = get_task("stocks.buy_at_open")
    before = World(task.seed, task.apps).apps["stocks"].state
    world = World.restore(gold_run(task).snapshot)
    stocks = world.apps["stocks"].state
    new = [o for o in stocks.orders.values() if o.order_id not in before.orders]
    assert [(o.symbol, o.side, o.quantity, o.status) for o in new] == [("CLDX", "buy", 5, "filled")]
    assert new[0].placed_at >= 1780306200  # 2026-06-01T09:30:00Z, the open
    assert stocks.positions["CLDX"].quantity == before.positions["CLDX"].quantity + 5


def test_the_fallback_keeps_careful_on_track_when_a_search_is_down() -> None:
    task = get_task("flights.book_cheapest_berlin_paris")
    down = {"name": "cheapest_down", "tools": {"flights_find_cheapest_flight": {"unavailable": 1.0}}}
    traj = anyio.run(lambda: run_in_process(make_agent("careful"), task, faults=down, trial=0))
    sc = score_in_process(traj, task)
    tools = [s.tool for s in traj.steps]
    assert tools[:2] == ["flights_find_cheapest_flight", "flights_search_flights_by_city"]
    assert sc.success is True and sc.recoveries == 1
    traj = anyio.run(lambda: run_in_process(make_agent("overconfident"), task, faults=down, trial=0))
    assert score_in_process(traj, task).success is False and "flights_book_flight" not in [s.tool for s in traj.steps]


def test_smoke_suite_spreads_over_apps() -> None:
    smoke = load_tasks("smoke")
    assert 6 <= len(smoke) <= 10
    assert len({a for t in smoke for a in t.apps}) >= 5
    assert any(not t.feasible for t in smoke) and {t.level for t in smoke} == {1, 2, 3}


# -- the templates and the full suite ---------------------------------------------------------
def test_full_suite_has_a_thousand_validated_instances_and_computes_no_gold() -> None:
    golds_before = len(registry._GOLD)
    full = load_tasks("full")
    assert len(registry._GOLD) == golds_before  # loading validates, it does not run oracles
    ids = [t.id for t in full]
    assert len(full) >= 1_000 and len(ids) == len(set(ids))
    assert ids[: len(load_tasks("core"))] == [t.id for t in load_tasks("core")]
    inst = [t for t in full if t.id.startswith("tmpl.")]
    assert len(inst) == len(TEMPLATES) * SEEDS_PER_TEMPLATE >= 1_000
    pattern = re.compile(r"^tmpl\.([a-z_]+)\.s(\d{4})$")
    per: dict[str, set[int]] = {}
    for t in inst:
        m = pattern.match(t.id)
        assert m and m.group(1) in TEMPLATES and int(m.group(2)) == t.seed, t.id
        per.setdefault(m.group(1), set()).add(t.seed)
        assert t.apps == TEMPLATES[m.group(1)].apps and t.oracle and 1 <= t.level <= 3
        assert any(c.kind == "declares_impossible" and c.value is (not t.feasible) for c in t.checks)
    assert all(seeds == set(range(SEEDS_PER_TEMPLATE)) for seeds in per.values()) and len(per) == len(TEMPLATES)
    assert 30 <= sum(not t.feasible for t in inst) <= 300  # some instances must be refused
    assert get_task("tmpl.news_bookmark_latest.s0042").instruction.startswith("Bookmark the latest article")


def test_template_instances_are_deterministic_per_seed() -> None:
    for name in TEMPLATES:
        a, b = template_task(name, 7), template_task(name, 7)
        assert a.model_dump(mode="json") == b.model_dump(mode="json")
        assert a.id == f"tmpl.{name}.s0007" and a.seed == 7
        others = {template_task(name, s).instruction for s in range(8, 14)} | {a.instruction}
        assert len(others) >= 3, name  # parameters come from each seed's world
    assert [t.id for t in template_tasks(["system_top_up"], [3, 1])] == [
        "tmpl.system_top_up.s0003",
        "tmpl.system_top_up.s0001",
    ]
    with pytest.raises(KeyError, match="unknown template 'nope'"):
        template_task("nope", 1)


@pytest.mark.parametrize("task_id", list(TEMPLATE_HASHES))
def test_template_gold_is_pinned_and_careful_reaches_it(task_id: str) -> None:
    task = get_task(task_id)
    run = gold_run(task)
    assert run.state_hash == TEMPLATE_HASHES[task_id]
    assert run.outcome.kind == ("answer" if task.feasible else "refuse")
    traj, sc = _careful(task)
    assert sc.success is True, (task_id, sc.missed, sc.misbehaved, traj.final_message)
    assert sc.error_calls == 0 and sc.declared_impossible is (not task.feasible)
