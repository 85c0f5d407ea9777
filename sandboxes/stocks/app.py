"""The ``stocks`` app: a brokerage with deterministic quotes on the virtual clock.

Tools live in three mixins: :mod:`.marketdata` (instruments, quotes, price history, market
hours), :mod:`.trading` (orders, positions, portfolio) and :mod:`.account` (cash account,
transfers with the wallet, tiers and VIP upgrade, watchlist). Money is in integer cents (USD),
times in virtual seconds (UTC).
"""

from __future__ import annotations

from mcpgym.kernel.app import register_app
from mcpgym.kernel.clock import EPOCH_START
from mcpgym.kernel.world import World
from mcpgym.sandboxes.stocks.account import AccountTools
from mcpgym.sandboxes.stocks.core import LIMIT_ORDER_TTL, TIERS
from mcpgym.sandboxes.stocks.market import INSTRUMENTS, SIZE_RANGES, bucket_at, price_at
from mcpgym.sandboxes.stocks.marketdata import MarketTools
from mcpgym.sandboxes.stocks.models import Account, Instrument, Order, Position, StocksState
from mcpgym.sandboxes.stocks.trading import TradingTools

SEEDED_POSITIONS = 3
"""Long positions the account starts with (each worth about 250-500 USD)."""


@register_app
class StocksApp(MarketTools, TradingTools, AccountTools):
    """Brokerage: quotes, market and limit orders, long and short positions, tiers, watchlist."""

    @classmethod
    def generate(cls, world: World) -> StocksState:
        """Seeded initial state: 24 instruments (stream ``instruments``); 2500-3300 USD cash,
        three long positions bought before the start, one pending limit buy far below the
        market and a three-symbol watchlist (stream ``account``); standard tier."""
        r = cls.stream(world, "instruments")
        instruments: dict[str, Instrument] = {}
        for symbol, name, sector, size in INSTRUMENTS:
            (plo, phi), (slo, shi) = SIZE_RANGES[size]
            instruments[symbol] = Instrument(
                symbol=symbol,
                name=name,
                sector=sector,
                size=size,
                shares_outstanding=r.randrange(slo, shi, 1_000),
                base_price_cents=r.randrange(plo, phi),
                volatility=round(r.uniform(0.7, 1.6), 2),
            )
        a = cls.stream(world, "account")
        k0 = bucket_at(EPOCH_START)

        def price(symbol: str) -> int:
            """The seeded price of ``symbol`` at the start of the world."""
            inst = instruments[symbol]
            return price_at(world.seed, symbol, inst.base_price_cents, inst.volatility, k0)

        symbols = sorted(instruments)
        picks = a.sample(symbols, SEEDED_POSITIONS + 1)
        positions: dict[str, Position] = {}
        orders: dict[str, Order] = {}
        for i, sym in enumerate(picks[:SEEDED_POSITIONS], start=1):
            p = price(sym)
            qty = max(1, round(a.uniform(25_000, 50_000) / p))
            avg = int(round(p * a.uniform(0.8, 1.15)))
            positions[sym] = Position(symbol=sym, quantity=qty, avg_price_cents=avg)
            oid = f"ord-seed-{i}"
            at = EPOCH_START - (10 + 5 * i) * 86_400
            orders[oid] = Order(
                order_id=oid,
                symbol=sym,
                side="buy",
                order_type="market",
                quantity=qty,
                status="filled",
                fill_price_cents=avg,
                commission_cents=TIERS["standard"].commission_cents,
                placed_at=at,
                filled_at=at,
                seq=i,
            )
        sym = picks[-1]
        limit = int(price(sym) * 0.85)
        qty = max(1, 20_000 // limit)
        oid = f"ord-seed-{SEEDED_POSITIONS + 1}"
        placed = EPOCH_START - 2 * 86_400
        commission = TIERS["standard"].commission_cents
        orders[oid] = Order(
            order_id=oid,
            symbol=sym,
            side="buy",
            order_type="limit",
            quantity=qty,
            limit_price_cents=limit,
            status="pending",
            commission_cents=commission,
            frozen_cents=qty * limit + commission,
            placed_at=placed,
            expires_at=placed + LIMIT_ORDER_TTL,
            eval_from_bucket=k0 + 1,
            seq=SEEDED_POSITIONS + 1,
        )
        watch = sorted(a.sample([s for s in symbols if s not in picks], 3))
        return StocksState(
            instruments=instruments,
            account=Account(cash_cents=a.randrange(250_000, 330_001, 100)),
            positions=positions,
            orders=orders,
            watchlist=watch,
            order_seq=SEEDED_POSITIONS + 1,
        )
