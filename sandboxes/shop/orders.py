"""Cart, coupon, wallet, checkout and order tools of the shop app.

Payment goes through the ``system`` app: a checkout consumes a one-use payment authorisation
from ``system_authorize_payment`` via ``system.charge``; cancellations and returns credit the
wallet via ``system.refund``. All amounts are integer cents (USD).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from mcpgym.kernel.clock import iso
from mcpgym.kernel.errors import ErrorCode, ToolError
from mcpgym.kernel.spec import tool
from mcpgym.sandboxes.shop.common import ShopCore
from mcpgym.sandboxes.shop.models import (
    DELIVER_AFTER,
    RETURN_WINDOW,
    CartLine,
    Order,
    OrderLine,
    OrderStatus,
    effective_status,
)
from mcpgym.sandboxes.shop.views import (
    CartView,
    CouponList,
    CouponView,
    OrderList,
    OrderView,
    WalletView,
)

PAYMENT_REMEDIES = {
    "precondition_failed": ["system_authorize_payment", "system_transfer_from_savings"],
    "not_found": ["system_authorize_payment"],
}
"""What cures a failed payment: a fresh authorisation, or money moved from savings."""

ItemIdArg = Annotated[str, Field(description="item id, e.g. item-0103")]
OrderIdArg = Annotated[str, Field(description="order id, e.g. ord-1a2b3c4d")]
AuthIdArg = Annotated[str, Field(description="a fresh payment authorisation id from system_authorize_payment")]


def _memo(lines: list[OrderLine]) -> str:
    """Wallet memo of an order: its item names (no generated ids, so it compares across runs)."""
    names = ", ".join(f"{ln.quantity} x {ln.name}" for ln in lines)
    return f"shop order: {names}"[:200]


class OrderTools(ShopCore):
    """Cart, coupons, wallet balance, checkout, direct purchase and order management."""

    # -- cart ------------------------------------------------------------------------------
    @tool("read", ["shop.cart"])
    def shop_get_cart(self) -> CartView:
        """Show the cart: lines (unit price, quantity, line total), subtotal, the applied
        coupon's discount and the total, all in cents."""
        return self._cart_view()

    def _check_stock(self, item_id: str, wanted: int, field: str = "quantity") -> None:
        item = self.state.items[item_id]
        if wanted > item.stock:
            what = "is sold out" if item.stock == 0 else f"has only {item.stock} in stock"
            raise ToolError(
                ErrorCode.PRECONDITION_FAILED,
                f"{item.item_id} ({item.name}) {what}; {wanted} requested",
                field=field,
                details={"item_id": item.item_id, "stock": item.stock, "requested": wanted},
            )

    @tool("write", ["shop.cart"], preconditions=["shop.item"])
    def shop_add_to_cart(
        self,
        item_id: ItemIdArg,
        quantity: Annotated[int, Field(ge=1, le=100, description="units to add")] = 1,
    ) -> CartView:
        """Add quantity units of an item to the cart (added to any units already there).
        The cart may not hold more units than the item's stock.

        Errors: not_found (field item_id), precondition_failed (not enough stock).
        """
        item = self._item(item_id)
        line = self.state.cart.get(item.item_id)
        have = line.quantity if line else 0
        self._check_stock(item.item_id, have + quantity)
        if line is None:
            self.state.cart[item.item_id] = CartLine(item_id=item.item_id, quantity=quantity)
        else:
            line.quantity = have + quantity
        return self._cart_view()

    def _cart_line(self, item_id: str) -> CartLine:
        line = self.state.cart.get(item_id.strip())
        if line is None:
            self._item(item_id)  # unknown item -> not_found too
            raise ToolError(ErrorCode.NOT_FOUND, f"{item_id} is not in the cart; see shop_get_cart", field="item_id")
        return line

    @tool("write", ["shop.cart"], destructive=True)
    def shop_remove_from_cart(self, item_id: ItemIdArg) -> CartView:
        """Remove an item's line from the cart.

        Errors: not_found (field item_id) when the item is not in the cart.
        """
        line = self._cart_line(item_id)
        del self.state.cart[line.item_id]
        return self._cart_view()

    @tool("write", ["shop.cart"], preconditions=["shop.item"])
    def shop_update_cart_quantity(
        self,
        item_id: ItemIdArg,
        quantity: Annotated[int, Field(ge=0, le=100, description="new number of units; 0 removes the line")],
    ) -> CartView:
        """Set the quantity of an item already in the cart (0 removes it); at most its stock.

        Errors: not_found (field item_id), precondition_failed (not enough stock).
        """
        line = self._cart_line(item_id)
        if quantity == 0:
            del self.state.cart[line.item_id]
        else:
            self._check_stock(line.item_id, quantity)
            line.quantity = quantity
        return self._cart_view()

    # -- coupons ---------------------------------------------------------------------------
    @tool("read", ["shop.coupon"])
    def shop_list_coupons(self) -> CouponList:
        """List the user's coupon codes with their terms: percent or amount off (cents), minimum
        subtotal (cents), shop restriction, expiry, and whether used or applied to the cart."""
        out = []
        for code in sorted(self.state.coupons):
            c = self.state.coupons[code]
            out.append(
                CouponView(
                    code=c.code,
                    description=c.description,
                    percent_off=c.percent_off,
                    amount_off_cents=c.amount_off_cents,
                    min_subtotal_cents=c.min_subtotal_cents,
                    shop_id=c.shop_id,
                    expires_at=iso(c.expires_at),
                    expired=self.now > c.expires_at,
                    used=c.used,
                    applied_to_cart=self.state.cart_coupon == c.code,
                )
            )
        return CouponList(coupons=out)

    @tool(
        "write",
        ["shop.cart"],
        preconditions=["shop.cart", "shop.coupon"],
        remedies={"precondition_failed": ["shop_add_to_cart"]},
        id_args=["coupon_code"],
    )
    def shop_apply_coupon(
        self,
        coupon_code: Annotated[str, Field(max_length=40, description="coupon code, e.g. SAVE10 (case-insensitive)")],
    ) -> CartView:
        """Apply a coupon code to the cart (one coupon per cart; replaces any other). The cart
        must meet the coupon's minimum subtotal now; the discount is taken at checkout.

        Errors: not_found (field coupon_code), precondition_failed (used, expired, or the cart's
        eligible subtotal is below the minimum).
        """
        code = coupon_code.strip().upper()
        coupon = self.state.coupons.get(code)
        if coupon is None:
            raise ToolError(
                ErrorCode.NOT_FOUND, f"no coupon {coupon_code!r}; see shop_list_coupons", field="coupon_code"
            )
        _, note = self._coupon_discount(coupon, self._cart_lines())
        if note is not None:
            raise ToolError(ErrorCode.PRECONDITION_FAILED, note, field="coupon_code")
        self.state.cart_coupon = code
        return self._cart_view()

    @tool("write", ["shop.cart"], destructive=True)
    def shop_remove_coupon(self) -> CartView:
        """Remove the coupon applied to the cart.

        Errors: precondition_failed when no coupon is applied.
        """
        if self.state.cart_coupon is None:
            raise ToolError(ErrorCode.PRECONDITION_FAILED, "no coupon is applied to the cart")
        self.state.cart_coupon = None
        return self._cart_view()

    # -- wallet ----------------------------------------------------------------------------
    @tool("read", ["wallet.balance"], alternatives=["system_get_wallet_balance"])
    def shop_get_wallet_balance(self) -> WalletView:
        """Return the wallet balance and savings that pay for orders, in cents (USD)."""
        w = self.other("system").state.wallet  # type: ignore[attr-defined]
        return WalletView(balance_cents=w.balance_cents, savings_cents=w.savings_cents, currency=w.currency)

    # -- purchase --------------------------------------------------------------------------
    def _place(self, lines: list[OrderLine], discount: int, coupon_code: str | None, authorization_id: str) -> Order:
        """Charge the wallet and record the order; nothing changes when the charge fails."""
        subtotal = sum(ln.line_total_cents for ln in lines)
        total = subtotal - discount
        order_id = self.new_id("ord")  # type: ignore[attr-defined]
        try:
            txn = self.other("system").charge(authorization_id.strip(), total, _memo(lines), reference=order_id)  # type: ignore[attr-defined]
        except ToolError:
            self.state.id_counter -= 1  # the order was not placed: give the id back
            raise
        for ln in lines:
            self.state.items[ln.item_id].stock -= ln.quantity
        order = Order(
            order_id=order_id,
            lines=lines,
            subtotal_cents=subtotal,
            discount_cents=discount,
            coupon_code=coupon_code,
            total_cents=total,
            created_at=self.now,
            transaction_id=txn,
            authorization_id=authorization_id.strip(),
        )
        self.state.orders[order_id] = order
        return order

    @tool(
        "write",
        ["shop.cart", "shop.order", "shop.item", "shop.coupon", "wallet.balance", "system.payment_auth"],
        preconditions=["shop.cart", "wallet.balance", "system.payment_auth"],
        remedies=PAYMENT_REMEDIES,
        alternatives=["shop_buy_item"],
        id_args=[],
    )
    def shop_checkout(self, authorization_id: AuthIdArg) -> OrderView:
        """Buy everything in the cart as one order, paid from the wallet. Needs a fresh one-use
        payment authorisation (system_authorize_payment) covering the total in cents, enough
        wallet balance and enough stock. Applies the cart's coupon if it still qualifies,
        decrements stock and empties the cart.

        Errors: precondition_failed (empty cart, not enough stock, authorisation used, expired
        or below the total, insufficient balance), not_found (unknown authorization_id).
        """
        if not self.state.cart:
            raise ToolError(ErrorCode.PRECONDITION_FAILED, "the cart is empty; add items with shop_add_to_cart first")
        view = self._cart_view()
        for ln in view.lines:
            self._check_stock(ln.item_id, ln.quantity, field="item_id")
        lines = [
            OrderLine(
                item_id=ln.item_id,
                shop_id=ln.shop_id,
                name=ln.name,
                unit_price_cents=ln.unit_price_cents,
                quantity=ln.quantity,
                line_total_cents=ln.line_total_cents,
            )
            for ln in view.lines
        ]
        coupon = view.coupon_code if view.discount_cents > 0 else None
        order = self._place(lines, view.discount_cents, coupon, authorization_id)
        if coupon is not None:
            self.state.coupons[coupon].used = True
        self.state.cart.clear()
        self.state.cart_coupon = None
        return self._order_view(order)

    @tool(
        "write",
        ["shop.order", "shop.item", "shop.cart", "wallet.balance", "system.payment_auth"],
        preconditions=["shop.item", "wallet.balance", "system.payment_auth"],
        remedies=PAYMENT_REMEDIES,
        alternatives=["shop_checkout"],
        id_args=["item_id"],
    )
    def shop_buy_item(
        self,
        item_id: ItemIdArg,
        quantity: Annotated[int, Field(ge=1, le=100, description="units to buy")],
        authorization_id: AuthIdArg,
    ) -> OrderView:
        """Buy one item directly as its own order, bypassing the cart (no coupon). Needs a fresh
        one-use payment authorisation covering price x quantity in cents, enough balance and
        stock. Units of that item in the cart are taken off the cart line.

        Errors: not_found (item_id, or unknown authorization_id), precondition_failed (not enough
        stock, authorisation used, expired or below the total, insufficient balance).
        """
        item = self._item(item_id)
        self._check_stock(item.item_id, quantity)
        line = OrderLine(
            item_id=item.item_id,
            shop_id=item.shop_id,
            name=item.name,
            unit_price_cents=item.price_cents,
            quantity=quantity,
            line_total_cents=item.price_cents * quantity,
        )
        order = self._place([line], 0, None, authorization_id)
        cart_line = self.state.cart.get(item.item_id)
        if cart_line is not None:
            cart_line.quantity -= quantity
            if cart_line.quantity <= 0:
                del self.state.cart[item.item_id]
        return self._order_view(order)

    # -- orders ----------------------------------------------------------------------------
    @tool("read", ["shop.order"])
    def shop_list_orders(
        self,
        status: Annotated[OrderStatus | None, Field(description="only orders with this status")] = None,
        limit: Annotated[int, Field(ge=1, le=100, description="most orders to return")] = 20,
    ) -> OrderList:
        """List the order history, newest first, optionally by status: placed (can still be
        cancelled), shipped, delivered (can be returned), cancelled or returned."""
        orders = sorted(self.state.orders.values(), key=lambda o: (-o.created_at, o.order_id))
        views = [self._order_view(o) for o in orders]
        if status is not None:
            views = [v for v in views if v.status == status]
        return OrderList(orders=views[:limit], count=len(views))

    @tool("read", ["shop.order"])
    def shop_get_order(self, order_id: OrderIdArg) -> OrderView:
        """Show one order: status, lines, amounts in cents, placement, shipping, delivery and
        return-deadline times (ISO-8601).

        Errors: not_found (field order_id).
        """
        return self._order_view(self._order(order_id))

    def _close(self, order: Order, status: Literal["cancelled", "returned"], memo: str) -> None:
        """Refund ``order`` in full, restock its items and mark it ``status``."""
        self.other("system").refund(order.total_cents, memo, reference=order.order_id)  # type: ignore[attr-defined]
        for ln in order.lines:
            item = self.state.items.get(ln.item_id)
            if item is not None:
                item.stock += ln.quantity
        order.status = status
        order.refunded_cents = order.total_cents
        order.closed_at = self.now

    @tool("write", ["shop.order", "shop.item", "wallet.balance"], preconditions=["shop.order"], destructive=True)
    def shop_cancel_order(self, order_id: OrderIdArg) -> OrderView:
        """Cancel an order that has not shipped yet (status placed): the total is refunded to the
        wallet in full and the items go back into stock (a coupon it used stays used).

        Errors: not_found (order_id), conflict (already cancelled or returned), precondition_failed
        (already shipped or delivered: request a return once delivered).
        """
        order = self._order(order_id)
        status = effective_status(order, self.now)
        if status in ("cancelled", "returned"):
            raise ToolError(ErrorCode.CONFLICT, f"order {order.order_id} is already {status}", field="order_id")
        if status != "placed":
            raise ToolError(
                ErrorCode.PRECONDITION_FAILED,
                f"order {order.order_id} is already {status} and can no longer be "
                "cancelled; a delivered order can be returned with shop_request_return",
                field="order_id",
            )
        self._close(order, "cancelled", "refund: cancelled shop order")
        return self._order_view(order)

    @tool("write", ["shop.order", "shop.item", "wallet.balance"], preconditions=["shop.order"])
    def shop_request_return(
        self,
        order_id: OrderIdArg,
        reason: Annotated[str, Field(min_length=1, max_length=500, description="why the order is returned")],
    ) -> OrderView:
        """Return a delivered order within 30 days of delivery: the total is refunded to the
        wallet in full and the items go back into stock.

        Errors: not_found (order_id), conflict (already cancelled or returned), precondition_failed
        (not delivered yet: cancel it if still placed; or the return window has closed),
        invalid_argument (blank reason).
        """
        order = self._order(order_id)
        if not reason.strip():
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "give a reason for the return", field="reason")
        status = effective_status(order, self.now)
        if status in ("cancelled", "returned"):
            raise ToolError(ErrorCode.CONFLICT, f"order {order.order_id} is already {status}", field="order_id")
        if status != "delivered":
            hint = "cancel it with shop_cancel_order instead" if status == "placed" else "wait until it is delivered"
            raise ToolError(
                ErrorCode.PRECONDITION_FAILED,
                f"order {order.order_id} is {status}, not delivered; {hint}",
                field="order_id",
            )
        deadline = order.created_at + DELIVER_AFTER + RETURN_WINDOW
        if self.now > deadline:
            raise ToolError(
                ErrorCode.PRECONDITION_FAILED,
                f"the return window of order {order.order_id} closed on {iso(deadline)}",
                field="order_id",
            )
        self._close(order, "returned", "refund: returned shop order")
        order.return_reason = reason.strip()[:500]
        return self._order_view(order)
