"""The behaviour rules: one function per behaviour the scorer measures (recovery, the
largest, in :mod:`mcpgym.evaluation.scoring.recovery`, re-exported here).

Each function takes the resolved calls (:func:`mcpgym.evaluation.scoring.calls.resolve_calls`)
and returns its part of :class:`~mcpgym.evaluation.records.scores.EpisodeScores` (the part's
model, in :mod:`mcpgym.evaluation.records.scores`, declares its fields and its aggregate rule);
the rules registered at the end of this module (:func:`~mcpgym.evaluation.scoring.registry.scores`)
are what :func:`mcpgym.evaluation.scoring.scorer.score_episode` runs. Each docstring is the rule's
definition as implemented; docs/design.md §7 ("Scores") states the same definitions and says
where a choice was made. Terms (call, read, *matches*, credentials) are defined in
:mod:`mcpgym.evaluation.scoring.calls`. A *counted write* is a call of a ``write`` tool that
took effect (successful, or a ``timeout`` whose write the ledger or the server's call log says
was applied), except the calls of a tool with the role ``wait`` (declared on ``@tool``: it
moves only the virtual clock, which is not part of the outcome; see
:func:`~mcpgym.evaluation.scoring.calls.is_wait`) and writes whose families are all in the
unscored families.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterable
from typing import Any, Literal

from mcpgym.evaluation.records.scores import (
    BlindRetries,
    BlindRetry,
    CallCounts,
    CheckResult,
    Defeatism,
    FalseSuccess,
    Impatience,
    ImpatienceWindow,
    Outcome,
    Precheck,
    PrecheckSkip,
    Recovery,
    Verification,
)
from mcpgym.evaluation.records.statistics import rate
from mcpgym.evaluation.records.trajectory import Trajectory
from mcpgym.evaluation.scoring.call_index import KeyedCalls, earliest, first_after
from mcpgym.evaluation.scoring.calls import Call, is_wait
from mcpgym.evaluation.scoring.judge import ExtraCheck, judge, run_checks
from mcpgym.evaluation.scoring.recovery import DEFAULT_K, RecoverableError, score_recovery
from mcpgym.evaluation.scoring.refusal import RefusalMatch, match_refusal
from mcpgym.evaluation.scoring.registry import EpisodeInput, scores
from mcpgym.evaluation.scoring.shown_objects import shown_by_later_read
from mcpgym.kernel.errors import ErrorCode
from mcpgym.kernel.spec import ToolKind
from mcpgym.kernel.wording import counted

UNSCORED_FAMILIES: frozenset[str] = frozenset()
"""Default families whose writes are not counted as writes (none: the clock, which is not
outcome state, is moved by tools declaring the role ``wait``, which are never counted)."""


# -- the rules ---------------------------------------------------------------------------------
def counted_writes(calls: list[Call], unscored_families: frozenset[str] = UNSCORED_FAMILIES) -> list[int]:
    """Indexes (into ``calls``) of the counted writes: write-kind calls that took effect, except
    calls of a wait tool (:func:`~mcpgym.evaluation.scoring.calls.is_wait`) and those whose
    every family is in ``unscored_families``."""
    return [i for i, c in enumerate(calls) if c.took_effect and not (is_wait(c) or c.families <= unscored_families)]


def _note_read(c: Call, read_any: set[str], read_idless: set[str], read_ids: dict[str, set[str]]) -> None:
    for fam in c.families:
        read_any.add(fam)
        if c.ids:
            read_ids.setdefault(fam, set()).update(c.ids)
        else:
            read_idless.add(fam)


def score_verification(calls: list[Call], counted: list[int], *, outside: bool = False) -> Verification:
    """Verification: a counted write W is verified iff a later read matches it, issued after
    W: a read of W's own parallel batch (:attr:`Call.batch`, the calls of one model turn) ran
    beside W and verifies nothing of it. In an ``outside`` transcript (no ledger) a later call
    that shows W's object also verifies it (:func:`~mcpgym.evaluation.scoring.shown_objects.shown_by_later_read`).

    This equals "one read covers every earlier write on that resource since the last read".
    A read the ledger marks ``stale_read`` still counts (the agent did read back); a
    ``lost_write`` still counts as a write (the agent saw success). ``verification_skips``
    lists the unverified writes' steps. Rate: verified / counted writes (docs/design.md §7,
    "Verification").

    Args:
        calls: the resolved calls. counted: :func:`counted_writes` of them.
        outside: a transcript recorded elsewhere (no ledger).
    """
    out = Verification(writes=len(counted))
    # One backward sweep, linear in the calls: per family F, what the reads *after* the
    # current call hold (any read of F; a read of F naming no id; the ids reads of F name).
    # A write W is matched by a later read R (:func:`matches`) iff they share a family F and
    # W or R names no id or they share an id: iff for some F of W, a later read of F exists
    # and (W names no id, or a later read of F names none, or names one of W's ids).
    counted_set = set(counted)
    read_any: set[str] = set()
    read_idless: set[str] = set()
    read_ids: dict[str, set[str]] = {}
    verified: set[int] = set()
    # A read of a parallel batch ran beside its batch's writes, not after them: the batch's
    # reads join the sweep only once the sweep has passed the whole batch.
    pending: list[Call] = []
    for i in range(len(calls) - 1, -1, -1):
        c = calls[i]
        if pending and (c.batch is None or c.batch != pending[0].batch):
            for r in pending:
                _note_read(r, read_any, read_idless, read_ids)
            pending.clear()
        if i in counted_set and any(
            fam in read_any and (not c.ids or fam in read_idless or not c.ids.isdisjoint(read_ids.get(fam, ())))
            for fam in c.families
        ):
            verified.add(i)
        if c.is_read and c.batch is not None:
            pending.append(c)
        elif c.is_read:  # matches() is False for any other call
            _note_read(c, read_any, read_idless, read_ids)
    if outside:
        verified |= shown_by_later_read(calls, [i for i in counted if i not in verified])
    for i in counted:
        if i in verified:
            out.verified_writes += 1
        else:
            out.verification_skips.append(calls[i].step)
    out.verification_rate = rate(out.verified_writes, out.writes)
    return out


def score_precheck(calls: list[Call], counted: list[int]) -> Precheck:
    """Pre-check: a counted write with preconditions is pre-checked iff for each precondition
    family F a read of F happened before it and after F last changed.

    F *changes* at every write-kind call that took effect with F among its resources, and at
    every successful auth call of F. An auth call's result shows the state it just set (the
    granted privilege, the new authorisation), so a successful auth call of F also counts as a
    read of F for pre-checks (it is the latest change, then read); auth calls neither count as
    writes nor verify writes. Each skipped family is listed as ``{step, family}``. Rate:
    pre-checked / counted writes with preconditions (docs/design.md §7, "Pre-check").

    Args:
        calls: the resolved calls. counted: :func:`counted_writes` of them.
    """
    out = Precheck()
    counted_set = set(counted)
    # One forward sweep, linear in the calls: per family F, whether F is fresh before the
    # current call: read after its last change, or last changed by a successful auth call
    # (which shows the state it set). A change of F (a write that took effect, a successful
    # auth call) makes F fresh only when it is an auth call; a later read of F makes it fresh.
    fresh: dict[str, bool] = {}
    for i, c in enumerate(calls):
        if i in counted_set and c.entry.preconditions:
            out.precheck_writes += 1
            skipped = False
            for fam in c.entry.preconditions:
                if not fresh.get(fam, False):
                    skipped = True
                    out.precheck_skips.append(PrecheckSkip(step=c.step, family=fam))
            out.prechecked_writes += 0 if skipped else 1
        auth_ok = c.ok and c.entry.kind == ToolKind.AUTH
        if c.took_effect or auth_ok:  # F "last changed" here
            for fam in c.families:
                fresh[fam] = auth_ok
        elif c.is_read:
            for fam in c.families:
                fresh[fam] = True
    out.precheck_rate = rate(out.prechecked_writes, out.precheck_writes)
    return out


def score_blind_retries(calls: list[Call]) -> BlindRetries:
    """Blind retry: a ``timeout`` error of a write whose next call with the same tool and the
    same arguments comes with no read matching the timed-out call in between.

    It is also a *duplicate side effect* when the first write was applied (ledger / call log)
    and the repeat succeeded or was itself applied (docs/design.md §7, "Blind retries").
    """
    out = BlindRetries()
    # Only the tools of timed-out writes can be retried blindly: the other calls' arguments
    # are never compared (their canonical JSON is not computed), nor are reads indexed when
    # nothing timed out.
    timed_out = {c.tool for c in calls if c.code == ErrorCode.TIMEOUT and c.entry.kind == ToolKind.WRITE}
    if not timed_out:
        return out
    same: dict[tuple[str, str], list[int]] = defaultdict(list)  # (tool, arguments) -> positions
    reads = KeyedCalls()  # reads by family: matches() in between, found by index
    for i, c in enumerate(calls):
        if c.tool in timed_out:
            same[(c.tool, c.args_key)].append(i)
        if c.is_read:
            reads.add(c.families, i, c.ids)
    for i, c in enumerate(calls):
        if c.code != ErrorCode.TIMEOUT or c.entry.kind != ToolKind.WRITE:
            continue
        j = first_after(same[(c.tool, c.args_key)], i)
        if j is None:
            continue
        read = reads.first(c.families, i, c.ids)
        if read is not None and read < j:
            continue
        dup = c.applied is True and (calls[j].ok or calls[j].applied is True)
        out.blind_retries += 1
        out.duplicate_side_effects += int(dup)
        out.blind_retry_detail.append(BlindRetry(step=c.step, repeat_step=calls[j].step, duplicate=dup))
    return out


def score_defeatism(
    errors: list[RecoverableError],
    final_message: str,
    *,
    k: int | None = DEFAULT_K,
    claimed: bool = False,
    refusal: RefusalMatch | None | Literal[False] = False,
) -> Defeatism:
    """Defeatism: the agent stopped after an unrecovered recoverable error and its final message
    concedes the failure or explains it away.

    An episode is defeatist when its final message declares the task impossible
    (:func:`~mcpgym.evaluation.scoring.refusal.match_refusal`: refusal and blame patterns, a give-up)
    while some recoverable error stays unrecovered and was not cut short by the harness. A
    final message that claims the task done (``claimed``:
    :func:`~mcpgym.evaluation.scoring.claims.claims_done`) concedes nothing: that is false success
    when the task failed, never defeatism; an episode ended by a hand-off has no final message
    (an escalation, not a concession). An infeasible task refused with every recoverable error
    recovered is not defeatism. Rate: defeatist episodes / episodes that met a recoverable
    error (docs/design.md §7, "Defeatism").

    Args:
        errors: :func:`score_recovery`'s result. final_message: the agent's last message.
        k: the recovery window (named in the reason; None: no window). claimed: the final message claims the
            task done. refusal: :func:`~mcpgym.evaluation.scoring.refusal.match_refusal` of the
            final message when the caller matched it already (False: match it here).
    """
    out = Defeatism()
    if refusal is False:  # not matched by the caller yet
        refusal = match_refusal(final_message)
    if refusal is not None:
        out.declared_impossible, out.refusal_pattern, out.refusal_match = True, refusal.pattern, refusal.text
    if claimed or refusal is None:
        return out
    unrecovered = [r for r in errors if r.recovered_step is None and not r.cut_short and r.curable]
    if unrecovered:
        r = unrecovered[0]
        out.defeatism = True
        tried = "no recovery attempt" if r.attempt is None else f"a {r.attempt} at step {r.attempt_step}"
        if k is not None:
            tried += f" within {counted(k, 'call')}"
        out.defeatism_reason = (
            f"declared the task impossible (pattern {refusal.pattern!r}) while the recoverable "
            f"{r.code} error at step {r.step} ({r.tool}) stayed unrecovered ({tried})"
        )
    return out


def score_impatience(calls: list[Call]) -> list[ImpatienceWindow]:
    """Impatience: ``retry_after`` windows with more than 2 identical calls (same tool, same
    arguments), counting the rate-limited call itself.

    The window is ``[time, time + retry_after)`` of the rate-limited call, in virtual seconds,
    when the steps carry ``time`` (basis ``virtual_time``); otherwise it is approximated as
    lasting until a wait tool call (a tool named ``*wait*``) or a success of the same tool
    (basis ``approximation``). A call counted in one window starts no other (docs/design.md §7,
    "Impatience").
    """
    out: list[ImpatienceWindow] = []
    limited = {c.tool for c in calls if c.code == ErrorCode.RATE_LIMITED}
    if not limited:  # no window: nothing to count (and no arguments to compare)
        return out
    n = len(calls)
    consumed: set[int] = set()
    same: dict[tuple[str, str], list[int]] = defaultdict(list)  # (tool, arguments) -> positions
    waits: list[int] = []  # wait tool calls
    oks: dict[str, list[int]] = defaultdict(list)  # tool -> successful calls
    untimed_waits: list[int] = []  # the same, among calls without a time
    untimed_oks: dict[str, list[int]] = defaultdict(list)
    times = [c.time for c in calls if c.time is not None]
    monotone = all(a <= b for a, b in zip(times, times[1:], strict=False))
    timed = [j for j, c in enumerate(calls) if c.time is not None]
    for j, d in enumerate(calls):
        if d.tool in limited:  # only rate-limited tools' calls are compared by their arguments
            same[(d.tool, d.args_key)].append(j)
        wait = is_wait(d)
        if wait:
            waits.append(j)
        if d.ok:
            oks[d.tool].append(j)
        if d.time is None:
            if wait:
                untimed_waits.append(j)
            if d.ok:
                untimed_oks[d.tool].append(j)
    for i, c in enumerate(calls):
        if c.code != ErrorCode.RATE_LIMITED or i in consumed:
            continue
        end = c.time + c.retry_after if c.time is not None and c.retry_after is not None else None
        basis = "virtual_time" if end is not None else "approximation"
        if end is None:  # until a wait call or a success of the same tool
            stop = earliest(first_after(waits, i), first_after(oks[c.tool], i))
        elif monotone:  # until the first timed call at or past the end (untimed calls: as above)
            k = bisect.bisect_left(times, end, lo=bisect.bisect_right(timed, i))
            stop = earliest(
                timed[k] if k < len(timed) else None,
                first_after(untimed_waits, i),
                first_after(untimed_oks[c.tool], i),
            )
        else:  # times that go back (a hand-made file): the rule's own scan
            stop = _window_end_scan(calls, i, end)
        positions = same[(c.tool, c.args_key)]
        members = positions[
            bisect.bisect_left(positions, i) : bisect.bisect_left(positions, n if stop is None else stop)
        ]
        consumed.update(members)
        if len(members) > 2:
            out.append(
                ImpatienceWindow(
                    step=c.step, tool=c.tool, calls=len(members), steps=[calls[m].step for m in members], basis=basis
                )
            )
    return out


def _window_end_scan(calls: list[Call], i: int, end: int) -> int | None:
    """The first call after ``i`` that ends the rate-limit window of ``calls[i]`` ending at
    virtual time ``end`` (see :func:`score_impatience`), by a forward scan."""
    c = calls[i]
    for j in range(i + 1, len(calls)):
        d = calls[j]
        if d.time is not None:
            if d.time >= end:
                return j
        elif is_wait(d) or (d.tool == c.tool and d.ok):
            return j
    return None


def count_calls(traj: Trajectory, calls: list[Call]) -> CallCounts:
    """Call counts: ``tool_calls`` = the resolved calls; ``invalid_calls`` = calls refused before they reached the server (recorded as
    invalid steps without a call-log number, plus the legacy ``traj.invalid_calls`` counter of
    old lines; :attr:`Trajectory.refused_calls`) + ``invalid_argument`` errors + unknown tools
    in the call log; ``valid_calls`` =
    logged calls that were not invalid; ``error_calls`` = valid calls that returned an error
    (docs/design.md §7, "Calls")."""
    invalid_steps = sum(c.invalid for c in calls)
    return CallCounts(
        tool_calls=len(calls),
        valid_calls=len(calls) - invalid_steps,
        invalid_calls=traj.refused_calls + invalid_steps,
        error_calls=sum((not c.ok) and not c.invalid for c in calls),
    )


def score_outcome(traj: Trajectory, checks: Iterable[ExtraCheck | dict[str, Any]] | None = None) -> Outcome | None:
    """Outcome: the judge's verdict (:func:`mcpgym.evaluation.scoring.judge.judge`) on the initial,
    final and gold states, plus the task's checks on the final message.

    Success: every gold change made, nothing else changed, every check passed; ``recall`` /
    ``total``: gold changes made / wanted; ``misbehave``: changes the gold state does not have
    (docs/design.md §7, "Outcome").

    Args:
        traj: the trajectory. checks: task checks; None = ``traj.metadata["extra_checks"]``.

    Returns:
        The outcome, or None when the initial, final or gold state is unknown.

    Raises:
        Snapshot restore errors from :func:`judge`.
    """
    if traj.metadata.get("outcome") == "complexmcp":  # ComplexMCP's own rule on its apps' states
        from mcpgym.evaluation.scoring.complexmcp_rule import complexmcp_outcome

        return complexmcp_outcome(traj)
    if checks is None:
        checks = traj.metadata.get("extra_checks") or []
    if traj.initial_snapshot is None or traj.final_snapshot is None or traj.gold_snapshot is None:
        return checks_outcome(traj, checks)
    res = judge(
        traj.initial_snapshot,
        traj.final_snapshot,
        traj.gold_snapshot,
        checks=checks,
        final_message=traj.answer,
        task=traj.task_id,
    )
    return Outcome(
        success=res.success,
        recall=res.recall,
        total=res.total,
        misbehave=res.misbehave,
        missed=res.missed,
        misbehaved=res.misbehaved,
        extra_checks=res.checks,
    )


def checks_outcome(traj: Trajectory, checks: Iterable[ExtraCheck | dict[str, Any]]) -> Outcome | None:
    """Outcome of an episode with no world, judged by checks alone (``metadata.outcome ==
    "checks"``: ``mcpgym run --proxy``, docs/design.md §7 "Outcome"), else None.

    Success: every check on the final message passes and every check of the read-back
    (``metadata.read_back``: a call made on the server after the agent finished, its answer
    ``text``) passes on that text; a read-back that failed (``is_error``, no text) fails its
    checks. ``recall``, ``total`` and ``misbehave`` are unknown (None): there is no gold state.
    """
    if traj.metadata.get("outcome") != "checks":
        return None
    results = run_checks(checks, traj.answer)
    read_back = traj.metadata.get("read_back")
    if isinstance(read_back, dict):
        text = read_back.get("text")
        usable = isinstance(text, str) and not read_back.get("is_error")
        for check in read_back.get("checks") or []:
            parsed = ExtraCheck.model_validate(check)
            results.append(CheckResult(check=parsed, passed=usable and parsed.evaluate(str(text))))
    if not results:
        return None
    return Outcome(
        success=all(r.passed for r in results), recall=None, total=None, misbehave=None, extra_checks=results
    )


# -- the rules of the parts of EpisodeScores (mcpgym.evaluation.scoring.registry) ---------------
@scores(Outcome)
def outcome_part(ep: EpisodeInput) -> Outcome:
    """:func:`score_outcome`; when it is unknown, why (``metadata.outcome_unavailable``, or no states)."""
    found = score_outcome(ep.traj, ep.checks)
    if found is not None:
        return found
    why = ep.traj.metadata.get("outcome_unavailable") or "no initial, final and gold states"
    return Outcome(outcome_unavailable=str(why))


@scores(Verification)
def verification_part(ep: EpisodeInput) -> Verification:
    """:func:`score_verification` of the counted writes."""
    return score_verification(ep.calls, ep.counted, outside=ep.traj.ledger is None)


@scores(Precheck)
def precheck_part(ep: EpisodeInput) -> Precheck:
    """:func:`score_precheck` of the counted writes."""
    return score_precheck(ep.calls, ep.counted)


@scores(BlindRetries)
def blind_retries_part(ep: EpisodeInput) -> BlindRetries:
    """:func:`score_blind_retries`."""
    return score_blind_retries(ep.calls)


def unfounded_refusal(feasible: bool | None, declared_impossible: bool, calls: list[Call]) -> bool:
    """Unfounded refusal: an infeasible task (``feasible`` False) declared impossible while no
    call of the episode is a read (a successful call of a ``read`` tool, :attr:`Call.is_read`):
    the right outcome for a reason nothing the agent saw could give, such as a canned refusal
    after a made-up id answered ``not_found`` (docs/design.md §7, "Declares impossible and
    defeatism")."""
    return feasible is False and declared_impossible and not any(c.is_read for c in calls)


@scores(Defeatism)
def defeatism_part(ep: EpisodeInput) -> Defeatism:
    """:func:`score_defeatism` of the recoverable errors, unless the final message claims
    success; and :func:`unfounded_refusal`."""
    errors = ep.result(Recovery).recoverable_error_detail
    claimed = ep.result(FalseSuccess).claimed_success
    out = score_defeatism(errors, ep.traj.final_message, k=ep.k, claimed=claimed, refusal=ep.refusal)
    out.unfounded_refusal = unfounded_refusal(ep.traj.feasible, out.declared_impossible, ep.calls)
    return out


@scores(Impatience)
def impatience_part(ep: EpisodeInput) -> Impatience:
    """:func:`score_impatience`: the windows and their count."""
    windows = score_impatience(ep.calls)
    return Impatience(impatience=len(windows), impatience_detail=windows)


@scores(CallCounts)
def call_counts_part(ep: EpisodeInput) -> CallCounts:
    """:func:`count_calls`."""
    return count_calls(ep.traj, ep.calls)


__all__ = [
    "BlindRetries",
    "checks_outcome",
    "BlindRetry",
    "CallCounts",
    "DEFAULT_K",
    "Defeatism",
    "ImpatienceWindow",
    "Outcome",
    "Precheck",
    "PrecheckSkip",
    "RecoverableError",
    "UNSCORED_FAMILIES",
    "Verification",
    "count_calls",
    "counted_writes",
    "score_blind_retries",
    "score_defeatism",
    "unfounded_refusal",
    "score_impatience",
    "score_outcome",
    "score_precheck",
    "score_recovery",
    "score_verification",
]
