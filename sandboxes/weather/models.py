"""State and output models of the ``weather`` app.

Forecast numbers are not stored: they are computed from the seed and the virtual clock (see
:mod:`mcpgym.sandboxes.weather.climate`). The state holds the user's choices (primary and saved
locations, units, alert subscriptions) and the seeded alerts. Times are virtual seconds since
the Unix epoch (UTC) in the state and ISO-8601 strings in outputs.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from mcpgym.kernel.app import AppState
from mcpgym.kernel.volatile import VOLATILE

Units = Literal["metric", "imperial"]
Severity = Literal["minor", "moderate", "severe"]
AlertKind = Literal["heat", "storm", "wind"]
SEVERITY_ORDER: dict[str, int] = {"minor": 0, "moderate": 1, "severe": 2}
MAX_SAVED = 10
"""Most saved locations the user may have."""


# -- state -------------------------------------------------------------------------------
class SavedLocation(BaseModel):
    """A location the user saved, with an optional label ("Home", "Work"...)."""

    location_id: str
    label: str = ""
    added_at: Annotated[int, VOLATILE] = 0


class Alert(BaseModel):
    """A weather alert (seeded): kind heat | storm | wind, severity minor | moderate | severe.

    starts_at and ends_at are virtual seconds (UTC); the forecast of the covered hours
    shows the event (hotter, stormy, windy).
    """

    alert_id: str
    location_id: str
    kind: AlertKind
    severity: Severity
    headline: str
    starts_at: int
    ends_at: int


class AlertSubscription(BaseModel):
    """A subscription to alerts of one saved location at or above min_severity."""

    location_id: str
    min_severity: Severity = "minor"
    created_at: Annotated[int, VOLATILE] = 0


class WeatherState(AppState):
    """State of the weather app.

    Attributes:
        primary_location_id: the default location of every forecast tool (always saved).
        saved: saved locations by location id (at most 10).
        units: metric (C, km/h, mm) or imperial (F, mph, in).
        alerts: seeded alerts by alert id.
        subscriptions: alert subscriptions by location id.
    """

    primary_location_id: str
    saved: dict[str, SavedLocation]
    units: Units = "metric"
    alerts: dict[str, Alert] = Field(default_factory=dict)
    subscriptions: dict[str, AlertSubscription] = Field(default_factory=dict)


# -- outputs -----------------------------------------------------------------------------
class UnitLabels(BaseModel):
    """The units of the numbers of a response."""

    system: Units
    temperature: str
    wind_speed: str
    precipitation: str


class LocationInfo(BaseModel):
    """A known location, and whether the user saved it or made it primary."""

    location_id: str
    name: str
    country: str
    latitude: float
    longitude: float
    utc_offset_hours: int
    saved: bool
    primary: bool


class LocationList(BaseModel):
    """Known locations."""

    locations: list[LocationInfo]
    count: int


class SavedLocationView(BaseModel):
    """A saved location with its label and flags."""

    location: LocationInfo
    label: str
    subscribed_to_alerts: bool


class SavedLocationList(BaseModel):
    """Saved locations (by name) and the primary one."""

    locations: list[SavedLocationView]
    primary_location_id: str
    count: int
    max_saved: int


class AddLocationResult(BaseModel):
    """A saved location; added is false when it was saved already (its label is updated)."""

    location: SavedLocationView
    added: bool
    count: int


class RemoveLocationResult(BaseModel):
    """Result of removing a saved location (its alert subscription goes with it)."""

    location_id: str
    unsubscribed: bool
    count: int


class PrimaryLocationView(BaseModel):
    """The primary location."""

    location: LocationInfo


class CurrentConditions(BaseModel):
    """Conditions of the current hour at a location (numbers in units)."""

    location: LocationInfo
    observed_at: str
    local_time: str
    units: UnitLabels
    temperature: float
    feels_like: float
    humidity: int
    wind_speed: float
    wind_gust: float
    precipitation: float
    precipitation_probability: int
    cloud_cover: int
    condition: str
    active_alerts: list[Alert]


class HourlyPoint(BaseModel):
    """One hour of a forecast (time is the hour's start, UTC; local_time has the offset)."""

    time: str
    local_time: str
    temperature: float
    feels_like: float
    precipitation_probability: int
    precipitation: float
    wind_speed: float
    wind_gust: float
    humidity: int
    cloud_cover: int
    condition: str


class HourlyForecast(BaseModel):
    """Hourly forecast from the current hour on."""

    location: LocationInfo
    generated_at: str
    units: UnitLabels
    hours: list[HourlyPoint]


class DailyPoint(BaseModel):
    """One local day of a forecast: extremes, totals, the day's condition, sun times, alert ids."""

    date: str
    temperature_min: float
    temperature_max: float
    precipitation_total: float
    precipitation_probability: int
    wind_max: float
    condition: str
    sunrise_local: str | None
    sunset_local: str | None
    alert_ids: list[str]


class DailyForecast(BaseModel):
    """Daily forecast from today (local date) on. distance_km is set for coordinate lookups."""

    location: LocationInfo
    generated_at: str
    units: UnitLabels
    days: list[DailyPoint]
    distance_km: float | None = None


class SunTimes(BaseModel):
    """Sunrise and sunset of one local date (None in polar night or midnight sun)."""

    location: LocationInfo
    date: str
    sunrise: str | None
    sunset: str | None
    sunrise_local: str | None
    sunset_local: str | None
    day_length_minutes: int
    polar: Literal["normal", "polar_night", "midnight_sun"]


class AlertView(BaseModel):
    """An alert, whether it is in force now, and whether the user is subscribed to it."""

    alert: Alert
    location_name: str
    active: bool
    subscribed: bool


class AlertList(BaseModel):
    """Alerts, soonest first."""

    alerts: list[AlertView]
    count: int


class SubscriptionView(BaseModel):
    """An alert subscription and the current or upcoming alerts it covers."""

    subscription: AlertSubscription
    location_name: str
    matching_alerts: list[Alert]


class SubscriptionList(BaseModel):
    """Alert subscriptions, by location id."""

    subscriptions: list[SubscriptionView]
    count: int


class UnitsView(BaseModel):
    """The units setting."""

    units: UnitLabels
