"""The virtual clock shared by every app of a world.

Time is counted in virtual seconds since the Unix epoch (UTC). Nothing in a sandbox reads the
wall clock; every write advances this clock, and a tool with the role ``wait`` advances it on request.
"""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel

EPOCH_START = int(datetime(2026, 6, 1, 9, 0, tzinfo=UTC).timestamp())
"""Where every world's clock starts: Monday 2026-06-01 09:00 UTC, in virtual seconds."""

WRITE_TICK = 5
"""Virtual seconds a successful write advances the clock."""


class Clock(BaseModel):
    """The world's virtual clock.

    Attributes:
        now: current virtual time in seconds since the Unix epoch (UTC).
    """

    now: int = EPOCH_START

    def advance(self, seconds: int) -> int:
        """Move the clock forward by ``seconds`` (>= 0) and return the new time.

        Raises:
            ValueError: if ``seconds`` is negative.
        """
        if seconds < 0:
            raise ValueError("the virtual clock cannot go backwards")
        self.now += int(seconds)
        return self.now

    def iso(self, at: int | None = None) -> str:
        """Return ``at`` (default: now) as an ISO-8601 UTC string."""
        return iso(self.now if at is None else at)


def iso(ts: int) -> str:
    """Format virtual seconds ``ts`` as ``YYYY-MM-DDTHH:MM:SSZ``."""
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso(text: str) -> int:
    """Parse an ISO-8601 date or date-time (UTC assumed when no zone) into virtual seconds.

    Raises:
        ValueError: when ``text`` is not a valid date or date-time.
    """
    value = text.strip()
    if value.endswith("Z"):
        value = value[:-1] + "+00:00"
    dt = datetime.fromisoformat(value)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return int(dt.timestamp())
