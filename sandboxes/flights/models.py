"""State and output models of the ``flights`` app (money in cents, times in virtual seconds)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from mcpgym.kernel.app import AppState
from mcpgym.kernel.volatile import VOLATILE, VOLATILE_KEYS

SeatClass = Literal["economy", "premium", "business"]
FlightStatus = Literal["scheduled", "departed", "arrived"]


# -- state -------------------------------------------------------------------------------
class FlightService(BaseModel):
    """A scheduled daily service (one flight number) of the seeded network.

    Attributes:
        flight_number: e.g. AU123.
        airline: airline code (AU...).
        origin, destination: airport codes.
        departure_minute: departure, minutes after 00:00 UTC.
        duration_minutes: block time.
        aircraft: aircraft type (decides seats per class).
        operating_days: weekdays it flies, 0 = Monday.
        base_fare_cents: base economy fare, cents.
    """

    flight_number: str
    airline: str
    origin: str
    destination: str
    departure_minute: int
    duration_minutes: int
    aircraft: str
    operating_days: list[int]
    base_fare_cents: int


class Passenger(BaseModel):
    """A saved passenger profile.

    Attributes:
        passenger_id: pax-000 is the user; seeded ones are pax-NNN, added ones generated.
        name: full name as on the travel document.
        email: contact email ('' when unknown).
        date_of_birth: ISO date.
        document_number: passport or ID card number.
        person_id: the shared-directory person (p-NNN), when linked.
        is_account_holder: true only for the user.
    """

    passenger_id: Annotated[str, VOLATILE]
    name: str
    email: str = ""
    date_of_birth: str
    document_number: str = ""
    person_id: str | None = None
    is_account_holder: bool = False


class BookedPassenger(BaseModel):
    """A passenger on a booking, with their seat once checked in."""

    passenger_id: Annotated[str, VOLATILE]
    name: str
    seat: Annotated[str | None, VOLATILE] = None


class Booking(BaseModel):
    """A flight booking.

    Attributes:
        booking_id: generated id (bk-...).
        record_locator: 6-letter reference shown to the traveller.
        flight_id, flight_number, origin, destination: the booked dated flight.
        departure_at: scheduled departure, virtual seconds.
        seat_class: economy | premium | business.
        passengers: who flies.
        fare_per_passenger_cents, fare_total_cents: fare paid for the current flight.
        extra_bags: checked bags bought on top of the class allowance (whole booking).
        baggage_cents: paid for those bags.
        total_paid_cents: net amount paid (fares + bags, after change differences).
        refunded_cents: refunded at cancellation.
        status: confirmed | cancelled.
        checked_in: whether every passenger is checked in.
        changes: how many times the flight was changed.
    """

    booking_id: Annotated[str, VOLATILE]
    record_locator: Annotated[str, VOLATILE]
    flight_id: str
    flight_number: str
    origin: str
    destination: str
    departure_at: int
    seat_class: SeatClass
    passengers: list[BookedPassenger]
    fare_per_passenger_cents: int
    fare_total_cents: int
    extra_bags: int = 0
    baggage_cents: int = 0
    total_paid_cents: int
    refunded_cents: int = 0
    status: Literal["confirmed", "cancelled"] = "confirmed"
    checked_in: bool = False
    changes: int = 0
    created_at: Annotated[int, VOLATILE] = 0
    updated_at: Annotated[int, VOLATILE] = 0


class FlightsState(AppState):
    """State of the flights app.

    Attributes:
        services: flight number -> daily service (seeded network).
        seats_booked: "<flight_id>:<seat_class>" -> seats held by this app's bookings.
        passengers: saved passengers by id.
        bookings: bookings by id.
    """

    services: dict[str, FlightService]
    seats_booked: dict[str, int] = Field(default_factory=dict)
    passengers: Annotated[dict[str, Passenger], VOLATILE_KEYS] = Field(default_factory=dict)
    bookings: Annotated[dict[str, Booking], VOLATILE_KEYS] = Field(default_factory=dict)


# -- outputs -----------------------------------------------------------------------------
class Airport(BaseModel):
    """An airport: IATA-like code, name, city, country."""

    code: str
    name: str
    city: str
    country: str


class AirportList(BaseModel):
    """Airports."""

    airports: list[Airport]


class Destination(BaseModel):
    """A destination served from an airport, with the flight numbers that fly there."""

    origin: str
    destination: str
    destination_city: str
    flight_numbers: list[str]
    duration_minutes: int


class DestinationList(BaseModel):
    """Destinations served non-stop."""

    destinations: list[Destination]


class SeatClassView(BaseModel):
    """One seat class of a dated flight: fare per passenger (cents) and free seats."""

    seat_class: SeatClass
    price_cents: int
    seats_available: int
    capacity: int


class FlightView(BaseModel):
    """A dated flight.

    departure_at/arrival_at are virtual seconds (UTC); status is scheduled,
    departed or arrived; bookable is false within 1 hour of departure.
    """

    flight_id: str
    flight_number: str
    airline: str
    origin: str
    origin_city: str
    destination: str
    destination_city: str
    departure: str
    arrival: str
    departure_at: int
    arrival_at: int
    duration_minutes: int
    aircraft: str
    status: FlightStatus
    bookable: bool
    classes: list[SeatClassView]


class FlightList(BaseModel):
    """Flights, by departure time."""

    flights: list[FlightView]
    count: int


class FlightResult(BaseModel):
    """One flight."""

    flight: FlightView


class CheapestView(BaseModel):
    """The cheapest flight found, its class and fare per passenger (cents), and how many flights were compared."""

    flight: FlightView
    seat_class: SeatClass
    price_cents: int
    total_cents: int
    flights_compared: int


class SeatAvailability(BaseModel):
    """Free seats per class of one flight, and whether passengers seats fit in each class."""

    flight_id: str
    passengers: int
    classes: list[SeatClassView]
    fits: dict[str, bool]


class FareRules(BaseModel):
    """Fare rules: refunds, changes, baggage and check-in (cents, hours)."""

    full_refund_hours_before: int
    partial_refund_percent: int
    refund_rules: list[str]
    change_rule: str
    bag_price_cents: int
    included_bags: dict[str, int]
    max_extra_bags_per_passenger: int
    checkin_opens_hours_before: int
    checkin_closes_minutes_before: int
    booking_closes_minutes_before: int


class PassengerList(BaseModel):
    """Saved passengers."""

    passengers: list[Passenger]


class PassengerView(BaseModel):
    """One saved passenger."""

    passenger: Passenger


class RemovedView(BaseModel):
    """Result of a removal: the id removed and how many remain."""

    removed_id: str
    remaining: int


class BookingView(BaseModel):
    """One booking, plus what this call charged (negative: refunded), in cents."""

    booking: Booking
    charged_cents: int = 0


class BookingList(BaseModel):
    """Bookings, by departure."""

    bookings: list[Booking]


class CancellationQuote(BaseModel):
    """What cancelling now would refund: percent of the amount paid, in cents."""

    booking_id: str
    hours_until_departure: float
    refund_percent: int
    refund_cents: int
    rule: str


class CancellationView(BaseModel):
    """A cancelled booking and the refund credited to the wallet (cents)."""

    booking: Booking
    refund_percent: int
    refund_cents: int


class BoardingPass(BaseModel):
    """A boarding pass of one passenger."""

    passenger: str
    flight_number: str
    flight_id: str
    origin: str
    destination: str
    seat: str
    seat_class: SeatClass
    gate: str
    boarding_time: str
    departure: str


class BoardingPassList(BaseModel):
    """Boarding passes of a checked-in booking."""

    booking_id: str
    boarding_passes: list[BoardingPass]
