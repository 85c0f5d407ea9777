"""``faultlab``: a small throwaway app for the fault-injection tests (tests/tools/test_faults.py).

It is deliberately NOT registered at import: call :func:`register` (the test fixture does, and
:func:`unregister` in its teardown), so that tests iterating over every registered app never
see it. Tools: an items family with three write tools chained by ``alternatives``
(``add_item`` -> ``insert_item`` -> ``import_items``) and two reads, a counter (write + read),
and orders paid through the system wallet with a one-use payment authorisation.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from mcpgym.kernel.app import App, AppState, register_app, unregister_app
from mcpgym.kernel.errors import ErrorCode, ToolError
from mcpgym.kernel.spec import tool
from mcpgym.kernel.volatile import VOLATILE, VOLATILE_KEYS

APP = "faultlab"


class Item(BaseModel):
    """An item of the lab's list."""

    item_id: Annotated[str, VOLATILE]
    name: str
    created_at: Annotated[int, VOLATILE] = 0


class Order(BaseModel):
    """A paid order: quantity x unit price, in cents."""

    order_id: Annotated[str, VOLATILE]
    quantity: int
    amount_cents: int
    txn_id: Annotated[str, VOLATILE]


class FaultLabState(AppState):
    """State of the lab: a counter, items and orders."""

    counter: int = 0
    unit_price_cents: int
    items: Annotated[dict[str, Item], VOLATILE_KEYS] = Field(default_factory=dict)
    orders: Annotated[dict[str, Order], VOLATILE_KEYS] = Field(default_factory=dict)


class ItemView(BaseModel):
    """One item."""

    item: Item


class ItemList(BaseModel):
    """Items, oldest first."""

    items: list[Item]


class CounterView(BaseModel):
    """The counter's value."""

    counter: int


class OrderView(BaseModel):
    """One order (amount in cents)."""

    order: Order


class OrderList(BaseModel):
    """Orders, oldest first."""

    orders: list[Order]


ItemName = Annotated[str, Field(min_length=1, max_length=100, description="item name")]


class FaultLabApp(App):
    """A counter, a list of items and paid orders, for fault-injection tests."""

    name = APP
    title = "Fault lab"
    State = FaultLabState

    @classmethod
    def generate(cls, world) -> FaultLabState:  # noqa: ANN001 - World
        """Seeded initial state: a unit price of 1-9 USD and one seeded item."""
        r = cls.stream(world, "initial")
        return FaultLabState(
            unit_price_cents=r.randrange(100, 1000, 50),
            items={"it-seed": Item(item_id="it-seed", name=r.choice(["anvil", "bolt", "crate"]))},
        )

    def _new_item(self, name: str) -> Item:
        item_id = self.new_id("it")
        item = Item(item_id=item_id, name=name, created_at=self.now)
        self.state.items[item_id] = item
        return item

    @tool("write", ["faultlab.item"], alternatives=["faultlab_insert_item"])
    def faultlab_add_item(self, name: ItemName) -> ItemView:
        """Add an item called name to the list; returns it with its new id."""
        return ItemView(item=self._new_item(name))

    @tool("write", ["faultlab.item"], alternatives=["faultlab_import_items"])
    def faultlab_insert_item(self, name: ItemName) -> ItemView:
        """Insert an item called name (same effect as faultlab_add_item)."""
        return ItemView(item=self._new_item(name))

    @tool("write", ["faultlab.item"])
    def faultlab_import_items(self, names: Annotated[list[ItemName], Field(min_length=1, max_length=20)]) -> ItemList:
        """Add several items at once; returns the new items."""
        return ItemList(items=[self._new_item(n) for n in names])

    @tool("read", ["faultlab.item"])
    def faultlab_list_items(self) -> ItemList:
        """List every item, oldest first."""
        return ItemList(items=sorted(self.state.items.values(), key=lambda i: (i.created_at, i.item_id)))

    @tool("read", ["faultlab.item"])
    def faultlab_get_item(self, item_id: Annotated[str, Field(description="item id, e.g. it-1a2b3c4d")]) -> ItemView:
        """Return one item by id."""
        item = self.state.items.get(item_id)
        if item is None:
            raise ToolError(ErrorCode.NOT_FOUND, f"no item {item_id!r}", field="item_id")
        return ItemView(item=item)

    @tool("write", ["faultlab.counter"])
    def faultlab_increment_counter(
        self, by: Annotated[int, Field(ge=1, le=100, description="amount to add")] = 1
    ) -> CounterView:
        """Add by (1-100) to the counter; returns the new value."""
        self.state.counter += by
        return CounterView(counter=self.state.counter)

    @tool("read", ["faultlab.counter"])
    def faultlab_get_counter(self) -> CounterView:
        """Return the counter's value."""
        return CounterView(counter=self.state.counter)

    @tool("write", ["faultlab.order", "wallet.balance"], preconditions=["wallet.balance"])
    def faultlab_place_order(
        self,
        quantity: Annotated[int, Field(ge=1, le=10, description="units to buy")],
        authorization_id: Annotated[str, Field(description="a payment authorisation from system_authorize_payment")],
    ) -> OrderView:
        """Buy quantity units at the unit price (cents), paid with a one-use payment authorisation."""
        amount = quantity * self.state.unit_price_cents
        txn_id = self.other("system").charge(authorization_id, amount, f"faultlab order x{quantity}")
        order_id = self.new_id("ord")
        order = Order(order_id=order_id, quantity=quantity, amount_cents=amount, txn_id=txn_id)
        self.state.orders[order_id] = order
        return OrderView(order=order)

    @tool("read", ["faultlab.order"])
    def faultlab_list_orders(self) -> OrderList:
        """List every order, oldest first."""
        return OrderList(orders=list(self.state.orders.values()))


def register() -> type[App]:
    """Register ``faultlab`` (idempotent) and return the class."""
    return register_app(FaultLabApp)


def unregister() -> None:
    """Remove ``faultlab`` from the app registry."""
    unregister_app(APP)


def run_script(world_seed: int, fault_seed: int, faults: object) -> dict:
    """Run a fixed 24-call script on a ``faultlab`` world and return what a harness would keep.

    Used by the two-process determinism test (in a subprocess) and in-process. The script is
    fixed, except that the order is paid with whatever authorisation id the world handed out.

    Args:
        world_seed: the world seed; fault_seed: the fault seed; faults: a fault profile spec
            (name, mapping, path or :class:`mcpgym.tools.faults.FaultProfile`).

    Returns:
        ``{"ledger": [...], "calls": [[tool, is_error, error_code, fault], ...], "state_hash": str}``.
    """
    from mcpgym.kernel.world import World
    from mcpgym.tools.invoke import ToolInvoker

    register()
    inv = ToolInvoker(World(world_seed, ["system", APP]), faults, fault_seed)
    for i in range(4):
        inv.call("faultlab_add_item", {"name": f"item-{i}"})
        inv.call("faultlab_list_items", {})
        inv.call("faultlab_increment_counter", {"by": i + 1})
        inv.call("faultlab_get_counter", {})
    auth = inv.call("system_authorize_payment", {"limit_cents": 50_000})
    auth_id = "none" if auth.is_error else auth.payload["authorization"]["auth_id"]
    inv.call("faultlab_place_order", {"quantity": 2, "authorization_id": auth_id})
    inv.call("faultlab_list_orders", {})
    inv.call("system_wait", {"seconds": 60})
    inv.call("system_authenticate", {})
    inv.call("faultlab_insert_item", {"name": "late"})
    inv.call("faultlab_import_items", {"names": ["a", "b"]})
    inv.call("faultlab_add_item", {"name": "last"})
    inv.call("faultlab_list_items", {})
    return {
        "ledger": [e.model_dump(mode="json") for e in inv.ledger],
        "calls": [[c.tool, c.is_error, c.error_code, c.fault] for c in inv.calls],
        "state_hash": inv.world.state_hash(),
    }
