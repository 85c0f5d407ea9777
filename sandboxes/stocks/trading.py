"""Order and position tools of the ``stocks`` app.

Placing or changing an order needs the privilege ``stocks.trading``; selling more than the
free long shares (a short sale) also needs ``stocks.short_selling``. Market orders execute
only during market hours (09:30-16:00 UTC, Mon-Fri); limit orders may be placed any time and
wait, with their cash frozen (buys) or shares reserved (sells), until the quote reaches the
limit, they are cancelled, or 30 days pass.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from mcpgym.kernel.clock import iso
from mcpgym.kernel.errors import ErrorCode, ToolError
from mcpgym.kernel.spec import tool
from mcpgym.sandboxes.stocks.core import LIMIT_ORDER_TTL, SHORT_MARGIN_PERCENT, TIERS, StocksCore
from mcpgym.sandboxes.stocks.market import bucket_at, is_open, next_open
from mcpgym.sandboxes.stocks.models import Order, OrderList, OrderResult, PortfolioView, PositionList, StocksState

ORDER_RESOURCES = ["stocks.order", "stocks.position", "stocks.account"]
ORDER_PRECONDITIONS = ["stocks.account", "stocks.position", "stocks.quote", "stocks.market"]
ORDER_REMEDIES = {
    "permission_denied": ["system_request_privilege"],
    "precondition_failed": ["system_wait", "stocks_deposit_funds", "stocks_upgrade_account", "stocks_cancel_order"],
}

Symbol = Annotated[str, Field(max_length=20, description="ticker symbol, e.g. NVLT")]
Quantity = Annotated[int, Field(ge=1, le=1_000_000, description="number of shares")]
OrderId = Annotated[str, Field(max_length=60, description="order id")]
Limit = Annotated[
    int | None, Field(ge=1, le=100_000_000, description="limit price per share in cents (omit for a market order)")
]


class TradingTools(StocksCore):
    """Orders, positions and portfolio value."""

    # -- checks ---------------------------------------------------------------------------
    def _requirements(
        self,
        st: StocksState,
        symbol: str,
        side: str,
        quantity: int,
        ref: int,
        commission: int,
        exclude: Order | None = None,
    ) -> tuple[int, int]:
        """Check limits and funds for an order; return ``(cash to freeze if pending, long shares to reserve)``.

        Raises:
            ToolError: ``precondition_failed`` (order value over the tier cap, not enough cash
                or buying power), ``permission_denied`` (short sale without ``stocks.short_selling``).
        """
        tier = TIERS[st.account.tier]
        if quantity * ref > tier.max_order_value_cents:
            raise ToolError(
                ErrorCode.PRECONDITION_FAILED,
                f"order value {quantity * ref} cents exceeds the {tier.tier} tier's "
                f"limit of {tier.max_order_value_cents} cents; see stocks_list_tiers / stocks_upgrade_account",
                field="quantity",
                details={"max_order_value_cents": tier.max_order_value_cents},
            )
        own_frozen = exclude.frozen_cents if exclude is not None else 0
        own_reserved = exclude.reserved_shares if exclude is not None and exclude.symbol == symbol else 0
        available = st.account.cash_cents - self._frozen(st) + own_frozen
        power = available - self._short_exposure(st)
        pos = st.positions.get(symbol)
        held = pos.quantity if pos is not None else 0
        if side == "buy":
            need = quantity * ref + commission
            cover = min(quantity, max(0, -held))
            if need > available or (quantity - cover) * ref + commission > power:
                raise ToolError(
                    ErrorCode.PRECONDITION_FAILED,
                    f"not enough cash: {need} cents needed, {min(available, power + cover * ref)} "
                    "available; deposit with stocks_deposit_funds or cancel pending orders",
                    field="quantity",
                    details={"needed_cents": need, "available_cents": available},
                )
            return need, 0
        free_long = max(0, held) - (self._reserved(st, symbol) - own_reserved)
        long_part = min(quantity, max(0, free_long))
        short_part = quantity - long_part
        if short_part:
            self.other("system").require_privilege("stocks.short_selling")
            margin = short_part * ref * SHORT_MARGIN_PERCENT // 100 + commission
            if margin > power:
                raise ToolError(
                    ErrorCode.PRECONDITION_FAILED,
                    f"a short sale of {short_part} shares needs {margin} cents of buying "
                    f"power, {power} available; deposit with stocks_deposit_funds",
                    field="quantity",
                    details={"needed_cents": margin, "buying_power_cents": power},
                )
        return 0, long_part

    def _place(
        self, symbol: str, side: str, quantity: int, order_type: str, limit_price_cents: int | None
    ) -> OrderResult:
        """Validate, then fill at once (market, or marketable limit while open) or queue a limit order."""
        system = self.other("system")
        system.require_privilege("stocks.trading")
        st = self._begin()
        sym = self._instrument(st, symbol).symbol
        if order_type == "limit" and limit_price_cents is None:
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT, "a limit order needs limit_price_cents", field="limit_price_cents"
            )
        if order_type == "market" and limit_price_cents is not None:
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT, "a market order takes no limit_price_cents", field="limit_price_cents"
            )
        now = self.now
        open_now = is_open(now)
        if order_type == "market" and not open_now:
            opens = next_open(now)
            raise ToolError(
                ErrorCode.PRECONDITION_FAILED,
                f"the market is closed; it opens at {iso(opens)} (in {opens - now} "
                "virtual seconds): call system_wait, or place a limit order that waits for the open",
                details={"wait_seconds": opens - now, "next_open": iso(opens)},
            )
        quote = self._price(st, sym)
        ref = quote if order_type == "market" else int(limit_price_cents or 0)
        tier = TIERS[st.account.tier]
        if order_type == "limit" and len(self._pending(st)) >= tier.max_open_orders:
            raise ToolError(
                ErrorCode.PRECONDITION_FAILED,
                f"the {tier.tier} tier allows {tier.max_open_orders} open orders; "
                "cancel one (stocks_cancel_order) or upgrade (stocks_upgrade_account)",
                details={"max_open_orders": tier.max_open_orders},
            )
        frozen, reserved = self._requirements(st, sym, side, quantity, ref, tier.commission_cents)
        self._commit(st)
        st.order_seq += 1
        order = Order(
            order_id=self.new_id("ord"),
            symbol=sym,
            side=side,
            order_type=order_type,
            quantity=quantity,
            limit_price_cents=limit_price_cents,
            status="pending",
            commission_cents=tier.commission_cents,
            placed_at=now,
            seq=st.order_seq,
        )
        st.orders[order.order_id] = order
        marketable = open_now and (order_type == "market" or (quote <= ref if side == "buy" else quote >= ref))
        if marketable:
            self._fill(st, order, quote, now)
        else:
            order.frozen_cents, order.reserved_shares = frozen, reserved
            order.eval_from_bucket = bucket_at(now) + 1
            order.expires_at = now + LIMIT_ORDER_TTL
        return self._result(st, order)

    def _result(self, st: StocksState, order: Order) -> OrderResult:
        """Wrap ``order`` with the account's cash figures."""
        frozen = self._frozen(st)
        return OrderResult(
            order=self._order_view(order),
            cash_cents=st.account.cash_cents,
            available_cash_cents=st.account.cash_cents - frozen,
        )

    # -- order tools ----------------------------------------------------------------------------
    @tool(
        "write",
        ORDER_RESOURCES,
        preconditions=ORDER_PRECONDITIONS,
        remedies=ORDER_REMEDIES,
        alternatives=["stocks_buy_shares", "stocks_sell_shares"],
        id_args=[],
    )
    def stocks_place_order(
        self,
        symbol: Symbol,
        side: Annotated[
            Literal["buy", "sell"], Field(description="buy or sell (selling more than you hold is a short sale)")
        ],
        quantity: Quantity,
        order_type: Annotated[
            Literal["market", "limit"],
            Field(description="market: now at the quote (market hours only); limit: at limit_price_cents or better"),
        ] = "market",
        limit_price_cents: Annotated[
            int | None, Field(ge=1, le=100_000_000, description="limit price per share in cents (limit orders only)")
        ] = None,
    ) -> OrderResult:
        """Place a market or limit order (prices in cents). Needs the privilege stocks.trading;
        short sales also need stocks.short_selling.

        Market orders fill at once at the current quote, only during market hours (09:30-16:00
        UTC, Mon-Fri). A limit order fills at once if the quote already reaches the limit and
        the market is open; otherwise it waits (buy: cash frozen) until a later 15-minute quote
        reaches it. Tier limits apply to the order value and the number of open orders; a
        commission is charged per filled order.
        """
        return self._place(symbol, side, quantity, order_type, limit_price_cents)

    @tool(
        "write",
        ORDER_RESOURCES,
        preconditions=ORDER_PRECONDITIONS,
        remedies=ORDER_REMEDIES,
        alternatives=["stocks_place_order"],
        id_args=[],
    )
    def stocks_buy_shares(self, symbol: Symbol, quantity: Quantity, limit_price_cents: Limit = None) -> OrderResult:
        """Buy shares (needs stocks.trading; cents). Without limit_price_cents: a market order
        filled now at the quote, market hours only. With it: a limit buy that waits, cash frozen,
        until a quote at or below the limit."""
        return self._place(
            symbol, "buy", quantity, "market" if limit_price_cents is None else "limit", limit_price_cents
        )

    @tool(
        "write",
        ORDER_RESOURCES,
        preconditions=ORDER_PRECONDITIONS,
        remedies=ORDER_REMEDIES,
        alternatives=["stocks_place_order"],
        id_args=[],
        destructive=True,
    )
    def stocks_sell_shares(self, symbol: Symbol, quantity: Quantity, limit_price_cents: Limit = None) -> OrderResult:
        """Sell shares (needs stocks.trading; selling more than held is a short sale needing
        stocks.short_selling; cents). Without limit_price_cents: a market order filled now at
        the quote, market hours only. With it: a limit sell that waits for a quote at or above the limit."""
        return self._place(
            symbol, "sell", quantity, "market" if limit_price_cents is None else "limit", limit_price_cents
        )

    def _order(self, st: StocksState, order_id: str) -> Order:
        """Return order ``order_id`` of ``st``; ``not_found`` otherwise."""
        o = st.orders.get(order_id.strip())
        if o is None:
            raise ToolError(
                ErrorCode.NOT_FOUND, f"no order {order_id[:40]!r}; see stocks_list_orders", field="order_id"
            )
        return o

    @tool("write", ["stocks.order", "stocks.account"], preconditions=["stocks.order"], destructive=True)
    def stocks_cancel_order(self, order_id: OrderId) -> OrderResult:
        """Cancel a pending limit order, releasing its frozen cash or reserved shares."""
        st = self._begin()
        o = self._order(st, order_id)
        if o.status != "pending":
            raise ToolError(ErrorCode.CONFLICT, f"order {o.order_id} is {o.status}, not pending", field="order_id")
        self._commit(st)
        o.status = "cancelled"
        o.frozen_cents = 0
        o.reserved_shares = 0
        return self._result(st, o)

    @tool(
        "write",
        ["stocks.order", "stocks.account", "stocks.position"],
        preconditions=["stocks.order", "stocks.account"],
        remedies=ORDER_REMEDIES,
    )
    def stocks_update_order(
        self,
        order_id: OrderId,
        limit_price_cents: Annotated[
            int | None, Field(ge=1, le=100_000_000, description="new limit price per share, cents")
        ] = None,
        quantity: Annotated[int | None, Field(ge=1, le=1_000_000, description="new number of shares")] = None,
    ) -> OrderResult:
        """Change the limit price or quantity of a pending limit order (needs stocks.trading).
        Frozen cash is recomputed; if the new limit is reached while the market is open it fills at once."""
        self.other("system").require_privilege("stocks.trading")
        st = self._begin()
        o = self._order(st, order_id)
        if o.status != "pending":
            raise ToolError(ErrorCode.CONFLICT, f"order {o.order_id} is {o.status}, not pending", field="order_id")
        if limit_price_cents is None and quantity is None:
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "give limit_price_cents or quantity", field="limit_price_cents")
        limit = limit_price_cents if limit_price_cents is not None else int(o.limit_price_cents or 0)
        qty = quantity if quantity is not None else o.quantity
        frozen, reserved = self._requirements(st, o.symbol, o.side, qty, limit, o.commission_cents, exclude=o)
        self._commit(st)
        o.limit_price_cents, o.quantity = limit, qty
        quote = self._price(st, o.symbol)
        if is_open(self.now) and (quote <= limit if o.side == "buy" else quote >= limit):
            self._fill(st, o, quote, self.now)
        else:
            o.frozen_cents, o.reserved_shares = frozen, reserved
            o.eval_from_bucket = bucket_at(self.now) + 1
        return self._result(st, o)

    @tool("read", ["stocks.order"])
    def stocks_list_orders(
        self,
        status: Annotated[
            Literal["pending", "filled", "cancelled", "expired"] | None,
            Field(description="only orders with this status"),
        ] = None,
        symbol: Annotated[str | None, Field(max_length=20, description="only orders of this symbol")] = None,
        limit: Annotated[int, Field(ge=1, le=200, description="most orders to return")] = 50,
    ) -> OrderList:
        """List orders (the order history), newest first, optionally by status or symbol."""
        st = self._view()
        sym = self._instrument(st, symbol).symbol if symbol is not None else None
        items = [
            o for o in st.orders.values() if (status is None or o.status == status) and (sym is None or o.symbol == sym)
        ]
        items.sort(key=lambda o: o.seq, reverse=True)
        return OrderList(orders=[self._order_view(o) for o in items[:limit]])

    @tool("read", ["stocks.order"])
    def stocks_get_order(self, order_id: OrderId) -> OrderResult:
        """Return one order with its status, fill price and frozen cash (cents)."""
        st = self._view()
        return self._result(st, self._order(st, order_id))

    @tool("read", ["stocks.position"])
    def stocks_list_positions(self) -> PositionList:
        """List open positions (long and short) valued at current quotes, with unrealised P&L (cents)."""
        st = self._view()
        return PositionList(positions=[self._position_view(st, st.positions[s]) for s in sorted(st.positions)])

    @tool("read", ["stocks.position", "stocks.account", "stocks.portfolio"])
    def stocks_get_portfolio(self) -> PortfolioView:
        """Return the portfolio value in cents: brokerage cash plus every position at the current quote."""
        st = self._view()
        views = [self._position_view(st, st.positions[s]) for s in sorted(st.positions)]
        value = sum(v.market_value_cents for v in views)
        return PortfolioView(
            cash_cents=st.account.cash_cents,
            positions_value_cents=value,
            equity_cents=st.account.cash_cents + value,
            unrealized_pnl_cents=sum(v.unrealized_pnl_cents for v in views),
            positions=views,
            as_of=iso(self.now),
        )
