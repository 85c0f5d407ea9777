"""Booking tools of the ``flights`` app: book, list, change, cancel, check in, baggage and boarding
passes, paid through the system wallet with one-use payment authorisations."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from mcpgym.kernel.clock import iso
from mcpgym.kernel.errors import ErrorCode, ToolError
from mcpgym.kernel.rng import stable_hash
from mcpgym.kernel.spec import tool
from mcpgym.sandboxes.flights.core import (
    BAG_PRICE,
    BOOKING_CUTOFF,
    CHECKIN_CLOSES,
    CHECKIN_OPENS,
    MAX_EXTRA_BAGS_PER_PASSENGER,
)
from mcpgym.sandboxes.flights.models import (
    BoardingPass,
    BoardingPassList,
    BookedPassenger,
    Booking,
    BookingList,
    BookingView,
    CancellationQuote,
    CancellationView,
    SeatClass,
)
from mcpgym.sandboxes.flights.network import AIRPORT_INFO
from mcpgym.sandboxes.flights.passengers import PassengerTools

PRIVILEGE = "flights.booking"
PAY_REMEDIES = ("system_authorize_payment", "system_transfer_from_savings")
LOCATOR_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
SEAT_LAYOUT: dict[str, tuple[int, str]] = {"business": (1, "ACDF"), "premium": (5, "ABCDEF"), "economy": (10, "ABCDEF")}
"""Class -> (first row, seat letters of a row)."""

BookingId = Annotated[str, Field(max_length=60, description="booking id (bk-...) or 6-letter record locator")]
AuthId = Annotated[
    str, Field(max_length=60, description="one-use payment authorisation id from system_authorize_payment")
]


class BookingTools(PassengerTools):
    """Bookings (the passenger tools come from :class:`PassengerTools`)."""

    # -- payment helper --------------------------------------------------------------------
    def _charge(self, authorization_id: str | None, amount: int, memo: str, reference: str) -> None:
        """Charge ``amount`` cents through the system wallet.

        Raises:
            ToolError: ``precondition_failed`` when no authorisation is given, or the system
                app's errors (unknown/used/expired authorisation, over limit, balance).
        """
        if authorization_id is None or not authorization_id.strip():
            raise ToolError(
                ErrorCode.PRECONDITION_FAILED,
                f"this costs {amount} cents: obtain a payment authorisation with "
                "system_authorize_payment and pass its authorization_id",
                field="authorization_id",
                details={"amount_due_cents": amount},
            )
        self.other("system").charge(authorization_id.strip(), amount, memo, reference=reference)

    def _locator(self, booking_id: str) -> str:
        """The 6-character record locator of ``booking_id`` (stable hash)."""
        h = stable_hash("flights", "locator", booking_id)
        return "".join(LOCATOR_ALPHABET[(h >> (5 * i)) % 32] for i in range(6))

    # -- bookings -----------------------------------------------------------------------------
    @tool(
        "write",
        ["flights.booking", "flights.seat", "wallet.balance"],
        preconditions=["flights.seat", "flights.passenger", "wallet.balance", "system.payment_auth"],
        remedies={"permission_denied": ["system_request_privilege"], "precondition_failed": list(PAY_REMEDIES)},
        id_args=[],
    )
    def flights_book_flight(
        self,
        flight_id: Annotated[str, Field(max_length=60, description="dated flight id, e.g. AU123-20260605")],
        seat_class: Annotated[SeatClass, Field(description="economy | premium | business")],
        passenger_ids: Annotated[list[str], Field(min_length=1, max_length=9, description="saved passenger ids (1-9)")],
        authorization_id: AuthId,
    ) -> BookingView:
        """Book seats on a flight for saved passengers, paying fare x passengers (cents) from the wallet.

        Needs the privilege flights.booking (system_request_privilege) and a payment
        authorisation (system_authorize_payment) covering the total; booking closes 1 h before
        departure. Seats are held at once; the result shows the booking and the amount charged.
        """
        self.other("system").require_privilege(PRIVILEGE)
        flight = self._flight(flight_id)
        cls = self._seat_class(seat_class)
        if flight.departure_at - self.now <= BOOKING_CUTOFF:
            raise ToolError(
                ErrorCode.CONFLICT, f"booking for {flight.flight_id} closed 1 h before departure", field="flight_id"
            )
        if len(set(passenger_ids)) != len(passenger_ids):
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "passenger_ids must not repeat", field="passenger_ids")
        paxes = [self._passenger(pid, "passenger_ids") for pid in passenger_ids]
        for b in self.state.bookings.values():
            if b.status == "confirmed" and b.flight_id == flight.flight_id:
                clash = {x.passenger_id for x in b.passengers} & {p.passenger_id for p in paxes}
                if clash:
                    raise ToolError(
                        ErrorCode.CONFLICT,
                        f"passenger(s) {', '.join(sorted(clash))} already booked on this flight ({b.record_locator})",
                        field="passenger_ids",
                    )
        free = self._available(flight, cls)
        if free < len(paxes):
            raise ToolError(
                ErrorCode.CONFLICT,
                f"only {free} {cls} seat(s) left on {flight.flight_id}; {len(paxes)} needed",
                field="seat_class",
                details={"seats_available": free},
            )
        price = flight.inventory[cls].price_cents
        total = price * len(paxes)
        booking_id = self.new_id("bk")
        try:
            self._charge(authorization_id, total, f"flight {flight.flight_id} {cls} x{len(paxes)}", booking_id)
        except ToolError:
            self.state.id_counter -= 1  # a failed call leaves no trace
            raise
        s = flight.service
        booking = Booking(
            booking_id=booking_id,
            record_locator=self._locator(booking_id),
            flight_id=flight.flight_id,
            flight_number=s.flight_number,
            origin=s.origin,
            destination=s.destination,
            departure_at=flight.departure_at,
            seat_class=cls,
            passengers=[BookedPassenger(passenger_id=p.passenger_id, name=p.name) for p in paxes],
            fare_per_passenger_cents=price,
            fare_total_cents=total,
            total_paid_cents=total,
            created_at=self.now,
            updated_at=self.now,
        )
        self.state.bookings[booking_id] = booking
        self._take_seats(flight.flight_id, cls, len(paxes))
        return BookingView(booking=booking, charged_cents=total)

    @tool("read", ["flights.booking"])
    def flights_list_bookings(
        self,
        status: Annotated[
            Literal["confirmed", "cancelled"] | None, Field(description="only bookings with this status")
        ] = None,
        upcoming_only: Annotated[bool, Field(description="only flights that have not departed")] = False,
    ) -> BookingList:
        """List bookings (by departure), optionally only confirmed/cancelled or only upcoming ones."""
        items = [
            b
            for b in self.state.bookings.values()
            if (status is None or b.status == status) and (not upcoming_only or b.departure_at > self.now)
        ]
        items.sort(key=lambda b: (b.departure_at, b.created_at, b.booking_id))
        return BookingList(bookings=items)

    @tool("read", ["flights.booking"])
    def flights_get_booking(self, booking_id: BookingId) -> BookingView:
        """Return one booking: flight, class, passengers, amounts paid and refunded (cents), check-in and bags."""
        return BookingView(booking=self._booking(booking_id))

    def _active(self, booking_id: str) -> Booking:
        """Return a confirmed booking; ``conflict`` when it is cancelled."""
        b = self._booking(booking_id)
        if b.status != "confirmed":
            raise ToolError(ErrorCode.CONFLICT, f"booking {b.record_locator} is cancelled", field="booking_id")
        return b

    @tool(
        "write",
        ["flights.booking", "flights.seat", "wallet.balance"],
        preconditions=["flights.booking", "flights.seat", "wallet.balance", "system.payment_auth"],
        remedies={"permission_denied": ["system_request_privilege"], "precondition_failed": list(PAY_REMEDIES)},
        id_args=["booking_id"],
    )
    def flights_change_booking(
        self,
        booking_id: BookingId,
        new_flight_id: Annotated[
            str, Field(max_length=60, description="flight to move to (same cities), e.g. AU123-20260607")
        ],
        authorization_id: Annotated[
            str | None, Field(max_length=60, description="payment authorisation, needed when the new fare is higher")
        ] = None,
        seat_class: Annotated[SeatClass | None, Field(description="new seat class (default: keep)")] = None,
    ) -> BookingView:
        """Move a booking to another flight between the same cities, paying or refunding the fare difference (cents).

        Needs the privilege flights.booking. A dearer flight needs a payment authorisation for
        the difference; a cheaper one refunds it to the wallet. Check-in is reset; bags carry
        over. Possible until 1 h before the old and the new departure.
        """
        self.other("system").require_privilege(PRIVILEGE)
        b = self._active(booking_id)
        if b.departure_at - self.now <= BOOKING_CUTOFF:
            raise ToolError(
                ErrorCode.CONFLICT,
                f"booking {b.record_locator} can no longer be changed (departs within 1 h)",
                field="booking_id",
            )
        new = self._flight(new_flight_id, "new_flight_id")
        cls = self._seat_class(seat_class) if seat_class is not None else b.seat_class
        if new.flight_id == b.flight_id and cls == b.seat_class:
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT, "the booking is already on that flight and class", field="new_flight_id"
            )
        if (AIRPORT_INFO[new.service.origin][1], AIRPORT_INFO[new.service.destination][1]) != (
            AIRPORT_INFO[b.origin][1],
            AIRPORT_INFO[b.destination][1],
        ):
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT, "the new flight must fly between the same cities", field="new_flight_id"
            )
        if new.departure_at - self.now <= BOOKING_CUTOFF:
            raise ToolError(ErrorCode.CONFLICT, f"booking for {new.flight_id} closed", field="new_flight_id")
        n = len(b.passengers)
        free = self._available(new, cls)
        if free < n:
            raise ToolError(
                ErrorCode.CONFLICT,
                f"only {free} {cls} seat(s) left on {new.flight_id}; {n} needed",
                field="new_flight_id",
                details={"seats_available": free},
            )
        price = new.inventory[cls].price_cents
        diff = price * n - b.fare_total_cents
        memo = f"change {b.record_locator} to {new.flight_id} {cls}"
        if diff > 0:
            self._charge(authorization_id, diff, memo, b.booking_id)
        elif diff < 0:
            self.other("system").refund(-diff, memo, reference=b.booking_id)
        self._take_seats(b.flight_id, b.seat_class, -n)
        self._take_seats(new.flight_id, cls, n)
        s = new.service
        b.flight_id, b.flight_number, b.origin, b.destination = new.flight_id, s.flight_number, s.origin, s.destination
        b.departure_at, b.seat_class = new.departure_at, cls
        b.fare_per_passenger_cents, b.fare_total_cents = price, price * n
        b.total_paid_cents += diff
        b.checked_in = False
        for x in b.passengers:
            x.seat = None
        b.changes += 1
        b.updated_at = self.now
        return BookingView(booking=b, charged_cents=diff)

    @tool("read", ["flights.booking"])
    def flights_quote_cancellation(self, booking_id: BookingId) -> CancellationQuote:
        """Say what cancelling a booking now would refund (cents): 100% more than 72 h before
        departure, 50% within 72 h, nothing after departure."""
        b = self._active(booking_id)
        pct = self._refund_percent(b.departure_at, self.now)
        return CancellationQuote(
            booking_id=b.booking_id,
            hours_until_departure=round((b.departure_at - self.now) / 3600, 2),
            refund_percent=pct,
            refund_cents=b.total_paid_cents * pct // 100,
            rule=f"{pct}% of the {b.total_paid_cents} cents paid",
        )

    @tool(
        "write",
        ["flights.booking", "flights.seat", "wallet.balance"],
        preconditions=["flights.booking"],
        remedies={"permission_denied": ["system_request_privilege"]},
        id_args=["booking_id"],
        destructive=True,
    )
    def flights_cancel_booking(self, booking_id: BookingId) -> CancellationView:
        """Cancel a booking and refund to the wallet by the clock: 100% of the amount paid more
        than 72 h before departure, 50% within 72 h, nothing after departure. Needs the
        privilege flights.booking. Seats are released if the flight has not left."""
        self.other("system").require_privilege(PRIVILEGE)
        b = self._active(booking_id)
        pct = self._refund_percent(b.departure_at, self.now)
        refund = b.total_paid_cents * pct // 100
        if refund:
            self.other("system").refund(refund, f"refund {b.record_locator} ({pct}%)", reference=b.booking_id)
        if b.departure_at > self.now:
            self._take_seats(b.flight_id, b.seat_class, -len(b.passengers))
        b.status = "cancelled"
        b.refunded_cents = refund
        b.checked_in = False
        for x in b.passengers:
            x.seat = None
        b.updated_at = self.now
        return CancellationView(booking=b, refund_percent=pct, refund_cents=refund)

    def _assign_seats(self, b: Booking) -> None:
        """Give each passenger of ``b`` a free seat of its class (after the seats sold outside the app)."""
        flight = self._flight(b.flight_id)
        first_row, letters = SEAT_LAYOUT[b.seat_class]
        used = {
            x.seat
            for o in self.state.bookings.values()
            if o.status == "confirmed" and o.flight_id == b.flight_id and o.seat_class == b.seat_class
            for x in o.passengers
            if x.seat
        }
        inv = flight.inventory[b.seat_class]
        ordinal = inv.capacity - inv.base_available
        for x in b.passengers:
            while True:
                seat = f"{first_row + ordinal // len(letters)}{letters[ordinal % len(letters)]}"
                ordinal += 1
                if seat not in used:
                    break
            x.seat = seat
            used.add(seat)

    @tool(
        "write",
        ["flights.booking"],
        preconditions=["flights.booking"],
        remedies={"precondition_failed": ["system_wait"]},
        id_args=["booking_id"],
    )
    def flights_check_in(self, booking_id: BookingId) -> BookingView:
        """Check in every passenger of a booking and assign seats. Online check-in opens 24 h and
        closes 45 min before departure; too early fails with precondition_failed (wait with
        system_wait; details give wait_seconds)."""
        b = self._active(booking_id)
        opens = b.departure_at - CHECKIN_OPENS
        if self.now < opens:
            wait = opens - self.now
            raise ToolError(
                ErrorCode.PRECONDITION_FAILED,
                f"check-in opens at {iso(opens)} (in {wait} virtual seconds); "
                "call system_wait (at most 604800 s per call) and retry",
                field="booking_id",
                details={"wait_seconds": wait, "opens_at": iso(opens)},
            )
        if self.now > b.departure_at - CHECKIN_CLOSES:
            raise ToolError(
                ErrorCode.CONFLICT,
                f"online check-in for {b.flight_id} closed 45 min before departure",
                field="booking_id",
            )
        if not b.checked_in:
            self._assign_seats(b)
            b.checked_in = True
            b.updated_at = self.now
        return BookingView(booking=b)

    @tool(
        "write",
        ["flights.booking", "wallet.balance"],
        preconditions=["flights.booking", "wallet.balance", "system.payment_auth"],
        remedies={"permission_denied": ["system_request_privilege"], "precondition_failed": list(PAY_REMEDIES)},
        id_args=["booking_id"],
    )
    def flights_add_baggage(
        self,
        booking_id: BookingId,
        bags: Annotated[int, Field(ge=1, le=27, description="extra checked bags to add to the booking")],
        authorization_id: AuthId,
    ) -> BookingView:
        """Buy extra checked bags for a booking at 3500 cents each (at most 3 extra per passenger),
        paid with a payment authorisation. Needs the privilege flights.booking."""
        self.other("system").require_privilege(PRIVILEGE)
        b = self._active(booking_id)
        if b.departure_at <= self.now:
            raise ToolError(ErrorCode.CONFLICT, f"flight {b.flight_id} has departed", field="booking_id")
        limit = MAX_EXTRA_BAGS_PER_PASSENGER * len(b.passengers)
        if b.extra_bags + bags > limit:
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT,
                f"at most {limit} extra bags on this booking; it has {b.extra_bags}",
                field="bags",
            )
        cost = bags * BAG_PRICE
        self._charge(authorization_id, cost, f"{bags} bag(s) for {b.record_locator}", b.booking_id)
        b.extra_bags += bags
        b.baggage_cents += cost
        b.total_paid_cents += cost
        b.updated_at = self.now
        return BookingView(booking=b, charged_cents=cost)

    @tool("read", ["flights.booking"], remedies={"precondition_failed": ["flights_check_in"]})
    def flights_get_boarding_pass(self, booking_id: BookingId) -> BoardingPassList:
        """Return the boarding passes (seat, gate, boarding time) of a checked-in booking."""
        b = self._active(booking_id)
        if not b.checked_in:
            raise ToolError(
                ErrorCode.PRECONDITION_FAILED, "not checked in yet: call flights_check_in", field="booking_id"
            )
        h = stable_hash("flights", self.world.seed, "gate", b.flight_id)
        gate = f"{'ABCD'[h % 4]}{1 + (h >> 8) % 40}"
        return BoardingPassList(
            booking_id=b.booking_id,
            boarding_passes=[
                BoardingPass(
                    passenger=x.name,
                    flight_number=b.flight_number,
                    flight_id=b.flight_id,
                    origin=b.origin,
                    destination=b.destination,
                    seat=x.seat or "",
                    seat_class=b.seat_class,
                    gate=gate,
                    boarding_time=iso(b.departure_at - 40 * 60),
                    departure=iso(b.departure_at),
                )
                for x in b.passengers
            ],
        )
