"""How a recorded tool result becomes a :class:`~mcpgym.evaluation.records.trajectory.ToolCallStep`:
error-code guessing, result text, status envelopes, fault inference, steps and arguments.
Shared by every format but ``mcpgym``; whether a result is an error at all is decided by
:func:`mcpgym.evaluation.formats.detector.interpret_result`.

Fault inference (docs/design.md §7 asks for the fault ledger; files recorded elsewhere have
none): an error step whose code is in :data:`mcpgym.evaluation.scoring.scorer.INFERRED_FAULTS`
(``transient``, ``rate_limited``, ``timeout``, ``unavailable``, ``auth_required``) gets that
fault with ``fault_inferred=True``. When a result carries no machine-readable code, the code
is guessed from its text by :data:`ERROR_TEXT_PATTERNS` (network, timeout, rate limit and
internal errors become injected-fault codes).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from mcpgym.evaluation.records.error_rule import ErrorRule
from mcpgym.evaluation.records.trajectory import ToolCallStep
from mcpgym.evaluation.scoring.scorer import INFERRED_FAULTS
from mcpgym.kernel import ast_parse
from mcpgym.kernel.errors import ERROR_CODES, ErrorCode

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
    if code == ErrorCode.RATE_LIMITED:
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
    """``(True, value)`` when ``text`` is a JSON document, else ``(False, text)`` (also for
    JSON nested deeper than the parser reads: it stays text)."""
    s = text.strip()
    if s[:1] in ("{", "[", '"') or s in ("true", "false", "null") or re.fullmatch(r"-?\d+(?:\.\d+)?", s or "x"):
        try:
            return True, json.loads(s)
        except (ValueError, RecursionError):  # nested past the parser's depth: kept as text
            pass
    return False, text


def error_code_of(err: Any) -> str | None:
    """The mcpgym error code of an error value (``{"code": ...}`` or a bare code string), else None."""
    if isinstance(err, dict) and err.get("code") in ERROR_CODES:
        return str(err["code"])
    if isinstance(err, str) and err in ERROR_CODES:
        return err
    return None


def error_message_of(err: Any, fallback: str) -> str:
    """The message of an error value (its ``message``/``detail``/``msg``/``description``, the
    string itself, or the value dumped as JSON), else ``fallback``."""
    if isinstance(err, dict):
        for key in ("message", "detail", "msg", "description"):
            if isinstance(err.get(key), str):
                return str(err[key])
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
            value = ast_parse.literal_eval(s)  # one thread at a time (CPython 3.11)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return False, text
        return True, json.loads(json.dumps(value, default=str))  # tuples -> lists, sets/bytes -> str
    return False, text


def make_step(
    step: int,
    tool: str,
    arguments: Any,
    *,
    is_error: bool = False,
    code: str | None = None,
    result: Any = None,
    rule: ErrorRule | None = None,
) -> ToolCallStep:
    """A :class:`ToolCallStep`; an error whose code names an injected fault (scorer's
    ``INFERRED_FAULTS``) gets that ``fault`` with ``fault_inferred=True``; ``rule`` is the
    layered reader's rule that made it an error (kept on errors only)."""
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
        error_rule=rule if is_error else None,
    )


MAX_DEEP_ARGUMENTS_CHARS = 200
"""Arguments nested too deep to parse are kept as their first this many characters."""


def parse_arguments(raw: Any, *, warnings: list[str] | None = None, where: str = "") -> tuple[Any, bool]:
    """Tool-call arguments as recorded -> ``(arguments, ok)``.

    A JSON string is parsed (an empty string is ``{}``); a dict passes; None is ``{}``.
    Unparsable JSON or a non-object gives ``(raw, False)``: the agent sent a malformed call.
    JSON nested deeper than the parser reads (``"[" * 50000``) is malformed too, kept as its
    first :data:`MAX_DEEP_ARGUMENTS_CHARS` characters (bounded), and a warning naming
    ``where`` is appended to ``warnings``: that one call is a malformed call, the rest of the
    episode is scored.
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
        except RecursionError:
            if warnings is not None:
                warnings.append(
                    f"{where}: arguments nested too deep to read ({len(raw)} characters); "
                    f"kept as a malformed call (first {MAX_DEEP_ARGUMENTS_CHARS} characters)"
                )
            return raw[:MAX_DEEP_ARGUMENTS_CHARS], False
        return (value, True) if isinstance(value, dict) else (raw, False)
    return raw, False


__all__ = [
    "BAD_CALL_STATUSES",
    "ERROR_PREFIX_RE",
    "FAILED_CODES",
    "FAILED_STATUSES",
    "INTERNAL_STATUSES",
    "MAX_DEEP_ARGUMENTS_CHARS",
    "OK_STATUSES",
    "ERROR_TEXT_PATTERNS",
    "UNKNOWN_TOOL_RE",
    "content_text",
    "error_code_of",
    "error_message_of",
    "error_payload",
    "guess_error_code",
    "is_error_status",
    "make_step",
    "parse_arguments",
    "parse_json_text",
    "parse_result_text",
    "retry_after_from_text",
    "status_error",
]
