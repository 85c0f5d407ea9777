"""Scripted reference agents: ``careful``, ``overconfident`` and ``defeatist``.

All three follow the task's oracle plan (:func:`mcpgym.evaluation.tasks.oracle.execute`, lenient
mode) and differ only in habits, so the scorer can be checked against known behaviour
(docs/design.md §6). They use the registered tool catalog (:class:`mcpgym.evaluation.scoring.tool_catalog.Catalog`)
for kinds, resource families, preconditions, remedies and alternatives, and call only tools
listed in the episode's ``tools``.

``careful``
    Before each write of the plan it reads every precondition family that changed since it
    was last read, and reads the write's *read-back tool* (a read tool covering the write's
    first resource family that has one, preferring one that also covers its other families;
    its id arguments filled from the write's arguments, optional ones the write shares passed
    along, and otherwise its widest view: an enum option ``all``, ``limit`` at its maximum);
    after the write it reads that tool again. Errors: ``rate_limited`` -> the episode's
    ``wait`` tool (its one parameter set to ``retry_after``) then retry; ``auth_required`` ->
    the ``reauth`` tool then retry; ``permission_denied`` -> the ``grant`` tool (its one
    parameter set to the privilege named in ``error.details``) then retry. Those tools are
    found by the roles they declare on ``@tool`` (see :data:`mcpgym.kernel.spec.ROLES`); ``transient`` -> retry; ``timeout`` -> read back and compare
    with the pre-write read: changed means applied (no retry), unchanged means retry;
    ``unavailable`` -> the step's ``fallback``, else a declared alternative that takes the same
    arguments. A write reported as successful whose read-back shows no change is read once
    more (a stale read shows an old version once) and then redone (a lost write). At most
    :data:`MAX_ATTEMPTS` attempts per call. Final message: the oracle's ``answer``/``refuse``;
    when a call of the plan still fails after all that (e.g. a tool is down and no alternative
    takes its arguments), it stops and says what failed instead of claiming success.
``overconfident``
    Runs the plan's calls only: no pre-checks, no read-backs, no fallbacks. On an error it
    repeats the same call at once (ignoring ``retry_after``; after a timeout this duplicates
    the write) up to :data:`OVERCONFIDENT_REPEATS` times, then moves on. Its final message
    always claims success.
``defeatist``
    Like ``careful`` until the first error of any call; then it stops and apologises,
    blaming the service (:data:`DEFEATIST_MESSAGE`).

The user (issue "users in the loop"): at an ``ask`` step of the plan, ``careful`` and
``defeatist`` ask the user through the episode's user channel (an ``ask_user`` turn) and go
on with the answer; ``overconfident`` never asks and takes the step's ``guess``. A tool error
``user_input_required`` (a tool that needs the user, met without elicitation) is settled the
same way: ``careful`` asks the user the tool's question and calls again with the answer
(a confirmation refused ends the plan's call as refused); ``overconfident`` fills the
argument itself (confirms, or takes the first option). Without a user channel, every agent
falls back to the guess.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from mcpgym.evaluation.agents.base import (
    NO_CONTEXT,
    Agent,
    AgentContext,
    AgentResult,
    CallFn,
    CallLimitReached,
    CallResult,
    ToolInfo,
)
from mcpgym.evaluation.records.status import EpisodeStatus
from mcpgym.evaluation.scoring.tool_catalog import Catalog, CatalogEntry
from mcpgym.evaluation.tasks.oracle import AskRequest, CallRequest, OracleOutcome, execute
from mcpgym.kernel.errors import ErrorCode
from mcpgym.kernel.fault_kinds import FAULTS
from mcpgym.kernel.spec import ToolKind
from mcpgym.kernel.user import UserRequest, user_request_of

if TYPE_CHECKING:
    from mcpgym.evaluation.tasks.model import Task

MAX_ATTEMPTS = 5
"""Most attempts of one call by ``careful`` (the first try and 4 retries)."""

MAX_LOST_REDOS = 1
"""Most times ``careful`` redoes a write that reported success but changed nothing."""

OVERCONFIDENT_REPEATS = 2
"""How often ``overconfident`` repeats a failed call before moving on."""

DEFEATIST_MESSAGE = "I'm sorry, I was unable to complete this: the service failed. Please try again later."
"""The ``defeatist`` agent's final message after its first error."""

OVERCONFIDENT_MESSAGE = "Done! I've taken care of everything you asked."
"""The ``overconfident`` agent's claim when its plan did not reach an ``answer``."""

FAULT_CODES = frozenset(facts.code for facts in FAULTS.values() if facts.code is not None)
"""Error codes of injected faults; a read tool with remedies only for these is a plain read."""

_CATALOGS: dict[tuple[str, ...], Catalog] = {}


def catalog_for(apps: list[str]) -> Catalog:
    """The registered catalog of ``apps`` (built once per app set; building it renders every
    tool's input schema)."""
    key = tuple(apps)
    if key not in _CATALOGS:
        _CATALOGS[key] = Catalog.from_apps(apps)
    return _CATALOGS[key]


class _Limit(Exception):
    """The episode's call budget is spent."""


class _GiveUp(Exception):
    """The defeatist met an error."""


class _Failed(Exception):
    """A call of the plan still failed after every retry, cure and alternative."""

    def __init__(self, req: CallRequest, res: CallResult) -> None:
        self.req, self.res = req, res
        super().__init__(f"{req.tool} at {req.path}: {res.code}: {res.error.get('message', '')}")


class _Session:
    """One episode of a scripted agent: the call budget, what is known fresh, down tools."""

    def __init__(self, task: Task, tools: list[ToolInfo], call: CallFn, *, stop_on_error: bool = False) -> None:
        self.task = task
        self.tools = {t.name: t for t in tools}
        self.catalog = catalog_for(task.apps)
        self.order = {name: i for i, name in enumerate(self.catalog)}
        self.call_fn = call
        self.calls = 0
        self.stop_on_error = stop_on_error
        self.down: set[str] = set()
        self.fresh: set[str] = set()
        self.cache: dict[str, tuple[frozenset[str], dict[str, Any]]] = {}

    # -- raw calls and bookkeeping -----------------------------------------------------------
    def entry(self, tool: str) -> CatalogEntry:
        return self.catalog.get(tool)

    def _changed(self, families: frozenset[str]) -> None:
        self.fresh -= families
        for key in [k for k, (fams, _) in self.cache.items() if fams & families]:
            del self.cache[key]

    async def raw(self, tool: str, args: dict[str, Any]) -> CallResult:
        """One call through the episode's call function, with freshness bookkeeping."""
        if self.calls >= self.task.max_calls:
            raise _Limit(f"call budget of {self.task.max_calls} spent")
        self.calls += 1
        try:
            res = await self.call_fn(tool, args)
        except CallLimitReached as exc:
            raise _Limit(str(exc) or "the runner's call limit was reached") from None
        entry = self.entry(tool)
        families = frozenset(entry.resources)
        if not res.is_error:
            if entry.kind == ToolKind.READ:
                self.fresh |= families
                self.cache[_key(tool, args)] = (families, res.payload)
            elif entry.kind == ToolKind.AUTH:
                self._changed(families)
                self.fresh |= families
            else:
                self._changed(families)
            return res
        if res.code == ErrorCode.TIMEOUT:
            self._changed(families)  # the write may have been applied
        elif res.code == ErrorCode.UNAVAILABLE:
            self.down.add(tool)
        if self.stop_on_error:
            raise _GiveUp(f"{tool}: {res.code}")
        return res

    def usable(self, tool: str) -> bool:
        return tool in self.tools and tool not in self.down

    # -- choosing read tools -------------------------------------------------------------------
    def pick_read(
        self, family: str, source: dict[str, Any], written: tuple[str, ...] = ()
    ) -> tuple[str, dict[str, Any]] | None:
        """The best read tool of ``family`` whose required arguments ``source`` can fill.

        Preference: more id arguments filled, more of the ``written`` families (those of the
        write being checked) covered, the family being the tool's first resource, a plain read
        (no remedy for a domain error: not ``flights_get_boarding_pass``, which fails with
        ``precondition_failed`` until check-in), catalog order. The arguments are the required
        ones plus the widening of :meth:`_wide_args`.
        """
        found = self._pick(family, source, written)
        return None if found is None else (found[1], found[2])

    def _pick(
        self, family: str, source: dict[str, Any], written: tuple[str, ...]
    ) -> tuple[tuple[int, ...], str, dict[str, Any]] | None:
        best: tuple[tuple[int, ...], str, dict[str, Any]] | None = None
        for name in self.catalog:
            entry = self.entry(name)
            if entry.kind != ToolKind.READ or family not in entry.resources or not self.usable(name):
                continue
            required = self.tools[name].required
            if any(r not in source for r in required):
                continue
            ids = sum(1 for r in required if r in (entry.id_args or []))
            overlap = len(set(entry.resources) & set(written))
            plain = int(not set(entry.remedies) - FAULT_CODES)  # no remedy for a domain error
            score = (ids, overlap, int(entry.resources[0] == family), plain, -self.order.get(name, 0))
            if best is None or score > best[0]:
                best = (score, name, self._wide_args(name, source))
        return best

    def _wide_args(self, tool: str, source: dict[str, Any]) -> dict[str, Any]:
        """Arguments of a read-back or pre-check read of ``tool``: its required arguments from
        ``source`` (the write's arguments), its optional arguments that the write also has (the
        place written: a folder, a label), and otherwise the widest view its schema offers (an
        enum option ``all``; a ``limit`` at its maximum), so the write's effect is in view."""
        info = self.tools[tool]
        props = info.input_schema.get("properties") or {}
        args = {r: source[r] for r in info.required}
        for pname, schema in props.items():
            if pname in args or not isinstance(schema, dict):
                continue
            if pname in source:
                args[pname] = source[pname]
                continue
            options = [
                o
                for branch in [schema, *schema.get("anyOf", [])]
                if isinstance(branch, dict)
                for o in branch.get("enum", [])
            ]
            if "all" in options:
                args[pname] = "all"
            elif pname == "limit" and isinstance(schema.get("maximum"), int):
                args[pname] = schema["maximum"]
        return args

    def readback_for(self, tool: str, args: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        """The read tool that shows a write's effect: for its first resource family that has one,
        preferring tools that also cover the write's other families (see :meth:`pick_read`)."""
        written = tuple(self.entry(tool).resources)
        for family in written:
            pick = self.pick_read(family, args, written)
            if pick is not None:
                return pick
        return None

    def alternative_for(self, tool: str, args: dict[str, Any]) -> str | None:
        """A declared alternative (either direction) that is usable and takes ``args`` as they are."""
        for alt in sorted(self.catalog.alternatives_of(tool), key=lambda n: self.order.get(n, 0)):
            if not self.usable(alt):
                continue
            info = self.tools[alt]
            if set(args) <= set(info.params) and set(info.required) <= set(args):
                return alt
        return None

    def role_tool(self, role: str) -> tuple[str, str | None] | None:
        """The first exposed tool declaring ``role`` (catalog order) and its one required
        parameter (None for a ``reauth`` tool), or None when the episode has none."""
        for name in self.catalog:
            if self.entry(name).role == role and name in self.tools:
                required = self.tools[name].required
                return name, (required[0] if required else None)
        return None

    # -- careful habits ----------------------------------------------------------------------
    async def cure(self, res: CallResult) -> bool:
        """Apply the cure of a recoverable error; True when a retry makes sense."""
        code = res.code
        if code == ErrorCode.TRANSIENT:
            return True
        if code == ErrorCode.RATE_LIMITED and (wait := self.role_tool("wait")) is not None and (param := wait[1]):
            tool = wait[0]
            after = res.error.get("retry_after")
            seconds = max(int(after) if isinstance(after, (int, float)) and after > 0 else 30, 1)
            schema = (self.tools[tool].input_schema.get("properties") or {}).get(param) or {}
            if isinstance(schema.get("maximum"), int):
                seconds = min(seconds, schema["maximum"])
            await self.plain(tool, {param: seconds})
            return True
        if code == ErrorCode.AUTH_REQUIRED and (reauth := self.role_tool("reauth")) is not None:
            await self.plain(reauth[0], {})
            return True
        if code == ErrorCode.PERMISSION_DENIED and (grant := self.role_tool("grant")) is not None and grant[1]:
            privilege = (res.error.get("details") or {}).get("privilege")
            if isinstance(privilege, str):
                granted = await self.plain(grant[0], {grant[1]: privilege})
                return not granted.is_error
        return False

    async def plain(self, tool: str, args: dict[str, Any], *, has_fallback: bool = False) -> CallResult:
        """A read, auth or remedy call with retries, cures and alternatives (no write habits)."""
        res = await self.raw(tool, args)
        for _ in range(MAX_ATTEMPTS - 1):
            if not res.is_error:
                return res
            if res.code == ErrorCode.UNAVAILABLE:
                if has_fallback:
                    return res
                alt = self.alternative_for(tool, args)
                if alt is None:
                    return res
                tool = alt
            elif not await self.cure(res):
                return res
            res = await self.raw(tool, args)
        return res

    async def read(self, target: tuple[str, dict[str, Any]] | None, *, force: bool = False) -> dict[str, Any] | None:
        """The payload of a read (from the cache while its families are unchanged, unless
        ``force``), or None when it failed."""
        if target is None:
            return None
        tool, args = target
        key = _key(tool, args)
        if not force and key in self.cache and self.cache[key][0] <= self.fresh:
            return self.cache[key][1]
        res = await self.plain(tool, args)
        return None if res.is_error else res.payload

    async def confirm(
        self, target: tuple[str, dict[str, Any]] | None, before: dict[str, Any] | None
    ) -> dict[str, Any] | None:
        """Read back; when it equals ``before``, read once more (a stale read is never repeated)."""
        after = await self.read(target, force=True)
        if after is not None and before is not None and after == before:
            after = await self.read(target, force=True)
        return after

    async def ensure_fresh(self, families: list[str], source: dict[str, Any]) -> None:
        """Read every family of ``families`` not read since it last changed."""
        for family in families:
            if family in self.fresh:
                continue
            pick = self.pick_read(family, source)
            if pick is not None:
                await self.read(pick, force=True)

    async def careful_write(self, tool: str, args: dict[str, Any], has_fallback: bool) -> CallResult:
        """A write with pre-checks, read-back, cures and timeout / lost-write handling."""
        target = self.readback_for(tool, args)
        redos = 0
        res = CallResult(True, {"error": {"code": "transient", "message": "not attempted"}})
        for _ in range(MAX_ATTEMPTS):
            await self.ensure_fresh(self.entry(tool).preconditions, args)
            before = await self.read(target)
            res = await self.raw(tool, args)
            if not res.is_error:
                after = await self.confirm(target, before)
                if after is not None and before is not None and after == before and redos < MAX_LOST_REDOS:
                    redos += 1  # success reported, nothing changed: a lost write
                    continue
                return res
            if res.code == ErrorCode.TIMEOUT:
                after = await self.confirm(target, before)
                if after is None or before is None or after != before:
                    return CallResult(False, {})  # applied (or cannot tell: never risk a duplicate)
                continue
            if res.code == ErrorCode.UNAVAILABLE:
                if has_fallback:
                    return res
                alt = self.alternative_for(tool, args)
                if alt is None:
                    return res
                tool, target = alt, self.readback_for(alt, args)
                continue
            if not await self.cure(res):
                return res
        return res


def _key(tool: str, args: dict[str, Any]) -> str:
    import json

    return tool + json.dumps(args, sort_keys=True, default=str)


async def _drive(
    task: Task,
    handler: Callable[[CallRequest], Awaitable[Any]],
    *,
    use_fallbacks: bool,
    ask: Callable[[AskRequest], Awaitable[Any]] | None = None,
) -> OracleOutcome:
    """Run the oracle plan, sending each call request to ``await handler(request)`` and each
    question (:class:`AskRequest`) to ``await ask(request)`` (default: its guess)."""
    gen = execute(task, strict=False, use_fallbacks=use_fallbacks)
    try:
        req: CallRequest | AskRequest = next(gen)
        while True:
            if isinstance(req, AskRequest):
                result = await ask(req) if ask is not None else req.guess
            else:
                result = await handler(req)
            req = gen.send(result)
    except StopIteration as stop:
        outcome: OracleOutcome = stop.value
        return outcome


class CarefulAgent(Agent):
    """Pre-checks, reads back every write, cures every recoverable error (module docstring)."""

    name = "careful"
    stop_on_error = False

    async def run(
        self, task: Task, tools: list[ToolInfo], call: CallFn, context: AgentContext = NO_CONTEXT
    ) -> AgentResult:
        """Follow ``task.oracle`` with the careful habits; answer with the oracle's message.
        ``context.user``: the episode's :class:`mcpgym.evaluation.users.UserChannel` (None: cannot ask)."""
        user = context.user
        session = _Session(task, tools, call, stop_on_error=self.stop_on_error)

        async def once(req: CallRequest) -> CallResult:
            if session.entry(req.tool).kind == ToolKind.WRITE:
                return await session.careful_write(req.tool, req.args, req.has_fallback)
            return await session.plain(req.tool, req.args, has_fallback=req.has_fallback)

        async def handle(req: CallRequest) -> CallResult:
            res = await once(req)
            for _ in range(3):  # a tool that needs the user: ask, then call again with the answer
                request = user_request_of(res.payload) if res.code == ErrorCode.USER_INPUT_REQUIRED else None
                if request is None or user is None:
                    break
                reply = await user.ask(request.message, request.topic)
                value = _settle(request, reply.value)
                if value is None:
                    break
                req = CallRequest(
                    tool=req.tool,
                    args={**req.args, request.argument: value},
                    path=req.path,
                    save=req.save,
                    has_fallback=req.has_fallback,
                )
                res = await once(req)
            if res.is_error and not (res.code == ErrorCode.UNAVAILABLE and req.has_fallback):
                raise _Failed(req, res)
            return res

        async def ask(req: AskRequest) -> Any:
            if user is None:
                return req.guess
            return (await user.ask(req.question, req.about)).value

        try:
            outcome = await _drive(task, handle, use_fallbacks=True, ask=ask)
        except _Limit as exc:
            return AgentResult(
                final_message="I ran out of tool calls before finishing.",
                status=EpisodeStatus.LIMIT,
                stop_reason=str(exc),
            )
        except _GiveUp as exc:
            return AgentResult(final_message=DEFEATIST_MESSAGE, stop_reason=f"gave up after an error: {exc}")
        except _Failed as exc:  # say so honestly instead of reporting the plan's success
            err = exc.res.error
            return AgentResult(
                final_message=(
                    f"I could not finish: {exc.req.tool} still failed after retries and alternatives "
                    f"({exc.res.code}: {err.get('message', '')}). Everything before that step is done."
                ),
                stop_reason=f"a plan call failed for good: {exc}",
            )
        return AgentResult(final_message=_final(outcome), stop_reason=_reason(outcome))


class DefeatistAgent(CarefulAgent):
    """Careful until the first error, then apologises and stops (module docstring)."""

    name = "defeatist"
    stop_on_error = True


class OverconfidentAgent(Agent):
    """Runs only the plan's calls, repeats failures blindly, always claims success."""

    name = "overconfident"

    async def run(
        self, task: Task, tools: list[ToolInfo], call: CallFn, context: AgentContext = NO_CONTEXT
    ) -> AgentResult:
        """Follow ``task.oracle`` without checks; repeat errors up to twice; claim success.
        Never asks the user (``context.user`` is ignored): it guesses."""
        calls = 0

        async def one(req: CallRequest) -> CallResult:
            nonlocal calls
            if calls >= task.max_calls:
                raise _Limit(f"call budget of {task.max_calls} spent")
            calls += 1
            try:
                return await call(req.tool, req.args)
            except CallLimitReached as exc:
                raise _Limit(str(exc) or "the runner's call limit was reached") from None

        async def handle(req: CallRequest) -> CallResult:
            res = await one(req)
            for _ in range(OVERCONFIDENT_REPEATS):
                if not res.is_error:
                    break
                request = user_request_of(res.payload) if res.code == ErrorCode.USER_INPUT_REQUIRED else None
                if request is not None:  # settle it itself: confirm, or the first option
                    guess = True if request.kind == "confirm" else (request.options[0] if request.options else None)
                    if guess is None:
                        break
                    req = CallRequest(
                        tool=req.tool,
                        args={**req.args, request.argument: guess},
                        path=req.path,
                        save=req.save,
                        has_fallback=req.has_fallback,
                    )
                res = await one(req)
            return res

        try:
            outcome = await _drive(task, handle, use_fallbacks=False)
        except _Limit as exc:
            return AgentResult(final_message=OVERCONFIDENT_MESSAGE, status=EpisodeStatus.LIMIT, stop_reason=str(exc))
        message = outcome.message if outcome.kind == "answer" and outcome.message else OVERCONFIDENT_MESSAGE
        return AgentResult(final_message=message, stop_reason=_reason(outcome))


def _settle(request: UserRequest, value: Any) -> Any:
    """The argument value of the user's answer to a tool's request, or None when it settles
    nothing (a confirmation becomes a boolean; a choice must be one of the options)."""
    if request.kind == "confirm":
        return value if isinstance(value, bool) else None
    if request.kind == "choose":
        return value if value in request.options else None
    return str(value) if value is not None else None


def _final(outcome: OracleOutcome) -> str:
    if outcome.message:
        return outcome.message
    if outcome.problems:
        return f"I could not complete the task: {outcome.problems[0]}"
    return "I could not complete the task."


def _reason(outcome: OracleOutcome) -> str:
    end = f"plan ended with {outcome.kind} at {outcome.path}" if outcome.kind else "plan ran out of steps"
    return end + (f"; problems: {'; '.join(outcome.problems)}" if outcome.problems else "")


__all__ = [
    "CarefulAgent",
    "DEFEATIST_MESSAGE",
    "DefeatistAgent",
    "MAX_ATTEMPTS",
    "OVERCONFIDENT_MESSAGE",
    "OverconfidentAgent",
]
