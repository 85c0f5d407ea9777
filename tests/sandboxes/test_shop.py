"""Tests of the ``shop`` sandbox app, driven in-process through the real ToolInvoker.

Every call goes through ``ToolInvoker(World(seed, ["system", "shop"]), "none")`` exactly as a
transport would, so argument validation, error payloads and the call log are exercised too.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from mcpgym.kernel.world import World
from mcpgym.sandboxes.shop.browse import FUZZY_THRESHOLD
from mcpgym.sandboxes.shop.models import CATEGORIES
from mcpgym.tools.invoke import ToolInvoker
from tests.conftest import ROOT

SEED = 7


# -- helpers ---------------------------------------------------------------------------------
def make(seed: int = SEED, faults: str = "none", fault_seed: int | None = None) -> tuple[World, ToolInvoker]:
    world = World(seed, ["system", "shop"])
    return world, ToolInvoker(world, faults, fault_seed)


def ok(inv: ToolInvoker, name: str, **args) -> dict:
    out = inv.call(name, args)
    assert not out.is_error, (name, args, out.payload)
    return out.payload


def err(inv: ToolInvoker, name: str, **args) -> dict:
    out = inv.call(name, args)
    assert out.is_error, (name, args, out.payload)
    assert not out.record.internal, out.payload
    return out.payload["error"]


def balance(inv: ToolInvoker) -> int:
    return ok(inv, "shop_get_wallet_balance")["balance_cents"]


def stock(inv: ToolInvoker, item_id: str) -> int:
    return ok(inv, "shop_get_item", item_id=item_id)["item"]["stock"]


def all_items(inv: ToolInvoker) -> list[dict]:
    return ok(inv, "shop_search_items", query="", limit=100)["items"]


def authorize(inv: ToolInvoker, limit_cents: int) -> str:
    return ok(inv, "system_authorize_payment", limit_cents=limit_cents, purpose="shop checkout")["authorization"][
        "auth_id"
    ]


def two_cheap_items(inv: ToolInvoker) -> tuple[dict, dict]:
    """Two in-stock items with at least 3 units, cheapest first."""
    found = ok(inv, "shop_search_items", query="", in_stock_only=True, sort="price_asc", limit=100)["items"]
    plenty = [it for it in found if it["stock"] >= 3]
    return plenty[0], plenty[1]


# -- catalog -------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 2, 3, 42])
def test_catalog_shape(seed: int) -> None:
    world, inv = make(seed)
    shops = ok(inv, "shop_list_shops")["shops"]
    assert len(shops) == 8
    assert [s["shop_id"] for s in shops] == [f"shop-{n:02d}" for n in range(1, 9)]
    assert {s["category"] for s in shops} == set(CATEGORIES)
    assert sum(s["category"] == "electronics" for s in shops) == 2
    for s in shops:
        detail = ok(inv, "shop_get_shop", shop_id=s["shop_id"])
        items = detail["items"]
        assert len(items) == s["item_count"] >= 8
        n = s["shop_id"][-2:]
        assert all(re.fullmatch(rf"item-{n}\d\d", it["item_id"]) for it in items)
        stocks = [it["stock"] for it in items]
        assert 0 in stocks and 1 in stocks, "every shop has a sold-out item and a last unit"
        for it in items:
            assert it["category"] == s["category"] and it["shop_name"] == s["name"]
            assert isinstance(it["price_cents"], int) and it["price_cents"] > 0
            assert 1.0 <= it["rating"] <= 5.0
            assert it["in_stock"] == (it["stock"] > 0)
    books = ok(inv, "shop_list_shops", category="books")
    assert books["count"] == 1 and books["shops"][0]["category"] == "books"


def test_unknown_ids_and_bad_arguments() -> None:
    _, inv = make()
    e = err(inv, "shop_get_item", item_id="item-9999")
    assert (e["code"], e["field"]) == ("not_found", "item_id")
    e = err(inv, "shop_get_shop", shop_id="shop-99")
    assert (e["code"], e["field"]) == ("not_found", "shop_id")
    e = err(inv, "shop_add_to_cart", item_id="nope", quantity=1)
    assert (e["code"], e["field"]) == ("not_found", "item_id")
    e = err(inv, "shop_get_order", order_id="ord-nope")
    assert (e["code"], e["field"]) == ("not_found", "order_id")
    e = err(inv, "shop_search_items", query="mat", shop_id="shop-77")
    assert (e["code"], e["field"]) == ("not_found", "shop_id")
    e = err(inv, "shop_search_items", category="cars")
    assert (e["code"], e["field"]) == ("invalid_argument", "category")
    e = err(inv, "shop_add_to_cart", item_id="item-0101", quantity=0)
    assert (e["code"], e["field"]) == ("invalid_argument", "quantity")
    e = err(inv, "shop_search_items", sort="cheapest")
    assert (e["code"], e["field"]) == ("invalid_argument", "sort")
    e = err(inv, "shop_apply_coupon", coupon_code="NOSUCHCODE")
    assert (e["code"], e["field"]) == ("not_found", "coupon_code")


# -- search --------------------------------------------------------------------------------
def test_exact_search_filters_and_sorts() -> None:
    _, inv = make()
    everything = all_items(inv)
    assert len(everything) == ok(inv, "shop_search_items", query="")["count"]
    target = everything[len(everything) // 2]
    word = max(target["name"].split(), key=len).lower()
    res = ok(inv, "shop_search_items", query=word.upper(), limit=100)
    assert target["item_id"] in [it["item_id"] for it in res["items"]]
    assert all(word in f"{it['name']} {it['brand']}".lower() for it in res["items"])

    electronics = ok(inv, "shop_search_items", category="electronics", max_price_cents=20_000, limit=100)["items"]
    assert electronics and all(it["category"] == "electronics" and it["price_cents"] <= 20_000 for it in electronics)
    prices = [it["price_cents"] for it in electronics]
    assert prices == sorted(prices)
    desc = ok(inv, "shop_search_items", category="electronics", sort="price_desc", limit=100)["items"]
    assert [it["price_cents"] for it in desc] == sorted((it["price_cents"] for it in desc), reverse=True)
    rated = ok(inv, "shop_search_items", shop_id="shop-03", sort="rating", limit=100)["items"]
    assert rated and all(it["shop_id"] == "shop-03" for it in rated)
    assert [it["rating"] for it in rated] == sorted((it["rating"] for it in rated), reverse=True)
    in_stock = ok(inv, "shop_search_items", in_stock_only=True, limit=100)
    assert in_stock["count"] == sum(it["stock"] > 0 for it in everything)
    assert ok(inv, "shop_search_items", query="zzqxv")["count"] == 0


def test_fuzzy_search_finds_item_despite_typo() -> None:
    _, inv = make()
    item = ok(inv, "shop_get_item", item_id="item-0102")["item"]
    word = max(item["name"].split(), key=len)
    typo = word[:2] + word[3:]  # drop the third letter, e.g. "Headphones" -> "Hedphones"
    query = item["name"].replace(word, typo)
    assert ok(inv, "shop_search_items", query=query)["count"] == 0, "exact search does not tolerate typos"
    res = ok(inv, "shop_fuzzy_search_items", query=query.lower())
    assert res["count"] >= 1
    top = res["items"][0]
    assert top["name"] == item["name"]
    assert item["item_id"] in [it["item_id"] for it in res["items"]]
    assert top["score"] >= FUZZY_THRESHOLD
    assert [it["score"] for it in res["items"]] == sorted((it["score"] for it in res["items"]), reverse=True)
    brand_typo = item["brand"][:-1]  # "Kestrel" -> "Kestre"
    hits = ok(inv, "shop_fuzzy_search_items", query=brand_typo, shop_id=item["shop_id"])["items"]
    assert item["item_id"] in [it["item_id"] for it in hits]
    assert ok(inv, "shop_fuzzy_search_items", query="qqqqzzzz")["count"] == 0


# -- purchase ------------------------------------------------------------------------------
def test_full_purchase_flow() -> None:
    world, inv = make()
    a, b = two_cheap_items(inv)
    start_balance = balance(inv)
    stock_a, stock_b = stock(inv, a["item_id"]), stock(inv, b["item_id"])
    orders_before = ok(inv, "shop_list_orders")["count"]

    ok(inv, "shop_add_to_cart", item_id=a["item_id"], quantity=2)
    ok(inv, "shop_add_to_cart", item_id=b["item_id"])
    cart = ok(inv, "shop_get_cart")
    expected = 2 * a["price_cents"] + b["price_cents"]
    assert cart["subtotal_cents"] == cart["total_cents"] == expected
    assert cart["item_count"] == 3
    assert {ln["item_id"]: ln["quantity"] for ln in cart["lines"]} == {a["item_id"]: 2, b["item_id"]: 1}
    assert {ln["item_id"]: ln["line_total_cents"] for ln in cart["lines"]} == {
        a["item_id"]: 2 * a["price_cents"],
        b["item_id"]: b["price_cents"],
    }

    auth = authorize(inv, cart["total_cents"])
    order = ok(inv, "shop_checkout", authorization_id=auth)
    assert order["status"] == "placed"
    assert order["total_cents"] == order["subtotal_cents"] == expected
    assert order["discount_cents"] == 0 and order["coupon_code"] is None
    assert ok(inv, "shop_get_order", order_id=order["order_id"]) == order

    assert balance(inv) == start_balance - expected
    assert stock(inv, a["item_id"]) == stock_a - 2
    assert stock(inv, b["item_id"]) == stock_b - 1
    cart = ok(inv, "shop_get_cart")
    assert cart["lines"] == [] and cart["total_cents"] == 0
    listed = ok(inv, "shop_list_orders")
    assert listed["count"] == orders_before + 1
    assert listed["orders"][0]["order_id"] == order["order_id"]  # newest first
    assert [o["order_id"] for o in ok(inv, "shop_list_orders", status="placed")["orders"]] == [order["order_id"]]
    txn = ok(inv, "system_list_transactions", limit=1)["transactions"][0]
    assert txn["amount_cents"] == -expected and txn["reference"] == order["order_id"]
    used = ok(inv, "system_list_payment_authorizations")["authorizations"]
    assert [x["used"] for x in used if x["auth_id"] == auth] == [True]
    assert len(world.app("shop").state.orders) == orders_before + 1


def test_payment_authorisation_is_one_use() -> None:
    _, inv = make()
    a, b = two_cheap_items(inv)
    ok(inv, "shop_add_to_cart", item_id=a["item_id"])
    auth = authorize(inv, 100_000)
    ok(inv, "shop_checkout", authorization_id=auth)
    orders = ok(inv, "shop_list_orders")["count"]
    before = (balance(inv), stock(inv, b["item_id"]))

    ok(inv, "shop_add_to_cart", item_id=b["item_id"])
    e = err(inv, "shop_checkout", authorization_id=auth)
    assert (e["code"], e["field"]) == ("precondition_failed", "authorization_id")
    assert "already used" in e["message"]
    e = err(inv, "shop_buy_item", item_id=b["item_id"], quantity=1, authorization_id=auth)
    assert (e["code"], e["field"]) == ("precondition_failed", "authorization_id")
    e = err(inv, "shop_checkout", authorization_id="pay-00000000")
    assert (e["code"], e["field"]) == ("not_found", "authorization_id")
    assert ok(inv, "shop_list_orders")["count"] == orders
    assert (balance(inv), stock(inv, b["item_id"])) == before
    assert [ln["item_id"] for ln in ok(inv, "shop_get_cart")["lines"]] == [b["item_id"]]
    # the remedy: a fresh authorisation
    order = ok(inv, "shop_checkout", authorization_id=authorize(inv, 100_000))
    assert order["total_cents"] == b["price_cents"]


def test_empty_cart_and_authorisation_limit() -> None:
    _, inv = make()
    auth = authorize(inv, 100)
    e = err(inv, "shop_checkout", authorization_id=auth)
    assert e["code"] == "precondition_failed" and "empty" in e["message"]
    a, _ = two_cheap_items(inv)
    ok(inv, "shop_add_to_cart", item_id=a["item_id"], quantity=3)
    e = err(inv, "shop_checkout", authorization_id=authorize(inv, 3 * a["price_cents"] - 1))
    assert (e["code"], e["field"]) == ("precondition_failed", "authorization_id")
    assert "limit" in e["message"]
    assert (
        ok(inv, "shop_checkout", authorization_id=authorize(inv, 3 * a["price_cents"]))["total_cents"]
        == 3 * a["price_cents"]
    )


def test_insufficient_balance_then_transfer_from_savings() -> None:
    _, inv = make()
    wallet = ok(inv, "shop_get_wallet_balance")
    assert wallet == {k: v for k, v in ok(inv, "system_get_wallet_balance").items()}
    have = wallet["balance_cents"]
    candidates = ok(inv, "shop_search_items", query="", in_stock_only=True, sort="price_desc", limit=100)["items"]
    item, qty = next(
        (it, have // it["price_cents"] + 1)
        for it in candidates
        if have // it["price_cents"] + 1 <= min(it["stock"], 100)
    )
    total = item["price_cents"] * qty
    assert total > have
    ok(inv, "shop_add_to_cart", item_id=item["item_id"], quantity=qty)
    auth = authorize(inv, total)
    stock_before = stock(inv, item["item_id"])
    e = err(inv, "shop_checkout", authorization_id=auth)
    assert e["code"] == "precondition_failed" and "insufficient balance" in e["message"]
    assert balance(inv) == have
    assert stock(inv, item["item_id"]) == stock_before
    assert ok(inv, "shop_list_orders", status="placed")["count"] == 0
    assert ok(inv, "shop_get_cart")["total_cents"] == total
    # the remedy: move the shortfall from savings; the unused authorisation still works
    ok(inv, "system_transfer_from_savings", amount_cents=total - have)
    order = ok(inv, "shop_checkout", authorization_id=auth)
    assert order["total_cents"] == total
    assert balance(inv) == 0


def test_stock_limits() -> None:
    _, inv = make()
    items = ok(inv, "shop_get_shop", shop_id="shop-01")["items"]
    last = next(it for it in items if it["stock"] == 1)
    sold_out = next(it for it in items if it["stock"] == 0)
    e = err(inv, "shop_add_to_cart", item_id=sold_out["item_id"])
    assert (e["code"], e["field"]) == ("precondition_failed", "quantity")
    assert "sold out" in e["message"]
    e = err(inv, "shop_add_to_cart", item_id=last["item_id"], quantity=2)
    assert e["code"] == "precondition_failed" and e["details"]["stock"] == 1
    ok(inv, "shop_add_to_cart", item_id=last["item_id"], quantity=1)
    e = err(inv, "shop_add_to_cart", item_id=last["item_id"], quantity=1)
    assert e["code"] == "precondition_failed" and e["details"]["requested"] == 2
    e = err(inv, "shop_update_cart_quantity", item_id=last["item_id"], quantity=5)
    assert e["code"] == "precondition_failed"
    assert ok(inv, "shop_get_cart")["lines"][0]["quantity"] == 1
    ok(inv, "shop_checkout", authorization_id=authorize(inv, last["price_cents"]))
    assert stock(inv, last["item_id"]) == 0
    e = err(inv, "shop_buy_item", item_id=last["item_id"], quantity=1, authorization_id=authorize(inv, 10**6))
    assert e["code"] == "precondition_failed" and e["details"]["stock"] == 0
    instock = ok(inv, "shop_search_items", shop_id="shop-01", in_stock_only=True, limit=100)["items"]
    assert last["item_id"] not in [it["item_id"] for it in instock]


def test_cart_edits() -> None:
    _, inv = make()
    a, b = two_cheap_items(inv)
    ok(inv, "shop_add_to_cart", item_id=a["item_id"])
    ok(inv, "shop_add_to_cart", item_id=a["item_id"])
    ok(inv, "shop_add_to_cart", item_id=b["item_id"])
    assert ok(inv, "shop_get_cart")["item_count"] == 3
    cart = ok(inv, "shop_update_cart_quantity", item_id=a["item_id"], quantity=3)
    assert cart["subtotal_cents"] == 3 * a["price_cents"] + b["price_cents"]
    cart = ok(inv, "shop_remove_from_cart", item_id=b["item_id"])
    assert [ln["item_id"] for ln in cart["lines"]] == [a["item_id"]]
    e = err(inv, "shop_remove_from_cart", item_id=b["item_id"])
    assert (e["code"], e["field"]) == ("not_found", "item_id")
    cart = ok(inv, "shop_update_cart_quantity", item_id=a["item_id"], quantity=0)
    assert cart["lines"] == [] and cart["total_cents"] == 0


def test_buy_item_directly_makes_one_order() -> None:
    _, inv = make()
    a, b = two_cheap_items(inv)
    ok(inv, "shop_add_to_cart", item_id=a["item_id"], quantity=2)
    ok(inv, "shop_add_to_cart", item_id=b["item_id"])
    start, stock_a = balance(inv), stock(inv, a["item_id"])
    order = ok(inv, "shop_buy_item", item_id=a["item_id"], quantity=2, authorization_id=authorize(inv, 10**6))
    assert [(ln["item_id"], ln["quantity"]) for ln in order["lines"]] == [(a["item_id"], 2)]
    assert order["total_cents"] == 2 * a["price_cents"]
    assert balance(inv) == start - order["total_cents"]
    assert stock(inv, a["item_id"]) == stock_a - 2
    assert ok(inv, "shop_list_orders", status="placed")["count"] == 1
    # the bought units left the cart; the other line stays
    assert [ln["item_id"] for ln in ok(inv, "shop_get_cart")["lines"]] == [b["item_id"]]


# -- orders --------------------------------------------------------------------------------
def test_cancel_refunds_exactly_and_restocks() -> None:
    _, inv = make()
    a, b = two_cheap_items(inv)
    start, stock_a, stock_b = balance(inv), stock(inv, a["item_id"]), stock(inv, b["item_id"])
    ok(inv, "shop_add_to_cart", item_id=a["item_id"], quantity=3)
    ok(inv, "shop_add_to_cart", item_id=b["item_id"], quantity=1)
    order = ok(inv, "shop_checkout", authorization_id=authorize(inv, 10**6))
    assert balance(inv) == start - order["total_cents"]

    cancelled = ok(inv, "shop_cancel_order", order_id=order["order_id"])
    assert cancelled["status"] == "cancelled"
    assert cancelled["refunded_cents"] == order["total_cents"]
    assert balance(inv) == start
    assert (stock(inv, a["item_id"]), stock(inv, b["item_id"])) == (stock_a, stock_b)
    assert ok(inv, "shop_get_order", order_id=order["order_id"])["status"] == "cancelled"
    refund = ok(inv, "system_list_transactions", limit=1)["transactions"][0]
    assert refund["amount_cents"] == order["total_cents"]

    e = err(inv, "shop_cancel_order", order_id=order["order_id"])
    assert (e["code"], e["field"]) == ("conflict", "order_id")
    assert balance(inv) == start, "a second cancel refunds nothing"
    ids = [o["order_id"] for o in ok(inv, "shop_list_orders", status="cancelled")["orders"]]
    assert order["order_id"] in ids


def test_shipping_timeline_cancel_and_return() -> None:
    _, inv = make()
    a, _ = two_cheap_items(inv)
    start = balance(inv)
    order = ok(inv, "shop_buy_item", item_id=a["item_id"], quantity=1, authorization_id=authorize(inv, 10**6))
    ok(inv, "system_wait", seconds=4 * 3600)
    assert ok(inv, "shop_get_order", order_id=order["order_id"])["status"] == "shipped"
    e = err(inv, "shop_cancel_order", order_id=order["order_id"])
    assert e["code"] == "precondition_failed" and "shipped" in e["message"]
    e = err(inv, "shop_request_return", order_id=order["order_id"], reason="changed my mind")
    assert e["code"] == "precondition_failed"
    ok(inv, "system_wait", seconds=2 * 86_400)
    assert ok(inv, "shop_get_order", order_id=order["order_id"])["status"] == "delivered"
    stock_before = stock(inv, a["item_id"])
    returned = ok(inv, "shop_request_return", order_id=order["order_id"], reason="changed my mind")
    assert returned["status"] == "returned" and returned["return_reason"] == "changed my mind"
    assert returned["refunded_cents"] == order["total_cents"]
    assert balance(inv) == start
    assert stock(inv, a["item_id"]) == stock_before + 1
    e = err(inv, "shop_request_return", order_id=order["order_id"], reason="again")
    assert e["code"] == "conflict"


def test_seeded_order_history_and_return_window() -> None:
    _, inv = make()
    history = ok(inv, "shop_list_orders")["orders"]
    assert len(history) == 4
    assert sorted(o["status"] for o in history) == ["cancelled", "delivered", "delivered", "delivered"]
    returnable, expired = history[0], history[-1]
    assert expired["status"] == "delivered"
    e = err(inv, "shop_request_return", order_id=expired["order_id"], reason="broken")
    assert e["code"] == "precondition_failed" and "window" in e["message"]
    start = balance(inv)
    done = ok(inv, "shop_request_return", order_id=returnable["order_id"], reason="broken")
    assert balance(inv) == start + returnable["total_cents"] == start + done["refunded_cents"]
    cancelled = next(o for o in history if o["status"] == "cancelled")
    assert err(inv, "shop_cancel_order", order_id=cancelled["order_id"])["code"] == "conflict"


# -- coupons, reviews, stars ------------------------------------------------------------------
def test_coupon_minimum_discount_and_single_use() -> None:
    _, inv = make()
    coupons = {c["code"]: c for c in ok(inv, "shop_list_coupons")["coupons"]}
    assert len(coupons) == 5
    expired = next(c for c in coupons.values() if c["expired"])
    pct = next(c for c in coupons.values() if c["percent_off"] and not c["expired"] and c["shop_id"] is None)
    a, _ = two_cheap_items(inv)
    ok(inv, "shop_add_to_cart", item_id=a["item_id"])
    assert a["price_cents"] < pct["min_subtotal_cents"]  # the cheapest item is a grocery item
    e = err(inv, "shop_apply_coupon", coupon_code=pct["code"].lower())
    assert (e["code"], e["field"]) == ("precondition_failed", "coupon_code")
    e = err(inv, "shop_apply_coupon", coupon_code=expired["code"])
    assert e["code"] == "precondition_failed" and "expired" in e["message"]

    big = next(
        it
        for it in all_items(inv)
        if it["stock"] >= 1 and it["price_cents"] >= pct["min_subtotal_cents"] and it["price_cents"] < 50_000
    )
    ok(inv, "shop_remove_from_cart", item_id=a["item_id"])
    ok(inv, "shop_add_to_cart", item_id=big["item_id"])
    cart = ok(inv, "shop_apply_coupon", coupon_code=pct["code"].lower())
    discount = big["price_cents"] * pct["percent_off"] // 100
    assert cart["coupon_code"] == pct["code"]
    assert cart["discount_cents"] == discount
    assert cart["total_cents"] == big["price_cents"] - discount
    assert [c["applied_to_cart"] for c in ok(inv, "shop_list_coupons")["coupons"] if c["code"] == pct["code"]] == [True]

    start = balance(inv)
    order = ok(inv, "shop_checkout", authorization_id=authorize(inv, cart["total_cents"]))
    assert (order["discount_cents"], order["coupon_code"]) == (discount, pct["code"])
    assert balance(inv) == start - (big["price_cents"] - discount)
    assert [c["used"] for c in ok(inv, "shop_list_coupons")["coupons"] if c["code"] == pct["code"]] == [True]
    ok(inv, "shop_add_to_cart", item_id=a["item_id"])
    e = err(inv, "shop_apply_coupon", coupon_code=pct["code"])
    assert e["code"] == "precondition_failed" and "already used" in e["message"]
    assert err(inv, "shop_remove_coupon")["code"] == "precondition_failed"


def test_coupon_that_stops_qualifying_gives_no_discount() -> None:
    _, inv = make()
    pct = next(
        c
        for c in ok(inv, "shop_list_coupons")["coupons"]
        if c["percent_off"] and not c["expired"] and c["shop_id"] is None
    )
    big = next(
        it for it in all_items(inv) if it["stock"] >= 1 and pct["min_subtotal_cents"] <= it["price_cents"] < 50_000
    )
    a, _ = two_cheap_items(inv)
    ok(inv, "shop_add_to_cart", item_id=big["item_id"])
    ok(inv, "shop_add_to_cart", item_id=a["item_id"])
    ok(inv, "shop_apply_coupon", coupon_code=pct["code"])
    cart = ok(inv, "shop_remove_from_cart", item_id=big["item_id"])
    assert a["price_cents"] < pct["min_subtotal_cents"]
    assert cart["discount_cents"] == 0 and "at least" in cart["coupon_note"]
    order = ok(inv, "shop_checkout", authorization_id=authorize(inv, a["price_cents"]))
    assert (order["total_cents"], order["coupon_code"]) == (a["price_cents"], None)
    assert [c["used"] for c in ok(inv, "shop_list_coupons")["coupons"] if c["code"] == pct["code"]] == [False]
    cart = ok(inv, "shop_get_cart")
    assert cart["coupon_code"] is None and cart["lines"] == []


def test_reviews_need_an_order() -> None:
    world, inv = make()
    history = ok(inv, "shop_list_orders", status="delivered")["orders"]
    bought = history[0]["lines"][0]["item_id"]
    ordered = {ln["item_id"] for o in ok(inv, "shop_list_orders")["orders"] for ln in o["lines"]}
    never = next(it["item_id"] for it in all_items(inv) if it["item_id"] not in ordered)
    e = err(inv, "shop_add_review", item_id=never, rating=4, text="nice")
    assert (e["code"], e["field"]) == ("precondition_failed", "item_id")
    before = ok(inv, "shop_list_item_reviews", item_id=bought)
    after = ok(inv, "shop_add_review", item_id=bought, rating=1, text="  fell apart  ")
    assert after["rating_count"] == before["rating_count"] + 1
    assert len(after["reviews"]) == len(before["reviews"]) + 1
    mine = after["reviews"][0]
    assert (mine["by_user"], mine["rating"], mine["text"], mine["author"]) == (True, 1, "fell apart", world.user.name)
    assert ok(inv, "shop_get_item", item_id=bought)["review_count"] == len(after["reviews"])
    assert err(inv, "shop_add_review", item_id=bought, rating=5, text="again")["code"] == "conflict"
    assert err(inv, "shop_add_review", item_id=bought, rating=6, text="x")["code"] == "invalid_argument"


def test_stars() -> None:
    _, inv = make()
    start = ok(inv, "shop_list_starred")
    assert len(start["shops"]) == 1 and len(start["items"]) == 2
    item = next(it["item_id"] for it in all_items(inv) if it["item_id"] not in {s["target_id"] for s in start["items"]})
    res = ok(inv, "shop_add_star", target_id=item)
    assert res == {"target_id": item, "kind": "item", "starred": True, "changed": True}
    assert ok(inv, "shop_add_star", target_id=item)["changed"] is False
    shop = start["shops"][0]["target_id"]
    assert ok(inv, "shop_remove_star", target_id=shop) == {
        "target_id": shop,
        "kind": "shop",
        "starred": False,
        "changed": True,
    }
    assert ok(inv, "shop_remove_star", target_id=shop)["changed"] is False
    now = ok(inv, "shop_list_starred")
    assert now["shops"] == [] and item in [s["target_id"] for s in now["items"]] and len(now["items"]) == 3
    e = err(inv, "shop_add_star", target_id="item-9999")
    assert (e["code"], e["field"]) == ("not_found", "target_id")


# -- determinism and persistence --------------------------------------------------------------
def script(inv: ToolInvoker) -> None:
    a, b = two_cheap_items(inv)
    ok(inv, "shop_add_to_cart", item_id=a["item_id"], quantity=2)
    ok(inv, "shop_add_to_cart", item_id=b["item_id"])
    order = ok(inv, "shop_checkout", authorization_id=authorize(inv, 10**6))
    ok(inv, "shop_add_star", target_id=a["item_id"])
    ok(inv, "shop_buy_item", item_id=b["item_id"], quantity=1, authorization_id=authorize(inv, 10**6))
    ok(inv, "shop_cancel_order", order_id=order["order_id"])
    ok(inv, "shop_add_review", item_id=b["item_id"], rating=4, text="good")


def test_same_seed_same_hash_different_seed_different_catalog() -> None:
    w1, i1 = make(11)
    w2, i2 = make(11)
    assert w1.state_hash() == w2.state_hash()
    script(i1)
    script(i2)
    assert w1.state_hash() == w2.state_hash()
    assert w1.comparable() == w2.comparable()
    w3, i3 = make(12)
    assert w3.state_hash() != w1.state_hash()
    cat = lambda inv: [(it["item_id"], it["name"], it["price_cents"], it["stock"]) for it in all_items(inv)]  # noqa: E731
    assert cat(make(11)[1]) != cat(i3)
    assert [s["name"] for s in ok(make(11)[1], "shop_list_shops")["shops"]] != [
        s["name"] for s in ok(i3, "shop_list_shops")["shops"]
    ]


def test_state_hash_is_stable_across_processes() -> None:
    code = "from mcpgym.kernel.world import World; print(World(5, ['system', 'shop']).state_hash())"
    hashes = set()
    for hashseed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hashseed}
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True, cwd=ROOT
        )
        hashes.add(out.stdout.strip())
    assert hashes == {World(5, ["system", "shop"]).state_hash()}


def test_snapshot_restore_round_trip() -> None:
    world, inv = make()
    script(inv)
    cheap = two_cheap_items(inv)[0]["item_id"]
    ok(inv, "shop_add_to_cart", item_id=cheap, quantity=2)
    snap = world.snapshot()
    json.dumps(snap)  # JSON-able
    restored = World.restore(json.loads(json.dumps(snap)))
    assert restored.state_hash() == world.state_hash()
    assert restored.comparable() == world.comparable()
    # the restored world keeps working and stays in lock-step with the original
    inv2 = ToolInvoker(restored, "none")
    for target in (inv, inv2):
        ok(target, "shop_update_cart_quantity", item_id=cheap, quantity=1)
        ok(target, "shop_checkout", authorization_id=authorize(target, 10**6))
    assert restored.state_hash() == world.state_hash()


def test_orders_are_volatile_keyed_and_compare_equal_across_id_streams() -> None:
    w1, i1 = make()
    w2, i2 = make()
    a, b = two_cheap_items(i1)
    ids = {}
    for inv, order in ((i1, (a, b)), (i2, (b, a))):  # same purchases, opposite order
        ids[inv] = [
            ok(inv, "shop_buy_item", item_id=it["item_id"], quantity=1, authorization_id=authorize(inv, 10**6))[
                "order_id"
            ]
            for it in order
        ]
    assert ids[i1] == ids[i2], "the n-th order gets the same generated id..."
    assert w1.state_hash() != w2.state_hash(), "...so the raw states differ"
    assert w1.comparable() == w2.comparable(), "but with volatile ids and times ignored they are equal"


# -- tool catalog and robustness --------------------------------------------------------------
EXPECTED_TOOLS = {
    "shop_list_shops": "read",
    "shop_get_shop": "read",
    "shop_search_items": "read",
    "shop_fuzzy_search_items": "read",
    "shop_get_item": "read",
    "shop_list_item_reviews": "read",
    "shop_get_cart": "read",
    "shop_list_coupons": "read",
    "shop_get_wallet_balance": "read",
    "shop_list_orders": "read",
    "shop_get_order": "read",
    "shop_list_starred": "read",
    "shop_add_to_cart": "write",
    "shop_remove_from_cart": "write",
    "shop_update_cart_quantity": "write",
    "shop_apply_coupon": "write",
    "shop_remove_coupon": "write",
    "shop_checkout": "write",
    "shop_buy_item": "write",
    "shop_cancel_order": "write",
    "shop_request_return": "write",
    "shop_add_review": "write",
    "shop_add_star": "write",
    "shop_remove_star": "write",
}


def test_tool_catalog_metadata() -> None:
    world, inv = make()
    tools = {n: s for n, s in inv.specs.items() if s.app == "shop"}
    assert {n: s.kind for n, s in tools.items()} == EXPECTED_TOOLS
    families = {
        "shop.shop",
        "shop.item",
        "shop.cart",
        "shop.order",
        "shop.star",
        "shop.coupon",
        "shop.review",
        "wallet.balance",
        "system.payment_auth",
    }
    for spec in tools.values():
        assert spec.description and set(spec.resources) <= families
        assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", spec.name)
        for alt in spec.alternatives:
            assert alt in inv.specs
    co = tools["shop_checkout"]
    assert co.preconditions == ("shop.cart", "wallet.balance", "system.payment_auth")
    assert co.remedies["precondition_failed"][:2] == ("system_authorize_payment", "system_transfer_from_savings")
    assert co.remedies["not_found"][0] == "system_authorize_payment"
    assert co.alternatives == ("shop_buy_item",) and tools["shop_buy_item"].alternatives == ("shop_checkout",)
    assert {"shop.order", "shop.cart", "wallet.balance"} <= set(co.resources)
    assert tools["shop_search_items"].alternatives == ("shop_fuzzy_search_items",)
    assert tools["shop_fuzzy_search_items"].alternatives == ("shop_search_items",)
    assert tools["shop_get_wallet_balance"].alternatives == ("system_get_wallet_balance",)
    assert tools["shop_cancel_order"].id_args == ("order_id",)
    for spec in tools.values():
        assert spec.output_schema()["type"] == "object"


def test_reads_do_not_change_state() -> None:
    world, inv = make()
    script(inv)
    ok(inv, "shop_add_to_cart", item_id=two_cheap_items(inv)[0]["item_id"])
    order_id = ok(inv, "shop_list_orders")["orders"][0]["order_id"]
    before = world.state_hash()
    reads = {
        "shop_list_shops": {"category": "home"},
        "shop_get_shop": {"shop_id": "shop-02"},
        "shop_search_items": {"query": "a", "sort": "rating"},
        "shop_fuzzy_search_items": {"query": "lamp"},
        "shop_get_item": {"item_id": "item-0101"},
        "shop_list_item_reviews": {"item_id": "item-0101"},
        "shop_get_cart": {},
        "shop_list_coupons": {},
        "shop_get_wallet_balance": {},
        "shop_list_orders": {},
        "shop_get_order": {"order_id": order_id},
        "shop_list_starred": {},
    }
    assert set(reads) == {n for n, k in EXPECTED_TOOLS.items() if k == "read"}
    for name, args in reads.items():
        ok(inv, name, **args)
    assert world.state_hash() == before


JUNK = [
    None,
    {},
    {"item_id": 5},
    {"item_id": ""},
    {"order_id": "x" * 20_000},
    {"quantity": -3, "item_id": "item-0101"},
    {"query": "", "limit": 0},
    {"target_id": "   "},
    {"coupon_code": ""},
    {"authorization_id": "pay-x"},
    {"item_id": "item-0101", "quantity": 1, "authorization_id": ""},
    {"status": "lost"},
    {"unexpected": 1},
    {"rating": 3, "item_id": "item-0101", "text": "   "},
    {"order_id": "ord-0001", "reason": " "},
    [1, 2],
    "text",
]


def test_no_input_crashes_a_tool() -> None:
    world, inv = make()
    for name in EXPECTED_TOOLS:
        for args in JUNK:
            out = inv.call(name, args)
            assert not out.record.internal, (name, args, out.payload)
            if out.is_error:
                assert out.payload["error"]["code"] in {
                    "invalid_argument",
                    "not_found",
                    "precondition_failed",
                    "conflict",
                }, (name, args, out.payload)
    assert not any(rec.internal for rec in inv.calls)


@pytest.mark.parametrize("fault_seed", [1, 2, 3])
def test_harsh_faults_never_cause_internal_errors(fault_seed: int) -> None:
    world, inv = make(faults="harsh", fault_seed=fault_seed)
    for _ in range(3):
        for name, args in [
            ("shop_search_items", {"query": ""}),
            ("shop_get_cart", {}),
            ("shop_add_to_cart", {"item_id": "item-0101"}),
            ("system_authorize_payment", {"limit_cents": 10**6}),
            ("shop_list_orders", {}),
            ("shop_get_wallet_balance", {}),
            ("shop_list_starred", {}),
        ]:
            inv.call(name, args)
        auths = world.app("system").state.payment_auths
        for auth_id in list(auths):
            inv.call("shop_checkout", {"authorization_id": auth_id})
        ok_orders = world.app("shop").state.orders
        for order_id in list(ok_orders):
            inv.call("shop_get_order", {"order_id": order_id})
            inv.call("shop_cancel_order", {"order_id": order_id})
    assert not any(rec.internal for rec in inv.calls)
    assert any(rec.fault for rec in inv.calls), "the harsh profile injected faults"
