"""Catalog tools of the shop app: shops, items, exact and fuzzy search, reviews, stars."""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from typing import Annotated, Literal

from pydantic import Field

from mcpgym.kernel.clock import iso
from mcpgym.kernel.errors import ErrorCode, ToolError
from mcpgym.kernel.spec import tool
from mcpgym.sandboxes.shop.common import ShopCore
from mcpgym.sandboxes.shop.models import (
    Item,
    Review,
    Star,
)
from mcpgym.sandboxes.shop.views import (
    FuzzyItemView,
    FuzzySearchResult,
    ItemDetails,
    ReviewList,
    ReviewView,
    SearchResult,
    ShopDetails,
    ShopList,
    StarEntry,
    StarList,
    StarResult,
)

FUZZY_THRESHOLD = 0.75
"""Least similarity (0-1) an item needs to be returned by fuzzy search."""

_TOKEN = re.compile(r"[0-9a-z%]+")


def tokens(text: str) -> list[str]:
    """Lower-case word tokens of ``text`` (letters, digits and ``%``)."""
    return _TOKEN.findall(text.casefold())


def keyword_match(item: Item, query: str) -> bool:
    """True when every word of ``query`` occurs (as a substring) in the item's name or brand."""
    hay = f"{item.name} {item.brand}".casefold()
    return all(t in hay for t in tokens(query))


def fuzzy_score(item: Item, query: str) -> float:
    """Similarity 0-1 between ``query`` and the item's name/brand (difflib ratios).

    Each query word gets its best ratio against the item's words; the word score is the mean
    of the mean and the maximum of those (so one close word counts, and more close words
    count more). The result is the best of that and the whole query's ratio against the
    name, the brand and "brand name". Typos ("hedphones", "wirless") therefore still score high.
    """
    q = " ".join(tokens(query))
    if not q:
        return 0.0
    fields = [item.name.casefold(), item.brand.casefold(), f"{item.brand} {item.name}".casefold()]
    best = max(SequenceMatcher(None, q, f, autojunk=False).ratio() for f in fields)
    words = tokens(f"{item.name} {item.brand}")
    qwords = q.split()
    if words:
        per_word = [max(SequenceMatcher(None, w, x, autojunk=False).ratio() for x in words) for w in qwords]
        best = max(best, (sum(per_word) / len(per_word) + max(per_word)) / 2)
    return round(best, 3)


QueryArg = Annotated[str, Field(max_length=200, description="keywords matched against item names and brands")]
ShopFilter = Annotated[str | None, Field(description="only items of this shop, e.g. shop-01")]
CategoryFilter = Annotated[
    str | None, Field(description="only this category: electronics, books, grocery, home, sports, fashion, toys")
]
MaxPrice = Annotated[int | None, Field(ge=0, le=100_000_000, description="only items costing at most this, in cents")]
Limit = Annotated[int, Field(ge=1, le=100, description="most items to return")]


class BrowseTools(ShopCore):
    """Read tools over the catalog, and the star and review writes."""

    def _filtered(
        self, shop_id: str | None, category: str | None, max_price_cents: int | None, in_stock_only: bool
    ) -> list[Item]:
        if shop_id is not None:
            shop_id = self._shop(shop_id).shop_id
        cat = self._category(category)
        out = []
        for item in self.state.items.values():
            if shop_id is not None and item.shop_id != shop_id:
                continue
            if cat is not None and item.category != cat:
                continue
            if max_price_cents is not None and item.price_cents > max_price_cents:
                continue
            if in_stock_only and item.stock <= 0:
                continue
            out.append(item)
        return out

    # -- shops -----------------------------------------------------------------------------
    @tool("read", ["shop.shop"])
    def shop_list_shops(self, category: CategoryFilter = None) -> ShopList:
        """List the marketplace's shops (id, name, category, city, rating, number of items),
        optionally only one category (electronics, books, grocery, home, sports, fashion, toys)."""
        cat = self._category(category)
        shops = [self._shop_view(s) for sid, s in sorted(self.state.shops.items()) if cat is None or s.category == cat]
        return ShopList(shops=shops, count=len(shops))

    @tool("read", ["shop.shop", "shop.item"])
    def shop_get_shop(self, shop_id: Annotated[str, Field(description="shop id, e.g. shop-01")]) -> ShopDetails:
        """Show one shop and every item it sells (prices in cents, stock in units).

        Errors: not_found (field shop_id).
        """
        shop = self._shop(shop_id)
        items = [self._item_view(it) for _, it in sorted(self.state.items.items()) if it.shop_id == shop.shop_id]
        return ShopDetails(shop=self._shop_view(shop), items=items)

    # -- items -----------------------------------------------------------------------------
    @tool("read", ["shop.item"], alternatives=["shop_fuzzy_search_items"])
    def shop_search_items(
        self,
        query: QueryArg = "",
        shop_id: ShopFilter = None,
        category: CategoryFilter = None,
        max_price_cents: MaxPrice = None,
        in_stock_only: Annotated[bool, Field(description="leave out sold-out items")] = False,
        sort: Annotated[
            Literal["price_asc", "price_desc", "rating"],
            Field(description="price_asc (cheapest first), price_desc, or rating (best first)"),
        ] = "price_asc",
        limit: Limit = 20,
    ) -> SearchResult:
        """Search items by keywords: every query word must occur in the item's name or brand
        (case-insensitive; an empty query matches everything). Filter by shop, category and
        maximum price (cents); sort by price or rating. Exact spelling needed: for typos use
        shop_fuzzy_search_items.

        Errors: not_found (field shop_id), invalid_argument (unknown category).
        """
        found = [
            it for it in self._filtered(shop_id, category, max_price_cents, in_stock_only) if keyword_match(it, query)
        ]
        if sort == "price_asc":
            found.sort(key=lambda it: (it.price_cents, it.item_id))
        elif sort == "price_desc":
            found.sort(key=lambda it: (-it.price_cents, it.item_id))
        else:
            found.sort(key=lambda it: (-it.rating, it.price_cents, it.item_id))
        return SearchResult(
            query=query, sort=sort, count=len(found), items=[self._item_view(it) for it in found[:limit]]
        )

    @tool("read", ["shop.item"], alternatives=["shop_search_items"])
    def shop_fuzzy_search_items(
        self,
        query: Annotated[str, Field(min_length=1, max_length=200, description="what to look for; typos are tolerated")],
        shop_id: ShopFilter = None,
        category: CategoryFilter = None,
        max_price_cents: MaxPrice = None,
        in_stock_only: Annotated[bool, Field(description="leave out sold-out items")] = False,
        limit: Limit = 10,
    ) -> FuzzySearchResult:
        """Typo-tolerant item search: items whose name or brand is similar to the query
        (e.g. "wirless hedphones"), best match first, each with a similarity score 0-1.
        Same filters as shop_search_items (shop, category, maximum price in cents).

        Errors: not_found (field shop_id), invalid_argument (unknown category).
        """
        scored = []
        for it in self._filtered(shop_id, category, max_price_cents, in_stock_only):
            score = fuzzy_score(it, query)
            if score >= FUZZY_THRESHOLD:
                scored.append((score, it))
        scored.sort(key=lambda p: (-p[0], p[1].price_cents, p[1].item_id))
        items = [FuzzyItemView(**self._item_view(it).model_dump(), score=score) for score, it in scored[:limit]]
        return FuzzySearchResult(query=query, count=len(scored), items=items)

    @tool("read", ["shop.item"])
    def shop_get_item(self, item_id: Annotated[str, Field(description="item id, e.g. item-0103")]) -> ItemDetails:
        """Show one item: shop, brand, price in cents, units in stock, rating, description.

        Errors: not_found (field item_id).
        """
        item = self._item(item_id)
        count = sum(1 for r in self.state.reviews.values() if r.item_id == item.item_id)
        return ItemDetails(item=self._item_view(item), description=item.description, review_count=count)

    # -- reviews ---------------------------------------------------------------------------
    def _review_list(self, item: Item, limit: int = 50) -> ReviewList:
        reviews = sorted(
            (r for r in self.state.reviews.values() if r.item_id == item.item_id),
            key=lambda r: (-r.created_at, r.review_id),
        )
        views = [
            ReviewView(
                review_id=r.review_id,
                author=r.author,
                rating=r.rating,
                text=r.text,
                by_user=r.by_user,
                created_at=iso(r.created_at),
            )
            for r in reviews[:limit]
        ]
        return ReviewList(item_id=item.item_id, rating=item.rating, rating_count=item.rating_count, reviews=views)

    @tool("read", ["shop.review", "shop.item"])
    def shop_list_item_reviews(
        self,
        item_id: Annotated[str, Field(description="item id, e.g. item-0103")],
        limit: Annotated[int, Field(ge=1, le=100, description="most reviews to return")] = 20,
    ) -> ReviewList:
        """List an item's written reviews (newest first) with its average rating and rating count.

        Errors: not_found (field item_id).
        """
        return self._review_list(self._item(item_id), limit)

    @tool("write", ["shop.review", "shop.item"], preconditions=["shop.order"])
    def shop_add_review(
        self,
        item_id: Annotated[str, Field(description="item id of something the user ordered")],
        rating: Annotated[int, Field(ge=1, le=5, description="stars, 1 to 5")],
        text: Annotated[str, Field(min_length=1, max_length=2000, description="the review text")],
    ) -> ReviewList:
        """Review an item the user has ordered (an order containing it that was not cancelled):
        rating 1-5 and text. Updates the item's average rating. One review per item.

        Errors: not_found (item_id), precondition_failed (never ordered), conflict (already reviewed),
        invalid_argument (blank text).
        """
        item = self._item(item_id)
        if not text.strip():
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "review text must not be blank", field="text")
        bought = any(
            o.status != "cancelled" and any(ln.item_id == item.item_id for ln in o.lines)
            for o in self.state.orders.values()
        )
        if not bought:
            raise ToolError(
                ErrorCode.PRECONDITION_FAILED,
                f"only items you ordered can be reviewed; no order contains {item.item_id}",
                field="item_id",
            )
        if any(r.by_user and r.item_id == item.item_id for r in self.state.reviews.values()):
            raise ToolError(ErrorCode.CONFLICT, f"you already reviewed {item.item_id}", field="item_id")
        review_id = self.new_id("rev")  # type: ignore[attr-defined]
        user = self.world.user.name
        self.state.reviews[review_id] = Review(
            review_id=review_id,
            item_id=item.item_id,
            author=user,
            rating=rating,
            text=text.strip(),
            by_user=True,
            created_at=self.now,
        )
        total = item.rating * item.rating_count + rating
        item.rating_count += 1
        item.rating = round(total / item.rating_count, 1)
        return self._review_list(item)

    # -- stars -----------------------------------------------------------------------------
    def _star_target(self, target_id: str) -> tuple[str, str]:
        tid = target_id.strip()
        if tid in self.state.shops:
            return tid, "shop"
        if tid in self.state.items:
            return tid, "item"
        raise ToolError(ErrorCode.NOT_FOUND, f"no shop or item {target_id!r}", field="target_id")

    @tool("read", ["shop.star"])
    def shop_list_starred(self) -> StarList:
        """List the shops and items the user has starred (favourites)."""
        shops, items = [], []
        for tid in sorted(self.state.stars):
            star = self.state.stars[tid]
            if star.kind == "shop":
                shops.append(StarEntry(target_id=tid, kind="shop", name=self.state.shops[tid].name))
            else:
                items.append(StarEntry(target_id=tid, kind="item", name=self.state.items[tid].name))
        return StarList(shops=shops, items=items)

    @tool("write", ["shop.star"])
    def shop_add_star(
        self, target_id: Annotated[str, Field(description="a shop id (shop-01) or item id (item-0103)")]
    ) -> StarResult:
        """Star (favourite) a shop or an item. Starring something already starred changes nothing.

        Errors: not_found (field target_id).
        """
        tid, kind = self._star_target(target_id)
        if tid in self.state.stars:
            return StarResult(target_id=tid, kind=kind, starred=True, changed=False)
        self.state.stars[tid] = Star(target_id=tid, kind=kind, starred_at=self.now)
        return StarResult(target_id=tid, kind=kind, starred=True, changed=True)

    @tool("write", ["shop.star"], destructive=True)
    def shop_remove_star(
        self, target_id: Annotated[str, Field(description="a shop id (shop-01) or item id (item-0103)")]
    ) -> StarResult:
        """Unstar a shop or an item. Unstarring something not starred changes nothing.

        Errors: not_found (field target_id) for an unknown shop or item.
        """
        tid, kind = self._star_target(target_id)
        if tid not in self.state.stars:
            return StarResult(target_id=tid, kind=kind, starred=False, changed=False)
        del self.state.stars[tid]
        return StarResult(target_id=tid, kind=kind, starred=False, changed=True)
