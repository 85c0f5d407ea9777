"""The deterministic weather model of the ``weather`` app (pure functions, no state).

Weather at a location and hour is a pure function of ``(world seed, location, hour, alerts)``:

- temperature = seasonal mean (cosine over the year, flipped south of the equator)
  + diurnal swing (coolest near 05:00, warmest near 15:00 local time)
  + a smooth synoptic anomaly (cosine-interpolated between daily knots, +-4 C)
  + a small hourly jitter;
- a smooth "wetness" (12-hour knots) drives cloud cover, humidity and the hourly chance of
  rain (none in dry spells); whether it rains in an hour and how much is a stable draw;
- wind: a smooth 12-hour base times a local factor, plus gusts;
- seeded alerts (heat, storm, wind) modify the hours they cover.

Every draw is :func:`mcpgym.kernel.rng.stable_uniform` of named parts, so the same seed gives the
same weather in any process; the virtual clock only decides which hours are "now" and
"next". Local time is UTC plus a fixed offset per location (no daylight saving).
Sunrise and sunset use the NOAA solar-position approximation (accurate to about a minute).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, timezone
from functools import lru_cache

from mcpgym.kernel.people import CITIES
from mcpgym.kernel.rng import stable_uniform

HOUR = 3600
DAY = 86_400


@dataclass(frozen=True)
class City:
    """A location the weather service knows.

    Attributes:
        location_id: lowercase id, e.g. ``new-york``.
        name, country: display name and ISO country code.
        latitude, longitude: degrees (north and east positive).
        utc_offset: local time minus UTC, in hours (fixed, no daylight saving).
        mean_c: annual mean temperature (C); season_c: seasonal half-range (C);
        diurnal_c: daily half-range (C); rain: base hourly rain chance; wind_kmh: typical wind.
    """

    location_id: str
    name: str
    country: str
    latitude: float
    longitude: float
    utc_offset: int
    mean_c: float
    season_c: float
    diurnal_c: float
    rain: float
    wind_kmh: float


_TABLE = [
    # name, country, lat, lon, utc offset, mean, season, diurnal, rain, wind
    ("Lisbon", "PT", 38.72, -9.14, 0, 17.5, 6.0, 5.0, 0.10, 15),
    ("Berlin", "DE", 52.52, 13.40, 1, 10.0, 9.5, 5.0, 0.12, 14),
    ("Paris", "FR", 48.86, 2.35, 1, 12.5, 8.0, 5.0, 0.12, 13),
    ("Madrid", "ES", 40.42, -3.70, 1, 15.0, 10.0, 7.0, 0.07, 12),
    ("Rome", "IT", 41.90, 12.50, 1, 16.0, 8.5, 6.0, 0.08, 10),
    ("Vienna", "AT", 48.21, 16.37, 1, 11.0, 10.0, 5.5, 0.11, 15),
    ("Oslo", "NO", 59.91, 10.75, 1, 6.5, 10.5, 4.5, 0.13, 12),
    ("Prague", "CZ", 50.08, 14.44, 1, 9.5, 9.5, 5.5, 0.11, 13),
    ("Dublin", "IE", 53.35, -6.26, 0, 10.0, 5.0, 4.0, 0.17, 20),
    ("Warsaw", "PL", 52.23, 21.01, 1, 8.5, 10.5, 5.5, 0.11, 14),
    ("Reykjavik", "IS", 64.15, -21.94, 0, 5.0, 6.0, 3.0, 0.16, 25),
    ("Athens", "GR", 37.98, 23.73, 2, 19.0, 8.5, 6.0, 0.05, 14),
    ("Amsterdam", "NL", 52.37, 4.90, 1, 10.5, 7.0, 4.5, 0.15, 20),
    ("New York", "US", 40.71, -74.01, -5, 13.0, 12.0, 5.5, 0.10, 16),
    ("Tokyo", "JP", 35.68, 139.69, 9, 16.0, 10.5, 5.0, 0.12, 12),
    ("Sydney", "AU", -33.87, 151.21, 10, 18.0, 5.0, 6.0, 0.09, 17),
]

LOCATIONS: dict[str, City] = {
    name.lower().replace(" ", "-"): City(
        name.lower().replace(" ", "-"), name, cc, lat, lon, off, mean, season, diurnal, rain, wind
    )
    for name, cc, lat, lon, off, mean, season, diurnal, rain, wind in _TABLE
}
"""Every known location by id; includes every city of :data:`mcpgym.kernel.people.CITIES`."""

if not all(c.lower() in LOCATIONS for c in CITIES):  # pragma: no cover - guards edits of the table
    raise RuntimeError("every city of sandboxes.people.CITIES needs a weather location")


@dataclass(frozen=True)
class Event:
    """A weather event (the physical side of an alert) over ``[start, end)`` virtual seconds."""

    location_id: str
    kind: str
    severity: str
    start: int
    end: int


@dataclass(frozen=True)
class Hour:
    """Weather of one hour, in metric units.

    Attributes:
        at: start of the hour (virtual seconds, UTC).
        temp_c, feels_c: air and apparent temperature (C).
        precip_prob: chance of precipitation (0-100 %).
        precip_mm: precipitation during the hour (mm).
        wind_kmh, gust_kmh: mean wind and gusts (km/h).
        humidity, cloud: relative humidity and cloud cover (%).
        condition: clear, partly cloudy, cloudy, fog, light rain, rain, heavy rain,
            thunderstorm, snow or windy.
    """

    at: int
    temp_c: float
    feels_c: float
    precip_prob: int
    precip_mm: float
    wind_kmh: float
    gust_kmh: float
    humidity: int
    cloud: int
    condition: str


SEVERITY_SCALE = {"minor": 1.0, "moderate": 1.5, "severe": 2.2}


def _smooth(seed: int, loc: str, what: str, t: float, step: int) -> float:
    """Cosine-interpolated knot noise in [0, 1): knots every ``step`` seconds."""
    k = math.floor(t / step)
    frac = (t - k * step) / step
    a = _knot(seed, loc, what, k)
    b = _knot(seed, loc, what, k + 1)
    w = (1 - math.cos(math.pi * frac)) / 2
    return a * (1 - w) + b * w


@lru_cache(maxsize=16_384)
def _knot(seed: int, loc: str, what: str, k: int) -> float:
    return stable_uniform("weather", seed, loc, what, k)


def local_hour(city: City, at: int) -> float:
    """Local clock hour (0-24, fractional) of virtual time ``at`` at ``city``."""
    return ((at / HOUR) + city.utc_offset) % 24


def local_date(city: City, at: int) -> date:
    """Local calendar date of virtual time ``at`` at ``city``."""
    return datetime.fromtimestamp(at + city.utc_offset * HOUR, tz=UTC).date()


def local_midnight(city: City, day: date) -> int:
    """Virtual seconds (UTC) of local midnight starting ``day`` at ``city``."""
    return int(datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()) - city.utc_offset * HOUR


def local_iso(city: City, at: int) -> str:
    """``at`` as a local ISO date-time with the offset, e.g. ``2026-06-01T10:00+01:00``."""
    dt = datetime.fromtimestamp(at, tz=timezone(timedelta(hours=city.utc_offset)))
    return dt.strftime("%Y-%m-%dT%H:%M") + f"{city.utc_offset:+03d}:00"


@lru_cache(maxsize=8_192)
def _hour_cached(seed: int, city: City, at: int, events: tuple[Event, ...]) -> Hour:
    loc = city.location_id
    dt = datetime.fromtimestamp(at, tz=UTC)
    doy = dt.timetuple().tm_yday + dt.hour / 24
    peak = 200 if city.latitude >= 0 else 18
    temp = city.mean_c + city.season_c * math.cos(2 * math.pi * (doy - peak) / 365.25)
    temp += city.diurnal_c * math.cos(2 * math.pi * (local_hour(city, at) - 15) / 24)
    temp += (_smooth(seed, loc, "temp", at, DAY) - 0.5) * 8.0
    temp += (stable_uniform("weather", seed, loc, "jitter", at) - 0.5) * 0.8

    wet = _smooth(seed, loc, "wet", at, 12 * HOUR)
    # dry spells while the wetness is below 0.45; up to 6x the base chance at its peak
    prob = min(0.95, city.rain * 6.0 * (max(0.0, wet - 0.45) / 0.55) ** 1.5)
    wind = city.wind_kmh * (0.4 + 1.2 * _smooth(seed, loc, "wind", at, 12 * HOUR))
    storm = False
    for ev in events:
        if ev.location_id != loc or not (ev.start <= at < ev.end):
            continue
        scale = SEVERITY_SCALE.get(ev.severity, 1.0)
        if ev.kind == "heat":
            temp += 4.0 * scale
        elif ev.kind == "storm":
            storm = True
            prob = max(prob, 0.9)
            wet = max(wet, 0.95)
            wind += 18.0 * scale
        elif ev.kind == "wind":
            wind += 22.0 * scale

    raining = stable_uniform("weather", seed, loc, "rain", at) < prob
    amount = 0.0
    if raining:
        amount = 0.2 + 3.5 * stable_uniform("weather", seed, loc, "amount", at) ** 3
        if storm:
            amount *= 3.0
    cloud = min(100, round(100 * (0.1 + 0.85 * wet) + (25 if raining else 0)))
    humidity = min(100, round(45 + 40 * wet + (10 if raining else 0)))
    gust = wind * (1.3 + 0.4 * stable_uniform("weather", seed, loc, "gust", at))
    feels = temp
    if temp <= 10 and wind > 5:
        feels = 13.12 + 0.6215 * temp - 11.37 * wind**0.16 + 0.3965 * temp * wind**0.16
    elif temp >= 27:
        feels = temp + 0.1 * (humidity - 40)

    if raining:
        if temp <= 0.5:
            condition = "snow"
        elif storm:
            condition = "thunderstorm"
        elif amount >= 2.5:
            condition = "heavy rain"
        elif amount < 0.5:
            condition = "light rain"
        else:
            condition = "rain"
    elif wind >= 45:
        condition = "windy"
    elif humidity >= 84 and wind < 8:
        condition = "fog"
    elif cloud < 30:
        condition = "clear"
    elif cloud < 65:
        condition = "partly cloudy"
    else:
        condition = "cloudy"
    return Hour(
        at=at,
        temp_c=round(temp, 1),
        feels_c=round(feels, 1),
        precip_prob=round(100 * prob),
        precip_mm=round(amount, 1),
        wind_kmh=round(wind, 1),
        gust_kmh=round(gust, 1),
        humidity=humidity,
        cloud=cloud,
        condition=condition,
    )


def hour_weather(seed: int, city: City, at: int, events: Iterable[Event] = ()) -> Hour:
    """Return the weather of the hour containing virtual time ``at`` at ``city``.

    Args:
        seed: world seed.
        city: the location.
        at: virtual seconds (rounded down to the hour).
        events: weather events (alerts) that may cover that hour.
    """
    start = at - at % HOUR
    relevant = tuple(
        e for e in events if e.location_id == city.location_id and e.start < start + HOUR and e.end > start
    )
    return _hour_cached(seed, city, start, relevant)


CONDITION_RANK = [
    "clear",
    "partly cloudy",
    "cloudy",
    "fog",
    "windy",
    "light rain",
    "rain",
    "snow",
    "heavy rain",
    "thunderstorm",
]
"""Conditions from mildest to most severe (a day's condition is its most severe daytime one)."""


def day_condition(hours: list[Hour], city: City) -> str:
    """Summary condition of a day, from its hours between 08:00 and 20:00 local time.

    A wet day (at least two wet daytime hours) is summarised by the most severe wet condition
    seen in at least two hours, else by its most common wet condition; a dry day by its most
    common condition (ties go to the more severe one).
    """
    day = [h for h in hours if 8 <= local_hour(city, h.at) < 20] or hours
    counts: dict[str, int] = {}
    for h in day:
        counts[h.condition] = counts.get(h.condition, 0) + 1
    first_wet = CONDITION_RANK.index("light rain")
    wet = {c: n for c, n in counts.items() if CONDITION_RANK.index(c) >= first_wet}
    if sum(wet.values()) >= 2:
        for cond in reversed(CONDITION_RANK[first_wet:]):
            if wet.get(cond, 0) >= 2:
                return cond
        return max(sorted(wet), key=lambda c: (wet[c], CONDITION_RANK.index(c)))
    dry = {c: n for c, n in counts.items() if c not in wet} or counts
    return max(sorted(dry), key=lambda c: (dry[c], CONDITION_RANK.index(c)))


def sun_times(city: City, day: date) -> tuple[int | None, int | None]:
    """Sunrise and sunset of local date ``day`` at ``city`` as virtual seconds (UTC).

    Returns:
        ``(sunrise, sunset)``; both None during polar night, and both None with a 24 h day
        (the caller tells them apart with :func:`polar_state`).
    """
    state, ha, eqtime = _solar(city, day)
    if state != "normal":
        return None, None
    base = int(datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp())
    # NOAA gives minutes from UTC midnight of the date (negative east of about 135 E, past
    # 1440 in the Americas for sunset): both still fall on the local date asked for.
    rise = 720 - 4 * (city.longitude + ha) - eqtime
    sets = 720 - 4 * (city.longitude - ha) - eqtime
    return base + round(rise * 60), base + round(sets * 60)


def polar_state(city: City, day: date) -> str:
    """``normal``, ``polar_night`` (the sun never rises) or ``midnight_sun`` (never sets)."""
    return _solar(city, day)[0]


def _solar(city: City, day: date) -> tuple[str, float, float]:
    n = day.timetuple().tm_yday
    gamma = 2 * math.pi / 365 * (n - 1)
    eqtime = 229.18 * (
        0.000075
        + 0.001868 * math.cos(gamma)
        - 0.032077 * math.sin(gamma)
        - 0.014615 * math.cos(2 * gamma)
        - 0.040849 * math.sin(2 * gamma)
    )
    decl = (
        0.006918
        - 0.399912 * math.cos(gamma)
        + 0.070257 * math.sin(gamma)
        - 0.006758 * math.cos(2 * gamma)
        + 0.000907 * math.sin(2 * gamma)
        - 0.002697 * math.cos(3 * gamma)
        + 0.00148 * math.sin(3 * gamma)
    )
    lat = math.radians(city.latitude)
    cos_ha = math.cos(math.radians(90.833)) / (math.cos(lat) * math.cos(decl)) - math.tan(lat) * math.tan(decl)
    if cos_ha > 1:
        return "polar_night", 0.0, eqtime
    if cos_ha < -1:
        return "midnight_sun", 0.0, eqtime
    return "normal", math.degrees(math.acos(cos_ha)), eqtime


def distance_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle distance in km (haversine, Earth radius 6371 km)."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * 6371.0 * math.asin(min(1.0, math.sqrt(a)))
