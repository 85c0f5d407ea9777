"""LLM agent settings given on the command line (``mcpgym run --max-turns 8 --agent-option
top_p=0.9``), checked once before a run, recorded in the manifest and restored by ``--resume``.

The settings are the keyword options of :func:`mcpgym.evaluation.llm.spec.parse_llm_spec` that
change what a model does or how long the harness waits for it: the fields of
:class:`mcpgym.evaluation.llm.agent.LLMLimits` and :class:`mcpgym.evaluation.llm.transport.RetryPolicy`,
``temperature``, ``seed`` and ``system_prompt``. ``KEY=VALUE`` values are read as JSON when they
parse (``8``, ``0.5``, ``null``) and as text otherwise (``system_prompt=Be brief.``). The API key
and base URL are deliberately not settable here: they would be written into the manifest.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import fields
from typing import Any

from mcpgym.evaluation.llm.agent import LLMLimits
from mcpgym.evaluation.llm.transport import RetryPolicy

AGENT_OPTION_KEYS: tuple[str, ...] = tuple(
    sorted({f.name for f in fields(LLMLimits)} | {f.name for f in fields(RetryPolicy)} | {"temperature", "seed"})
) + ("system_prompt",)
"""The keys ``--agent-option KEY=VALUE`` accepts (limits, retry policy, sampling, system prompt)."""

MAX_OPTION_CHARS = 20_000
"""The longest ``KEY=VALUE`` accepted (a system prompt fits; a pasted file does not)."""


def parse_agent_option(pair: str) -> tuple[str, Any]:
    """One ``KEY=VALUE`` -> ``(key, value)``; the value is JSON when it parses, else the text.

    Raises:
        ValueError: for a pair without ``=``, an unknown key (the message lists the known
            ones) or a pair longer than :data:`MAX_OPTION_CHARS`.
    """
    if not isinstance(pair, str) or "=" not in pair:
        raise ValueError(f"--agent-option must be KEY=VALUE, got {pair!r}")
    if len(pair) > MAX_OPTION_CHARS:
        raise ValueError(f"--agent-option is {len(pair)} characters long; at most {MAX_OPTION_CHARS} are accepted")
    key, _, raw = pair.partition("=")
    key = key.strip().replace("-", "_")
    if key not in AGENT_OPTION_KEYS:
        raise ValueError(f"unknown agent option {key!r}; known: {', '.join(AGENT_OPTION_KEYS)}")
    if key == "system_prompt":
        return key, raw
    try:
        return key, json.loads(raw)
    except ValueError:
        return key, raw


def agent_options(pairs: Iterable[str] = (), **named: Any) -> dict[str, Any]:
    """The LLM agent settings of a command line: ``--agent-option`` pairs, then the named
    options that were given (``None`` values are left out: not given), the named ones winning.

    The result is checked by building limits and a retry policy from it, so a bad value fails
    here, before any episode runs.

    Raises:
        ValueError: see :func:`parse_agent_option`, and for a value the limits, the retry
            policy or the sampling settings refuse (the message names the option).
    """
    out: dict[str, Any] = dict(parse_agent_option(p) for p in pairs)
    for key, value in named.items():
        if key not in AGENT_OPTION_KEYS:
            raise ValueError(f"unknown agent option {key!r}")
        if value is not None:
            out[key] = value
    return check_agent_options(out)


def check_agent_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` as a new dict when every value is one an LLM agent accepts.

    Raises:
        ValueError: naming the first bad option.
    """
    out = dict(options)
    unknown = sorted(set(out) - set(AGENT_OPTION_KEYS))
    if unknown:
        raise ValueError(f"unknown agent option(s): {', '.join(unknown)}")
    limit_names = {f.name for f in fields(LLMLimits)}
    retry_names = {f.name for f in fields(RetryPolicy)}
    try:
        LLMLimits(**{k: v for k, v in out.items() if k in limit_names})
        RetryPolicy(**{k: v for k, v in out.items() if k in retry_names})
    except (TypeError, ValueError) as exc:
        raise ValueError(f"bad agent option: {exc}") from None
    temperature = out.get("temperature")
    if temperature is not None and (
        isinstance(temperature, bool) or not isinstance(temperature, int | float) or not 0 <= temperature <= 2
    ):
        raise ValueError(f"temperature must be a finite number from 0 to 2, got {temperature!r}")
    seed = out.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    prompt = out.get("system_prompt")
    if prompt is not None and (not isinstance(prompt, str) or not prompt.strip()):
        raise ValueError("system_prompt must be non-empty text")
    return out


__all__ = ["AGENT_OPTION_KEYS", "MAX_OPTION_CHARS", "agent_options", "check_agent_options", "parse_agent_option"]
