"""Saved-passenger tools of the ``flights`` app: list, add, update, remove."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from mcpgym.kernel.clock import iso
from mcpgym.kernel.errors import ErrorCode, ToolError
from mcpgym.kernel.spec import tool
from mcpgym.sandboxes.flights.core import FlightsCore
from mcpgym.sandboxes.flights.models import Passenger, PassengerList, PassengerView, RemovedView


class PassengerTools(FlightsCore):
    """Saved passengers: the user (pax-000), people from the directory, and added ones."""

    @tool("read", ["flights.passenger"])
    def flights_list_passengers(self) -> PassengerList:
        """List saved passengers (the user first), with their passenger ids."""
        items = sorted(self.state.passengers.values(), key=lambda p: (not p.is_account_holder, p.name))
        return PassengerList(passengers=items)

    @tool("write", ["flights.passenger"], id_args=[])
    def flights_add_passenger(
        self,
        name: Annotated[str, Field(min_length=1, max_length=100, description="full name as on the travel document")],
        date_of_birth: Annotated[str, Field(max_length=20, description="ISO date YYYY-MM-DD")],
        email: Annotated[str, Field(max_length=200, description="contact email")] = "",
        document_number: Annotated[str, Field(max_length=30, description="passport or ID card number")] = "",
        person_id: Annotated[
            str | None, Field(max_length=20, description="link to a person of the shared directory (p-NNN)")
        ] = None,
    ) -> PassengerView:
        """Save a new passenger (name, date of birth, optional email and document number) and return its passenger id."""
        from datetime import date

        clean = " ".join(name.split())
        if not clean:
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "name must not be empty", field="name")
        try:
            born = date.fromisoformat(date_of_birth.strip())
        except ValueError:
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT, "date_of_birth must be an ISO date YYYY-MM-DD", field="date_of_birth"
            ) from None
        if born.year < 1900 or born.isoformat() > iso(self.now)[:10]:
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT, "date_of_birth must be between 1900 and today", field="date_of_birth"
            )
        if person_id is not None and self.world.person(person_id) is None:
            raise ToolError(ErrorCode.NOT_FOUND, f"no person {person_id!r} in the directory", field="person_id")
        for p in self.state.passengers.values():
            if p.name.casefold() == clean.casefold():
                raise ToolError(
                    ErrorCode.CONFLICT,
                    f"a passenger named {p.name} is already saved as {p.passenger_id}",
                    field="name",
                    details={"passenger_id": p.passenger_id},
                )
        pid = self.new_id("pax")
        pax = Passenger(
            passenger_id=pid,
            name=clean,
            email=email.strip(),
            date_of_birth=born.isoformat(),
            document_number=document_number.strip().upper(),
            person_id=person_id,
        )
        self.state.passengers[pid] = pax
        return PassengerView(passenger=pax)

    def _passenger(self, passenger_id: str, field: str = "passenger_id") -> Passenger:
        """Return saved passenger ``passenger_id``; ``not_found`` (on ``field``) otherwise."""
        p = self.state.passengers.get(passenger_id.strip())
        if p is None:
            raise ToolError(
                ErrorCode.NOT_FOUND,
                f"no saved passenger {passenger_id[:40]!r}; see flights_list_passengers",
                field=field,
            )
        return p

    @tool("write", ["flights.passenger"])
    def flights_update_passenger(
        self,
        passenger_id: Annotated[str, Field(max_length=60, description="passenger id")],
        email: Annotated[str | None, Field(max_length=200, description="new email")] = None,
        document_number: Annotated[str | None, Field(max_length=30, description="new document number")] = None,
    ) -> PassengerView:
        """Update a saved passenger's email or document number (at least one)."""
        p = self._passenger(passenger_id)
        if email is None and document_number is None:
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "give email or document_number", field="email")
        if email is not None:
            p.email = email.strip()
        if document_number is not None:
            p.document_number = document_number.strip().upper()
        return PassengerView(passenger=p)

    @tool("write", ["flights.passenger"], destructive=True)
    def flights_remove_passenger(
        self, passenger_id: Annotated[str, Field(max_length=60, description="passenger id")]
    ) -> RemovedView:
        """Remove a saved passenger. The account holder, and anyone on an upcoming confirmed booking, cannot be removed."""
        p = self._passenger(passenger_id)
        if p.is_account_holder:
            raise ToolError(ErrorCode.CONFLICT, "the account holder cannot be removed", field="passenger_id")
        for b in self.state.bookings.values():
            if (
                b.status == "confirmed"
                and b.departure_at > self.now
                and any(x.passenger_id == p.passenger_id for x in b.passengers)
            ):
                raise ToolError(
                    ErrorCode.CONFLICT,
                    f"{p.name} is on upcoming booking {b.record_locator}; cancel it first",
                    field="passenger_id",
                )
        del self.state.passengers[p.passenger_id]
        return RemovedView(removed_id=p.passenger_id, remaining=len(self.state.passengers))
