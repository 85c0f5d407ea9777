"""The ``shop`` app: shops, items, search, cart, coupons, checkout paid from the system
wallet, orders with cancellation and returns, reviews and stars (see
:mod:`sandboxes.shop.app`). Importing this package registers the app."""

from sandboxes.shop.app import ShopApp
from sandboxes.shop.models import ShopState

__all__ = ["ShopApp", "ShopState"]
