"""The ``shop`` app: shops, items, search, cart, coupons, checkout paid from the system
wallet, orders with cancellation and returns, reviews and stars (see
:mod:`mcpgym.sandboxes.shop.app`). Importing this package registers the app."""

from mcpgym.sandboxes.shop.app import ShopApp
from mcpgym.sandboxes.shop.models import ShopState

__all__ = ["ShopApp", "ShopState"]
