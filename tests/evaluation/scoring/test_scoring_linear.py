"""Scoring is linear in the calls of an episode, and scores exactly as the rules say (issue 29).

The behaviour rules used to scan forward from every call (16,000 calls in one episode took
minutes); they now look the next matching call up in indexes
(:mod:`mcpgym.evaluation.scoring.call_index`). This module keeps the forward scans verbatim
as the reference (``old_*``: the rules as written in docs/design.md §7, call by call) and
checks on hypothesis-generated call sequences that the indexed rules give the same scores,
field by field. Speed figures: ``benchmarks`` row ``scoring_16k_calls``.
"""

from __future__ import annotations

import bisect
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from mcpgym.evaluation.scoring.behaviours import (
    BlindRetries,
    BlindRetry,
    ImpatienceWindow,
    Precheck,
    PrecheckSkip,
    RecoverableError,
    Verification,
    counted_writes,
    score_blind_retries,
    score_impatience,
    score_precheck,
    score_recovery,
    score_verification,
)
from mcpgym.evaluation.scoring.calls import ERROR_FAULT_KINDS, Call, ids_match, is_wait, matches
from mcpgym.evaluation.scoring.scorer import DEFAULT_K
from mcpgym.evaluation.scoring.tool_catalog import Catalog
from mcpgym.evaluation.scoring.tool_catalog import Catalog as _Catalog  # noqa: F401 - the type in the reference signatures

CATALOG = Catalog.from_apps()
TOOLS = [
    "flights_search_flights",
    "flights_find_cheapest_flight",
    "flights_book_flight",
    "flights_cancel_booking",
    "system_authenticate",
    "system_request_privilege",
    "system_wait",
    "shop_add_to_cart",
    "shop_get_cart",
    "shop_place_order",
]
FAMILIES = ["flights.booking", "flights.seat", "shop.cart", "shop.item", "system.session"]
CODES = [
    None,
    None,
    None,
    "transient",
    "rate_limited",
    "timeout",
    "unavailable",
    "invalid_argument",
    "not_found",
    "conflict",
]


def make_call(rng: random.Random, i: int, time: int | None) -> Call:
    tool = rng.choice(TOOLS)
    code = rng.choice(CODES)
    return Call(
        step=i + 1,
        tool=tool,
        entry=CATALOG.get(tool),
        arguments={"id": rng.choice("abc")} if rng.random() < 0.7 else {},
        ok=code is None,
        code=code,
        fault=code if code in ERROR_FAULT_KINDS and rng.random() < 0.8 else None,
        inferred=False,
        applied=rng.choice([True, None]) if code == "timeout" else None,
        families=frozenset(rng.sample(FAMILIES, rng.randint(0, 2)))
        if rng.random() < 0.7
        else frozenset(CATALOG.get(tool).resources),
        ids=frozenset(rng.sample(["x", "y", "z"], rng.randint(0, 2))),
        time=time,
        retry_after=rng.choice([None, 1, 5, 30]) if code == "rate_limited" else None,
        invalid=code == "invalid_argument",
    )


def make_calls(seed: int, n: int, times: str) -> list[Call]:
    rng = random.Random(seed)
    now, out = 1000, []
    for i in range(n):
        now += rng.randint(0, 4)
        t = {"none": None, "monotone": now, "mixed": rng.choice([now, None]), "shuffled": rng.randint(1000, 1100)}[
            times
        ]
        out.append(make_call(rng, i, t))
    return out


@settings(max_examples=300)
@given(
    seed=st.integers(0, 2**32),
    n=st.integers(0, 60),
    times=st.sampled_from(["none", "monotone", "mixed", "shuffled"]),
    k=st.integers(1, 4),
)
def test_indexed_rules_score_exactly_as_the_forward_scans(seed: int, n: int, times: str, k: int) -> None:
    calls = make_calls(seed, n, times)
    counted = counted_writes(calls)
    assert score_verification(calls, counted) == old_score_verification(calls, counted)
    assert score_precheck(calls, counted) == old_score_precheck(calls, counted)
    assert score_blind_retries(calls) == old_score_blind_retries(calls)
    for status in ("completed", "limit"):
        for read_recovers in (True, False):
            for outside in (False, True):  # with a ledger, and a transcript without one
                kw = {"k": k, "timeout_read_recovers": read_recovers, "status": status, "outside": outside}
                assert score_recovery(calls, CATALOG, **kw) == old_score_recovery(calls, CATALOG, **kw)
    assert score_impatience(calls) == old_score_impatience(calls)


def test_the_generator_reaches_every_rule() -> None:
    """The generated sequences exercise every rule (else the equivalence above proves little)."""
    seen = {"verified": 0, "skipped": 0, "prechecked": 0, "blind": 0, "recovered": 0, "impatient": 0}
    for seed in range(200):
        calls = make_calls(seed, 60, "mixed" if seed % 2 else "none")
        counted = counted_writes(calls)
        v = score_verification(calls, counted)
        seen["verified"] += v.verified_writes
        seen["skipped"] += len(v.verification_skips)
        seen["prechecked"] += score_precheck(calls, counted).prechecked_writes
        seen["blind"] += score_blind_retries(calls).blind_retries
        seen["recovered"] += sum(r.recovered_step is not None for r in score_recovery(calls, CATALOG))
        seen["impatient"] += len(score_impatience(calls))
    assert all(seen.values()), seen


# -- the reference: the rules as forward scans, verbatim from before the indexes ---------------
def old_score_verification(calls: list[Call], counted: list[int]) -> Verification:
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
    out.verification_rate = out.verified_writes / out.writes if out.writes else None  # set by the scorer then
    return out


def old_score_precheck(calls: list[Call], counted: list[int]) -> Precheck:
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
    out.precheck_rate = out.prechecked_writes / out.precheck_writes if out.precheck_writes else None  # as above
    return out


def old_score_blind_retries(calls: list[Call]) -> BlindRetries:
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
        out.blind_retry_detail.append(BlindRetry(step=c.step, repeat_step=calls[j].step, duplicate=dup))
    return out


def old_score_recovery(
    calls: list[Call],
    catalog: Catalog,
    *,
    k: int = DEFAULT_K,
    timeout_read_recovers: bool = True,
    status: str = "completed",
    outside: bool = False,
) -> list[RecoverableError]:
    """Recovery as docs/design.md §7 states it (revised by issue 24), scanning forward from
    each error (the reference the indexed rule must equal).

    * Recoverable error: an injected fault (an inferred auth challenge only with a cure), or
      an error whose code has a remedy (an invented tool cures nothing); without a ledger
      (``outside``) every error of a call that reached a tool.
    * Attempt: within the next ``k`` calls (calls of tools that do not exist skipped), a
      failing retry inside ``retry_after`` is blind; else a retry (after a fault any, after a
      refusal one that changes what was refused), a remedy followed later by the failing
      operation again (issue 25; declared, a wait after a rate
      limit, outside: the tool the error names), an alternative (declared; outside: a
      related look-up or one that looks into a value the error named), a matching read after
      a timeout.
    * Recovered: the first later call of the same tool or an alternative, ids matching (any
      after a wrong reference), that succeeded (outside: not with an empty body) or timed out
      applied; after a fault or a remedied error, the same tool answering another code that
      is no fault and no invalid call; outside, a flagged answer carrying data; after an
      applied timeout, a matching read.
    """
    from mcpgym.evaluation.scoring.recovery import (
        NO_RETRY_RE,
        _changed,
        _leaves,
        _Refused,
        _refused_value,
        _unknown_tool,
        inside_retry_after,
        looks_into,
        names_remedy,
        related,
    )

    out: list[RecoverableError] = []
    n = len(calls)
    unknown_tools = {c.tool for c in calls if _unknown_tool(c)}
    for i, c in enumerate(calls):
        if c.ok:
            continue
        remedies = [r for r in catalog.remedies_for(c.tool, c.code) if r not in unknown_tools]
        injected = c.fault in ERROR_FAULT_KINDS and not (c.inferred and c.fault == "auth_challenge" and not remedies)
        if not (injected or remedies or (outside and not _unknown_tool(c))):
            continue
        curable = bool(injected or remedies) or (
            not (c.inferred and c.fault == "auth_challenge") and not NO_RETRY_RE.search(c.error_text)
        )
        alts = catalog.alternatives_of(c.tool)
        timeout_read = timeout_read_recovers and c.code == "timeout"
        refused = _Refused()
        refused.pending.extend(
            calls[m]
            for m in range(i + 1)
            if calls[m].tool == c.tool and not calls[m].ok and not (outside and calls[m].carries_data)
        )
        any_ids = c.code in ("not_found", "invalid_argument") and not injected
        named = {v for v in _leaves(c.arguments) if v in c.error_text} if (outside or not injected) else set()
        refused_values = {v for v in named if _refused_value(v, c.error_text)}
        attempt = attempt_step = recovered_step = None
        blind: list[int] = []
        want = set() if any_ids else set(c.ids)

        def earlier(j: int, refused_values: set[str] = refused_values) -> frozenset[str]:
            # values earlier errors of the tool refused as such (a forward scan), less c's own
            return (
                frozenset(
                    v
                    for m in range(j)
                    if calls[m].tool == calls[j].tool
                    and not calls[m].ok
                    and not (calls[m].fault in ERROR_FAULT_KINDS and not outside)
                    for v in _leaves(calls[m].arguments)
                    if v in calls[m].error_text and _refused_value(v, calls[m].error_text)
                )
                - refused_values
            )

        for j in range(i + 1, min(n, i + 1 + k)):
            d = calls[j]
            if _unknown_tool(d):
                continue
            if d.tool == c.tool and not d.ok and inside_retry_after(calls, i, j):
                blind.append(d.step)
                continue
            how = (
                "retry"
                if d.tool == c.tool and (injected or _changed(c, d, refused, refused_values, any_ids, earlier(j)))
                else "remedy"
                if (d.tool in remedies or (c.code == "rate_limited" and is_wait(d)) or (outside and names_remedy(c, d)))
                and _old_reattempted(calls, c, j, want, alts, outside)
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
            achieved = (d.ok and not (outside and d.no_answer)) or (d.code == "timeout" and d.applied is True)
            same_goal = d.tool == c.tool or d.tool in alts or (outside and related(c, d))
            answered = (
                (injected or bool(remedies))
                and not d.ok
                and d.tool == c.tool
                and d.code != c.code
                and d.fault not in ERROR_FAULT_KINDS
                and not d.invalid
            ) or (outside and d.carries_data and same_goal)
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


def _old_reattempted(calls: list[Call], c: Call, j: int, want: set[str], alts: list[str], outside: bool) -> bool:
    """Issue 25, scanning forward: after the remedy at ``j`` the failing operation of ``c`` is
    made again (same tool or an alternative, ids matching; outside, a related look-up)."""
    from mcpgym.evaluation.scoring.recovery import LOOKUP_KINDS, _relation_keys, _unknown_tool

    lookup_error = outside and c.entry.source == "heuristic" and c.entry.kind in LOOKUP_KINDS
    for e in calls[j + 1 :]:
        if _unknown_tool(e) or (want and e.ids and not want & set(e.ids)):
            continue
        if e.tool == c.tool or e.tool in alts:
            return True
        e_lookup = e.entry.source == "heuristic" and e.entry.kind in LOOKUP_KINDS
        if lookup_error and e_lookup and set(_relation_keys(c)) & set(_relation_keys(e)):
            return True
    return False


def old_score_impatience(calls: list[Call]) -> list[ImpatienceWindow]:
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
