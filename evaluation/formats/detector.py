"""The one error detector of every format but ``mcpgym``: is a recorded tool result an error,
with which code? :func:`interpret_result` (its rules in its docstring), including the errors
real APIs put inside an ordinary result (:func:`embedded_error`: ``success: false``, HTTP
statuses, ``{"error": "", "response": ...}`` envelopes, bare-message answers, HTML error
pages) and in results cut short (:func:`broken_json_error`). docs/design.md §6, "Outside
trajectories".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from mcpgym.evaluation.formats.results import (
    ERROR_PREFIX_RE,
    UNKNOWN_TOOL_RE,
    content_text,
    error_code_of,
    error_message_of,
    error_payload,
    guess_error_code,
    is_error_status,
    parse_result_text,
    status_error,
)
from mcpgym.evaluation.records.error_rule import ErrorRule
from mcpgym.kernel.errors import ErrorCode

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
    r"^\s*(?:HTTP/\d(?:\.\d)?\s+)?([45]\d\d)\b(?:[ ]+[A-Za-z][\w '-]*)?[ ]*(?:$|[:.\n-])"
    r"|^\s*HTTP/\d(?:\.\d)?\s+([45]\d\d)\b"
)
"""A text result that is an HTTP error status line (``404 Not Found``, ``HTTP/1.1 503 ...``). The
code and its reason are separated by spaces: ``540<TAB>return nil`` is line 540 of a numbered file
listing (Claude Code's ``Read``), no status."""
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
            return str(value[key])
    return json.dumps(value, ensure_ascii=False, default=str)[:500]


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip()) or value in ({}, [])


def _clip(value: Any, limit: int = 2000) -> Any:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text[:limit]


def embedded_error(value: Any, depth: int = 0) -> tuple[str | None, str, ErrorRule] | None:
    """An error a real API put inside an ordinary result: ``(code, message, rule)``, or None.

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
    nested = ErrorRule.NESTED_ERROR if depth > 0 else None
    if value.get("success") is False or value.get("ok") is False:
        return guess_error_code(message), message, nested or ErrorRule.SUCCESS_FALSE
    rest = value.get("object") == "error" or (
        isinstance(value.get("documentation_url"), str) and isinstance(value.get("message"), str)
    )
    for key in STATUS_KEYS:
        status = _http_code(value.get(key))
        if status is not None:
            return (
                http_error_code(status),
                f"{status}: {message}",
                nested or (ErrorRule.REST_ERROR_BODY if rest else ErrorRule.HTTP_STATUS),
            )
    status = _http_code(value.get("code"))
    if status is not None and any(k in value for k in ("message", "error", "msg", "detail")):
        return http_error_code(status), f"{status}: {message}", nested or ErrorRule.HTTP_STATUS
    if rest and value.get("object") == "error":
        return guess_error_code(message), message, nested or ErrorRule.REST_ERROR_BODY
    if depth > 0:
        for key in ("error", "errors", "error_message", "errorMessage"):
            if value.get(key) not in (None, False, "", {}, []):
                msg = error_message_of(value[key], message)
                return error_code_of(value[key]) or guess_error_code(msg), msg, ErrorRule.NESTED_ERROR
    if depth > 0 and value and set(value) <= MESSAGE_KEYS:
        message = next(str(value[k]) for k in value)
        # an API's whole answer is a message: a refusal
        return guess_error_code(message), message, ErrorRule.ERROR_MESSAGE
    if len(value) <= ERROR_BODY_KEYS:
        for key in ("message", "detail", "msg"):
            text = value.get(key)
            if isinstance(text, str) and ERROR_MESSAGE_RE.search(text):
                return (
                    guess_error_code(text),
                    text,
                    nested or (ErrorRule.REST_ERROR_BODY if rest else ErrorRule.ERROR_MESSAGE),
                )
    if rest:
        return guess_error_code(message), message, nested or ErrorRule.REST_ERROR_BODY
    if depth == 0:
        for key in WRAPPER_KEYS:
            if key in value and value[key] not in (None, "", {}, []):
                found = embedded_error(value[key], depth + 1)
                if found is not None:
                    return found
        return nested_error(value)
    return None


NESTED_KEYS: tuple[str, ...] = ("error", "errors", "error_message", "errorMessage")
"""Keys of an error object nested below the top level of a result (``execution_result.error``)."""
MAX_NESTED_DEPTH = 3
"""Object levels below the top searched for a nested error (lists are data: not searched)."""


REASON_KEYS: tuple[str, ...] = ("reason", "message", "error", "detail", "msg", "error_message")
"""Keys of the explanation beside an error ``status`` / ``result`` member."""


def _status_member_error(obj: dict[str, Any]) -> bool:
    """An object whose ``status`` or ``result`` names an error (``"result": "error"``) next to
    an explanation (:data:`REASON_KEYS`): a per-item outcome a server reports inside its answer."""
    return any(isinstance(obj.get(k), str) and is_error_status(obj[k]) for k in ("status", "result")) and any(
        obj.get(k) not in (None, "", {}, []) for k in REASON_KEYS
    )


def nested_error(value: dict[str, Any]) -> tuple[str | None, str, ErrorRule] | None:
    """An error object (a non-empty :data:`NESTED_KEYS` member) or an HTTP error status under a
    :data:`STATUS_KEYS` key, in an object nested at most :data:`MAX_NESTED_DEPTH` levels below
    the top along objects only (``{"execution_result": {"error": {"status_code": 403}}}``);
    ``(code, message, rule)`` or None. Lists are collections of records and are not searched
    (a listed run whose ``error`` field is data is no error of the call)."""
    stack: list[tuple[dict[str, Any], int]] = [(v, 1) for v in value.values() if isinstance(v, dict)]
    while stack:
        obj, depth = stack.pop(0)
        for key in NESTED_KEYS:
            err = obj.get(key)
            if isinstance(err, (dict, str)) and err not in ("", {}) and not (isinstance(err, str) and not err.strip()):
                msg = error_message_of(err, _body_message(obj))
                status = next(
                    (_http_code(err.get(k)) for k in STATUS_KEYS if isinstance(err, dict) and _http_code(err.get(k))),
                    None,
                )
                code = error_code_of(err) or (http_error_code(status) if status else guess_error_code(msg))
                return code, msg, ErrorRule.NESTED_ERROR
        for key in STATUS_KEYS:
            status = _http_code(obj.get(key))
            if status is not None:
                return http_error_code(status), f"{status}: {_body_message(obj)}", ErrorRule.NESTED_ERROR
        if obj.get("success") is False or obj.get("ok") is False or _status_member_error(obj):
            msg = _body_message(obj)
            return guess_error_code(msg), msg, ErrorRule.NESTED_ERROR
        if depth < MAX_NESTED_DEPTH:
            stack.extend((v, depth + 1) for v in obj.values() if isinstance(v, dict))
    return None


FAILURE_TEXT_RE = re.compile(
    r"^\W*(?:failed to\b|failed\s*:|mcp error\b|error (?:executing|calling|running|invoking)\b"
    r"|an error occurred (?:while|during|when)\b|tool (?:execution|call) failed\b|execution failed\b"
    r"|input validation error\b|invalid arguments? for tool\b|unknown tool\b|traceback \(most recent call last\)"
    r"|exception\s*:|\w*(?:exception|error): |(?:tool|function) ['\"`]?[\w.-]+['\"`]? (?:was |is )?not found\b)"
    r"|\b(?:GET|POST|PUT|PATCH|DELETE) https?://\S+: [45]\d\d\b",
    re.IGNORECASE,
)
"""A text result that reports a failure in a harness's or server's words, at its start
(``failed to get file contents: ...: 404 Not Found``, ``MCP error -32602: ...``, ``An error
occurred while running the tool``, ``Input validation error: ...``, a Python traceback, a
``ValueError: ...`` line) or as an HTTP client's failed request line anywhere (``GET
https://api.github.com/...: 404``)."""


ERROR_HEADING_RE = re.compile(r"^\s*#{1,6}\s*error\s*:?\s*$", re.IGNORECASE)
"""A first line that is a Markdown heading ``Error`` (``### Error``, as the Playwright MCP
server answers a failed call)."""
COMMAND_FAILURE_RE = re.compile(
    r"^(?:traceback \(most recent call last\)|(?:[a-z_]\w*\.)*[a-z_]\w*(?:error|exception): "
    r"|.*: command not found\s*$|(?:zsh: |\(eval\):\d+: )?command not found: \S+\s*$|.*\bno such file or directory\s*$|.*can't open file .*\[errno \d+\]"
    r"|.*\bno module named \S+\s*$|.*unexpected eof while looking for matching|.*syntax error near unexpected token"
    r"|.*: permission denied\.?\s*$|\W{0,3}✗|python was not found|error: |fatal: |npm err!|e: unable to"
    r"|[a-z][\w.-]*(?: [\w.-]+){0,3} not found: )"
    r"|\"error\"\s*:\s*\{\s*\"code\"\s*:\s*[45]\d\d\b",
    re.IGNORECASE | re.MULTILINE,
)
"""A line of a shell or code runner's output showing the command failed (rule
``command_failure``): a Python traceback or exception line (``ModuleNotFoundError: ...``,
``SyntaxError: ...``), ``bash: gh: command not found`` (zsh's ``command not found: gh``, ``(eval):1: command not found: gh``), ``cd: x: No such file or directory``,
``python: can't open file ... [Errno 2]``, ``python: No module named markitdown``, bash's
``unexpected EOF while looking for matching``, ``Permission denied``, a CLI's failure mark (``✗ page.evaluate: ...``), an
``error:`` / ``fatal:`` / ``npm ERR!`` line, a CLI's ``<thing> not found: ...`` (``repository not
found: repo not found: name="tonic"``), or an HTTP error object a CLI printed after its
log lines (``{"error": {"code": 400, ...}}``). Only a runner's output is read so: a file's
content that shows a traceback is no failure of the read. A probe's answer is no failure either
(:data:`PROBE_LINE_RE`)."""
PROBE_LINE_RE = re.compile(r"^\s*(?:ls|find|bfs|stat|test|which|file|du|tree): ", re.IGNORECASE | re.MULTILINE)
"""A line of a command that asks whether a path is there (``ls: cannot access 'x/node_modules': No
such file or directory``, ``find: '/root': Permission denied``): its "no" is the answer asked
for, never the command's failure. Both labellers of the seventh first-contact source read an
``ls`` loop probing for ``node_modules`` and ``find`` lines about directories the agent did not
target so (docs/labelling.md)."""
_ANSI_RE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def command_failure(text: str) -> str | None:
    """The line of a runner's output that shows the command failed (:data:`COMMAND_FAILURE_RE`,
    ANSI colours removed, the first 4,000 characters read; a probe's line,
    :data:`PROBE_LINE_RE`, is skipped), or None."""
    text = _ANSI_RE.sub("", text[:4000])
    for m in COMMAND_FAILURE_RE.finditer(text):
        start = text.rfind("\n", 0, m.start()) + 1  # the line the match is on
        if not PROBE_LINE_RE.match(text, start):
            return m.group(0).strip()[:200]
    return None


ERROR_TAG_RE = re.compile(r"^\s*<error>(?!\s*content truncated)", re.IGNORECASE)
"""A text that opens with an ``<error>`` element (the fetch server's ``<error>Page failed to be
simplified from HTML</error>``); its truncation notice (``<error>Content truncated...``) is no
failure."""
SHORT_ERROR_RE = re.compile(r"^\s*(?!no\b)[A-Za-z][\w ]{0,30}\berror\s*\.?\s*$", re.IGNORECASE)
"""A short text that is nothing but an error's name (``url error``, ``network error``)."""
_CONTENTS_HEADER_RE = re.compile(r"^\s*contents of \S+:\s*\n", re.IGNORECASE)


def text_result_error(text: str, *, prefix: bool = True) -> tuple[str | None, str, ErrorRule] | None:
    """An error in a result that is text, not JSON: JSON cut short (:func:`broken_json_error`),
    an HTML error page, an HTTP error status line (:data:`HTTP_STATUS_LINE_RE`), a failure
    report (:data:`FAILURE_TEXT_RE`), or (with ``prefix``) text starting with ``Error``
    (:data:`ERROR_PREFIX_RE`). ``(code, message, rule)`` or None."""
    if text.lstrip()[:1] in ("{", "["):
        return broken_json_error(text)
    m = HTML_ERROR_RE.search(text[:2000])
    if m:
        return guess_error_code(m.group(1)), f"HTML error page: {m.group(1)}", ErrorRule.HTML_ERROR_PAGE
    m = HTTP_STATUS_LINE_RE.match(text)
    if m:
        return http_error_code(int(m.group(1) or m.group(2))), text.strip()[:500], ErrorRule.HTTP_STATUS_LINE
    body = _CONTENTS_HEADER_RE.sub("", text, count=1)  # a fetch server's "Contents of <url>:" line
    if body is not text and (ERROR_PREFIX_RE.match(body) or ERROR_TAG_RE.match(body) or SHORT_ERROR_RE.match(body)):
        return guess_error_code(body), body.strip()[:500], ErrorRule.ERROR_TEXT
    if ERROR_TAG_RE.match(text) or SHORT_ERROR_RE.match(text):
        return guess_error_code(text), text.strip()[:500], ErrorRule.ERROR_TEXT
    if ERROR_HEADING_RE.match(text.lstrip().split("\n", 1)[0]):
        return guess_error_code(text), text.strip()[:500], ErrorRule.ERROR_HEADING
    if prefix and ERROR_PREFIX_RE.match(text):
        return guess_error_code(text), text.strip()[:500], ErrorRule.ERROR_PREFIX
    m = FAILURE_TEXT_RE.search(text[:4000])
    if m and not ERROR_PREFIX_RE.match(text):  # an "Error..." text is the prefix rule's
        status = re.search(r"\b([45]\d\d)\b", text[:500])
        code = http_error_code(int(status.group(1))) if status else guess_error_code(text)
        return code, text.strip()[:500], ErrorRule.ERROR_TEXT
    return None


def broken_json_error(text: str) -> tuple[str | None, str, ErrorRule] | None:
    """An error in JSON that does not parse (a result cut short, as ToolBench truncates long
    responses), read as text: an HTTP error status under a :data:`STATUS_KEYS` key, ``success``
    / ``ok`` false, or a non-empty leading ``error`` field. ``(code, message, rule)`` or None."""
    m = _BROKEN_STATUS_RE.search(text)
    if m:
        status = int(m.group(1))
        return http_error_code(status), text[:500], ErrorRule.BROKEN_JSON
    if _BROKEN_FALSE_RE.search(text):
        return guess_error_code(text), text[:500], ErrorRule.BROKEN_JSON
    m = _BROKEN_ERROR_RE.match(text)
    if m:
        return guess_error_code(m.group(1)), m.group(1), ErrorRule.BROKEN_JSON
    return None


@dataclass(frozen=True)
class Found:
    """An error found in a result value: its ``code``, the ``result`` kept on the step (an
    error payload, or the value itself when it is already mcpgym-shaped) and the ``rule``."""

    code: str | None
    result: Any
    rule: ErrorRule


def judge_value(value: Any, *, parsed: bool) -> Found | None:
    """The error rules on one (peeled) result value, in order; None for no error.

    1. A JSON object with a truthy ``"error"``: the code is ``error.code`` (or ``error``
       itself) when that is one of :data:`mcpgym.kernel.errors.ERROR_CODES`, else guessed from
       the error's message (rule ``error_field``). When the object also carries a non-empty
       ``response`` (the ToolBench envelope, rule ``envelope``), an error inside it
       (:func:`embedded_error`) gives the code; else the response is kept in the error
       payload (``error.response``): flagged, yet answered with data, which counts as a
       genuine answer for recovery. mcpgym's own payload shape ``{"error": {...}}`` passes
       through unchanged, ``retry_after`` included.
    2. A JSON object with ``"isError": true`` (rule ``is_error``).
    3. A JSON object whose ``status`` is an error status (``failed``, ``error``, ``internal
       error``...: :func:`status_error`; rule ``envelope_status``); other statuses leave it a
       result.
    4. An error a real API put inside an ordinary result (:func:`embedded_error`: ``success:
       false``, an HTTP error status, a REST error body, an error nested below the top, a
       small body whose message is an error report), in JSON that does not parse (a result cut
       short: :func:`broken_json_error`, also a ToolBench envelope cut short), or a text that
       is an HTML error page, an HTTP error status line, a failure report
       (:data:`FAILURE_TEXT_RE`) or starts with ``Error`` / ``ERROR`` / ``error:``
       (:data:`ERROR_PREFIX_RE`; its code guessed from the text, :func:`text_error`).

    Args:
        value: the innermost layer of :func:`mcpgym.evaluation.formats.layers.peel`.
        parsed: whether ``value`` was parsed (False: a plain text).
    """
    if parsed and isinstance(value, dict):
        err = value.get("error")
        if err not in (None, False, "", {}, []):
            text = json.dumps(value, ensure_ascii=False, default=str)
            message = error_message_of(err, text)
            code = error_code_of(err) or guess_error_code(message)
            if not isinstance(err, dict) and not _empty(value.get("response")):
                inner = embedded_error({"response": value["response"]})
                if inner is not None:  # the answer says what failed: its status decides
                    return Found(inner[0], error_payload(inner[0], f"{message}: {inner[1]}"), ErrorRule.ENVELOPE)
                # flagged, yet the answer carries data: kept for recovery (a genuine answer)
                return Found(code, error_payload(code, message, response=_clip(value["response"])), ErrorRule.ENVELOPE)
            return Found(code, value if isinstance(err, dict) else text_error(message, code)[2], ErrorRule.ERROR_FIELD)
        if value.get("isError") is True:
            _, code, payload = text_error(content_text(value.get("content")) or json.dumps(value, default=str))
            return Found(code, payload, ErrorRule.IS_ERROR)
        if "status" in value and is_error_status(value["status"]):
            _, code, payload = status_error(value["status"], value.get("output", value.get("message", "")))
            return Found(code, payload, ErrorRule.ENVELOPE_STATUS)
    text = value if isinstance(value, str) else ""
    if not parsed:
        m = _BROKEN_ENVELOPE_RE.match(text)
        if m:  # a ToolBench envelope cut short: {"error": "<flag>", "response": "<data...
            code = guess_error_code(m.group(1))
            broken = broken_json_error(m.group(2))
            if broken is not None:
                return Found(broken[0], error_payload(broken[0], f"{m.group(1)}: {broken[1]}"), ErrorRule.ENVELOPE)
            return Found(code, error_payload(code, m.group(1), response=m.group(2)[:2000]), ErrorRule.ENVELOPE)
    found = embedded_error(value) if parsed else text_result_error(text, prefix=False)
    if found is not None:
        return Found(found[0], error_payload(found[0], found[1]), found[2])
    if not parsed and ERROR_PREFIX_RE.match(text):
        _, code, payload = text_error(text.strip())
        return Found(code, payload, ErrorRule.ERROR_PREFIX)
    return None


def interpret_result(content: Any, *, is_error: bool | None = None) -> tuple[bool, str | None, Any]:
    """``(is_error, code, result)`` of a recorded tool result: the layered reader
    (:func:`mcpgym.evaluation.formats.layers.read_result`, which also names the rule) without
    its rule. ``is_error`` is the format's own flag."""
    from mcpgym.evaluation.formats.layers import read_result

    r = read_result(content, flag=is_error)
    return r.is_error, r.code, r.result


def text_error(message: str, code: str | None = None) -> tuple[bool, str | None, dict[str, Any]]:
    """``(True, code, payload)`` of an error known only by its message: the code is guessed
    (:func:`guess_error_code`) unless given; an unknown tool (:data:`UNKNOWN_TOOL_RE`) is
    ``not_found`` on field ``name``, which the scorer counts as an invalid call."""
    code = code or guess_error_code(message)
    if code == ErrorCode.NOT_FOUND and UNKNOWN_TOOL_RE.search(message):
        return True, code, error_payload(code, message, field="name")
    return True, code, error_payload(code, message)


__all__ = [
    "COMMAND_FAILURE_RE",
    "ERROR_HEADING_RE",
    "command_failure",
    "ERROR_BODY_KEYS",
    "ERROR_MESSAGE_RE",
    "HTML_ERROR_RE",
    "HTTP_STATUS_CODES",
    "HTTP_STATUS_LINE_RE",
    "PROBE_LINE_RE",
    "MESSAGE_KEYS",
    "STATUS_KEYS",
    "WRAPPER_KEYS",
    "broken_json_error",
    "embedded_error",
    "http_error_code",
    "Found",
    "FAILURE_TEXT_RE",
    "MAX_NESTED_DEPTH",
    "NESTED_KEYS",
    "interpret_result",
    "judge_value",
    "nested_error",
    "text_error",
    "text_result_error",
]
