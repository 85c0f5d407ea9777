"""The ``shop`` app: a marketplace of seeded shops with search, cart, coupons, checkout
through the system wallet, order history with cancellation and returns, reviews and stars.

Tools are grouped by area in :mod:`mcpgym.sandboxes.shop.browse` (catalog, search, reviews, stars)
and :mod:`mcpgym.sandboxes.shop.orders` (cart, coupons, wallet, checkout, orders); the seeded data
comes from :mod:`mcpgym.sandboxes.shop.catalog`. Money is integer cents (USD); times are virtual
seconds (ISO-8601 in tool output).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpgym.kernel.app import App, register_app
from mcpgym.sandboxes.shop.browse import BrowseTools
from mcpgym.sandboxes.shop.catalog import generate_state
from mcpgym.sandboxes.shop.models import ShopState
from mcpgym.sandboxes.shop.orders import OrderTools

if TYPE_CHECKING:
    from mcpgym.kernel.world import World


@register_app
class ShopApp(BrowseTools, OrderTools, App):
    """Online shopping: shops, items, cart, coupons, checkout, orders, reviews, stars."""

    name = "shop"
    title = "Shop"
    State = ShopState
    state: ShopState

    @classmethod
    def generate(cls, world: World) -> ShopState:
        """Seeded initial state: 8 shops (shop-01..shop-08) in 7 categories with 8-11 items
        each (item-SSNN), five coupons (one expired), four past orders, reviews and stars."""
        return generate_state(world, cls.stream)
