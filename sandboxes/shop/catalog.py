"""Seeded generation of the shop app's initial state.

Everything is drawn from named streams of the app (``catalog``, ``coupons``, ``history``),
so the catalog depends only on the world seed. Eight shops (two in electronics, one in each
other category) sell 8-11 items each; every shop has at least one sold-out item and one item
with a single unit left, so stock limits matter.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from mcpgym.kernel.clock import EPOCH_START
from mcpgym.kernel.people import CITIES
from mcpgym.sandboxes.shop.models import (
    CATEGORIES,
    CartLine,
    Coupon,
    Item,
    Order,
    OrderLine,
    Review,
    Shop,
    ShopState,
    Star,
    StoredStatus,
)

if TYPE_CHECKING:
    from mcpgym.kernel.world import World

DAY = 86_400

# name, (lowest, highest) price in cents
TEMPLATES: dict[str, list[tuple[str, tuple[int, int]]]] = {
    "electronics": [
        ("Wireless Earbuds", (3_900, 19_900)),
        ("Noise-Cancelling Headphones", (8_900, 39_900)),
        ("Bluetooth Speaker", (2_900, 14_900)),
        ("USB-C Charger 65W", (1_900, 5_900)),
        ("Power Bank 20000mAh", (2_500, 7_900)),
        ("Mechanical Keyboard", (5_900, 17_900)),
        ("Wireless Mouse", (1_500, 8_900)),
        ("27-inch Monitor", (17_900, 59_900)),
        ("Ultrabook Laptop 14-inch", (89_900, 269_900)),
        ("Mirrorless Camera", (79_900, 289_900)),
        ("4K OLED TV 55-inch", (119_900, 329_900)),
        ("Smartwatch", (12_900, 44_900)),
        ("E-Reader", (8_900, 24_900)),
        ("Webcam 1080p", (2_900, 9_900)),
        ("Portable SSD 1TB", (6_900, 17_900)),
        ("Gaming Console", (29_900, 54_900)),
    ],
    "books": [
        ("The Silent Orbit", (1_200, 2_900)),
        ("Practical Python Recipes", (2_900, 5_900)),
        ("A Short History of Maps", (1_500, 3_500)),
        ("The Last Lighthouse", (900, 2_400)),
        ("Gardening for Small Spaces", (1_400, 3_200)),
        ("The Quiet Algorithm", (1_600, 3_900)),
        ("Midnight in Lisbon", (900, 2_200)),
        ("Cooking with Fire", (2_200, 4_500)),
        ("Stars Over the Fjord", (1_000, 2_600)),
        ("The Patient Investor", (1_800, 3_900)),
        ("Birds of the Northern Coast", (2_400, 5_200)),
        ("Chess Strategy for Beginners", (1_300, 2_900)),
        ("The Clockmaker's Daughter", (1_100, 2_700)),
        ("Data Structures Illustrated", (3_500, 7_900)),
    ],
    "grocery": [
        ("Organic Coffee Beans 1kg", (1_400, 3_200)),
        ("Extra Virgin Olive Oil 750ml", (900, 2_400)),
        ("Dark Chocolate 85%", (250, 600)),
        ("Basmati Rice 2kg", (500, 1_300)),
        ("Greek Yogurt 500g", (250, 650)),
        ("Almond Milk 1L", (200, 450)),
        ("Sourdough Bread", (350, 800)),
        ("Free-Range Eggs 12-pack", (400, 900)),
        ("Green Tea 50 Bags", (450, 1_200)),
        ("Maple Syrup 500ml", (900, 2_000)),
        ("Aged Cheddar 250g", (500, 1_100)),
        ("Wildflower Honey 400g", (600, 1_500)),
        ("Fusilli Pasta 500g", (150, 450)),
        ("Sparkling Water 6-pack", (300, 750)),
    ],
    "home": [
        ("Espresso Machine", (19_900, 89_900)),
        ("Cast Iron Skillet", (2_900, 7_900)),
        ("Chef's Knife 8-inch", (3_900, 14_900)),
        ("Linen Bed Sheet Set", (7_900, 21_900)),
        ("Memory Foam Pillow", (2_900, 7_900)),
        ("Robot Vacuum", (19_900, 69_900)),
        ("Air Purifier", (12_900, 39_900)),
        ("Ceramic Dinner Set", (4_900, 15_900)),
        ("Scented Candle", (900, 3_500)),
        ("LED Desk Lamp", (2_500, 8_900)),
        ("Bath Towel Set", (2_900, 8_900)),
        ("Stand Mixer", (24_900, 59_900)),
        ("Non-Stick Frying Pan", (1_900, 6_900)),
        ("Cotton Throw Blanket", (2_500, 7_900)),
    ],
    "sports": [
        ("Yoga Mat", (1_900, 8_900)),
        ("Trail Running Shoes", (7_900, 17_900)),
        ("Adjustable Dumbbells", (9_900, 34_900)),
        ("Road Bike Helmet", (4_900, 17_900)),
        ("Tennis Racket", (5_900, 22_900)),
        ("Match Football", (1_900, 6_900)),
        ("Resistance Bands Set", (1_200, 3_900)),
        ("Camping Tent 2-Person", (8_900, 32_900)),
        ("Insulated Water Bottle", (1_500, 4_500)),
        ("Hiking Backpack 30L", (5_900, 18_900)),
        ("Swimming Goggles", (900, 3_500)),
        ("Speed Jump Rope", (700, 2_500)),
        ("Foam Roller", (1_500, 4_900)),
        ("Indoor Basketball", (2_500, 7_900)),
    ],
    "fashion": [
        ("Denim Jacket", (5_900, 16_900)),
        ("Merino Wool Sweater", (6_900, 18_900)),
        ("Leather Belt", (2_500, 8_900)),
        ("Canvas Sneakers", (3_900, 11_900)),
        ("Rain Jacket", (6_900, 21_900)),
        ("Silk Scarf", (2_900, 12_900)),
        ("Linen Shirt", (3_500, 9_900)),
        ("Chino Trousers", (3_900, 10_900)),
        ("Leather Wallet", (2_900, 9_900)),
        ("Polarised Sunglasses", (4_900, 19_900)),
        ("Winter Boots", (8_900, 24_900)),
        ("Cotton T-Shirt", (1_200, 3_900)),
        ("Baseball Cap", (1_500, 4_500)),
        ("Wool Socks 3-pack", (1_200, 2_900)),
    ],
    "toys": [
        ("Building Blocks Set", (2_900, 12_900)),
        ("Wooden Train Set", (3_900, 11_900)),
        ("Plush Teddy Bear", (1_500, 4_900)),
        ("Jigsaw Puzzle 1000 Pieces", (1_500, 3_900)),
        ("Remote Control Car", (3_500, 14_900)),
        ("Strategy Board Game", (2_900, 7_900)),
        ("Watercolour Art Kit", (1_900, 5_900)),
        ("Stunt Kite", (2_500, 8_900)),
        ("Junior Science Kit", (2_900, 8_900)),
        ("Wooden Dollhouse", (7_900, 22_900)),
        ("Light-Up Yo-Yo", (500, 1_500)),
        ("Family Card Game", (900, 2_500)),
    ],
}
"""Item templates per category: name and price range in cents."""

BRANDS: dict[str, list[str]] = {
    "electronics": ["Sonora", "Voltix", "Nordtek", "Pixelon", "Auralis", "Kestrel"],
    "books": ["Harbor Press", "Lumen Books", "Northwind Publishing", "Quill & Co"],
    "grocery": ["Green Valley", "Mountain Farm", "Casa Verde", "Sunfield"],
    "home": ["Hearthly", "Casa Nova", "Lindholm", "Oakridge"],
    "sports": ["Peakline", "Stride", "Aquafin", "Summit Gear"],
    "fashion": ["Maison Lark", "Urbano", "Fjell", "Coastline"],
    "toys": ["Tinkerly", "Joyforge", "Little Oak", "Brightbox"],
}
"""Brands (publishers for books) per category."""

SHOP_NAMES: dict[str, list[str]] = {
    "electronics": ["Volt & Byte", "Circuit Corner", "Pixel Plaza", "Gadget Harbor"],
    "books": ["Paper Lantern Books", "The Reading Room", "Chapter & Verse"],
    "grocery": ["Fresh Basket", "Green Grocer Market", "Daily Harvest"],
    "home": ["Hearth & Home", "Nest Living", "Casa Bella"],
    "sports": ["Peak Performance", "Active Life Sports", "Trailhead Outfitters"],
    "fashion": ["Thread & Needle", "Urban Closet", "Atelier Nord"],
    "toys": ["Toy Chest", "Wonder Workshop", "Playful Owl"],
}
"""Shop name pool per category."""

REVIEW_TEXTS: dict[int, list[str]] = {
    5: ["Excellent, exactly as described.", "Love it, worth every cent.", "Top quality, fast delivery."],
    4: ["Good value, would buy again.", "Very nice, one small flaw.", "Solid choice for the price."],
    3: ["Does the job, nothing special.", "Average quality.", "Okay, but I expected more."],
    2: ["Disappointing quality.", "Not as pictured.", "Arrived late and scratched."],
    1: ["Broke after a week.", "Would not recommend.", "Completely useless."],
}

COUPON_WORDS = ["SAVE", "DEAL", "BONUS", "TREAT", "HAPPY"]


def _price(r: random.Random, lo: int, hi: int) -> int:
    """A price in cents between ``lo`` and ``hi`` ending in 9 (e.g. 1299, 349)."""
    cents = r.randrange(lo, hi + 1)
    step = 100 if lo >= 10_000 else 10
    return (cents // step) * step + step - 1


def _shops_and_items(r: random.Random) -> tuple[dict[str, Shop], dict[str, Item]]:
    categories = ["electronics", *CATEGORIES]  # two electronics shops
    r.shuffle(categories)
    used_names: set[str] = set()
    shops: dict[str, Shop] = {}
    items: dict[str, Item] = {}
    for s, category in enumerate(categories, start=1):
        name = r.choice([n for n in SHOP_NAMES[category] if n not in used_names])
        used_names.add(name)
        shop_id = f"shop-{s:02d}"
        shops[shop_id] = Shop(
            shop_id=shop_id, name=name, category=category, city=r.choice(CITIES), rating=round(r.uniform(3.2, 4.9), 1)
        )
        count = r.randint(8, 11)
        templates = r.sample(TEMPLATES[category], count)
        stocks = [r.randint(2, 40) for _ in range(count)]
        zero, one = r.sample(range(count), 2)
        stocks[zero], stocks[one] = 0, 1
        for n, ((item_name, (lo, hi)), stock) in enumerate(zip(templates, stocks, strict=False), start=1):
            brand = r.choice(BRANDS[category])
            item_id = f"item-{s:02d}{n:02d}"
            what = "a book published by" if category == "books" else "made by"
            items[item_id] = Item(
                item_id=item_id,
                shop_id=shop_id,
                name=item_name,
                brand=brand,
                category=category,
                price_cents=_price(r, lo, hi),
                stock=stock,
                rating=round(r.uniform(2.6, 5.0), 1),
                rating_count=r.randint(3, 900),
                description=f"{item_name}, {what} {brand}; sold by {name}.",
            )
    return shops, items


def _coupons(r: random.Random, shops: dict[str, Shop]) -> dict[str, Coupon]:
    words = r.sample(COUPON_WORDS, 4)
    shop = shops[r.choice(sorted(shops))]
    pct_shop = r.choice([10, 15, 20])
    pct_all = r.choice([5, 10])
    amount = r.choice([1_500, 2_000, 2_500])
    specs = [
        Coupon(
            code=f"{words[0]}{pct_all}",
            description=f"{pct_all}% off the whole cart from $60.00",
            percent_off=pct_all,
            min_subtotal_cents=6_000,
            expires_at=EPOCH_START + 30 * DAY,
        ),
        Coupon(
            code=f"{words[1]}{amount // 100}",
            description=f"${amount // 100}.00 off orders of $150.00 or more",
            amount_off_cents=amount,
            min_subtotal_cents=15_000,
            expires_at=EPOCH_START + 14 * DAY,
        ),
        Coupon(
            code=f"{shop.category.upper()}{pct_shop}",
            description=f"{pct_shop}% off items of {shop.name} ({shop.shop_id}) from $40.00 of that shop's items",
            percent_off=pct_shop,
            min_subtotal_cents=4_000,
            shop_id=shop.shop_id,
            expires_at=EPOCH_START + 7 * DAY,
        ),
        Coupon(
            code=f"{words[2]}30",
            description="30% off the whole cart (expired)",
            percent_off=30,
            min_subtotal_cents=0,
            expires_at=EPOCH_START - 2 * DAY,
        ),
        Coupon(
            code=f"{words[3]}50",
            description="$50.00 off orders of $400.00 or more",
            amount_off_cents=5_000,
            min_subtotal_cents=40_000,
            expires_at=EPOCH_START + 21 * DAY,
        ),
    ]
    return {c.code: c for c in specs}


def _history(
    r: random.Random, world: World, items: dict[str, Item], shops: dict[str, Shop]
) -> tuple[dict[str, Order], dict[str, Review], dict[str, Star]]:
    """Past orders (delivered, one cancelled, one past its return window), reviews and stars."""
    item_ids = sorted(items)
    orders: dict[str, Order] = {}
    plan: list[tuple[int, StoredStatus]] = [
        (r.randint(3, 6), "placed"),
        (r.randint(8, 15), "placed"),
        (r.randint(16, 24), "cancelled"),
        (r.randint(40, 60), "placed"),
    ]
    for k, (days_ago, status) in enumerate(plan, start=1):
        chosen = r.sample(item_ids, r.randint(1, 2))
        lines = []
        for item_id in chosen:
            it = items[item_id]
            qty = r.randint(1, 2)
            lines.append(
                OrderLine(
                    item_id=item_id,
                    shop_id=it.shop_id,
                    name=it.name,
                    unit_price_cents=it.price_cents,
                    quantity=qty,
                    line_total_cents=qty * it.price_cents,
                )
            )
        subtotal = sum(line.line_total_cents for line in lines)
        created = EPOCH_START - days_ago * DAY - r.randint(0, 10) * 3600
        order_id = f"ord-{k:04d}"
        orders[order_id] = Order(
            order_id=order_id,
            status=status,
            lines=lines,
            subtotal_cents=subtotal,
            total_cents=subtotal,
            refunded_cents=subtotal if status == "cancelled" else 0,
            created_at=created,
            closed_at=created + 3600 if status == "cancelled" else None,
        )
    reviews: dict[str, Review] = {}
    names = [p.name for p in world.people]
    for item_id in item_ids:
        it = items[item_id]
        for k in range(1, r.randint(0, 2) + 1):
            rating = max(1, min(5, round(it.rating + r.choice([-1, 0, 0, 1]))))
            review_id = f"rev-{item_id[5:]}-{k}"
            reviews[review_id] = Review(
                review_id=review_id,
                item_id=item_id,
                author=r.choice(names),
                rating=rating,
                text=r.choice(REVIEW_TEXTS[rating]),
                created_at=EPOCH_START - r.randint(1, 200) * DAY,
            )
    stars: dict[str, Star] = {}
    shop_id = r.choice(sorted(shops))
    stars[shop_id] = Star(target_id=shop_id, kind="shop", starred_at=EPOCH_START - 30 * DAY)
    for item_id in r.sample(item_ids, 2):
        stars[item_id] = Star(target_id=item_id, kind="item", starred_at=EPOCH_START - r.randint(2, 60) * DAY)
    return orders, reviews, stars


def generate_state(world: World, stream) -> ShopState:  # noqa: ANN001 - (world, purpose) -> Random
    """Build the seeded initial :class:`ShopState` of ``world``.

    Args:
        world: the world (its seed and people directory are used).
        stream: ``stream(world, purpose)`` returning the app's named random stream.
    """
    shops, items = _shops_and_items(stream(world, "catalog"))
    coupons = _coupons(stream(world, "coupons"), shops)
    orders, reviews, stars = _history(stream(world, "history"), world, items, shops)
    cart: dict[str, CartLine] = {}
    return ShopState(shops=shops, items=items, cart=cart, coupons=coupons, orders=orders, reviews=reviews, stars=stars)
