"""The world of one episode: every app, one virtual clock, one people directory.

Determinism rules (docs/design.md §2): every random choice comes from a named stream, ids are
drawn from the app's stream, time comes from the virtual clock, state is pydantic models.
``snapshot()`` is JSON-able, ``World.restore`` rebuilds it, ``state_hash()`` is the SHA-256 of
the canonical JSON, identical across processes for the same seed and calls.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, MutableMapping
from typing import Any

from mcpgym.kernel.app import App, SharedState, UnknownAppError, app_names, get_app, shared_apps, unknown_app_message
from mcpgym.kernel.clock import Clock
from mcpgym.kernel.people import Person, User, generate_people

DEFAULT_APPS: tuple[str, ...] = ("system", "shop")
"""Apps of an episode when none are named."""


def canonical_json(data: Any) -> str:
    """Serialise ``data`` as canonical JSON (sorted keys, no spaces, UTF-8 kept)."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def names_no_app(apps: Iterable[str] | str) -> bool:
    """True when an app list given explicitly names no app: an empty list, or a string or list
    of only blanks and commas (``""``, ``","``, ``[" "]``). The one rule of ``mcpgym serve --apps``,
    the control API's ``apps`` and ``/mcp?apps=``: such a list is refused, not read as
    "``system`` only" (:func:`normalise_apps` would give just the apps always included)."""
    names = apps.split(",") if isinstance(apps, str) else list(apps)
    return not any(isinstance(name, str) and name.strip() for name in names)


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
    always = shared_apps()
    return always + [a for a in known if a in names and a not in always]


class AppMap(MutableMapping[str, App]):
    """A world's apps by name, in the world's order (what ``World.apps`` is).

    For a world made from a template (:meth:`WorldTemplate.world`) the :class:`App` objects are
    made on first access (``apps[name]``, ``get``, iterating ``values``/``items``), each on
    the template's shared state: an idle episode so holds the apps it used, not one object
    per app of its world, and the world's snapshot, hash, checkpoints and views read an app
    not yet made from the template without making it. Any other world holds every app.
    Adding or removing an app makes every app first.

    Args:
        world: the owning world. template: the template whose apps are made lazily, or None.
    """

    __slots__ = ("_world", "_made", "_template")

    def __init__(self, world: World, template: WorldTemplate | None = None) -> None:
        self._world = world
        self._made: dict[str, App] = {}
        self._template = template

    def __getitem__(self, name: str) -> App:
        app = self._made.get(name)
        if app is not None:
            return app
        made = self._template
        if made is None or name not in made._shared:
            raise KeyError(name)
        app = self._made[name] = made._classes[name](self._world, made._shared[name])
        return app

    def __setitem__(self, name: str, app: App) -> None:
        self._make_all()
        self._made[name] = app

    def __delitem__(self, name: str) -> None:
        self._make_all()
        del self._made[name]

    def __iter__(self) -> Iterator[str]:
        made = self._template
        return iter(made.apps if made is not None else self._made)

    def __len__(self) -> int:
        made = self._template
        return len(made.apps) if made is not None else len(self._made)

    def __contains__(self, name: object) -> bool:
        made = self._template
        return name in made._shared if made is not None else name in self._made

    def _make_all(self) -> None:
        """Make every app not yet made and stop making apps lazily."""
        if self._template is not None:
            for name in self._template.apps:
                self[name]
            self._template = None

    def made(self) -> dict[str, App]:
        """The apps made so far, by name (every app of a world not made from a template);
        do not modify."""
        return self._made

    def app_class(self, name: str) -> type[App]:
        """The class of app ``name`` (KeyError when not in the world), without making the app."""
        app = self._made.get(name)
        if app is not None:
            return type(app)
        if self._template is None or name not in self._template._classes:
            raise KeyError(name)
        return self._template._classes[name]

    def shared(self, name: str) -> SharedState | None:
        """The :class:`SharedState` app ``name`` reads (the template's for an app not yet made),
        or None when the app owns its state."""
        app = self._made.get(name)
        if app is not None:
            return app.shared_state()
        assert self._template is not None
        return self._template._shared[name]

    def state_dump(self, name: str) -> dict[str, Any]:
        """:meth:`App.state_dump` of app ``name``, without making an app not yet made."""
        app = self._made.get(name)
        if app is not None:
            return app.state_dump()
        assert self._template is not None
        return self._template._shared[name].dump()

    def comparable_state(self, name: str) -> Any:
        """:meth:`App.comparable_state` of app ``name``, without making an app not yet made."""
        app = self._made.get(name)
        if app is not None:
            return app.comparable_state()
        assert self._template is not None
        return self._template._shared[name].comparable()


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
        self.apps = AppMap(self)
        self._template: WorldTemplate | None = None
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

    @classmethod
    def from_template(cls, seed: int = 0, apps: Iterable[str] | str | None = None) -> World:
        """The world ``World(seed, apps)`` would build, copied from the process's template of
        that (seed, app set) (:func:`template`; generated once): every app starts on the
        template's shared state and copies it on its first access (copy on write), so apps
        no call touches cost nothing. Same snapshots and hashes as a freshly generated world.

        Raises:
            KeyError: for an unknown app name.
        """
        return template(seed, apps).world()

    # -- persistence ---------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """Return the whole world as JSON-able data (see :meth:`restore`).

        An app still on a shared state (a template's, a checkpoint's) contributes the dump
        cached on that state, and a world made from a template its template's dumps of the user
        and the people (shared with it, no tool changes them): the same objects in every such
        snapshot, so callers must treat a snapshot as read-only (copy it before changing it)."""
        made = self._template
        if made is not None and self.user is made._user and self.people is made._people:
            user, people = made.snapshot["user"], made.snapshot["people"]
        else:
            user, people = self.user.model_dump(mode="json"), [p.model_dump(mode="json") for p in self.people]
        return {
            "seed": self.seed,
            "apps": list(self.apps),
            "clock": self.clock.model_dump(mode="json"),
            "user": user,
            "people": people,
            "state": {name: self.apps.state_dump(name) for name in self.apps},
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
        """SHA-256 hex digest of the canonical JSON of :meth:`snapshot` (for a world still as its
        template made it, every app on the template's state and the clock unchanged: the
        template's hash, computed once)."""
        made = self._template
        if made is not None and made.unchanged(self):
            return made.state_hash()
        return hashlib.sha256(canonical_json(self.snapshot()).encode("utf-8")).hexdigest()

    def comparable(self) -> dict[str, Any]:
        """Per-app state with volatile fields removed (what the judge compares)."""
        return {name: self.apps.comparable_state(name) for name in self.apps}

    def park(self) -> int:
        """Keep every state this world's apps own as JSON text until its next access
        (:meth:`App.park`): for a world that stays alive but idle, so that the garbage collector
        has next to nothing of it to scan. Snapshots, hashes and views are unchanged. Not to be
        called while a tool call runs on this world (the episode's lock guards it).

        Returns:
            How many app states were parked.
        """
        return sum(app.park() for app in self.apps.made().values())

    # -- checkpoints (used by fault injection) -------------------------------------------
    def checkpoint(self) -> dict[str, Any]:
        """Return a checkpoint of the mutable state (clock and app states). Nothing is copied:
        each app's current state is frozen as a :class:`SharedState` that the checkpoint keeps,
        and the app copies it before its next change (copy on write)."""
        return {
            "clock": self.clock.now,
            "state": {
                name: app.share_state() if app is not None else self.apps.shared(name)
                for name, app in ((n, self.apps.made().get(n)) for n in self.apps)
            },
        }

    def rollback(self, checkpoint: dict[str, Any]) -> None:
        """Return the world to ``checkpoint`` (from :meth:`checkpoint`), keeping app objects."""
        self.clock.now = checkpoint["clock"]
        for name, shared in checkpoint["state"].items():
            app = self.apps.made().get(name)
            if app is not None:
                app.set_shared(shared)
            elif shared is not self.apps.shared(name):  # an app not yet made is still the template's
                self.apps[name].set_shared(shared)

    def view_at(self, checkpoint: dict[str, Any]) -> World:
        """Return a detached copy of this world as it was at ``checkpoint`` (for stale reads)."""
        other = World(self.seed, _empty=True)
        other.user, other.people = self.user, self.people
        other.clock = Clock(now=checkpoint["clock"])
        for name, shared in checkpoint["state"].items():
            other.apps[name] = self.apps.app_class(name)(other, shared)
        return other


class WorldTemplate:
    """The generated world of one (world seed, app set), kept read-only; episodes' worlds are
    made from it by :meth:`world` (copy on write per app).

    Attributes:
        seed: the world seed. apps: the normalised app names.
        snapshot: the template's :meth:`World.snapshot`, built once: the initial snapshot of
            every world made from it (shared: read-only).
    """

    def __init__(self, seed: int, apps: Iterable[str] | str | None) -> None:
        generated = World(seed, apps)
        self.seed = generated.seed
        self.apps = list(generated.apps)
        self._now = generated.clock.now
        self._user = generated.user
        self._people = generated.people
        self._classes = {name: type(app) for name, app in generated.apps.items()}
        self._shared = {name: app.share_state() for name, app in generated.apps.items()}
        self.snapshot: dict[str, Any] = generated.snapshot()
        self._hash: str | None = None

    def world(self) -> World:
        """A new world on this template's states (each app copies its state on first access).
        The user and the people are shared (no tool changes them)."""
        world = World(self.seed, _empty=True)
        world.clock = Clock(now=self._now)
        world.user, world.people = self._user, self._people
        world.apps = AppMap(world, self)  # each app made on first access, on the shared state
        world._template = self
        return world

    def unchanged(self, world: World) -> bool:
        """True when ``world`` (made by :meth:`world`) still holds this template's state: the
        same apps, each on the template's shared state, and the template's clock."""
        return (
            world.clock.now == self._now
            and world.user is self._user
            and world.people is self._people
            and len(world.apps) == len(self._shared)
            and all(app.shared_state() is self._shared.get(name) for name, app in world.apps.made().items())
            and all(name in self._shared for name in world.apps)
        )

    def state_hash(self) -> str:
        """The hash of :attr:`snapshot` (:meth:`World.state_hash`), computed once."""
        if self._hash is None:
            self._hash = hashlib.sha256(canonical_json(self.snapshot).encode("utf-8")).hexdigest()
        return self._hash

    def shared_state(self, name: str) -> SharedState:
        """The template's shared state of app ``name`` (KeyError when not in this world)."""
        return self._shared[name]


TEMPLATE_LIMIT = 128
"""Most templates a process keeps (least recently used dropped first: each holds its worlds'
state, dumps and views). A run plays each task's agents back to back, so they share one
template; the ``full`` suite uses 844 (seed, app set) pairs, more than are kept."""

_TEMPLATES: OrderedDict[tuple[int, tuple[str, ...], tuple[type[App], ...]], WorldTemplate] = OrderedDict()
_TEMPLATES_LOCK = threading.Lock()


def template(seed: int = 0, apps: Iterable[str] | str | None = None) -> WorldTemplate:
    """The process's :class:`WorldTemplate` of ``(seed, apps)``, generated on first use and
    kept for the last :data:`TEMPLATE_LIMIT` pairs.

    Raises:
        KeyError: (:class:`UnknownAppError`) for an unknown app name.
    """
    names = tuple(normalise_apps(apps))
    key = (int(seed), names, tuple(get_app(n) for n in names))  # a re-registered app class is another template
    with _TEMPLATES_LOCK:
        hit = _TEMPLATES.get(key)
        if hit is not None:
            _TEMPLATES.move_to_end(key)
            return hit
    made = WorldTemplate(key[0], list(key[1]))
    with _TEMPLATES_LOCK:
        hit = _TEMPLATES.setdefault(key, made)
        _TEMPLATES.move_to_end(key)
        while len(_TEMPLATES) > TEMPLATE_LIMIT:
            _TEMPLATES.popitem(last=False)
    return hit


def clear_templates() -> None:
    """Forget every cached template (tests; after registering a different app class)."""
    with _TEMPLATES_LOCK:
        _TEMPLATES.clear()


__all__ = [
    "AppMap",
    "World",
    "WorldTemplate",
    "DEFAULT_APPS",
    "TEMPLATE_LIMIT",
    "canonical_json",
    "clear_templates",
    "names_no_app",
    "normalise_apps",
    "template",
]
