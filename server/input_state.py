"""Server-held ``requestState`` of the 2026-07-28 multi-round-trip calls (issue 29).

On a 2026-07-28 connection a ``tools/call`` that needs the user is answered with an
``InputRequiredResult``; the client answers its question and retries the call, echoing the
``requestState`` it was given. A client controls everything it echoes, so the state it holds
must not be the state the server trusts: a client that never asked the user could send back a
state saying the user confirmed a $500 payment. Here the client only ever holds an opaque
token (:func:`secrets.token_urlsafe`, 192 random bits); what the token stands for stays on the
server, in the episode:

* the tool and a digest of the call's canonical arguments (sorted-key JSON, SHA-256);
* the user arguments already settled and the records of the questions already answered,
  each built by the server from an answer it validated;
* the question now put to the user (the :class:`mcpgym.kernel.user.UserRequest` as JSON),
  which the next round's ``inputResponses`` must answer;
* an expiry (monotonic wall seconds; the episode's wait limit after issue).

:meth:`InputStates.redeem` gives a token's state back once: a second use, a token this episode
never issued (forged, flipped, from another episode or another server run), an expired one, or
one echoed with another tool or other arguments raises :class:`InputStateError`, whose message
says which. The store is bounded: at most :data:`MAX_PENDING` unanswered tokens per episode
(issuing one more forgets the oldest) and the used ones are remembered only until they expire.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from mcpgym.kernel.exceptions import InputError
from mcpgym.kernel.user import UserRequest

MAX_PENDING = 64
"""Most unanswered ``requestState`` tokens one episode keeps (the oldest is forgotten first)."""

MAX_STATE_CHARS = 256
"""Longest ``requestState`` looked up (every token issued is 32 characters): a longer echo is
refused without being hashed or quoted."""


class InputStateError(InputError, ValueError):
    """An echoed ``requestState`` is refused: forged, used before, expired, or issued for
    another call. The message says which and what to do; ``reason`` is one word for logs and
    tests (``unknown``, ``replayed``, ``expired``, ``tool``, ``arguments``, ``unanswered``)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def arguments_digest(arguments: Any) -> str:
    """SHA-256 (hex) of ``arguments`` as canonical JSON (sorted keys, no spaces, ASCII)."""
    text = json.dumps(arguments if arguments is not None else {}, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class InputState:
    """What a ``requestState`` token stands for (module docstring).

    Attributes:
        tool: the called tool's name. digest: :func:`arguments_digest` of the call's arguments
        as the client sent them. settled: user arguments the user already gave. asked: records
        of the questions answered so far (:func:`mcpgym.tools.elicit.answer_record`).
        question: the question the next answer must answer (``UserRequest`` as JSON).
        expires: monotonic wall seconds after which the token is refused.
    """

    tool: str
    digest: str
    settled: dict[str, Any]
    asked: list[dict[str, Any]]
    question: dict[str, Any]
    expires: float

    def answers(self, request: UserRequest) -> bool:
        """True when ``request`` is the very question this state put to the user."""
        return self.question == request.model_dump(mode="json")


_STORES_LOCK = threading.Lock()
"""Guards every :class:`InputStates` (tokens are issued and redeemed rarely, each in microseconds)."""


class InputStates:
    """One episode's issued ``requestState`` tokens.

    Args:
        ttl: wall seconds a token stays good (the episode's wait limit).
        max_pending: most unanswered tokens kept (:data:`MAX_PENDING`).
    """

    def __init__(self, ttl: float, max_pending: int = MAX_PENDING) -> None:
        self.ttl = ttl
        self.max_pending = max_pending
        # made on the first token (most episodes never ask the user); every store shares one
        # lock (issuing and redeeming are rare and short), so an idle episode holds no lock
        # or empty containers for the garbage collector to scan
        self._pending: OrderedDict[str, InputState] | None = None
        self._used: OrderedDict[str, float] | None = None
        self._lock = _STORES_LOCK

    def issue(
        self,
        tool: str,
        arguments: Any,
        settled: dict[str, Any],
        asked: list[dict[str, Any]],
        question: UserRequest,
        now: float | None = None,
    ) -> str:
        """Keep a new state and return its token (32 URL-safe characters)."""
        now = time.monotonic() if now is None else now
        token = secrets.token_urlsafe(24)
        state = InputState(
            tool=tool,
            digest=arguments_digest(arguments),
            settled=dict(settled),
            asked=[dict(a) for a in asked],
            question=question.model_dump(mode="json"),
            expires=now + self.ttl,
        )
        with self._lock:
            if self._pending is None:
                self._pending = OrderedDict()
            self._pending[token] = state
            while len(self._pending) > self.max_pending:
                self._pending.popitem(last=False)
        return token

    def redeem(self, token: Any, tool: str, arguments: Any, now: float | None = None) -> InputState:
        """The state ``token`` stands for, taken out of the store (a token is good once).

        Raises:
            InputStateError: ``unknown`` (never issued by this episode, or forgotten),
            ``replayed`` (used before), ``expired``, ``tool`` or ``arguments`` (issued for
            another call). Any refused token is used up too.
        """
        now = time.monotonic() if now is None else now
        with self._lock:
            if self._used is None:
                self._used = OrderedDict()
            self._forget_used(now)
            key = token if isinstance(token, str) and len(token) <= MAX_STATE_CHARS else None
            state = self._pending.pop(key, None) if key is not None and self._pending is not None else None
            if key is None or state is None:
                if key is not None and key in self._used:
                    raise InputStateError(
                        "replayed",
                        "requestState was already used: each one answers one round; call the tool again "
                        "without requestState to be asked afresh",
                    )
                raise InputStateError(
                    "unknown",
                    "requestState was not issued by this episode (altered, from another episode or call, or "
                    "forgotten); call the tool again without requestState to be asked afresh",
                )
            self._used[key] = state.expires
        if now >= state.expires:
            raise InputStateError(
                "expired",
                f"requestState expired ({self.ttl:g} s after it was issued); call the tool again without "
                "requestState to be asked afresh",
            )
        if state.tool != tool:
            raise InputStateError(
                "tool", f"requestState was issued for tool {state.tool!r}, not {tool[:100]!r}: retry the same call"
            )
        if state.digest != arguments_digest(arguments):
            raise InputStateError(
                "arguments", "requestState was issued for other arguments: retry the call with the same arguments"
            )
        return state

    def _forget_used(self, now: float) -> None:
        assert self._used is not None
        while self._used:
            first, expires = next(iter(self._used.items()))
            if expires > now and len(self._used) <= 16 * self.max_pending:
                break
            self._used.popitem(last=False)

    def __len__(self) -> int:
        return len(self._pending) if self._pending is not None else 0


__all__ = ["MAX_PENDING", "InputState", "InputStateError", "InputStates", "arguments_digest"]
