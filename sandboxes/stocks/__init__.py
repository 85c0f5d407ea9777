"""The ``stocks`` app: a brokerage with deterministic quotes on the virtual clock, market and
limit orders, short selling, tiers and a watchlist (see :mod:`mcpgym.sandboxes.stocks.app`).
Importing this package registers it."""

from mcpgym.sandboxes.stocks.app import StocksApp
from mcpgym.sandboxes.stocks.models import StocksState

__all__ = ["StocksApp", "StocksState"]
