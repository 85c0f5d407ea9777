"""Shared machinery of the ``flights`` app: dated flights, seat counts, argument parsing.

:class:`FlightsCore` is the base the tool mixins (:mod:`.search`, :mod:`.booking`) build on;
:class:`mcpgym.sandboxes.flights.app.FlightsApp` combines them and registers the app.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING

from mcpgym.kernel.app import App
from mcpgym.kernel.clock import iso
from mcpgym.kernel.errors import ErrorCode, ToolError
from mcpgym.sandboxes.flights.models import (
    FlightService,
    FlightsState,
    FlightStatus,
    FlightView,
    SeatClass,
    SeatClassView,
)
from mcpgym.sandboxes.flights.network import (
    AIRLINES,
    AIRPORT_INFO,
    CITY_INFO,
    SCHEDULE_DAYS,
    SCHEDULE_START,
    SEAT_CLASSES,
    ClassInventory,
    airports_of,
    class_inventory,
    day_start,
    flight_id_of,
    in_schedule,
    split_flight_id,
)

if TYPE_CHECKING:
    from mcpgym.sandboxes.flights.models import Booking

BOOKING_CUTOFF = 60 * 60
"""Booking and changes close this many virtual seconds before departure."""
CHECKIN_OPENS = 24 * 3600
"""Online check-in opens this many virtual seconds before departure."""
CHECKIN_CLOSES = 45 * 60
"""Online check-in closes this many virtual seconds before departure."""
FULL_REFUND_BEFORE = 72 * 3600
"""Cancelling more than this many virtual seconds before departure refunds everything."""
PARTIAL_REFUND_PERCENT = 50
"""Percent refunded when cancelling within 72 h but before departure."""
BAG_PRICE = 3_500
"""Price of one extra checked bag, cents."""
MAX_EXTRA_BAGS_PER_PASSENGER = 3
INCLUDED_BAGS: dict[str, int] = {"economy": 0, "premium": 1, "business": 2}
"""Checked bags included per passenger, by class."""


@dataclass(frozen=True)
class DatedFlight:
    """A flight on one date, derived from its :class:`FlightService` and the seed."""

    flight_id: str
    service: FlightService
    day: date
    departure_at: int
    arrival_at: int
    inventory: dict[str, ClassInventory]


class FlightsCore(App):
    """Base of the flights app: state access and helpers shared by every tool."""

    name = "flights"
    title = "Flights"
    State = FlightsState
    state: FlightsState

    # -- dated flights ---------------------------------------------------------------------
    def _dated(self, service: FlightService, day: date) -> DatedFlight:
        """Build the dated flight of ``service`` on ``day`` (the caller checks it operates)."""
        fid = flight_id_of(service.flight_number, day)
        dep = day_start(day) + service.departure_minute * 60
        inv = class_inventory(self.world.seed, fid, service.aircraft, service.base_fare_cents, day.weekday())
        return DatedFlight(fid, service, day, dep, dep + service.duration_minutes * 60, inv)

    def _flight(self, flight_id: str, field: str = "flight_id") -> DatedFlight:
        """Return the dated flight ``flight_id`` (``AU123-20260605``).

        Raises:
            ToolError: ``not_found`` when malformed, unknown, outside the schedule or not
                operating that day.
        """
        parts = split_flight_id(flight_id)
        service = self.state.services.get(parts[0]) if parts else None
        if (
            parts is None
            or service is None
            or not in_schedule(parts[1])
            or parts[1].weekday() not in service.operating_days
        ):
            raise ToolError(
                ErrorCode.NOT_FOUND,
                f"no flight {flight_id[:40]!r}; flight ids look like AU123-20260605 (use flights_search_flights)",
                field=field,
            )
        return self._dated(service, parts[1])

    def _available(self, flight: DatedFlight, seat_class: str) -> int:
        """Free seats of ``seat_class`` on ``flight``, after this app's bookings."""
        taken = self.state.seats_booked.get(f"{flight.flight_id}:{seat_class}", 0)
        return max(0, flight.inventory[seat_class].base_available - taken)

    def _take_seats(self, flight_id: str, seat_class: str, count: int) -> None:
        """Hold ``count`` seats (negative: release them); zero entries are dropped."""
        key = f"{flight_id}:{seat_class}"
        value = self.state.seats_booked.get(key, 0) + count
        if value:
            self.state.seats_booked[key] = value
        else:
            self.state.seats_booked.pop(key, None)

    def _view(self, flight: DatedFlight) -> FlightView:
        """The :class:`FlightView` of ``flight`` at the current virtual time."""
        s = flight.service
        now = self.now
        status: FlightStatus = (
            "scheduled" if now < flight.departure_at else ("departed" if now < flight.arrival_at else "arrived")
        )
        return FlightView(
            flight_id=flight.flight_id,
            flight_number=s.flight_number,
            airline=AIRLINES[s.airline],
            origin=s.origin,
            origin_city=AIRPORT_INFO[s.origin][1],
            destination=s.destination,
            destination_city=AIRPORT_INFO[s.destination][1],
            departure=iso(flight.departure_at),
            arrival=iso(flight.arrival_at),
            departure_at=flight.departure_at,
            arrival_at=flight.arrival_at,
            duration_minutes=s.duration_minutes,
            aircraft=s.aircraft,
            status=status,
            bookable=flight.departure_at - now > BOOKING_CUTOFF,
            classes=[
                SeatClassView(
                    seat_class=c,
                    price_cents=flight.inventory[c].price_cents,
                    seats_available=self._available(flight, c),
                    capacity=flight.inventory[c].capacity,
                )
                for c in SEAT_CLASSES
            ],
        )

    def _flights_between(self, origins: list[str], destinations: list[str], day: date) -> list[DatedFlight]:
        """Dated flights from any of ``origins`` to any of ``destinations`` on ``day``, by departure."""
        found = [
            self._dated(s, day)
            for s in self.state.services.values()
            if s.origin in origins and s.destination in destinations and day.weekday() in s.operating_days
        ]
        found.sort(key=lambda f: (f.departure_at, f.flight_id))
        return found

    DERIVED_DAYS = 7
    """Days of schedule, from the current virtual day, that :meth:`derived_values` offers."""

    def derived_values(self) -> dict[str, list[str]]:
        """Ids and names the read tools show but the state does not hold (see
        :meth:`mcpgym.kernel.app.App.derived_values`): ``date`` (the next :data:`DERIVED_DAYS`
        schedule days from today), ``flight_id`` / ``new_flight_id`` (per service, by flight
        number, its first dated flight in those days still bookable now), and the served
        cities as ``city``, ``origin_city`` and ``destination_city``."""
        today = datetime.fromtimestamp(self.now, tz=UTC).date()
        days = [d for d in (today + timedelta(days=i) for i in range(self.DERIVED_DAYS)) if in_schedule(d)]
        flight_ids: list[str] = []
        for number in sorted(self.state.services):
            service = self.state.services[number]
            for day in days:
                if day.weekday() in service.operating_days:
                    flight = self._dated(service, day)
                    if flight.departure_at - self.now > BOOKING_CUTOFF:
                        flight_ids.append(flight.flight_id)
                        break
        cities = sorted(CITY_INFO)
        return {
            "date": [d.isoformat() for d in days],
            "flight_id": flight_ids,
            "new_flight_id": flight_ids,
            "city": cities,
            "origin_city": cities,
            "destination_city": cities,
        }

    # -- arguments -------------------------------------------------------------------------
    @staticmethod
    def _airport(code: str, field: str) -> str:
        """Normalise an airport code.

        Raises:
            ToolError: ``not_found`` for an unknown code (the message lists city search).
        """
        value = code.strip().upper()
        if value not in AIRPORT_INFO:
            raise ToolError(
                ErrorCode.NOT_FOUND, f"unknown airport code {code[:20]!r}; see flights_list_airports", field=field
            )
        return value

    @staticmethod
    def _city(name: str, field: str) -> str:
        """Normalise a city name (case-insensitive).

        Raises:
            ToolError: ``not_found`` naming the served cities.
        """
        wanted = name.strip().casefold()
        for city in CITY_INFO:
            if city.casefold() == wanted:
                return city
        raise ToolError(
            ErrorCode.NOT_FOUND,
            f"no airport in {name[:40]!r}; served cities: {', '.join(sorted(CITY_INFO))}",
            field=field,
        )

    @classmethod
    def _place(cls, text: str, field: str) -> list[str]:
        """Airport codes for an airport code or a city name."""
        value = text.strip()
        if value.upper() in AIRPORT_INFO:
            return [value.upper()]
        return airports_of(cls._city(value, field))

    @staticmethod
    def _date(text: str, field: str) -> date:
        """Parse an ISO date inside the schedule.

        Raises:
            ToolError: ``invalid_argument`` when malformed or outside the 30-day schedule.
        """
        value = text.strip()
        try:
            day = (
                date.fromisoformat(value)
                if len(value) == 10
                else datetime.fromisoformat(value.replace("Z", "+00:00")).date()
            )
        except ValueError:
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT, f"{field} must be an ISO date YYYY-MM-DD, got {text[:40]!r}", field=field
            ) from None
        if not in_schedule(day):
            last = SCHEDULE_START + timedelta(days=SCHEDULE_DAYS - 1)
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT,
                f"flights are scheduled from {SCHEDULE_START} to {last}; {day} is outside",
                field=field,
            )
        return day

    @staticmethod
    def _seat_class(text: str, field: str = "seat_class") -> SeatClass:
        """Normalise a seat class name.

        Raises:
            ToolError: ``invalid_argument`` unless economy, premium or business.
        """
        value = text.strip().lower()
        for seat_class in SEAT_CLASSES:
            if value == seat_class:
                return seat_class
        raise ToolError(ErrorCode.INVALID_ARGUMENT, f"seat_class must be one of {', '.join(SEAT_CLASSES)}", field=field)

    # -- bookings ----------------------------------------------------------------------------
    def _booking(self, booking_id: str) -> Booking:
        """Return booking ``booking_id`` (also found by its record locator).

        Raises:
            ToolError: ``not_found``.
        """
        b = self.state.bookings.get(booking_id.strip())
        if b is None:
            wanted = booking_id.strip().upper()
            b = next((x for x in self.state.bookings.values() if x.record_locator == wanted), None)
        if b is None:
            raise ToolError(
                ErrorCode.NOT_FOUND, f"no booking {booking_id[:40]!r}; see flights_list_bookings", field="booking_id"
            )
        return b

    @staticmethod
    def _refund_percent(departure_at: int, now: int) -> int:
        """Refund percent of a cancellation at ``now``: 100 more than 72 h before departure,
        50 from 72 h before until departure, 0 afterwards."""
        if now >= departure_at:
            return 0
        if departure_at - now > FULL_REFUND_BEFORE:
            return 100
        return PARTIAL_REFUND_PERCENT
