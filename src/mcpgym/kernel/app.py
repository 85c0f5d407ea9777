"""The sandbox app base class and the app registry.

An app is one module: a pydantic state model (subclass of :class:`AppState`), a subclass of
:class:`App` whose ``generate`` builds the seeded initial state, and ``@tool`` methods. The
class is registered with :func:`register_app`; the conformance suite (tests/conformance)
then checks it without new test code.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
import random
import threading
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict

from mcpgym.kernel.rng import rng, stable_id
from mcpgym.kernel.volatile import VOLATILE
from mcpgym.kernel.spec import ToolSpec, collect_specs

if TYPE_CHECKING:
    from mcpgym.kernel.world import World

BUILTIN_APPS: tuple[str, ...] = ("system", "shop", "talk", "flights", "stocks", "weather", "news", "office")
"""Modules under ``sandboxes`` that hold the built-in apps, in catalog order."""

_REGISTRY: dict[str, type["App"]] = {}
_LOADED = False
_LOAD_LOCK = threading.RLock()


class AppState(BaseModel):
    """Base of every app's state model.

    Attributes:
        id_counter: how many ids the app has drawn (volatile: incidental to outcomes).
    """

    model_config = ConfigDict(validate_assignment=False, extra="forbid")

    id_counter: Annotated[int, VOLATILE] = 0


class App(ABC):
    """A stateful sandbox app inside a :class:`~mcpgym.kernel.world.World`.

    Subclasses set ``name`` (lowercase, used as the tool-name prefix), ``title``, ``State``
    (an :class:`AppState` subclass) and implement :meth:`generate`.

    Attributes:
        world: the owning world (clock, people, other apps).
        state: this app's pydantic state.
    """

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    State: ClassVar[type[AppState]] = AppState
    tools: ClassVar[dict[str, ToolSpec]] = {}

    def __init__(self, world: "World", state: AppState) -> None:
        self.world = world
        self.state = state

    @classmethod
    @abstractmethod
    def generate(cls, world: "World") -> AppState:
        """Return the seeded initial state for ``world`` (draw only from :meth:`stream`)."""
        raise NotImplementedError

    @classmethod
    def stream(cls, world: "World", purpose: str) -> random.Random:
        """The named random stream ``(world.seed, cls.name, purpose)``."""
        return rng(world.seed, cls.name, purpose)

    def new_id(self, prefix: str) -> str:
        """Draw the next id of this app, e.g. ``ord-1a2b3c4d`` (deterministic; see :func:`stable_id`)."""
        self.state.id_counter += 1
        return stable_id(self.world.seed, self.name, prefix, self.state.id_counter)

    @property
    def now(self) -> int:
        """Current virtual time, in seconds since the Unix epoch."""
        return self.world.clock.now

    def other(self, name: str) -> Any:
        """Return the app ``name`` of the same world.

        Raises:
            ToolError: ``unavailable`` when that app is not part of this episode.
        """
        from mcpgym.kernel.errors import ToolError

        app = self.world.apps.get(name)
        if app is None:
            raise ToolError("unavailable", f"the {name} app is not part of this episode", retryable=False)
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
    specs = collect_specs(cls)
    for spec in specs.values():
        if not spec.name.startswith(cls.name + "_") and spec.name != "search_tools":
            raise ValueError(f"tool {spec.name} of app {cls.name} must be named {cls.name}_<verb>_<noun>")
        spec.app = cls.name
        _add_default_remedies(spec)
    cls.tools = specs
    _REGISTRY[cls.name] = cls
    return cls


DEFAULT_REMEDIES: dict[str, dict[str, tuple[str, ...]]] = {
    "read": {"rate_limited": ("system_wait",)},
    "write": {"rate_limited": ("system_wait",), "auth_required": ("system_authenticate",)},
    "auth": {},
}
"""Remedies every tool of a kind has, whatever its app declares: waiting cures a rate limit,
re-authenticating cures an auth challenge (both tools of the always-present ``system`` app)."""


def _add_default_remedies(spec: ToolSpec) -> None:
    for code, cures in DEFAULT_REMEDIES.get(spec.kind, {}).items():
        have = spec.remedies.get(code, ())
        spec.remedies[code] = tuple(dict.fromkeys((*have, *cures)))


def unregister_app(name: str) -> None:
    """Remove app ``name`` from the registry (for tests that define throwaway apps)."""
    _REGISTRY.pop(name, None)


def load_apps() -> dict[str, type[App]]:
    """Load every app of the ``mcpgym.apps`` entry-point group (the built-in apps are declared
    there too, in pyproject.toml) and return the registry."""
    global _LOADED
    if not _LOADED:
        with _LOAD_LOCK:  # another thread sees the registry only once it is complete
            if not _LOADED:
                for ep in entry_points(group="mcpgym.apps"):
                    ep.load()
                _LOADED = True
    return dict(_REGISTRY)


def get_app(name: str) -> type[App]:
    """Return the registered app class ``name``.

    Raises:
        KeyError: naming the known apps when ``name`` is not registered.
    """
    apps = load_apps()
    if name not in apps:
        raise KeyError(f"unknown app {name!r}; known apps: {', '.join(sorted(apps))}")
    return apps[name]


def app_names() -> list[str]:
    """Registered app names, built-ins first in :data:`BUILTIN_APPS` order."""
    apps = load_apps()
    order = [a for a in BUILTIN_APPS if a in apps]
    return order + sorted(a for a in apps if a not in order)
