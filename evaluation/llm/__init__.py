"""LLM agents over OpenAI-compatible chat completions and the Anthropic messages API.

Public API:

- :class:`OpenAIAgent`, :class:`AnthropicAgent`: agents with ``name``,
  ``async run(task, tools, call) -> AgentResult`` and ``describe() -> dict``;
- :func:`parse_llm_spec` (``"openai:gpt-4o-mini"`` -> agent), :func:`is_llm_spec`,
  :func:`llm_agent_factory` and :func:`register_llm_agents` (for ``mcpgym.evaluation.agents.make_agent``);
- :class:`LLMLimits`, :class:`RetryPolicy`, :data:`DEFAULT_SYSTEM_PROMPT`;
- :func:`episode_request` and :func:`parse_exposure`: tool-exposure modes (``all``, ``task``,
  ``task+N``, ``retrieval``) as extra fields of ``POST /control/episodes``;
- :class:`ToolInfo`, :class:`CallResult`, :class:`AgentResult`: the interface types
  (compatible with ``mcpgym.evaluation.agents``).
"""

from mcpgym.evaluation.llm.agent import DEFAULT_SYSTEM_PROMPT, LLMAgent, LLMLimits
from mcpgym.evaluation.llm.anthropic_messages import AnthropicAgent
from mcpgym.evaluation.llm.exposure import EXPOSURE_MODES, Exposure, episode_request, parse_exposure, pick_distractors
from mcpgym.evaluation.llm.interface import AgentResult, CallResult, ToolInfo
from mcpgym.evaluation.llm.openai_chat import OpenAIAgent
from mcpgym.evaluation.llm.spec import PROVIDERS, is_llm_spec, llm_agent_factory, parse_llm_spec, register_llm_agents
from mcpgym.evaluation.llm.transport import ProviderError, RetryPolicy, parse_retry_after

__all__ = [
    "AgentResult",
    "AnthropicAgent",
    "CallResult",
    "DEFAULT_SYSTEM_PROMPT",
    "EXPOSURE_MODES",
    "Exposure",
    "LLMAgent",
    "LLMLimits",
    "OpenAIAgent",
    "PROVIDERS",
    "ProviderError",
    "RetryPolicy",
    "ToolInfo",
    "episode_request",
    "is_llm_spec",
    "llm_agent_factory",
    "parse_exposure",
    "parse_llm_spec",
    "parse_retry_after",
    "pick_distractors",
    "register_llm_agents",
]
