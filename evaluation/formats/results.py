"""How a recorded tool result becomes a :class:`~mcpgym.evaluation.trajectory.ToolCallStep`: error
detection, error-code guessing, fault inference. Shared by every format but ``mcpgym``.

Fault inference (docs/design.md §7 asks for the fault ledger; files recorded elsewhere have
none): an error step whose code is in :data:`mcpgym.evaluation.scorer.INFERRED_FAULTS`
(``transient``, ``rate_limited``, ``timeout``, ``unavailable``, ``auth_required``) gets that
fault with ``fault_inferred=True``. When a result carries no machine-readable code, the code
is guessed from its text by :data:`ERROR_TEXT_PATTERNS` (network, timeout, rate limit and
internal errors become injected-fault codes).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable
from typing import Any

from mcpgym.evaluation.catalog import classify_tool
from mcpgym.evaluation.scorer import INFERRED_FAULTS
from mcpgym.evaluation.trajectory import ToolCallStep
from mcpgym.kernel.errors import ERROR_CODES
from mcpgym.kernel.spec import ToolKind

ERROR_TEXT_PATTERNS: tuple[tuple[str, str], ...] = (
    ("rate_limited", r"rate[\s_-]?limit|too many requests|\b429\b|quota exceeded"),
    ("timeout", r"\btimed?[\s_-]?out\b|\btimeout\b|deadline exceeded|\b504\b"),
    (
        "unavailable",
        r"\b(?:service|tool|server|endpoint|api)\s+(?:is\s+)?(?:currently\s+)?(?:unavailable|down)\b|\b503\b",
    ),
    (
        "transient",
        r"\binterne?a?l(?: server)? error\b|\bnetwork\b|\bconnection (?:reset|refused|error|lost|aborted)\b"
        r"|\btemporar(?:y|ily)\b|\btransient\b|\b50[02]\b|\bexceeded \d+ redirects\b|\btoo many redirects\b"
        r"|^message error\b",
    ),
    (
        "auth_required",
        r"\bnot (?:logged in|authenticated)\b|\blog[\s-]?in required\b|\bauthentication (?:required|needed)\b"
        r"|\b(?:token|session) (?:has )?expired\b|\bre-?authenticat|\bunauthenticated\b|\b401\b",
    ),
    (
        "permission_denied",
        r"\bprivilege|\bpermission|\bnot (?:allowed|permitted|authori[sz]ed)\b|\bforbidden\b"
        r"|\baccess denied\b|\bunauthori[sz]ed\b|\b403\b",
    ),
    (
        "not_found",
        r"\bnot found\b|\bno such\b|\bdoes(?: not|n['’]t) exist\b|\b(?:could not|cannot|can['’]t) find\b"
        r"|\bunknown (?:tool|function)\b|\b404\b",
    ),
    (
        "invalid_argument",
        r"\binvalid\b|\bmissing (?:required )?(?:argument|parameter|field|property)\b"
        r"|\brequired (?:argument|parameter|field|property)\b|\bmust be\b|\bbad request\b|\bmalformed\b"
        r"|\bvalidation\b|\b400\b",
    ),
    ("conflict", r"\balready\b|\bconflict\b|\bduplicate\b|\b409\b"),
    (
        "precondition_failed",
        r"\bprecondition\b|\bblocked\b|\binsufficient\b|\bnot enough\b|\bout of stock\b|\bsold out\b"
        r"|\bclosed\b",
    ),
)
"""Error code guessed from an error's text, (code, regex) tried case-insensitively in order;
the first match wins, no match gives no code. Used only when a result carries no code of
:data:`mcpgym.kernel.errors.ERROR_CODES`. Network, internal and temporary errors become
``transient``; rate limits ``rate_limited``; time-outs ``timeout``: the codes of injected
faults, which the scorer then treats as inferred faults."""

_ERROR_TEXT_RE = tuple((code, re.compile(rx, re.IGNORECASE)) for code, rx in ERROR_TEXT_PATTERNS)
_RETRY_AFTER_RE = re.compile(
    r"retry[\s_-]*after\D{0,12}?(\d+)|\b(?:wait|in)\s+(\d+)\s*(?:virtual\s+)?s(?:ec(?:ond)?s?)?\b", re.IGNORECASE
)
UNKNOWN_TOOL_RE = re.compile(
    r"\b(?:unknown|no such) (?:tool|function)\b|\b(?:tool|function) ['\"`]?[\w.-]+['\"`]? "
    r"(?:was |is )?not found\b|\bnot a (?:known |valid )?(?:tool|function)\b",
    re.IGNORECASE,
)
"""An error message saying the called tool does not exist."""
ERROR_PREFIX_RE = re.compile(r"^\s*(?:Error\b(?!\s*\?)|ERROR\b(?!\s*\?)|error:)")
"""A text result is an error when it starts with ``Error`` (any punctuation after it but a
question mark: ``Error? No: posted.`` is not a report of one), ``ERROR`` or ``error:``
(what tau-bench and most harnesses return for a failed call)."""


def guess_error_code(text: str, allowed: Iterable[str] | None = None, default: str | None = None) -> str | None:
    """Guess an error code from an error's text by :data:`ERROR_TEXT_PATTERNS`.

    Args:
        text: the error message.
        allowed: only these codes may be returned (None: any).
        default: returned when nothing (allowed) matches.
    """
    allow = None if allowed is None else set(allowed)
    for code, rx in _ERROR_TEXT_RE:
        if (allow is None or code in allow) and rx.search(text or ""):
            return code
    return default


def retry_after_from_text(text: str) -> int | None:
    """``retry after N`` / ``wait N seconds`` / ``in N s`` in an error text, in seconds."""
    m = _RETRY_AFTER_RE.search(text or "")
    return int(m.group(1) or m.group(2)) if m else None


def error_payload(code: str | None, message: str, **extra: Any) -> dict[str, Any]:
    """An mcpgym-shaped error result ``{"error": {"code", "message", "retry_after", ...}}``.

    ``retry_after`` is read from the message for ``rate_limited`` errors.
    """
    err: dict[str, Any] = {"code": code, "message": message}
    if code == "rate_limited":
        err["retry_after"] = retry_after_from_text(message)
    err.update({k: v for k, v in extra.items() if v is not None})
    return {"error": err}


def content_text(content: Any) -> str:
    """Text of a message/result content: a string, a list of parts (``{"type": "text",
    "text": ...}`` or strings; other parts skipped), or a JSON value (dumped)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for p in content:
            if isinstance(p, str):
                parts.append(p)
            elif isinstance(p, dict) and isinstance(p.get("text"), str):
                parts.append(p["text"])
        return "\n".join(parts)
    return json.dumps(content, ensure_ascii=False)


def parse_json_text(text: str) -> tuple[bool, Any]:
    """``(True, value)`` when ``text`` is a JSON document, else ``(False, text)``."""
    s = text.strip()
    if s[:1] in ("{", "[", '"') or s in ("true", "false", "null") or re.fullmatch(r"-?\d+(?:\.\d+)?", s or "x"):
        try:
            return True, json.loads(s)
        except ValueError:
            pass
    return False, text


def error_code_of(err: Any) -> str | None:
    """The mcpgym error code of an error value (``{"code": ...}`` or a bare code string), else None."""
    if isinstance(err, dict) and err.get("code") in ERROR_CODES:
        return err["code"]
    if isinstance(err, str) and err in ERROR_CODES:
        return err
    return None


def error_message_of(err: Any, fallback: str) -> str:
    """The message of an error value (its ``message``/``detail``/``msg``/``description``, the
    string itself, or the value dumped as JSON), else ``fallback``."""
    if isinstance(err, dict):
        for key in ("message", "detail", "msg", "description"):
            if isinstance(err.get(key), str):
                return err[key]
        return json.dumps(err, ensure_ascii=False)
    if isinstance(err, str):
        return err
    return fallback


OK_STATUSES: frozenset[str] = frozenset({"ok", "success", "succeeded", "successful"})
"""``status`` values of a result envelope that mean success."""
FAILED_STATUSES: frozenset[str] = frozenset({"failed", "fail", "failure"})
"""``status`` values of a refusal by the tool (not found, precondition, missing privilege)."""
BAD_CALL_STATUSES: frozenset[str] = frozenset({"error"})
"""``status`` values of a call the tool could not take (bad arguments, unknown tool)."""
INTERNAL_STATUSES: frozenset[str] = frozenset({"internal error", "internel error", "internal"})
"""``status`` values of an internal error: an injected network or password fault (ComplexMCP
spells it ``internel error``)."""
FAILED_CODES: tuple[str, ...] = ("permission_denied", "not_found", "conflict", "precondition_failed")


def _status_key(status: Any) -> str:
    return re.sub(r"[\s_]+", " ", str(status).strip().lower())


def is_error_status(status: Any) -> bool:
    """True when a result envelope's ``status`` names an error (failed, error, internal)."""
    key = _status_key(status)
    return key in FAILED_STATUSES or key in BAD_CALL_STATUSES or key in INTERNAL_STATUSES


def status_error(status: Any, output: Any) -> tuple[bool, str | None, dict[str, Any]]:
    """``(True, code, payload)`` of a ``{"status": <error status>, "output": ...}`` envelope.

    ``failed``: the tool refused; the code is guessed from ``output`` among
    :data:`FAILED_CODES`, default ``precondition_failed``. ``error``: a bad call,
    ``invalid_argument`` (``not_found`` on field ``name`` for an unknown tool). ``internal
    error`` / ``internel error``: ``transient``, an injected fault (inferred). Anything else:
    guessed from the text.
    """
    text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False, default=str)
    key = _status_key(status)
    if key in FAILED_STATUSES:
        code = guess_error_code(text, allowed=FAILED_CODES, default="precondition_failed")
    elif key in BAD_CALL_STATUSES:
        if UNKNOWN_TOOL_RE.search(text) or re.search(r"\btool\b.*\bdoes(?: not|n['’]t) exist\b", text, re.I):
            return True, "not_found", error_payload("not_found", text, field="name", status=status)
        code = "invalid_argument"
    elif key in INTERNAL_STATUSES:
        code = "transient"
    else:
        code = guess_error_code(text)
    return True, code, error_payload(code, text, status=status)


def parse_result_text(text: str) -> tuple[bool, Any]:
    """``(True, value)`` when ``text`` is JSON, or a Python-literal dict/list (single quotes,
    as a harness that prints a dict writes it); else ``(False, text)``."""
    parsed, value = parse_json_text(text)
    if parsed:
        return True, value
    s = text.strip()
    if s[:1] in ("{", "[") and len(s) < 1_000_000:
        try:
            value = ast.literal_eval(s)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return False, text
        return True, json.loads(json.dumps(value, default=str))  # tuples -> lists, sets/bytes -> str
    return False, text


HTTP_STATUS_CODES: dict[int, str] = {
    400: "invalid_argument",
    401: "auth_required",
    403: "permission_denied",
    404: "not_found",
    405: "invalid_argument",
    409: "conflict",
    410: "not_found",
    412: "precondition_failed",
    422: "invalid_argument",
    429: "rate_limited",
    500: "transient",
    502: "transient",
    503: "unavailable",
    504: "timeout",
}
"""HTTP status -> error code; another 4xx is ``invalid_argument``, another 5xx ``transient``."""

STATUS_KEYS: tuple[str, ...] = ("status", "status_code", "statusCode", "http_status", "httpStatus")
"""Keys of an HTTP status inside a result (an integer 400-599, or such a numeric string)."""
WRAPPER_KEYS: tuple[str, ...] = ("response", "result", "data", "body")
"""Keys under which APIs wrap the real answer; their value (a string is parsed) is searched too."""
ERROR_MESSAGE_RE = re.compile(
    r"^\W*(?:endpoint\b.*\b(?:does not|doesn't) exist|(?:invalid|missing) (?:api[\s_-]?key|token|access token)"
    r"|you are not subscribed|not subscribed to|bad request|not found|internal server error|service unavailable"
    r"|too many requests|unauthori[sz]ed|forbidden|access denied|request failed|an error occurred|error\b)",
    re.IGNORECASE,
)
"""The ``message``/``detail`` of a small body (at most :data:`ERROR_BODY_KEYS` keys) that is an
error report, not an answer (ToolBench's ``{'message': "Endpoint '/x' does not exist"}``)."""
ERROR_BODY_KEYS = 3
MESSAGE_KEYS: frozenset[str] = frozenset({"message", "detail", "msg"})
"""An answer inside a :data:`WRAPPER_KEYS` wrapper made of these keys only is a refusal
(RapidAPI's ``{'message': 'genre must be an integer: Thriller'}``): an API that answers
returns data, not a bare message."""
HTML_ERROR_RE = re.compile(
    r"<title>\s*(?:[45]\d\d\s*)?(forbidden|not found|bad request|unauthori[sz]ed|internal server error"
    r"|service unavailable|bad gateway|gateway time-?out|too many requests|access denied)",
    re.IGNORECASE,
)
"""An HTML page returned as a result whose title is an HTTP error (``<title>Forbidden</title>``)."""
HTTP_STATUS_LINE_RE = re.compile(
    r"^\s*(?:HTTP/\d(?:\.\d)?\s+)?([45]\d\d)\b(?:\s+[A-Za-z][\w '-]*)?\s*(?:$|[:.\n-])"
    r"|^\s*HTTP/\d(?:\.\d)?\s+([45]\d\d)\b"
)
"""A text result that is an HTTP error status line (``404 Not Found``, ``HTTP/1.1 503 ...``)."""
_BROKEN_STATUS_RE = re.compile(r"""['"](?:status|status_code|statusCode|http_status)['"]\s*:\s*['"]?([45]\d\d)\b""")
_BROKEN_FALSE_RE = re.compile(r"""['"](?:success|ok)['"]\s*:\s*(?:false|False)\b""")
_BROKEN_ENVELOPE_RE = re.compile(r"""^\s*\{\s*"error"\s*:\s*"([^"]+)"\s*,\s*"response"\s*:\s*"(.+)""", re.DOTALL)
_BROKEN_ERROR_RE = re.compile(
    r"""^\s*\{\s*['"](?:error|errors|error_message|errorMessage)['"]\s*:\s*['"]([^'"]+)['"]"""
)


def _http_code(status: Any) -> int | None:
    if isinstance(status, bool):
        return None
    if isinstance(status, str) and status.strip().isdigit():
        status = int(status.strip())
    return status if isinstance(status, int) and 400 <= status <= 599 else None


def http_error_code(status: int) -> str:
    """The error code of an HTTP error status (:data:`HTTP_STATUS_CODES`)."""
    return HTTP_STATUS_CODES.get(status, "invalid_argument" if status < 500 else "transient")


def _body_message(value: dict[str, Any]) -> str:
    for key in ("message", "detail", "msg", "error_message", "errorMessage", "description", "reason"):
        if isinstance(value.get(key), str) and value[key].strip():
            return value[key]
    return json.dumps(value, ensure_ascii=False, default=str)[:500]


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip()) or value in ({}, [])


def _clip(value: Any, limit: int = 2000) -> Any:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text[:limit]


def embedded_error(value: Any, depth: int = 0) -> tuple[str | None, str] | None:
    """An error a real API put inside an ordinary result: ``(code, message)``, or None.

    Looked for in an object and, one level down, in its :data:`WRAPPER_KEYS` (a string value
    is parsed as JSON or a Python literal: ``{"error": "", "response": "{'status': 503}"}``):

    * ``success`` / ``ok`` false (the code guessed from the message);
    * an HTTP error status (400-599) under a :data:`STATUS_KEYS` key, or under ``code`` next
      to a ``message`` / ``error`` (code by :data:`HTTP_STATUS_CODES`);
    * a truthy ``error`` / ``errors`` / ``error_message`` inside a wrapper;
    * a small body (at most :data:`ERROR_BODY_KEYS` keys) whose ``message`` / ``detail``
      reads as an error report (:data:`ERROR_MESSAGE_RE`), or, inside a wrapper, a body that
      is nothing but a message (:data:`MESSAGE_KEYS`);
    * inside a wrapper, a text that is an HTML error page (:data:`HTML_ERROR_RE`), an HTTP
      status line or ``Error:`` text (:func:`text_result_error`).
    """
    if isinstance(value, str) and depth > 0:
        parsed, value = parse_result_text(value)
        if not parsed or isinstance(value, str):
            return text_result_error(str(value))
    if not isinstance(value, dict):
        return None
    message = _body_message(value)
    if value.get("success") is False or value.get("ok") is False:
        return guess_error_code(message), message
    for key in STATUS_KEYS:
        status = _http_code(value.get(key))
        if status is not None:
            return http_error_code(status), f"{status}: {message}"
    status = _http_code(value.get("code"))
    if status is not None and any(k in value for k in ("message", "error", "msg", "detail")):
        return http_error_code(status), f"{status}: {message}"
    if depth > 0:
        for key in ("error", "errors", "error_message", "errorMessage"):
            if value.get(key) not in (None, False, "", {}, []):
                msg = error_message_of(value[key], message)
                return error_code_of(value[key]) or guess_error_code(msg), msg
    if depth > 0 and value and set(value) <= MESSAGE_KEYS:
        message = next(str(value[k]) for k in value)
        return guess_error_code(message), message  # an API's whole answer is a message: a refusal
    if len(value) <= ERROR_BODY_KEYS:
        for key in ("message", "detail", "msg"):
            text = value.get(key)
            if isinstance(text, str) and ERROR_MESSAGE_RE.search(text):
                return guess_error_code(text), text
    if depth == 0:
        for key in WRAPPER_KEYS:
            if key in value and value[key] not in (None, "", {}, []):
                found = embedded_error(value[key], depth + 1)
                if found is not None:
                    return found
    return None


def text_result_error(text: str, *, prefix: bool = True) -> tuple[str | None, str] | None:
    """An error in a result that is text, not JSON: JSON cut short (:func:`broken_json_error`),
    an HTTP error status line (:data:`HTTP_STATUS_LINE_RE`), or (with ``prefix``) text starting
    with ``Error`` (:data:`ERROR_PREFIX_RE`). ``(code, message)`` or None."""
    if text.lstrip()[:1] in ("{", "["):
        return broken_json_error(text)
    m = HTML_ERROR_RE.search(text[:2000])
    if m:
        return guess_error_code(m.group(1)), f"HTML error page: {m.group(1)}"
    m = HTTP_STATUS_LINE_RE.match(text)
    if m:
        return http_error_code(int(m.group(1) or m.group(2))), text.strip()[:500]
    if prefix and ERROR_PREFIX_RE.match(text):
        return guess_error_code(text), text.strip()[:500]
    return None


def broken_json_error(text: str) -> tuple[str | None, str] | None:
    """An error in JSON that does not parse (a result cut short, as ToolBench truncates long
    responses), read as text: an HTTP error status under a :data:`STATUS_KEYS` key, ``success``
    / ``ok`` false, or a non-empty leading ``error`` field. ``(code, message)`` or None."""
    m = _BROKEN_STATUS_RE.search(text)
    if m:
        status = int(m.group(1))
        return http_error_code(status), text[:500]
    if _BROKEN_FALSE_RE.search(text):
        return guess_error_code(text), text[:500]
    m = _BROKEN_ERROR_RE.match(text)
    if m:
        return guess_error_code(m.group(1)), m.group(1)
    return None


def interpret_result(content: Any, *, is_error: bool | None = None) -> tuple[bool, str | None, Any]:
    """Decide whether a recorded tool result is an error, and its code and result value.

    The one error detector of every format but ``mcpgym`` (whose steps carry their own
    flags), so one episode scores the same whichever format recorded it. Rules, in order:

    1. The content's text (:func:`content_text`) is parsed as JSON, or as a Python-literal
       dict (:func:`parse_result_text`).
    2. A JSON object with a truthy ``"error"`` is an error; the code is ``error.code`` (or
       ``error`` itself) when that is one of :data:`mcpgym.kernel.errors.ERROR_CODES`, else guessed
       from the error's message. When the object also carries a non-empty ``response`` (the
       ToolBench envelope), an error inside it (:func:`embedded_error`) gives the code; else
       the response is kept in the error payload (``error.response``): flagged, yet answered
       with data, which counts as a genuine answer for recovery. The result is the object itself (mcpgym's own payload
       shape ``{"error": {...}}`` passes through unchanged, ``retry_after`` included).
    3. A JSON object with ``"isError": true`` (an MCP result passed through) is an error.
    4. A JSON object whose ``status`` is an error status (``failed``, ``error``, ``internal
       error``...: :func:`status_error`) is an error; other statuses (``ok``, ``cancelled``,
       ``placed``...) leave the object a result.
    5. An error a real API put inside an ordinary result (:func:`embedded_error`:
       ``success: false``, an HTTP error status, an error inside a ``response`` wrapper, a
       small body whose message is an error report), in JSON that does not parse (a result
       cut short: :func:`broken_json_error`), or a text that is an HTTP error status line
       (:data:`HTTP_STATUS_LINE_RE`) is an error. Text starting with ``Error`` / ``ERROR`` /
       ``error:`` (:data:`ERROR_PREFIX_RE`) is an error; its code is guessed from the text
       (:func:`text_error`).
    6. ``is_error=True`` (a flag of the format) makes any result an error (with the code
       rules 2-5 find, else guessed from the text); ``is_error=False`` or None leaves the
       decision to rules 2-5.
    7. Anything else is a success; its result is the parsed value, or the text.

    Returns:
        ``(is_error, code, result)``; for text errors the result is :func:`error_payload`.
    """
    text = content_text(content)
    parsed, value = parse_result_text(text)
    if parsed and isinstance(value, dict):
        err = value.get("error")
        if err not in (None, False, "", {}, []):
            message = error_message_of(err, text)
            code = error_code_of(err) or guess_error_code(message)
            if not isinstance(err, dict) and not _empty(value.get("response")):
                inner = embedded_error({"response": value["response"]})
                if inner is not None:  # the answer says what failed: its status decides
                    return True, inner[0], error_payload(inner[0], f"{message}: {inner[1]}")
                # flagged, yet the answer carries data: kept for recovery (a genuine answer)
                return True, code, error_payload(code, message, response=_clip(value["response"]))
            return True, code, value if isinstance(err, dict) else text_error(message, code)[2]
        if value.get("isError") is True:
            return text_error(content_text(value.get("content")) or text)
        if "status" in value and is_error_status(value["status"]):
            return status_error(value["status"], value.get("output", value.get("message", "")))
    if not parsed:
        m = _BROKEN_ENVELOPE_RE.match(text)
        if m:  # a ToolBench envelope cut short: {"error": "<flag>", "response": "<data...
            code = guess_error_code(m.group(1))
            inner = broken_json_error(m.group(2))
            if inner is not None:
                return True, inner[0], error_payload(inner[0], f"{m.group(1)}: {inner[1]}")
            return True, code, error_payload(code, m.group(1), response=m.group(2)[:2000])
    found = embedded_error(value) if parsed else text_result_error(text, prefix=False)
    if found is not None:
        code, message = found
        return True, code, error_payload(code, message)
    if (not parsed and ERROR_PREFIX_RE.match(text)) or is_error:
        return text_error(text.strip())
    return False, None, value if parsed else text


def text_error(message: str, code: str | None = None) -> tuple[bool, str | None, dict[str, Any]]:
    """``(True, code, payload)`` of an error known only by its message: the code is guessed
    (:func:`guess_error_code`) unless given; an unknown tool (:data:`UNKNOWN_TOOL_RE`) is
    ``not_found`` on field ``name``, which the scorer counts as an invalid call."""
    code = code or guess_error_code(message)
    if code == "not_found" and UNKNOWN_TOOL_RE.search(message):
        return True, code, error_payload(code, message, field="name")
    return True, code, error_payload(code, message)


ANSWER_ARGS: tuple[str, ...] = ("final_answer", "answer", "response", "message", "result", "summary", "text")
"""Arguments of an ``end`` call (ToolBench's ``Finish``) that hold the agent's final answer."""
GIVE_UP_RETURN_TYPES: frozenset[str] = frozenset({"give_up_and_restart", "give_up"})
"""``return_type`` values of an ``end`` call by which the agent gives up (ToolBench)."""
GIVE_UP_MESSAGE = "I give up and restart."
"""The final message of an ``end`` call that gives up (the agent's choice, in words the refusal
patterns read as giving up)."""


def ending_kind(tool: str) -> ToolKind | None:
    """``handoff`` or ``end`` when a call of ``tool`` ends the episode by the agent's own
    choice (:func:`mcpgym.evaluation.catalog.classify_tool` on its name), else None."""
    kind = classify_tool(tool).kind
    return kind if kind in (ToolKind.HANDOFF, ToolKind.END) else None


def end_call_message(arguments: Any) -> str:
    """The final message an ``end`` call carries: :data:`GIVE_UP_MESSAGE` for a give-up
    ``return_type``, else the first string among :data:`ANSWER_ARGS`, else ``""``."""
    if not isinstance(arguments, dict):
        return arguments if isinstance(arguments, str) else ""
    if str(arguments.get("return_type", "")).strip().lower() in GIVE_UP_RETURN_TYPES:
        return GIVE_UP_MESSAGE
    for key in ANSWER_ARGS:
        if isinstance(arguments.get(key), str) and arguments[key].strip():
            return arguments[key]
    return ""


def make_step(
    step: int, tool: str, arguments: Any, *, is_error: bool = False, code: str | None = None, result: Any = None
) -> ToolCallStep:
    """A :class:`ToolCallStep`; an error whose code names an injected fault (scorer's
    ``INFERRED_FAULTS``) gets that ``fault`` with ``fault_inferred=True``."""
    fault = INFERRED_FAULTS.get(code or "") if is_error else None
    return ToolCallStep(
        step=step,
        tool=tool,
        arguments=arguments if arguments is not None else {},
        is_error=is_error,
        error_code=code if is_error else None,
        result=result,
        fault=fault,
        fault_inferred=fault is not None,
    )


def parse_arguments(raw: Any) -> tuple[Any, bool]:
    """Tool-call arguments as recorded -> ``(arguments, ok)``.

    A JSON string is parsed (an empty string is ``{}``); a dict passes; None is ``{}``.
    Unparsable JSON or a non-object gives ``(raw, False)``: the agent sent a malformed call.
    """
    if raw is None:
        return {}, True
    if isinstance(raw, dict):
        return raw, True
    if isinstance(raw, str):
        if not raw.strip():
            return {}, True
        try:
            value = json.loads(raw)
        except ValueError:
            return raw, False
        return (value, True) if isinstance(value, dict) else (raw, False)
    return raw, False


__all__ = [
    "ANSWER_ARGS",
    "GIVE_UP_MESSAGE",
    "GIVE_UP_RETURN_TYPES",
    "end_call_message",
    "ending_kind",
    "BAD_CALL_STATUSES",
    "ERROR_MESSAGE_RE",
    "HTTP_STATUS_CODES",
    "HTTP_STATUS_LINE_RE",
    "STATUS_KEYS",
    "WRAPPER_KEYS",
    "broken_json_error",
    "text_result_error",
    "embedded_error",
    "http_error_code",
    "ERROR_PREFIX_RE",
    "FAILED_CODES",
    "FAILED_STATUSES",
    "INTERNAL_STATUSES",
    "OK_STATUSES",
    "ERROR_TEXT_PATTERNS",
    "UNKNOWN_TOOL_RE",
    "content_text",
    "error_code_of",
    "error_message_of",
    "error_payload",
    "guess_error_code",
    "interpret_result",
    "is_error_status",
    "make_step",
    "parse_arguments",
    "parse_json_text",
    "parse_result_text",
    "retry_after_from_text",
    "status_error",
    "text_error",
]
