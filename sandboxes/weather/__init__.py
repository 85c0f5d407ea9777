"""The ``weather`` app (see :mod:`mcpgym.sandboxes.weather.app`)."""

from mcpgym.sandboxes.weather.app import WeatherApp
from mcpgym.sandboxes.weather.models import WeatherState

__all__ = ["WeatherApp", "WeatherState"]
