"""Output views of the shop app's tools (the tools' output schemas).

Amounts are integer cents (USD); times are ISO-8601 UTC strings.
"""

from __future__ import annotations

from pydantic import BaseModel

from mcpgym.sandboxes.shop.models import OrderLine


class ShopView(BaseModel):
    """A shop with its number of items."""

    shop_id: str
    name: str
    category: str
    city: str
    rating: float
    item_count: int


class ShopList(BaseModel):
    """Shops, in id order."""

    shops: list[ShopView]
    count: int


class ItemView(BaseModel):
    """An item: price in cents, units in stock, average rating."""

    item_id: str
    shop_id: str
    shop_name: str
    name: str
    brand: str
    category: str
    price_cents: int
    stock: int
    in_stock: bool
    rating: float
    rating_count: int


class ShopDetails(BaseModel):
    """A shop and every item it sells."""

    shop: ShopView
    items: list[ItemView]


class ItemDetails(BaseModel):
    """An item with its description and number of written reviews."""

    item: ItemView
    description: str
    review_count: int


class SearchResult(BaseModel):
    """Items matching a keyword search; count is the number of matches before limit."""

    query: str
    sort: str
    count: int
    items: list[ItemView]


class FuzzyItemView(ItemView):
    """An item found by fuzzy search, with its similarity score (0-1, higher is closer)."""

    score: float


class FuzzySearchResult(BaseModel):
    """Items close to a possibly misspelt query, best first."""

    query: str
    count: int
    items: list[FuzzyItemView]


class ReviewView(BaseModel):
    """One review (created_at as ISO-8601)."""

    review_id: str
    author: str
    rating: int
    text: str
    by_user: bool
    created_at: str


class ReviewList(BaseModel):
    """An item's average rating and its written reviews, newest first."""

    item_id: str
    rating: float
    rating_count: int
    reviews: list[ReviewView]


class CartLineView(BaseModel):
    """A cart line with its unit price and line total in cents."""

    item_id: str
    shop_id: str
    name: str
    unit_price_cents: int
    quantity: int
    line_total_cents: int
    stock: int


class CartView(BaseModel):
    """The cart: lines, subtotal, coupon discount and total, all in cents.

    coupon_note explains why an applied coupon currently gives no discount.
    """

    lines: list[CartLineView]
    item_count: int
    subtotal_cents: int
    coupon_code: str | None
    discount_cents: int
    coupon_note: str | None
    total_cents: int


class CouponView(BaseModel):
    """A coupon's terms and state (expires_at as ISO-8601)."""

    code: str
    description: str
    percent_off: int
    amount_off_cents: int
    min_subtotal_cents: int
    shop_id: str | None
    expires_at: str
    expired: bool
    used: bool
    applied_to_cart: bool


class CouponList(BaseModel):
    """Every coupon code the user holds."""

    coupons: list[CouponView]


class WalletView(BaseModel):
    """Wallet balance and savings in cents (USD)."""

    balance_cents: int
    savings_cents: int
    currency: str


class OrderView(BaseModel):
    """An order: status, lines and amounts in cents, times as ISO-8601.

    status is placed (cancellable), shipped, delivered (returnable until
    returnable_until), cancelled or returned.
    """

    order_id: str
    status: str
    lines: list[OrderLine]
    subtotal_cents: int
    discount_cents: int
    coupon_code: str | None
    total_cents: int
    refunded_cents: int
    placed_at: str
    ships_at: str
    delivered_at: str
    returnable_until: str
    closed_at: str | None
    return_reason: str | None


class OrderList(BaseModel):
    """Orders, newest first."""

    orders: list[OrderView]
    count: int


class StarEntry(BaseModel):
    """A starred shop or item with its name."""

    target_id: str
    kind: str
    name: str


class StarList(BaseModel):
    """Starred shops and items."""

    shops: list[StarEntry]
    items: list[StarEntry]


class StarResult(BaseModel):
    """Result of starring or unstarring: whether it is now starred and whether anything changed."""

    target_id: str
    kind: str
    starred: bool
    changed: bool
