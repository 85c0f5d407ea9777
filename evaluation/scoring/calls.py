"""A trajectory's steps resolved for scoring: :class:`Call` and :func:`resolve_calls`.

The behaviour rules (:mod:`mcpgym.evaluation.scoring.behaviours`) read calls, never raw steps. Ground
truth comes first: the fault ledger (and the call log's ``fault``) says which errors were
injected and whether a timed-out write was applied; error codes are only used to *infer*
faults when a trajectory has no ledger (``ledger is None``), and those faults are marked
``inferred``. Terms (docs/design.md §7, "Terms"): a call is *successful* when it returned no
error; a *read* is a successful call of a ``read`` tool; a read *matches* a call when they
share a resource family and, if both name resource ids (values of the catalog's ``id_args``),
they share one. Ids an ``auth`` call generated (tokens, payment authorisation ids: string
values in its result that were not among its arguments) are credentials, not resource ids,
and are ignored everywhere.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from mcpgym.evaluation.records.trajectory import MessageStep, ToolCallStep, Trajectory
from mcpgym.evaluation.scoring.call_kinds import (
    classify_call,
    classify_result,
    kind_from_annotations,
    mkdir_of_existing,
)
from mcpgym.evaluation.scoring.tool_catalog import Catalog, CatalogEntry, is_wait_entry
from mcpgym.kernel.errors import ErrorCode
from mcpgym.kernel.fault_kinds import ERROR_FAULT_KINDS as FAULT_ERROR_KINDS
from mcpgym.kernel.fault_kinds import FAULT_OF_CODE, FAULTS
from mcpgym.kernel.spec import ToolKind

ERROR_FAULT_KINDS: frozenset[str] = frozenset(FAULT_ERROR_KINDS)
"""Injected fault kinds that reach the agent as errors (``lost_write``/``stale_read`` do not),
from :data:`mcpgym.kernel.fault_kinds.FAULTS`."""
APPLIED_ERROR_FAULTS: frozenset[str] = frozenset(k for k, f in FAULTS.items() if f.is_error and f.applied)
"""Fault kinds whose error hides a write that took effect (``timeout``), from the FAULTS table."""

INFERRED_FAULTS: dict[str, str] = dict(FAULT_OF_CODE)
"""Error code -> fault kind, used only for trajectories without a ledger (from the fault
kinds' table: ``auth_required`` -> ``auth_challenge``, the others by their own name)."""


@dataclass(slots=True)
class Call:
    """One tool call as the scorer sees it.

    Attributes:
        step: the step number (1-based, from the call log).
        tool: tool name as sent. entry: its catalog entry (maybe heuristic).
        arguments: the arguments as sent.
        ok: no error. code: the error code (None when ``ok``).
        fault: injected fault kind (ledger, call log, or inferred from the code).
        inferred: ``fault`` was inferred from the error code (no ledger).
        applied: a timed-out write's effect happened (True), or unknown (None).
        families: resource families of the tool. ids: resource ids named in the arguments,
            credentials removed.
        time: virtual seconds at the call, when the step records it.
        retry_after: virtual seconds a rate-limited error asked to wait.
        invalid: an ``invalid_argument`` error or an unknown tool (``not_found`` on ``name``).
        batch: calls sharing a batch were issued together in one model turn (parallel tool
            calls); None for a call issued alone.
        is_read: a successful call of a ``read`` tool (set on creation).
        error_result: an error's recorded result (None for a success); :attr:`error_text`
            is it as lowercase text, read for the remedy the error names ("unblock her
            first").
        carries_data: an error whose result also carries the API's answer
            (``error.response``, ToolBench's "Message error..." with results): for recovery,
            a genuine answer.
        no_answer: a success whose result is an empty body (``""``, or ``{"error": "",
            "response": ""}``): it answers nothing, so it recovers nothing.
    """

    step: int
    tool: str
    entry: CatalogEntry
    arguments: Any
    ok: bool
    code: str | None
    fault: str | None
    inferred: bool
    applied: bool | None
    families: frozenset[str]
    ids: frozenset[str]
    time: int | None
    retry_after: int | None
    invalid: bool
    batch: int | None = None
    is_read: bool = False
    _args_key: str | None = None
    result: Any = None
    _error_text: str | None = None

    def __post_init__(self) -> None:
        # A plain attribute, not a property: the scoring loops read it O(n^2) times.
        self.is_read = self.ok and self.entry.kind == ToolKind.READ

    @property
    def args_key(self) -> str:
        """Canonical JSON of the arguments (computed on first use: only retries compare it)."""
        if self._args_key is None:
            self._args_key = args_key(self.arguments)
        return self._args_key

    @property
    def error_text(self) -> str:
        """An error's result as lowercase text, at most 2,000 characters (``""`` for a
        success), read for the remedy the error names ("unblock her first"); computed on first
        use: only recovery reads it."""
        if self._error_text is None:
            self._error_text = "" if self.ok else _error_text(self.result)
        return self._error_text

    @property
    def carries_data(self) -> bool:
        """An error whose result also carries the API's answer (``error.response``:
        ToolBench's "Message error..." with results): for recovery, a genuine answer."""
        return not self.ok and _carries_data(self.result)

    @property
    def no_answer(self) -> bool:
        """A success whose result is an empty body (``""``, or ``{"error": "", "response":
        ""}``): it answers nothing, so it recovers nothing."""
        return self.ok and _no_answer(self.result)

    @property
    def took_effect(self) -> bool:
        """A write-kind call whose effect happened (successful, or applied per the ledger)."""
        return self.entry.kind == ToolKind.WRITE and (self.ok or self.applied is True)


def args_key(arguments: Any) -> str:
    """Canonical JSON of ``arguments`` (sorted keys); ``repr`` when not JSON-serialisable."""
    try:
        return json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(arguments)


def _strings(value: Any) -> set[str]:
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set().union(*(_strings(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(_strings(v) for v in value)) if value else set()
    return set()


EARLIER_CHARS = 4000
"""How much of each earlier successful call's arguments (canonical JSON, characters) the
``mkdir -p`` rule searches for a directory's path (serialised only for a ``mkdir -p`` call)."""


def resolve_calls(traj: Trajectory, catalog: Catalog) -> list[Call]:
    """Resolve each step's catalog entry, fault, applied flag, families and ids.

    Args:
        traj: the trajectory (its ``ledger`` None means faults are inferred from codes).
        catalog: tool metadata; unknown tools get heuristic entries.

    Returns:
        One :class:`Call` per step, in step order.
    """
    ledger = {int(e["step"]): e for e in traj.ledger or [] if isinstance(e.get("step"), int)}
    credentials: set[str] = set()
    entries: dict[str, tuple[CatalogEntry, frozenset[str]]] = {}  # tool -> (entry, families)
    logged = traj.server_calls  # the behaviour metrics are over the calls the server logged
    annotations = traj.metadata.get("tool_annotations") if isinstance(traj.metadata, dict) else None
    for s in logged:  # classify every unknown tool before remedies are resolved
        known = entries.get(s.tool)
        if known is None:
            entry = tool_entry(catalog, s.tool, annotations)
            known = entries[s.tool] = (entry, frozenset(entry.resources))
        if known[0].kind == ToolKind.AUTH and not s.is_error:
            credentials |= _strings(s.result) - _strings(s.arguments)
    out = []
    no_ledger = traj.ledger is None
    batches = _batches(traj)
    earlier: list[Any] = []  # the arguments of the successful calls so far (mkdir_of_existing)
    cwd = traj.metadata.get("cwd") if isinstance(traj.metadata, dict) else None
    for s in logged:
        tool, is_error, code = s.tool, s.is_error, s.error_code
        step = s.step or 0  # a server call always has its call-log number
        entry, fams = entries[tool]
        if entry.source == "heuristic":  # the call's arguments may say more (call_kinds rule 3)
            refined = classify_call(entry, s.arguments)
            if not is_error:
                refined = classify_result(refined, s.result)
            shown = (args_key(a)[:EARLIER_CHARS] for a in earlier)  # serialised only for a mkdir -p
            if refined.kind == ToolKind.WRITE and mkdir_of_existing(s.arguments, shown, cwd):
                refined = refined.model_copy(update={"kind": ToolKind.READ})  # it changed nothing
            if refined is not entry:
                entry, fams, tool = refined, frozenset(refined.resources), refined.name
        if no_ledger and not is_error:
            earlier.append(s.arguments)
        row = ledger.get(step) if ledger else None
        if row is not None and row.get("tool") not in (None, tool):
            row = None
        fault: str | None
        if row is not None:
            fault, inferred, applied = row["kind"], False, row.get("applied")
        else:
            fault, inferred = s.fault, s.fault_inferred
            if fault is None and no_ledger and is_error and code in INFERRED_FAULTS:
                fault, inferred = INFERRED_FAULTS[code], True
            # The server's call log knows a timeout was applied (docs/design.md §4: a timeout's
            # write WAS applied; FAULTS says which error kinds apply); an inferred one is
            # ambiguous and does not count as applied.
            applied = True if (fault in APPLIED_ERROR_FAULTS and not inferred) else None
        invalid = is_error and (
            code == ErrorCode.INVALID_ARGUMENT or (code == ErrorCode.NOT_FOUND and s.error_field == "name")
        )
        ids = catalog.ids(tool, s.arguments)
        if credentials and ids:
            ids = ids - credentials
        if entry.source == "heuristic":
            # without a catalog, names say little of families: an object a call names (nested
            # ids, or the id a write's result gave the object it made) is a family of its own
            named = ids | nested_ids(s.arguments)
            if entry.kind == ToolKind.WRITE and not is_error:
                named |= result_ids(s.result)
            if named:
                ids = frozenset(named)
                fams = fams | frozenset(f"{ID_FAMILY}{v}" for v in named)
        # positional, in field order (step, tool, entry, arguments, ok, code, fault, inferred,
        # applied, families, ids, time, retry_after, invalid); retry_after is read only for
        # rate_limited errors (impatience)
        out.append(
            Call(
                step,
                tool,
                entry,
                s.arguments,
                not is_error,
                code if is_error else None,
                fault,
                bool(inferred and fault),
                applied,
                fams,
                ids,
                s.time,
                s.retry_after if is_error else None,
                invalid,
                batches.get(id(s)),
                result=s.result,
            )
        )
    return out


ID_FAMILY = "object:"
"""Prefix of the family an object id stands for (calls of tools no catalog knows)."""
NESTED_ID_DEPTH = 3
"""Object levels searched for ids in a call's arguments."""
MIN_OBJECT_ID = 6
"""Characters an id must have to stand for one object (short numbers are no evidence)."""


def _json_object(v: Any) -> Any:
    """A string argument that holds a JSON object (Klavis's ``path_params``), parsed; else ``v``."""
    if isinstance(v, str) and v.lstrip().startswith("{") and len(v) <= 100_000:
        try:
            return json.loads(v)
        except ValueError:
            return v
    return v


def _id_value(v: Any) -> str | None:
    if isinstance(v, bool) or not isinstance(v, (str, int)):
        return None
    text = str(v).strip()
    return text if len(text) >= MIN_OBJECT_ID and len(text) <= 200 and any(ch.isdigit() for ch in text) else None


def nested_ids(arguments: Any, depth: int = 0) -> frozenset[str]:
    """Ids named anywhere in a call's arguments, at most :data:`NESTED_ID_DEPTH` objects down:
    values of arguments whose name says they are ids (:data:`~mcpgym.evaluation.scoring.tool_catalog.ID_ARG_RE`,
    ``page_id``, ``parent.database_id``) with at least :data:`MIN_OBJECT_ID` characters and a
    digit (a UUID, a hash)."""
    from mcpgym.evaluation.scoring.tool_catalog import ID_ARG_RE

    out: set[str] = set()
    if isinstance(arguments, dict) and depth <= NESTED_ID_DEPTH:
        for k, raw in arguments.items():
            v = _json_object(raw)
            if ID_ARG_RE.search(str(k)):
                for item in v if isinstance(v, list) else [v]:
                    iv = _id_value(item)
                    if iv is not None:
                        out.add(iv)
            elif isinstance(v, dict):
                out |= nested_ids(v, depth + 1)
    return frozenset(out)


def result_ids(result: Any) -> frozenset[str]:
    """The id a successful write's result gave the object it made or changed (its top-level
    ``id``, or the ``id`` of its top-level object members), as :func:`nested_ids` takes them."""
    if not isinstance(result, dict):
        return frozenset()
    out = {iv for k in ("id",) if (iv := _id_value(result.get(k))) is not None}
    return frozenset(out)


IDENTIFYING_ARG_RE = re.compile(
    r"^(?:path|file_?path|file_?name|file|url|uri|href|number|\w+_number|sha|ref|branch|slug|key|page_id|\w+_id|id)$",
    re.IGNORECASE,
)
"""Argument names that identify the object a call acts on (an id, a path, a number, a url)."""


def object_values(arguments: Any, depth: int = 0) -> frozenset[str]:
    """The values of a call's identifying arguments (:data:`IDENTIFYING_ARG_RE`), anywhere in
    its arguments down to :data:`NESTED_ID_DEPTH` levels (``params.path``,
    ``files[0].path``), as strings: what the call acts on. Context arguments every call shares
    (``owner``, ``repo``) are not identifying."""
    out: set[str] = set()
    if depth > NESTED_ID_DEPTH:
        return frozenset()
    if isinstance(arguments, list):
        for v in arguments[:50]:
            out |= object_values(v, depth + 1)
    elif isinstance(arguments, dict):
        for k, raw in arguments.items():
            v = _json_object(raw)
            if IDENTIFYING_ARG_RE.match(str(k)) and isinstance(v, (str, int)) and not isinstance(v, bool):
                if str(v).strip():
                    out.add(str(v).strip())
            elif isinstance(v, (dict, list)):
                out |= object_values(v, depth + 1)
    return frozenset(out)


def tool_entry(catalog: Catalog, tool: str, annotations: Any = None) -> CatalogEntry:
    """The entry of ``tool``: the catalog's row, else (for a tool known only by the name rules)
    the kind its MCP annotations give, when the transcript listed them (``annotations``: tool
    name -> annotations; :func:`mcpgym.evaluation.scoring.call_kinds.kind_from_annotations`),
    else the name rules' entry."""
    entry = catalog.get(tool)
    if entry.source == "heuristic" and isinstance(annotations, dict) and tool in annotations:
        kind, destructive = kind_from_annotations(annotations[tool])
        if kind is not None:
            return entry.model_copy(update={"kind": kind, "destructive": destructive})
    return entry


def _batches(traj: Trajectory) -> dict[int, int]:
    """``id(step) -> batch`` for the tool calls issued together in one model turn: a step's own
    ``batch`` (an imported transcript's parallel calls), else the calls following a message
    step of mcpgym's own agents that made more than one tool call (its ``tool_calls``), keyed by
    that message's position in the steps."""
    out: dict[int, int] = {}
    turn, left = -1, 0
    for i, st in enumerate(traj.steps):
        if isinstance(st, MessageStep):
            turn, left = (i, st.tool_calls) if st.tool_calls > 1 else (-1, 0)
        elif isinstance(st, ToolCallStep):
            if st.batch is not None:
                out[id(st)] = st.batch
            elif left > 0:
                out[id(st)] = -1 - turn  # negative: never equal to an imported batch number
            left -= 1
    return out


def _error_text(result: Any) -> str:
    text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)
    return text[:2000].lower()


def _carries_data(result: Any) -> bool:
    err = result.get("error") if isinstance(result, dict) else None
    return isinstance(err, dict) and bool(err.get("response"))


def _empty(value: Any) -> bool:
    return value is None or value == {} or (isinstance(value, str) and not value.strip())


def _no_answer(result: Any) -> bool:
    if isinstance(result, str):
        return not result.strip()
    return (
        isinstance(result, dict)
        and set(result) == {"error", "response"}
        and _empty(result.get("response"))
        and not result.get("error")
    )


def ids_match(a: frozenset[str], b: frozenset[str]) -> bool:
    """Two id sets match when either is empty or they share an id."""
    return not a or not b or bool(a & b)


def matches(read: Call, other: Call) -> bool:
    """``read`` is a read sharing a family with ``other`` and, where both name ids, an id."""
    return read.is_read and bool(read.families & other.families) and ids_match(read.ids, other.ids)


def is_wait(c: Call) -> bool:
    """A call of a wait tool: one declaring the role ``wait`` on ``@tool`` (for a tool known
    only heuristically, or from a catalog row without roles, a tool whose name has the word
    ``wait``; see :func:`mcpgym.evaluation.scoring.tool_catalog.is_wait_entry`)."""
    return is_wait_entry(c.entry)


__all__ = [
    "Call",
    "ERROR_FAULT_KINDS",
    "INFERRED_FAULTS",
    "args_key",
    "ids_match",
    "is_wait",
    "matches",
    "ID_FAMILY",
    "IDENTIFYING_ARG_RE",
    "nested_ids",
    "object_values",
    "resolve_calls",
    "result_ids",
    "tool_entry",
]
