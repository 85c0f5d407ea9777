"""HTTP to an LLM provider: one JSON POST with timeouts, retries and exponential backoff.

Retried: HTTP 429, HTTP 5xx, connection failures, bodies that fail their Content-Encoding and
requests that get no complete answer within ``request_timeout`` wall seconds (nor past the
episode's deadline). Not retried: other 4xx (bad request, bad key, unknown model...), a 2xx
whose body is not JSON, and an answer over ``MAX_ANSWER_BYTES`` (not read further: an endless
answer must not fill the run's memory). A wait honours the provider's ``retry-after-ms``
or ``Retry-After`` header (seconds or an HTTP date), capped at ``max_retry_after``; without
one it is ``backoff_base * 2**retry`` capped at ``backoff_max`` (no jitter: the harness is
the only client of its own rate budget in practice, and waits stay reproducible).
"""

from __future__ import annotations

import contextlib
import email.utils
import functools
import json
import re
import ssl
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import anyio
import httpx

from mcpgym.kernel.exceptions import ServiceError

Observer = Callable[[dict[str, Any]], None]
"""Receives provider events such as ``{"event": "retry", "attempt", "reason", "status", "delay"}``."""

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
"""A JSON ``\\uD800``-``\\uDFFF`` escape: half of a surrogate pair, or a lone one."""

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def replace_lone_surrogates(value: Any) -> Any:
    """``value`` (decoded JSON) with every lone surrogate in its strings and keys replaced by
    U+FFFD. ``json.loads`` keeps a ``"\\ud800"`` escape that has no other half as a lone
    surrogate, which no UTF-8 writer takes: one in a model's reply made the trajectory line,
    and so the whole run, fail to be written. Pairs were already joined by ``json.loads``."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [replace_lone_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {replace_lone_surrogates(k): replace_lone_surrogates(v) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class RetryPolicy:
    """How provider requests are timed out and retried.

    Attributes:
        max_retries: retries after the first attempt (0: no retry).
        backoff_base: the first backoff wait in wall seconds; it doubles on each retry.
        backoff_max: the longest backoff wait (wall seconds).
        max_retry_after: the longest wait a ``Retry-After`` header may impose (wall seconds).
        request_timeout: wall seconds for one whole request (connect, send, full answer).
    """

    max_retries: int = 4
    backoff_base: float = 1.0
    backoff_max: float = 30.0
    max_retry_after: float = 60.0
    request_timeout: float = 120.0

    def __post_init__(self) -> None:
        if isinstance(self.max_retries, bool) or not isinstance(self.max_retries, int):
            raise ValueError(f"max_retries must be an integer, got {self.max_retries!r}")
        for name in ("backoff_base", "backoff_max", "max_retry_after", "request_timeout"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"{name} must be a number of seconds, got {value!r}")
        if self.max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        for name in ("backoff_base", "backoff_max", "max_retry_after"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0")
        if self.request_timeout <= 0:
            raise ValueError("request_timeout must be > 0")

    def backoff(self, retry: int) -> float:
        """The wait (wall seconds) before retry number ``retry`` (0-based) without a header."""
        return float(min(self.backoff_max, self.backoff_base * (2**retry)))

    def as_dict(self) -> dict[str, Any]:
        """The policy as a JSON-able dict (for ``describe()``)."""
        return asdict(self)


@functools.lru_cache(maxsize=1)
def shared_ssl_context() -> ssl.SSLContext:
    """One TLS context for every provider client of the process (httpx's defaults, including
    ``SSL_CERT_FILE``/``SSL_CERT_DIR``); building one per episode costs ~0.1 s."""
    return httpx.create_ssl_context()


class ProviderError(ServiceError):
    """A provider request failed for good (after retries, or a non-retryable answer).

    Attributes:
        status: the last HTTP status, or None when no answer arrived.
        attempts: how many requests were sent.
    """

    def __init__(self, message: str, *, status: int | None = None, attempts: int = 1) -> None:
        super().__init__(message)
        self.status = status
        self.attempts = attempts


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """The wait a 429/503 answer asks for, in seconds, or None.

    Reads ``retry-after-ms`` (milliseconds, as OpenAI sends it) first, then ``Retry-After``:
    delta-seconds (fractions accepted) or an HTTP date (compared with ``now``, default the
    wall clock). Negative or unparsable values give None.
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    ms = lowered.get("retry-after-ms")
    if ms is not None:
        with contextlib.suppress(ValueError):
            value = float(ms) / 1000.0
            if value >= 0:
                return value
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    with contextlib.suppress(ValueError):
        value = float(raw)
        return value if value >= 0 else None
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


def _snippet(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


MAX_ANSWER_BYTES = 32 * 1024 * 1024
"""The largest provider answer read (bytes). A model's reply is a few KB; an endpoint that
streams without end would otherwise fill the memory of the whole run before the request
timeout (about 300 MB a second over loopback)."""


async def _post_capped(
    client: httpx.AsyncClient, url: str, headers: Mapping[str, str], body: dict[str, Any], max_bytes: int
) -> tuple[httpx.Response, bytes | None]:
    """POST and read the answer body, stopping past ``max_bytes`` (then the body is None).

    Raises:
        _Undecodable: when the body fails its ``Content-Encoding`` (httpx's DecodingError,
            which is no TransportError).
    """
    async with client.stream("POST", url, headers=dict(headers), json=body) as response:
        chunks: list[bytes] = []
        size = 0
        try:
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > max_bytes:
                    return response, None
                chunks.append(chunk)
        except httpx.DecodingError as exc:
            encoding = response.headers.get("content-encoding", "")
            raise _Undecodable(response.status_code, f"{encoding!r}: {exc}") from None
    return response, b"".join(chunks)


class _Undecodable(Exception):
    """An answer body that failed its Content-Encoding (status, detail)."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status


def _text(content: bytes) -> str:
    return content.decode("utf-8", errors="replace")


def endpoint(url: str) -> str:
    """``"POST http://127.0.0.1:9/v1/chat/completions"``: the request's method and URL without its
    query string (which may carry a key), at most 200 characters, for the error messages that
    say where a provider failed."""
    from mcpgym.kernel.shorten import short_text

    return "POST " + short_text(url.split("?", 1)[0], 200)


async def post_json(
    client: httpx.AsyncClient,
    url: str,
    headers: Mapping[str, str],
    body: dict[str, Any],
    policy: RetryPolicy,
    observer: Observer | None = None,
    deadline: float | None = None,
    max_bytes: int = MAX_ANSWER_BYTES,
) -> dict[str, Any]:
    """POST ``body`` as JSON to ``url`` and return the decoded JSON object of the answer.

    Args:
        client: the HTTP client (its own timeouts should not be shorter than the policy's).
        url, headers, body: the request.
        policy: timeouts and retries (see the module docstring).
        observer: called with one event dict per retry.
        deadline: the ``anyio.current_time()`` by which the call must have returned (the
            episode's wall timeout), or None. A request is cut at it and no retry starts past
            it, so a silent or failing provider ends the episode as a provider failure rather
            than as the episode's timeout.
        max_bytes: the largest answer body read (default :data:`MAX_ANSWER_BYTES`); a larger
            one is not read further and fails the call without a retry.

    Raises:
        ProviderError: for a non-retryable answer, a 2xx that is not a JSON object, an answer
            body over ``max_bytes``, or when
            the retries (or the time before ``deadline``) are exhausted; the message names the
            last failure and the attempts.
    """
    attempt = 0
    while True:
        attempt += 1
        status: int | None = None
        wait: float | None = None
        budget = policy.request_timeout
        if deadline is not None:
            budget = min(budget, max(0.0, deadline - anyio.current_time()))
        try:
            with anyio.fail_after(budget):
                response, content = await _post_capped(client, url, headers, body, max_bytes)
            if content is None:
                raise ProviderError(
                    f"HTTP {response.status_code} with an answer larger than {max_bytes} bytes (not read further)",
                    status=response.status_code,
                    attempts=attempt,
                )
        except TimeoutError:
            reason = (
                f"no answer within {policy.request_timeout:g} s"
                if budget >= policy.request_timeout
                else f"no answer within the {budget:.3g} s left before the episode's timeout"
            )
        except _Undecodable as exc:  # a proxy's glitch as often as not: retried
            status = exc.status
            reason = f"HTTP {status} with a body that fails its Content-Encoding {exc}"
        except httpx.TimeoutException:
            reason = f"no answer within {policy.request_timeout:g} s (HTTP client timeout)"
        except httpx.TransportError as exc:
            reason = f"connection failed: {type(exc).__name__}: {exc}"
        else:
            status = response.status_code
            if 200 <= status < 300:
                try:
                    data = json.loads(content)
                except RecursionError:
                    raise ProviderError(
                        f"HTTP {status} with JSON nested too deeply to parse", status=status, attempts=attempt
                    ) from None
                except ValueError:
                    raise ProviderError(
                        f"HTTP {status} with a body that is not JSON: {_snippet(_text(content))}",
                        status=status,
                        attempts=attempt,
                    ) from None
                if _SURROGATE_ESCAPE.search(content):
                    data = replace_lone_surrogates(data)
                if not isinstance(data, dict):
                    raise ProviderError(
                        f"HTTP {status} with a JSON {type(data).__name__}, expected an object",
                        status=status,
                        attempts=attempt,
                    )
                return data
            reason = f"HTTP {status}: {_snippet(_text(content))}"
            if status != 429 and status < 500:
                raise ProviderError(f"{reason} ({endpoint(url)})", status=status, attempts=attempt)
            wait = parse_retry_after(response.headers)
        if attempt > policy.max_retries:
            raise ProviderError(
                f"{reason} ({endpoint(url)}; gave up after {attempt} attempt{'s' if attempt > 1 else ''})",
                status=status,
                attempts=attempt,
            )
        delay = min(wait, policy.max_retry_after) if wait is not None else policy.backoff(attempt - 1)
        if deadline is not None and anyio.current_time() + delay >= deadline:
            raise ProviderError(
                f"{reason} ({endpoint(url)}; gave up after {attempt} attempt{'s' if attempt > 1 else ''}: "
                "no time left for a retry before the episode's timeout)",
                status=status,
                attempts=attempt,
            )
        if observer is not None:
            observer(
                {
                    "event": "retry",
                    "attempt": attempt,
                    "status": status,
                    "reason": reason,
                    "delay": delay,
                    "retry_after": wait,
                }
            )
        await anyio.sleep(delay)


__all__ = [
    "MAX_ANSWER_BYTES",
    "endpoint",
    "Observer",
    "ProviderError",
    "RetryPolicy",
    "parse_retry_after",
    "post_json",
    "replace_lone_surrogates",
    "shared_ssl_context",
]
