"""The provider-neutral tool-calling loop of the LLM agents.

:class:`LLMAgent` runs one episode: it offers the episode's tools to the model, sends the
system prompt and the task instruction, executes the tool calls of each reply through the
episode's ``call`` (in the order the model listed them), feeds the results back, and stops
when the model answers without a tool call (status ``completed``).

What goes wrong is handled and counted, never raised:

- a tool call whose arguments are not a JSON object, that names a tool the episode does
  not offer, or that a reply cut off by the output-token limit ends in (:data:`CUT_OFF`), is
  answered with a tool error (``invalid_argument`` / ``not_found``) without
  reaching the server. With a runner's recording call function (one with a ``record``
  method, see :func:`mcpgym.evaluation.llm.interface.recorder_of`) it is recorded as an
  invalid :class:`~mcpgym.evaluation.records.trajectory.ToolCallStep` (name, arguments or their raw
  text, the error returned); otherwise it is counted in ``invalid_calls``;
- every model reply is recorded the same way as a
  :class:`~mcpgym.evaluation.records.trajectory.MessageStep` (text, refusal, reasoning, tokens);
- 429, 5xx, connection failures and silent providers are retried (see
  :mod:`mcpgym.evaluation.llm.transport`); a provider that keeps failing ends the episode with status
  ``errored``, ``stop_reason`` ``"provider_error: ..."`` and the failure in ``error``: a
  provider outage is reported apart from what the model did;
- :class:`LLMLimits` (model turns, tool calls, tokens) end the episode with status ``limit``
  and the limit in ``stop_reason``;
- a final reply (no tool call) cut off by the output-token limit ends the episode
  ``truncated``: it is no answer the model chose to give;
- each :class:`~mcpgym.evaluation.records.trajectory.MessageStep` carries the turn's wall ``latency``
  and the ``retries`` of its request (HTTP status, cause, wait); the request that ended an
  errored episode is kept in the result's ``provider["failed_request"]``, and the flags of
  :mod:`mcpgym.evaluation.llm.flags` in ``provider["flags"]``. A final message that is a tool
  call written as text (the server did not parse it) is also logged as a warning.

Subclasses (:class:`mcpgym.evaluation.llm.openai_chat.OpenAIAgent`,
:class:`mcpgym.evaluation.llm.anthropic_messages.AnthropicAgent`) only build requests and read
replies.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

import httpx

from mcpgym.evaluation.agents.base import NO_CONTEXT, Agent, AgentContext, record_refused_call
from mcpgym.evaluation.llm.flags import EpisodeFlag, text_call_warning, tool_call_in_text
from mcpgym.evaluation.llm.interface import CallFn, CallLimitReached, instruction_of, make_result, recorder_of
from mcpgym.evaluation.llm.replies import ModelReply, ParsedCall, ToolOutcome, error_payload, shown_name
from mcpgym.evaluation.llm.tools import SEARCH_TOOL_NAME, ExposedTool, ToolRegistry
from mcpgym.evaluation.llm.transport import Observer, ProviderError, RetryPolicy, post_json, shared_ssl_context
from mcpgym.evaluation.records.status import EpisodeStatus
from mcpgym.evaluation.records.trajectory import MessageStep, ProviderRetry, TokenUsage

LOG = logging.getLogger("mcpgym.llm")

DEFAULT_SYSTEM_PROMPT = (
    "You are an assistant acting for a user inside a set of apps, through the tools you are given. "
    "Carry out the user's task by calling tools; do not invent data that a tool can give you. "
    "Money amounts are integer cents and times are virtual seconds since the epoch unless a tool says otherwise. "
    "A tool may fail: its error says what went wrong (a code, whether retrying may help, and retry_after in "
    "virtual seconds when it applies). When you are finished, or if the task cannot be done, reply to the user "
    "with a short final message and no tool call."
)
"""The default system prompt. It states the conventions of the sandbox and how an episode ends,
and deliberately says nothing about verifying or retrying: those habits are what is measured."""

CUT_OFF = frozenset({"length", "max_tokens", "model_context_window_exceeded"})
"""Finish reasons of a reply the output-token limit (or the context window) cut short
(OpenAI-compatible ``length``, Anthropic ``max_tokens``): its last tool call may be incomplete
even when its arguments parse (``2500`` cut to ``25``), so it is refused, never run."""

DEADLINE_MARGIN = 0.5
"""Wall seconds before the runner's episode deadline at which provider requests give up, so that
the agent returns its ``errored`` result before the runner cuts the episode off."""

PROMPT_TEMPLATE = "system: <system prompt>; user: <task instruction, verbatim>"
"""How the first request is built (recorded in ``describe()``)."""


@dataclass(frozen=True)
class LLMLimits:
    """Per-episode limits; reaching one ends the episode with status ``limit``.

    Attributes:
        max_turns: model requests (replies) per episode.
        max_tool_calls: tool calls the model may make per episode, valid or not; calls of a
            reply past the limit are not executed.
        max_tokens: input + output tokens per episode (None: no limit). Checked after each
            reply: a reply that asks for tools past the budget is not executed; a final
            answer is still accepted.
        max_output_tokens: the per-reply output cap sent to the provider (Anthropic requires
            one and gets 4096 when None; OpenAI-compatible servers get ``max_tokens`` only
            when set).
    """

    max_turns: int = 40
    max_tool_calls: int = 100
    max_tokens: int | None = 500_000
    max_output_tokens: int | None = None

    def __post_init__(self) -> None:
        for name in ("max_turns", "max_tool_calls", "max_tokens", "max_output_tokens"):
            value = getattr(self, name)
            optional = name in ("max_tokens", "max_output_tokens")
            if (value is None and not optional) or (
                value is not None and (isinstance(value, bool) or not isinstance(value, int))
            ):
                raise ValueError(f"{name} must be an integer{' or None' if optional else ''}, got {value!r}")
        if self.max_turns < 1 or self.max_tool_calls < 0:
            raise ValueError("max_turns must be >= 1 and max_tool_calls >= 0")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError("max_tokens must be >= 1 or None")
        if self.max_output_tokens is not None and self.max_output_tokens < 1:
            raise ValueError("max_output_tokens must be >= 1 or None")


class LLMAgent(Agent):
    """Base class of the provider agents: the episode loop and its bookkeeping.

    Args:
        model: the provider's model name.
        base_url: the provider's base URL.
        api_key: the API key (a dummy one is fine for local servers).
        temperature: sampling temperature (None: not sent, the provider's default).
        seed: the provider's sampling seed (None: not sent; OpenAI-compatible only).
        system_prompt: the system prompt (default :data:`DEFAULT_SYSTEM_PROMPT`).
        limits: per-episode limits (:class:`LLMLimits`).
        retry: timeouts and retries of provider requests (:class:`RetryPolicy`).
        tool_exposure: the run's tool-exposure mode (``all``, ``task``, ``task+N``,
            ``retrieval``; see :mod:`mcpgym.evaluation.llm.exposure`), recorded in ``describe()``;
            a comma-separated list in a run with a tools axis (each episode records its own).
        name: the agent's name in trajectories (default ``<provider>:<model>``).
        observer: called with provider events (retries) as dicts, e.g. for logging.
        extra_headers: more HTTP headers for every request.
        extra_body: more top-level request fields (e.g. ``top_p``), recorded in ``describe()``.

    Raises:
        ValueError: for an empty model name, a bad exposure mode or bad limits.
    """

    provider: ClassVar[str] = ""
    api: ClassVar[str] = ""
    tool_result_format: ClassVar[str] = ""

    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        api_key: str,
        temperature: float | None = 0.0,
        seed: int | None = None,
        system_prompt: str | None = None,
        limits: LLMLimits | None = None,
        retry: RetryPolicy | None = None,
        tool_exposure: str = "all",
        name: str | None = None,
        observer: Observer | None = None,
        extra_headers: Mapping[str, str] | None = None,
        extra_body: Mapping[str, Any] | None = None,
    ) -> None:
        from mcpgym.evaluation.llm.exposure import parse_exposure  # noqa: PLC0415 - avoids a cycle at import

        if not isinstance(model, str) or not model.strip():
            raise ValueError("the model name must not be empty")
        self.model = model.strip()
        self.base_url = base_url.rstrip("/")
        self._api_key = _header_safe_key(api_key, self.provider)
        self.temperature = temperature
        self.seed = seed
        self.system_prompt = DEFAULT_SYSTEM_PROMPT if system_prompt is None else system_prompt
        self.limits = limits or LLMLimits()
        self.retry = retry or RetryPolicy()
        self.tool_exposure = ",".join(parse_exposure(m).mode for m in tool_exposure.split(","))
        self.name = name or f"{self.provider}:{self.model}"
        self.observer = observer
        self.extra_headers = dict(extra_headers or {})
        self.extra_body = dict(extra_body or {})

    def redact(self, text: str) -> str:
        """``text`` with the API key replaced by ``[API key]`` (a provider or a proxy may echo
        it in an error, which goes to the trajectory and the report)."""
        return text.replace(self._api_key, "[API key]") if len(self._api_key) >= 4 else text

    # -- provider hooks -----------------------------------------------------------------------
    @abstractmethod
    def endpoint(self) -> str:
        """The URL requests are POSTed to."""
        raise NotImplementedError

    @abstractmethod
    def headers(self) -> dict[str, str]:
        """The HTTP headers of every request (authentication included)."""
        raise NotImplementedError

    @abstractmethod
    def request_body(self, messages: list[Any], tools: list[ExposedTool]) -> dict[str, Any]:
        """The JSON body of one request for the conversation ``messages`` and offered ``tools``."""
        raise NotImplementedError

    @abstractmethod
    def initial_messages(self, instruction: str) -> list[Any]:
        """The conversation before the first request (the instruction as the user message)."""
        raise NotImplementedError

    @abstractmethod
    def parse_reply(self, data: dict[str, Any], turn: int, taken: set[str] | None = None) -> ModelReply:
        """Read one provider answer; raise :class:`ProviderError` when it is malformed.

        ``turn`` is the 0-based model turn (for generated call ids); ``taken`` holds the call ids
        the conversation already uses: a repeated id is made unique
        (:func:`mcpgym.evaluation.llm.replies.unique_call_id`) in the calls and in the echoed
        assistant message alike, and added to it."""
        raise NotImplementedError

    @abstractmethod
    def append_exchange(self, messages: list[Any], reply: ModelReply, outcomes: list[ToolOutcome]) -> None:
        """Append the model's reply and the tool results to ``messages``."""
        raise NotImplementedError

    # -- describe --------------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        """What changes this agent's results, for the run manifest: provider, API, model, base
        URL, sampling (temperature, provider seed), system prompt and its sha256, prompt
        template, how tool results and invalid calls are fed back, limits, retry policy,
        tool-exposure mode and extra request fields. The API key is never included."""
        return {
            "provider": self.provider,
            "api": self.api,
            "model": self.model,
            "base_url": self.base_url,
            "temperature": self.temperature,
            "seed": self.seed,
            "system_prompt": self.system_prompt,
            "system_prompt_sha256": hashlib.sha256(self.system_prompt.encode("utf-8")).hexdigest(),
            "prompt_template": PROMPT_TEMPLATE,
            "tool_choice": "auto",
            "tool_results": self.tool_result_format,
            "invalid_calls": (
                "arguments that are not a JSON object, and unknown tool names, are answered with a tool error "
                "(invalid_argument / not_found) without reaching the server; their arguments are echoed back as {}; "
                "the last call of a reply cut off by the output-token limit is refused (invalid_argument)"
            ),
            "retrieval": "tools returned by a successful search_tools call are offered from the next turn",
            "limits": asdict(self.limits),
            "retry": self.retry.as_dict(),
            "tool_exposure": self.tool_exposure,
            "extra_body": self.extra_body,
        }

    # -- the episode loop ------------------------------------------------------------------
    async def run(
        self,
        task: Any,
        tools: list[Any],
        call: CallFn,
        context: AgentContext = NO_CONTEXT,
    ) -> Any:
        """Run one episode and return its ``AgentResult`` (never raises for provider, model or
        tool failures; a :class:`CallLimitReached` from ``call``, the runner's call budget,
        ends the episode with status ``limit``).

        Args:
            task: an object with ``instruction`` (or the instruction string).
            tools: ``ToolInfo``-like objects of the episode.
            call: ``await call(name, arguments)`` -> ``CallResult``-like (``is_error``, ``payload``).
            context: the episode's :class:`~mcpgym.evaluation.agents.AgentContext`; its
                ``trial`` is not used (a model agent does not replay). ``context.user``: the
                episode's :class:`mcpgym.evaluation.users.UserChannel`, or None. With one,
                the model is also offered :data:`ASK_USER_TOOL` (``{"question": str}``): the
                question goes to the user simulator (an ``ask_user`` turn of the trajectory)
                and its answer comes back as the tool result ``{"answer": ...}``; it never
                reaches the MCP server. Elicitations of the server are relayed to the same
                simulator by the runner's MCP client.
                ``context.deadline``: the ``anyio.current_time()`` at which the runner stops the episode (its
                wall timeout), or None. Provider requests are cut :data:`DEADLINE_MARGIN`
                seconds before it and not retried past it, so a provider that is silent or
                keeps failing ends the episode ``errored`` (``provider_error: ...``, tokens
                kept) instead of being cut off as the agent's own ``limit``.
        """
        try:
            episode = _Episode(self, instruction_of(task), tools, context.user)
            if context.deadline is not None:
                episode.deadline = context.deadline - DEADLINE_MARGIN
        except Exception as exc:  # noqa: BLE001 - a malformed task or tool list is an errored episode
            return make_result(
                status=EpisodeStatus.ERRORED,
                stop_reason=f"agent_error: {type(exc).__name__}: {exc}",
                tokens=TokenUsage(),
                error=f"agent error: {type(exc).__name__}: {exc}",
            )
        try:
            return await episode.play(call)
        except CallLimitReached as exc:
            return episode.result(EpisodeStatus.LIMIT, str(exc) or "call budget spent")
        except Exception as exc:  # noqa: BLE001 - a bug or a raising CallFn must not crash the run
            what = self.redact(f"{type(exc).__name__}: {exc}")
            return episode.result(EpisodeStatus.ERRORED, f"agent_error: {what}", error=f"agent error: {what}")


@dataclass
class _Episode:
    """The state of one episode (the agent object is shared by concurrent episodes)."""

    agent: LLMAgent
    instruction: str
    tools: list[Any]
    user: Any = None
    registry: ToolRegistry = field(init=False)
    messages: list[Any] = field(init=False)
    input_tokens: int = 0
    output_tokens: int = 0
    invalid_calls: int = 0
    tool_calls: int = 0
    turns: int = 0
    record: Any = None
    call_ids: set[str] = field(default_factory=set)
    deadline: float | None = None
    provider: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.registry = ToolRegistry(self.tools)
        if self.user is not None:
            self.registry.add(ASK_USER_TOOL, ASK_USER_DESCRIPTION, ASK_USER_SCHEMA)
        self.messages = self.agent.initial_messages(self.instruction)

    def result(self, status: EpisodeStatus, stop_reason: str | None, final: str = "", error: str | None = None) -> Any:
        flags: list[str] = []
        if status in (EpisodeStatus.COMPLETED, EpisodeStatus.TRUNCATED) and tool_call_in_text(
            final, [t.api_name for t in self.registry.tools]
        ):
            flags.append(EpisodeFlag.TOOL_CALLS_AS_TEXT.value)
            LOG.warning("%s: %s", self.agent.name, text_call_warning(1))
        if status == EpisodeStatus.COMPLETED and not final.strip():
            flags.append(EpisodeFlag.EMPTY_FINAL_MESSAGE.value)
        if status == EpisodeStatus.TRUNCATED:
            flags.append(EpisodeFlag.TRUNCATED.value)
        if flags:
            self.provider["flags"] = flags
        return make_result(
            final_message=final,
            status=status,
            stop_reason=stop_reason,
            tokens=TokenUsage(input=self.input_tokens, output=self.output_tokens),
            invalid_calls=self.invalid_calls,
            error=error,
            provider=dict(self.provider) or None,
        )

    async def play(self, call: CallFn) -> Any:
        agent, limits = self.agent, self.agent.limits
        self.record = recorder_of(call)
        timeout = httpx.Timeout(agent.retry.request_timeout + 1.0)
        async with httpx.AsyncClient(timeout=timeout, follow_redirects=False, verify=shared_ssl_context()) as client:
            while True:
                if self.turns >= limits.max_turns:
                    return self.result(EpisodeStatus.LIMIT, f"turn limit reached ({limits.max_turns} model turns)")
                body = agent.request_body(self.messages, self.registry.tools)
                retries: list[ProviderRetry] = []

                def observe(event: dict[str, Any], retries: list[ProviderRetry] = retries) -> None:
                    retries.append(
                        ProviderRetry(
                            attempt=event.get("attempt", 1),
                            status=event.get("status"),
                            reason=agent.redact(str(event.get("reason", ""))),
                            delay=float(event.get("delay") or 0.0),
                        )
                    )
                    if agent.observer is not None:
                        agent.observer(event)

                started = time.monotonic()
                try:
                    data = await post_json(
                        client, agent.endpoint(), agent.headers(), body, agent.retry, observe, self.deadline
                    )
                    reply = agent.parse_reply(data, self.turns, self.call_ids)
                except ProviderError as exc:
                    what = agent.redact(str(exc))
                    self.provider["failed_request"] = {
                        "turn": self.turns,
                        "attempts": exc.attempts,
                        "status": exc.status,
                        "error": what,
                        "latency": round(time.monotonic() - started, 3),
                        "retries": [r.model_dump() for r in retries],
                    }
                    return self.result(
                        EpisodeStatus.ERRORED, f"provider_error: {what}", error=f"provider error: {what}"
                    )
                latency = round(time.monotonic() - started, 3)
                self.turns += 1
                self.input_tokens += reply.input_tokens
                self.output_tokens += reply.output_tokens
                if self.record is not None:
                    self.record(
                        MessageStep(
                            turn=self.turns - 1,
                            text=reply.text or "",
                            refusal=reply.refusal,
                            reasoning=reply.reasoning,
                            tool_calls=len(reply.calls),
                            finish_reason=reply.finish_reason,
                            tokens=TokenUsage(input=reply.input_tokens, output=reply.output_tokens),
                            latency=latency,
                            retries=retries,
                            removed_text=reply.removed_text,
                        )
                    )
                if not reply.calls:
                    if reply.finish_reason in CUT_OFF:
                        cap = limits.max_output_tokens
                        return self.result(
                            EpisodeStatus.TRUNCATED,
                            f"final reply cut off by the output-token limit ({reply.finish_reason}"
                            + (f", max {cap} tokens)" if cap else ")"),
                            final=reply.text,
                        )
                    return self.result(EpisodeStatus.COMPLETED, reply.finish_reason or "end_turn", final=reply.text)
                if reply.finish_reason in CUT_OFF and reply.calls[-1].problem is None:
                    reply.calls[-1].problem = (
                        "your reply was cut off by the output-token limit inside this call, so its arguments "
                        "may be incomplete; it was not run: send it again"
                    )
                total = self.input_tokens + self.output_tokens
                if limits.max_tokens is not None and total > limits.max_tokens:
                    return self.result(
                        EpisodeStatus.LIMIT, f"token limit reached ({total} > {limits.max_tokens} tokens)"
                    )
                outcomes: list[ToolOutcome] = []
                for parsed in reply.calls:
                    if self.tool_calls >= limits.max_tool_calls:
                        return self.result(
                            EpisodeStatus.LIMIT, f"tool-call limit reached ({limits.max_tool_calls} tool calls)"
                        )
                    self.tool_calls += 1
                    outcomes.append(await self.execute(parsed, call))
                agent.append_exchange(self.messages, reply, outcomes)

    async def execute(self, parsed: ParsedCall, call: CallFn) -> ToolOutcome:
        """Run one tool call (or refuse it locally) and return what to feed back."""
        tool = self.registry.resolve(parsed.api_name)
        named = isinstance(parsed.api_name, str) and parsed.api_name.strip()
        if tool is None and (named or parsed.problem is None):
            hint = " Use search_tools to find tools." if self.registry.has_search else ""
            what = (
                f"there is no tool named {shown_name(parsed.api_name)!r} in this episode"
                if named
                else f"the tool call names no tool (name: {shown_name(parsed.api_name)})"
            )
            payload = error_payload("not_found", f"{what}; call one of the tools you were given.{hint}", "name")
            return self.refuse(parsed, payload)
        if tool is None or parsed.problem is not None or parsed.arguments is None:
            label = tool.api_name if tool is not None else "tool call"
            payload = error_payload("invalid_argument", f"{label}: {parsed.problem or 'unusable arguments'}")
            return self.refuse(parsed, payload)
        if tool.name == ASK_USER_TOOL and self.user is not None:
            question = parsed.arguments.get("question")
            if not isinstance(question, str) or not question.strip():
                problem = error_payload("invalid_argument", "ask_user needs a non-empty 'question' string", "question")
                return self.refuse(parsed, problem)
            reply = await self.user.ask(question.strip())
            return ToolOutcome(parsed.call_id, _dump({"answer": reply.text}), False)
        result = await call(tool.name, parsed.arguments)
        is_error = bool(getattr(result, "is_error", False))
        returned = getattr(result, "payload", None)
        answer = returned if isinstance(returned, dict) else {"value": returned}
        if not is_error and tool.name == SEARCH_TOOL_NAME:
            self.registry.absorb_search_result(answer)
        return ToolOutcome(parsed.call_id, _dump(answer), is_error)

    def refuse(self, parsed: ParsedCall, payload: dict[str, Any]) -> ToolOutcome:
        """Answer an invalid call locally with ``payload``; record it as an invalid step (or
        count it in ``invalid_calls`` when the call function does not record), through
        :func:`~mcpgym.evaluation.agents.base.record_refused_call`."""
        recorded = record_refused_call(
            self.record,
            shown_name(parsed.api_name),
            payload,
            arguments=parsed.arguments,
            raw_arguments=parsed.raw,
            call_id=parsed.call_id,
        )
        if not recorded:
            self.invalid_calls += 1
        return ToolOutcome(parsed.call_id, _dump(payload), True)


def _header_safe_key(api_key: str, provider: str) -> str:
    """The API key without surrounding whitespace (a key file or a .env line read raw keeps its
    newline); ValueError, not quoting the key, when what is left cannot be an HTTP header value
    (a line break, a control or non-ASCII character): every request would fail, and the
    client's error would carry the key into the trajectory."""
    key = api_key.strip() if isinstance(api_key, str) else api_key
    if not isinstance(key, str) or any(not (0x20 <= ord(c) <= 0x7E) for c in key):
        raise ValueError(
            f"the {provider} API key holds a character an HTTP header cannot carry (a line break, a control "
            "or non-ASCII character); check the key you set"
        )
    return key


ASK_USER_TOOL = "ask_user"
"""The model-side tool through which an LLM agent asks the user in text."""
ASK_USER_DESCRIPTION = (
    "Ask the user a question in text and get their answer. Use it when the request is ambiguous, "
    "when a fact only the user knows is missing, or to get their confirmation before a payment; "
    "do not ask for what your other tools can tell you."
)
ASK_USER_SCHEMA = {
    "type": "object",
    "properties": {"question": {"type": "string", "description": "the question"}},
    "required": ["question"],
}


def _dump(payload: Any) -> str:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"), default=str)


__all__ = ["ASK_USER_TOOL", "DEFAULT_SYSTEM_PROMPT", "LLMAgent", "LLMLimits", "PROMPT_TEMPLATE"]
