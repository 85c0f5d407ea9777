"""Agent specs for LLM agents: ``openai:MODEL``, ``anthropic:MODEL`` and ``local:MODEL`` (the
bundled small model, served by the run: :mod:`mcpgym.evaluation.llm.local_agent`).

``parse_llm_spec("openai:gpt-4o-mini")`` builds an :class:`OpenAIAgent`; the model part may
itself contain colons (``openai:llama3.1:8b`` for Ollama). Options are keyword arguments: the
constructor's own (``base_url``, ``api_key``, ``temperature``, ``seed``, ``system_prompt``,
``tool_exposure``, ``name``...) plus, flattened, the fields of
:class:`mcpgym.evaluation.llm.agent.LLMLimits` (``max_turns``, ``max_tool_calls``, ``max_tokens``,
``max_output_tokens``) and :class:`mcpgym.evaluation.llm.transport.RetryPolicy` (``max_retries``,
``backoff_base``, ``backoff_max``, ``max_retry_after``, ``request_timeout``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from typing import Any

from mcpgym.evaluation.llm.agent import LLMAgent, LLMLimits
from mcpgym.evaluation.llm.anthropic_messages import AnthropicAgent
from mcpgym.evaluation.llm.local_agent import LocalModelAgent
from mcpgym.evaluation.llm.openai_chat import OpenAIAgent
from mcpgym.evaluation.llm.transport import RetryPolicy

PROVIDERS: dict[str, type[LLMAgent]] = {"openai": OpenAIAgent, "anthropic": AnthropicAgent, "local": LocalModelAgent}
"""Spec prefix -> agent class."""

_LIMIT_FIELDS = {f.name for f in fields(LLMLimits)}
_RETRY_FIELDS = {f.name for f in fields(RetryPolicy)}
_AGENT_OPTIONS = {
    "base_url",
    "api_key",
    "temperature",
    "seed",
    "system_prompt",
    "tool_exposure",
    "name",
    "observer",
    "extra_headers",
    "extra_body",
    "limits",
    "retry",
}


def is_llm_spec(spec: Any) -> bool:
    """True when ``spec`` names an LLM provider (``openai:...``, ``anthropic:...``, ``local:...``)."""
    return isinstance(spec, str) and spec.partition(":")[0].strip().lower() in PROVIDERS and ":" in spec


def parse_llm_spec(spec: str, **options: Any) -> LLMAgent:
    """Build the LLM agent a spec names.

    Args:
        spec: ``<provider>:<model>`` with provider ``openai`` (any OpenAI-compatible server),
            ``anthropic`` or ``local`` (the bundled model, whose server ``mcpgym run`` starts).
        **options: see the module docstring, passed as given (``temperature=None`` means "not
            sent"; pass only the options you set). The agent's name defaults to ``spec``.

    Raises:
        ValueError: for a malformed spec, an unknown provider, an empty model, an unknown
            option, a bad option value, or a missing API key for a non-local base URL (the
            message says which environment variable to set).
    """
    if not isinstance(spec, str) or ":" not in spec:
        raise ValueError(f"LLM agent spec must look like 'openai:MODEL' or 'anthropic:MODEL', got {spec!r}")
    provider, _, model = spec.partition(":")
    provider, model = provider.strip().lower(), model.strip()
    cls = PROVIDERS.get(provider)
    if cls is None:
        raise ValueError(
            f"unknown LLM provider {provider!r} in {spec!r}: expected one of {', '.join(sorted(PROVIDERS))}"
        )
    if not model:
        raise ValueError(f"LLM agent spec {spec!r} names no model: write {provider}:MODEL")
    given = dict(options)
    unknown = sorted(set(given) - _AGENT_OPTIONS - _LIMIT_FIELDS - _RETRY_FIELDS)
    if unknown:
        raise ValueError(f"unknown option(s) for {spec!r}: {', '.join(unknown)}")
    limit_args = {k: given.pop(k) for k in list(given) if k in _LIMIT_FIELDS}
    retry_args = {k: given.pop(k) for k in list(given) if k in _RETRY_FIELDS}
    try:
        if limit_args:
            base = given.pop("limits", None) or LLMLimits()
            given["limits"] = LLMLimits(**{**base.__dict__, **limit_args})
        if retry_args:
            base = given.pop("retry", None) or RetryPolicy()
            given["retry"] = RetryPolicy(**{**base.__dict__, **retry_args})
    except (TypeError, ValueError) as exc:
        raise ValueError(f"bad option for {spec!r}: {exc}") from None
    given.setdefault("name", spec.strip())
    return cls(model, **given)


def llm_agent_factory(**options: Any) -> Callable[[str], LLMAgent]:
    """A ``factory(spec) -> agent`` applying ``options`` (see :func:`parse_llm_spec`) to every
    spec, for ``mcpgym.evaluation.agents.register_agent``."""

    def factory(spec: str) -> LLMAgent:
        return parse_llm_spec(spec, **options)

    return factory


def register_llm_agents(*, replace: bool = False, **options: Any) -> list[str]:
    """Register the ``openai``, ``anthropic`` and ``local`` prefixes with ``mcpgym.evaluation.agents.make_agent``,
    building agents with ``options`` (e.g. ``tool_exposure="task+5"``, ``max_turns=8``).

    Args:
        replace: replace a registration made before (``mcpgym run`` does: the options of one
            run must not leak into the next one of the same process).

    Returns:
        The prefixes registered now (without ``replace``, a prefix registered before is left
        as it was).
    """
    from mcpgym.evaluation.agents import register_agent, unregister_agent  # noqa: PLC0415 - no cycle at load

    done = []
    factory = llm_agent_factory(**options)
    for prefix in PROVIDERS:
        if replace:
            unregister_agent(prefix)
        try:
            register_agent(prefix, factory)
        except ValueError:
            continue
        done.append(prefix)
    return done


__all__ = ["PROVIDERS", "is_llm_spec", "llm_agent_factory", "parse_llm_spec", "register_llm_agents"]
