"""State and output models of the ``stocks`` app (money in integer cents, times in virtual seconds)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from mcpgym.kernel.app import AppState
from mcpgym.kernel.volatile import VOLATILE, VOLATILE_KEYS

Side = Literal["buy", "sell"]
OrderType = Literal["market", "limit"]
OrderStatus = Literal["pending", "filled", "cancelled", "expired"]
Tier = Literal["standard", "vip"]


# -- state -------------------------------------------------------------------------------
class Instrument(BaseModel):
    """A listed stock.

    Attributes:
        symbol: ticker, e.g. NVLT.
        name: company name.
        sector: Technology, Healthcare, ...
        size: large | mid | small (market-cap class).
        shares_outstanding: shares issued (market cap = shares x price).
        base_price_cents: level the quote moves around.
        volatility: scale of the price moves (1.0 = typical).
    """

    symbol: str
    name: str
    sector: str
    size: Literal["large", "mid", "small"]
    shares_outstanding: int
    base_price_cents: int
    volatility: float


class Account(BaseModel):
    """The brokerage cash account (separate from the wallet).

    Attributes:
        cash_cents: cash held, including what pending buy orders froze.
        tier: standard | vip.
    """

    cash_cents: int
    tier: Tier = "standard"
    vip_since: Annotated[int | None, VOLATILE] = None


class Position(BaseModel):
    """A holding: positive quantity = long, negative = short.

    Attributes:
        avg_price_cents: average opening price of the open quantity.
        realized_pnl_cents: profit realised by closing parts of it.
    """

    symbol: str
    quantity: int
    avg_price_cents: int
    realized_pnl_cents: int = 0


class Order(BaseModel):
    """An order.

    Attributes:
        order_id: generated id.
        status: pending (limit order waiting), filled, cancelled or expired (30 days unfilled).
        fill_price_cents: execution price once filled.
        commission_cents: commission charged at the fill (by the tier at placement).
        frozen_cents: cash frozen by a pending buy (quantity x limit + commission); 0 otherwise.
        reserved_shares: long shares a pending sell holds back; 0 otherwise.
        eval_from_bucket: first trading bucket at which a pending order may fill.
        seq: placement order (orders filling in the same bucket fill in this order).
    """

    order_id: Annotated[str, VOLATILE]
    symbol: str
    side: Side
    order_type: OrderType
    quantity: int
    limit_price_cents: int | None = None
    status: OrderStatus
    fill_price_cents: int | None = None
    commission_cents: int = 0
    frozen_cents: int = 0
    reserved_shares: int = 0
    placed_at: Annotated[int, VOLATILE] = 0
    filled_at: Annotated[int | None, VOLATILE] = None
    expires_at: Annotated[int | None, VOLATILE] = None
    eval_from_bucket: Annotated[int, VOLATILE] = 0
    seq: Annotated[int, VOLATILE] = 0


class Activity(BaseModel):
    """A movement of brokerage cash: amount_cents is signed (negative = cash out)."""

    kind: Literal["deposit", "withdrawal", "buy", "sell", "fee"]
    amount_cents: int
    symbol: str | None = None
    quantity: int | None = None
    price_cents: int | None = None
    memo: str = ""
    order_id: Annotated[str | None, VOLATILE] = None
    at: Annotated[int, VOLATILE] = 0


class StocksState(AppState):
    """State of the stocks app.

    Attributes:
        instruments: symbol -> instrument.
        account: the cash account and tier.
        positions: symbol -> open position (closed positions are removed).
        orders: orders by id.
        watchlist: symbols, in the order added.
        activity: cash movements, oldest first.
        order_seq: orders placed so far.
    """

    instruments: dict[str, Instrument]
    account: Account
    positions: dict[str, Position] = Field(default_factory=dict)
    orders: Annotated[dict[str, Order], VOLATILE_KEYS] = Field(default_factory=dict)
    watchlist: list[str] = Field(default_factory=list)
    activity: list[Activity] = Field(default_factory=list)
    order_seq: Annotated[int, VOLATILE] = 0


# -- outputs -----------------------------------------------------------------------------
class InstrumentView(BaseModel):
    """An instrument with its current price and market cap (cents and whole dollars)."""

    symbol: str
    name: str
    sector: str
    size: str
    shares_outstanding: int
    price_cents: int
    market_cap_usd: int


class InstrumentList(BaseModel):
    """Instruments, by symbol."""

    instruments: list[InstrumentView]


class Quote(BaseModel):
    """A quote (cents). as_of is when the current 15-minute price bucket started; outside
    market hours it is the last close."""

    symbol: str
    price_cents: int
    previous_close_cents: int
    change_cents: int
    change_percent: float
    day_open_cents: int
    day_high_cents: int
    day_low_cents: int
    as_of: str
    market_open: bool


class QuoteView(BaseModel):
    """One quote."""

    quote: Quote


class QuoteList(BaseModel):
    """Quotes in the order asked."""

    quotes: list[Quote]


class PricePoint(BaseModel):
    """A historical price: bucket start (ISO) and price in cents."""

    at: str
    price_cents: int


class PriceHistory(BaseModel):
    """Recent prices of one symbol, oldest first, one per 15-minute trading bucket."""

    symbol: str
    prices: list[PricePoint]


class MarketStatus(BaseModel):
    """Whether the market is open now, and the next open/close (ISO and seconds from now)."""

    now: str
    market_open: bool
    next_open: str
    next_close: str
    seconds_until_open: int
    seconds_until_close: int
    hours: str


class TierLimits(BaseModel):
    """Limits of an account tier (cents)."""

    tier: Tier
    max_order_value_cents: int
    max_open_orders: int
    commission_cents: int


class AccountView(BaseModel):
    """The brokerage account (cents).

    available_cash_cents = cash - frozen; buying_power_cents additionally keeps back
    the current value of short positions; equity_cents = cash + market value of positions.
    """

    cash_cents: int
    frozen_cents: int
    available_cash_cents: int
    short_exposure_cents: int
    buying_power_cents: int
    positions_value_cents: int
    equity_cents: int
    open_orders: int
    tier: Tier
    limits: TierLimits


class FundsView(BaseModel):
    """Result of a transfer between wallet and brokerage (cents)."""

    amount_cents: int
    brokerage_cash_cents: int
    wallet_balance_cents: int


class OrderView(BaseModel):
    """An order as the agent sees it (prices in cents, times ISO-8601 UTC).

    frozen_cents is the cash a pending buy holds back; reserved_shares the long shares
    a pending sell holds back; expires_at when an unfilled limit order lapses.
    """

    order_id: str
    symbol: str
    side: Side
    order_type: OrderType
    quantity: int
    limit_price_cents: int | None
    status: OrderStatus
    fill_price_cents: int | None
    commission_cents: int
    frozen_cents: int
    reserved_shares: int
    placed_at: str
    filled_at: str | None
    expires_at: str | None


class OrderResult(BaseModel):
    """An order after placement or change, and the account's cash afterwards (cents)."""

    order: OrderView
    cash_cents: int
    available_cash_cents: int


class OrderList(BaseModel):
    """Orders, newest first."""

    orders: list[OrderView]


class PositionView(BaseModel):
    """A position valued at the current quote (cents)."""

    symbol: str
    quantity: int
    side: Literal["long", "short"]
    avg_price_cents: int
    price_cents: int
    market_value_cents: int
    unrealized_pnl_cents: int
    realized_pnl_cents: int


class PositionList(BaseModel):
    """Open positions, by symbol."""

    positions: list[PositionView]


class PortfolioView(BaseModel):
    """Portfolio value (cents): cash plus positions at current quotes."""

    cash_cents: int
    positions_value_cents: int
    equity_cents: int
    unrealized_pnl_cents: int
    positions: list[PositionView]
    as_of: str


class Watchlist(BaseModel):
    """Watched symbols with their quotes."""

    symbols: list[str]
    quotes: list[Quote]


class TierList(BaseModel):
    """Account tiers, the current tier, and the VIP upgrade fee and condition (cents)."""

    current_tier: Tier
    tiers: list[TierLimits]
    vip_fee_cents: int
    vip_min_equity_cents: int


class ActivityList(BaseModel):
    """Cash movements of the brokerage account, newest first."""

    activity: list[Activity]
