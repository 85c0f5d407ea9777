"""Shared machinery of the ``stocks`` app: quotes at ``now``, order settlement, position
arithmetic, account figures and tier limits.

Pending limit orders fill at the first 15-minute trading bucket after placement whose price
reaches the limit (buy: price <= limit, sell: price >= limit), at that bucket's price. Which
bucket that is depends only on the seed and the order, so settling late gives the same
result as settling early. Every tool works on a settled copy: read tools show it and never
change the state; write tools check against it and store it only when their checks pass.
"""

from __future__ import annotations

from mcpgym.kernel.app import App
from mcpgym.kernel.clock import iso
from mcpgym.kernel.errors import ErrorCode, ToolError
from mcpgym.sandboxes.stocks.market import BUCKETS_PER_DAY, bucket_at, bucket_start, is_open, price_at
from mcpgym.sandboxes.stocks.models import (
    AccountView,
    Activity,
    Instrument,
    Order,
    OrderView,
    Position,
    PositionView,
    Quote,
    StocksState,
    TierLimits,
)

TIERS: dict[str, TierLimits] = {
    "standard": TierLimits(tier="standard", max_order_value_cents=250_000, max_open_orders=3, commission_cents=99),
    "vip": TierLimits(tier="vip", max_order_value_cents=5_000_000, max_open_orders=20, commission_cents=0),
}
"""Limits per account tier: order value cap, open (pending) orders cap, commission per order."""
VIP_FEE = 4_900
"""One-off VIP upgrade fee, cents, taken from brokerage cash."""
VIP_MIN_EQUITY = 500_000
"""Equity (cash + positions) needed to upgrade to VIP, cents."""
SHORT_MARGIN_PERCENT = 50
"""Buying power a short sale needs, percent of its value."""
LIMIT_ORDER_TTL = 30 * 86_400
"""Virtual seconds after which an unfilled limit order expires."""


class StocksCore(App):
    """Base of the stocks app: state access and helpers shared by every tool."""

    name = "stocks"
    title = "Stocks"
    State = StocksState
    state: StocksState

    # -- quotes ------------------------------------------------------------------------------
    def _price(self, st: StocksState, symbol: str, k: int | None = None) -> int:
        """Price of ``symbol`` in bucket ``k`` (default: now), cents."""
        inst = st.instruments[symbol]
        return price_at(
            self.world.seed, symbol, inst.base_price_cents, inst.volatility, bucket_at(self.now) if k is None else k
        )

    def _quote(self, st: StocksState, symbol: str) -> Quote:
        """The full quote of ``symbol`` at the current virtual time."""
        k = bucket_at(self.now)
        first = (k // BUCKETS_PER_DAY) * BUCKETS_PER_DAY
        day = [self._price(st, symbol, j) for j in range(first, k + 1)]
        price, prev = day[-1], self._price(st, symbol, first - 1)
        return Quote(
            symbol=symbol,
            price_cents=price,
            previous_close_cents=prev,
            change_cents=price - prev,
            change_percent=round((price - prev) * 100 / prev, 2),
            day_open_cents=day[0],
            day_high_cents=max(day),
            day_low_cents=min(day),
            as_of=iso(bucket_start(k)),
            market_open=is_open(self.now),
        )

    @staticmethod
    def _instrument(st: StocksState, symbol: str, field: str = "symbol") -> Instrument:
        """Return the instrument ``symbol`` (case-insensitive).

        Raises:
            ToolError: ``not_found`` for an unknown symbol.
        """
        inst = st.instruments.get(symbol.strip().upper())
        if inst is None:
            raise ToolError(
                ErrorCode.NOT_FOUND, f"unknown symbol {symbol[:20]!r}; see stocks_list_instruments", field=field
            )
        return inst

    # -- settlement ----------------------------------------------------------------------------
    def _view(self) -> StocksState:
        """A copy of the state settled up to now, for read tools (the state itself is untouched)."""
        st = self.state.model_copy(deep=True)
        self._settle(st)
        return st

    def _begin(self) -> StocksState:
        """Start a write: a settled copy to check against. Nothing is stored until :meth:`_commit`,
        so a write that fails its checks applies nothing (not even the settlement)."""
        return self._view()

    def _commit(self, st: StocksState) -> StocksState:
        """Install ``st`` (from :meth:`_begin`, all checks passed) as the state and return it;
        the write then mutates it (ids drawn with :meth:`new_id` land in it)."""
        for o in st.orders.values():
            if o.status == "pending":
                o.eval_from_bucket = max(o.eval_from_bucket, bucket_at(self.now) + 1)
        self.state = st
        return st

    def _settle(self, st: StocksState) -> None:
        """Fill or expire every pending order whose moment has come, in time order."""
        now = self.now
        k_now = bucket_at(now)
        events: list[tuple[int, int, Order, int | None]] = []
        for o in st.orders.values():
            if o.status != "pending":
                continue
            hit = None
            expires = o.expires_at if o.expires_at is not None else now + 1
            for k in range(o.eval_from_bucket, k_now + 1):
                t = bucket_start(k)
                if t >= expires:
                    break
                p = self._price(st, o.symbol, k)
                if (o.side == "buy" and p <= (o.limit_price_cents or 0)) or (
                    o.side == "sell" and p >= (o.limit_price_cents or 0)
                ):
                    hit = (t, p)
                    break
            if hit is not None:
                events.append((hit[0], o.seq, o, hit[1]))
            elif now >= expires:
                events.append((expires, o.seq, o, None))
        for at, _, o, price in sorted(events, key=lambda e: (e[0], e[1])):
            if price is None:
                o.status = "expired"
                o.frozen_cents = 0
                o.reserved_shares = 0
            else:
                self._fill(st, o, price, at)

    def _fill(self, st: StocksState, o: Order, price: int, at: int) -> None:
        """Execute ``o`` at ``price`` (cents) at virtual time ``at``: cash, position, activity."""
        qty = o.quantity
        if o.side == "buy":
            amount = -(qty * price + o.commission_cents)
            delta = qty
        else:
            amount = qty * price - o.commission_cents
            delta = -qty
        st.account.cash_cents += amount
        self._move_position(st, o.symbol, delta, price)
        o.status = "filled"
        o.fill_price_cents = price
        o.filled_at = at
        o.frozen_cents = 0
        o.reserved_shares = 0
        st.activity.append(
            Activity(
                kind=o.side,
                amount_cents=amount,
                symbol=o.symbol,
                quantity=qty,
                price_cents=price,
                memo=f"{o.order_type} {o.side} {qty} {o.symbol} @ {price}, commission {o.commission_cents}",
                order_id=o.order_id,
                at=at,
            )
        )

    @staticmethod
    def _move_position(st: StocksState, symbol: str, delta: int, price: int) -> None:
        """Add ``delta`` shares (negative: sell) at ``price`` to the position, realising P&L on closes."""
        pos = st.positions.get(symbol)
        if pos is None:
            st.positions[symbol] = Position(symbol=symbol, quantity=delta, avg_price_cents=price)
            return
        q = pos.quantity
        if q == 0 or (q > 0) == (delta > 0):
            new_q = q + delta
            pos.avg_price_cents = int(round((abs(q) * pos.avg_price_cents + abs(delta) * price) / abs(new_q)))
            pos.quantity = new_q
            return
        closed = min(abs(q), abs(delta))
        pos.realized_pnl_cents += closed * (price - pos.avg_price_cents) * (1 if q > 0 else -1)
        pos.quantity = q + delta
        if pos.quantity == 0:
            del st.positions[symbol]
        elif (pos.quantity > 0) != (q > 0):
            pos.avg_price_cents = price

    # -- account figures -----------------------------------------------------------------------
    @staticmethod
    def _pending(st: StocksState) -> list[Order]:
        """Pending (unfilled limit) orders of ``st``."""
        return [o for o in st.orders.values() if o.status == "pending"]

    def _frozen(self, st: StocksState) -> int:
        """Cash frozen by pending buy orders, cents."""
        return sum(o.frozen_cents for o in self._pending(st))

    def _reserved(self, st: StocksState, symbol: str) -> int:
        """Long shares of ``symbol`` held back by pending sell orders."""
        return sum(o.reserved_shares for o in self._pending(st) if o.symbol == symbol)

    def _short_exposure(self, st: StocksState) -> int:
        """Current value of all short positions, cents (positive)."""
        return sum(-p.quantity * self._price(st, p.symbol) for p in st.positions.values() if p.quantity < 0)

    def _positions_value(self, st: StocksState) -> int:
        """Market value of all positions, cents (shorts count negative)."""
        return sum(p.quantity * self._price(st, p.symbol) for p in st.positions.values())

    def _buying_power(self, st: StocksState) -> int:
        """Cash not frozen and not backing short positions, cents."""
        return st.account.cash_cents - self._frozen(st) - self._short_exposure(st)

    def _account_view(self, st: StocksState) -> AccountView:
        """The :class:`AccountView` of ``st`` at current quotes."""
        frozen = self._frozen(st)
        short = self._short_exposure(st)
        value = self._positions_value(st)
        cash = st.account.cash_cents
        return AccountView(
            cash_cents=cash,
            frozen_cents=frozen,
            available_cash_cents=cash - frozen,
            short_exposure_cents=short,
            buying_power_cents=cash - frozen - short,
            positions_value_cents=value,
            equity_cents=cash + value,
            open_orders=len(self._pending(st)),
            tier=st.account.tier,
            limits=TIERS[st.account.tier],
        )

    def _position_view(self, st: StocksState, p: Position) -> PositionView:
        """Position ``p`` valued at the current quote."""
        price = self._price(st, p.symbol)
        return PositionView(
            symbol=p.symbol,
            quantity=p.quantity,
            side="long" if p.quantity > 0 else "short",
            avg_price_cents=p.avg_price_cents,
            price_cents=price,
            market_value_cents=p.quantity * price,
            unrealized_pnl_cents=p.quantity * (price - p.avg_price_cents),
            realized_pnl_cents=p.realized_pnl_cents,
        )

    @staticmethod
    def _order_view(o: Order) -> OrderView:
        """The agent-facing view of order ``o``."""
        return OrderView(
            order_id=o.order_id,
            symbol=o.symbol,
            side=o.side,
            order_type=o.order_type,
            quantity=o.quantity,
            limit_price_cents=o.limit_price_cents,
            status=o.status,
            fill_price_cents=o.fill_price_cents,
            commission_cents=o.commission_cents,
            frozen_cents=o.frozen_cents,
            reserved_shares=o.reserved_shares,
            placed_at=iso(o.placed_at),
            filled_at=iso(o.filled_at) if o.filled_at is not None else None,
            expires_at=iso(o.expires_at) if o.expires_at is not None else None,
        )
