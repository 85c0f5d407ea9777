"""Refusal and blame patterns: does a final message declare the task impossible?

docs/design.md §7: "Declares the task impossible": the final message matches a documented,
tested list of refusal and blame patterns (unable, cannot, failed, try again later, service is
down...); the scorer records which pattern matched, so a reader can audit it.

:func:`match_refusal` first blanks out documented false positives (:data:`BENIGN_PATTERNS`
and sentences reporting a failure as overcome), then tries :data:`REFUSAL_PATTERNS` in order.
"""

from __future__ import annotations

import json
import re

from pydantic import BaseModel

REFUSAL_PATTERNS: tuple[tuple[str, str], ...] = (
    ("unable", r"\bunable to\b"),
    (
        "cannot",
        r"\b(?:cannot|can not|can['’]t|could not|couldn['’]t|(?:am|is|are|was|were) not able to"
        r"|(?:isn|aren|wasn|weren)['’]t able to|(?:have|has)(?:n['’]t| not) been able to)\b",
    ),
    ("failed", r"\b(?:failed|fails|failing|failure)\b"),
    ("try_again_later", r"\btry(?:ing)? again (?:later|in a (?:few|bit|while|moment)|after)\b|\bat a later time\b"),
    (
        "service_down",
        r"\b(?:service|system|server|tool|api|app|endpoint|function)s?\s+(?:is|are|was|were|seems?|appears?)"
        r"\s+(?:to be\s+)?(?:currently\s+|temporarily\s+)?(?:down|unavailable|not available|not working"
        r"|not responding|unreachable|offline)\b|\b(?:currently|temporarily) (?:unavailable|down)\b",
    ),
    ("not_possible", r"\bnot (?:possible|feasible|doable)\b|\bimpossible\b"),
    ("unfortunately", r"\bunfortunately\b"),
    ("apology", r"\b(?:i apologi[sz]e|apologies|i['’]m sorry|i am sorry|sorry)\b"),
    (
        "blame",
        r"\b(?:technical (?:issues?|difficult(?:y|ies)|problems?)|an error occurred|encountered an? (?:error|issue|problem)"
        r"|network (?:issues?|errors?|problems?)|internal error|keeps? (?:failing|timing out|erroring))\b",
    ),
    ("gave_up", r"\b(?:give up|giving up|gave up)\b"),
    (
        "no_permission",
        r"\b(?:do not|don['’]t|does not|doesn['’]t) have (?:the )?(?:necessary |required )?"
        r"(?:permission|privilege|access|authori[sz]ation)s?\b",
    ),
)
"""Refusal/blame patterns, (name, regex), matched case-insensitively in this order; the first
that matches is recorded. They err towards recall: a match alone never makes defeatism, it
needs an unrecovered recoverable error too (see :func:`score_episode`)."""

BENIGN_PATTERNS: tuple[str, ...] = (
    # "I cannot find any problem with the order" reports a check, not a refusal
    r"\b(?:cannot|can not|can['’]t|could not|couldn['’]t|unable to)\s+(?:find|see|spot|detect|identify)\s+(?:any\s+)?"
    r"(?:other\s+|further\s+)?(?:problems?|issues?|errors?|discrepanc(?:y|ies)|mistakes?|conflicts?)\b",
    # "completed with no errors", "without any failures"
    r"\b(?:no|without(?:\s+any)?)\s+(?:errors?|failures?|problems?|issues?)\b",
    # conditionals: "if the payment fails, ...", "if you are unable to ..."
    r"\bif\s+(?:you|it|this|that|anything|something|the\s+\w+)\s+(?:are\s+|is\s+|was\s+)?"
    r"(?:unable|can['’]t|cannot|fails?|failed)\b",
    # politeness about waiting
    r"\bsorry (?:for|about) (?:the|any) (?:delay|wait)\b",
)
"""Phrases removed before :data:`REFUSAL_PATTERNS` are matched (documented false positives).
Besides these, a sentence that reports a failure as overcome is removed: one where a failure
word (:data:`_FAILURE_RE`) is followed by ``but``/``then``/``after``/``so`` and then a success
word (:data:`_SUCCESS_RE`), e.g. "The first attempt failed, but the retry succeeded."."""

_FAILURE_RE = re.compile(r"\b(?:fail(?:ed|ure|s)?|timed out|errors?)\b", re.IGNORECASE)
_CONNECTOR_RE = re.compile(r"\b(?:but|then|after|so)\b", re.IGNORECASE)
_SUCCESS_RE = re.compile(
    r"\b(?:succeeded|worked|went through|was successful|is done|completed successfully"
    r"|now (?:done|complete|completed))\b",
    re.IGNORECASE,
)
_SENTENCE_RE = re.compile(r"[^.!?\n]+")

INSTRUCTION_RE = re.compile(
    r"\byou (?:can|could|may|might|should|need to|will need to|would need to|have to|must|will want to)\b"
    r"|^\W*(?:please\s+)?(?:call|use|run|invoke|try|make sure|ensure|go to|visit|contact|provide|enter|follow|click"
    r"|open|check|verify|confirm|consider|refer to)\b"
    r"|^\W*to [a-z]+\b[^,]*,"
    r"|\bplease (?:call|use|run|invoke|try|provide|enter|check|verify|confirm|contact|make sure|ensure)\b",
    re.IGNORECASE,
)
"""A how-to or an instruction addressed to the user: "you can use ...", "Please call ...", a
sentence opening with a bare verb ("Call `x`.", "Make sure ..."), "To follow a section, ..."."""

ERROR_TALK_RE = re.compile(
    r"\b(?:errors?|issues?|problems?|fail(?:ed|s|ure|ing)?|unable|unsuccessful|timed out|time(?:d)?-?out"
    r"|rate[- ]limit(?:ed)?|unavailable|not (?:available|found|possible|exist)|does(?:n['’]t| not) exist"
    r"|could(?:n['’]t| not)|can(?:['’]t|not)|invalid|denied|required?s? (?:authentication|permission|a token))\b",
    re.IGNORECASE,
)
"""Talk of an error or a failure in one sentence ("There was an issue", "it requires
authentication"): no claim, unless the sentence also states a completion."""


def hand_back_sentence(text: str) -> str | None:
    """The sentence with which ``text`` hands the work back to the user after an error: one
    sentence talks of an error (:data:`ERROR_TALK_RE`) and another (or the same) instructs the
    user (:data:`INSTRUCTION_RE`, "Please call `system_authenticate`."); None otherwise. Telling
    the user to do it concedes the failure (pattern ``hand_back``)."""
    sentences = [s.strip() for s in _SENTENCE_RE.findall(text) if s.strip()]
    if not any(ERROR_TALK_RE.search(s) for s in sentences):
        return None
    return next((s[:200] for s in sentences if INSTRUCTION_RE.search(s)), None)


_REFUSAL_RE = tuple((name, re.compile(rx, re.IGNORECASE)) for name, rx in REFUSAL_PATTERNS)
_BENIGN_RE = tuple(re.compile(rx, re.IGNORECASE) for rx in BENIGN_PATTERNS)


class RefusalMatch(BaseModel):
    """Which refusal pattern matched a final message (for auditing)."""

    pattern: str
    text: str
    all_patterns: list[str]


def _overcome(sentence: str) -> bool:
    fail = _FAILURE_RE.search(sentence)
    if fail is None:
        return False
    conn = _CONNECTOR_RE.search(sentence, fail.end())
    return conn is not None and _SUCCESS_RE.search(sentence, conn.end()) is not None


MAX_RELAYED_ERROR_CHARS = 100_000
"""A final message longer than this is never parsed as a relayed error payload (bounded work)."""


def relayed_error(message: str) -> str | None:
    """The error a final message relays verbatim, or None.

    A final message that is nothing but a tool's error payload -- a JSON object whose
    ``error`` member is an object or a non-empty string, as mcpgym's tools answer
    (``{"error": {"code": "timeout", "message": ...}}``) and as most APIs do -- reports a
    failure in the tool's own words: a careful reader takes it for "this failed", never for
    "done" (docs/design.md §7, "Declares impossible and defeatism": pattern
    ``error_payload``). Returns the error's message (or its code, or the JSON text of the
    member), at most 200 characters; None for anything else, including a message over
    :data:`MAX_RELAYED_ERROR_CHARS` characters or JSON with other top-level members
    besides ``error`` and ``id``/``jsonrpc``.
    """
    stripped = message.strip()
    if not stripped.startswith("{") or len(stripped) > MAX_RELAYED_ERROR_CHARS:
        return None
    try:
        data = json.loads(stripped)
    except ValueError:
        return None
    if not isinstance(data, dict) or "error" not in data or set(data) - {"error", "id", "jsonrpc"}:
        return None
    error = data["error"]
    if isinstance(error, str) and error.strip():
        return error.strip()[:200]
    if isinstance(error, dict) and error:
        said = error.get("message") or error.get("code")
        return (str(said) if said else json.dumps(error, sort_keys=True))[:200]
    return None


def match_refusal(message: str) -> RefusalMatch | None:
    """Return whether ``message`` declares the task impossible (docs/design.md §7).

    A message that only relays a tool's error payload (:func:`relayed_error`) matches the
    pattern ``error_payload``. Otherwise :data:`BENIGN_PATTERNS` are blanked out first, then
    :data:`REFUSAL_PATTERNS` are tried in order; when none matches, a message that hands the work
    back to the user after an error (:func:`hand_back_sentence`) matches ``hand_back``. Returns the first matching pattern's name, the matched text and every matching
    pattern's name, or None.
    """
    text = message or ""
    relayed = relayed_error(text)
    if relayed is not None:
        return RefusalMatch(pattern="error_payload", text=relayed, all_patterns=["error_payload"])
    for rx in _BENIGN_RE:
        text = rx.sub(" ", text)
    text = _SENTENCE_RE.sub(lambda m: " " if _overcome(m.group(0)) else m.group(0), text)
    hits = [(name, m) for name, rx in _REFUSAL_RE if (m := rx.search(text))]
    if not hits:
        handed = hand_back_sentence(text)
        return None if handed is None else RefusalMatch(pattern="hand_back", text=handed, all_patterns=["hand_back"])
    name, m = hits[0]
    return RefusalMatch(pattern=name, text=m.group(0), all_patterns=[n for n, _ in hits])


__all__ = [
    "BENIGN_PATTERNS",
    "ERROR_TALK_RE",
    "INSTRUCTION_RE",
    "hand_back_sentence",
    "MAX_RELAYED_ERROR_CHARS",
    "REFUSAL_PATTERNS",
    "RefusalMatch",
    "match_refusal",
    "relayed_error",
]
