"""The ``flights`` app: a seeded flight schedule, search, passengers and bookings paid through
the system wallet (see :mod:`mcpgym.sandboxes.flights.app`). Importing this package registers it."""

from mcpgym.sandboxes.flights.app import FlightsApp
from mcpgym.sandboxes.flights.models import FlightsState

__all__ = ["FlightsApp", "FlightsState"]
