"""The ``weather`` app (see :mod:`sandboxes.weather.app`)."""

from sandboxes.weather.app import WeatherApp
from sandboxes.weather.models import WeatherState

__all__ = ["WeatherApp", "WeatherState"]
