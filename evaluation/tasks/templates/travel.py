"""Templates over travel: flight bookings and fares (flights), moving home (system, weather)."""

from __future__ import annotations

import random
from datetime import date, timedelta
from typing import Any

from mcpgym.evaluation.tasks.templates.common import Instance, Template, dollars, long_date, stream, world_of

FLIGHT_DAYS = [(date(2026, 6, 3) + timedelta(days=i)).isoformat() for i in range(26)]
"""Departure dates the flight templates draw from (June 3-28: every flight still bookable)."""

CLASSES = ["economy", "economy", "economy", "premium", "business"]
"""Seat classes the booking template draws from (economy most often)."""


def _route(seed: int, template: str, origin_pool: str = "home") -> tuple[str, str, str, list[Any], random.Random]:
    """Draw (origin city, destination city, ISO date) with at least one flight that day.

    ``origin_pool`` ``home`` starts from the user's city, ``any`` from any city with routes.
    Returns the route, the flights of that day (``FlightView`` models, as
    ``flights_search_flights_by_city`` lists them) and the template's stream.
    """
    from mcpgym.sandboxes.flights.network import AIRPORT_INFO

    world = world_of(seed)
    app = world.apps["flights"]
    r = stream(seed, template)
    services = sorted(app.state.services.values(), key=lambda s: s.flight_number)
    if origin_pool == "home":
        origin = world.user.city
    else:
        origin = r.choice(sorted({AIRPORT_INFO[s.origin][1] for s in services}))
    dests = sorted({AIRPORT_INFO[s.destination][1] for s in services if AIRPORT_INFO[s.origin][1] == origin})
    for _ in range(200):
        dest, day = r.choice(dests), r.choice(FLIGHT_DAYS)
        found = app.flights_search_flights_by_city(origin_city=origin, destination_city=dest, date=day).flights
        if found:
            return origin, dest, day, found, r
    raise ValueError(f"template {template}: no flight found for seed {seed}")  # pragma: no cover


# -- flights: book the cheapest seat of a class if the balance covers it ----------------------
BOOK_CHEAPEST = """
- call: flights_find_cheapest_flight
  args: {origin: "{p_origin}", destination: "{p_destination}", date_from: "{p_date}", seat_class: "{p_class}", passengers: 1}
  save: best
  fallback:
    - call: flights_search_flights_by_city
      args: {origin_city: "{p_origin}", destination_city: "{p_destination}", date: "{p_date}", seat_class: "{p_class}", passengers: 1}
      save: found
    - let:
        offers: "[{'flight': f, 'price_cents': first(f.classes, seat_class=p_class).price_cents} for f in found.flights if f.bookable]"
    - let: {best: "cheapest(offers)"}
- call: system_get_wallet_balance
  save: wallet
- if: wallet.balance_cents < best.price_cents
  then:
    - refuse: >-
        I can't book it: the cheapest {p_class} seat costs {money(best.price_cents)}, more than your
        balance of {money(wallet.balance_cents)}, so I booked nothing.
- call: system_request_privilege
  args: {privilege: flights.booking}
- call: system_authorize_payment
  args: {limit_cents: "{best.price_cents}", purpose: flight booking}
  save: pay
- call: flights_book_flight
  args:
    flight_id: "{best.flight.flight_id}"
    seat_class: "{p_class}"
    passenger_ids: [pax-000]
    authorization_id: "{pay.authorization.auth_id}"
- answer: >-
    Booked {best.flight.flight_number} ({best.flight.origin} {best.flight.departure}) in {p_class} for
    {money(best.price_cents)}.
"""


def build_book_cheapest(seed: int) -> Instance:
    """From the user's home city to one of its destinations on a June date with a flight that
    has a free seat of the drawn class; infeasible when that seat costs more than the balance."""
    balance = world_of(seed).apps["system"].state.wallet.balance_cents
    origin, dest, day, found, r = _route(seed, "flights_book_cheapest")
    cls = r.choice(CLASSES)
    offers = [
        (c.price_cents, f.departure_at, f.flight_id)
        for f in found
        for c in f.classes
        if c.seat_class == cls and c.seats_available >= 1 and f.bookable
    ]
    if not offers:
        cls = "economy"  # economy always keeps a seat
        offers = [
            (c.price_cents, f.departure_at, f.flight_id)
            for f in found
            for c in f.classes
            if c.seat_class == cls and c.seats_available >= 1
        ]
    price, _, flight_id = min(offers)
    ok = price <= balance
    return Instance(
        instruction=(
            f"Book me the cheapest {cls} seat from {origin} to {dest} on {long_date(day)}, as long as my "
            "wallet balance covers it."
        ),
        params={"p_origin": origin, "p_destination": dest, "p_date": day, "p_class": cls},
        feasible=ok,
        checks=[{"kind": "number", "value": price / 100, "description": "the fare in dollars"}],
        notes=f"Cheapest {cls}: {flight_id} at {dollars(price)}; balance {dollars(balance)}.",
    )


# -- flights: the cheapest economy fare of a day (retrieval) -------------------------------------
FARE_LOOKUP = """
- call: flights_search_flights_by_city
  args: {origin_city: "{p_origin}", destination_city: "{p_destination}", date: "{p_date}"}
  save: found
  fallback:
    - call: flights_list_airports
      args: {city: "{p_origin}"}
      save: from_airports
    - call: flights_list_airports
      args: {city: "{p_destination}"}
      save: to_airports
    - let: {flights: "[]"}
    - for: o
      in: from_airports.airports
      do:
        - for: d
          in: to_airports.airports
          do:
            - call: flights_search_flights
              args: {origin: "{o.code}", destination: "{d.code}", date: "{p_date}"}
              save: part
            - let: {flights: "flights + part.flights"}
    - let: {found: "{'flights': sorted(flights, key='departure_at')}"}
- let:
    offers: "[{'flight_id': f.flight_id, 'departure': f.departure, 'price_cents': first(f.classes, seat_class='economy').price_cents} for f in found.flights]"
- let: {best: "cheapest(offers)"}
- answer: >-
    The cheapest economy fare from {p_origin} to {p_destination} on {p_date} is
    {money(best.price_cents)} ({best.flight_id}, departing {best.departure}).
"""


def build_fare_lookup(seed: int) -> Instance:
    """Any city with routes, one of its destinations, a June date with at least one flight."""
    origin, dest, day, found, _ = _route(seed, "flights_fare_lookup", origin_pool="any")
    price = min(c.price_cents for f in found for c in f.classes if c.seat_class == "economy")
    return Instance(
        instruction=(
            f"What's the cheapest economy fare from {origin} to {dest} on {long_date(day)}? Just tell me, "
            "don't book anything."
        ),
        params={"p_origin": origin, "p_destination": dest, "p_date": day},
        checks=[{"kind": "number", "value": price / 100, "description": "the fare in dollars"}],
        notes=f"{len(found)} flight(s) that day; the cheapest economy fare is {dollars(price)}. Nothing changes.",
    )


# -- system + weather: moved to another city -------------------------------------------------------
MOVE_HOME = """
- call: system_update_profile
  args: {city: "{p_city}"}
- call: weather_list_saved_locations
  save: saved
- if: "lower(p_city) not in [s.location.location_id for s in saved.locations]"
  then:
    - call: weather_add_location
      args: {location: "{p_city}"}
- call: weather_set_primary_location
  args: {location: "{p_city}"}
- answer: Your profile city is {p_city} now, and {p_city} is your primary weather location.
"""


def build_move_home(seed: int) -> Instance:
    """A city of the people directory other than the user's; whether it is already a saved
    weather location decides whether it must be added before it can become primary."""
    from mcpgym.kernel.people import CITIES, generate_people

    user, _ = generate_people(seed)
    r = stream(seed, "weather_move_home")
    city = r.choice([c for c in CITIES if c != user.city])
    return Instance(
        instruction=(
            f"I've just moved from {user.city} to {city}. Update the city in my profile and make {city} "
            "my primary weather location."
        ),
        params={"p_city": city},
        notes=f"Gold: profile city {city}; {city} saved (if it was not) and made primary.",
    )


TEMPLATES: list[Template] = [
    Template(
        "flights_book_cheapest",
        ["system", "flights"],
        2,
        ["verification", "recovery", "interdependency", "payment"],
        BOOK_CHEAPEST,
        build_book_cheapest,
    ),
    Template("flights_fare_lookup", ["system", "flights"], 1, ["retrieval"], FARE_LOOKUP, build_fare_lookup),
    Template(
        "weather_move_home",
        ["system", "weather"],
        2,
        ["recovery", "interdependency", "multi_step"],
        MOVE_HOME,
        build_move_home,
    ),
]
"""The travel templates, in suite order."""
