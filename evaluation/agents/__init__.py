"""Agents: the interface (:mod:`mcpgym.evaluation.agents.base`), the scripted reference agents
(:mod:`mcpgym.evaluation.agents.scripted`), the replay agent (:mod:`mcpgym.evaluation.agents.replay`) and an
in-process episode harness (:mod:`mcpgym.evaluation.agents.inprocess`).

``make_agent(spec)`` builds an agent from a spec string: ``careful``, ``overconfident``,
``defeatist``, ``replay:FILE.jsonl``, ``openai:MODEL`` / ``anthropic:MODEL`` (LLM agents,
:mod:`mcpgym.evaluation.llm`), ``human`` (a person at the terminal,
:mod:`mcpgym.evaluation.agents.human`), or ``PREFIX:...`` for a prefix registered with
:func:`register_agent`. :func:`known_agents` lists every form, as the error of an unknown
spec does.
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

HUMAN = "human"
"""The spec of a person playing at the terminal (``mcpgym run --agent human``)."""

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
    if prefix in _SCRIPTED or prefix in ("replay", HUMAN) or prefix in _FACTORIES:
        raise ValueError(f"agent prefix {prefix!r} is already taken")
    _FACTORIES[prefix] = factory


def unregister_agent(prefix: str) -> None:
    """Forget a prefix registered with :func:`register_agent`."""
    _FACTORIES.pop(prefix, None)


def _providers() -> list[str]:
    """The LLM providers' spec prefixes (``openai``, ``anthropic``)."""
    from mcpgym.evaluation.llm.spec import PROVIDERS  # noqa: PLC0415 - llm imports this package

    return list(PROVIDERS)


def known_agents() -> list[str]:
    """Every spec form ``make_agent`` accepts: the scripted names, ``replay:FILE.jsonl``, the
    LLM providers' ``PROVIDER:MODEL``, any other registered ``PREFIX:...``, and ``human``."""
    providers = _providers()
    others = [f"{p}:..." for p in _FACTORIES if p not in providers]
    return [*SCRIPTED_AGENTS, "replay:FILE.jsonl", *(f"{p}:MODEL" for p in providers), *others, HUMAN]


def make_agent(spec: str) -> Agent:
    """Build an agent from ``spec`` (see the module docstring). An LLM provider's prefix
    that no one registered yet is registered with the default options
    (:func:`mcpgym.evaluation.llm.register_llm_agents`).

    Raises:
        ValueError: for an unknown spec (naming every form :func:`known_agents` lists), a
            missing replay file, or a bad LLM spec.
    """
    name = spec.strip()
    if name in _SCRIPTED:
        return _SCRIPTED[name]()
    if name == HUMAN:
        from mcpgym.evaluation.agents.human import HumanAgent  # noqa: PLC0415 - readline and rich only for a person

        return HumanAgent()
    if name.startswith("replay:"):
        return ReplayAgent(name[len("replay:") :])
    prefix = name.split(":", 1)[0]
    if prefix not in _FACTORIES and ":" in name and prefix.strip().lower() in _providers():
        from mcpgym.evaluation.llm.spec import register_llm_agents  # noqa: PLC0415 - llm imports this package

        register_llm_agents()
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
    "HUMAN",
    "SCRIPTED_AGENTS",
    "ToolInfo",
    "known_agents",
    "make_agent",
    "register_agent",
    "unregister_agent",
]
