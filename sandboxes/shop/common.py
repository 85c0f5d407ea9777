"""Lookups and view builders shared by the shop app's tool groups.

:class:`ShopCore` is a mixin of :class:`mcpgym.sandboxes.shop.app.ShopApp`; it reads ``self.state``
(a :class:`ShopState`) and the app's clock, and never changes state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpgym.kernel.clock import iso
from mcpgym.kernel.errors import ErrorCode, ToolError
from mcpgym.sandboxes.shop.models import (
    CATEGORIES,
    DELIVER_AFTER,
    RETURN_WINDOW,
    SHIP_AFTER,
    Coupon,
    Item,
    Order,
    Shop,
    ShopState,
    effective_status,
)
from mcpgym.sandboxes.shop.views import (
    CartLineView,
    CartView,
    ItemView,
    OrderView,
    ShopView,
)

if TYPE_CHECKING:
    from mcpgym.kernel.world import World


class ShopCore:
    """Shared helpers: id lookups raising ``not_found``, views, cart and coupon arithmetic."""

    state: ShopState
    world: World
    now: int  # provided by App (virtual seconds)

    # -- lookups ---------------------------------------------------------------------------
    def _shop(self, shop_id: str) -> Shop:
        """Return shop ``shop_id``. Raises ToolError ``not_found`` (field ``shop_id``)."""
        shop = self.state.shops.get(shop_id.strip())
        if shop is None:
            raise ToolError(ErrorCode.NOT_FOUND, f"no shop {shop_id!r}; see shop_list_shops", field="shop_id")
        return shop

    def _item(self, item_id: str, field: str = "item_id") -> Item:
        """Return item ``item_id``. Raises ToolError ``not_found`` naming ``field``."""
        item = self.state.items.get(item_id.strip())
        if item is None:
            raise ToolError(ErrorCode.NOT_FOUND, f"no item {item_id!r}; search with shop_search_items", field=field)
        return item

    def _order(self, order_id: str) -> Order:
        """Return order ``order_id``. Raises ToolError ``not_found`` (field ``order_id``)."""
        order = self.state.orders.get(order_id.strip())
        if order is None:
            raise ToolError(ErrorCode.NOT_FOUND, f"no order {order_id!r}; see shop_list_orders", field="order_id")
        return order

    @staticmethod
    def _category(category: str | None) -> str | None:
        """Normalise a category filter. Raises ToolError ``invalid_argument`` for an unknown one."""
        if category is None:
            return None
        value = category.strip().lower()
        if value not in CATEGORIES:
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT,
                f"unknown category {category!r}; one of {', '.join(CATEGORIES)}",
                field="category",
            )
        return value

    # -- views -----------------------------------------------------------------------------
    def _shop_view(self, shop: Shop) -> ShopView:
        count = sum(1 for it in self.state.items.values() if it.shop_id == shop.shop_id)
        return ShopView(
            shop_id=shop.shop_id,
            name=shop.name,
            category=shop.category,
            city=shop.city,
            rating=shop.rating,
            item_count=count,
        )

    def _item_view(self, item: Item) -> ItemView:
        shop = self.state.shops.get(item.shop_id)
        return ItemView(
            item_id=item.item_id,
            shop_id=item.shop_id,
            shop_name=shop.name if shop else "",
            name=item.name,
            brand=item.brand,
            category=item.category,
            price_cents=item.price_cents,
            stock=item.stock,
            in_stock=item.stock > 0,
            rating=item.rating,
            rating_count=item.rating_count,
        )

    def _order_view(self, order: Order) -> OrderView:
        created = order.created_at
        return OrderView(
            order_id=order.order_id,
            status=effective_status(order, self.now),
            lines=list(order.lines),
            subtotal_cents=order.subtotal_cents,
            discount_cents=order.discount_cents,
            coupon_code=order.coupon_code,
            total_cents=order.total_cents,
            refunded_cents=order.refunded_cents,
            placed_at=iso(created),
            ships_at=iso(created + SHIP_AFTER),
            delivered_at=iso(created + DELIVER_AFTER),
            returnable_until=iso(created + DELIVER_AFTER + RETURN_WINDOW),
            closed_at=iso(order.closed_at) if order.closed_at is not None else None,
            return_reason=order.return_reason,
        )

    # -- cart arithmetic ---------------------------------------------------------------------
    def _cart_lines(self) -> list[CartLineView]:
        lines = []
        for item_id in sorted(self.state.cart):
            line = self.state.cart[item_id]
            item = self.state.items[item_id]
            lines.append(
                CartLineView(
                    item_id=item_id,
                    shop_id=item.shop_id,
                    name=item.name,
                    unit_price_cents=item.price_cents,
                    quantity=line.quantity,
                    line_total_cents=item.price_cents * line.quantity,
                    stock=item.stock,
                )
            )
        return lines

    def _coupon_discount(self, coupon: Coupon, lines: list[CartLineView]) -> tuple[int, str | None]:
        """Return ``(discount_cents, note)``: the discount ``coupon`` gives on ``lines`` now, or 0
        and the reason it does not apply."""
        if coupon.used:
            return 0, f"coupon {coupon.code} was already used"
        if self.now > coupon.expires_at:
            return 0, f"coupon {coupon.code} expired on {iso(coupon.expires_at)}"
        eligible = sum(ln.line_total_cents for ln in lines if coupon.shop_id is None or ln.shop_id == coupon.shop_id)
        if eligible < coupon.min_subtotal_cents or eligible == 0:
            where = f" of items from {coupon.shop_id}" if coupon.shop_id else ""
            return 0, (
                f"coupon {coupon.code} needs a subtotal{where} of at least {coupon.min_subtotal_cents} cents; "
                f"the cart has {eligible} cents"
            )
        if coupon.percent_off:
            return eligible * coupon.percent_off // 100, None
        return min(coupon.amount_off_cents, eligible), None

    def _cart_view(self) -> CartView:
        lines = self._cart_lines()
        subtotal = sum(ln.line_total_cents for ln in lines)
        discount, note = 0, None
        code = self.state.cart_coupon
        if code is not None:
            coupon = self.state.coupons.get(code)
            if coupon is None:  # pragma: no cover - coupons are never deleted
                note = f"coupon {code} no longer exists"
            else:
                discount, note = self._coupon_discount(coupon, lines)
        return CartView(
            lines=lines,
            item_count=sum(ln.quantity for ln in lines),
            subtotal_cents=subtotal,
            coupon_code=code,
            discount_cents=discount,
            coupon_note=note,
            total_cents=subtotal - discount,
        )
