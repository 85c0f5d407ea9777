"""The fault plan of one proxied session: seeded decisions, the call log and the fault ledger.

The decision for the n-th call (0-based, every call of that tool name through the proxy) of
tool T is the sandboxes' (:class:`mcpgym.tools.faults.ToolSchedule`: a pure function of
``(profile, fault_seed, T, n)``), and ``unavailable`` is planned once per session by
:func:`mcpgym.tools.faults.plan_unavailable`. What differs is how a fault acts, because the
proxy cannot roll an upstream back and never fakes what its tools do (docs/proxy.md):

| kind | the agent sees | the upstream |
| --- | --- | --- |
| ``transient``, ``rate_limited``, ``auth_challenge``, ``unavailable`` | the error | not called (nothing applied) |
| ``timeout`` (writes) | ``timeout`` error | called: the write applied, its answer withheld (a real error answer wins: no fault) |
| ``stale_read`` (reads) | the answer an identical earlier call got | called; injected only when the answers differ |
| ``lost_write`` | -- | never injected (a success the upstream did not give would be faked) |

Virtual time: every call through the proxy advances the session's virtual clock by
:data:`mcpgym.kernel.clock.WRITE_TICK` seconds, so a ``rate_limited`` window of
``retry_after`` seconds refuses the tool for the next ``retry_after / WRITE_TICK`` calls
through the proxy. ``auth_challenge`` is injected only when some tool declares the role
``reauth`` (a catalog file says so): its next successful call clears every pending challenge.
A tool whose kind is neither ``read``, ``write`` nor ``auth`` (``unknown``, a hand-off) gets
the schedule of a read but only the faults that never forward (``transient``,
``rate_limited``): whether it writes is not known.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from mcpgym.kernel.clock import WRITE_TICK
from mcpgym.kernel.errors import ToolError
from mcpgym.kernel.fault_kinds import FAULTS, FaultKind
from mcpgym.kernel.spec import ToolKind
from mcpgym.tools.faults import FaultProfile, ToolSchedule, check_profile, load_profile, plan_unavailable
from mcpgym.tools.invoke import CallRecord, LedgerEntry, _loggable


def _injectable(tool_kind: ToolKind) -> frozenset[FaultKind]:
    """The per-call kinds of :data:`~mcpgym.kernel.fault_kinds.FAULTS` that hit ``tool_kind`` and
    that the proxy can inject: an error (refused before forwarding, or a write's answer withheld
    when the row says the write applies), or, on a read, an older answer. A kind that shows a
    write a success it did not get (``lost_write``) never: the proxy would fake the upstream."""
    return frozenset(
        k
        for k, f in FAULTS.items()
        if f.per_call and tool_kind in f.hits and (f.is_error or tool_kind == ToolKind.READ)
    )


FAULT_KINDS_OF_KIND: dict[str, frozenset[FaultKind]] = {
    k.value: _injectable(k) for k in (ToolKind.READ, ToolKind.WRITE, ToolKind.AUTH)
}
"""Fault kinds the proxy injects per tool kind, read from the table (see :func:`_injectable`)."""
NEVER_FORWARDED = frozenset(
    k for k in FAULT_KINDS_OF_KIND[ToolKind.READ] if not FAULTS[k].applied and FAULTS[k].is_error
)
"""The kinds injected into tools of any other kind (``unknown``, hand-offs): the refusals a
read can get, which forward nothing (``transient``, ``rate_limited``)."""


class ProxiedTool(BaseModel):
    """What the fault plan knows of one upstream tool (from its classification).

    Attributes:
        name: the tool name.
        kind: ``read`` | ``write`` | ``auth``, or another kind (``unknown``...) the classifier gave.
        app: the name profile ``apps`` overrides use for the upstream's tools (``external``).
        role: ``wait`` | ``reauth`` | ``grant`` | None (declared in a catalog file).
        never_faulted: exempt from fault injection.
        alternatives: tools reaching the same goal (``unavailable`` needs one that works).
    """

    name: str
    kind: str
    app: str = "external"
    role: str | None = None
    never_faulted: bool = False
    alternatives: list[str] = Field(default_factory=list)

    @property
    def fault_exempt(self) -> bool:
        """Never faulted: declared so, or a ``wait`` / ``reauth`` tool (every fault keeps its cure)."""
        return self.never_faulted or self.role in ("wait", "reauth")


class Action(enum.Enum):
    """What the proxy does with one call."""

    REFUSE = "refuse"
    """Answer the decision's error; the upstream is not called."""
    FORWARD = "forward"
    """Call the upstream and pass its answer on."""
    WITHHOLD = "withhold"
    """Call the upstream; answer ``timeout`` unless the upstream answered an error (a timeout that applied)."""
    STALE = "stale"
    """Call the upstream; answer what an identical earlier call got when it differs (a stale read)."""


@dataclass
class Decision:
    """The plan's decision for one call, made before the upstream is called.

    Attributes:
        step: the call's 1-based call-log step.
        tool: the tool name.
        call_index: 0-based count of earlier calls of the tool.
        action: what to do (:class:`Action`).
        fault: the fault kind decided (None: none).
        error: the error to answer when ``action`` is REFUSE.
        persisting: the call is refused by an earlier fault still in force.
        time: the virtual time of the call (seconds).
    """

    step: int
    tool: str
    call_index: int
    action: Action
    fault: FaultKind | None = None
    error: ToolError | None = None
    persisting: bool = False
    time: int = 0


@dataclass
class Settled:
    """What the agent gets for one call, once the upstream answered (or was not called).

    Attributes:
        record: the call-log entry written.
        error: an injected error to answer (None: answer ``answer``).
        answer: the upstream answer to pass on (the current one, or an older one for a stale read).
    """

    record: CallRecord
    error: ToolError | None = None
    answer: Any = None


MAX_STALE_ENTRIES = 256
"""Read answers a session keeps for stale reads, at most (the oldest kept is let go first)."""
MAX_STALE_BYTES = 8 * 2**20
"""Characters of text, data and structured content those answers hold together, at most; an
answer larger than this alone is not kept."""


@dataclass
class _State:
    schedule: ToolSchedule | None = None
    calls: int = 0
    blocked_until: int = 0
    needs_auth: bool = False
    met_down: bool = False
    keeps_answers: bool = False
    """The profile can inject ``stale_read`` into this tool: its answers are kept (capped)."""


def answer_size(answer: Any) -> int:
    """What a kept answer costs, in characters: its content blocks' ``text``, ``data`` and
    ``blob`` and its structured content as JSON (an estimate the caps are counted in)."""
    size = 0
    for block in getattr(answer, "content", None) or ():
        for attr in ("text", "data", "blob"):
            value = getattr(block, attr, None) or getattr(getattr(block, "resource", None), attr, None)
            if isinstance(value, str):
                size += len(value)
    structured = getattr(answer, "structured_content", None)
    if structured is not None:
        size += len(json.dumps(structured, default=repr))
    return size + 64


Describe = Callable[[Any], tuple[bool, str | None, Any]]
"""Upstream answer -> (is_error, error_code or None, the payload to log)."""


class ProxyFaultPlan:
    """The fault state, call log and ledger of one proxied session.

    Args:
        faults: a profile, a built-in name, a profile file or a mapping
            (:func:`mcpgym.tools.faults.load_profile`; tool overrides may name upstream tools).
        fault_seed: the seed of every decision.
        describe: reads an upstream answer as ``(is_error, error_code, payload)`` for the log.

    Attributes:
        calls: the call log (:class:`mcpgym.tools.invoke.CallRecord`, the sandboxes' shape).
        ledger: the fault ledger (:class:`mcpgym.tools.invoke.LedgerEntry`).
        down: tools ``unavailable`` for the session.

    Raises:
        mcpgym.tools.faults.FaultProfileError: for a profile the loader rejects.
    """

    def __init__(self, faults: FaultProfile | str | dict[str, Any] | None, fault_seed: int, describe: Describe) -> None:
        self.profile = faults if isinstance(faults, FaultProfile) else load_profile(faults)
        self.fault_seed = int(fault_seed)
        self.describe = describe
        self.tools: dict[str, ProxiedTool] = {}
        self.calls: list[CallRecord] = []
        self.ledger: list[LedgerEntry] = []
        self.down: frozenset[str] = frozenset()
        self.now = 0
        self._steps = 0
        self._state: dict[str, _State] = {}
        self._kept: dict[tuple[str, str], tuple[Any, int]] = {}
        self._kept_size = 0

    def set_tools(self, tools: Mapping[str, ProxiedTool]) -> None:
        """Take the upstream's classified tools (at start, and after a ``list_changed``).

        The first listing checks the profile against them (:meth:`check_profile`); a later one
        does not (a tool the upstream withdrew mid-session keeps its override, unused).
        ``unavailable`` is planned on the first call only, so a later listing never takes a
        tool down mid-session. Schedules already made are kept (a call index never restarts).

        Raises:
            mcpgym.tools.faults.FaultProfileError: on the first listing, from :meth:`check_profile`.
        """
        first = not self.tools
        if first:
            self.check_profile(tools)
        self.tools = dict(tools)
        if first:
            self.down = plan_unavailable(self.profile, self.fault_seed, self.tools)

    def check_profile(self, tools: Mapping[str, ProxiedTool]) -> None:
        """Check the profile against the upstream's classified ``tools``, as ``mcpgym serve``
        checks it against the apps (:func:`mcpgym.tools.faults.check_profile`): a ``tools``
        override must name one of them (a typo would silently mean no faults), not one that is
        never faulted, an ``apps`` override one of their apps (``external`` unless a catalog
        says otherwise), and no tool's per-call rates may add up to more than 1.

        Raises:
            mcpgym.tools.faults.FaultProfileError: naming the profile's file, the field, the
                value, the closest tool names and the upstream's tools.
        """
        registry: dict[str, dict[str, ProxiedTool]] = {}
        for name, tool in tools.items():
            registry.setdefault(tool.app, {})[name] = tool
        check_profile(self.profile, registry, tools_label="tools of the upstream")

    @property
    def reauth_tool(self) -> str | None:
        """The first tool declaring the role ``reauth``, if any."""
        return next((t.name for t in self.tools.values() if t.role == "reauth"), None)

    def decide(self, name: str) -> Decision:
        """Decide the call of ``name`` (counts it, advances the virtual clock)."""
        self._steps += 1
        step = self._steps
        self.now += WRITE_TICK
        tool = self.tools.get(name)
        st = self._state.get(name)
        if st is None:
            st = self._state[name] = _State()
            if tool is not None and not tool.fault_exempt and self.profile.enabled:
                schedule_kind = tool.kind if tool.kind in FAULT_KINDS_OF_KIND else "read"
                st.schedule = ToolSchedule(self.profile, self.fault_seed, name, tool.app, schedule_kind)
                st.keeps_answers = (
                    FaultKind.STALE_READ in FAULT_KINDS_OF_KIND.get(tool.kind, NEVER_FORWARDED)
                    and self.profile.rate(name, tool.app, FaultKind.STALE_READ) > 0
                )
        n = st.calls
        st.calls += 1
        made = Decision(step=step, tool=name, call_index=n, action=Action.FORWARD, time=self.now)
        if tool is None:
            return made  # not a listed tool: the upstream answers it
        if name in self.down:
            alts = [a for a in tool.alternatives if a in self.tools and a not in self.down]
            err = FAULTS[FaultKind.UNAVAILABLE].error(name, f"{name} is down; try an alternative: {', '.join(alts)}")
            persisting, st.met_down = st.met_down, True
            return self._refuse(made, FaultKind.UNAVAILABLE, err, persisting)
        if st.blocked_until > self.now:
            wait = st.blocked_until - self.now
            return self._refuse(made, FaultKind.RATE_LIMITED, self._rate_error(name, wait), True)
        if st.needs_auth:
            return self._refuse(made, FaultKind.AUTH_CHALLENGE, self._auth_error(name), True)
        kind = st.schedule.decision(n) if st.schedule is not None else None
        allowed = FAULT_KINDS_OF_KIND.get(tool.kind, NEVER_FORWARDED)
        if kind is None or kind not in allowed or (kind == FaultKind.AUTH_CHALLENGE and self.reauth_tool is None):
            return made
        facts = FAULTS[kind]
        # the kinds with state of their own: a window, a challenge until the reauth tool is called
        if kind == FaultKind.RATE_LIMITED:
            st.blocked_until = self.now + self.profile.retry_after
            return self._refuse(made, kind, self._rate_error(name, self.profile.retry_after), False)
        if kind == FaultKind.AUTH_CHALLENGE:
            st.needs_auth = True
            return self._refuse(made, kind, self._auth_error(name), False)
        # the others, from their row alone
        if facts.is_error and not facts.applied:  # refused before forwarding (transient)
            return self._refuse(made, kind, facts.error(name), False)
        made.action, made.fault = (Action.WITHHOLD if facts.is_error else Action.STALE), kind
        return made

    def _refuse(self, made: Decision, kind: FaultKind, err: ToolError, persisting: bool) -> Decision:
        made.action, made.fault, made.error, made.persisting = Action.REFUSE, kind, err, persisting
        return made

    def _rate_error(self, name: str, wait: int) -> ToolError:
        return FAULTS[FaultKind.RATE_LIMITED].error(
            name,
            f"rate limited: retry after {wait} virtual seconds (every call through the proxy advances the clock "
            f"{WRITE_TICK} s)",
            retry_after=wait,
        )

    def _auth_error(self, name: str) -> ToolError:
        return FAULTS[FaultKind.AUTH_CHALLENGE].error(
            name, f"{name} needs a fresh authentication: call {self.reauth_tool} first"
        )

    def settle(
        self, decision: Decision, arguments: Any, answer: Any = None, *, failure: ToolError | None = None
    ) -> Settled:
        """Log the call and say what the agent gets.

        Args:
            decision: from :meth:`decide`.
            arguments: the call's arguments as sent.
            answer: the upstream's answer (ignored for a REFUSE decision).
            failure: the upstream gave no answer (it crashed, hung past its deadline or
                broke the protocol): this error is answered and logged, no fault is recorded.
        """
        tool = self.tools.get(decision.tool)
        not_applied = None if tool is None or tool.kind == ToolKind.READ else False
        if decision.action is Action.REFUSE:
            assert decision.error is not None
            return self._log(decision, arguments, decision.error, None, decision.fault, not_applied)
        if failure is not None:
            return self._log(decision, arguments, failure, None, None, None)
        is_error, _, _ = self.describe(answer)
        st = self._state[decision.tool]
        if not is_error and tool is not None and tool.role == "reauth":
            for other in self._state.values():
                other.needs_auth = False
        if decision.action is Action.WITHHOLD and not is_error:
            kind = decision.fault
            assert kind is not None, "a withheld answer has its fault kind"
            return self._log(decision, arguments, FAULTS[kind].error(decision.tool), None, kind, FAULTS[kind].applied)
        if st.keeps_answers:
            older = self._keep((decision.tool, _key(arguments)), answer)
            if decision.action is Action.STALE and older is not None and not is_error and self._differs(older, answer):
                return self._log(decision, arguments, None, older, decision.fault, None)
        return self._log(decision, arguments, None, answer, None, None)

    def _keep(self, key: tuple[str, str], answer: Any) -> Any:
        """Keep ``answer`` as the latest for ``key`` (tool, arguments) and return the one it
        replaces (None: none kept). Capped at :data:`MAX_STALE_ENTRIES` answers and
        :data:`MAX_STALE_BYTES` characters: the oldest kept go first."""
        older = self._kept.pop(key, None)
        if older is not None:
            self._kept_size -= older[1]
        size = answer_size(answer)
        if size <= MAX_STALE_BYTES:
            self._kept[key] = (answer, size)
            self._kept_size += size
        while self._kept and (len(self._kept) > MAX_STALE_ENTRIES or self._kept_size > MAX_STALE_BYTES):
            _, dropped = self._kept.pop(next(iter(self._kept)))
            self._kept_size -= dropped
        return older[0] if older is not None else None

    @property
    def kept_answers(self) -> tuple[int, int]:
        """``(answers, characters)`` kept for stale reads now (see :meth:`_keep`)."""
        return len(self._kept), self._kept_size

    def _differs(self, older: Any, answer: Any) -> bool:
        return self.describe(older)[2] != self.describe(answer)[2]

    def _log(
        self,
        d: Decision,
        arguments: Any,
        err: ToolError | None,
        answer: Any,
        fault: str | None,
        applied: bool | None,
    ) -> Settled:
        code: str | None
        if err is not None:
            is_error, code, payload = True, err.code, {"error": err.payload()}
        else:
            is_error, code, payload = self.describe(answer)
        record = CallRecord(
            step=d.step,
            tool=d.tool,
            arguments=_loggable(arguments if arguments is not None else {}),
            is_error=is_error,
            error_code=code,
            fault=fault,
            call_index=d.call_index,
            time=d.time,
            result=payload,
        )
        self.calls.append(record)
        if fault is not None:
            self.ledger.append(
                LedgerEntry(
                    step=d.step,
                    tool=d.tool,
                    call_index=d.call_index,
                    kind=fault,
                    applied=applied,
                    persisting=d.persisting,
                )
            )
        return Settled(record=record, error=err, answer=answer)


def _key(arguments: Any) -> str:
    """A canonical text of a call's arguments (identical calls share it)."""
    try:
        return json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=repr)
    except (TypeError, ValueError, RecursionError):
        return repr(arguments)[:10_000]
