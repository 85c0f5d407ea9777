"""The in-process call path: validate, decide faults, run the sandbox method, log.

:class:`ToolInvoker` is what every transport calls. It owns the per-episode fault plan state
(call counts, consecutive faults, rate-limit windows, pending auth challenges), the server-side
call log and the fault ledger. The agent never sees the log or the ledger.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from sandboxes.clock import WRITE_TICK
from sandboxes.world import World
from tools.errors import ToolError
from tools.faults import FaultProfile, load_profile, scheduled_kind, unavailable_draw
from tools.spec import ToolSpec

AUTH_TOOL = "system_authenticate"
WAIT_TOOL = "system_wait"
MAX_LOGGED_ARGUMENT_CHARS = 4_000


class CallRecord(BaseModel):
    """One entry of the server-side call log.

    Attributes:
        step: 1-based position in the episode's call log.
        tool: tool name as the agent sent it.
        arguments: arguments as sent (truncated when huge).
        is_error: whether the agent got an error.
        error_code: the error code when ``is_error``.
        fault: the injected fault kind, if any.
        call_index: 0-based count of earlier calls of the same tool.
        time: virtual time after the call (seconds).
        result: the structured result or error payload the agent saw.
        internal: true when the sandbox raised something other than a ToolError (a bug).
    """

    step: int
    tool: str
    arguments: Any
    is_error: bool
    error_code: str | None = None
    fault: str | None = None
    call_index: int = 0
    time: int = 0
    result: Any = None
    internal: bool = False


class LedgerEntry(BaseModel):
    """One injected fault.

    Attributes:
        step: the call-log step it hit.
        tool: the tool.
        call_index: 0-based call count of that tool when it hit.
        kind: the fault kind.
        applied: for writes, whether the write really took effect; None for reads.
    """

    step: int
    tool: str
    call_index: int
    kind: str
    applied: bool | None


@dataclass
class CallOutcome:
    """What the agent gets back from one tool call.

    Attributes:
        is_error: true for a tool error.
        payload: the structured content: the result, or ``{"error": {...}}``.
        record: the call-log entry written for this call.
    """

    is_error: bool
    payload: dict[str, Any]
    record: CallRecord


@dataclass
class _ToolFaultState:
    calls: int = 0
    consecutive: int = 0
    blocked_until: int = 0
    needs_auth: bool = False


def _loggable(arguments: Any) -> Any:
    try:
        text = json.dumps(arguments, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return {"_unserialisable": repr(arguments)[:MAX_LOGGED_ARGUMENT_CHARS]}
    if len(text) > MAX_LOGGED_ARGUMENT_CHARS:
        return {"_truncated": text[:MAX_LOGGED_ARGUMENT_CHARS]}
    return arguments


class ToolInvoker:
    """Runs tool calls against one world under one fault plan.

    Args:
        world: the episode's :class:`World`.
        faults: a :class:`FaultProfile`, a built-in profile name or a profile file path.
        fault_seed: seed of the fault schedule (default: the world seed).

    Attributes:
        specs: tool name -> :class:`ToolSpec` for every tool of the world's apps.
        calls: the call log (list of :class:`CallRecord`).
        ledger: the fault ledger (list of :class:`LedgerEntry`).
    """

    def __init__(self, world: World, faults: FaultProfile | str | None = "none", fault_seed: int | None = None) -> None:
        self.world = world
        self.profile = load_profile(faults)
        self.fault_seed = world.seed if fault_seed is None else int(fault_seed)
        self.specs: dict[str, ToolSpec] = {}
        for app in world.apps.values():
            self.specs.update(type(app).tools)
        self.calls: list[CallRecord] = []
        self.ledger: list[LedgerEntry] = []
        self._state: dict[str, _ToolFaultState] = {}
        self._before_last_write: dict[str, Any] | None = None
        self._track_stale = self.profile.uses("stale_read")
        self.down: frozenset[str] = self._plan_unavailable()

    # -- plan -----------------------------------------------------------------------------
    def _plan_unavailable(self) -> frozenset[str]:
        """Tools down for the whole episode: drawn below their rate and having a working alternative."""
        if not self.profile.uses("unavailable"):
            return frozenset()

        def draw(name: str) -> float | None:
            spec = self.specs.get(name)
            if spec is None or spec.kind == "auth" or name in (AUTH_TOOL, WAIT_TOOL):
                return None
            u = unavailable_draw(self.fault_seed, name)
            return u if u < self.profile.rate(name, spec.app, "unavailable") else None

        down = set()
        for name, spec in self.specs.items():
            alts = [a for a in spec.alternatives if a in self.specs]
            if not alts:
                continue
            u = draw(name)
            if u is None:
                continue
            # Keep one working alternative: among co-drawn tools, the lowest draw goes down.
            if all((draw(a) is None) or (draw(a) > u) for a in alts):  # type: ignore[operator]
                down.add(name)
        return frozenset(down)

    # -- call -----------------------------------------------------------------------------
    def call(self, name: str, arguments: Any = None) -> CallOutcome:
        """Run one tool call and return what the agent sees.

        Never raises for anything the agent sends: unknown tools, bad arguments and domain
        errors come back as ``is_error`` outcomes. A non-ToolError exception inside a sandbox
        is a bug: it is returned as an ``unavailable`` error and logged with ``internal=True``.
        """
        step = len(self.calls) + 1
        spec = self.specs.get(name) if isinstance(name, str) else None
        if spec is None:
            shown = str(name)[:80]
            err = ToolError("not_found", f"unknown tool {shown!r}: not one of this episode's tools", field="name")
            return self._finish(step, str(name)[:200], arguments, 0, err, None, None)
        st = self._state.setdefault(name, _ToolFaultState())
        n = st.calls
        st.calls += 1
        try:
            kwargs = spec.validate_arguments(arguments)
        except ToolError as err:
            return self._finish(step, name, arguments, n, err, None, None)

        # Faults that persist: down tools, rate-limit windows, pending auth challenges.
        if name in self.down:
            alts = ", ".join(a for a in spec.alternatives if a in self.specs)
            err = ToolError("unavailable", f"{name} is down; try an alternative: {alts}", retryable=False,
                            details={"alternatives": [a for a in spec.alternatives if a in self.specs]})
            return self._finish(step, name, arguments, n, err, "unavailable", None if spec.kind == "read" else False)
        now = self.world.clock.now
        if st.blocked_until > now:
            wait = st.blocked_until - now
            err = ToolError("rate_limited", f"rate limited: retry after {wait} virtual seconds (system_wait advances the clock)",
                            retry_after=wait)
            return self._finish(step, name, arguments, n, err, "rate_limited", None if spec.kind == "read" else False)
        if st.needs_auth:
            err = ToolError("auth_required", f"{name} needs a fresh authentication: call {AUTH_TOOL} first", retryable=True)
            return self._finish(step, name, arguments, n, err, None, None)

        kind = None
        if self.profile.enabled and st.consecutive < self.profile.max_consecutive:
            kind = scheduled_kind(self.profile, self.fault_seed, name, spec.app, spec.kind, n)
        if kind is None:
            st.consecutive = 0
        else:
            st.consecutive += 1
        if kind == "transient":
            err = ToolError("transient", f"{name}: temporary failure, nothing was changed; retry", retryable=True)
            return self._finish(step, name, arguments, n, err, kind, None if spec.kind == "read" else False)
        if kind == "rate_limited":
            st.blocked_until = now + self.profile.retry_after
            err = ToolError("rate_limited", f"rate limited: retry after {self.profile.retry_after} virtual seconds "
                            "(system_wait advances the clock)", retry_after=self.profile.retry_after)
            return self._finish(step, name, arguments, n, err, kind, None if spec.kind == "read" else False)
        if kind == "auth_challenge":
            st.needs_auth = True
            err = ToolError("auth_required", f"{name} needs a fresh authentication: call {AUTH_TOOL} first", retryable=True)
            return self._finish(step, name, arguments, n, err, kind, False)

        app = self.world.apps[spec.app]
        checkpoint = None
        if spec.kind != "read" and (kind == "lost_write" or self._track_stale):
            checkpoint = self.world.checkpoint()
        if kind == "stale_read" and self._before_last_write is not None:
            target = self.world.view_at(self._before_last_write).apps[spec.app]
        else:
            if kind == "stale_read":
                kind = None  # nothing older to show yet: no fault
                st.consecutive = 0
            target = app
        try:
            result = spec.func(target, **kwargs)
            if not isinstance(result, BaseModel):
                raise TypeError(f"{name} returned {type(result).__name__}, not {spec.output_model.__name__}")
            payload = result.model_dump(mode="json")
        except ToolError as err:
            if kind in ("timeout", "lost_write"):
                kind = None  # the real error wins; nothing was applied
                st.consecutive = 0
            return self._finish(step, name, arguments, n, err, None, None)
        except Exception as exc:  # a sandbox bug: report it, never crash the session
            err = ToolError("unavailable", f"internal error in {name}: {type(exc).__name__}: {exc}", retryable=False)
            return self._finish(step, name, arguments, n, err, None, None, internal=True)

        if spec.kind != "read":
            if kind == "lost_write" and checkpoint is not None:
                self.world.rollback(checkpoint)
            else:
                if checkpoint is not None and self._track_stale:
                    self._before_last_write = checkpoint
            self.world.clock.advance(WRITE_TICK)
        if spec.kind == "auth" and name == AUTH_TOOL:
            for other in self._state.values():
                other.needs_auth = False
        if kind == "timeout":
            err = ToolError("timeout", f"{name}: the request timed out; its effect is unknown", retryable=True)
            return self._finish(step, name, arguments, n, err, kind, True)
        if kind == "lost_write":
            return self._finish(step, name, arguments, n, None, kind, False, payload=payload)
        if kind == "stale_read":
            return self._finish(step, name, arguments, n, None, kind, None, payload=payload)
        return self._finish(step, name, arguments, n, None, None, None, payload=payload)

    def _finish(
        self,
        step: int,
        name: str,
        arguments: Any,
        n: int,
        err: ToolError | None,
        fault: str | None,
        applied: bool | None,
        *,
        payload: dict[str, Any] | None = None,
        internal: bool = False,
    ) -> CallOutcome:
        if err is not None:
            payload = {"error": err.payload()}
        record = CallRecord(
            step=step,
            tool=name,
            arguments=_loggable(arguments),
            is_error=err is not None,
            error_code=err.code if err is not None else None,
            fault=fault,
            call_index=n,
            time=self.world.clock.now,
            result=payload,
            internal=internal,
        )
        self.calls.append(record)
        if fault is not None:
            self.ledger.append(LedgerEntry(step=step, tool=name, call_index=n, kind=fault, applied=applied))
        return CallOutcome(is_error=err is not None, payload=payload or {}, record=record)
