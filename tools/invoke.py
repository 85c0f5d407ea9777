"""The in-process call path: validate, decide faults, run the sandbox method, log.

:class:`ToolInvoker` is what every transport calls. It owns the per-episode fault plan state
(call counts, per-tool schedules, rate-limit windows, pending auth challenges, the versions a
stale read may show), the server-side call log and the fault ledger. The agent never sees the
log or the ledger. The fault model is described in docs/faults.md and :mod:`mcpgym.tools.faults`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, TypeAdapter
from pydantic_core import PydanticSerializationError

from mcpgym.kernel.clock import WRITE_TICK
from mcpgym.kernel.errors import ErrorCode, ToolError
from mcpgym.kernel.fault_kinds import FAULTS, FaultKind
from mcpgym.kernel.spec import ToolKind, ToolSpec, role_tools
from mcpgym.kernel.world import World
from mcpgym.tools.faults import FaultProfile, ToolSchedule, exempt_tools, load_profile, plan_unavailable

MAX_LOGGED_ARGUMENT_CHARS = 4_000


class CallRecord(BaseModel):
    """One entry of the server-side call log.

    Attributes:
        step: 1-based position in the episode's call log.
        tool: tool name as the agent sent it.
        arguments: arguments as sent (truncated when huge).
        is_error: whether the agent got an error.
        error_code: the error code when ``is_error``.
        fault: the injected fault kind, if any (also for a call refused by a fault still in
            force: a rate-limit window, a pending auth challenge, a down tool).
        call_index: 0-based count of earlier calls of the same tool.
        time: virtual time after the call (seconds).
        result: the structured result or error payload the agent saw.
        internal: true when the sandbox raised something other than a ToolError (a bug).
        user: when the user was asked during this call (MCP elicitation or a simulator):
            ``{"request": UserRequest, "action": accept|decline|cancel, "content", "via"}``
            (see :mod:`mcpgym.tools.elicit`); None otherwise.
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
    user: dict[str, Any] | None = None


class LedgerEntry(BaseModel):
    """One call hit by an injected fault.

    Attributes:
        step: the call-log step it hit.
        tool: the tool.
        call_index: 0-based call count of that tool when it hit.
        kind: the fault kind.
        applied: for writes (and auth tools), whether the write really took effect; None for reads.
        persisting: False when this call's own fault decision injected the fault (or it is the
            first call of a tool that is down); True when the call was refused by an earlier
            fault still in force: a ``rate_limited`` window not yet passed, an ``auth_challenge``
            not yet cured by the episode's ``reauth`` tool, or a later call of an ``unavailable`` tool.
    """

    step: int
    tool: str
    call_index: int
    kind: str
    applied: bool | None
    persisting: bool = False


_validate_record = CallRecord.__pydantic_validator__.validate_python
_CALL_LOG: TypeAdapter[list[CallRecord]] = TypeAdapter(list[CallRecord])
"""The call log as JSON text and back (:meth:`ToolInvoker.park`)."""


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
    schedule: ToolSchedule | None = None
    calls: int = 0
    blocked_until: int = 0
    needs_auth: bool = False
    met_down: bool = False


_FAST_LOG_INT_BOUND = 2**53


def _json_size_bound(arguments: dict[Any, Any]) -> int | None:
    """An upper bound on ``len(json.dumps(arguments, ensure_ascii=False))`` for a flat dict of
    plain scalars that :func:`_json_safe` keeps as they are (str keys; UTF-8-encodable str,
    int, finite float, bool or None values), else None.

    With ``ensure_ascii=False`` a character of a string takes at most 6 characters (``\\u00XX``
    for a control character). Per item: the key's quotes and the ``": "`` and ``", "``
    separators take 6, a non-string value at most 24 (the longest float repr,
    ``-1.7976931348623157e+308``; ints here have at most 16 digits and a sign), a string
    value 2 quotes; hence at most ``2 + 6 * (characters of keys and strings) + 30 * items``.
    """
    chars = 0
    for key, value in arguments.items():
        if type(key) is not str:
            return None
        if not (key.isascii() or _encodable(key)):
            return None
        kind = type(value)
        if kind is str:
            if not (value.isascii() or _encodable(value)):
                return None
            chars += len(key) + len(value)
        elif (
            value is None
            or kind is bool
            or (kind is float and math.isfinite(value))
            or (kind is int and -_FAST_LOG_INT_BOUND < value < _FAST_LOG_INT_BOUND)
        ):
            chars += len(key)
        else:
            return None
    return 2 + 6 * chars + 30 * len(arguments)


def _encodable(text: str) -> bool:
    """True when ``text`` encodes as UTF-8 (no lone surrogates)."""
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


MAX_LOGGED_DEPTH = 32
"""Deepest nesting kept in a logged argument value; deeper parts are replaced by a marker."""
MAX_LOGGED_INT_BITS = 4096
"""Integers wider than this are logged as a marker (Python refuses to print ints past 4300 digits)."""


def _safe_text(text: str) -> str:
    """``text`` with lone surrogates (valid in a Python str, not in UTF-8 JSON) replaced by ``?``."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


def _json_safe(value: Any, depth: int = 0) -> Any:
    """A strict-JSON copy of ``value``: finite numbers, UTF-8-encodable text, string keys,
    nesting cut at :data:`MAX_LOGGED_DEPTH`, anything else as its (safe) ``repr``."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if value.bit_length() <= MAX_LOGGED_INT_BITS else f"<integer of {value.bit_length()} bits>"
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, str):
        return _safe_text(value)
    if depth >= MAX_LOGGED_DEPTH:
        return "<nested too deep>"
    if isinstance(value, dict):
        return {_safe_text(k if isinstance(k, str) else _shown(k)): _json_safe(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v, depth + 1) for v in value]
    return _shown(value)


def _shown(value: Any, limit: int = 200) -> str:
    """A short, JSON-safe text for any value (``str`` for strings, else ``repr``; never raises)."""
    if isinstance(value, str):
        return _safe_text(value[:limit])
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a hostile __repr__ or an int too long to print
        text = f"<{type(value).__name__}>"
    return _safe_text(text[:limit])


def _loggable(arguments: Any) -> Any:
    """The arguments as the call log keeps them: strict JSON (see :func:`_json_safe`), and
    ``{"_truncated": <first MAX_LOGGED_ARGUMENT_CHARS characters>}`` when longer than that.

    Fast path, same result as :func:`_loggable_strict`: a flat dict of plain scalars that
    :func:`_json_safe` would keep as is and that cannot reach the limit is logged as a copy
    (building its JSON would cost more than the tool call itself).
    """
    if type(arguments) is dict:
        bound = _json_size_bound(arguments)
        if bound is not None and bound <= MAX_LOGGED_ARGUMENT_CHARS:
            return dict(arguments)
    return _loggable_strict(arguments)


def _loggable_strict(arguments: Any) -> Any:
    """:func:`_loggable` without its fast path.

    The log is read back as JSON by the control API and written to trajectories, so NaN,
    lone surrogates, huge integers or deep nesting sent by an agent must not make it unreadable
    (and must not raise here: a RecursionError once escaped ``Episode.call``)."""
    safe = _json_safe(arguments)
    text = json.dumps(safe, ensure_ascii=False, allow_nan=False)
    if len(text) > MAX_LOGGED_ARGUMENT_CHARS:
        return {"_truncated": text[:MAX_LOGGED_ARGUMENT_CHARS]}
    return safe


_SPECS: dict[tuple[type[Any], ...], dict[str, ToolSpec]] = {}


def _specs_of(classes: tuple[type[Any], ...]) -> dict[str, ToolSpec]:
    """Tool name -> spec over the app classes ``classes``, in their order: one dict per app
    set, shared read-only by every invoker of it (a dict of ~200 specs per episode was a large
    share of what a garbage collection walks)."""
    specs = _SPECS.get(classes)
    if specs is None:
        specs = {}
        for cls in classes:
            specs.update(cls.tools)
        if len(_SPECS) < 1024:
            _SPECS[classes] = specs
    return specs


_FACTS: dict[int, tuple[dict[str, ToolSpec], tuple[frozenset[str], str | None, str | None]]] = {}


def _facts_of(specs: dict[str, ToolSpec]) -> tuple[frozenset[str], str | None, str | None]:
    """``(exempt tools, first wait tool, first reauth tool)`` of a specs dict (see
    :func:`exempt_tools`, :func:`role_tools`), computed once per shared dict (:func:`_specs_of`)."""
    hit = _FACTS.get(id(specs))
    if hit is not None and hit[0] is specs:
        return hit[1]
    listed = list(specs.values())
    facts = (
        exempt_tools(specs),
        next(iter(role_tools(listed, "wait")), None),
        next(iter(role_tools(listed, "reauth")), None),
    )
    if len(_FACTS) < 1024:
        _FACTS[id(specs)] = (specs, facts)
    return facts


class ToolInvoker:
    """Runs tool calls against one world under one fault plan.

    Args:
        world: the episode's :class:`World`.
        faults: a :class:`FaultProfile`, a built-in profile name, a profile file path or a mapping
            of ``FaultProfile`` fields (see :func:`mcpgym.tools.faults.load_profile`).
        fault_seed: seed of the fault schedule (default: the world seed).

    Attributes:
        specs: tool name -> :class:`ToolSpec` for every tool of the world's apps (shared by
            every invoker of the same apps: read-only).
        calls: the call log (list of :class:`CallRecord`).
        ledger: the fault ledger (list of :class:`LedgerEntry`).
        down: tools that are ``unavailable`` for the whole episode (see
            :func:`mcpgym.tools.faults.plan_unavailable`); each keeps a declared alternative that is not down.
        wait_tool, reauth_tool: the episode's first tool with the role ``wait`` / ``reauth``
            (None when no app of the world declares one). Tools are found by their declared
            roles, never by name: a ``wait`` tool moves the clock by exactly what it is asked
            (no write tick); a successful ``reauth`` call clears every pending auth challenge.
            Without a ``reauth`` tool no ``auth_challenge`` is injected (it would have no cure).

    Raises:
        mcpgym.tools.faults.FaultProfileError: for a profile that :func:`mcpgym.tools.faults.load_profile` rejects.
    """

    def __init__(
        self, world: World, faults: FaultProfile | str | dict[str, Any] | None = "none", fault_seed: int | None = None
    ) -> None:
        self.world = world
        self.profile = load_profile(faults)
        self.fault_seed = world.seed if fault_seed is None else int(fault_seed)
        self.specs: dict[str, ToolSpec] = _specs_of(tuple(world.apps.app_class(name) for name in world.apps))
        self._calls: list[CallRecord] | None = []
        self._parked_calls: str | None = None  # the call log as JSON text while parked
        self._parked_count = 0  # how many records that text holds
        self.ledger: list[LedgerEntry] = []
        self.hidden: AbstractSet[str] = frozenset()
        """Tools of the world that this episode does not expose: called, they are unknown."""
        self._state: dict[str, _ToolFaultState] = {}
        self._parked_state: tuple[tuple[Any, ...], ...] | None = None  # _state as tuples while parked
        self._user: dict[str, Any] | None = None  # the user's answer for the call in progress
        self._enabled = self.profile.enabled
        self._track_stale = self.profile.uses(FaultKind.STALE_READ)
        # resource family -> (step, world checkpoint taken just before the last write to it)
        self._before_write: dict[str, tuple[int, dict[str, Any]]] = {}
        self.down: frozenset[str] = plan_unavailable(self.profile, self.fault_seed, self.specs)
        self._exempt, self.wait_tool, self.reauth_tool = _facts_of(self.specs)
        self._wait_hint = (
            f"{self.wait_tool} advances the clock" if self.wait_tool else "the clock advances with every write"
        )

    @property
    def calls(self) -> list[CallRecord]:
        """The call log (list of :class:`CallRecord`); after :meth:`park`, read back from its
        JSON text on first access (equal records, new objects)."""
        if self._calls is None:
            assert self._parked_calls is not None
            self._calls = _CALL_LOG.validate_json(self._parked_calls)
            self._parked_calls = None
        return self._calls

    @calls.setter
    def calls(self, value: list[CallRecord]) -> None:
        self._calls, self._parked_calls = value, None

    @property
    def call_count(self) -> int:
        """How many records the call log holds, without reading a parked log back (a cheap
        size of the episode, e.g. for choosing where to judge it)."""
        return self._parked_count if self._calls is None else len(self._calls)

    def park(self) -> bool:
        """Keep the call log as JSON text (one string, which the garbage collector does not
        track) until it is next read, and the per-tool fault state as tuples until the next
        call: for an idle episode. Every record is strict JSON already
        (arguments through :func:`_loggable`, results as dumped), so the records read back are
        equal to these. A log that does not serialise is left as it is.

        Returns:
            True when the log was parked.
        """
        if self._state and self._parked_state is None:
            # per-tool fault state as tuples of plain values (untracked by the collector)
            self._parked_state = tuple(
                (name, st.schedule, st.calls, st.blocked_until, st.needs_auth, st.met_down)
                for name, st in self._state.items()
            )
            self._state = {}
        if not self._calls:
            return False
        try:
            text = _CALL_LOG.dump_json(self._calls).decode("utf-8")
        except (PydanticSerializationError, UnicodeDecodeError):
            return False
        self._parked_count = len(self._calls)
        self._calls, self._parked_calls = None, text
        return True

    def _unpark_state(self) -> None:
        """The per-tool fault state back as :class:`_ToolFaultState` objects (after :meth:`park`)."""
        assert self._parked_state is not None
        for name, schedule, calls, blocked_until, needs_auth, met_down in self._parked_state:
            self._state[name] = _ToolFaultState(schedule, calls, blocked_until, needs_auth, met_down)
        self._parked_state = None

    # -- call -----------------------------------------------------------------------------
    def call(
        self, name: str, arguments: Any = None, *, user: dict[str, Any] | None = None, refuse: ToolError | None = None
    ) -> CallOutcome:
        """Run one tool call and return what the agent sees.

        ``user`` (the user's answer to a question this call put, see :mod:`mcpgym.tools.elicit`)
        is kept in the call's record; ``refuse`` ends a valid call with that error before
        faults and the sandbox (the user declined or dismissed it: nothing changes).

        Order of checks: the tool exists, the arguments validate, then faults still in force
        (a down tool, a rate-limit window, a pending auth challenge), then the call's own
        fault decision (``ToolSchedule.decision(call_index)``), then the sandbox method.
        A ``timeout`` or ``lost_write`` decision yields to a real domain error (nothing is
        injected); a ``stale_read`` decision is injected only when an older version of the
        tool's resources exists and the read shows something different on it.

        Never raises for anything the agent sends: unknown tools, bad arguments and domain
        errors come back as ``is_error`` outcomes. A non-ToolError exception inside a sandbox
        is a bug: it is returned as an ``unavailable`` error and logged with ``internal=True``.
        """
        step = len(self.calls) + 1
        if self._parked_state is not None:
            self._unpark_state()
        spec = self.specs.get(name) if isinstance(name, str) and name not in self.hidden else None
        if spec is None:
            shown = _shown(name, 80)
            err = ToolError(
                ErrorCode.NOT_FOUND, f"unknown tool {shown!r}: not one of this episode's tools", field="name"
            )
            return self._finish(step, _shown(name), arguments, 0, err, None, None)
        st = self._state.get(name)
        if st is None:
            st = self._state[name] = _ToolFaultState()
            if self._enabled and name not in self._exempt:
                st.schedule = ToolSchedule(self.profile, self.fault_seed, name, spec.app, spec.kind)
        n = st.calls
        st.calls += 1
        try:
            kwargs = spec.validate_arguments(arguments)
        except ToolError as invalid:
            return self._finish(step, name, arguments, n, invalid, None, None, user=user)
        not_applied = None if spec.kind == ToolKind.READ else False
        if refuse is not None:
            return self._finish(step, name, arguments, n, refuse, None, None, user=user)
        if user is not None:
            self._user = user

        # Faults still in force: a down tool, a rate-limit window, a pending auth challenge.
        if name in self.down:
            alts = [a for a in spec.alternatives if a in self.specs and a not in self.down]
            err = FAULTS[FaultKind.UNAVAILABLE].error(
                name, f"{name} is down; try an alternative: {', '.join(alts)}", details={"alternatives": alts}
            )
            persisting, st.met_down = st.met_down, True
            return self._finish(
                step, name, arguments, n, err, FaultKind.UNAVAILABLE, not_applied, persisting=persisting
            )
        now = self.world.clock.now
        if st.blocked_until > now:
            wait = st.blocked_until - now
            err = FAULTS[FaultKind.RATE_LIMITED].error(
                name, f"rate limited: retry after {wait} virtual seconds ({self._wait_hint})", retry_after=wait
            )
            return self._finish(step, name, arguments, n, err, FaultKind.RATE_LIMITED, not_applied, persisting=True)
        if st.needs_auth:
            err = FAULTS[FaultKind.AUTH_CHALLENGE].error(
                name, f"{name} needs a fresh authentication: call {self.reauth_tool} first"
            )
            return self._finish(step, name, arguments, n, err, FaultKind.AUTH_CHALLENGE, not_applied, persisting=True)

        kind = st.schedule.decision(n) if st.schedule is not None else None
        if kind == FaultKind.AUTH_CHALLENGE and self.reauth_tool is None:
            kind = None  # no tool of the episode could cure it
        facts = FAULTS[kind] if kind is not None else None
        if facts is not None and facts.message is not None and not facts.applied:
            # an error before the call runs, from the kind's row alone (transient)
            return self._finish(step, name, arguments, n, facts.error(name), kind, not_applied)
        if kind == FaultKind.RATE_LIMITED:
            st.blocked_until = now + self.profile.retry_after
            err = FAULTS[kind].error(
                name,
                f"rate limited: retry after {self.profile.retry_after} virtual seconds ({self._wait_hint})",
                retry_after=self.profile.retry_after,
            )
            return self._finish(step, name, arguments, n, err, kind, not_applied)
        if kind == FaultKind.AUTH_CHALLENGE:
            st.needs_auth = True
            err = FAULTS[kind].error(name, f"{name} needs a fresh authentication: call {self.reauth_tool} first")
            return self._finish(step, name, arguments, n, err, kind, False)
        if spec.kind == ToolKind.READ:
            return self._read(step, name, arguments, n, spec, kwargs, stale=kind == FaultKind.STALE_READ)
        return self._write(step, name, arguments, n, spec, kwargs, kind)

    def _run(
        self, spec: ToolSpec, app: Any, kwargs: dict[str, Any]
    ) -> tuple[dict[str, Any] | None, ToolError | None, bool]:
        """Run the sandbox method: (payload, None, False), (None, domain error, False) or (None, error, True) for a bug."""
        try:
            result = spec.func(app, **kwargs)
            if not isinstance(result, BaseModel):
                raise TypeError(f"{spec.name} returned {type(result).__name__}, not {spec.output_model.__name__}")
            return result.model_dump(mode="json"), None, False
        except ToolError as err:
            return None, err, False
        except Exception as exc:  # a sandbox bug: report it, never crash the session
            bug = ToolError(
                ErrorCode.UNAVAILABLE, f"internal error in {spec.name}: {type(exc).__name__}: {exc}", retryable=False
            )
            return None, bug, True

    def _read(
        self, step: int, name: str, arguments: Any, n: int, spec: ToolSpec, kwargs: dict[str, Any], *, stale: bool
    ) -> CallOutcome:
        payload, err, internal = self._run(spec, self.world.apps[spec.app], kwargs)
        older = self._older_version(spec) if stale and not internal else None
        if older is not None:
            old_payload, old_err, old_internal = self._run(spec, self.world.view_at(older).apps[spec.app], kwargs)
            now_seen = (payload, err.payload() if err else None)
            if not old_internal and (old_payload, old_err.payload() if old_err else None) != now_seen:
                return self._finish(step, name, arguments, n, old_err, FaultKind.STALE_READ, None, payload=old_payload)
        return self._finish(step, name, arguments, n, err, None, None, payload=payload, internal=internal)

    def _older_version(self, spec: ToolSpec) -> dict[str, Any] | None:
        """The checkpoint before the latest write to any of the read's resource families, if any."""
        found = [self._before_write[f] for f in spec.resources if f in self._before_write]
        return max(found, key=lambda entry: entry[0])[1] if found else None

    def _write(
        self,
        step: int,
        name: str,
        arguments: Any,
        n: int,
        spec: ToolSpec,
        kwargs: dict[str, Any],
        kind: FaultKind | None,
    ) -> CallOutcome:
        checkpoint = self.world.checkpoint() if kind == FaultKind.LOST_WRITE or self._track_stale else None
        payload, err, internal = self._run(spec, self.world.apps[spec.app], kwargs)
        if err is not None:  # the real error wins: nothing was applied, nothing is injected
            return self._finish(step, name, arguments, n, err, None, None, internal=internal)
        if kind == FaultKind.LOST_WRITE:
            self.world.rollback(checkpoint)  # type: ignore[arg-type]
        elif checkpoint is not None:
            for family in spec.resources:
                self._before_write[family] = (step, checkpoint)
        if spec.role != "wait":  # a wait tool advances the clock by exactly what it was asked
            self.world.clock.advance(WRITE_TICK)
        if spec.role == "reauth":
            for other in self._state.values():
                other.needs_auth = False
        facts = FAULTS[kind] if kind is not None else None
        if facts is not None and facts.is_error and facts.applied:
            # an error after the write took effect, from the kind's row alone (timeout)
            return self._finish(step, name, arguments, n, facts.error(name), kind, True)
        if kind == FaultKind.LOST_WRITE:
            return self._finish(step, name, arguments, n, None, kind, False, payload=payload)
        return self._finish(step, name, arguments, n, None, None, None, payload=payload)

    def log_meta_call(self, name: str, arguments: Any, payload: dict[str, Any]) -> CallRecord:
        """Log a successful call of a server-level meta-tool (e.g. ``search_tools``)."""
        record = CallRecord(
            step=len(self.calls) + 1,
            tool=name,
            arguments=_loggable(arguments),
            is_error=False,
            time=self.world.clock.now,
            result=payload,
        )
        self.calls.append(record)
        return record

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
        persisting: bool = False,
        user: dict[str, Any] | None = None,
    ) -> CallOutcome:
        if err is not None:
            payload = {"error": err.payload()}
        if user is None and self._user is not None:
            user, self._user = self._user, None
        # CallRecord(**fields), minus the keyword-argument plumbing of BaseModel.__init__ (the
        # same validator builds the same record; this runs on every call).
        record = _validate_record(
            {
                "step": step,
                "tool": name,
                "arguments": _loggable(arguments),
                "is_error": err is not None,
                "error_code": err.code if err is not None else None,
                "fault": fault,
                "call_index": n,
                "time": self.world.clock.now,
                "result": payload,
                "internal": internal,
                "user": user,
            }
        )
        self.calls.append(record)
        if fault is not None:
            self.ledger.append(
                LedgerEntry(step=step, tool=name, call_index=n, kind=fault, applied=applied, persisting=persisting)
            )
        return CallOutcome(is_error=err is not None, payload=payload or {}, record=record)
