"""Market-data tools of the ``stocks`` app: instruments, quotes, price history, market hours."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from mcpgym.kernel.clock import iso
from mcpgym.kernel.errors import ErrorCode, ToolError
from mcpgym.kernel.spec import tool
from mcpgym.sandboxes.stocks.core import StocksCore
from mcpgym.sandboxes.stocks.market import bucket_at, bucket_start, is_open, next_close, next_open
from mcpgym.sandboxes.stocks.models import (
    Instrument,
    InstrumentList,
    InstrumentView,
    MarketStatus,
    PriceHistory,
    PricePoint,
    QuoteList,
    QuoteView,
)

Symbol = Annotated[str, Field(max_length=20, description="ticker symbol, e.g. NVLT")]


class MarketTools(StocksCore):
    """Instruments, quotes and market hours (all read-only)."""

    def _instrument_view(self, inst: Instrument) -> InstrumentView:
        """The instrument with its current price and market cap."""
        price = self._price(self.state, inst.symbol)
        return InstrumentView(
            symbol=inst.symbol,
            name=inst.name,
            sector=inst.sector,
            size=inst.size,
            shares_outstanding=inst.shares_outstanding,
            price_cents=price,
            market_cap_usd=inst.shares_outstanding * price // 100,
        )

    @tool("read", ["stocks.instrument"])
    def stocks_list_instruments(
        self,
        sector: Annotated[str | None, Field(max_length=40, description="only this sector, e.g. Technology")] = None,
        query: Annotated[
            str | None, Field(max_length=60, description="text to find in the symbol or company name")
        ] = None,
    ) -> InstrumentList:
        """List tradable instruments (symbol, company, sector, size, price in cents, market cap in
        USD), optionally filtered by sector or a name/symbol search."""
        items = sorted(self.state.instruments.values(), key=lambda i: i.symbol)
        if sector is not None:
            wanted = sector.strip().casefold()
            sectors = sorted({i.sector for i in items})
            if wanted not in {s.casefold() for s in sectors}:
                raise ToolError(
                    ErrorCode.NOT_FOUND,
                    f"unknown sector {sector[:40]!r}; sectors: {', '.join(sectors)}",
                    field="sector",
                )
            items = [i for i in items if i.sector.casefold() == wanted]
        if query is not None and query.strip():
            q = query.strip().casefold()
            items = [i for i in items if q in i.symbol.casefold() or q in i.name.casefold()]
        return InstrumentList(instruments=[self._instrument_view(i) for i in items])

    @tool("read", ["stocks.instrument"], id_args=["symbol"])
    def stocks_get_instrument(self, symbol: Symbol) -> InstrumentView:
        """Return one instrument: company, sector, size, shares outstanding, price (cents), market cap (USD)."""
        return self._instrument_view(self._instrument(self.state, symbol))

    @tool("read", ["stocks.quote", "stocks.market"], alternatives=["stocks_get_quotes"], id_args=["symbol"])
    def stocks_get_quote(self, symbol: Symbol) -> QuoteView:
        """Return the current quote of a symbol in cents: price, previous close, change, day
        open/high/low. Quotes change every 15 virtual minutes during market hours."""
        inst = self._instrument(self.state, symbol)
        return QuoteView(quote=self._quote(self.state, inst.symbol))

    @tool("read", ["stocks.quote", "stocks.market"], alternatives=["stocks_get_quote"], id_args=["symbols"])
    def stocks_get_quotes(
        self,
        symbols: Annotated[
            list[Annotated[str, Field(max_length=20)]],
            Field(min_length=1, max_length=30, description="ticker symbols (1-30)"),
        ],
    ) -> QuoteList:
        """Return current quotes (cents) of several symbols at once, in the order given."""
        out = []
        for s in symbols:
            inst = self._instrument(self.state, s, field="symbols")
            out.append(self._quote(self.state, inst.symbol))
        return QuoteList(quotes=out)

    @tool("read", ["stocks.market"])
    def stocks_get_market_status(self) -> MarketStatus:
        """Say whether the market is open now (09:30-16:00 UTC, Monday-Friday) and when it next
        opens and closes (ISO, and virtual seconds from now)."""
        now = self.now
        opens, closes = next_open(now), next_close(now)
        return MarketStatus(
            now=iso(now),
            market_open=is_open(now),
            next_open=iso(opens),
            next_close=iso(closes),
            seconds_until_open=0 if is_open(now) else opens - now,
            seconds_until_close=closes - now,
            hours="09:30-16:00 UTC, Monday to Friday",
        )

    @tool("read", ["stocks.quote"], id_args=["symbol"])
    def stocks_get_price_history(
        self,
        symbol: Symbol,
        buckets: Annotated[
            int, Field(ge=1, le=260, description="how many 15-minute trading buckets back (26 = one trading day)")
        ] = 26,
    ) -> PriceHistory:
        """Return recent prices of a symbol (cents), one per 15-minute trading bucket, oldest first."""
        inst = self._instrument(self.state, symbol)
        k = bucket_at(self.now)
        return PriceHistory(
            symbol=inst.symbol,
            prices=[
                PricePoint(at=iso(bucket_start(j)), price_cents=self._price(self.state, inst.symbol, j))
                for j in range(k - buckets + 1, k + 1)
            ],
        )
