"""The fault kinds and their facts, in one table (docs/design.md §4).

:class:`FaultKind` is the closed set of injected faults; :data:`FAULTS` holds, for each, every
fact another module needs: which tool kinds it hits, whether it is decided per call or once
per episode, what the agent sees (the error code, whether it is retryable, the message),
whether the write takes effect. The fault profile (:mod:`mcpgym.tools.faults`), the invoker
(:mod:`mcpgym.tools.invoke`), the scorer's fault inference
(:mod:`mcpgym.evaluation.scoring.calls`) and the scripted agents
(:mod:`mcpgym.evaluation.agents.scripted`) read this table; none spells a kind's facts out.

Adding a fault kind: a member here and its row in :data:`FAULTS`, and its rate field in
``mcpgym.tools.faults.FaultRates``. A kind that is an error returned before or after the
write (like ``transient`` or ``timeout``) is injected by the invoker from the row alone; a
kind with state of its own (a rate-limit window, an auth challenge, a rollback) also needs its
branch in :mod:`mcpgym.tools.invoke`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

from mcpgym.kernel.errors import ErrorCode, ToolError


class FaultKind(StrEnum):
    """An injected fault kind; the value is the name in profiles, ledgers and trajectories."""

    TRANSIENT = "transient"
    RATE_LIMITED = "rate_limited"
    TIMEOUT = "timeout"
    UNAVAILABLE = "unavailable"
    AUTH_CHALLENGE = "auth_challenge"
    LOST_WRITE = "lost_write"
    STALE_READ = "stale_read"


@dataclass(frozen=True, slots=True)
class FaultFacts:
    """What one fault kind is and does.

    Attributes:
        kind: the fault kind.
        hits: the tool kinds (``read``, ``write``, ``auth``) it can hit (``unavailable`` also
            needs a declared alternative).
        per_call: decided per call from the stacked rates (True), or once per episode (False:
            ``unavailable``).
        code: the error code the agent sees, or None when the call looks like a success
            (``lost_write``, ``stale_read``).
        retryable: the error's ``retryable`` flag (None: no error).
        applied: a write hit by the fault takes effect (``timeout``: True; ``lost_write``: the
            agent sees success, nothing applied: False).
        message: the error message, ``{tool}`` replaced by the tool's name, for the kinds the
            invoker injects from this row alone (``transient``, ``timeout``); None for kinds
            whose message carries state (a wait, an alternative, the reauth tool).
    """

    kind: FaultKind
    hits: frozenset[str]
    per_call: bool
    code: ErrorCode | None
    retryable: bool | None
    applied: bool
    message: str | None = None

    @property
    def is_error(self) -> bool:
        """The agent sees an error (not a success)."""
        return self.code is not None

    def error(self, tool: str, message: str | None = None, **extra: object) -> ToolError:
        """The :class:`ToolError` the agent sees for this fault on ``tool``.

        Args:
            tool: the tool's name (for the row's message).
            message: the message, when the row has none (it carries state).
            extra: ``retry_after``, ``details``: passed to :class:`ToolError`.

        Raises:
            ValueError: for a kind that is no error, or without a message.
        """
        if self.code is None:
            raise ValueError(f"fault kind {self.kind} returns no error")
        text = message if message is not None else (self.message or "").format(tool=tool)
        if not text:
            raise ValueError(f"fault kind {self.kind} needs a message")
        return ToolError(self.code, text, retryable=self.retryable, **extra)  # type: ignore[arg-type]  # extra: retry_after, details


_READ_WRITE = frozenset({"read", "write"})
FAULTS: Mapping[FaultKind, FaultFacts] = MappingProxyType(
    {
        f.kind: f
        for f in (
            FaultFacts(
                FaultKind.TRANSIENT,
                frozenset({"read", "write", "auth"}),
                per_call=True,
                code=ErrorCode.TRANSIENT,
                retryable=True,
                applied=False,
                message="{tool}: temporary failure, nothing was changed; retry",
            ),
            FaultFacts(
                FaultKind.RATE_LIMITED,
                _READ_WRITE,
                per_call=True,
                code=ErrorCode.RATE_LIMITED,
                retryable=True,
                applied=False,
            ),
            FaultFacts(
                FaultKind.TIMEOUT,
                frozenset({"write"}),
                per_call=True,
                code=ErrorCode.TIMEOUT,
                retryable=True,
                applied=True,
                message="{tool}: the request timed out; its effect is unknown",
            ),
            FaultFacts(
                FaultKind.UNAVAILABLE,
                _READ_WRITE,
                per_call=False,
                code=ErrorCode.UNAVAILABLE,
                retryable=False,
                applied=False,
            ),
            FaultFacts(
                FaultKind.AUTH_CHALLENGE,
                frozenset({"write"}),
                per_call=True,
                code=ErrorCode.AUTH_REQUIRED,
                retryable=True,
                applied=False,
            ),
            FaultFacts(
                FaultKind.LOST_WRITE, frozenset({"write"}), per_call=True, code=None, retryable=None, applied=False
            ),
            FaultFacts(
                FaultKind.STALE_READ, frozenset({"read"}), per_call=True, code=None, retryable=None, applied=False
            ),
        )
    }
)
"""Every fault kind's facts, in :class:`FaultKind` order."""

FAULT_KINDS: tuple[FaultKind, ...] = tuple(FaultKind)
"""Every fault kind, in order."""
CALL_FAULT_KINDS: tuple[FaultKind, ...] = tuple(k for k, f in FAULTS.items() if f.per_call)
"""Kinds decided per call, in the order their rates are stacked."""
ERROR_FAULT_KINDS: frozenset[FaultKind] = frozenset(k for k, f in FAULTS.items() if f.is_error)
"""Kinds that reach the agent as errors (``lost_write`` and ``stale_read`` look like successes)."""
FAULT_OF_CODE: Mapping[str, FaultKind] = MappingProxyType({f.code: k for k, f in FAULTS.items() if f.code is not None})
"""Error code -> the fault kind that returns it (to infer faults where no ledger says)."""

__all__ = ["CALL_FAULT_KINDS", "ERROR_FAULT_KINDS", "FAULTS", "FAULT_KINDS", "FAULT_OF_CODE", "FaultFacts", "FaultKind"]
