"""Agents: the interface (:mod:`mcpgym.evaluation.agents.base`), the scripted reference agents
(:mod:`mcpgym.evaluation.agents.scripted`), the replay agent (:mod:`mcpgym.evaluation.agents.replay`) and an
in-process episode harness (:mod:`mcpgym.evaluation.agents.inprocess`).

``make_agent(spec)`` builds an agent from a spec string: ``careful``, ``overconfident``,
``defeatist``, ``replay:PATH.jsonl``, or ``PREFIX:...`` for a prefix registered with
:func:`register_agent` (LLM agents).
"""

from __future__ import annotations

from collections.abc import Callable

from mcpgym.evaluation.agents.base import (
    NO_CONTEXT,
    Agent,
    AgentContext,
    AgentResult,
    CallFn,
    CallLimitReached,
    CallResult,
    ToolInfo,
    run_agent,
)
from mcpgym.evaluation.agents.replay import ReplayAgent
from mcpgym.evaluation.agents.scripted import CarefulAgent, DefeatistAgent, OverconfidentAgent
from mcpgym.kernel.shorten import short

SCRIPTED_AGENTS: tuple[str, ...] = ("careful", "overconfident", "defeatist")
"""Names of the scripted reference agents."""

_SCRIPTED: dict[str, type[Agent]] = {
    "careful": CarefulAgent,
    "overconfident": OverconfidentAgent,
    "defeatist": DefeatistAgent,
}
_FACTORIES: dict[str, Callable[[str], Agent]] = {}


def register_agent(prefix: str, factory: Callable[[str], Agent]) -> None:
    """Make ``make_agent("PREFIX:...")`` (or ``make_agent("PREFIX")``) call ``factory(spec)``.

    Raises:
        ValueError: when the prefix is a scripted agent's name, ``replay``, or already taken.
    """
    if prefix in _SCRIPTED or prefix == "replay" or prefix in _FACTORIES:
        raise ValueError(f"agent prefix {prefix!r} is already taken")
    _FACTORIES[prefix] = factory


def unregister_agent(prefix: str) -> None:
    """Forget a prefix registered with :func:`register_agent`."""
    _FACTORIES.pop(prefix, None)


def known_agents() -> list[str]:
    """Spec forms ``make_agent`` accepts."""
    return [*SCRIPTED_AGENTS, "replay:PATH.jsonl", *(f"{p}:..." for p in _FACTORIES)]


def make_agent(spec: str) -> Agent:
    """Build an agent from ``spec`` (see the module docstring).

    Raises:
        ValueError: for an unknown spec (naming the known agents) or a missing replay file.
    """
    name = spec.strip()
    if name in _SCRIPTED:
        return _SCRIPTED[name]()
    if name.startswith("replay:"):
        return ReplayAgent(name[len("replay:") :])
    prefix = name.split(":", 1)[0]
    if prefix in _FACTORIES:
        return _FACTORIES[prefix](name)
    raise ValueError(f"unknown agent {short(spec)}; known agents: {', '.join(known_agents())}")


__all__ = [
    "NO_CONTEXT",
    "AgentContext",
    "run_agent",
    "Agent",
    "AgentResult",
    "CallFn",
    "CallLimitReached",
    "CallResult",
    "CarefulAgent",
    "DefeatistAgent",
    "OverconfidentAgent",
    "ReplayAgent",
    "SCRIPTED_AGENTS",
    "ToolInfo",
    "known_agents",
    "make_agent",
    "register_agent",
    "unregister_agent",
]
