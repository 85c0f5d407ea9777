"""The ``flights`` sandbox in-process: seeded schedule, search, passengers, bookings paid
through the wallet, privilege chain, refund rules on the virtual clock, changes, check-in,
baggage, determinism and snapshot/restore."""

from __future__ import annotations

from typing import Any

import pytest

import mcpgym.sandboxes.flights  # noqa: F401 - registers the app
from mcpgym.kernel.world import World
from mcpgym.sandboxes.flights.network import AIRPORT_INFO, SCHEDULE_START
from mcpgym.tools.invoke import ToolInvoker
from tests.support.app_helpers import err, ok

APPS = ["system", "flights"]


def make(seed: int = 3) -> ToolInvoker:
    """A fresh world with system + flights and no faults."""
    return ToolInvoker(World(seed, APPS), "none")


def balance(inv: ToolInvoker) -> int:
    return ok(inv, "system_get_wallet_balance")["balance_cents"]


def now(inv: ToolInvoker) -> int:
    return ok(inv, "system_get_time")["now"]


def advance_to(inv: ToolInvoker, t: int) -> None:
    """Wait (in steps of at most 7 days) until the virtual clock reaches ``t``."""
    while (left := t - now(inv)) > 0:
        ok(inv, "system_wait", seconds=min(left, 7 * 86_400))


def grant(inv: ToolInvoker) -> None:
    ok(inv, "system_request_privilege", privilege="flights.booking")


def pay(inv: ToolInvoker, amount: int) -> str:
    """Make sure the wallet covers ``amount`` (moving savings if needed) and authorise it."""
    short = amount - balance(inv)
    if short > 0:
        ok(inv, "system_transfer_from_savings", amount_cents=short)
    return ok(inv, "system_authorize_payment", limit_cents=amount)["authorization"]["auth_id"]


def roomy_flight(inv: ToolInvoker, day: str, seats: int = 5, seat_class: str = "economy") -> dict[str, Any]:
    """A flight on ``day`` with at least ``seats`` free seats in ``seat_class`` (first route that has one)."""
    for origin in ("LIS", "BER", "MAD", "VIE", "PRG", "WAW"):
        for dest in ok(inv, "flights_list_destinations", origin=origin)["destinations"]:
            found = ok(
                inv,
                "flights_search_flights",
                origin=origin,
                destination=dest["destination"],
                date=day,
                seat_class=seat_class,
                passengers=seats,
            )["flights"]
            if found:
                return found[0]
    raise AssertionError("no roomy flight found")


def seats(inv: ToolInvoker, flight_id: str, seat_class: str = "economy") -> int:
    classes = ok(inv, "flights_get_flight", flight_id=flight_id)["flight"]["classes"]
    return next(c["seats_available"] for c in classes if c["seat_class"] == seat_class)


def price(flight: dict[str, Any], seat_class: str = "economy") -> int:
    return next(c["price_cents"] for c in flight["classes"] if c["seat_class"] == seat_class)


# -- schedule and search --------------------------------------------------------------------
def test_app_has_the_declared_tools_and_metadata() -> None:
    specs = make().specs
    names = sorted(n for n in specs if n.startswith("flights_"))
    assert len(names) == 21
    book = specs["flights_book_flight"]
    assert book.kind == "write"
    assert set(book.preconditions) >= {"flights.seat", "wallet.balance", "system.payment_auth"}
    assert book.remedies["permission_denied"] == ("system_request_privilege",)
    assert set(book.remedies["precondition_failed"]) == {"system_authorize_payment", "system_transfer_from_savings"}
    assert "flights_search_flights_by_city" in specs["flights_search_flights"].alternatives
    assert "flights_search_flights" in specs["flights_search_flights_by_city"].alternatives
    assert specs["flights_check_in"].remedies["precondition_failed"] == ("system_wait",)
    assert all(
        specs[n].kind == "read" for n in ("flights_search_flights", "flights_get_booking", "flights_quote_cancellation")
    )


def test_schedule_is_seeded_and_stable() -> None:
    a, b, c = World(5, APPS), World(5, APPS), World(6, APPS)
    assert a.state_hash() == b.state_hash()
    assert a.apps["flights"].state.services == b.apps["flights"].state.services
    assert a.apps["flights"].state.services != c.apps["flights"].state.services
    services = a.apps["flights"].state.services
    assert len(services) > 100
    cities = {AIRPORT_INFO[s.origin][1] for s in services.values()}
    assert {"Lisbon", "Berlin", "Paris", "Oslo", "Warsaw", "London", "Athens"} <= cities
    ia, ib = ToolInvoker(a, "none"), ToolInvoker(b, "none")
    day = str(SCHEDULE_START.replace(day=8))
    assert ok(ia, "flights_search_flights_by_city", origin_city="Berlin", destination_city="Paris", date=day) == ok(
        ib, "flights_search_flights_by_city", origin_city="Berlin", destination_city="Paris", date=day
    )


def test_derived_values_are_real_bookable_flights_dates_and_cities() -> None:
    """The ids :meth:`FlightsApp.derived_values` offers to the argument generators are the ones
    the read tools show: every flight id is found, bookable, and listed by a search on its date."""
    inv = make(2)
    ok(inv, "system_wait", seconds=3 * 86_400 + 3600)  # the offer follows the virtual clock
    derived = inv.world.apps["flights"].derived_values()
    today = now(inv)
    assert derived["date"] == [f"2026-06-{d:02d}" for d in range(4, 11)]
    assert len(derived["flight_id"]) == len(inv.world.apps["flights"].state.services)
    assert derived["new_flight_id"] == derived["flight_id"]
    for flight_id in derived["flight_id"][:25]:
        flight = ok(inv, "flights_get_flight", flight_id=flight_id)["flight"]
        assert flight["bookable"] and flight["departure_at"] > today
        assert flight["departure"][:10] in derived["date"]
        found = ok(
            inv,
            "flights_search_flights",
            origin=flight["origin"],
            destination=flight["destination"],
            date=flight["departure"][:10],
        )["flights"]
        assert flight_id in [f["flight_id"] for f in found]
    for city in derived["origin_city"]:
        assert ok(inv, "flights_list_airports", city=city)["airports"]
    assert derived["city"] == derived["origin_city"] == derived["destination_city"]


def test_city_search_covers_every_airport_of_the_city() -> None:
    inv = make(4)
    day = "2026-06-09"
    by_city = ok(inv, "flights_search_flights_by_city", origin_city="paris", destination_city="Lisbon", date=day)
    by_code = []
    for code in ("CDG", "ORY"):
        by_code += ok(inv, "flights_search_flights", origin=code, destination="LIS", date=day)["flights"]
    assert sorted(f["flight_id"] for f in by_city["flights"]) == sorted(f["flight_id"] for f in by_code)
    assert by_city["count"] == len(by_code)
    for f in by_city["flights"]:
        assert f["origin_city"] == "Paris" and f["destination"] == "LIS"
        assert f["arrival_at"] - f["departure_at"] == f["duration_minutes"] * 60
        assert [c["seat_class"] for c in f["classes"]] == ["economy", "premium", "business"]
        assert price(f, "economy") < price(f, "premium") < price(f, "business")


def test_find_cheapest_matches_a_manual_scan() -> None:
    inv = make(8)
    dest = ok(inv, "flights_list_destinations", origin="BER")["destinations"][0]["destination"]
    cheapest = ok(
        inv,
        "flights_find_cheapest_flight",
        origin="BER",
        destination=dest,
        date_from="2026-06-05",
        date_to="2026-06-08",
        seat_class="premium",
        passengers=2,
    )
    scanned = []
    for d in range(5, 9):
        scanned += ok(
            inv,
            "flights_search_flights",
            origin="BER",
            destination=dest,
            date=f"2026-06-{d:02d}",
            seat_class="premium",
            passengers=2,
        )["flights"]
    assert cheapest["flights_compared"] == len(scanned)
    assert cheapest["price_cents"] == min(price(f, "premium") for f in scanned)
    assert cheapest["total_cents"] == 2 * cheapest["price_cents"]


def test_bad_arguments_are_domain_errors() -> None:
    inv = make()
    assert err(inv, "flights_search_flights", origin="XXX", destination="LIS", date="2026-06-05")["code"] == "not_found"
    assert (
        err(inv, "flights_search_flights", origin="LIS", destination="BER", date="June 5")["code"] == "invalid_argument"
    )
    assert err(inv, "flights_search_flights", origin="LIS", destination="BER", date="2026-08-01")["field"] == "date"
    assert (
        err(inv, "flights_search_flights_by_city", origin_city="Paris", destination_city="paris", date="2026-06-05")[
            "code"
        ]
        == "invalid_argument"
    )
    assert err(inv, "flights_get_flight", flight_id="nonsense")["code"] == "not_found"
    assert err(inv, "flights_get_flight", flight_id="AU1-20269999")["code"] == "not_found"
    assert (
        err(inv, "flights_search_flights", origin="LIS", destination="BER", date="2026-06-05", passengers=0)["code"]
        == "invalid_argument"
    )
    assert err(inv, "flights_get_booking", booking_id="bk-missing")["code"] == "not_found"
    assert (
        err(
            inv,
            "flights_find_cheapest_flight",
            origin="LIS",
            destination="BER",
            date_from="2026-06-02",
            date_to="2026-06-28",
        )["field"]
        == "date_to"
    )
    assert not any(c.internal for c in inv.calls)


# -- passengers ---------------------------------------------------------------------------------
def test_passengers_come_from_the_people_directory_and_can_be_managed() -> None:
    inv = make(2)
    world = inv.world
    listed = ok(inv, "flights_list_passengers")["passengers"]
    assert listed[0]["passenger_id"] == "pax-000" and listed[0]["name"] == world.user.name
    assert listed[0]["is_account_holder"] is True
    people = {p.person_id: p.name for p in world.people}
    for p in listed[1:]:
        assert people[p["person_id"]] == p["name"]
    added = ok(
        inv, "flights_add_passenger", name="Noor  Vermeulen", date_of_birth="1988-04-02", document_number="nl123"
    )["passenger"]
    assert added["name"] == "Noor Vermeulen" and added["document_number"] == "NL123"
    assert err(inv, "flights_add_passenger", name="noor vermeulen", date_of_birth="1988-04-02")["code"] == "conflict"
    assert err(inv, "flights_add_passenger", name="X", date_of_birth="2999-01-01")["code"] == "invalid_argument"
    assert len(ok(inv, "flights_list_passengers")["passengers"]) == len(listed) + 1
    assert (
        ok(inv, "flights_update_passenger", passenger_id=added["passenger_id"], email="noor@example.com")["passenger"][
            "email"
        ]
        == "noor@example.com"
    )
    assert err(inv, "flights_remove_passenger", passenger_id="pax-000")["code"] == "conflict"
    assert ok(inv, "flights_remove_passenger", passenger_id=added["passenger_id"])["remaining"] == len(listed)
    assert err(inv, "flights_remove_passenger", passenger_id=added["passenger_id"])["code"] == "not_found"


# -- booking --------------------------------------------------------------------------------------
def test_booking_needs_privilege_then_charges_exactly_the_fare() -> None:
    inv = make(3)
    ok(inv, "system_revoke_privilege", privilege="flights.booking")
    flight = roomy_flight(inv, "2026-06-10")
    fid, fare = flight["flight_id"], price(flight)
    before_seats = seats(inv, fid)
    auth = pay(inv, 2 * fare)
    denied = err(
        inv,
        "flights_book_flight",
        flight_id=fid,
        seat_class="economy",
        passenger_ids=["pax-000", "pax-001"],
        authorization_id=auth,
    )
    assert denied["code"] == "permission_denied" and denied["details"]["privilege"] == "flights.booking"
    grant(inv)
    wallet = balance(inv)
    booked = ok(
        inv,
        "flights_book_flight",
        flight_id=fid,
        seat_class="economy",
        passenger_ids=["pax-000", "pax-001"],
        authorization_id=auth,
    )
    b = booked["booking"]
    assert booked["charged_cents"] == 2 * fare
    assert b["fare_total_cents"] == b["total_paid_cents"] == 2 * fare and b["status"] == "confirmed"
    assert len(b["record_locator"]) == 6
    assert balance(inv) == wallet - 2 * fare
    assert seats(inv, fid) == before_seats - 2
    txn = ok(inv, "system_list_transactions", limit=1)["transactions"][0]
    assert txn["amount_cents"] == -2 * fare and txn["reference"] == b["booking_id"]
    # The authorisation was consumed; the same passengers cannot be booked twice on one flight.
    reused = err(
        inv,
        "flights_book_flight",
        flight_id=fid,
        seat_class="economy",
        passenger_ids=["pax-002"],
        authorization_id=auth,
    )
    assert reused["code"] == "precondition_failed" and reused["field"] == "authorization_id"
    twice = err(
        inv,
        "flights_book_flight",
        flight_id=fid,
        seat_class="economy",
        passenger_ids=["pax-001"],
        authorization_id=pay(inv, fare),
    )
    assert twice["code"] == "conflict"
    assert ok(inv, "flights_get_booking", booking_id=b["record_locator"])["booking"]["booking_id"] == b["booking_id"]
    assert [x["booking_id"] for x in ok(inv, "flights_list_bookings")["bookings"]] == [b["booking_id"]]


def test_failed_payment_leaves_no_trace_and_savings_cure_it() -> None:
    inv = make(11)
    grant(inv)
    everyone = [p["passenger_id"] for p in ok(inv, "flights_list_passengers")["passengers"]]
    flight = roomy_flight(inv, "2026-06-12", seats=len(everyone), seat_class="business")
    wallet = balance(inv)
    # The fewest passengers whose business fares exceed the wallet.
    n = next(n for n in range(1, len(everyone) + 1) if n * price(flight, "business") > wallet)
    paxes, total = everyone[:n], n * price(flight, "business")
    assert total <= wallet + ok(inv, "system_get_wallet_balance")["savings_cents"]
    auth = ok(inv, "system_authorize_payment", limit_cents=total)["authorization"]["auth_id"]
    before = inv.world.state_hash()
    e = err(
        inv,
        "flights_book_flight",
        flight_id=flight["flight_id"],
        seat_class="business",
        passenger_ids=paxes,
        authorization_id=auth,
    )
    assert e["code"] == "precondition_failed" and "insufficient balance" in e["message"]
    assert inv.world.state_hash() == before  # nothing charged, no seat held, no id drawn
    assert "system_transfer_from_savings" in inv.specs["flights_book_flight"].remedies["precondition_failed"]
    ok(inv, "system_transfer_from_savings", amount_cents=total - wallet)
    booked = ok(
        inv,
        "flights_book_flight",
        flight_id=flight["flight_id"],
        seat_class="business",
        passenger_ids=paxes,
        authorization_id=auth,
    )
    assert booked["charged_cents"] == total
    assert balance(inv) == 0


def test_nearly_full_class_refuses_too_many_passengers() -> None:
    inv = make(3)
    grant(inv)
    app = inv.world.apps["flights"]
    target = None
    for day in range(3, 20):
        for s in app.state.services.values():
            if s.origin != "LIS" and s.origin != "BER":
                continue
            fid = f"{s.flight_number}-202606{day:02d}"
            out = inv.call("flights_get_flight", {"flight_id": fid})
            if out.is_error:
                continue  # not operating that weekday
            view = out.payload["flight"]
            econ = view["classes"][0]
            if 1 <= econ["seats_available"] <= 3:
                target = view
                break
        if target:
            break
    assert target is not None, "the schedule should contain nearly full flights"
    left = target["classes"][0]["seats_available"]
    paxes = [f"pax-00{i}" for i in range(left + 1)]
    e = err(
        inv,
        "flights_book_flight",
        flight_id=target["flight_id"],
        seat_class="economy",
        passenger_ids=paxes,
        authorization_id=pay(inv, price(target) * len(paxes)),
    )
    assert e["code"] == "conflict" and e["details"]["seats_available"] == left
    auth = pay(inv, price(target) * left)
    ok(
        inv,
        "flights_book_flight",
        flight_id=target["flight_id"],
        seat_class="economy",
        passenger_ids=paxes[:left],
        authorization_id=auth,
    )
    assert seats(inv, target["flight_id"]) == 0
    assert not ok(inv, "flights_get_seat_availability", flight_id=target["flight_id"])["fits"]["economy"]


def test_cancellation_refund_follows_the_clock() -> None:
    inv = make(6)
    grant(inv)
    flight = roomy_flight(inv, "2026-06-14", seats=3)
    fid, fare, dep = flight["flight_id"], price(flight), flight["departure_at"]
    ids = []
    for pax in ("pax-000", "pax-001", "pax-002"):
        b = ok(
            inv,
            "flights_book_flight",
            flight_id=fid,
            seat_class="economy",
            passenger_ids=[pax],
            authorization_id=pay(inv, fare),
        )["booking"]
        ids.append(b["booking_id"])
    after_booking = seats(inv, fid)

    # More than 72 h before departure: everything back, seat released.
    quote = ok(inv, "flights_quote_cancellation", booking_id=ids[0])
    assert quote["refund_percent"] == 100 and quote["refund_cents"] == fare
    w = balance(inv)
    c = ok(inv, "flights_cancel_booking", booking_id=ids[0])
    assert (c["refund_percent"], c["refund_cents"]) == (100, fare)
    assert balance(inv) == w + fare
    assert seats(inv, fid) == after_booking + 1

    # 48 h before departure: half.
    advance_to(inv, dep - 48 * 3600)
    assert ok(inv, "flights_quote_cancellation", booking_id=ids[1])["refund_percent"] == 50
    w = balance(inv)
    c = ok(inv, "flights_cancel_booking", booking_id=ids[1])
    assert (c["refund_percent"], c["refund_cents"]) == (50, fare // 2)
    assert balance(inv) == w + fare // 2

    # After departure: nothing.
    advance_to(inv, dep + 3600)
    w = balance(inv)
    c = ok(inv, "flights_cancel_booking", booking_id=ids[2])
    assert (c["refund_percent"], c["refund_cents"]) == (0, 0)
    assert balance(inv) == w
    assert c["booking"]["status"] == "cancelled"
    assert err(inv, "flights_cancel_booking", booking_id=ids[2])["code"] == "conflict"
    assert [b["refunded_cents"] for b in ok(inv, "flights_list_bookings", status="cancelled")["bookings"]] == [
        fare,
        fare // 2,
        0,
    ]


def test_change_booking_pays_or_refunds_the_difference() -> None:
    inv = make(9)
    grant(inv)
    first = roomy_flight(inv, "2026-06-11", seats=2)
    origin, dest = first["origin"], first["destination"]
    candidates = []
    for d in range(12, 20):
        candidates += ok(
            inv,
            "flights_search_flights",
            origin=origin,
            destination=dest,
            date=f"2026-06-{d:02d}",
            seat_class="economy",
            passengers=2,
        )["flights"]
    dearer = next(f for f in candidates if price(f) > price(first))
    cheaper = next(f for f in candidates if price(f) < price(dearer))
    b = ok(
        inv,
        "flights_book_flight",
        flight_id=first["flight_id"],
        seat_class="economy",
        passenger_ids=["pax-000", "pax-001"],
        authorization_id=pay(inv, 2 * price(first)),
    )["booking"]
    first_seats, dearer_seats = seats(inv, first["flight_id"]), seats(inv, dearer["flight_id"])

    diff = 2 * (price(dearer) - price(first))
    need = err(inv, "flights_change_booking", booking_id=b["booking_id"], new_flight_id=dearer["flight_id"])
    assert need["code"] == "precondition_failed" and need["details"]["amount_due_cents"] == diff
    auth = pay(inv, diff)
    w = balance(inv)
    changed = ok(
        inv,
        "flights_change_booking",
        booking_id=b["booking_id"],
        new_flight_id=dearer["flight_id"],
        authorization_id=auth,
    )
    assert changed["charged_cents"] == diff and balance(inv) == w - diff
    assert changed["booking"]["flight_id"] == dearer["flight_id"]
    assert changed["booking"]["total_paid_cents"] == 2 * price(dearer)
    assert seats(inv, first["flight_id"]) == first_seats + 2
    assert seats(inv, dearer["flight_id"]) == dearer_seats - 2

    w = balance(inv)
    back = ok(inv, "flights_change_booking", booking_id=b["booking_id"], new_flight_id=cheaper["flight_id"])
    refund = 2 * (price(dearer) - price(cheaper))
    assert back["charged_cents"] == -refund and balance(inv) == w + refund
    assert back["booking"]["total_paid_cents"] == 2 * price(cheaper) and back["booking"]["changes"] == 2

    other_route = next(
        d["destination"]
        for d in ok(inv, "flights_list_destinations", origin=origin)["destinations"]
        if AIRPORT_INFO[d["destination"]][1] != AIRPORT_INFO[dest][1]
    )
    wrong = ok(inv, "flights_search_flights", origin=origin, destination=other_route, date="2026-06-20")["flights"][0]
    assert (
        err(inv, "flights_change_booking", booking_id=b["booking_id"], new_flight_id=wrong["flight_id"])["code"]
        == "invalid_argument"
    )


def test_check_in_window_and_baggage() -> None:
    inv = make(12)
    grant(inv)
    flight = roomy_flight(inv, "2026-06-05", seats=2, seat_class="premium")
    fid, fare = flight["flight_id"], price(flight, "premium")
    b = ok(
        inv,
        "flights_book_flight",
        flight_id=fid,
        seat_class="premium",
        passenger_ids=["pax-000", "pax-003"],
        authorization_id=pay(inv, 2 * fare),
    )["booking"]
    bags = ok(inv, "flights_add_baggage", booking_id=b["booking_id"], bags=2, authorization_id=pay(inv, 7_000))
    assert bags["charged_cents"] == 7_000
    assert bags["booking"]["extra_bags"] == 2 and bags["booking"]["total_paid_cents"] == 2 * fare + 7_000
    assert (
        err(inv, "flights_add_baggage", booking_id=b["booking_id"], bags=5, authorization_id=pay(inv, 17_500))["field"]
        == "bags"
    )
    assert err(inv, "flights_get_boarding_pass", booking_id=b["booking_id"])["code"] == "precondition_failed"

    early = err(inv, "flights_check_in", booking_id=b["booking_id"])
    assert early["code"] == "precondition_failed"
    wait = early["details"]["wait_seconds"]
    assert wait == flight["departure_at"] - 24 * 3600 - now(inv)
    advance_to(inv, now(inv) + wait)
    checked = ok(inv, "flights_check_in", booking_id=b["booking_id"])["booking"]
    assert checked["checked_in"] is True
    seats_given = [p["seat"] for p in checked["passengers"]]
    assert all(seats_given) and len(set(seats_given)) == 2
    passes = ok(inv, "flights_get_boarding_pass", booking_id=b["booking_id"])["boarding_passes"]
    assert [p["seat"] for p in passes] == seats_given and passes[0]["seat_class"] == "premium"

    # Within 24 h the cancellation refund is half of fares + bags.
    q = ok(inv, "flights_quote_cancellation", booking_id=b["booking_id"])
    assert q["refund_cents"] == (2 * fare + 7_000) // 2
    advance_to(inv, flight["departure_at"] - 30 * 60)
    assert err(inv, "flights_check_in", booking_id=b["booking_id"])["code"] == "conflict"


# -- determinism and persistence --------------------------------------------------------------------
def _script(inv: ToolInvoker) -> None:
    grant(inv)
    flight = roomy_flight(inv, "2026-06-09", seats=2)
    pax = ok(inv, "flights_add_passenger", name="Ola Nordmann", date_of_birth="1990-01-01")["passenger"]["passenger_id"]
    b = ok(
        inv,
        "flights_book_flight",
        flight_id=flight["flight_id"],
        seat_class="economy",
        passenger_ids=["pax-000", pax],
        authorization_id=pay(inv, 2 * price(flight)),
    )["booking"]
    ok(inv, "flights_add_baggage", booking_id=b["booking_id"], bags=1, authorization_id=pay(inv, 3_500))
    ok(inv, "system_wait", seconds=86_400)


def test_same_seed_same_calls_same_hash_and_snapshot_round_trip() -> None:
    a, b = make(21), make(21)
    _script(a)
    _script(b)
    assert a.world.state_hash() == b.world.state_hash()
    assert [c.result for c in a.calls] == [c.result for c in b.calls]
    restored = World.restore(a.world.snapshot())
    assert restored.state_hash() == a.world.state_hash()
    ri = ToolInvoker(restored, "none")
    assert ok(ri, "flights_list_bookings") == ok(a, "flights_list_bookings")
    bid = ok(ri, "flights_list_bookings")["bookings"][0]["booking_id"]
    ok(ri, "flights_cancel_booking", booking_id=bid)
    ok(a, "flights_cancel_booking", booking_id=bid)
    assert restored.state_hash() == a.world.state_hash()
    assert make(22).world.state_hash() != make(21).world.state_hash()


def test_reads_do_not_change_state() -> None:
    inv = make(5)
    before = inv.world.state_hash()
    for tool, args in [
        ("flights_list_airports", {}),
        ("flights_list_destinations", {"origin": "Oslo"}),
        ("flights_search_flights_by_city", {"origin_city": "Oslo", "destination_city": "Berlin", "date": "2026-06-03"}),
        ("flights_list_passengers", {}),
        ("flights_list_bookings", {}),
        ("flights_get_fare_rules", {}),
    ]:
        inv.call(tool, args)
    assert inv.world.state_hash() == before


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_city_of_the_people_directory_is_served(seed: int) -> None:
    from mcpgym.kernel.people import CITIES

    inv = make(seed)
    for city in CITIES:
        dests = ok(inv, "flights_list_destinations", origin=city)["destinations"]
        assert len({d["destination_city"] for d in dests}) >= 3
