"""The ``weather`` app: locations, forecasts, sun times, alerts and units.

Forecasts are computed deterministically from the world seed and the virtual clock (see
:mod:`mcpgym.sandboxes.weather.climate`): the same seed gives the same weather for the same hour, and
waiting (``system_wait``) moves "now" and therefore which hours and days a forecast lists.

Interdependencies an agent must handle:
- alert subscriptions and the primary location need a *saved* location:
  ``precondition_failed`` cured by ``weather_add_location``;
- at most 10 saved locations: ``precondition_failed`` cured by ``weather_remove_location``;
- the primary location cannot be removed: ``precondition_failed`` cured by
  ``weather_set_primary_location`` (pick another primary first).
``weather_get_forecast`` (by name) and ``weather_get_forecast_by_coordinates`` are alternatives.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated

from pydantic import Field

from mcpgym.kernel.app import App, register_app
from mcpgym.kernel.clock import iso
from mcpgym.kernel.errors import ErrorCode, ToolError
from mcpgym.kernel.spec import tool
from mcpgym.kernel.world import World
from mcpgym.sandboxes.weather.climate import (
    DAY,
    HOUR,
    LOCATIONS,
    City,
    distance_km,
    hour_weather,
    local_date,
    local_iso,
    polar_state,
    sun_times,
)
from mcpgym.sandboxes.weather.models import (
    MAX_SAVED,
    SEVERITY_ORDER,
    AddLocationResult,
    Alert,
    AlertKind,
    AlertList,
    AlertSubscription,
    AlertView,
    CurrentConditions,
    DailyForecast,
    HourlyForecast,
    LocationInfo,
    LocationList,
    PrimaryLocationView,
    RemoveLocationResult,
    SavedLocation,
    SavedLocationList,
    SavedLocationView,
    Severity,
    SubscriptionList,
    SubscriptionView,
    SunTimes,
    Units,
    UnitsView,
    WeatherState,
)
from mcpgym.sandboxes.weather.views import LABELS, daily_points, events_of, hm_local, hourly_point, precip, speed, temp

LocationArg = Annotated[str, Field(max_length=100, description="location id or name, e.g. 'lisbon' or 'New York'")]
OptionalLocation = Annotated[
    str | None, Field(max_length=100, description="location id or name; default: the primary location")
]
Days = Annotated[int, Field(ge=1, le=10, description="number of days (1-10), starting today")]
COORDINATE_RADIUS_KM = 100.0
"""A coordinate lookup uses the nearest known location within this distance."""
ALERT_KINDS: tuple[AlertKind, ...] = ("heat", "storm", "wind")
SEVERITIES: tuple[Severity, ...] = ("minor", "moderate", "severe")
_HEADLINES = {"heat": "heat warning", "storm": "thunderstorm warning", "wind": "high wind warning"}


@register_app
class WeatherApp(App):
    """Weather: locations, current conditions, hourly/daily forecasts, sun times, alerts, units."""

    name = "weather"
    title = "Weather"
    State = WeatherState
    state: WeatherState

    @classmethod
    def generate(cls, world: World) -> WeatherState:
        """Seeded initial state: the user's home city as primary ("Home") plus two saved cities,
        metric units, four alerts (the first at the primary location) starting between 6 h ago
        and 4 days ahead, and a subscription to the primary location's moderate+ alerts."""
        r = cls.stream(world, "setup")
        now = world.clock.now
        primary = world.user.city.lower().replace(" ", "-")
        if primary not in LOCATIONS:  # pragma: no cover - every people city is in the table
            primary = "lisbon"
        others = sorted(r.sample(sorted(k for k in LOCATIONS if k != primary), 2))
        saved = {primary: SavedLocation(location_id=primary, label="Home", added_at=now - 30 * DAY)}
        for i, loc in enumerate(others, start=1):
            saved[loc] = SavedLocation(location_id=loc, label="", added_at=now - (30 - i) * DAY)
        ra = cls.stream(world, "alerts")
        hour0 = now - now % HOUR
        alerts = {}
        places = [primary] + ra.sample(sorted(LOCATIONS), 3)
        for n, loc in enumerate(places, start=1):
            kind = ra.choice(ALERT_KINDS)
            severity = ra.choices(SEVERITIES, weights=[3, 4, 2])[0]
            start = hour0 + ra.randint(-6, 96) * HOUR
            alert_id = f"wa-{n:03d}"
            alerts[alert_id] = Alert(
                alert_id=alert_id,
                location_id=loc,
                kind=kind,
                severity=severity,
                headline=f"{severity.capitalize()} {_HEADLINES[kind]} for {LOCATIONS[loc].name}",
                starts_at=start,
                ends_at=start + ra.randint(6, 36) * HOUR,
            )
        subs = {primary: AlertSubscription(location_id=primary, min_severity="moderate", created_at=now - 20 * DAY)}
        return WeatherState(primary_location_id=primary, saved=saved, units="metric", alerts=alerts, subscriptions=subs)

    # -- helpers ---------------------------------------------------------------------------
    def _resolve(self, location: str | None, field: str = "location") -> City:
        """The city named by ``location`` (id or name, case-insensitive; None = primary).

        Raises:
            ToolError: ``not_found`` for an unknown location.
        """
        if location is None:
            return LOCATIONS[self.state.primary_location_id]
        key = location.split(",")[0].strip().lower().replace(" ", "-").replace("_", "-")
        city = LOCATIONS.get(key)
        if city is None:
            raise ToolError(
                ErrorCode.NOT_FOUND, f"unknown location {location[:100]!r}; see weather_list_locations", field=field
            )
        return city

    def _info(self, city: City) -> LocationInfo:
        return LocationInfo(
            location_id=city.location_id,
            name=city.name,
            country=city.country,
            latitude=city.latitude,
            longitude=city.longitude,
            utc_offset_hours=city.utc_offset,
            saved=city.location_id in self.state.saved,
            primary=city.location_id == self.state.primary_location_id,
        )

    def _saved_view(self, loc_id: str) -> SavedLocationView:
        return SavedLocationView(
            location=self._info(LOCATIONS[loc_id]),
            label=self.state.saved[loc_id].label,
            subscribed_to_alerts=loc_id in self.state.subscriptions,
        )

    def _require_saved(self, city: City, action: str) -> None:
        if city.location_id not in self.state.saved:
            raise ToolError(
                ErrorCode.PRECONDITION_FAILED,
                f"{city.name} is not a saved location: call weather_add_location before you {action}",
                field="location",
                details={"location_id": city.location_id},
            )

    def _alerts_for(self, loc_id: str, min_severity: str = "minor") -> list[Alert]:
        """Current or upcoming alerts of a location at or above ``min_severity``, soonest first."""
        floor = SEVERITY_ORDER[min_severity]
        items = [
            a
            for a in self.state.alerts.values()
            if a.location_id == loc_id and a.ends_at > self.now and SEVERITY_ORDER[a.severity] >= floor
        ]
        return sorted(items, key=lambda a: (a.starts_at, a.alert_id))

    # -- locations -------------------------------------------------------------------------
    @tool("read", ["weather.location"])
    def weather_list_locations(
        self,
        query: Annotated[str | None, Field(max_length=100, description="filter by name, id or country code")] = None,
    ) -> LocationList:
        """List the locations the weather service knows (with coordinates and UTC offset), by name."""
        q = (query or "").strip().lower()
        cities = [
            c
            for c in LOCATIONS.values()
            if not q or q in c.name.lower() or q in c.location_id or q == c.country.lower()
        ]
        items = [self._info(c) for c in sorted(cities, key=lambda c: c.name)]
        return LocationList(locations=items, count=len(items))

    @tool("read", ["weather.saved_location", "weather.primary_location"])
    def weather_list_saved_locations(self) -> SavedLocationList:
        """List your saved locations (label, alert subscription) and which one is primary."""
        ids = sorted(self.state.saved, key=lambda k: LOCATIONS[k].name)
        return SavedLocationList(
            locations=[self._saved_view(k) for k in ids],
            primary_location_id=self.state.primary_location_id,
            count=len(ids),
            max_saved=MAX_SAVED,
        )

    @tool(
        "write",
        ["weather.saved_location"],
        preconditions=["weather.saved_location"],
        remedies={"precondition_failed": ["weather_remove_location"]},
    )
    def weather_add_location(
        self,
        location: LocationArg,
        label: Annotated[str, Field(max_length=40, description="optional label, e.g. 'Work'")] = "",
    ) -> AddLocationResult:
        """Save a location (at most 10). Saving one already saved only updates its label when one is given."""
        city = self._resolve(location)
        current = self.state.saved.get(city.location_id)
        if current is not None:
            if label.strip():
                current.label = label.strip()
            return AddLocationResult(
                location=self._saved_view(city.location_id), added=False, count=len(self.state.saved)
            )
        if len(self.state.saved) >= MAX_SAVED:
            raise ToolError(
                ErrorCode.PRECONDITION_FAILED,
                f"you already have {MAX_SAVED} saved locations: remove one first",
                field="location",
            )
        self.state.saved[city.location_id] = SavedLocation(
            location_id=city.location_id, label=label.strip(), added_at=self.now
        )
        return AddLocationResult(location=self._saved_view(city.location_id), added=True, count=len(self.state.saved))

    @tool(
        "write",
        ["weather.saved_location", "weather.alert_subscription"],
        preconditions=["weather.primary_location"],
        remedies={"precondition_failed": ["weather_set_primary_location"]},
        destructive=True,
    )
    def weather_remove_location(self, location: LocationArg) -> RemoveLocationResult:
        """Remove a saved location and its alert subscription. The primary location cannot be removed."""
        city = self._resolve(location)
        if city.location_id not in self.state.saved:
            raise ToolError(ErrorCode.NOT_FOUND, f"{city.name} is not a saved location", field="location")
        if city.location_id == self.state.primary_location_id:
            raise ToolError(
                ErrorCode.PRECONDITION_FAILED,
                f"{city.name} is the primary location: make another saved "
                "location primary first (weather_set_primary_location)",
                field="location",
            )
        del self.state.saved[city.location_id]
        unsubscribed = self.state.subscriptions.pop(city.location_id, None) is not None
        return RemoveLocationResult(
            location_id=city.location_id, unsubscribed=unsubscribed, count=len(self.state.saved)
        )

    @tool("read", ["weather.primary_location"])
    def weather_get_primary_location(self) -> PrimaryLocationView:
        """Return the primary location, the default of every forecast tool."""
        return PrimaryLocationView(location=self._info(LOCATIONS[self.state.primary_location_id]))

    @tool(
        "write",
        ["weather.primary_location"],
        preconditions=["weather.saved_location"],
        remedies={"precondition_failed": ["weather_add_location"]},
    )
    def weather_set_primary_location(self, location: LocationArg) -> PrimaryLocationView:
        """Make a saved location the primary one (precondition_failed if it is not saved)."""
        city = self._resolve(location)
        self._require_saved(city, "make it primary")
        self.state.primary_location_id = city.location_id
        return self.weather_get_primary_location()

    # -- conditions and forecasts -----------------------------------------------------------
    @tool("read", ["weather.conditions"])
    def weather_get_current_conditions(self, location: OptionalLocation = None) -> CurrentConditions:
        """Current conditions (this hour) at a location: temperature, feels-like, wind, rain, humidity, alerts."""
        city = self._resolve(location)
        u = self.state.units
        h = hour_weather(self.world.seed, city, self.now, events_of(self.state.alerts))
        active = [a for a in self._alerts_for(city.location_id) if a.starts_at <= self.now]
        return CurrentConditions(
            location=self._info(city),
            observed_at=iso(self.now),
            local_time=local_iso(city, self.now),
            units=LABELS[u],
            temperature=temp(h.temp_c, u),
            feels_like=temp(h.feels_c, u),
            humidity=h.humidity,
            wind_speed=speed(h.wind_kmh, u),
            wind_gust=speed(h.gust_kmh, u),
            precipitation=precip(h.precip_mm, u),
            precipitation_probability=h.precip_prob,
            cloud_cover=h.cloud,
            condition=h.condition,
            active_alerts=active,
        )

    @tool("read", ["weather.forecast"])
    def weather_get_hourly_forecast(
        self,
        location: OptionalLocation = None,
        hours: Annotated[int, Field(ge=1, le=48, description="number of hours (1-48), from the current hour")] = 24,
    ) -> HourlyForecast:
        """Hourly forecast for the next hours hours (at most 48), starting with the current hour."""
        city = self._resolve(location)
        start = self.now - self.now % HOUR
        events = events_of(self.state.alerts)
        points = [
            hourly_point(city, hour_weather(self.world.seed, city, start + k * HOUR, events), self.state.units)
            for k in range(hours)
        ]
        return HourlyForecast(
            location=self._info(city), generated_at=iso(self.now), units=LABELS[self.state.units], hours=points
        )

    @tool("read", ["weather.forecast"], alternatives=["weather_get_forecast_by_coordinates"])
    def weather_get_forecast(self, location: OptionalLocation = None, days: Days = 7) -> DailyForecast:
        """Daily forecast by location name or id for days days (at most 10) from today (local date):
        min/max temperature, precipitation total and chance, max wind, condition, sunrise/sunset, alert ids."""
        city = self._resolve(location)
        return DailyForecast(
            location=self._info(city),
            generated_at=iso(self.now),
            units=LABELS[self.state.units],
            days=daily_points(self.world.seed, city, self.now, days, self.state.units, self.state.alerts),
        )

    @tool("read", ["weather.forecast"], alternatives=["weather_get_forecast"])
    def weather_get_forecast_by_coordinates(
        self,
        latitude: Annotated[float, Field(ge=-90, le=90, description="degrees, north positive")],
        longitude: Annotated[float, Field(ge=-180, le=180, description="degrees, east positive")],
        days: Days = 7,
    ) -> DailyForecast:
        """Daily forecast for coordinates: uses the nearest known location within 100 km (not_found otherwise)."""
        best = min(
            LOCATIONS.values(), key=lambda c: (distance_km(latitude, longitude, c.latitude, c.longitude), c.location_id)
        )
        dist = distance_km(latitude, longitude, best.latitude, best.longitude)
        if dist > COORDINATE_RADIUS_KM:
            raise ToolError(
                ErrorCode.NOT_FOUND,
                f"no forecast location within {COORDINATE_RADIUS_KM:.0f} km of "
                f"({latitude:.3f}, {longitude:.3f}); the nearest is {best.name} at {dist:.0f} km",
                field="latitude",
                details={"nearest": best.location_id, "distance_km": round(dist, 1)},
            )
        out = self.weather_get_forecast(best.location_id, days)
        out.distance_km = round(dist, 1)
        return out

    @tool("read", ["weather.astronomy"])
    def weather_get_sun_times(
        self,
        location: OptionalLocation = None,
        date_iso: Annotated[
            str | None, Field(max_length=10, description="local date YYYY-MM-DD; default today")
        ] = None,
    ) -> SunTimes:
        """Sunrise and sunset of a local date (default: today) at a location, in UTC ISO and local HH:MM."""
        city = self._resolve(location)
        if date_iso is None:
            day = local_date(city, self.now)
        else:
            try:
                day = date.fromisoformat(date_iso.strip())
            except ValueError:
                raise ToolError(
                    ErrorCode.INVALID_ARGUMENT, f"date_iso must be YYYY-MM-DD, got {date_iso!r}", field="date_iso"
                ) from None
            if not (2000 <= day.year <= 2100):
                raise ToolError(
                    ErrorCode.INVALID_ARGUMENT, "date_iso must lie in the years 2000-2100", field="date_iso"
                )
        rise, sets = sun_times(city, day)
        polar = polar_state(city, day)
        length = (
            (sets - rise) // 60
            if rise is not None and sets is not None
            else (24 * 60 if polar == "midnight_sun" else 0)
        )
        return SunTimes(
            location=self._info(city),
            date=day.isoformat(),
            sunrise=iso(rise) if rise is not None else None,
            sunset=iso(sets) if sets is not None else None,
            sunrise_local=hm_local(city, rise),
            sunset_local=hm_local(city, sets),
            day_length_minutes=length,
            polar=polar,
        )

    # -- alerts ----------------------------------------------------------------------------
    @tool("read", ["weather.alert"])
    def weather_list_alerts(
        self,
        location: Annotated[str | None, Field(max_length=100, description="only this location (id or name)")] = None,
        include_expired: Annotated[bool, Field(description="also list alerts that have ended")] = False,
    ) -> AlertList:
        """List weather alerts (heat, storm, wind) in force or upcoming, soonest first, for all or one location."""
        loc_id = self._resolve(location).location_id if location is not None else None
        views = []
        for a in sorted(self.state.alerts.values(), key=lambda a: (a.starts_at, a.alert_id)):
            if loc_id is not None and a.location_id != loc_id:
                continue
            if a.ends_at <= self.now and not include_expired:
                continue
            sub = self.state.subscriptions.get(a.location_id)
            subscribed = sub is not None and SEVERITY_ORDER[a.severity] >= SEVERITY_ORDER[sub.min_severity]
            views.append(
                AlertView(
                    alert=a,
                    location_name=LOCATIONS[a.location_id].name,
                    active=a.starts_at <= self.now < a.ends_at,
                    subscribed=subscribed,
                )
            )
        return AlertList(alerts=views, count=len(views))

    def _sub_view(self, sub: AlertSubscription) -> SubscriptionView:
        return SubscriptionView(
            subscription=sub,
            location_name=LOCATIONS[sub.location_id].name,
            matching_alerts=self._alerts_for(sub.location_id, sub.min_severity),
        )

    @tool(
        "write",
        ["weather.alert_subscription"],
        preconditions=["weather.saved_location"],
        remedies={"precondition_failed": ["weather_add_location"]},
    )
    def weather_subscribe_alerts(
        self,
        location: LocationArg,
        min_severity: Annotated[
            Severity, Field(description="minor | moderate | severe: the least severe alert to get")
        ] = "minor",
    ) -> SubscriptionView:
        """Subscribe to alerts of a saved location (precondition_failed if not saved: add it first).

        Subscribing again changes the minimum severity.
        """
        city = self._resolve(location)
        self._require_saved(city, "subscribe to its alerts")
        sub = self.state.subscriptions.get(city.location_id)
        if sub is None:
            sub = AlertSubscription(location_id=city.location_id, min_severity=min_severity, created_at=self.now)
            self.state.subscriptions[city.location_id] = sub
        else:
            sub.min_severity = min_severity
        return self._sub_view(sub)

    @tool("write", ["weather.alert_subscription"], destructive=True)
    def weather_unsubscribe_alerts(self, location: LocationArg) -> SubscriptionList:
        """Stop alerts for a location; returns the remaining subscriptions."""
        city = self._resolve(location)
        if self.state.subscriptions.pop(city.location_id, None) is None:
            raise ToolError(ErrorCode.NOT_FOUND, f"no alert subscription for {city.name}", field="location")
        return self.weather_list_alert_subscriptions()

    @tool("read", ["weather.alert_subscription"])
    def weather_list_alert_subscriptions(self) -> SubscriptionList:
        """List alert subscriptions with the current or upcoming alerts each one covers."""
        subs = [self._sub_view(s) for _, s in sorted(self.state.subscriptions.items())]
        return SubscriptionList(subscriptions=subs, count=len(subs))

    # -- settings --------------------------------------------------------------------------
    @tool("read", ["weather.settings"])
    def weather_get_units(self) -> UnitsView:
        """Return the unit system: metric (C, km/h, mm) or imperial (F, mph, in)."""
        return UnitsView(units=LABELS[self.state.units])

    @tool("write", ["weather.settings"])
    def weather_set_units(
        self, units: Annotated[Units, Field(description="metric (C, km/h, mm) or imperial (F, mph, in)")]
    ) -> UnitsView:
        """Set the unit system of every forecast: metric or imperial."""
        self.state.units = units
        return self.weather_get_units()
