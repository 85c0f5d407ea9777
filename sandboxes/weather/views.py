"""Unit conversion and the building of forecast outputs from :class:`~mcpgym.sandboxes.weather.climate.Hour`."""

from __future__ import annotations

from datetime import date, timedelta

from mcpgym.kernel.clock import iso
from mcpgym.sandboxes.weather.climate import (
    DAY,
    HOUR,
    City,
    Event,
    Hour,
    day_condition,
    hour_weather,
    local_date,
    local_iso,
    local_midnight,
    sun_times,
)
from mcpgym.sandboxes.weather.models import Alert, DailyPoint, HourlyPoint, UnitLabels

LABELS = {
    "metric": UnitLabels(system="metric", temperature="C", wind_speed="km/h", precipitation="mm"),
    "imperial": UnitLabels(system="imperial", temperature="F", wind_speed="mph", precipitation="in"),
}


def temp(value_c: float, units: str) -> float:
    """Temperature in the unit system (C or F), one decimal."""
    return round(value_c * 9 / 5 + 32, 1) if units == "imperial" else round(value_c, 1)


def speed(value_kmh: float, units: str) -> float:
    """Speed in the unit system (km/h or mph), one decimal."""
    return round(value_kmh / 1.609344, 1) if units == "imperial" else round(value_kmh, 1)


def precip(value_mm: float, units: str) -> float:
    """Precipitation in the unit system (mm, one decimal; or inches, two decimals)."""
    return round(value_mm / 25.4, 2) if units == "imperial" else round(value_mm, 1)


def events_of(alerts: dict[str, Alert]) -> tuple[Event, ...]:
    """The weather events behind ``alerts`` (sorted by alert id, for stable caching)."""
    return tuple(Event(a.location_id, a.kind, a.severity, a.starts_at, a.ends_at) for _, a in sorted(alerts.items()))


def hourly_point(city: City, h: Hour, units: str) -> HourlyPoint:
    """One hour of weather as the output model, converted to ``units``."""
    return HourlyPoint(
        time=iso(h.at),
        local_time=local_iso(city, h.at),
        temperature=temp(h.temp_c, units),
        feels_like=temp(h.feels_c, units),
        precipitation_probability=h.precip_prob,
        precipitation=precip(h.precip_mm, units),
        wind_speed=speed(h.wind_kmh, units),
        wind_gust=speed(h.gust_kmh, units),
        humidity=h.humidity,
        cloud_cover=h.cloud,
        condition=h.condition,
    )


def hm_local(city: City, at: int | None) -> str | None:
    """Local ``HH:MM`` of virtual time ``at`` (None passes through)."""
    if at is None:
        return None
    return local_iso(city, at)[11:16]


def daily_points(seed: int, city: City, now: int, days: int, units: str, alerts: dict[str, Alert]) -> list[DailyPoint]:
    """Daily forecast of ``days`` local dates starting with the local date of ``now``.

    Each day aggregates its 24 local hours (the whole day, also hours already past today).
    """
    events = events_of(alerts)
    first = local_date(city, now)
    out = []
    for i in range(days):
        day: date = first + timedelta(days=i)
        start = local_midnight(city, day)
        hours = [hour_weather(seed, city, start + k * HOUR, events) for k in range(24)]
        rise, sets = sun_times(city, day)
        ids = sorted(
            a.alert_id
            for a in alerts.values()
            if a.location_id == city.location_id and a.starts_at < start + DAY and a.ends_at > start
        )
        out.append(
            DailyPoint(
                date=day.isoformat(),
                temperature_min=temp(min(h.temp_c for h in hours), units),
                temperature_max=temp(max(h.temp_c for h in hours), units),
                precipitation_total=precip(sum(h.precip_mm for h in hours), units),
                precipitation_probability=max(h.precip_prob for h in hours),
                wind_max=speed(max(h.wind_kmh for h in hours), units),
                condition=day_condition(hours, city),
                sunrise_local=hm_local(city, rise),
                sunset_local=hm_local(city, sets),
                alert_ids=ids,
            )
        )
    return out
