"""Account tools of the ``stocks`` app: cash account, transfers with the wallet, activity,
tiers and the VIP upgrade, and the watchlist.

The brokerage cash account is separate from the system wallet: money moves between them only
through ``stocks_deposit_funds`` and ``stocks_withdraw_funds`` (recorded as wallet
transactions by the system app).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from mcpgym.kernel.errors import ErrorCode, ToolError
from mcpgym.kernel.spec import tool
from mcpgym.sandboxes.stocks.core import TIERS, VIP_FEE, VIP_MIN_EQUITY, StocksCore
from mcpgym.sandboxes.stocks.models import AccountView, Activity, ActivityList, FundsView, TierList, Watchlist

MAX_WATCHLIST = 20
Amount = Annotated[int, Field(ge=1, le=100_000_000, description="amount in cents")]
Symbol = Annotated[str, Field(max_length=20, description="ticker symbol, e.g. NVLT")]


class AccountTools(StocksCore):
    """Cash account, transfers, tiers and watchlist."""

    @tool("read", ["stocks.account"])
    def stocks_get_account(self) -> AccountView:
        """Return the brokerage account in cents: cash, frozen cash (pending buys), available
        cash, buying power, positions value, equity, open orders, tier and its limits."""
        return self._account_view(self._view())

    @tool(
        "write",
        ["stocks.account", "wallet.balance"],
        preconditions=["wallet.balance"],
        remedies={"precondition_failed": ["system_transfer_from_savings"]},
    )
    def stocks_deposit_funds(self, amount_cents: Amount) -> FundsView:
        """Move amount_cents from the wallet into the brokerage cash account.

        Fails with precondition_failed when the wallet balance is too small (move money from
        savings with system_transfer_from_savings first).
        """
        system = self.other("system")
        st = self._begin()
        balance = system.state.wallet.balance_cents
        if amount_cents > balance:
            raise ToolError(
                ErrorCode.PRECONDITION_FAILED,
                f"the wallet holds {balance} cents, {amount_cents} needed; system_transfer_from_savings can top it up",
                field="amount_cents",
                details={"wallet_balance_cents": balance},
            )
        self._commit(st)
        system.record(-amount_cents, "deposit to brokerage account", reference="stocks")
        st.account.cash_cents += amount_cents
        st.activity.append(Activity(kind="deposit", amount_cents=amount_cents, memo="from wallet", at=self.now))
        return FundsView(
            amount_cents=amount_cents,
            brokerage_cash_cents=st.account.cash_cents,
            wallet_balance_cents=system.state.wallet.balance_cents,
        )

    @tool(
        "write",
        ["stocks.account", "wallet.balance"],
        preconditions=["stocks.account"],
        remedies={"precondition_failed": ["stocks_cancel_order"]},
        destructive=True,
    )
    def stocks_withdraw_funds(self, amount_cents: Amount) -> FundsView:
        """Move amount_cents of brokerage cash back to the wallet. Only buying power can be
        withdrawn: cash frozen by pending orders or backing short positions stays."""
        system = self.other("system")
        st = self._begin()
        power = self._buying_power(st)
        if amount_cents > power:
            raise ToolError(
                ErrorCode.PRECONDITION_FAILED,
                f"only {max(0, power)} cents can be withdrawn (cash minus frozen funds "
                "and short exposure); cancel pending orders to free frozen cash",
                field="amount_cents",
                details={"withdrawable_cents": max(0, power)},
            )
        self._commit(st)
        st.account.cash_cents -= amount_cents
        system.record(amount_cents, "withdrawal from brokerage account", reference="stocks")
        st.activity.append(Activity(kind="withdrawal", amount_cents=-amount_cents, memo="to wallet", at=self.now))
        return FundsView(
            amount_cents=amount_cents,
            brokerage_cash_cents=st.account.cash_cents,
            wallet_balance_cents=system.state.wallet.balance_cents,
        )

    @tool("read", ["stocks.account"])
    def stocks_list_activity(
        self, limit: Annotated[int, Field(ge=1, le=200, description="most entries")] = 30
    ) -> ActivityList:
        """List brokerage cash movements (deposits, withdrawals, fills, fees; cents, signed), newest first."""
        st = self._view()
        return ActivityList(activity=list(reversed(st.activity))[:limit])

    @tool("read", ["stocks.tier"])
    def stocks_list_tiers(self) -> TierList:
        """List the account tiers with their limits (max order value and commission in cents,
        max open orders), the current tier, and the VIP fee and minimum equity (cents)."""
        return TierList(
            current_tier=self.state.account.tier,
            tiers=list(TIERS.values()),
            vip_fee_cents=VIP_FEE,
            vip_min_equity_cents=VIP_MIN_EQUITY,
        )

    @tool(
        "write",
        ["stocks.tier", "stocks.account"],
        preconditions=["stocks.account", "stocks.tier"],
        remedies={"precondition_failed": ["stocks_deposit_funds"]},
    )
    def stocks_upgrade_account(self) -> AccountView:
        """Upgrade the account to VIP (higher order value cap, more open orders, no commission).

        Needs equity (cash + positions) of at least 500000 cents; the 4900-cent fee is taken
        from brokerage cash. Fails with precondition_failed otherwise (deposit more with
        stocks_deposit_funds).
        """
        st = self._begin()
        if st.account.tier == "vip":
            raise ToolError(ErrorCode.CONFLICT, "the account is already VIP")
        view = self._account_view(st)
        if view.equity_cents < VIP_MIN_EQUITY:
            raise ToolError(
                ErrorCode.PRECONDITION_FAILED,
                f"VIP needs equity of {VIP_MIN_EQUITY} cents; the account has {view.equity_cents}",
                details={"equity_cents": view.equity_cents, "needed_cents": VIP_MIN_EQUITY},
            )
        if view.buying_power_cents < VIP_FEE:
            raise ToolError(
                ErrorCode.PRECONDITION_FAILED,
                f"the {VIP_FEE}-cent fee needs free cash; buying power is {view.buying_power_cents} cents",
                details={"buying_power_cents": view.buying_power_cents},
            )
        self._commit(st)
        st.account.cash_cents -= VIP_FEE
        st.account.tier = "vip"
        st.account.vip_since = self.now
        st.activity.append(Activity(kind="fee", amount_cents=-VIP_FEE, memo="VIP upgrade", at=self.now))
        return self._account_view(st)

    # -- watchlist ---------------------------------------------------------------------------------
    def _watchlist(self, st) -> Watchlist:  # noqa: ANN001 - StocksState
        """The watchlist of ``st`` with current quotes."""
        return Watchlist(symbols=list(st.watchlist), quotes=[self._quote(st, s) for s in st.watchlist])

    @tool("read", ["stocks.watchlist"])
    def stocks_get_watchlist(self) -> Watchlist:
        """Return the watched symbols with their current quotes (cents)."""
        return self._watchlist(self.state)

    @tool(
        "write",
        ["stocks.watchlist"],
        remedies={"precondition_failed": ["stocks_remove_from_watchlist"]},
        id_args=["symbol"],
    )
    def stocks_add_to_watchlist(self, symbol: Symbol) -> Watchlist:
        """Add a symbol to the watchlist (at most 20; adding one already there changes nothing)."""
        st = self._begin()
        sym = self._instrument(st, symbol).symbol
        if sym not in st.watchlist:
            if len(st.watchlist) >= MAX_WATCHLIST:
                raise ToolError(
                    ErrorCode.PRECONDITION_FAILED,
                    f"the watchlist holds at most {MAX_WATCHLIST} symbols; remove one first",
                    field="symbol",
                )
            st.watchlist.append(sym)
        self._commit(st)
        return self._watchlist(st)

    @tool("write", ["stocks.watchlist"], id_args=["symbol"], destructive=True)
    def stocks_remove_from_watchlist(self, symbol: Symbol) -> Watchlist:
        """Remove a symbol from the watchlist."""
        st = self._begin()
        sym = symbol.strip().upper()
        if sym not in st.watchlist:
            raise ToolError(ErrorCode.NOT_FOUND, f"{symbol[:20]!r} is not on the watchlist", field="symbol")
        st.watchlist.remove(sym)
        self._commit(st)
        return self._watchlist(st)
