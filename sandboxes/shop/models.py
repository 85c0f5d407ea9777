"""State models of the ``shop`` app (its output views are in :mod:`mcpgym.sandboxes.shop.views`).

Money is in integer cents (USD); times are virtual seconds since the Unix epoch in state and
ISO-8601 UTC strings in views. Seeded entities (shops, items, coupons, stars) have stable ids
(``shop-01``, ``item-0101``); orders and user reviews get generated ids and therefore live in
``VOLATILE_KEYS`` dicts with volatile id and timestamp fields.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from mcpgym.kernel.app import AppState
from mcpgym.kernel.volatile import VOLATILE, VOLATILE_KEYS

CATEGORIES: tuple[str, ...] = ("electronics", "books", "grocery", "home", "sports", "fashion", "toys")
"""Every shop category, in catalog order."""

SHIP_AFTER = 3 * 3600
"""Virtual seconds after placement when an order ships (cancelling is possible before)."""

DELIVER_AFTER = 2 * 86_400
"""Virtual seconds after placement when an order is delivered (returns are possible after)."""

RETURN_WINDOW = 30 * 86_400
"""Virtual seconds after delivery during which a delivered order may be returned."""

StoredStatus = Literal["placed", "cancelled", "returned"]
OrderStatus = Literal["placed", "shipped", "delivered", "cancelled", "returned"]


# -- state ---------------------------------------------------------------------------------
class Shop(BaseModel):
    """A shop of the marketplace.

    Attributes:
        shop_id: stable id shop-NN.
        name: display name.
        category: electronics, books, grocery, home, sports, fashion or toys.
        city: where the shop is based.
        rating: average customer rating, 1.0-5.0.
    """

    shop_id: str
    name: str
    category: str
    city: str
    rating: float


class Item(BaseModel):
    """An item a shop sells.

    Attributes:
        item_id: stable id item-SSNN (shop number, item number).
        shop_id: the shop selling it.
        name, brand, category: what it is (category = the shop's category).
        price_cents: unit price in cents (USD).
        stock: units available (0 = sold out).
        rating: average rating 1.0-5.0 over rating_count ratings.
        description: one sentence.
    """

    item_id: str
    shop_id: str
    name: str
    brand: str
    category: str
    price_cents: int
    stock: int
    rating: float
    rating_count: int
    description: str


class CartLine(BaseModel):
    """One cart line: quantity units of item_id."""

    item_id: str
    quantity: int


class Coupon(BaseModel):
    """A one-use coupon code.

    Attributes:
        code: upper-case code, e.g. SAVE20.
        description: human-readable terms.
        percent_off: percentage taken off the eligible subtotal (0 when a fixed amount).
        amount_off_cents: fixed amount off in cents (0 when a percentage), capped at the
            eligible subtotal.
        min_subtotal_cents: the eligible subtotal must be at least this (cents).
        shop_id: when set, only that shop's items are eligible.
        expires_at: virtual seconds after which the coupon no longer applies.
        used: consumed by a checkout.
    """

    code: str
    description: str
    percent_off: int = 0
    amount_off_cents: int = 0
    min_subtotal_cents: int = 0
    shop_id: str | None = None
    expires_at: int
    used: bool = False


class OrderLine(BaseModel):
    """One line of an order (price frozen at purchase, cents)."""

    item_id: str
    shop_id: str
    name: str
    unit_price_cents: int
    quantity: int
    line_total_cents: int


class Order(BaseModel):
    """An order. status is stored as placed/cancelled/returned; shipped and delivered are
    derived from created_at and the virtual clock (shipped 3 hours after it was placed, delivered 2 days after).

    Attributes:
        order_id: generated id (volatile).
        status: placed | cancelled | returned.
        lines: the order lines.
        subtotal_cents, discount_cents, total_cents: amounts in cents; total = subtotal - discount.
        coupon_code: the coupon used, if any.
        refunded_cents: amount refunded by a cancellation or return.
        return_reason: the reason given for a return.
        created_at, closed_at: virtual seconds (volatile).
        transaction_id, authorization_id: wallet references (volatile).
    """

    order_id: Annotated[str, VOLATILE]
    status: StoredStatus = "placed"
    lines: list[OrderLine]
    subtotal_cents: int
    discount_cents: int = 0
    coupon_code: str | None = None
    total_cents: int
    refunded_cents: int = 0
    return_reason: str | None = None
    created_at: Annotated[int, VOLATILE]
    closed_at: Annotated[int | None, VOLATILE] = None
    transaction_id: Annotated[str, VOLATILE] = ""
    authorization_id: Annotated[str, VOLATILE] = ""


class Review(BaseModel):
    """A review of an item (rating 1-5 and text)."""

    review_id: Annotated[str, VOLATILE]
    item_id: str
    author: str
    rating: int
    text: str
    by_user: bool = False
    created_at: Annotated[int, VOLATILE]


class Star(BaseModel):
    """A starred shop or item."""

    target_id: str
    kind: Literal["shop", "item"]
    starred_at: Annotated[int, VOLATILE]


class ShopState(AppState):
    """State of the shop app: catalog, cart, coupons, orders, reviews and stars."""

    shops: dict[str, Shop]
    items: dict[str, Item]
    cart: dict[str, CartLine] = Field(default_factory=dict)
    cart_coupon: str | None = None
    coupons: dict[str, Coupon] = Field(default_factory=dict)
    orders: Annotated[dict[str, Order], VOLATILE_KEYS] = Field(default_factory=dict)
    reviews: Annotated[dict[str, Review], VOLATILE_KEYS] = Field(default_factory=dict)
    stars: dict[str, Star] = Field(default_factory=dict)


def effective_status(order: Order, now: int) -> OrderStatus:
    """Return the status an agent sees for ``order`` at virtual time ``now``.

    A ``placed`` order reads ``shipped`` from ``created_at + SHIP_AFTER`` and ``delivered``
    from ``created_at + DELIVER_AFTER``; ``cancelled`` and ``returned`` are final.
    """
    if order.status != "placed":
        return order.status
    if now >= order.created_at + DELIVER_AFTER:
        return "delivered"
    if now >= order.created_at + SHIP_AFTER:
        return "shipped"
    return "placed"
