"""Templates over money: the shop, the wallet (system) and the brokerage (stocks)."""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from mcpgym.evaluation.tasks.templates.common import Instance, Template, dollars, stream, world_of

if TYPE_CHECKING:
    from mcpgym.sandboxes.stocks.models import AccountView

# -- shop: buy one item if the balance covers it ------------------------------------------------
SHOP_BUY = """
- call: shop_list_shops
  save: shops
- let: {shop: "first(shops.shops, name=p_shop)"}
- call: shop_get_shop
  args: {shop_id: "{shop.shop_id}"}
  save: detail
- let: {item: "first(detail.items, name=p_item)"}
- if: item.stock < 1
  then:
    - refuse: The {item.name} at {p_shop} is sold out, so I couldn't buy it.
- call: system_get_wallet_balance
  save: wallet
- if: wallet.balance_cents < item.price_cents
  then:
    - refuse: >-
        I can't buy it: the {item.name} costs {money(item.price_cents)}, more than your balance of
        {money(wallet.balance_cents)}, so I bought nothing.
- call: system_authorize_payment
  args: {limit_cents: "{item.price_cents}", purpose: shop order}
  save: pay
- call: shop_buy_item
  args: {item_id: "{item.item_id}", quantity: 1, authorization_id: "{pay.authorization.auth_id}"}
  fallback:
    - call: shop_add_to_cart
      args: {item_id: "{item.item_id}", quantity: 1}
    - call: shop_checkout
      args: {authorization_id: "{pay.authorization.auth_id}"}
- answer: I bought the {item.brand} {item.name} from {p_shop} for {money(item.price_cents)}.
"""


def build_shop_buy(seed: int) -> Instance:
    """An in-stock item (sold under a unique name in its shop); about a third of the seeds pick
    one dearer than the wallet balance, which makes the instance infeasible."""
    world = world_of(seed)
    r = stream(seed, "shop_buy_if_affordable")
    balance = world.apps["system"].state.wallet.balance_cents
    st = world.apps["shop"].state
    items = sorted(st.items.values(), key=lambda i: i.item_id)
    named = Counter((i.shop_id, i.name) for i in items)
    items = [i for i in items if i.stock >= 1 and named[(i.shop_id, i.name)] == 1]
    dear = [i for i in items if i.price_cents > balance]
    cheap = [i for i in items if i.price_cents <= balance]
    pool = dear if dear and (r.random() < 0.33 or not cheap) else cheap
    item = r.choice(pool)
    shop = st.shops[item.shop_id].name
    ok = item.price_cents <= balance
    return Instance(
        instruction=f"Buy one {item.name} from {shop} for me, but only if my wallet balance covers it.",
        params={"p_shop": shop, "p_item": item.name},
        feasible=ok,
        notes=(
            f"{item.item_id} costs {dollars(item.price_cents)} ({item.stock} in stock); the balance is "
            f"{dollars(balance)}: gold {'buys it' if ok else 'changes nothing'}."
        ),
    )


# -- system: top the balance up from savings ----------------------------------------------------
TOP_UP = """
- call: system_get_wallet_balance
  save: wallet
- let: {missing: "p_target - wallet.balance_cents"}
- if: missing <= 0
  then:
    - answer: Your balance is already {money(wallet.balance_cents)}, so I left it alone.
- if: wallet.savings_cents < missing
  then:
    - refuse: >-
        I can't: your savings ({money(wallet.savings_cents)}) cannot cover the missing
        {money(missing)}, so I did not move anything.
- call: system_transfer_from_savings
  args: {amount_cents: "{missing}"}
- answer: I moved {money(missing)} from savings; your balance is now {money(p_target)}.
"""


def build_top_up(seed: int) -> Instance:
    """A target balance of $1,000-$6,000 (whole $50): already met, reachable from savings, or not."""
    wallet = world_of(seed).apps["system"].state.wallet
    r = stream(seed, "system_top_up")
    target = r.randrange(20, 121) * 5_000
    missing = target - wallet.balance_cents
    ok = missing <= wallet.savings_cents
    checks = []
    if ok and missing > 0:
        checks.append({"kind": "number", "value": missing / 100, "description": "the amount moved"})
    return Instance(
        instruction=(
            f"Make sure my spendable balance is at least {dollars(target)}: if it's lower, move exactly "
            "the missing amount over from my savings."
        ),
        params={"p_target": target},
        feasible=ok,
        checks=checks,
        level=1 if missing <= 0 else 2,
        notes=(
            f"Balance {dollars(wallet.balance_cents)}, savings {dollars(wallet.savings_cents)}, "
            f"target {dollars(target)}: "
            + ("nothing to do." if missing <= 0 else f"gold moves {dollars(missing)}." if ok else "not reachable.")
        ),
    )


@lru_cache(maxsize=4)
def _stocks(seed: int) -> tuple[list[dict[str, Any]], AccountView]:
    """The instruments (symbol, name, sector, price_cents at the start) by symbol, and the
    account view (``stocks_get_account``) of ``seed``'s initial world (cached: three
    templates read them)."""
    app = world_of(seed).apps["stocks"]
    st = app.state
    insts = [
        {"symbol": i.symbol, "name": i.name, "sector": i.sector, "price_cents": app._price(st, i.symbol)}
        for i in sorted(st.instruments.values(), key=lambda i: i.symbol)
    ]
    return insts, app.stocks_get_account()


# -- stocks: buy N of the cheapest stock of a sector at the open -------------------------------
SECTOR_BUY = """
- call: stocks_list_instruments
  args: {sector: "{p_sector}"}
  save: found
- let: {pick: "min(found.instruments, key='price_cents')"}
- let: {cost: "pick.price_cents * p_quantity"}
- call: stocks_get_account
  save: acct
- if: cost > acct.limits.max_order_value_cents
  then:
    - refuse: >-
        I can't: {p_quantity} {pick.symbol} come to about {money(cost)}, over your account's
        {money(acct.limits.max_order_value_cents)} order limit, so I bought nothing.
- if: cost + acct.limits.commission_cents > acct.available_cash_cents
  then:
    - refuse: >-
        I can't: {p_quantity} {pick.symbol} cost about {money(cost)}, more than your available
        cash of {money(acct.available_cash_cents)}, so I bought nothing.
- call: system_request_privilege
  args: {privilege: stocks.trading}
- call: stocks_get_market_status
  save: market
- if: not market.market_open
  then:
    - call: system_wait
      args: {seconds: "{market.seconds_until_open}"}
- call: stocks_buy_shares
  args: {symbol: "{pick.symbol}", quantity: "{p_quantity}"}
  fallback:
    - call: stocks_place_order
      args: {symbol: "{pick.symbol}", side: buy, quantity: "{p_quantity}", order_type: market}
- answer: The cheapest {p_sector} stock is {pick.name} ({pick.symbol}); I bought {p_quantity} shares at the open.
"""


def build_sector_buy(seed: int) -> Instance:
    """A sector with at least two stocks; the quantity keeps the order well inside the cash and
    the tier's order cap (prices move a little at the open), or, for about a fifth of the
    seeds, well over one of them (infeasible)."""
    insts, acct = _stocks(seed)
    r = stream(seed, "stocks_buy_cheapest_sector")
    sectors = sorted({i["sector"] for i in insts if sum(1 for j in insts if j["sector"] == i["sector"]) >= 2})
    sector = r.choice(sectors)
    pick = min((i for i in insts if i["sector"] == sector), key=lambda i: (i["price_cents"], i["symbol"]))
    room = min(acct.available_cash_cents - acct.limits.commission_cents, acct.limits.max_order_value_cents)
    most = max(1, int(room * 0.7) // pick["price_cents"])
    if r.random() < 0.2:
        qty = int(room * 1.3) // pick["price_cents"] + 1 + r.randrange(0, 5)
        ok = False
    else:
        qty = r.randrange(1, min(most, 40) + 1)
        ok = True
    return Instance(
        instruction=(
            f"Once the market opens, buy {qty} shares of the cheapest {sector} stock, as long as my "
            "available brokerage cash covers it and it stays within my account's order limit."
        ),
        params={"p_sector": sector, "p_quantity": qty},
        feasible=ok,
        notes=(
            f"Cheapest {sector}: {pick['symbol']} at {dollars(pick['price_cents'])} (Friday close); {qty} shares "
            f"{'fit' if ok else 'do not fit'} the available cash / order cap ({dollars(room)})."
        ),
    )


# -- stocks: make sure a company is on the watchlist ---------------------------------------------
WATCHLIST = """
- call: stocks_list_instruments
  args: {query: "{p_company}"}
  save: found
- let: {inst: "first(found.instruments, name=p_company)"}
- call: stocks_get_watchlist
  save: watch
- if: inst.symbol in watch.symbols
  then:
    - answer: "{p_company} ({inst.symbol}) is already on your watchlist."
- call: stocks_add_to_watchlist
  args: {symbol: "{inst.symbol}"}
- answer: I added {p_company} ({inst.symbol}) to your watchlist.
"""


def build_watchlist(seed: int) -> Instance:
    """A company not on the watchlist (or, for a fifth of the seeds, one already on it)."""
    insts, _ = _stocks(seed)
    r = stream(seed, "stocks_watchlist_add")
    watched = world_of(seed).apps["stocks"].state.watchlist
    on = r.random() < 0.2
    pool = [i for i in insts if (i["symbol"] in watched) == on]
    inst = r.choice(pool)
    return Instance(
        instruction=f"Make sure {inst['name']} is on my stock watchlist.",
        params={"p_company": inst["name"]},
        notes=(
            f"{inst['symbol']} is {'already' if on else 'not yet'} watched; "
            f"gold {'changes nothing' if on else 'adds it'}."
        ),
    )


# -- stocks: a limit buy some percent below the quote ---------------------------------------------
LIMIT_BUY = """
- call: stocks_get_quote
  args: {symbol: "{p_symbol}"}
  save: q
  fallback:
    - call: stocks_get_quotes
      args: {symbols: ["{p_symbol}"]}
      save: qs
    - let: {q: "{'quote': qs.quotes[0]}"}
- let: {limit: "q.quote.price_cents * (100 - p_percent) // 100"}
- call: system_request_privilege
  args: {privilege: stocks.trading}
- call: stocks_buy_shares
  args: {symbol: "{p_symbol}", quantity: "{p_quantity}", limit_price_cents: "{limit}"}
  fallback:
    - call: stocks_place_order
      args: {symbol: "{p_symbol}", side: buy, quantity: "{p_quantity}", order_type: limit, limit_price_cents: "{limit}"}
- answer: >-
    {p_symbol} is at {money(q.quote.price_cents)}; I placed a limit buy of {p_quantity} shares at
    {money(limit)} ({p_percent}% below).
"""


def build_limit_buy(seed: int) -> Instance:
    """A stock, a discount of 2-10 % and a quantity whose frozen cash stays under half the available cash."""
    insts, acct = _stocks(seed)
    r = stream(seed, "stocks_limit_buy")
    inst = r.choice(insts)
    pct = r.choice([2, 3, 5, 8, 10])
    most = max(1, min(acct.available_cash_cents // 2, acct.limits.max_order_value_cents) // inst["price_cents"])
    qty = r.randrange(1, min(most, 30) + 1)
    return Instance(
        instruction=(
            f"Place a limit order to buy {qty} shares of {inst['name']} ({inst['symbol']}) at {pct}% below "
            "its current price (rounded down to the cent). Don't buy at market."
        ),
        params={"p_symbol": inst["symbol"], "p_quantity": qty, "p_percent": pct},
        notes=f"Gold: a pending limit buy of {qty} {inst['symbol']} at floor(quote x {100 - pct}/100).",
    )


TEMPLATES: list[Template] = [
    Template(
        "shop_buy_if_affordable",
        ["system", "shop"],
        2,
        ["verification", "recovery", "payment"],
        SHOP_BUY,
        build_shop_buy,
    ),
    Template("system_top_up", ["system"], 2, ["verification", "recovery"], TOP_UP, build_top_up),
    Template(
        "stocks_buy_cheapest_sector",
        ["system", "stocks"],
        2,
        ["verification", "recovery", "interdependency"],
        SECTOR_BUY,
        build_sector_buy,
    ),
    Template("stocks_watchlist_add", ["system", "stocks"], 1, ["verification", "recovery"], WATCHLIST, build_watchlist),
    Template("stocks_limit_buy", ["system", "stocks"], 2, ["recovery", "interdependency"], LIMIT_BUY, build_limit_buy),
]
"""The money templates, in suite order."""
