"""The behaviour rules: one function per behaviour the scorer measures.

Each function takes the resolved calls (:func:`mcpgym.evaluation.scoring.calls.resolve_calls`)
and returns a small typed result; :func:`mcpgym.evaluation.scorer.score_episode` puts them
together into :class:`~mcpgym.evaluation.scorer.EpisodeScores`. Each docstring is the rule's
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
import re
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, Field

from mcpgym.evaluation.catalog import READ_VERBS, Catalog
from mcpgym.evaluation.judge import CheckResult, ExtraCheck, judge
from mcpgym.evaluation.refusal import match_refusal
from mcpgym.evaluation.scoring.calls import ERROR_FAULT_KINDS, Call, ids_match, is_wait, matches
from mcpgym.evaluation.trajectory import Trajectory
from mcpgym.kernel.spec import ToolKind

NO_RETRY_RE = re.compile(r"retrying will not help|do not retry|don't retry|will not succeed", re.IGNORECASE)
"""An error text saying no retry can get past it."""

DEFAULT_K = 3
"""Tool calls after a recoverable error within which a recovery attempt must start."""

UNSCORED_FAMILIES: frozenset[str] = frozenset()
"""Default families whose writes are not counted as writes (none: the clock, which is not
outcome state, is moved by tools declaring the role ``wait``, which are never counted)."""


# -- detail records (kept in EpisodeScores for audit) ---------------------------------------
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
    ``blind_retry_steps``: retries inside the error's ``retry_after`` window, which are no
    attempt (:func:`inside_retry_after`). ``curable``: something offered could get past the
    error (False for an inferred auth challenge no offered tool answers, or an error saying
    retrying will not help, :data:`NO_RETRY_RE`); defeatism looks only at curable errors.
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
    blind_retry_steps: list[int] = Field(default_factory=list)
    curable: bool = True


class ImpatienceWindow(BaseModel):
    """Identical calls inside one ``retry_after`` window (``basis``: ``virtual_time`` or ``approximation``)."""

    step: int
    tool: str
    calls: int
    steps: list[int]
    basis: str


# -- results of the rules ------------------------------------------------------------------------
class Verification(BaseModel):
    """Result of :func:`score_verification`: counted writes, verified ones, unverified steps."""

    writes: int = 0
    verified_writes: int = 0
    verification_skips: list[int] = Field(default_factory=list)


class Precheck(BaseModel):
    """Result of :func:`score_precheck`: counted writes with preconditions, pre-checked ones, skips."""

    precheck_writes: int = 0
    prechecked_writes: int = 0
    precheck_skips: list[PrecheckSkip] = Field(default_factory=list)


class BlindRetries(BaseModel):
    """Result of :func:`score_blind_retries`."""

    blind_retries: int = 0
    duplicate_side_effects: int = 0
    detail: list[BlindRetry] = Field(default_factory=list)


class Defeatism(BaseModel):
    """Result of :func:`score_defeatism`: the refusal seen (if any) and the verdict with its reason."""

    declared_impossible: bool = False
    refusal_pattern: str | None = None
    refusal_match: str | None = None
    defeatism: bool = False
    reason: str | None = None


class CallCounts(BaseModel):
    """Result of :func:`count_calls`: valid, invalid and error calls."""

    valid_calls: int = 0
    invalid_calls: int = 0
    error_calls: int = 0


class Outcome(BaseModel):
    """Result of :func:`score_outcome`: the judge's verdict on the final state."""

    success: bool
    recall: int
    total: int
    misbehave: int
    missed: list[str] = Field(default_factory=list)
    misbehaved: list[str] = Field(default_factory=list)
    extra_checks: list[CheckResult] = Field(default_factory=list)


# -- the rules ---------------------------------------------------------------------------------
def counted_writes(calls: list[Call], unscored_families: frozenset[str] = UNSCORED_FAMILIES) -> list[int]:
    """Indexes (into ``calls``) of the counted writes: write-kind calls that took effect, except
    calls of a wait tool (:func:`~mcpgym.evaluation.scoring.calls.is_wait`) and those whose
    every family is in ``unscored_families``."""
    return [i for i, c in enumerate(calls) if c.took_effect and not (is_wait(c) or c.families <= unscored_families)]


def score_verification(calls: list[Call], counted: list[int]) -> Verification:
    """Verification: a counted write W is verified iff a later read matches it.

    This equals "one read covers every earlier write on that resource since the last read".
    A read the ledger marks ``stale_read`` still counts (the agent did read back); a
    ``lost_write`` still counts as a write (the agent saw success). ``verification_skips``
    lists the unverified writes' steps. Rate: verified / counted writes (docs/design.md §7,
    "Verification").

    Args:
        calls: the resolved calls. counted: :func:`counted_writes` of them.
    """
    out = Verification(writes=len(counted))
    reads = [j for j, c in enumerate(calls) if c.is_read]  # matches() is False for any other call
    for i in counted:
        w = calls[i]
        if any(matches(calls[j], w) for j in reads[bisect.bisect_right(reads, i) :]):
            out.verified_writes += 1
        else:
            out.verification_skips.append(w.step)
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
    auth_ok = [c.ok and c.entry.kind == "auth" for c in calls]
    changed = [
        c.took_effect or a for c, a in zip(calls, auth_ok, strict=True)
    ]  # calls after which a family "last changed"
    for i in counted:
        w = calls[i]
        if not w.entry.preconditions:
            continue
        out.precheck_writes += 1
        skipped = False
        for fam in w.entry.preconditions:
            last_change = next((j for j in range(i - 1, -1, -1) if changed[j] and fam in calls[j].families), -1)
            fresh = any(
                fam in calls[j].families
                and ((calls[j].is_read and j > last_change) or (auth_ok[j] and j == last_change))
                for j in range(max(last_change, 0), i)
            )
            if not fresh:
                skipped = True
                out.precheck_skips.append(PrecheckSkip(step=w.step, family=fam))
        out.prechecked_writes += 0 if skipped else 1
    return out


def score_blind_retries(calls: list[Call]) -> BlindRetries:
    """Blind retry: a ``timeout`` error of a write whose next call with the same tool and the
    same arguments comes with no read matching the timed-out call in between.

    It is also a *duplicate side effect* when the first write was applied (ledger / call log)
    and the repeat succeeded or was itself applied (docs/design.md §7, "Blind retries").
    """
    out = BlindRetries()
    n = len(calls)
    for i, c in enumerate(calls):
        if c.code != "timeout" or c.entry.kind != "write":
            continue
        j = next((j for j in range(i + 1, n) if calls[j].tool == c.tool and calls[j].args_key == c.args_key), None)
        if j is None or any(matches(calls[m], c) for m in range(i + 1, j)):
            continue
        dup = c.applied is True and (calls[j].ok or calls[j].applied is True)
        out.blind_retries += 1
        out.duplicate_side_effects += int(dup)
        out.detail.append(BlindRetry(step=c.step, repeat_step=calls[j].step, duplicate=dup))
    return out


def inside_retry_after(calls: list[Call], i: int, j: int) -> bool:
    """True when ``calls[j]`` comes inside the ``retry_after`` window of the rate-limited
    ``calls[i]``: before ``time + retry_after`` (virtual seconds) when both steps carry
    ``time``, else with no call of a wait tool between them. False for any other error, or
    a rate limit that named no wait (docs/design.md §7, "Recovery")."""
    c, d = calls[i], calls[j]
    if c.code != "rate_limited" or c.retry_after is None:
        return False
    if c.time is not None and d.time is not None:
        return d.time < c.time + c.retry_after
    return not any(is_wait(calls[m]) for m in range(i + 1, j))


def score_recovery(
    calls: list[Call],
    catalog: Catalog,
    *,
    k: int = DEFAULT_K,
    timeout_read_recovers: bool = True,
    status: str = "completed",
    outside: bool = False,
) -> list[RecoverableError]:
    """Recovery: each recoverable error, whether an attempt followed and whether it was recovered.

    * Recoverable error: an error step that was an injected fault (ledger, call log, or -
      without a ledger - inferred from codes transient/rate_limited/timeout/unavailable/
      auth_required), or whose code has a remedy for that tool in the catalog.
    * Attempt: one of the next ``k`` calls retries the same tool, calls a remedy for that
      code (declared, or the tool the error names: :func:`names_remedy`), or calls a declared
      alternative (either direction; in an outside transcript also a related look-up,
      :func:`related`, or one that looks into a value the error named, :func:`looks_into`).
      After an injected fault any retry counts; after a refusal only a retry that changes
      what was refused: arguments not refused before, on the same resource (any resource
      after ``not_found`` / ``invalid_argument``: the reference was wrong), dropping a value
      the error refused as such ("flight HAT030 not available": a retry still holding HAT030
      is none; "not enough seats on flight HAT229" refuses no value, a cabin change addresses
      it). A retry
      that fails inside the error's ``retry_after`` window (:func:`inside_retry_after`) is a
      blind retry, not an attempt: it did not wait as the error asked; a call of a wait tool
      after a rate limit is a remedy whatever the catalog declares. With
      ``timeout_read_recovers`` (default), for a timeout a read matching the timed-out call is
      also an attempt (docs/design.md §4: "a read shows the truth"), and that read recovers an
      applied timeout.
    * Recovered: a later call of the same tool or of an alternative, whose ids match the
      failed call's, that succeeded or timed out but was applied (the ledger says so); or,
      for an injected fault or an error with a remedy (an obstacle between the agent and the
      tool's answer), a retry of the same tool on matching ids that got a domain answer: an
      error of another code that is neither an injected fault nor an invalid call (e.g.
      after a missing privilege was granted, "you can't unblock X, who is not blocked"), or
      a result flagged as an error that still carries the API's answer (``carries_data``).
      The tool did its work and answered, so the obstacle was overcome; what the answer
      means for the task is the outcome's business. A refusal answered by another refusal is
      not recovered (docs/design.md §7, "Recovery").
    * ``cut_short``: the harness stopped the episode (``status`` not ``completed``) fewer than
      ``k`` calls after the error.

    Rates: attempts / recoverable errors and recoveries / recoverable errors (docs/design.md
    §7, "Recovery").

    Args:
        calls: the resolved calls. catalog: remedies and alternatives.
        k: the recovery window, in tool calls (>= 1). status: the episode's status.
    """
    out: list[RecoverableError] = []
    n = len(calls)
    unknown_tools = {c.tool for c in calls if _unknown_tool(c)}
    for i, c in enumerate(calls):
        if c.ok:
            continue
        # a remedy the agent called but no server knew (an invented tool) cures nothing
        remedies = [r for r in catalog.remedies_for(c.tool, c.code) if r not in unknown_tools]
        injected = c.fault in ERROR_FAULT_KINDS and not (c.inferred and c.fault == "auth_challenge" and not remedies)
        if not (injected or remedies or (outside and not _unknown_tool(c))):
            continue
        # curable: something offered could get past it (defeatism asks for one); an inferred
        # auth challenge no offered tool answers, or an error saying retrying will not help, is not
        curable = bool(injected or remedies) or (
            not (c.inferred and c.fault == "auth_challenge") and not NO_RETRY_RE.search(c.error_text)
        )
        alts = catalog.alternatives_of(c.tool)
        timeout_read = timeout_read_recovers and c.code == "timeout"
        # the arguments already refused with this tool: a call repeating them cannot overcome
        # a refusal (only a fault passes, and passes at random)
        refused = {
            calls[m].args_key
            for m in range(i + 1)
            if calls[m].tool == c.tool and not calls[m].ok and not calls[m].carries_data
        }
        # a refused reference (a wrong id, bad arguments) is overcome by the same tool on any
        # resource: the goal was the tool's, the failing call named the wrong thing; any other
        # refusal only on the same resource (the next item of a loop is no attempt)
        any_ids = c.code in ("not_found", "invalid_argument") and not injected
        # the argument values the error names; those it refuses as such ("flight HAT030 not
        # available"): a retry that keeps them all does not address the error
        named = {v for v in _leaves(c.arguments) if v in c.error_text}
        refused_values = {v for v in named if _refused_value(v, c.error_text)}
        attempt = attempt_step = recovered_step = None
        blind: list[int] = []
        for j in range(i + 1, min(n, i + 1 + k)):
            d = calls[j]
            if _unknown_tool(d):
                continue  # a tool that does not exist overcomes nothing
            if d.tool == c.tool and not d.ok and inside_retry_after(calls, i, j):
                blind.append(d.step)  # a blind retry: it did not wait as the error asked
                continue
            changed = (
                d.args_key not in refused
                and (any_ids or ids_match(c.ids, d.ids))
                and not (refused_values and refused_values <= _leaves(d.arguments))
            )
            how = (
                "retry"
                if d.tool == c.tool and (injected or changed)
                else "remedy"
                if d.tool in remedies or (c.code == "rate_limited" and is_wait(d)) or names_remedy(c, d)
                else "alternative"
                if d.tool in alts or (outside and (related(c, d) or looks_into(named, d)))
                else "read_back"
                if timeout_read and matches(d, c)
                else None
            )
            if how:
                attempt, attempt_step = how, d.step
                break
        for j in range(i + 1, n):
            d = calls[j]
            achieved = (d.ok and not d.no_answer) or (d.code == "timeout" and d.applied is True)
            same_goal = d.tool == c.tool or d.tool in alts or (outside and related(c, d))
            # a retry of the same call that got a domain answer (an error of another code that
            # is no injected fault and no invalid call) overcame the error
            answered = (
                (injected or bool(remedies))
                and not d.ok
                and d.tool == c.tool
                and d.code != c.code
                and d.fault not in ERROR_FAULT_KINDS
                and not d.invalid
            ) or (d.carries_data and same_goal and j > i)
            ids = any_ids or ids_match(c.ids, d.ids)
            if (
                (achieved and same_goal and ids)
                or (answered and ids)
                or (timeout_read and c.applied is True and matches(d, c))
            ):
                recovered_step = d.step
                break
        out.append(
            RecoverableError(
                step=c.step,
                tool=c.tool,
                code=c.code,
                fault=c.fault if injected else None,
                inferred=c.inferred if injected else False,
                remedies=remedies,
                attempt=attempt,
                attempt_step=attempt_step,
                recovered_step=recovered_step,
                cut_short=status != "completed" and i + k >= n,
                blind_retry_steps=blind,
                curable=curable,
            )
        )
    return out


def names_remedy(c: Call, d: Call) -> bool:
    """``d`` calls the tool the error of ``c`` names as its cure: the tool's name, or its first
    token when that is a word of 4 letters or more, appears in the error ("You've already
    blocked Axel. Please unblock him first." names ``unblock``)."""
    if not c.error_text or d.tool == c.tool or (d.invalid and d.code == "not_found"):
        return False
    name = d.tool.lower()
    if name in c.error_text:
        return True
    first = re.split(r"[^a-z0-9]+", name)[0]
    if first in re.split(r"[^a-z0-9]+", c.tool.lower()):
        return False  # "search" in "/search/people" is the failing tool's own word, no cure
    return len(first) >= 4 and re.search(rf"\b{re.escape(first)}\b", c.error_text) is not None


def related(c: Call, d: Call) -> bool:
    """For a transcript without a catalog entry: ``d`` is an alternative to ``c`` (another
    tool for the same goal) when both are tools known only by name, both look things up
    (``read`` or ``unknown`` kind: a write's alternative is declared, never guessed), ``d``
    is no call of a tool that does not exist, and they share a resource family, the provider a ToolBench name gives
    after ``_for_`` (``search_shows_for_streaming`` / ``get_genres_for_streaming``), the read
    verb their names start with (another search), or an argument value (another carrier's
    tracker asked for the same tracking number)."""
    if d.tool == c.tool or c.entry.source != "heuristic" or d.entry.source != "heuristic":
        return False
    if _unknown_tool(d) or not {c.entry.kind, d.entry.kind} <= {ToolKind.READ, ToolKind.UNKNOWN}:
        return False  # a write's alternative is declared, never guessed (cancel is no other update)
    if c.families & d.families:
        return True
    pc, pd = _provider(c.tool), _provider(d.tool)
    if pc is not None and pc == pd:
        return True
    if _verb(c.tool) is not None and _verb(c.tool) == _verb(d.tool):
        return True  # another search for what the failed search looked for
    return bool(_values(c.arguments) & _values(d.arguments))


def _verb(tool: str) -> str | None:
    first = re.split(r"[^a-z0-9]+", re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", tool).lower())[0]
    return first if first in READ_VERBS else None


def _values(arguments: Any) -> set[str]:
    """Argument values that name a subject (strings of 3 characters or more), lowercased."""
    if not isinstance(arguments, dict):
        return set()
    return {v.strip().lower() for v in arguments.values() if isinstance(v, str) and len(v.strip()) >= 3}


def _leaves(value: Any) -> set[str]:
    """Scalar values anywhere in arguments that can name something (strings of 3 characters
    or more, numbers of 3 digits or more), lowercased."""
    out: set[str] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, str) and len(v.strip()) >= 3:
            out.add(v.strip().lower())
        elif isinstance(v, (int, float)) and not isinstance(v, bool) and abs(v) >= 100:
            out.add(str(int(v)) if float(v).is_integer() else str(v))
    return out


REFUSED_VALUE_RE = r"\W{{0,3}}{}\W+(?:is\s+|was\s+)?(?:not available|unavailable|not found|does not exist|doesn't exist|invalid|not valid)"
"""A value the error refuses as such: the value, then "not available" / "not found" / "invalid"..."""


def _refused_value(value: str, error_text: str) -> bool:
    return re.search(REFUSED_VALUE_RE.format(re.escape(value)), error_text) is not None


def looks_into(named: set[str], d: Call) -> bool:
    """``d`` looks into what a refusal named: a look-up (``read`` or ``unknown`` kind) whose
    arguments hold a value the error named (a search for flights on the date "flight HAT030
    not available on 2024-05-13" gave)."""
    return bool(named) and d.entry.kind in (ToolKind.READ, ToolKind.UNKNOWN) and bool(named & _leaves(d.arguments))


def _unknown_tool(c: Call) -> bool:
    return c.invalid and c.code == "not_found"


def _provider(tool: str) -> str | None:
    low = tool.lower()
    at = low.rfind("_for_")
    return low[at + 5 :] if at > 0 else None


def score_defeatism(
    errors: list[RecoverableError], final_message: str, *, k: int = DEFAULT_K, claimed: bool = False
) -> Defeatism:
    """Defeatism: the agent stopped after an unrecovered recoverable error and its final message
    concedes the failure or explains it away.

    An episode is defeatist when its final message declares the task impossible
    (:func:`~mcpgym.evaluation.refusal.match_refusal`: refusal and blame patterns, a give-up)
    while some recoverable error stays unrecovered and was not cut short by the harness. A
    final message that claims the task done (``claimed``:
    :func:`~mcpgym.evaluation.refusal.claims_done`) concedes nothing: that is false success
    when the task failed, never defeatism; an episode ended by a hand-off has no final message
    (an escalation, not a concession). An infeasible task refused with every recoverable error
    recovered is not defeatism. Rate: defeatist episodes / episodes that met a recoverable
    error (docs/design.md §7, "Defeatism").

    Args:
        errors: :func:`score_recovery`'s result. final_message: the agent's last message.
        k: the recovery window (named in the reason). claimed: the final message claims the
            task done.
    """
    out = Defeatism()
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
        out.reason = (
            f"declared the task impossible (pattern {refusal.pattern!r}) while the recoverable "
            f"{r.code} error at step {r.step} ({r.tool}) stayed unrecovered ({tried} within {k} calls)"
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
    n = len(calls)
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
            elif is_wait(d) or (d.tool == c.tool and d.ok):
                break
            if d.tool == c.tool and d.args_key == c.args_key:
                members.append(j)
        consumed.update(members)
        if len(members) > 2:
            out.append(
                ImpatienceWindow(
                    step=c.step, tool=c.tool, calls=len(members), steps=[calls[m].step for m in members], basis=basis
                )
            )
    return out


def count_calls(traj: Trajectory, calls: list[Call]) -> CallCounts:
    """Call counts: ``invalid_calls`` = calls refused before they reached the server (recorded as
    invalid steps without a call-log number, plus the legacy ``traj.invalid_calls`` counter of
    old lines; :attr:`Trajectory.refused_calls`) + ``invalid_argument`` errors + unknown tools
    in the call log; ``valid_calls`` =
    logged calls that were not invalid; ``error_calls`` = valid calls that returned an error
    (docs/design.md §7, "Calls")."""
    invalid_steps = sum(c.invalid for c in calls)
    return CallCounts(
        valid_calls=len(calls) - invalid_steps,
        invalid_calls=traj.refused_calls + invalid_steps,
        error_calls=sum((not c.ok) and not c.invalid for c in calls),
    )


def score_outcome(traj: Trajectory, checks: Iterable[ExtraCheck | dict[str, Any]] | None = None) -> Outcome | None:
    """Outcome: the judge's verdict (:func:`mcpgym.evaluation.judge.judge`) on the initial,
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
    if traj.initial_snapshot is None or traj.final_snapshot is None or traj.gold_snapshot is None:
        return None
    if checks is None:
        checks = traj.metadata.get("extra_checks") or []
    res = judge(
        traj.initial_snapshot, traj.final_snapshot, traj.gold_snapshot, checks=checks, final_message=traj.final_message
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


__all__ = [
    "BlindRetries",
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
    "score_impatience",
    "score_outcome",
    "score_precheck",
    "score_recovery",
    "score_verification",
]
