"""Provider-neutral pieces of a conversation: a model reply, its tool calls, what is fed back.

The provider adapters (:mod:`mcpgym.evaluation.llm.openai_chat`, :mod:`mcpgym.evaluation.llm.anthropic_messages`)
turn provider JSON into these; the loop in :mod:`mcpgym.evaluation.llm.agent` only sees these.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from mcpgym.kernel.errors import ErrorPayload
from mcpgym.kernel.validation_text import json_type


@dataclass
class ParsedCall:
    """One tool call of a model reply.

    Attributes:
        call_id: the provider's id of the call (generated when the provider gave none).
        api_name: the function name the model used.
        arguments: the arguments as a JSON object, or None when they were unusable.
        problem: why the arguments are unusable (None when they are fine).
        raw: the arguments exactly as the model sent them, as text, when they were unusable
            (kept in the trajectory so a reader sees what the model wrote).
    """

    call_id: str
    api_name: Any
    arguments: dict[str, Any] | None
    problem: str | None = None
    raw: str | None = None


@dataclass
class ModelReply:
    """One model reply, provider-neutral.

    Attributes:
        text: the reply's text (the final message when there is no call).
        calls: its tool calls, in the model's order.
        input_tokens, output_tokens: usage the provider reported for this request.
        finish_reason: the provider's stop/finish reason.
        message: the assistant message to append to the conversation (provider format).
        refusal: refusal text the provider returned apart from the text (OpenAI ``refusal``),
            or None.
        reasoning: the reasoning summary or thinking text the provider returned (OpenAI-
            compatible ``reasoning_content``/``reasoning``, Anthropic ``thinking`` blocks), or None.
        removed_text: the text taken out of a reply with tool calls because it was only leftover
            call syntax (:mod:`mcpgym.evaluation.llm.leftovers`), or None.
    """

    text: str
    calls: list[ParsedCall]
    input_tokens: int
    output_tokens: int
    finish_reason: str | None
    message: Any = None
    refusal: str | None = None
    reasoning: str | None = None
    removed_text: str | None = None


@dataclass
class ToolOutcome:
    """What one tool call gave, to be fed back to the model."""

    call_id: str
    text: str
    is_error: bool


def error_payload(code: str, message: str, field_name: str | None = None) -> dict[str, Any]:
    """A tool-error payload shaped like the server's: ``{"error": {code, message, retryable,
    retry_after, field}}`` (not retryable, no retry_after)."""
    return ErrorPayload(code=code, message=message, field=field_name).result()


def parse_arguments(raw: Any) -> tuple[dict[str, Any] | None, str | None]:
    """Tool-call arguments as the model sent them -> (object, None) or (None, problem).

    A JSON object (or a string holding one) is accepted; ``None`` or a blank string means no
    arguments (``{}``); anything else (invalid JSON, JSON nested too deeply to parse, a JSON
    array, a number..., named by their JSON type names; an object holding a lone surrogate
    escape such as ``\\ud800``) is a problem.
    """
    if raw is None:
        return {}, None
    if isinstance(raw, dict):
        return raw, None
    if isinstance(raw, str):
        if not raw.strip():
            return {}, None
        try:
            value = json.loads(raw)
        except ValueError as exc:
            return None, f"the arguments are not valid JSON ({exc}); send a JSON object"
        except RecursionError:
            return None, "the arguments are nested too deeply to parse; send a flat JSON object"
        if isinstance(value, dict):
            if _lone_surrogate(value):
                return None, (
                    "the arguments hold an escape of half a UTF-16 pair (such as \\ud800), which is no "
                    "character; send text"
                )
            return value, None
        return None, f"the arguments must be a JSON object, got a JSON {json_type(value)}"
    return None, f"the arguments must be a JSON object, got a JSON {json_type(raw)}"


def _lone_surrogate(value: Any) -> bool:
    """Whether the parsed JSON ``value`` holds a lone surrogate (``"\\ud800"`` is valid JSON
    but no text: no UTF-8 message can carry it, and sending it ended the MCP session)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def raw_text(raw: Any, limit: int = 4_000) -> str:
    """Unusable tool-call arguments as text for the trajectory (JSON for non-strings), cut at
    ``limit`` characters."""
    if isinstance(raw, str):
        return raw[:limit]
    try:
        return json.dumps(raw, ensure_ascii=False, default=str)[:limit]
    except (TypeError, ValueError):
        return repr(raw)[:limit]


NAME_SHOWN = 120
"""The most characters of a model's tool name that an error message or a trajectory repeats."""


def shown_name(api_name: Any, limit: int = NAME_SHOWN) -> str:
    """The tool name a model used, as text for an error message or a trajectory step: a string
    as is, anything else (a missing name, a number) as JSON; cut at ``limit`` characters with
    ``...`` (a model may send a name of any length, and repeating it whole would feed it back
    on every later turn)."""
    text = api_name if isinstance(api_name, str) else json.dumps(api_name, default=str)
    return text if len(text) <= limit else text[:limit] + "..."


def unique_call_id(call_id: str, taken: set[str] | None) -> str:
    """``call_id``, or ``call_id_2``, ``call_id_3``... when ``taken`` already holds it; the id
    returned is added to ``taken`` (None: no bookkeeping, ``call_id`` as is).

    Both tool APIs refuse a conversation in which two calls share an id, and a model may repeat
    one (in one reply, or a local server's ``call_0`` on every turn): each call must keep an id
    of its own so that its result pairs with it."""
    if taken is None:
        return call_id
    candidate, n = call_id, 1
    while candidate in taken:
        n += 1
        candidate = f"{call_id}_{n}"
    taken.add(candidate)
    return candidate


def usage_int(value: Any) -> int:
    """A provider usage figure as a non-negative int: an int, or a float holding a whole number
    (``12.0``, as some OpenAI-compatible servers write it); missing, negative, fractional,
    textual or boolean figures -> 0."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return value if isinstance(value, int) and value > 0 else 0


def check_base_url(url: str, given_as: str) -> str:
    """``url`` when it is an http(s) URL with a host; else ValueError naming where it came from
    (``given_as``: ``OPENAI_BASE_URL``, ``base_url``...). Any other scheme, a bare host or a
    broken address (``http://[::1``) would otherwise fail every request of every episode."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError as exc:
        raise ValueError(f"{given_as} {url!r} is not an http(s) URL: {exc}") from None
    if parts.scheme.lower() not in ("http", "https") or not host:
        raise ValueError(f"{given_as} {url!r} is not an http(s) URL with a host (e.g. http://localhost:8000/v1)")
    return url


def is_local_url(url: str) -> bool:
    """True when ``url`` points at this machine (loopback or ``localhost``): a local model
    server, where a missing API key is replaced by a dummy one."""
    host = (urlsplit(url).hostname or "").lower()
    return host in ("localhost", "::1", "0.0.0.0") or host.startswith("127.") or host.endswith(".localhost")


__all__ = [
    "ModelReply",
    "ParsedCall",
    "ToolOutcome",
    "check_base_url",
    "error_payload",
    "is_local_url",
    "parse_arguments",
    "raw_text",
    "shown_name",
    "unique_call_id",
    "usage_int",
]
