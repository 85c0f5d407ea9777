"""The ``flights`` app: a seeded 30-day schedule between 15 European cities, flight search,
saved passengers and bookings paid from the shared wallet.

Tools live in two mixins: :mod:`.search` (airports, routes, search, flight details, fare
rules) and :mod:`.booking` (passengers, book, change, cancel, check-in, baggage). Booking,
changing, cancelling and buying bags need the privilege ``flights.booking``; payments use a
one-use authorisation from ``system_authorize_payment``. Money is in integer cents (USD),
times in virtual seconds (UTC).
"""

from __future__ import annotations

from mcpgym.kernel.app import register_app
from mcpgym.kernel.world import World
from mcpgym.sandboxes.flights.booking import BookingTools
from mcpgym.sandboxes.flights.models import FlightService, FlightsState, Passenger
from mcpgym.sandboxes.flights.network import generate_services
from mcpgym.sandboxes.flights.search import SearchTools

SAVED_PASSENGERS = 4
"""People of the shared directory saved as passengers at the start (family and friends first)."""


@register_app
class FlightsApp(SearchTools, BookingTools):
    """Flight search and booking on a seeded schedule, paid through the system wallet."""

    @classmethod
    def generate(cls, world: World) -> FlightsState:
        """Seeded initial state: the route network and daily services (stream ``network``), the
        user as passenger ``pax-000`` and four saved passengers from the people directory
        (stream ``passengers``); no bookings."""
        services = {
            s.flight_number: FlightService(
                flight_number=s.flight_number,
                airline=s.airline,
                origin=s.origin,
                destination=s.destination,
                departure_minute=s.departure_minute,
                duration_minutes=s.duration_minutes,
                aircraft=s.aircraft,
                operating_days=list(s.operating_days),
                base_fare_cents=s.base_fare_cents,
            )
            for s in generate_services(cls.stream(world, "network"))
        }
        r = cls.stream(world, "passengers")

        def document() -> str:
            """A fictitious travel-document number."""
            return "".join(r.choice("CFGHJKLMNPRTVXYZ") for _ in range(2)) + f"{r.randrange(10**6, 10**7)}"

        user = world.user
        passengers = {
            "pax-000": Passenger(
                passenger_id="pax-000",
                name=user.name,
                email=user.email,
                date_of_birth=f"{r.randrange(1960, 2002)}-{r.randrange(1, 13):02d}-{r.randrange(1, 29):02d}",
                document_number=document(),
                is_account_holder=True,
            ),
        }
        rank = {"family": 0, "friends": 1}
        close = sorted(world.people, key=lambda p: (rank.get(p.relation, 2), p.person_id))
        chosen = sorted(r.sample(close[:10], SAVED_PASSENGERS), key=lambda p: p.person_id)
        for i, person in enumerate(chosen, start=1):
            pid = f"pax-{i:03d}"
            passengers[pid] = Passenger(
                passenger_id=pid,
                name=person.name,
                email=person.email,
                date_of_birth=f"{r.randrange(1950, 2015)}-{r.randrange(1, 13):02d}-{r.randrange(1, 29):02d}",
                document_number=document(),
                person_id=person.person_id,
            )
        return FlightsState(services=services, passengers=passengers)
