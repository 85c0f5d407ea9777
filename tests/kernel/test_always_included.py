"""``App.always_included``: which apps every world holds is declared by the apps, not named in
the kernel (the built-in ``system`` declares it; a plugin can too)."""

from __future__ import annotations

import pytest

from mcpgym.kernel.app import App, AppState, get_app, register_app, unregister_app
from mcpgym.kernel.world import DEFAULT_APPS, World, normalise_apps
from mcpgym.tools.conformance.common import world_apps


class BadgeState(AppState):
    """A badge number every other app may read."""

    badge: int = 0


class BadgeApp(App):
    """A throwaway plugin that every world must hold, like ``system``."""

    name, title, State, version = "badge", "Badge", BadgeState, "1.0"
    always_included = True

    @classmethod
    def generate(cls, world) -> BadgeState:
        return BadgeState(badge=cls.stream(world, "badge").randint(100, 999))


@pytest.fixture()
def badge():
    register_app(BadgeApp)
    yield BadgeApp
    unregister_app(BadgeApp.name)


def test_system_declares_it_and_every_world_holds_it_first():
    assert get_app("system").always_included is True
    assert not any(get_app(a).always_included for a in ("shop", "talk", "flights", "weather"))
    assert normalise_apps(["weather", "shop"]) == ["system", "shop", "weather"]
    assert normalise_apps("talk") == ["system", "talk"]
    assert normalise_apps(None) == list(DEFAULT_APPS)
    assert list(World(3, ["flights"]).apps) == ["system", "flights"]
    assert world_apps("system") == ["system"] and world_apps("news") == ["system", "news"]


def test_a_plugin_that_declares_it_joins_every_world(badge):
    assert normalise_apps(["shop"]) == ["system", "badge", "shop"]
    assert normalise_apps(["badge", "system"]) == ["system", "badge"]  # no duplicates
    world = World(7, ["talk"])
    assert list(world.apps) == ["system", "badge", "talk"]
    assert 100 <= world.apps["badge"].state.badge <= 999
    assert World.restore(world.snapshot()).state_hash() == world.state_hash()
    assert world_apps("talk") == ["system", "badge", "talk"]


def test_without_the_plugin_worlds_are_as_before(badge):
    unregister_app("badge")
    try:
        assert normalise_apps(["shop"]) == ["system", "shop"]
    finally:
        register_app(BadgeApp)
