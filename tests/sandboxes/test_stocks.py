"""The ``stocks`` sandbox in-process: deterministic quotes on the virtual clock, market hours,
privileges, market and limit orders with frozen cash, short selling, tiers and the VIP
upgrade, wallet transfers, watchlist, determinism and snapshot/restore."""

from __future__ import annotations

from typing import Any

import pytest

import mcpgym.sandboxes.stocks  # noqa: F401 - registers the app
from mcpgym.kernel.clock import EPOCH_START
from mcpgym.kernel.world import World
from mcpgym.sandboxes.stocks.core import TIERS, VIP_FEE, VIP_MIN_EQUITY
from mcpgym.sandboxes.stocks.market import bucket_at, bucket_start, is_open, price_at
from mcpgym.tools.invoke import ToolInvoker
from tests.support.app_helpers import err, ok

APPS = ["system", "stocks"]
COMMISSION = TIERS["standard"].commission_cents


def make(seed: int = 3, *, trading: bool = True) -> ToolInvoker:
    """A fresh world with system + stocks, no faults; ``trading`` grants stocks.trading."""
    inv = ToolInvoker(World(seed, APPS), "none")
    ok(inv, "system_request_privilege" if trading else "system_revoke_privilege", privilege="stocks.trading")
    ok(inv, "system_revoke_privilege", privilege="stocks.short_selling")
    return inv


def now(inv: ToolInvoker) -> int:
    return inv.world.clock.now


def advance_to(inv: ToolInvoker, t: int) -> None:
    """Wait with system_wait until the virtual clock reaches ``t``."""
    while (left := t - now(inv)) > 0:
        ok(inv, "system_wait", seconds=min(left, 7 * 86_400))


def open_market(inv: ToolInvoker) -> None:
    """Wait for the next market open (the clock starts Monday 09:00 UTC, before the open)."""
    status = ok(inv, "stocks_get_market_status")
    if not status["market_open"]:
        ok(inv, "system_wait", seconds=status["seconds_until_open"])
    assert ok(inv, "stocks_get_market_status")["market_open"]


def quote(inv: ToolInvoker, symbol: str) -> int:
    return ok(inv, "stocks_get_quote", symbol=symbol)["quote"]["price_cents"]


def account(inv: ToolInvoker) -> dict[str, Any]:
    return ok(inv, "stocks_get_account")


def wallet(inv: ToolInvoker) -> int:
    return ok(inv, "system_get_wallet_balance")["balance_cents"]


def future_price(inv: ToolInvoker, symbol: str, k: int) -> int:
    """Price of ``symbol`` in trading bucket ``k``, from the app's pure quote function."""
    inst = inv.world.apps["stocks"].state.instruments[symbol]
    return price_at(inv.world.seed, symbol, inst.base_price_cents, inst.volatility, k)


def not_held(inv: ToolInvoker) -> list[str]:
    st = inv.world.apps["stocks"].state
    busy = set(st.positions) | {o.symbol for o in st.orders.values() if o.status == "pending"}
    return sorted(s for s in st.instruments if s not in busy)


# -- catalog -----------------------------------------------------------------------------------
def test_tools_and_metadata() -> None:
    specs = make().specs
    names = sorted(n for n in specs if n.startswith("stocks_"))
    assert len(names) == 24
    assert specs["stocks_get_quote"].alternatives == ("stocks_get_quotes",)
    assert specs["stocks_get_quotes"].alternatives == ("stocks_get_quote",)
    assert set(specs["stocks_place_order"].alternatives) == {"stocks_buy_shares", "stocks_sell_shares"}
    place = specs["stocks_place_order"]
    assert place.kind == "write" and place.remedies["permission_denied"] == ("system_request_privilege",)
    assert "system_wait" in place.remedies["precondition_failed"]
    assert "stocks_upgrade_account" in place.remedies["precondition_failed"]
    assert specs["stocks_deposit_funds"].remedies["precondition_failed"] == ("system_transfer_from_savings",)
    assert specs["stocks_get_portfolio"].kind == "read"


# -- quotes and market hours -----------------------------------------------------------------------
def test_quotes_are_deterministic_and_move_with_the_clock() -> None:
    a, b = make(4), make(4)
    symbols = ["NVLT", "MEDV", "URBN", "SOLR"]
    assert ok(a, "stocks_get_quotes", symbols=symbols) == ok(b, "stocks_get_quotes", symbols=symbols)
    assert (
        ok(a, "stocks_get_quote", symbol="nvlt")["quote"] == ok(a, "stocks_get_quotes", symbols=["NVLT"])["quotes"][0]
    )
    # Before the open the quote is Friday's close and does not move.
    closed = quote(a, "NVLT")
    ok(a, "system_wait", seconds=600)
    assert quote(a, "NVLT") == closed
    open_market(a)
    series = []
    for _ in range(8):
        series.append(tuple(q["price_cents"] for q in ok(a, "stocks_get_quotes", symbols=symbols)["quotes"]))
        ok(a, "system_wait", seconds=900)
    for i in range(len(symbols)):
        assert len({s[i] for s in series}) > 2, f"{symbols[i]} should move every 15 minutes"
    # The same virtual time gives the same price in another world of the same seed.
    advance_to(b, now(a))
    assert ok(b, "stocks_get_quotes", symbols=symbols) == ok(a, "stocks_get_quotes", symbols=symbols)
    other = make(5)
    advance_to(other, now(a))
    assert ok(other, "stocks_get_quotes", symbols=symbols) != ok(a, "stocks_get_quotes", symbols=symbols)
    history = ok(a, "stocks_get_price_history", symbol="MEDV", buckets=9)["prices"]  # 8 sampled + the current one
    assert [p["price_cents"] for p in history[:-1]] == [s[1] for s in series]
    assert history[-1]["price_cents"] == quote(a, "MEDV")


def test_market_bucket_calendar() -> None:
    monday_open = EPOCH_START + 1800
    assert not is_open(EPOCH_START) and is_open(monday_open)
    k = bucket_at(monday_open)
    assert bucket_start(k) == monday_open
    assert bucket_at(monday_open - 1) == k - 1  # before the open: Friday's last bucket
    assert bucket_start(k - 1) == monday_open - 3 * 86_400 + 6 * 3600 + 15 * 60
    saturday_noon = EPOCH_START + 5 * 86_400 + 3 * 3600
    assert not is_open(saturday_noon)
    assert bucket_at(saturday_noon) == k + 5 * 26 - 1


def test_market_orders_wait_for_market_hours() -> None:
    inv = make(7)
    sym = not_held(inv)[0]
    closed = err(inv, "stocks_buy_shares", symbol=sym, quantity=1)
    assert closed["code"] == "precondition_failed"
    assert closed["details"]["wait_seconds"] == EPOCH_START + 1800 - now(inv)
    assert "system_wait" in inv.specs["stocks_buy_shares"].remedies["precondition_failed"]
    ok(inv, "system_wait", seconds=closed["details"]["wait_seconds"])
    cash = account(inv)["cash_cents"]
    price = quote(inv, sym)
    filled = ok(inv, "stocks_buy_shares", symbol=sym, quantity=2)
    assert filled["order"]["status"] == "filled" and filled["order"]["fill_price_cents"] == price
    assert filled["cash_cents"] == cash - 2 * price - COMMISSION
    assert any(p["symbol"] == sym and p["quantity"] == 2 for p in ok(inv, "stocks_list_positions")["positions"])
    # Saturday: closed again until Monday 09:30.
    saturday = EPOCH_START + 5 * 86_400 + 3 * 3600
    advance_to(inv, saturday)
    weekend = err(inv, "stocks_sell_shares", symbol=sym, quantity=1)
    assert weekend["code"] == "precondition_failed"
    assert weekend["details"]["wait_seconds"] == EPOCH_START + 7 * 86_400 + 1800 - now(inv)


def test_trading_needs_the_privilege() -> None:
    inv = make(8, trading=False)
    open_market(inv)
    denied = err(inv, "stocks_place_order", symbol="NVLT", side="buy", quantity=1)
    assert denied["code"] == "permission_denied" and denied["details"]["privilege"] == "stocks.trading"
    ok(inv, "system_request_privilege", privilege="stocks.trading")
    assert ok(inv, "stocks_place_order", symbol="NVLT", side="buy", quantity=1)["order"]["status"] == "filled"


# -- limit orders ---------------------------------------------------------------------------------------
def _limit_setup(inv: ToolInvoker) -> tuple[str, int, int, int]:
    """Pick a symbol whose price dips below the current quote later today; return
    (symbol, limit, fill bucket, fill price) with limit = the day's later minimum."""
    k = bucket_at(now(inv))
    for sym in not_held(inv):
        current = future_price(inv, sym, k)
        later = [(future_price(inv, sym, j), j) for j in range(k + 1, k + 20)]
        low, _ = min(later)
        if low < current:
            j = next(j for p, j in later if p <= low)
            return sym, low, j, future_price(inv, sym, j)
    raise AssertionError("no symbol dips today")


def test_limit_buy_freezes_cash_then_fills_when_the_quote_reaches_it() -> None:
    inv = make(9)
    open_market(inv)
    sym, limit, k_fill, fill_price = _limit_setup(inv)
    qty = max(1, 50_000 // limit)
    before = account(inv)
    placed = ok(
        inv, "stocks_place_order", symbol=sym, side="buy", quantity=qty, order_type="limit", limit_price_cents=limit
    )
    order = placed["order"]
    assert order["status"] == "pending" and order["frozen_cents"] == qty * limit + COMMISSION
    after = account(inv)
    assert after["cash_cents"] == before["cash_cents"]
    assert after["frozen_cents"] == before["frozen_cents"] + qty * limit + COMMISSION
    assert after["available_cash_cents"] == before["available_cash_cents"] - qty * limit - COMMISSION
    assert (
        err(inv, "stocks_withdraw_funds", amount_cents=after["available_cash_cents"] + 1)["code"]
        == "precondition_failed"
    )

    advance_to(inv, bucket_start(k_fill) - 60)
    assert ok(inv, "stocks_get_order", order_id=order["order_id"])["order"]["status"] == "pending"
    advance_to(inv, bucket_start(k_fill))
    hash_before_read = inv.world.state_hash()
    seen = ok(inv, "stocks_get_order", order_id=order["order_id"])["order"]
    assert seen["status"] == "filled" and seen["fill_price_cents"] == fill_price <= limit
    assert inv.world.state_hash() == hash_before_read  # reads show the fill without writing it
    final = account(inv)
    assert final["cash_cents"] == before["cash_cents"] - qty * fill_price - COMMISSION
    assert final["frozen_cents"] == before["frozen_cents"]
    ok(inv, "stocks_add_to_watchlist", symbol=sym)  # any write settles the state for real
    stored = inv.world.apps["stocks"].state.orders[order["order_id"]]
    assert (stored.status, stored.fill_price_cents, stored.frozen_cents) == ("filled", fill_price, 0)
    assert inv.world.apps["stocks"].state.positions[sym].quantity == qty


def test_limit_fill_does_not_depend_on_when_it_is_observed() -> None:
    results = []
    for step in (None, 900):
        inv = make(9)
        open_market(inv)
        sym, limit, k_fill, fill_price = _limit_setup(inv)
        oid = ok(
            inv, "stocks_place_order", symbol=sym, side="buy", quantity=1, order_type="limit", limit_price_cents=limit
        )["order"]["order_id"]
        target = now(inv) + 8 * 3600
        if step is None:
            advance_to(inv, target)
        else:
            while now(inv) < target:
                ok(inv, "system_wait", seconds=min(step, target - now(inv)))
                ok(inv, "stocks_get_watchlist")
                ok(inv, "stocks_add_to_watchlist", symbol="NVLT")  # writes settle along the way
        o = ok(inv, "stocks_get_order", order_id=oid)["order"]
        results.append((o["status"], o["fill_price_cents"], o["filled_at"], account(inv)["cash_cents"]))
        assert o["fill_price_cents"] == fill_price
    assert results[0] == results[1]


def test_limit_order_placed_while_closed_fills_at_the_open() -> None:
    inv = make(10)
    sym = not_held(inv)[0]
    k_open = bucket_at(EPOCH_START + 1800)
    open_price = future_price(inv, sym, k_open)
    limit = open_price + 500
    placed = ok(
        inv, "stocks_place_order", symbol=sym, side="buy", quantity=1, order_type="limit", limit_price_cents=limit
    )
    assert placed["order"]["status"] == "pending"  # the market is closed: queued, not filled
    cash = account(inv)["cash_cents"]
    ok(inv, "system_wait", seconds=1800)
    o = ok(inv, "stocks_get_order", order_id=placed["order"]["order_id"])["order"]
    assert o["status"] == "filled" and o["fill_price_cents"] == open_price
    assert account(inv)["cash_cents"] == cash - open_price - COMMISSION


def test_cancel_releases_frozen_cash() -> None:
    inv = make(11)
    sym = not_held(inv)[0]
    limit = quote(inv, sym) // 2
    before = account(inv)
    oid = ok(
        inv, "stocks_place_order", symbol=sym, side="buy", quantity=3, order_type="limit", limit_price_cents=limit
    )["order"]["order_id"]
    assert account(inv)["available_cash_cents"] == before["available_cash_cents"] - 3 * limit - COMMISSION
    moved = ok(inv, "stocks_update_order", order_id=oid, quantity=2)
    assert moved["order"]["frozen_cents"] == 2 * limit + COMMISSION
    cancelled = ok(inv, "stocks_cancel_order", order_id=oid)
    assert cancelled["order"]["status"] == "cancelled" and cancelled["order"]["frozen_cents"] == 0
    assert account(inv) == before
    assert err(inv, "stocks_cancel_order", order_id=oid)["code"] == "conflict"


# -- short selling --------------------------------------------------------------------------------------
def test_short_selling_needs_its_own_privilege() -> None:
    inv = make(12)
    open_market(inv)
    held = next(iter(inv.world.apps["stocks"].state.positions.values()))
    sym, qty = held.symbol, held.quantity
    denied = err(inv, "stocks_sell_shares", symbol=sym, quantity=qty + 2)
    assert denied["code"] == "permission_denied" and denied["details"]["privilege"] == "stocks.short_selling"
    ok(inv, "system_request_privilege", privilege="stocks.short_selling")
    price = quote(inv, sym)
    cash = account(inv)["cash_cents"]
    sold = ok(inv, "stocks_sell_shares", symbol=sym, quantity=qty + 2)
    assert sold["cash_cents"] == cash + (qty + 2) * price - COMMISSION
    pos = next(p for p in ok(inv, "stocks_list_positions")["positions"] if p["symbol"] == sym)
    assert pos["quantity"] == -2 and pos["side"] == "short" and pos["avg_price_cents"] == price
    acct = account(inv)
    assert acct["short_exposure_cents"] == 2 * price
    assert acct["buying_power_cents"] == acct["available_cash_cents"] - 2 * price
    ok(inv, "stocks_buy_shares", symbol=sym, quantity=2)
    assert sym not in {p["symbol"] for p in ok(inv, "stocks_list_positions")["positions"]}


# -- tiers, transfers, watchlist ------------------------------------------------------------------------------
def test_tier_limits_and_vip_upgrade() -> None:
    inv = make(13)
    open_market(inv)
    sym = not_held(inv)[0]
    price = quote(inv, sym)
    too_big = TIERS["standard"].max_order_value_cents // price + 1
    big = err(inv, "stocks_buy_shares", symbol=sym, quantity=too_big)
    assert big["code"] == "precondition_failed" and big["details"]["max_order_value_cents"] == 250_000
    # One seeded pending order + two more reach the standard cap of three open orders.
    for _ in range(2):
        ok(
            inv,
            "stocks_place_order",
            symbol=sym,
            side="buy",
            quantity=1,
            order_type="limit",
            limit_price_cents=price // 2,
        )
    capped = err(
        inv, "stocks_place_order", symbol=sym, side="buy", quantity=1, order_type="limit", limit_price_cents=price // 2
    )
    assert capped["code"] == "precondition_failed" and capped["details"]["max_open_orders"] == 3

    equity = ok(inv, "stocks_get_portfolio")["equity_cents"]
    assert equity < VIP_MIN_EQUITY
    poor = err(inv, "stocks_upgrade_account")
    assert poor["code"] == "precondition_failed" and poor["details"]["needed_cents"] == VIP_MIN_EQUITY
    need = VIP_MIN_EQUITY - equity + 1_000
    if wallet(inv) < need:
        ok(inv, "system_transfer_from_savings", amount_cents=need - wallet(inv))
    w = wallet(inv)
    dep = ok(inv, "stocks_deposit_funds", amount_cents=need)
    assert dep["wallet_balance_cents"] == w - need == wallet(inv)
    cash = account(inv)["cash_cents"]
    upgraded = ok(inv, "stocks_upgrade_account")
    assert upgraded["tier"] == "vip" and upgraded["cash_cents"] == cash - VIP_FEE
    assert upgraded["limits"] == TIERS["vip"].model_dump()
    assert err(inv, "stocks_upgrade_account")["code"] == "conflict"
    # VIP: a fourth open order is fine, and market orders carry no commission.
    ok(inv, "stocks_place_order", symbol=sym, side="buy", quantity=1, order_type="limit", limit_price_cents=price // 2)
    cash = account(inv)["cash_cents"]
    filled = ok(inv, "stocks_buy_shares", symbol=sym, quantity=1)["order"]
    assert filled["commission_cents"] == 0 and account(inv)["cash_cents"] == cash - filled["fill_price_cents"]
    fees = [a for a in ok(inv, "stocks_list_activity")["activity"] if a["kind"] == "fee"]
    assert [a["amount_cents"] for a in fees] == [-VIP_FEE]


def test_deposit_and_withdraw_move_money_between_wallet_and_brokerage() -> None:
    inv = make(14)
    w, cash = wallet(inv), account(inv)["cash_cents"]
    too_much = err(inv, "stocks_deposit_funds", amount_cents=w + 1)
    assert too_much["code"] == "precondition_failed" and too_much["details"]["wallet_balance_cents"] == w
    ok(inv, "stocks_deposit_funds", amount_cents=12_345)
    assert (wallet(inv), account(inv)["cash_cents"]) == (w - 12_345, cash + 12_345)
    power = account(inv)["buying_power_cents"]
    assert err(inv, "stocks_withdraw_funds", amount_cents=power + 1)["details"]["withdrawable_cents"] == power
    ok(inv, "stocks_withdraw_funds", amount_cents=20_000)
    assert (wallet(inv), account(inv)["cash_cents"]) == (w - 12_345 + 20_000, cash + 12_345 - 20_000)
    txns = ok(inv, "system_list_transactions", limit=2)["transactions"]
    assert sorted(t["amount_cents"] for t in txns) == [-12_345, 20_000]
    kinds = [a["kind"] for a in ok(inv, "stocks_list_activity", limit=2)["activity"]]
    assert kinds == ["withdrawal", "deposit"]


def test_watchlist() -> None:
    inv = make(15)
    start = ok(inv, "stocks_get_watchlist")["symbols"]
    assert len(start) == 3
    new = next(s for s in not_held(inv) if s not in start)
    added = ok(inv, "stocks_add_to_watchlist", symbol=new.lower())
    assert added["symbols"] == start + [new] and added["quotes"][-1]["symbol"] == new
    assert ok(inv, "stocks_add_to_watchlist", symbol=new)["symbols"] == start + [new]
    assert ok(inv, "stocks_remove_from_watchlist", symbol=start[0])["symbols"] == start[1:] + [new]
    assert err(inv, "stocks_remove_from_watchlist", symbol=start[0])["code"] == "not_found"
    assert err(inv, "stocks_add_to_watchlist", symbol="ZZZZ")["code"] == "not_found"


def test_instruments_and_bad_arguments() -> None:
    inv = make(16)
    listed = ok(inv, "stocks_list_instruments")["instruments"]
    assert len(listed) >= 20 and len({i["sector"] for i in listed}) >= 8
    for i in listed:
        assert i["market_cap_usd"] == i["shares_outstanding"] * i["price_cents"] // 100
    tech = ok(inv, "stocks_list_instruments", sector="technology")["instruments"]
    assert tech and all(i["sector"] == "Technology" for i in tech)
    assert ok(inv, "stocks_list_instruments", query="novalith")["instruments"][0]["symbol"] == "NVLT"
    assert err(inv, "stocks_get_quote", symbol="NOPE")["code"] == "not_found"
    assert err(inv, "stocks_get_quotes", symbols=["NVLT", "NOPE"])["field"] == "symbols"
    assert (
        err(inv, "stocks_place_order", symbol="NVLT", side="buy", quantity=1, order_type="limit")["code"]
        == "invalid_argument"
    )
    assert err(inv, "stocks_place_order", symbol="NVLT", side="hold", quantity=1)["code"] == "invalid_argument"
    assert err(inv, "stocks_place_order", symbol="NVLT", side="buy", quantity=-3)["code"] == "invalid_argument"
    assert err(inv, "stocks_get_order", order_id="ord-missing")["code"] == "not_found"
    assert not any(c.internal for c in inv.calls)


# -- determinism and persistence -----------------------------------------------------------------------------
def _script(inv: ToolInvoker) -> None:
    open_market(inv)
    sym = not_held(inv)[0]
    ok(inv, "stocks_buy_shares", symbol=sym, quantity=2)
    ok(
        inv,
        "stocks_place_order",
        symbol=sym,
        side="sell",
        quantity=1,
        order_type="limit",
        limit_price_cents=quote(inv, sym) + 50,
    )
    ok(inv, "stocks_deposit_funds", amount_cents=5_000)
    ok(inv, "system_wait", seconds=4 * 3600)
    ok(inv, "stocks_add_to_watchlist", symbol=sym)


@pytest.mark.parametrize("seed", [17, 18])
def test_same_seed_same_hash_and_snapshot_round_trip(seed: int) -> None:
    a, b = make(seed), make(seed)
    _script(a)
    _script(b)
    assert a.world.state_hash() == b.world.state_hash()
    restored = World.restore(a.world.snapshot())
    assert restored.state_hash() == a.world.state_hash()
    ri = ToolInvoker(restored, "none")
    for tool in ("stocks_get_account", "stocks_list_orders", "stocks_get_portfolio"):
        assert ok(ri, tool) == ok(a, tool)
    ok(ri, "system_wait", seconds=86_400)
    ok(a, "system_wait", seconds=86_400)
    first = ok(a, "stocks_get_watchlist")["symbols"][0]
    ok(ri, "stocks_remove_from_watchlist", symbol=first)
    ok(a, "stocks_remove_from_watchlist", symbol=first)
    assert restored.state_hash() == a.world.state_hash()
    assert make(seed + 100).world.state_hash() != a.world.state_hash()


def test_buy_and_sell_shares_also_take_limit_orders() -> None:
    """The simple tools are full alternatives of stocks_place_order (an `unavailable` fault keeps one)."""
    inv = make(19)
    sym = not_held(inv)[0]
    limit = quote(inv, sym) // 2
    o = ok(inv, "stocks_buy_shares", symbol=sym, quantity=2, limit_price_cents=limit)["order"]
    assert (o["order_type"], o["status"], o["frozen_cents"]) == ("limit", "pending", 2 * limit + COMMISSION)
    held = next(iter(inv.world.apps["stocks"].state.positions.values()))
    s = ok(
        inv,
        "stocks_sell_shares",
        symbol=held.symbol,
        quantity=held.quantity,
        limit_price_cents=2 * quote(inv, held.symbol),
    )["order"]
    assert (s["order_type"], s["status"], s["reserved_shares"]) == ("limit", "pending", held.quantity)
    open_market(inv)
    # Those shares are reserved: selling them again at market needs a short sale.
    assert err(inv, "stocks_sell_shares", symbol=held.symbol, quantity=1)["code"] == "permission_denied"
