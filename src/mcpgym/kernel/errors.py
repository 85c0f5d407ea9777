"""Domain errors that a tool returns to the agent.

A tool raises :class:`ToolError`; the server turns it into ``CallToolResult(isError=True)``
whose structured content is ``{"error": ToolError.payload()}``. Nothing else an agent sends
may escape as an exception.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from mcpgym.kernel.exceptions import MCPGymError

ErrorCode = Literal[
    "invalid_argument",
    "not_found",
    "precondition_failed",
    "permission_denied",
    "auth_required",
    "conflict",
    "transient",
    "rate_limited",
    "timeout",
    "unavailable",
    "user_input_required",
    "user_declined",
]
ERROR_CODES: tuple[str, ...] = get_args(ErrorCode)
"""Every error code of docs/design.md §3, in order."""

USER_ERROR_CODES = frozenset({"user_input_required", "user_declined"})
"""Codes of a call that needed the user (:mod:`mcpgym.kernel.user`): ``user_input_required``
(the user must provide or confirm something first; nothing was changed) and
``user_declined`` (the user refused; the tool's declared decline effect was applied)."""

RETRYABLE_BY_DEFAULT = frozenset({"transient", "rate_limited", "timeout"})


class ToolError(MCPGymError):
    """A domain error returned to the agent as a tool error.

    Args:
        code: one of :data:`ERROR_CODES`.
        message: a human-readable explanation for the agent.
        retryable: whether the same call may succeed if repeated (default: true for
            ``transient``, ``rate_limited`` and ``timeout``).
        retry_after: for ``rate_limited``, virtual seconds to wait before calling again.
        field: the argument the error is about, when there is one.
        details: extra JSON-able data (e.g. the missing privilege).

    Raises:
        ValueError: if ``code`` is not a known error code.
    """

    def __init__(
        self,
        code: str,
        message: str,
        retryable: bool | None = None,
        retry_after: int | None = None,
        *,
        field: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        if code not in ERROR_CODES:
            raise ValueError(f"unknown tool error code {code!r}; expected one of {', '.join(ERROR_CODES)}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.retryable = code in RETRYABLE_BY_DEFAULT if retryable is None else retryable
        self.retry_after = retry_after
        self.field = field
        self.details = details or {}

    def payload(self) -> dict[str, Any]:
        """Return the JSON error payload: ``code``, ``message``, ``retryable``, ``retry_after``, ``field``, and any details."""
        out: dict[str, Any] = {
            "code": self.code,
            "message": self.message,
            "retryable": self.retryable,
            "retry_after": self.retry_after,
            "field": self.field,
        }
        if self.details:
            out["details"] = self.details
        return out

    def __repr__(self) -> str:
        return f"ToolError({self.code!r}, {self.message!r})"
