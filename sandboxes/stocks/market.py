"""Instruments, market hours and the deterministic quote function of the ``stocks`` app.

Quotes need no stored drift: the price of a symbol in trading bucket ``k`` (15 virtual
minutes of market hours) is a pure function of ``(world seed, symbol, k)`` - a sum of five
octaves of value noise built from :func:`mcpgym.kernel.rng.stable_uniform`, applied to the
instrument's base price. Outside market hours the quote stays at the last bucket's price.
Evaluating it at ``now`` therefore gives the same answer in any process, and moving the
virtual clock moves the price.

Market hours: 09:30-16:00 UTC, Monday to Friday (no holidays), 26 buckets a day.
"""

from __future__ import annotations

import math
from functools import lru_cache

from mcpgym.kernel.rng import stable_uniform

BUCKET = 15 * 60
"""Seconds of one quote bucket: quotes change every 15 virtual minutes of market hours."""
OPEN = 9 * 3600 + 30 * 60
"""Market open, seconds after 00:00 UTC."""
CLOSE = 16 * 3600
"""Market close, seconds after 00:00 UTC."""
BUCKETS_PER_DAY = (CLOSE - OPEN) // BUCKET
DAY = 86_400
_MONDAY = 4
"""1970-01-05, a Monday, in days since the epoch."""

OCTAVES: tuple[tuple[int, float], ...] = ((1, 0.004), (6, 0.008), (26, 0.02), (130, 0.05), (520, 0.09))
"""(period in buckets, amplitude of log-price) of each noise octave, before the instrument's volatility."""

INSTRUMENTS: tuple[tuple[str, str, str, str], ...] = (
    ("NVLT", "Novalith Semiconductors", "Technology", "large"),
    ("QBIT", "Qubitline Systems", "Technology", "mid"),
    ("CLDX", "Cloudex Software", "Technology", "large"),
    ("MEDV", "Medivance Health", "Healthcare", "large"),
    ("GNMX", "Genomix Therapeutics", "Healthcare", "small"),
    ("CRLN", "Carelane Hospitals", "Healthcare", "mid"),
    ("BRKF", "Brookfair Bancorp", "Financials", "large"),
    ("LDGR", "Ledgerstone Financial", "Financials", "mid"),
    ("ASRX", "Assurex Insurance", "Financials", "mid"),
    ("SOLR", "Solaris Grid", "Energy", "mid"),
    ("PTRL", "Petraline Energy", "Energy", "large"),
    ("WNDY", "Windmere Power", "Energy", "small"),
    ("BRWS", "Brewster & Co", "Consumer", "mid"),
    ("FRSH", "Freshway Markets", "Consumer", "large"),
    ("LUXE", "Luxeborne Fashion", "Consumer", "small"),
    ("AXLE", "Axlewright Motors", "Industrials", "large"),
    ("FRGT", "Freightwise Logistics", "Industrials", "mid"),
    ("AERO", "Aerovance Aerospace", "Industrials", "large"),
    ("HYDR", "Hydrona Utilities", "Utilities", "mid"),
    ("MNRL", "Mineralis Mining", "Materials", "small"),
    ("CHEM", "Chemora Materials", "Materials", "mid"),
    ("STRM", "Streamwave Media", "Communication", "large"),
    ("TLCM", "Telcomet Networks", "Communication", "mid"),
    ("URBN", "Urbanest REIT", "Real Estate", "small"),
)
"""(symbol, company, sector, size class) of every listed instrument (fictitious companies)."""

SIZE_RANGES: dict[str, tuple[tuple[int, int], tuple[int, int]]] = {
    "large": ((6_000, 45_000), (1_000_000_000, 8_000_000_000)),
    "mid": ((2_500, 18_000), (150_000_000, 900_000_000)),
    "small": ((400, 4_500), (20_000_000, 120_000_000)),
}
"""Size class -> (base price range in cents, shares outstanding range)."""


def weekday(day: int) -> int:
    """Weekday of ``day`` (days since the epoch): 0 = Monday ... 6 = Sunday."""
    return (day + 3) % 7


def _trading_days_before(day: int) -> int:
    """Weekdays from the anchor Monday up to (not including) ``day``."""
    d = day - _MONDAY
    return 5 * (d // 7) + min(d % 7, 5)


def bucket_at(t: int) -> int:
    """Index of the latest trading bucket that started at or before ``t`` (virtual seconds).

    During market hours it is the current bucket; outside them, the last bucket of the
    previous session, so the quote stays at the close.
    """
    day, tod = divmod(t, DAY)
    base = _trading_days_before(day) * BUCKETS_PER_DAY
    if weekday(day) < 5 and tod >= OPEN:
        return base + min((tod - OPEN) // BUCKET, BUCKETS_PER_DAY - 1)
    return base - 1


def bucket_start(k: int) -> int:
    """Virtual seconds at which trading bucket ``k`` starts (inverse of :func:`bucket_at`)."""
    n, i = divmod(k, BUCKETS_PER_DAY)
    day = _MONDAY + 7 * (n // 5) + n % 5
    return day * DAY + OPEN + i * BUCKET


def is_open(t: int) -> bool:
    """True when the market is open at ``t``: 09:30 <= time < 16:00 UTC on a weekday."""
    day, tod = divmod(t, DAY)
    return weekday(day) < 5 and OPEN <= tod < CLOSE


def next_open(t: int) -> int:
    """The next market open strictly after ``t``, or today's open if ``t`` is before it (virtual seconds)."""
    day, tod = divmod(t, DAY)
    if weekday(day) < 5 and tod < OPEN:
        return day * DAY + OPEN
    day += 1
    while weekday(day) >= 5:
        day += 1
    return day * DAY + OPEN


def next_close(t: int) -> int:
    """The close of the current session when open, else of the next session (virtual seconds)."""
    if is_open(t):
        return (t // DAY) * DAY + CLOSE
    return (next_open(t) // DAY) * DAY + CLOSE


def _noise(seed: int, symbol: str, octave: int, x: int) -> float:
    """Stable value in [-1, 1) of one noise octave at knot ``x``."""
    return 2.0 * stable_uniform("stocks", "quote", seed, symbol, octave, x) - 1.0


@lru_cache(maxsize=262_144)
def price_at(seed: int, symbol: str, base_cents: int, volatility: float, k: int) -> int:
    """Price in cents of ``symbol`` in trading bucket ``k`` (pure; cached).

    ``log(price) = log(base) + volatility * sum(amplitude * noise)`` over :data:`OCTAVES`;
    each octave interpolates stable-hash values at multiples of its period, so prices move a
    little each bucket and drift over days and weeks. Never below 100 cents.
    """
    x = 0.0
    for j, (period, amp) in enumerate(OCTAVES):
        if period == 1:
            v = _noise(seed, symbol, j, k)
        else:
            n0, rem = divmod(k, period)
            f = rem / period
            f = f * f * (3 - 2 * f)
            v = (1 - f) * _noise(seed, symbol, j, n0) + f * _noise(seed, symbol, j, n0 + 1)
        x += amp * v
    return max(100, int(round(base_cents * math.exp(volatility * x))))
