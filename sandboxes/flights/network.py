"""Cities, airports, airlines and the seeded flight schedule of the ``flights`` app.

The route network and the daily services (flight number, route, departure time, aircraft,
operating weekdays, base fare) are drawn from the app's ``network`` stream and stored in the
state. A dated flight (``AU123-20260605``) is *derived* from its service: its capacity comes
from the aircraft, the seats the rest of the world already bought and its fares come from a
stable hash of ``(seed, flight id, seat class)``. Only the seats sold through this app's own
bookings are kept in state, so the schedule of 30 days stays small while every figure is
reproducible from the seed.

All times are UTC, in virtual seconds since the Unix epoch. Money is in integer cents (USD).
"""

from __future__ import annotations

import functools
import math
import random
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from mcpgym.kernel.clock import EPOCH_START
from mcpgym.kernel.people import CITIES as PEOPLE_CITIES
from mcpgym.kernel.rng import stable_uniform
from mcpgym.sandboxes.flights.models import SeatClass

SEAT_CLASSES: tuple[SeatClass, ...] = ("economy", "premium", "business")
"""Seat classes, cheapest first."""

CITY_INFO: dict[str, tuple[str, float, float]] = {
    "Lisbon": ("Portugal", 38.72, -9.14),
    "Berlin": ("Germany", 52.52, 13.40),
    "Paris": ("France", 48.86, 2.35),
    "Madrid": ("Spain", 40.42, -3.70),
    "Rome": ("Italy", 41.90, 12.50),
    "Vienna": ("Austria", 48.21, 16.37),
    "Oslo": ("Norway", 59.91, 10.75),
    "Prague": ("Czechia", 50.08, 14.44),
    "Dublin": ("Ireland", 53.35, -6.26),
    "Warsaw": ("Poland", 52.23, 21.01),
    "London": ("United Kingdom", 51.51, -0.13),
    "Amsterdam": ("Netherlands", 52.37, 4.90),
    "Athens": ("Greece", 37.98, 23.73),
    "Stockholm": ("Sweden", 59.33, 18.07),
    "Zurich": ("Switzerland", 47.37, 8.54),
}
"""City -> (country, latitude, longitude): every city of :data:`mcpgym.kernel.people.CITIES` plus five more."""

AIRPORT_INFO: dict[str, tuple[str, str]] = {
    "LIS": ("Lisbon Humberto Delgado", "Lisbon"),
    "BER": ("Berlin Brandenburg", "Berlin"),
    "CDG": ("Paris Charles de Gaulle", "Paris"),
    "ORY": ("Paris Orly", "Paris"),
    "MAD": ("Madrid Barajas", "Madrid"),
    "FCO": ("Rome Fiumicino", "Rome"),
    "VIE": ("Vienna International", "Vienna"),
    "OSL": ("Oslo Gardermoen", "Oslo"),
    "PRG": ("Prague Vaclav Havel", "Prague"),
    "DUB": ("Dublin", "Dublin"),
    "WAW": ("Warsaw Chopin", "Warsaw"),
    "LHR": ("London Heathrow", "London"),
    "LGW": ("London Gatwick", "London"),
    "AMS": ("Amsterdam Schiphol", "Amsterdam"),
    "ATH": ("Athens International", "Athens"),
    "ARN": ("Stockholm Arlanda", "Stockholm"),
    "ZRH": ("Zurich", "Zurich"),
}
"""IATA-like code -> (airport name, city). Paris and London have two airports each."""

AIRLINES: dict[str, str] = {"AU": "Aurora Airways", "BF": "Bluefin Air", "KS": "Kestrel Air", "NV": "Northvane"}
"""Airline code -> name (fictitious carriers)."""

AIRCRAFT: dict[str, tuple[int, int, int]] = {
    "A220": (110, 12, 8),
    "A320": (144, 18, 12),
    "A321": (170, 24, 16),
    "B737": (150, 18, 12),
}
"""Aircraft type -> seats per class (economy, premium, business)."""

CLASS_FARE_FACTOR: dict[str, float] = {"economy": 1.0, "premium": 1.8, "business": 3.4}
"""Fare of a class relative to the economy fare."""

SCHEDULE_START: date = datetime.fromtimestamp(EPOCH_START, tz=UTC).date()
"""First day of the schedule (the day every world's clock starts)."""

SCHEDULE_DAYS = 30
"""Days of schedule, from :data:`SCHEDULE_START` on."""

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


_AIRPORTS_BY_CITY: dict[str, tuple[str, ...]] = {}


def airports_of(city: str) -> list[str]:
    """Airport codes of ``city`` (exact city name), sorted."""
    found = _AIRPORTS_BY_CITY.get(city)
    if found is None:  # the table is constant: scan it once per city (world generation asks often)
        found = _AIRPORTS_BY_CITY[city] = tuple(sorted(code for code, (_, c) in AIRPORT_INFO.items() if c == city))
    return list(found)


@functools.cache
def distance_km(a: str, b: str) -> int:
    """Great-circle distance between two cities of :data:`CITY_INFO`, in km (rounded)."""
    _, lat1, lon1 = CITY_INFO[a]
    _, lat2, lon2 = CITY_INFO[b]
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return int(round(2 * 6371 * math.asin(math.sqrt(h))))


@dataclass(frozen=True)
class ServiceSpec:
    """One generated daily service (converted into the state model by the app)."""

    flight_number: str
    airline: str
    origin: str
    destination: str
    departure_minute: int
    duration_minutes: int
    aircraft: str
    operating_days: tuple[int, ...]
    base_fare_cents: int


def generate_services(r: random.Random) -> list[ServiceSpec]:
    """Draw the route network and its daily services from stream ``r``.

    Pairs of cities where people live are connected with probability 0.75, other pairs with
    0.4; every city then gets at least three destinations (nearest first). Each direction of
    a connected pair has 1-3 services.

    Returns:
        Services sorted by flight number; flight numbers are unique.
    """
    cities = sorted(CITY_INFO)
    pairs: set[tuple[str, str]] = set()
    for i, a in enumerate(cities):
        for b in cities[i + 1 :]:
            p = 0.75 if (a in PEOPLE_CITIES and b in PEOPLE_CITIES) else 0.4
            if r.random() < p:
                pairs.add((a, b))
    for a in cities:
        degree = sum(1 for pair in pairs if a in pair)
        for b in sorted((c for c in cities if c != a), key=lambda c: (distance_km(a, c), c)):
            if degree >= 3:
                break
            pair = (min(a, b), max(a, b))
            if pair not in pairs:
                pairs.add(pair)
                degree += 1
    numbers: dict[str, int] = {code: r.randrange(100, 400) for code in sorted(AIRLINES)}
    airlines, aircraft = sorted(AIRLINES), sorted(AIRCRAFT)
    services: list[ServiceSpec] = []
    for a, b in sorted(pairs):
        km = distance_km(a, b)
        duration = int(round((km / 780 * 60 + 35) / 5.0)) * 5
        for origin_city, dest_city in ((a, b), (b, a)):
            count = r.choice((1, 1, 2, 2, 3))
            slots = sorted(r.sample(range(6 * 12, 21 * 12), count))
            for slot in slots:
                airline = r.choice(airlines)
                numbers[airline] += r.randrange(1, 9)
                days_roll = r.random()
                if days_roll < 0.7:
                    days: tuple[int, ...] = tuple(range(7))
                elif days_roll < 0.85:
                    days = (0, 1, 2, 3, 4)
                else:
                    days = tuple(sorted(r.sample(range(7), 4)))
                services.append(
                    ServiceSpec(
                        flight_number=f"{airline}{numbers[airline]}",
                        airline=airline,
                        origin=r.choice(airports_of(origin_city)),
                        destination=r.choice(airports_of(dest_city)),
                        departure_minute=slot * 5,
                        duration_minutes=duration,
                        aircraft=r.choice(aircraft),
                        operating_days=days,
                        base_fare_cents=int(round((3_900 + km * 8.5) * r.uniform(0.9, 1.2) / 100.0)) * 100,
                    )
                )
    services.sort(key=lambda s: s.flight_number)
    return services


def schedule_dates() -> list[date]:
    """Every date of the schedule, in order."""
    return [SCHEDULE_START + timedelta(days=i) for i in range(SCHEDULE_DAYS)]


def in_schedule(day: date) -> bool:
    """True when ``day`` lies inside the 30-day schedule."""
    return SCHEDULE_START <= day < SCHEDULE_START + timedelta(days=SCHEDULE_DAYS)


def flight_id_of(flight_number: str, day: date) -> str:
    """The id of a dated flight, e.g. ``AU123-20260605``."""
    return f"{flight_number}-{day:%Y%m%d}"


def split_flight_id(flight_id: str) -> tuple[str, date] | None:
    """Split ``AU123-20260605`` into ``("AU123", date(2026, 6, 5))``; None when malformed."""
    number, sep, day_text = flight_id.strip().upper().partition("-")
    if not sep or len(day_text) != 8 or not day_text.isdigit() or not number:
        return None
    try:
        day = date(int(day_text[:4]), int(day_text[4:6]), int(day_text[6:]))
    except ValueError:
        return None
    return number, day


def day_start(day: date) -> int:
    """Virtual seconds of 00:00 UTC on ``day``."""
    return int(datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp())


@dataclass(frozen=True)
class ClassInventory:
    """Seat figures of one class of one dated flight, before this app's own bookings.

    Attributes:
        capacity: seats of the class on the aircraft.
        base_available: seats not sold to the rest of the world.
        price_cents: fare per passenger, in cents.
    """

    capacity: int
    base_available: int
    price_cents: int


def class_inventory(
    seed: int, flight_id: str, aircraft: str, base_fare_cents: int, weekday: int
) -> dict[str, ClassInventory]:
    """Derive capacity, outside sales and fares of every class of a dated flight.

    About one class in ten is nearly full (0-3 seats left, dearer by a quarter); otherwise
    35-90 % of the seats are taken. Fares vary by a demand factor of 0.85-1.6 per flight and
    by +10 % on Fridays and Sundays; they are whole dollars.

    Args:
        seed: the world seed.
        flight_id: the dated flight, e.g. ``AU123-20260605``.
        aircraft: a key of :data:`AIRCRAFT`.
        base_fare_cents: the service's base economy fare.
        weekday: 0 (Monday) to 6 (Sunday).
    """
    demand = 0.85 + 0.75 * stable_uniform("flights", seed, "demand", flight_id)
    if weekday in (4, 6):
        demand *= 1.1
    out: dict[str, ClassInventory] = {}
    for cls, capacity in zip(SEAT_CLASSES, AIRCRAFT[aircraft], strict=False):
        u = stable_uniform("flights", seed, "load", flight_id, cls)
        factor = CLASS_FARE_FACTOR[cls] * demand
        if u < 0.1:
            left = int(u * 40) % 4
            if cls == "economy":
                left = max(left, 1)
            factor *= 1.25
        else:
            left = capacity - int(capacity * (0.35 + 0.55 * stable_uniform("flights", seed, "sold", flight_id, cls)))
        price = int(round(base_fare_cents * factor / 100.0)) * 100
        out[cls] = ClassInventory(capacity=capacity, base_available=left, price_cents=price)
    return out
