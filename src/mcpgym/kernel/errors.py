"""Domain errors that a tool returns to the agent.

A tool raises :class:`ToolError` with an :class:`ErrorCode`; the server turns it into a
``CallToolResult`` with ``is_error=True``
whose structured content is ``{"error": ToolError.payload()}``. Nothing else an agent sends
may escape as an exception.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from mcpgym.kernel.exceptions import MCPGymError


class ErrorCode(StrEnum):
    """A tool error's code (docs/design.md §3); the value is what the payload and trajectories carry."""

    INVALID_ARGUMENT = "invalid_argument"
    NOT_FOUND = "not_found"
    PRECONDITION_FAILED = "precondition_failed"
    PERMISSION_DENIED = "permission_denied"
    AUTH_REQUIRED = "auth_required"
    CONFLICT = "conflict"
    TRANSIENT = "transient"
    RATE_LIMITED = "rate_limited"
    TIMEOUT = "timeout"
    UNAVAILABLE = "unavailable"
    USER_INPUT_REQUIRED = "user_input_required"
    USER_DECLINED = "user_declined"


ERROR_CODES: tuple[str, ...] = tuple(ErrorCode)
"""Every error code of docs/design.md §3, in order."""

USER_ERROR_CODES = frozenset({ErrorCode.USER_INPUT_REQUIRED, ErrorCode.USER_DECLINED})
"""Codes of a call that needed the user (:mod:`mcpgym.kernel.user`): ``user_input_required``
(the user must provide or confirm something first; nothing was changed) and
``user_declined`` (the user refused; the tool's declared decline effect was applied)."""

RETRYABLE_BY_DEFAULT = frozenset({ErrorCode.TRANSIENT, ErrorCode.RATE_LIMITED, ErrorCode.TIMEOUT})
"""Codes whose :class:`ToolError` is ``retryable`` unless told otherwise."""


class ErrorPayload(BaseModel):
    """The ``error`` object of a tool-error result, the wire contract every tool error keeps
    (docs/design.md §3; like the MCP SDK's ``ErrorData``, for tool results).

    Attributes:
        code: the :class:`ErrorCode`. message: for the agent. retryable: whether the same call
        may succeed if repeated. retry_after: virtual seconds to wait (``rate_limited``).
        field: the argument the error is about. details: extra JSON-able data (only written
        when non-empty).
    """

    model_config = ConfigDict(extra="forbid")

    code: ErrorCode
    message: str
    retryable: bool = False
    retry_after: int | None = None
    field: str | None = None
    details: dict[str, Any] | None = None

    def body(self) -> dict[str, Any]:
        """``{"code", "message", "retryable", "retry_after", "field"}`` (and ``details`` when
        non-empty), in that order: the ``error`` object as it travels and is stored."""
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

    def result(self) -> dict[str, Any]:
        """The whole payload of a tool-error result: ``{"error": body()}``."""
        return {"error": self.body()}


class ToolError(MCPGymError):
    """A domain error returned to the agent as a tool error.

    Args:
        code: an :class:`ErrorCode` (an outside app's code written as its value, e.g.
            ``"not_found"``, is accepted at run time and stored as the member).
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
        code: ErrorCode,
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
        self.code = ErrorCode(code)
        self.message = message
        self.retryable = code in RETRYABLE_BY_DEFAULT if retryable is None else retryable
        self.retry_after = retry_after
        self.field = field
        self.details = details or {}

    def payload(self) -> dict[str, Any]:
        """Return the JSON error payload (:meth:`ErrorPayload.body`): ``code``, ``message``,
        ``retryable``, ``retry_after``, ``field``, and any details."""
        return ErrorPayload.model_construct(
            code=self.code,
            message=self.message,
            retryable=self.retryable,
            retry_after=self.retry_after,
            field=self.field,
            details=self.details,
        ).body()

    def __repr__(self) -> str:
        return f"ToolError({self.code.value!r}, {self.message!r})"
