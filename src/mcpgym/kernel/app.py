"""The sandbox app base class and the app registry.

An app is one plugin bundle: a subclass of :class:`App` (its pydantic state model, a
``generate`` building the seeded initial state, ``@tool`` methods), its ``version`` and
optionally a tasks file (``tasks``, a path relative to the module defining the class). It is
found through the ``mcpgym.apps`` entry-point group: the entry point's name is the app name
and its object is the class (``myapp = "my_pkg.app:MyApp"``); an entry point naming a module
instead registers the apps that module decorates with :func:`register_app`. The built-in
apps are declared the same way in mcpgym's pyproject.toml. :func:`mcpgym.check_app` runs the
conformance suite on a class.
"""

from __future__ import annotations

import inspect
import json
import random
import sys
import threading
from abc import ABC, abstractmethod
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict

from mcpgym.kernel.exceptions import InputError
from mcpgym.kernel.rng import rng, stable_id
from mcpgym.kernel.shorten import cap_message, short
from mcpgym.kernel.spec import ToolSpec, collect_specs
from mcpgym.kernel.volatile import VOLATILE, comparable

if TYPE_CHECKING:
    from mcpgym.kernel.world import World

BUILTIN_APPS: tuple[str, ...] = ("system", "shop", "talk", "flights", "stocks", "weather", "news", "office")
"""Modules under ``sandboxes`` that hold the built-in apps, in catalog order."""

ENTRY_POINT_GROUP = "mcpgym.apps"
"""The entry-point group every app bundle (built-in or outside) is declared in."""

_REGISTRY: dict[str, type[App]] = {}
_BROKEN: dict[str, AppLoadError] = {}
"""Entry-point name -> why it could not be loaded (:func:`broken_apps`)."""
_WARNED: set[str] = set()
_LOADED = False
_LOAD_LOCK = threading.RLock()


class AppLoadError(InputError, RuntimeError):
    """An ``mcpgym.apps`` entry point could not be loaded; the message names the entry point."""


class UnknownAppError(InputError, KeyError):
    """An app list names an app that is not registered; the message names it and the known
    apps. A ``KeyError`` (and :meth:`__str__` gives the plain message)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class AppState(BaseModel):
    """Base of every app's state model.

    Attributes:
        id_counter: how many ids the app has drawn (volatile: incidental to outcomes).
    """

    model_config = ConfigDict(validate_assignment=False, extra="forbid")

    id_counter: Annotated[int, VOLATILE] = 0


class SharedState:
    """An app state that several worlds read and none writes: a template world's generated
    state, or a world's state frozen by a checkpoint or parked (:meth:`App.park`). An
    :class:`App` holding one copies it on its first access to ``App.state``; until then it
    reads the shared object.

    The JSON dump and the comparable view (:func:`mcpgym.kernel.volatile.comparable`) are
    computed once, on first use, and shared too: callers must not modify them. Copies are made
    from canonical JSON text (``model_validate_json``), so a copy shares no container with the
    original whatever the state's field types.

    A *parked* state (:meth:`parked`) holds only that JSON text (one ``bytes`` object, which the
    garbage collector does not track): its model, dump and view are made afresh on each use and
    not kept, so an idle episode's changed apps cost the collector nothing.

    Args:
        state: the state; must not be modified from now on.
    """

    __slots__ = ("_model", "_cls", "_dump", "_json", "_comparable")

    def __init__(self, state: AppState) -> None:
        self._model: AppState | None = state
        self._cls: type[AppState] = type(state)
        self._dump: dict[str, Any] | None = None
        self._json: str | bytes | None = None
        self._comparable: Any = None

    @classmethod
    def parked(cls, state: AppState) -> SharedState:
        """``state`` kept as its JSON text only (see the class docstring); ``state`` may be
        changed or dropped afterwards."""
        made = cls.__new__(cls)
        made._model, made._cls, made._dump, made._comparable = None, type(state), None, None
        made._json = state.model_dump_json()
        return made

    @property
    def is_parked(self) -> bool:
        """True for a state kept as JSON text only (:meth:`parked`)."""
        return self._model is None

    @property
    def state(self) -> AppState:
        """The shared model (do not modify it); for a parked state, a fresh copy each time."""
        if self._model is None:
            return self.copy()
        return self._model

    def held(self) -> AppState | None:
        """The shared model, or None for a parked state."""
        return self._model

    def dump(self) -> dict[str, Any]:
        """``state.model_dump(mode="json")``, computed once (shared: do not modify); for a parked
        state the JSON text parsed afresh each time."""
        if self._model is None:
            assert self._json is not None  # a parked state always has its text
            parsed: dict[str, Any] = json.loads(self._json)
            return parsed
        if self._dump is None:
            self._dump = self._model.model_dump(mode="json")
        return self._dump

    def copy(self) -> AppState:
        """A fresh, independent copy of the state (validated from its JSON text)."""
        if self._json is None:
            assert self._model is not None
            self._json = self._model.model_dump_json()
        return self._cls.model_validate_json(self._json)

    def comparable(self) -> Any:
        """The state's comparable view (volatile fields removed), computed once (shared); for a
        parked state computed afresh each time."""
        if self._model is None:
            return comparable(self.copy())
        if self._comparable is None:
            self._comparable = comparable(self._model)
        return self._comparable


class App(ABC):
    """A stateful sandbox app inside a :class:`~mcpgym.kernel.world.World`.

    Subclasses set ``name`` (lowercase, used as the tool-name prefix), ``title``, ``State``
    (an :class:`AppState` subclass) and implement :meth:`generate`; a bundle also sets
    ``version`` (recorded in every trajectory and run manifest; when left empty, the version
    of the distribution whose entry point loaded the class is used) and ``tasks`` (its tasks
    file, YAML or JSON as the task registry parses, relative to the directory of the module
    defining the class; None: no bundled tasks). An app that the others build on (the
    built-in ``system``: wallet, privileges, payment authorisation) sets
    ``always_included = True``: every world then holds it, first, whatever apps were asked for.

    Attributes:
        world: the owning world (clock, people, other apps).
        state: this app's pydantic state.
    """

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    version: ClassVar[str] = ""
    tasks: ClassVar[str | None] = None
    always_included: ClassVar[bool] = False
    State: ClassVar[type[AppState]] = AppState
    tools: ClassVar[dict[str, ToolSpec]] = {}

    def __init__(self, world: World, state: AppState | SharedState) -> None:
        self.world = world
        self._state: AppState | None
        self._shared: SharedState | None
        if isinstance(state, SharedState):
            self._state, self._shared = state.held(), state
        else:
            self._state, self._shared = state, None

    @property
    def state(self) -> AppState:
        """This app's state, owned by this app: a state shared with a template world or a
        checkpoint, or parked (:class:`SharedState`), is copied first, on the first access
        (copy on write: an app no call touches is never copied)."""
        shared = self._shared
        if shared is not None:
            self._state = shared.copy()
            self._shared = None
        assert self._state is not None  # owned from here on
        return self._state

    @state.setter
    def state(self, value: AppState) -> None:
        self._state, self._shared = value, None

    def peek_state(self) -> AppState:
        """The state without taking ownership: possibly shared with other worlds, so callers
        must not modify it (snapshots, hashes and the judge's comparable views read it). For a
        parked app, a fresh copy each time (:meth:`park`)."""
        if self._state is None:
            assert self._shared is not None
            return self._shared.state
        return self._state

    def share_state(self) -> SharedState:
        """Freeze the current state as a :class:`SharedState` (kept by a checkpoint or a
        template) and return it; the app copies it again before its next change."""
        if self._shared is None:
            assert self._state is not None
            self._shared = SharedState(self._state)
        return self._shared

    def shared_state(self) -> SharedState | None:
        """The :class:`SharedState` this app still reads (not yet copied), or None when it owns its state."""
        return self._shared

    def set_shared(self, shared: SharedState) -> None:
        """Make ``shared`` this app's state, copied on first access (rollback to a checkpoint)."""
        self._state, self._shared = shared.held(), shared

    def park(self) -> bool:
        """Keep a state this app owns as JSON text only (:meth:`SharedState.parked`), until the
        next access copies it back: an idle episode then holds no model objects for the garbage
        collector to scan. The content is unchanged (same dump, hash and view). An app on a
        state shared with a template or a checkpoint is left alone (it holds nothing of its own).

        Returns:
            True when a state was parked.
        """
        if self._shared is not None or self._state is None:
            return False
        self._shared = SharedState.parked(self._state)
        self._state = None
        return True

    def comparable_state(self) -> Any:
        """:func:`mcpgym.kernel.volatile.comparable` of the state (cached on a shared state)."""
        if self._shared is not None:
            return self._shared.comparable()
        return comparable(self._state)

    def state_dump(self) -> dict[str, Any]:
        """``state.model_dump(mode="json")``; for a shared state, the dump cached on it (the
        same object every time: callers must not modify it)."""
        if self._shared is not None:
            return self._shared.dump()
        assert self._state is not None
        return self._state.model_dump(mode="json")

    @classmethod
    def tasks_path(cls) -> Path | None:
        """The absolute path of the bundled tasks file (``tasks`` resolved against the
        directory of the module defining the class), or None when the app bundles none."""
        if not cls.tasks:
            return None
        path = Path(cls.tasks)
        if path.is_absolute():
            return path
        module = sys.modules.get(cls.__module__)
        source = getattr(module, "__file__", None) or inspect.getfile(cls)
        return Path(source).resolve().parent / path

    @classmethod
    @abstractmethod
    def generate(cls, world: World) -> AppState:
        """Return the seeded initial state for ``world`` (draw only from :meth:`stream`)."""
        raise NotImplementedError

    @classmethod
    def stream(cls, world: World, purpose: str) -> random.Random:
        """The named random stream ``(world.seed, cls.name, purpose)``."""
        return rng(world.seed, cls.name, purpose)

    def new_id(self, prefix: str) -> str:
        """Draw the next id of this app, e.g. ``ord-1a2b3c4d`` (deterministic; see :func:`stable_id`)."""
        self.state.id_counter += 1
        return stable_id(self.world.seed, self.name, prefix, self.state.id_counter)

    def derived_values(self) -> dict[str, list[str]]:
        """Valid argument values that this app's state does not hold but its read tools show
        (ids derived on the fly, e.g. dated flight ids; dates the app serves), keyed by the
        argument name they fit (``flight_id``, ``date``...). The conformance and fuzz argument
        generators (:func:`mcpgym.tools.conformance.args.known_values`) add them to the
        strings found in the state, so generated calls reach the tool code. Default: none.

        Returns:
            key -> values, in a canonical order (deterministic for the world).
        """
        return {}

    @property
    def now(self) -> int:
        """Current virtual time, in seconds since the Unix epoch."""
        return self.world.clock.now

    def other(self, name: str) -> Any:
        """Return the app ``name`` of the same world.

        Raises:
            ToolError: ``unavailable`` when that app is not part of this episode.
        """
        from mcpgym.kernel.errors import ErrorCode, ToolError

        app = self.world.apps.get(name)
        if app is None:
            raise ToolError(ErrorCode.UNAVAILABLE, f"the {name} app is not part of this episode", retryable=False)
        return app


def register_app(cls: type[App]) -> type[App]:
    """Class decorator: register ``cls`` as a sandbox app and build its tool specs.

    Raises:
        ValueError: when the name is missing, taken by another class, or a tool name does not
            start with ``<name>_``.
    """
    if not cls.name or not cls.name.isidentifier() or cls.name.lower() != cls.name:
        raise ValueError(f"app class {cls.__name__} needs a lowercase identifier `name`")
    existing = _REGISTRY.get(cls.name)
    if existing is not None and existing.__qualname__ != cls.__qualname__:
        raise ValueError(f"app name {cls.name!r} is already registered by {existing.__qualname__}")
    if not isinstance(cls.version, str):
        raise ValueError(f"app {cls.name}: version must be a string such as '1.0', not {cls.version!r}")
    if cls.tasks is not None and not isinstance(cls.tasks, (str, Path)):
        raise ValueError(f"app {cls.name}: tasks must be a file path (str) or None, not {cls.tasks!r}")
    specs = collect_specs(cls)
    for spec in specs.values():
        if not spec.name.startswith(cls.name + "_"):
            raise ValueError(f"tool {spec.name} of app {cls.name} must be named {cls.name}_<verb>_<noun>")
        spec.app = cls.name
    cls.tools = specs
    _REGISTRY[cls.name] = cls
    return cls


def unregister_app(name: str) -> None:
    """Remove app ``name`` from the registry (for tests that define throwaway apps)."""
    _REGISTRY.pop(name, None)


def load_apps() -> dict[str, type[App]]:
    """Load every app bundle of the ``mcpgym.apps`` entry-point group (the built-in apps are
    declared there too, in pyproject.toml) and return the registry, name -> class.

    Raises:
        AppLoadError: naming the entry point whose object cannot be imported, is neither an
            :class:`App` subclass nor a module, or whose name differs from its app's name.
    """
    return dict(_registry())


def _registry() -> dict[str, type[App]]:
    """The live registry, loaded on first use (not a copy: for this module's look-ups, made
    on every world and episode; callers must not modify it)."""
    global _LOADED
    if not _LOADED:
        with _LOAD_LOCK:  # another thread sees the registry only once it is complete
            if not _LOADED:
                for ep in entry_points(group=ENTRY_POINT_GROUP):
                    try:
                        _load_entry_point(ep)
                    except AppLoadError as exc:
                        _set_aside(ep, exc)
                _LOADED = True
    return _REGISTRY


def _set_aside(ep: EntryPoint, exc: AppLoadError) -> None:
    """Keep a broken entry point out of the registry: remember why (a command that names its
    app gets that as its error, :func:`unknown_app_message`) and say so once per process, in
    one line on stderr, so that every command not needing the app still works."""
    _BROKEN[ep.name] = exc
    if ep.name in _WARNED:
        return
    _WARNED.add(ep.name)
    fix = (
        f"installed by {ep.dist.name} {ep.dist.version}: fix it or pip uninstall {ep.dist.name}"
        if ep.dist
        else "fix it"
    )
    print(f"warning: {exc}; the app {ep.name!r} is left out ({fix})", file=sys.stderr, flush=True)


def broken_apps() -> dict[str, str]:
    """The ``mcpgym.apps`` entry points that could not be loaded: app (entry-point) name ->
    the one-line reason (it names the entry point, its module and the error). Such an app is
    not registered; naming it (:func:`get_app`, :func:`check_app_names`) raises
    :class:`UnknownAppError` with that reason."""
    _registry()
    return {name: str(exc) for name, exc in _BROKEN.items()}


def _load_entry_point(ep: EntryPoint) -> None:
    """Load one ``mcpgym.apps`` entry point: register its class (or the module's apps)."""
    where = f"entry point {ep.name} = {ep.value!r} (group {ENTRY_POINT_GROUP})"
    try:
        obj = ep.load()
    except Exception as exc:  # noqa: BLE001 - name the plugin, whatever broke inside it
        raise AppLoadError(
            f"{where}: cannot load module {ep.module}: {type(exc).__name__}: "
            f"{cap_message(' '.join(str(exc).split()))}{_raised_at(exc)}"
        ) from exc
    if inspect.ismodule(obj):
        cls = _REGISTRY.get(ep.name)
        if cls is None:
            raise AppLoadError(f"{where}: the module registers no app named {ep.name!r}")
    elif inspect.isclass(obj) and issubclass(obj, App):
        cls = obj
        if cls.name != ep.name:
            raise AppLoadError(f"{where}: the entry point's name must be the app's name {cls.name!r}")
        if _REGISTRY.get(cls.name) is not cls:
            try:
                register_app(cls)
            except (ValueError, TypeError) as exc:
                raise AppLoadError(f"{where}: {exc}") from exc
    else:
        raise AppLoadError(f"{where}: must name an App subclass (module:Class), not {type(obj).__name__}")
    if not cls.version and ep.dist is not None:
        cls.version = ep.dist.version


def _raised_at(exc: BaseException) -> str:
    """`` (at FILE:LINE)``: where ``exc`` was raised (its innermost traceback frame), or ``""``."""
    tb = exc.__traceback__
    if tb is None:
        return ""
    while tb.tb_next is not None:
        tb = tb.tb_next
    return f" (at {tb.tb_frame.f_code.co_filename}:{tb.tb_lineno})"


def get_app(name: str) -> type[App]:
    """Return the registered app class ``name``.

    Raises:
        UnknownAppError: (a KeyError) naming ``name`` and the known apps when it is not registered.
    """
    apps = _registry()
    cls = apps.get(name)
    if cls is None:
        raise UnknownAppError(unknown_app_message(name, apps))
    return cls


def unknown_app_message(name: Any, known: Any) -> str:
    """The one-line error for an unknown app ``name`` among the ``known`` names; for an app
    whose entry point could not be loaded (:func:`broken_apps`), why."""
    broken = _BROKEN.get(name) if isinstance(name, str) else None
    if broken is not None:
        return f"app {name!r} is installed but cannot be used: {broken}"
    names = [a for a in BUILTIN_APPS if a in known] + sorted(a for a in known if a not in BUILTIN_APPS)
    return f"unknown app {short(name)}; known apps: {', '.join(names)}"


def check_app_names(names: Any) -> list[str]:
    """Return ``names`` (an iterable of app names) as a list after checking every one is
    registered.

    Raises:
        UnknownAppError: naming the first unknown app and the known ones.
    """
    known = _registry()
    out = list(names)
    for name in out:
        if name not in known:
            raise UnknownAppError(unknown_app_message(name, known))
    return out


def app_versions(names: Any) -> dict[str, str]:
    """App name -> ``App.version`` for the registered apps ``names``.

    Raises:
        UnknownAppError: for an unknown app name.
    """
    return {n: get_app(n).version for n in names}


def app_names() -> list[str]:
    """Registered app names, built-ins first in :data:`BUILTIN_APPS` order."""
    apps = _registry()
    order = [a for a in BUILTIN_APPS if a in apps]
    return order + sorted(a for a in apps if a not in order)


def shared_apps() -> list[str]:
    """The registered apps every world holds (``App.always_included``: the built-in ``system``),
    in :func:`app_names` order."""
    return [a for a in app_names() if get_app(a).always_included]
