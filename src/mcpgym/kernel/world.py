"""The world of one episode: every app, one virtual clock, one people directory.

Determinism rules (docs/design.md §2): every random choice comes from a named stream, ids are
drawn from the app's stream, time comes from the virtual clock, state is pydantic models.
``snapshot()`` is JSON-able, ``World.restore`` rebuilds it, ``state_hash()`` is the SHA-256 of
the canonical JSON, identical across processes for the same seed and calls.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from mcpgym.kernel.app import App, UnknownAppError, app_names, get_app, unknown_app_message
from mcpgym.kernel.clock import Clock
from mcpgym.kernel.people import Person, User, generate_people
from mcpgym.kernel.volatile import comparable

DEFAULT_APPS: tuple[str, ...] = ("system", "shop")
"""Apps of an episode when none are named."""


def canonical_json(data: Any) -> str:
    """Serialise ``data`` as canonical JSON (sorted keys, no spaces, UTF-8 kept)."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def normalise_apps(apps: Iterable[str] | str | None) -> list[str]:
    """Return the app list of an episode: the apps every world holds (``App.always_included``:
    the built-in ``system``) first, then the others asked for, in registry order, no
    duplicates, known names only.

    Args:
        apps: names, a comma-separated string, ``"all"``, or None for :data:`DEFAULT_APPS`.

    Raises:
        UnknownAppError: (a KeyError) naming the unknown app and the known ones; also for an
            app list that is not a string or a list of strings.
    """
    if apps is None:
        names = list(DEFAULT_APPS)
    elif isinstance(apps, str):
        names = app_names() if apps.strip() == "all" else [a.strip() for a in apps.split(",") if a.strip()]
    else:
        names = list(apps)
    known = app_names()
    for name in names:
        if not isinstance(name, str) or name not in known:
            raise UnknownAppError(unknown_app_message(name, known))
    always = [a for a in known if get_app(a).always_included]
    return always + [a for a in known if a in names and a not in always]


class World:
    """All sandbox state of one episode.

    Args:
        seed: the world seed (int); fixes every app's initial data.
        apps: app names (see :func:`normalise_apps`); ``system`` is always included because
            it owns the wallet, privileges and payment authorisation the others use.

    Attributes:
        seed, clock (:class:`Clock`), user (:class:`User`), people (list of :class:`Person`),
        apps (name -> :class:`App` instance).

    Raises:
        KeyError: for an unknown app name.
    """

    user: User
    people: list[Person]

    def __init__(self, seed: int = 0, apps: Iterable[str] | str | None = None, *, _empty: bool = False) -> None:
        self.seed = int(seed)
        self.clock = Clock()
        self.apps: dict[str, App] = {}
        if _empty:  # restore() and view_at() set the user and the people themselves
            return
        self.user, self.people = generate_people(self.seed)
        for name in normalise_apps(apps):
            cls = get_app(name)
            self.apps[name] = cls(self, cls.generate(self))

    # -- access -------------------------------------------------------------------------
    def app(self, name: str) -> App:
        """Return the app ``name``.

        Raises:
            KeyError: when it is not part of this world.
        """
        return self.apps[name]

    def person(self, person_id: str) -> Person | None:
        """Return the person with ``person_id``, or None."""
        for p in self.people:
            if p.person_id == person_id:
                return p
        return None

    # -- persistence ---------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """Return the whole world as JSON-able data (see :meth:`restore`)."""
        return {
            "seed": self.seed,
            "apps": list(self.apps),
            "clock": self.clock.model_dump(mode="json"),
            "user": self.user.model_dump(mode="json"),
            "people": [p.model_dump(mode="json") for p in self.people],
            "state": {name: app.state.model_dump(mode="json") for name, app in self.apps.items()},
        }

    @classmethod
    def restore(cls, snapshot: dict[str, Any]) -> World:
        """Rebuild a world from :meth:`snapshot` output.

        Raises:
            KeyError: for an unknown app; pydantic ``ValidationError`` for malformed state.
        """
        world = cls(snapshot["seed"], _empty=True)
        world.clock = Clock.model_validate(snapshot["clock"])
        world.user = User.model_validate(snapshot["user"])
        world.people = [Person.model_validate(p) for p in snapshot["people"]]
        for name in snapshot["apps"]:
            app_cls = get_app(name)
            world.apps[name] = app_cls(world, app_cls.State.model_validate(snapshot["state"][name]))
        return world

    def state_hash(self) -> str:
        """SHA-256 hex digest of the canonical JSON of :meth:`snapshot`."""
        return hashlib.sha256(canonical_json(self.snapshot()).encode("utf-8")).hexdigest()

    def comparable(self) -> dict[str, Any]:
        """Per-app state with volatile fields removed (what the judge compares)."""
        return {name: comparable(app.state) for name, app in self.apps.items()}

    # -- checkpoints (used by fault injection) -------------------------------------------
    def checkpoint(self) -> dict[str, Any]:
        """Return an in-memory copy of the mutable state (clock and app states)."""
        return {
            "clock": self.clock.now,
            "state": {name: app.state.model_copy(deep=True) for name, app in self.apps.items()},
        }

    def rollback(self, checkpoint: dict[str, Any]) -> None:
        """Return the world to ``checkpoint`` (from :meth:`checkpoint`), keeping app objects."""
        self.clock.now = checkpoint["clock"]
        for name, state in checkpoint["state"].items():
            self.apps[name].state = state.model_copy(deep=True)

    def view_at(self, checkpoint: dict[str, Any]) -> World:
        """Return a detached copy of this world as it was at ``checkpoint`` (for stale reads)."""
        other = World(self.seed, _empty=True)
        other.user, other.people = self.user, self.people
        other.clock = Clock(now=checkpoint["clock"])
        for name, state in checkpoint["state"].items():
            other.apps[name] = type(self.apps[name])(other, state.model_copy(deep=True))
        return other


__all__ = ["World", "DEFAULT_APPS", "canonical_json", "normalise_apps"]
