"""The ``flights`` app: a seeded flight schedule, search, passengers and bookings paid through
the system wallet (see :mod:`sandboxes.flights.app`). Importing this package registers it."""

from sandboxes.flights.app import FlightsApp
from sandboxes.flights.models import FlightsState

__all__ = ["FlightsApp", "FlightsState"]
