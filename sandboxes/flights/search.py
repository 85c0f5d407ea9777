"""Read tools of the ``flights`` app: airports, routes, flight search, details, fare rules."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

from pydantic import Field

from mcpgym.kernel.errors import ErrorCode, ToolError
from mcpgym.kernel.spec import tool
from mcpgym.sandboxes.flights.core import (
    BAG_PRICE,
    BOOKING_CUTOFF,
    CHECKIN_CLOSES,
    CHECKIN_OPENS,
    FULL_REFUND_BEFORE,
    INCLUDED_BAGS,
    MAX_EXTRA_BAGS_PER_PASSENGER,
    PARTIAL_REFUND_PERCENT,
    FlightsCore,
)
from mcpgym.sandboxes.flights.models import (
    Airport,
    AirportList,
    CheapestView,
    Destination,
    DestinationList,
    FareRules,
    FlightList,
    FlightResult,
    SeatAvailability,
    SeatClass,
)
from mcpgym.sandboxes.flights.network import AIRPORT_INFO, CITY_INFO, airports_of

Place = Annotated[str, Field(max_length=60, description="IATA airport code (e.g. LIS) or city name (e.g. Lisbon)")]
Code = Annotated[str, Field(max_length=10, description="IATA airport code, e.g. LIS")]
City = Annotated[str, Field(max_length=60, description="city name, e.g. Lisbon")]
Day = Annotated[str, Field(max_length=40, description="departure date, ISO YYYY-MM-DD (UTC)")]
Pax = Annotated[int, Field(ge=1, le=9, description="number of passengers needing seats")]
FlightId = Annotated[str, Field(max_length=60, description="dated flight id, e.g. AU123-20260605")]


class SearchTools(FlightsCore):
    """Airports, routes, flight search and details (all read-only)."""

    @tool("read", ["flights.airport"])
    def flights_list_airports(
        self, city: Annotated[str | None, Field(max_length=60, description="only airports of this city")] = None
    ) -> AirportList:
        """List the airports served (code, name, city, country), optionally of one city."""
        codes = sorted(AIRPORT_INFO)
        if city is not None:
            wanted = self._city(city, "city")
            codes = [c for c in codes if AIRPORT_INFO[c][1] == wanted]
        return AirportList(
            airports=[
                Airport(
                    code=c, name=AIRPORT_INFO[c][0], city=AIRPORT_INFO[c][1], country=CITY_INFO[AIRPORT_INFO[c][1]][0]
                )
                for c in codes
            ]
        )

    @tool("read", ["flights.route"])
    def flights_list_destinations(self, origin: Place) -> DestinationList:
        """List the non-stop destinations from an airport or city, with the flight numbers serving each."""
        origins = self._place(origin, "origin")
        routes: dict[tuple[str, str], Destination] = {}
        for s in sorted(self.state.services.values(), key=lambda s: s.flight_number):
            if s.origin not in origins:
                continue
            d = routes.setdefault(
                (s.origin, s.destination),
                Destination(
                    origin=s.origin,
                    destination=s.destination,
                    destination_city=AIRPORT_INFO[s.destination][1],
                    flight_numbers=[],
                    duration_minutes=s.duration_minutes,
                ),
            )
            d.flight_numbers.append(s.flight_number)
        return DestinationList(destinations=[routes[k] for k in sorted(routes)])

    def _search(
        self, origins: list[str], destinations: list[str], date: str, seat_class: str | None, passengers: int
    ) -> FlightList:
        """Shared body of the two date searches (airport code lists in, :class:`FlightList` out)."""
        day = self._date(date, "date")
        if set(origins) & set(destinations) or {AIRPORT_INFO[o][1] for o in origins} & {
            AIRPORT_INFO[d][1] for d in destinations
        }:
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT, "origin and destination must be different cities", field="destination"
            )
        cls = self._seat_class(seat_class) if seat_class is not None else None
        flights = self._flights_between(origins, destinations, day)
        if cls is not None:
            flights = [f for f in flights if self._available(f, cls) >= passengers]
        views = [self._view(f) for f in flights]
        return FlightList(flights=views, count=len(views))

    @tool(
        "read",
        ["flights.flight", "flights.seat"],
        alternatives=["flights_search_flights_by_city", "flights_find_cheapest_flight"],
    )
    def flights_search_flights(
        self,
        origin: Code,
        destination: Code,
        date: Day,
        seat_class: Annotated[
            SeatClass | None, Field(description="only flights with enough free seats in this class")
        ] = None,
        passengers: Pax = 1,
    ) -> FlightList:
        """Search flights between two airports (IATA codes) on a date (ISO YYYY-MM-DD, UTC).

        Returns every dated flight with its departure/arrival (ISO and virtual seconds), fares
        per passenger in cents and free seats per class. With seat_class, only flights
        with at least passengers free seats in that class.
        """
        return self._search(
            [self._airport(origin, "origin")], [self._airport(destination, "destination")], date, seat_class, passengers
        )

    @tool(
        "read",
        ["flights.flight", "flights.seat"],
        alternatives=["flights_search_flights", "flights_find_cheapest_flight"],
    )
    def flights_search_flights_by_city(
        self,
        origin_city: City,
        destination_city: City,
        date: Day,
        seat_class: Annotated[
            SeatClass | None, Field(description="only flights with enough free seats in this class")
        ] = None,
        passengers: Pax = 1,
    ) -> FlightList:
        """Search flights between two cities (every airport of each city) on a date (ISO YYYY-MM-DD, UTC).

        Same results as flights_search_flights, over all airports of the cities (Paris: CDG and
        ORY; London: LHR and LGW). Fares are per passenger in cents.
        """
        return self._search(
            airports_of(self._city(origin_city, "origin_city")),
            airports_of(self._city(destination_city, "destination_city")),
            date,
            seat_class,
            passengers,
        )

    @tool(
        "read",
        ["flights.flight", "flights.seat"],
        alternatives=["flights_search_flights", "flights_search_flights_by_city"],
    )
    def flights_find_cheapest_flight(
        self,
        origin: Place,
        destination: Place,
        date_from: Day,
        date_to: Annotated[
            str | None,
            Field(
                max_length=40,
                description="last departure date, ISO YYYY-MM-DD (default: date_from; at most 14 days after it)",
            ),
        ] = None,
        seat_class: Annotated[SeatClass, Field(description="seat class to price")] = "economy",
        passengers: Pax = 1,
    ) -> CheapestView:
        """Find the cheapest bookable flight between two airports or cities over a date range.

        Considers flights departing from date_from to date_to (ISO dates, UTC, at most 14
        days) that are still bookable and have passengers free seats in seat_class.
        Ties go to the earlier departure. Prices in cents.

        Errors: not_found when no flight qualifies.
        """
        origins = self._place(origin, "origin")
        destinations = self._place(destination, "destination")
        if {AIRPORT_INFO[o][1] for o in origins} & {AIRPORT_INFO[d][1] for d in destinations}:
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT, "origin and destination must be different cities", field="destination"
            )
        start = self._date(date_from, "date_from")
        end = self._date(date_to, "date_to") if date_to is not None else start
        if end < start or (end - start).days > 14:
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT,
                "date_to must be on or after date_from and at most 14 days later",
                field="date_to",
            )
        cls = self._seat_class(seat_class)
        best = None
        compared = 0
        day = start
        while day <= end:
            for f in self._flights_between(origins, destinations, day):
                if f.departure_at - self.now <= BOOKING_CUTOFF or self._available(f, cls) < passengers:
                    continue
                compared += 1
                key = (f.inventory[cls].price_cents, f.departure_at, f.flight_id)
                if best is None or key < best[0]:
                    best = (key, f)
            day += timedelta(days=1)
        if best is None:
            raise ToolError(
                ErrorCode.NOT_FOUND,
                f"no bookable flight with {passengers} free {cls} seat(s) in that range",
                field="date_from",
            )
        price = best[1].inventory[cls].price_cents
        return CheapestView(
            flight=self._view(best[1]),
            seat_class=cls,
            price_cents=price,
            total_cents=price * passengers,
            flights_compared=compared,
        )

    @tool("read", ["flights.flight", "flights.seat"])
    def flights_get_flight(self, flight_id: FlightId) -> FlightResult:
        """Return one dated flight (e.g. AU123-20260605): times, status, fares (cents) and free seats per class."""
        return FlightResult(flight=self._view(self._flight(flight_id)))

    @tool("read", ["flights.seat"])
    def flights_get_seat_availability(self, flight_id: FlightId, passengers: Pax = 1) -> SeatAvailability:
        """Return free seats per class of a flight and whether passengers seats fit in each class."""
        f = self._flight(flight_id)
        view = self._view(f)
        return SeatAvailability(
            flight_id=f.flight_id,
            passengers=passengers,
            classes=view.classes,
            fits={c.seat_class: c.seats_available >= passengers for c in view.classes},
        )

    @tool("read", ["flights.fare_rules"])
    def flights_get_fare_rules(self) -> FareRules:
        """Return the fare rules: refund percentages by time before departure, change rule,
        baggage price (cents) and allowance, check-in and booking windows."""
        return FareRules(
            full_refund_hours_before=FULL_REFUND_BEFORE // 3600,
            partial_refund_percent=PARTIAL_REFUND_PERCENT,
            refund_rules=[
                f"cancelled more than {FULL_REFUND_BEFORE // 3600} h before departure: 100% of the amount paid",
                f"cancelled within {FULL_REFUND_BEFORE // 3600} h but before departure: {PARTIAL_REFUND_PERCENT}%",
                "cancelled after departure: no refund",
            ],
            change_rule="a booking may move to another flight between the same cities until 1 h before departure; "
            "the fare difference is charged (needs a payment authorisation) or refunded",
            bag_price_cents=BAG_PRICE,
            included_bags=dict(INCLUDED_BAGS),
            max_extra_bags_per_passenger=MAX_EXTRA_BAGS_PER_PASSENGER,
            checkin_opens_hours_before=CHECKIN_OPENS // 3600,
            checkin_closes_minutes_before=CHECKIN_CLOSES // 60,
            booking_closes_minutes_before=BOOKING_CUTOFF // 60,
        )
