"""The weather app through the real call path (ToolInvoker): seeded state, deterministic and
clock-dependent forecasts, units, sun times, saved/primary locations and the alert remedy chain."""

from __future__ import annotations

import pytest

from mcpgym.kernel.people import CITIES
from mcpgym.kernel.world import World
from mcpgym.sandboxes.weather import WeatherApp
from mcpgym.sandboxes.weather.climate import LOCATIONS, Event, hour_weather
from mcpgym.tools.invoke import ToolInvoker
from tests.support.app_helpers import err, ok


@pytest.fixture()
def inv() -> ToolInvoker:
    return ToolInvoker(World(42, ["weather"]))


def unsaved(inv: ToolInvoker) -> str:
    saved = set(inv.world.app("weather").state.saved)
    return next(k for k in sorted(LOCATIONS) if k not in saved)


def test_catalogue_and_locations() -> None:
    tools = WeatherApp.tools
    assert len(tools) == 17
    assert tools["weather_get_forecast"].alternatives == ("weather_get_forecast_by_coordinates",)
    assert tools["weather_get_forecast_by_coordinates"].alternatives == ("weather_get_forecast",)
    assert tools["weather_subscribe_alerts"].remedies["precondition_failed"] == ("weather_add_location",)
    assert tools["weather_remove_location"].remedies["precondition_failed"] == ("weather_set_primary_location",)
    assert all(c.lower() in LOCATIONS for c in CITIES) and len(LOCATIONS) == 16
    inv = ToolInvoker(World(1, ["weather"]))
    assert ok(inv, "weather_list_locations")["count"] == 16
    assert [x["location_id"] for x in ok(inv, "weather_list_locations", query="new")["locations"]] == ["new-york"]


def test_seeded_state() -> None:
    world = World(42, ["weather"])
    st = world.app("weather").state
    home = world.user.city.lower()
    assert st.primary_location_id == home and st.saved[home].label == "Home"
    assert len(st.saved) == 3 and st.units == "metric"
    assert list(st.subscriptions) == [home] and st.subscriptions[home].min_severity == "moderate"
    assert len(st.alerts) == 4 and st.alerts["wa-001"].location_id == home
    for a in st.alerts.values():
        assert a.ends_at - a.starts_at >= 6 * 3600
        assert world.clock.now - 6 * 3600 <= a.starts_at <= world.clock.now + 96 * 3600
    assert World(42, ["weather"]).state_hash() == world.state_hash() != World(43, ["weather"]).state_hash()


def test_forecast_is_deterministic_across_calls_worlds_and_seeds(inv: ToolInvoker) -> None:
    first = ok(inv, "weather_get_forecast", location="Berlin", days=10)
    assert ok(inv, "weather_get_forecast", location="berlin", days=10) == first
    assert len(first["days"]) == 10 and first["days"][0]["date"] == "2026-06-01"
    twin = ToolInvoker(World(42, ["weather"]))
    assert ok(twin, "weather_get_forecast", location="Berlin", days=10) == first
    other = ToolInvoker(World(7, ["weather"]))
    temps = [d["temperature_max"] for d in first["days"]]
    assert [
        d["temperature_max"] for d in ok(other, "weather_get_forecast", location="Berlin", days=10)["days"]
    ] != temps
    for day in first["days"]:
        assert day["temperature_min"] <= day["temperature_max"]
        assert 0 <= day["precipitation_probability"] <= 100 and day["precipitation_total"] >= 0
        assert day["temperature_min"] > -15 and day["temperature_max"] < 45  # June in Berlin
    hourly = ok(inv, "weather_get_hourly_forecast", location="Berlin", hours=48)["hours"]
    assert len(hourly) == 48 and hourly[0]["time"] == "2026-06-01T09:00:00Z"
    assert hourly[0]["local_time"] == "2026-06-01T10:00+01:00"


def test_forecast_moves_with_the_virtual_clock(inv: ToolInvoker) -> None:
    hourly = ok(inv, "weather_get_hourly_forecast", hours=6)["hours"]
    daily = ok(inv, "weather_get_forecast", days=3)["days"]
    current = ok(inv, "weather_get_current_conditions")
    assert (current["temperature"], current["condition"]) == (hourly[0]["temperature"], hourly[0]["condition"])

    ok(inv, "system_wait", seconds=3600)
    later = ok(inv, "weather_get_hourly_forecast", hours=6)["hours"]
    assert later[:5] == hourly[1:]  # same absolute hour, same weather; the window moved by one
    assert ok(inv, "weather_get_current_conditions")["temperature"] == hourly[1]["temperature"]

    ok(inv, "system_wait", seconds=86_400)
    next_day = ok(inv, "weather_get_forecast", days=3)["days"]
    assert next_day[:2] == daily[1:]
    assert next_day[0]["date"] == "2026-06-02"
    # the diurnal cycle: afternoon is warmer than the small hours, averaged over two days
    hours = ok(inv, "weather_get_hourly_forecast", location="madrid", hours=48)["hours"]
    by_hour: dict[str, list[float]] = {}
    for h in hours:
        by_hour.setdefault(h["local_time"][11:13], []).append(h["temperature"])
    assert sum(by_hour["15"]) > sum(by_hour["05"])


def test_units_convert_every_number(inv: ToolInvoker) -> None:
    metric = ok(inv, "weather_get_hourly_forecast", location="rome", hours=12)
    assert metric["units"] == {"system": "metric", "temperature": "C", "wind_speed": "km/h", "precipitation": "mm"}
    assert ok(inv, "weather_set_units", units="imperial")["units"]["temperature"] == "F"
    assert ok(inv, "weather_get_units")["units"]["system"] == "imperial"
    imperial = ok(inv, "weather_get_hourly_forecast", location="rome", hours=12)
    for m, i in zip(metric["hours"], imperial["hours"], strict=False):
        assert i["temperature"] == round(m["temperature"] * 9 / 5 + 32, 1)
        assert i["wind_speed"] == pytest.approx(m["wind_speed"] / 1.609344, abs=0.06)
        assert i["precipitation"] == pytest.approx(m["precipitation"] / 25.4, abs=0.006)
        assert (i["humidity"], i["condition"]) == (m["humidity"], m["condition"])
    assert err(inv, "weather_set_units", units="kelvin")["code"] == "invalid_argument"


def test_sun_times(inv: ToolInvoker) -> None:
    lisbon = ok(inv, "weather_get_sun_times", location="lisbon", date_iso="2026-06-21")
    assert "05:05" <= lisbon["sunrise_local"] <= "05:20" and "20:00" <= lisbon["sunset_local"] <= "20:10"
    assert lisbon["polar"] == "normal" and 14 * 60 < lisbon["day_length_minutes"] < 15 * 60 + 30
    oslo_summer = ok(inv, "weather_get_sun_times", location="oslo", date_iso="2026-06-21")["day_length_minutes"]
    oslo_winter = ok(inv, "weather_get_sun_times", location="oslo", date_iso="2026-12-21")["day_length_minutes"]
    assert oslo_summer > 18 * 60 and oslo_winter < 6 * 60 + 30
    sydney = ok(inv, "weather_get_sun_times", location="sydney", date_iso="2026-06-21")
    assert sydney["day_length_minutes"] < 10 * 60 + 30  # southern winter
    assert sydney["sunrise"].startswith("2026-06-20T")  # 07:00 local is the previous day in UTC
    today = ok(inv, "weather_get_sun_times")
    assert today["date"] == "2026-06-01" and today["location"]["primary"] is True
    assert err(inv, "weather_get_sun_times", date_iso="21/06/2026")["code"] == "invalid_argument"
    assert err(inv, "weather_get_sun_times", date_iso="1900-01-01")["code"] == "invalid_argument"


def test_alert_subscription_remedy_chain(inv: ToolInvoker) -> None:
    loc = unsaved(inv)
    e = err(inv, "weather_subscribe_alerts", location=loc, min_severity="severe")
    assert e["code"] == "precondition_failed" and e["details"]["location_id"] == loc
    assert "weather_add_location" in e["message"]
    added = ok(inv, "weather_add_location", location=loc, label="Trip")
    assert added["added"] is True and added["location"]["label"] == "Trip" and added["count"] == 4
    at = inv.world.clock.now
    sub = ok(inv, "weather_subscribe_alerts", location=loc, min_severity="severe")
    assert sub["subscription"] == {"location_id": loc, "min_severity": "severe", "created_at": at}
    assert all(a["severity"] == "severe" for a in sub["matching_alerts"])
    subs = ok(inv, "weather_list_alert_subscriptions")
    assert subs["count"] == 2 and {s["subscription"]["location_id"] for s in subs["subscriptions"]} >= {loc}
    assert ok(inv, "weather_unsubscribe_alerts", location=loc)["count"] == 1
    assert err(inv, "weather_unsubscribe_alerts", location=loc)["code"] == "not_found"
    assert err(inv, "weather_subscribe_alerts", location="Atlantis")["code"] == "not_found"


def test_alerts_listing_and_their_weather(inv: ToolInvoker) -> None:
    world = inv.world
    state = world.app("weather").state
    alerts = ok(inv, "weather_list_alerts")
    assert alerts["count"] == sum(a.ends_at > world.clock.now for a in state.alerts.values())
    starts = [a["alert"]["starts_at"] for a in alerts["alerts"]]
    assert starts == sorted(starts)
    home = state.primary_location_id
    for view in alerts["alerts"]:
        a = view["alert"]
        sub = state.subscriptions.get(a["location_id"])
        order = ["minor", "moderate", "severe"]
        expect = sub is not None and order.index(a["severity"]) >= order.index(sub.min_severity)
        assert view["subscribed"] is expect
        assert view["active"] is (a["starts_at"] <= world.clock.now < a["ends_at"])
    mine = ok(inv, "weather_list_alerts", location=home)["alerts"]
    assert all(v["alert"]["location_id"] == home for v in mine)
    # an alert changes the weather of the hours it covers, and only those
    a = state.alerts["wa-001"]
    city = LOCATIONS[a.location_id]
    ev = Event(a.location_id, a.kind, a.severity, a.starts_at, a.ends_at)
    inside, outside = a.starts_at + 3600, a.ends_at + 3600
    plain, with_event = hour_weather(world.seed, city, inside), hour_weather(world.seed, city, inside, [ev])
    assert plain != with_event
    assert hour_weather(world.seed, city, outside) == hour_weather(world.seed, city, outside, [ev])
    if a.kind == "heat":
        assert with_event.temp_c > plain.temp_c
    else:
        assert with_event.wind_kmh > plain.wind_kmh
    # the daily forecast names the alert on the days it covers
    days = ok(inv, "weather_get_forecast", location=home, days=10)["days"]
    assert any("wa-001" in d["alert_ids"] for d in days)
    ok(inv, "system_wait", seconds=a.ends_at - world.clock.now + 10)
    assert "wa-001" not in {v["alert"]["alert_id"] for v in ok(inv, "weather_list_alerts")["alerts"]}
    expired = ok(inv, "weather_list_alerts", include_expired=True)["alerts"]
    assert any(v["alert"]["alert_id"] == "wa-001" and v["active"] is False for v in expired)


def test_primary_and_saved_locations(inv: ToolInvoker) -> None:
    state = inv.world.app("weather").state
    home = state.primary_location_id
    loc = unsaved(inv)
    assert err(inv, "weather_set_primary_location", location=loc)["code"] == "precondition_failed"
    e = err(inv, "weather_remove_location", location=home)
    assert e["code"] == "precondition_failed" and "weather_set_primary_location" in e["message"]
    ok(inv, "weather_add_location", location=loc)
    assert ok(inv, "weather_set_primary_location", location=loc)["location"]["location_id"] == loc
    assert ok(inv, "weather_get_current_conditions")["location"]["location_id"] == loc
    removed = ok(inv, "weather_remove_location", location=home)
    assert removed["unsubscribed"] is True and removed["count"] == 3
    assert home not in state.subscriptions
    again = ok(inv, "weather_add_location", location=loc, label="New home")
    assert again["added"] is False and again["location"]["label"] == "New home" and again["count"] == 3
    for key in sorted(LOCATIONS):
        if len(state.saved) == 10:
            break
        ok(inv, "weather_add_location", location=key)
    e = err(inv, "weather_add_location", location=unsaved(inv))
    assert e["code"] == "precondition_failed"
    assert WeatherApp.tools["weather_add_location"].remedies["precondition_failed"] == ("weather_remove_location",)
    listing = ok(inv, "weather_list_saved_locations")
    assert listing["count"] == 10 and listing["primary_location_id"] == loc
    assert [x["location"]["name"] for x in listing["locations"]] == sorted(
        x["location"]["name"] for x in listing["locations"]
    )


def test_forecast_by_coordinates_is_an_alternative(inv: ToolInvoker) -> None:
    by_name = ok(inv, "weather_get_forecast", location="Paris", days=4)
    by_coords = ok(inv, "weather_get_forecast_by_coordinates", latitude=48.85, longitude=2.29, days=4)
    assert by_coords["days"] == by_name["days"] and by_coords["location"]["location_id"] == "paris"
    assert 0 < by_coords["distance_km"] < 10 and by_name["distance_km"] is None
    e = err(inv, "weather_get_forecast_by_coordinates", latitude=30.0, longitude=-40.0)
    assert e["code"] == "not_found" and e["details"]["distance_km"] > 100
    assert err(inv, "weather_get_forecast_by_coordinates", latitude=91, longitude=0)["code"] == "invalid_argument"
    assert err(inv, "weather_get_forecast", location="Paris", days=11)["code"] == "invalid_argument"
