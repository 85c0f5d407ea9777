"""Shared machinery of the procedural task templates.

A :class:`Template` turns a world seed into one :class:`mcpgym.evaluation.tasks.Task`: it reads the
seed's initial world (:func:`world_of`: its state, and read tools called as methods) and draws
its remaining choices from the named stream ``rng(seed, "templates", <template name>)``, so an
instance depends only on the seed.

An instance's oracle is the template's static step list (YAML, compiled once) preceded by one
``let`` step binding the instance's parameters (``p_item``, ``p_date``...) as literals; the
whole task then goes through the same validation as a task file
(:func:`mcpgym.evaluation.tasks.registry.parse_task`). Gold states are not computed here: the
registry computes them lazily, per task, when an episode or a test needs one.
"""

from __future__ import annotations

import random
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import yaml

ID_PREFIX = "tmpl"
"""Template instance ids look like ``tmpl.<template>.s0042``."""

_WORLDS: OrderedDict[tuple[int, tuple[str, ...]], Any] = OrderedDict()
_WORLD_CACHE_SIZE = 2
_WORLDS_LOCK = threading.Lock()


@dataclass
class Instance:
    """What a template's ``build`` returns for one seed.

    Attributes:
        instruction: what the user says.
        params: parameter name -> JSON literal (str, int, float, bool), bound by the oracle's
            first ``let`` step; names start with ``p_``.
        feasible: whether the oracle ends with ``answer`` (else ``refuse``) on this seed.
        checks: extra checks on the final message (a ``declares_impossible`` check is added
            for every instance).
        notes: authoring notes (what the gold state is).
        level: overrides the template's level when set.
    """

    instruction: str
    params: dict[str, Any]
    feasible: bool = True
    checks: list[dict[str, Any]] = field(default_factory=list)
    notes: str = ""
    level: int | None = None


@dataclass
class Template:
    """A parameterised task generator.

    Attributes:
        name: template name (lowercase, used in instance ids).
        apps: the instances' apps.
        level: default difficulty 1-3.
        tags: tags of every instance (``infeasible`` is added to infeasible instances).
        oracle_yaml: the static oracle steps (YAML list) that follow the parameter ``let``.
        build: ``build(seed) -> Instance``: reads the seed's world and draws the parameters.
    """

    name: str
    apps: list[str]
    level: int
    tags: list[str]
    oracle_yaml: str
    build: Callable[[int], Instance]
    _steps: list[Any] | None = field(default=None, repr=False)

    @property
    def steps(self) -> list[Any]:
        """The static oracle steps, parsed from YAML and compiled once
        (:func:`mcpgym.evaluation.tasks.model.parse_steps`); every instance shares them (steps are
        never mutated), and each instance's task validation checks them in context."""
        if self._steps is None:
            from mcpgym.evaluation.tasks.model import parse_steps

            loaded = yaml.safe_load(self.oracle_yaml)
            if not isinstance(loaded, list):
                raise ValueError(f"template {self.name!r}: oracle_yaml must be a YAML list of steps")
            self._steps = parse_steps(loaded, "oracle")
        return self._steps

    def task_data(self, seed: int) -> dict[str, Any]:
        """The task mapping of the instance for ``seed`` (what a task file would hold)."""
        inst = self.build(seed)
        checks = [{"kind": "declares_impossible", "value": not inst.feasible}, *inst.checks]
        tags = list(self.tags)
        if not inst.feasible:
            tags = ["infeasible", *[t for t in tags if t != "infeasible"]]
        let = {name: literal(value) for name, value in inst.params.items()}
        return {
            "id": instance_id(self.name, seed),
            "instruction": inst.instruction,
            "apps": list(self.apps),
            "seed": seed,
            "level": inst.level or self.level,
            "tags": tags,
            "feasible": inst.feasible,
            "notes": inst.notes or f"Procedural instance of template {self.name!r} on seed {seed}.",
            "oracle": ([{"let": let}] if let else []) + list(self.steps),
            "checks": checks,
        }


def instance_id(template: str, seed: int) -> str:
    """The id of template ``template``'s instance on ``seed``, e.g. ``tmpl.shop_buy_if_affordable.s0042``."""
    return f"{ID_PREFIX}.{template}.s{seed:04d}"


def literal(value: Any) -> str:
    """An oracle expression that evaluates to ``value`` (a str, int, float or bool).

    Raises:
        TypeError: for any other type.
    """
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, (int, float, str)):
        return repr(value)
    raise TypeError(f"a template parameter must be a str, int, float or bool, not {type(value).__name__}")


def stream(seed: int, template: str) -> random.Random:
    """The template's random stream for ``seed``: ``rng(seed, "templates", template)``."""
    from mcpgym.kernel.rng import rng

    return rng(seed, "templates", template)


TEMPLATE_APPS: tuple[str, ...] = ("system", "shop", "stocks", "flights", "news", "talk")
"""Apps of the world the templates read. An app's initial state does not depend on which other
apps are present (docs/design.md §2), so one world per seed serves every template."""


def world_of(seed: int) -> Any:
    """The initial :class:`mcpgym.kernel.world.World` of ``seed`` over :data:`TEMPLATE_APPS`
    (cached for the last few seeds). Templates only read it: its state and its read tools,
    called as methods (``world.apps["flights"].flights_search_flights_by_city(...)``)."""
    from mcpgym.kernel.world import World

    key = (seed, TEMPLATE_APPS)
    with _WORLDS_LOCK:  # threads share the cache: a key read here may be evicted by another
        world = _WORLDS.get(key)
        if world is not None:
            _WORLDS.move_to_end(key)
            return world
    made = World(seed, TEMPLATE_APPS)
    with _WORLDS_LOCK:
        world = _WORLDS.setdefault(key, made)
        _WORLDS.move_to_end(key)
        while len(_WORLDS) > _WORLD_CACHE_SIZE:
            _WORLDS.popitem(last=False)
    return world


def long_date(iso_day: str) -> str:
    """``2026-06-14`` -> ``June 14``."""
    d = date.fromisoformat(iso_day)
    return f"{d:%B} {d.day}"


def dollars(cents: int) -> str:
    """``123456`` -> ``$1,234.56``."""
    return f"${cents // 100:,}.{cents % 100:02d}"


__all__ = [
    "ID_PREFIX",
    "Instance",
    "TEMPLATE_APPS",
    "Template",
    "dollars",
    "instance_id",
    "literal",
    "long_date",
    "stream",
    "world_of",
]
