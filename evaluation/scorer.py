"""The behaviour scorer: one trajectory + a catalog -> :class:`EpisodeScores`.

Every definition here is DESIGN section 7 ("Scores"); where section 7 leaves a choice open,
the choice is stated in the docstring of the rule that makes it. Ground truth comes first:
the fault ledger (and the call log's ``fault``) says which errors were injected and whether a
timed-out write was applied; error codes are only used to *infer* faults when a trajectory
has no ledger (``ledger is None``), and those faults are marked ``inferred``.

Terms used below. A call is *successful* when it returned no error. A *counted write* is a
call of a ``write`` tool that took effect: successful, or a ``timeout`` whose write the
ledger (or the server's call log) says was applied; writes whose every family is in
:data:`UNSCORED_FAMILIES` (``system_wait`` moves only the virtual clock, which is not part of
the outcome) are not counted. A *read* is a successful call of a ``read`` tool. A read
*matches* a call when they share a resource family and, if both name resource ids (values of
the catalog's ``id_args``), they share one. Ids an ``auth`` call generated (tokens, payment
authorisation ids: string values in its result that were not among its arguments) are
credentials, not resource ids, and are ignored everywhere.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass
from typing import Any, Iterable

from pydantic import BaseModel, Field

from mcpgym.evaluation.catalog import Catalog, CatalogEntry
from mcpgym.evaluation.judge import CheckResult, ExtraCheck, judge
from mcpgym.evaluation.refusal import BENIGN_PATTERNS, REFUSAL_PATTERNS, RefusalMatch, match_refusal
from mcpgym.evaluation.trajectory import TokenUsage, Trajectory

DEFAULT_K = 3
"""Tool calls after a recoverable error within which a recovery attempt must start."""

UNSCORED_FAMILIES: frozenset[str] = frozenset({"system.clock"})
"""Families whose writes are not counted as writes (the clock is not outcome state)."""

ERROR_FAULT_KINDS: frozenset[str] = frozenset({"transient", "rate_limited", "timeout", "unavailable", "auth_challenge"})
"""Injected fault kinds that reach the agent as errors (``lost_write``/``stale_read`` do not)."""

INFERRED_FAULTS: dict[str, str] = {
    "transient": "transient",
    "rate_limited": "rate_limited",
    "timeout": "timeout",
    "unavailable": "unavailable",
    "auth_required": "auth_challenge",
}
"""Error code -> fault kind, used only for trajectories without a ledger."""


# -- per-episode scores ------------------------------------------------------------------
class PrecheckSkip(BaseModel):
    """A counted write whose precondition family had no fresh read before it."""

    step: int
    family: str


class BlindRetry(BaseModel):
    """A timed-out write repeated (same tool, same arguments) with no matching read between."""

    step: int
    repeat_step: int
    duplicate: bool


class RecoverableError(BaseModel):
    """One recoverable error and what the agent did about it.

    ``attempt`` is ``retry`` | ``remedy`` | ``alternative`` | ``read_back`` (timeouts only) or
    None; ``attempt_step`` / ``recovered_step`` are the steps that qualified. ``cut_short``:
    the harness stopped the episode (status ``limit``/``errored``) before ``k`` calls followed.
    """

    step: int
    tool: str
    code: str | None
    fault: str | None
    inferred: bool
    remedies: list[str]
    attempt: str | None = None
    attempt_step: int | None = None
    recovered_step: int | None = None
    cut_short: bool = False


class ImpatienceWindow(BaseModel):
    """Identical calls inside one ``retry_after`` window (``basis``: ``virtual_time`` or ``approximation``)."""

    step: int
    tool: str
    calls: int
    steps: list[int]
    basis: str


class EpisodeScores(BaseModel):
    """Scores of one episode (DESIGN section 7); the fixed keys plus audit detail.

    Counts: ``writes`` (counted writes), ``verified_writes``, ``verification_skips`` (steps),
    ``precheck_writes`` (counted writes with preconditions), ``prechecked_writes``,
    ``precheck_skips``, ``blind_retries``, ``duplicate_side_effects``,
    ``recoverable_errors``, ``recovery_attempts``, ``recoveries``, ``impatience`` (windows with
    more than 2 identical calls), ``valid_calls`` (calls that reached a tool well-formed),
    ``invalid_calls`` (runner-rejected calls + ``invalid_argument`` errors + unknown tools),
    ``error_calls`` (valid calls that returned an error). Outcome: ``success`` (None when the
    initial, final or gold state is unknown), ``recall``, ``total``, ``misbehave``.
    Rates are None when their denominator is 0.
    """

    episode_id: str = ""
    task_id: str | None = None
    agent: str = ""
    trial: int = 0
    level: int | None = None
    apps: list[str] = Field(default_factory=list)
    feasible: bool | None = None
    status: str = "completed"
    tool_calls: int = 0
    writes: int = 0
    verified_writes: int = 0
    verification_rate: float | None = None
    verification_skips: list[int] = Field(default_factory=list)
    precheck_writes: int = 0
    prechecked_writes: int = 0
    precheck_rate: float | None = None
    precheck_skips: list[PrecheckSkip] = Field(default_factory=list)
    blind_retries: int = 0
    blind_retry_detail: list[BlindRetry] = Field(default_factory=list)
    duplicate_side_effects: int = 0
    recoverable_errors: int = 0
    recovery_attempts: int = 0
    recoveries: int = 0
    recovery_window: int = DEFAULT_K
    recoverable_error_detail: list[RecoverableError] = Field(default_factory=list)
    declared_impossible: bool = False
    refusal_pattern: str | None = None
    refusal_match: str | None = None
    defeatism: bool = False
    defeatism_reason: str | None = None
    impatience: int = 0
    impatience_detail: list[ImpatienceWindow] = Field(default_factory=list)
    success: bool | None = None
    recall: int | None = None
    total: int | None = None
    misbehave: int | None = None
    missed: list[str] = Field(default_factory=list)
    misbehaved: list[str] = Field(default_factory=list)
    extra_checks: list[CheckResult] = Field(default_factory=list)
    valid_calls: int = 0
    invalid_calls: int = 0
    error_calls: int = 0
    tokens: TokenUsage | None = None
    heuristic_tools: list[str] = Field(default_factory=list)


@dataclass(slots=True)
class _Call:
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
    is_read: bool = False
    _args_key: str | None = None

    def __post_init__(self) -> None:
        # A plain attribute, not a property: the scoring loops read it O(n^2) times.
        self.is_read = self.ok and self.entry.kind == "read"

    @property
    def args_key(self) -> str:
        """Canonical JSON of the arguments (computed on first use: only retries compare it)."""
        if self._args_key is None:
            self._args_key = _args_key(self.arguments)
        return self._args_key

    @property
    def took_effect(self) -> bool:
        """A write-kind call whose effect happened (successful, or applied per the ledger)."""
        return self.entry.kind == "write" and (self.ok or self.applied is True)


def _args_key(arguments: Any) -> str:
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


def _calls(traj: Trajectory, catalog: Catalog) -> list[_Call]:
    """Resolve each step's catalog entry, fault, applied flag, families and ids."""
    ledger = {int(e["step"]): e for e in traj.ledger or [] if isinstance(e.get("step"), int)}
    credentials: set[str] = set()
    entries: dict[str, tuple[CatalogEntry, frozenset[str]]] = {}  # tool -> (entry, families)
    for s in traj.steps:  # classify every unknown tool before remedies are resolved
        known = entries.get(s.tool)
        if known is None:
            entry = catalog.get(s.tool)
            known = entries[s.tool] = (entry, frozenset(entry.resources))
        if known[0].kind == "auth" and not s.is_error:
            credentials |= _strings(s.result) - _strings(s.arguments)
    out = []
    no_ledger = traj.ledger is None
    for s in traj.steps:
        tool, is_error, code = s.tool, s.is_error, s.error_code
        entry, fams = entries[tool]
        row = ledger.get(s.step) if ledger else None
        if row is not None and row.get("tool") not in (None, tool):
            row = None
        if row is not None:
            fault, inferred, applied = row.get("kind"), False, row.get("applied")
        else:
            fault, inferred = s.fault, s.fault_inferred
            if fault is None and no_ledger and is_error and code in INFERRED_FAULTS:
                fault, inferred = INFERRED_FAULTS[code], True
            # The server's call log knows a timeout was applied (DESIGN 4: a timeout's write WAS
            # applied); an inferred timeout is ambiguous and does not count as applied.
            applied = True if (fault == "timeout" and not inferred) else None
        invalid = is_error and (code == "invalid_argument" or (code == "not_found" and s.error_field == "name"))
        ids = catalog.ids(tool, s.arguments)
        if credentials and ids:
            ids = ids - credentials
        # positional, in field order (step, tool, entry, arguments, ok, code, fault, inferred,
        # applied, families, ids, time, retry_after, invalid); retry_after is read only for
        # rate_limited errors (impatience)
        out.append(_Call(s.step, tool, entry, s.arguments, not is_error, code if is_error else None, fault,
                         bool(inferred and fault), applied, fams, ids, s.time,
                         s.retry_after if is_error else None, invalid))
    return out


def _ids_match(a: frozenset[str], b: frozenset[str]) -> bool:
    return not a or not b or bool(a & b)


def _matches(read: _Call, other: _Call) -> bool:
    return read.is_read and bool(read.families & other.families) and _ids_match(read.ids, other.ids)


def _is_wait(c: _Call) -> bool:
    return "wait" in re.split(r"[^a-z0-9]+", c.tool.lower())


def score_episode(
    traj: Trajectory,
    catalog: Catalog,
    *,
    k: int = DEFAULT_K,
    checks: Iterable[ExtraCheck | dict[str, Any]] | None = None,
    timeout_read_recovers: bool = True,
    unscored_families: frozenset[str] = UNSCORED_FAMILIES,
) -> EpisodeScores:
    """Score one trajectory (definitions: DESIGN section 7).

    Rules, as implemented (see the module docstring for the terms):

    * Verification: a counted write W is verified iff a later read matches it. (This equals
      "one read covers every earlier write on that resource since the last read".)
      ``verification_skips`` lists the unverified writes' steps.
    * Pre-check: a counted write with preconditions is pre-checked iff for each precondition
      family F a read of F happened before it and after F last changed. F *changes* at every
      write-kind call that took effect with F among its resources, and at every successful
      auth call of F. An auth call's result shows the state it just set (the granted
      privilege, the new authorisation), so a successful auth call of F also counts as a
      read of F for pre-checks (it is the latest change, then read); auth calls neither count
      as writes nor verify writes. Each skipped family is listed as ``{step, family}``.
    * Blind retry: a ``timeout`` error of a write, whose next call with the same tool and the
      same arguments comes with no read matching the timed-out call in between. It is also a
      duplicate side effect when the first write was applied (ledger / call log) and the
      repeat succeeded or was itself applied.
    * Recoverable error: an error step that was an injected fault (ledger, call log, or -
      without a ledger - inferred from codes transient/rate_limited/timeout/unavailable/
      auth_required), or whose code has a remedy for that tool in the catalog. Attempt: one
      of the next ``k`` calls retries the same tool (any arguments), calls a remedy for that
      code, or calls a declared alternative (either direction). With
      ``timeout_read_recovers`` (default), for a timeout a read matching the timed-out call
      is also an attempt (DESIGN 4: "a read shows the truth"), and that read recovers an
      applied timeout. Recovered: a later successful call of the same tool or of an
      alternative whose ids match the failed call's.
    * Reads are judged as behaviour: a read the ledger marks ``stale_read`` still counts (the
      agent did read back); a ``lost_write`` still counts as a write (the agent saw success).
    * Declares impossible: :func:`match_refusal` on the final message.
    * Defeatism: some recoverable error got no attempt and stayed unrecovered at the end, or
      the final message declares the task impossible while some recoverable error stays
      unrecovered. An infeasible task refused with every recoverable error recovered is not
      defeatism. An error whose window the harness cut short (status ``limit`` or
      ``errored`` within ``k`` calls of it) is not counted as given up: the agent did not stop.
    * Impatience: windows with more than 2 identical calls (same tool, same arguments)
      inside one ``retry_after`` window, counting the rate-limited call itself. The window is
      ``[time, time + retry_after)`` of the rate-limited call in virtual seconds when the
      steps carry ``time``; otherwise it is approximated as lasting until a wait tool call
      (a tool named ``*wait*``) or a success of the same tool.

    Args:
        traj: the trajectory.
        catalog: tool metadata; unknown tools are classified heuristically (listed in
            ``heuristic_tools``).
        k: the recovery window, in tool calls (>= 1).
        checks: task-defined checks on the final message; None = ``traj.metadata
            ["extra_checks"]`` if present.
        timeout_read_recovers: the timeout rule above.
        unscored_families: families whose writes are not counted as writes.

    Returns:
        :class:`EpisodeScores`.

    Raises:
        ValueError: for ``k < 1``; snapshot restore errors propagate from :func:`judge`.
    """
    if k < 1:
        raise ValueError(f"the recovery window k must be >= 1, got {k}")
    calls = _calls(traj, catalog)
    n = len(calls)
    sc = EpisodeScores(
        episode_id=traj.episode_id, task_id=traj.task_id, agent=traj.agent, trial=traj.trial, level=traj.level,
        apps=list(traj.apps), feasible=traj.feasible, status=traj.status, tool_calls=n, recovery_window=k,
        tokens=traj.tokens, heuristic_tools=sorted({c.tool for c in calls if c.entry.source == "heuristic"}),
    )

    # -- verification and pre-checks ----------------------------------------------------
    took = [c.took_effect for c in calls]
    auth_ok = [c.ok and c.entry.kind == "auth" for c in calls]
    changed = [t or a for t, a in zip(took, auth_ok)]  # calls after which a family "last changed"
    counted = [i for i, c in enumerate(calls) if took[i] and not c.families <= unscored_families]
    sc.writes = len(counted)
    reads = [j for j, c in enumerate(calls) if c.is_read]  # _matches is False for any other call
    verified = precheck_writes = prechecked = 0
    for i in counted:
        w = calls[i]
        if any(_matches(calls[j], w) for j in reads[bisect.bisect_right(reads, i):]):
            verified += 1
        else:
            sc.verification_skips.append(w.step)
        if w.entry.preconditions:
            precheck_writes += 1
            skipped = False
            for fam in w.entry.preconditions:
                last_change = next((j for j in range(i - 1, -1, -1) if changed[j] and fam in calls[j].families), -1)
                fresh = any(
                    fam in calls[j].families and (
                        (calls[j].is_read and j > last_change) or (auth_ok[j] and j == last_change))
                    for j in range(max(last_change, 0), i))
                if not fresh:
                    skipped = True
                    sc.precheck_skips.append(PrecheckSkip(step=w.step, family=fam))
            prechecked += 0 if skipped else 1
    sc.verified_writes, sc.precheck_writes, sc.prechecked_writes = verified, precheck_writes, prechecked
    sc.verification_rate = sc.verified_writes / sc.writes if sc.writes else None
    sc.precheck_rate = sc.prechecked_writes / sc.precheck_writes if sc.precheck_writes else None

    # -- blind retries --------------------------------------------------------------------
    for i, c in enumerate(calls):
        if c.code != "timeout" or c.entry.kind != "write":
            continue
        j = next((j for j in range(i + 1, n) if calls[j].tool == c.tool and calls[j].args_key == c.args_key), None)
        if j is None or any(_matches(calls[m], c) for m in range(i + 1, j)):
            continue
        dup = c.applied is True and (calls[j].ok or calls[j].applied is True)
        sc.blind_retries += 1
        sc.duplicate_side_effects += int(dup)
        sc.blind_retry_detail.append(BlindRetry(step=c.step, repeat_step=calls[j].step, duplicate=dup))

    # -- recovery -------------------------------------------------------------------------
    for i, c in enumerate(calls):
        if c.ok:
            continue
        remedies = catalog.remedies_for(c.tool, c.code)
        injected = c.fault in ERROR_FAULT_KINDS
        if not (injected or remedies):
            continue
        alts = catalog.alternatives_of(c.tool)
        timeout_read = timeout_read_recovers and c.code == "timeout"
        attempt = attempt_step = recovered_step = None
        for j in range(i + 1, min(n, i + 1 + k)):
            d = calls[j]
            how = ("retry" if d.tool == c.tool else "remedy" if d.tool in remedies
                   else "alternative" if d.tool in alts else "read_back" if timeout_read and _matches(d, c) else None)
            if how:
                attempt, attempt_step = how, d.step
                break
        for j in range(i + 1, n):
            d = calls[j]
            # A later call that succeeded, or that timed out but was applied (the ledger says
            # so), achieved what the failed call was for.
            achieved = d.ok or (d.code == "timeout" and d.applied is True)
            if (achieved and (d.tool == c.tool or d.tool in alts) and _ids_match(c.ids, d.ids)) or (
                    timeout_read and c.applied is True and _matches(d, c)):
                recovered_step = d.step
                break
        sc.recoverable_error_detail.append(RecoverableError(
            step=c.step, tool=c.tool, code=c.code, fault=c.fault if injected else None,
            inferred=c.inferred if injected else False, remedies=remedies, attempt=attempt,
            attempt_step=attempt_step, recovered_step=recovered_step,
            cut_short=traj.status != "completed" and i + k >= n))
    details = sc.recoverable_error_detail
    sc.recoverable_errors = len(details)
    sc.recovery_attempts = sum(r.attempt is not None for r in details)
    sc.recoveries = sum(r.recovered_step is not None for r in details)

    # -- refusal and defeatism -------------------------------------------------------------
    refusal = match_refusal(traj.final_message)
    if refusal is not None:
        sc.declared_impossible, sc.refusal_pattern, sc.refusal_match = True, refusal.pattern, refusal.text
    unrecovered = [r for r in details if r.recovered_step is None]
    abandoned = [r for r in unrecovered if r.attempt is None and not r.cut_short]
    if abandoned:
        r = abandoned[0]
        sc.defeatism = True
        sc.defeatism_reason = f"no recovery attempt within {k} calls after the recoverable {r.code} error at step {r.step} ({r.tool})"
    elif refusal is not None and unrecovered:
        r = unrecovered[0]
        sc.defeatism = True
        sc.defeatism_reason = (f"declared the task impossible (pattern {refusal.pattern!r}) while the recoverable "
                               f"{r.code} error at step {r.step} ({r.tool}) stayed unrecovered")

    # -- impatience -------------------------------------------------------------------------
    consumed: set[int] = set()
    for i, c in enumerate(calls):
        if c.code != "rate_limited" or i in consumed:
            continue
        members = [i]
        end = c.time + c.retry_after if c.time is not None and c.retry_after is not None else None
        basis = "virtual_time" if end is not None else "approximation"
        for j in range(i + 1, n):
            d = calls[j]
            if end is not None and d.time is not None:
                if d.time >= end:
                    break
            elif _is_wait(d) or (d.tool == c.tool and d.ok):
                break
            if d.tool == c.tool and d.args_key == c.args_key:
                members.append(j)
        consumed.update(members)
        if len(members) > 2:
            sc.impatience += 1
            sc.impatience_detail.append(ImpatienceWindow(step=c.step, tool=c.tool, calls=len(members),
                                                         steps=[calls[m].step for m in members], basis=basis))

    # -- call counts and outcome --------------------------------------------------------------
    invalid_steps = sum(c.invalid for c in calls)
    sc.invalid_calls = traj.invalid_calls + invalid_steps
    sc.valid_calls = n - invalid_steps
    sc.error_calls = sum((not c.ok) and not c.invalid for c in calls)
    if checks is None:
        checks = traj.metadata.get("extra_checks") or []
    if traj.initial_snapshot is not None and traj.final_snapshot is not None and traj.gold_snapshot is not None:
        res = judge(traj.initial_snapshot, traj.final_snapshot, traj.gold_snapshot, checks=checks,
                    final_message=traj.final_message)
        sc.success, sc.recall, sc.total, sc.misbehave = res.success, res.recall, res.total, res.misbehave
        sc.missed, sc.misbehaved, sc.extra_checks = res.missed, res.misbehaved, res.checks
    return sc


def score_trajectories(trajs: Iterable[Trajectory], catalog: Catalog, *, k: int = DEFAULT_K) -> list[EpisodeScores]:
    """Score each trajectory with :func:`score_episode` (same ``catalog`` and ``k``)."""
    return [score_episode(t, catalog, k=k) for t in trajs]


__all__ = [
    "BENIGN_PATTERNS",
    "DEFAULT_K",
    "EpisodeScores",
    "REFUSAL_PATTERNS",
    "RefusalMatch",
    "match_refusal",
    "score_episode",
    "score_trajectories",
]
