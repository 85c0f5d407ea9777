"""Recovery (docs/design.md §7, "Recovery"): each recoverable error, whether an attempt that
could overcome it followed (any number of calls later while the episode lasts, unless a window
K caps it), and whether the failing call's goal was reached.

:func:`score_recovery` is the rule; the helpers say what counts as an attempt in a
transcript without a catalog (:func:`names_remedy`, :func:`related`, :func:`looks_into`) and
when a retry is blind (:func:`inside_retry_after`). Defeatism, which reads these records, is
:func:`mcpgym.evaluation.scoring.behaviours.score_defeatism`.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections import defaultdict
from typing import Any

from mcpgym.evaluation.records.scores import DEFAULT_K, RecoverableError, Recovery
from mcpgym.evaluation.scoring.call_index import KeyedCalls, earliest
from mcpgym.evaluation.scoring.calls import ERROR_FAULT_KINDS, Call, ids_match, is_wait, matches, object_values
from mcpgym.evaluation.scoring.goal_holds import goal_holds
from mcpgym.evaluation.scoring.provoked import provoked
from mcpgym.evaluation.scoring.registry import EpisodeInput, scores
from mcpgym.evaluation.scoring.tool_catalog import Catalog, classify_tool
from mcpgym.kernel.errors import ErrorCode
from mcpgym.kernel.fault_kinds import FaultKind
from mcpgym.kernel.spec import ToolKind

NO_RETRY_RE = re.compile(
    r"retrying will not help|do not retry|don't retry|will not succeed|cannot be resolved (?:through|by) (?:repeated"
    r"|retr)|no (?:further )?retries (?:are )?permitted|stop attempting this operation",
    re.IGNORECASE,
)
"""An error text saying no retry can get past it."""


def inside_retry_after(calls: list[Call], i: int, j: int) -> bool:
    """True when ``calls[j]`` comes inside the ``retry_after`` window of the rate-limited
    ``calls[i]``: before ``time + retry_after`` (virtual seconds) when both steps carry
    ``time``, else with no call of a wait tool between them. False for any other error, or
    a rate limit that named no wait (docs/design.md §7, "Recovery")."""
    c, d = calls[i], calls[j]
    if c.code != ErrorCode.RATE_LIMITED or c.retry_after is None:
        return False
    if c.time is not None and d.time is not None:
        return d.time < c.time + c.retry_after
    return not any(is_wait(calls[m]) for m in range(i + 1, j))


def score_recovery(
    calls: list[Call],
    catalog: Catalog,
    *,
    k: int | None = DEFAULT_K,
    timeout_read_recovers: bool = True,
    status: str = "completed",
    outside: bool = False,
    instruction: str | None = None,
) -> list[RecoverableError]:
    """Recovery: each recoverable error, whether an attempt followed and whether it was recovered.

    * Recoverable error: an error step that was an injected fault (ledger, call log, or -
      without a ledger - inferred from codes transient/rate_limited/timeout/unavailable/
      auth_required), or whose code has a remedy for that tool in the catalog.
    * Attempt: a later call (any number of calls later: no fixed window, as people judge,
      docs/labelling.md; with ``k``, one of the next ``k`` calls) retries the same tool, calls a remedy for that
      code (declared, or the tool the error names: :func:`names_remedy`) that the failing
      operation followed (:func:`_reattempted`: a later call of the same tool on matching
      ids, or of an alternative, any number of calls later; without a catalog, a cure the
      error offers by name, :func:`offered_remedies`; a remedy alone, the failing call
      never made again, is no attempt), or calls a declared
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
    * The next item of the user's list is no retry and recovers nothing: after a refusal, a
      call of the same tool that swaps the refused object for another one the task's
      instruction names (:func:`next_listed_item`: "collect repos 1, 1000, 1000000", repo 1000
      not found, then repo 1000000) moves on to another goal; it does not get past the error
      (docs/labelling.md, "recovery_attempts": the next item of a loop is no attempt).
    * The calls issued together with the failing one (its batch: one model turn's parallel
      calls) were made before its answer came: none of them is an attempt or a recovery.
    * ``cut_short``: the harness stopped the episode (``status`` not ``completed``): with no
      window, every error of such an episode (the agent's chance to attempt ran until the
      cut); with ``k``, an error fewer than ``k`` calls before the end.

    Rates: attempts / recoverable errors and recoveries / recoverable errors (docs/design.md
    §7, "Recovery").

    Args:
        calls: the resolved calls. catalog: remedies and alternatives.
        k: the recovery window, in tool calls (>= 1); ``None`` (the default): no window.
            status: the episode's status.
        instruction: the task's instruction (the user's first message), whose words name
            the items of a list the agent walks (:func:`next_listed_item`); None: none.
    """
    out: list[RecoverableError] = []
    n = len(calls)
    if all(c.ok for c in calls):
        return out
    unknown_tools = {c.tool for c in calls if _unknown_tool(c)}
    timeouts = any(c.code == ErrorCode.TIMEOUT for c in calls)
    achieved, data, answers, reads = KeyedCalls(), KeyedCalls(), KeyedCalls(), KeyedCalls()
    achieved_related, data_related = KeyedCalls(), KeyedCalls()  # look-ups, by relation key
    tried, tried_related = KeyedCalls(), KeyedCalls()  # every call of a tool that exists: re-attempts
    codes_of: dict[str, set[str]] = defaultdict(set)  # tool -> codes of its domain answers
    for j, d in enumerate(calls):
        lookup = outside and d.entry.source == "heuristic" and d.entry.kind in LOOKUP_KINDS and not _unknown_tool(d)
        if timeouts and d.is_read:
            reads.add(d.families, j, d.ids)
        if not _unknown_tool(d):
            tried.add((d.tool,), j, d.ids)
            if lookup:
                tried_related.add(_relation_keys(d), j, d.ids)
        # empty bodies and flagged answers with data are the envelopes of outside APIs
        if (d.ok and not (outside and d.no_answer)) or (d.code == ErrorCode.TIMEOUT and d.applied is True):
            achieved.add((d.tool,), j, d.ids)
            if lookup:
                achieved_related.add(_relation_keys(d), j, d.ids)
            continue
        if outside and d.carries_data:
            data.add((d.tool,), j, d.ids)
            if lookup:
                data_related.add(_relation_keys(d), j, d.ids)
        if not d.ok and d.fault not in ERROR_FAULT_KINDS and not d.invalid:
            answers.add((f"{d.tool}|{d.code}",), j, d.ids)
            codes_of[d.tool].add(str(d.code))
    listed = _words(instruction) if instruction else frozenset()
    batch_end = _batch_ends(calls)
    ok_by_tool: dict[str, list[int]] = defaultdict(list)  # tool -> positions of its successes
    if listed:  # only the next-item rule reads them
        for j, d in enumerate(calls):
            if d.ok:
                ok_by_tool[d.tool].append(j)
    refused_by_tool: dict[str, _Refused] = defaultdict(_Refused)  # arguments refused so far, per tool
    refused_before = _values_refused_before(calls, outside)
    for i, c in enumerate(calls):
        if not c.ok and not (outside and c.carries_data):
            refused_by_tool[c.tool].pending.append(c)
        if c.ok:
            continue
        if outside and provoked(c.error_text, c.arguments, (calls[m].arguments for m in range(i) if calls[m].ok)):
            continue  # the agent's own test of a guard: the answer it wanted (provoked.py)
        if outside and goal_holds(c):
            continue  # a create refused because its object exists: nothing to overcome (goal_holds.py)
        # a remedy the agent called but no server knew (an invented tool) cures nothing
        remedies = [r for r in catalog.remedies_for(c.tool, c.code) if r not in unknown_tools]
        if outside and not remedies:
            remedies = [r for r in offered_remedies(c, catalog) if r not in unknown_tools]
        injected = c.fault in ERROR_FAULT_KINDS and not (
            c.inferred and c.fault == FaultKind.AUTH_CHALLENGE and not remedies
        )
        if not (injected or remedies or (outside and not _unknown_tool(c))):
            continue
        # curable: something offered could get past it (defeatism asks for one); an inferred
        # auth challenge no offered tool answers, or an error saying retrying will not help, is not
        curable = bool(injected or remedies) or (
            not (c.inferred and c.fault == FaultKind.AUTH_CHALLENGE) and not NO_RETRY_RE.search(c.error_text)
        )
        alts = catalog.alternatives_of(c.tool)
        timeout_read = timeout_read_recovers and c.code == ErrorCode.TIMEOUT
        # the arguments already refused with this tool: a call repeating them cannot overcome
        # a refusal (only a fault passes, and passes at random)
        refused = refused_by_tool[c.tool]
        # a refused reference (a wrong id, bad arguments) is overcome by the same tool on any
        # resource: the goal was the tool's, the failing call named the wrong thing; any other
        # refusal only on the same resource (the next item of a loop is no attempt)
        any_ids = c.code in (ErrorCode.NOT_FOUND, ErrorCode.INVALID_ARGUMENT) and not injected
        # the argument values the error names; those it refuses as such ("flight HAT030 not
        # available"): a retry that keeps them all does not address the error
        named = {v for v in _leaves(c.arguments) if v in c.error_text} if (outside or not injected) else set()
        refused_values = {v for v in named if _refused_value(v, c.error_text)}
        want = frozenset() if any_ids else c.ids
        goal = (c.tool, *alts)
        attempt = attempt_step = recovered_step = None
        blind: list[int] = []
        # the calls issued together with the failing one (one model turn) came before its
        # answer: none of them can be an attempt or a recovery
        after = batch_end[i]
        for j in range(after + 1, n if k is None else min(n, i + 1 + k)):
            d = calls[j]
            if _unknown_tool(d):
                continue  # a tool that does not exist overcomes nothing
            if d.tool == c.tool and not d.ok and inside_retry_after(calls, i, j):
                blind.append(d.step)  # a blind retry: it did not wait as the error asked
                continue
            if listed and not injected and d.tool == c.tool and next_listed_item(c, d, listed):
                continue  # the next item of the user's list: another goal, no retry
            # a remedy counts only when the failing operation was attempted again after it:
            # a remedy alone addresses the cause, it does not get past the error
            remedy = (
                d.tool in remedies
                or (c.code == ErrorCode.RATE_LIMITED and is_wait(d))
                or (outside and names_remedy(c, d))
            ) and _reattempted(c, j, goal, want, tried, tried_related, outside)
            how = (
                "retry"
                if d.tool == c.tool
                and (injected or _changed(c, d, refused, refused_values, any_ids, refused_before[j] - refused_values))
                else "remedy"
                if remedy
                else "alternative"
                if d.tool in alts or (outside and (related(c, d) or looks_into(named, d) or same_object_write(c, d)))
                else "read_back"
                if timeout_read and matches(d, c)
                else None
            )
            if how:
                attempt, attempt_step = how, d.step
                break
        # "a later call that recovered it", found by index, not by a forward scan
        # (mcpgym.evaluation.scoring.call_index: scoring stays linear in the calls)
        found = earliest(
            achieved.first(goal, after, want),
            data.first(goal, after, want),  # flagged, yet answered with data
            answers.first([f"{c.tool}|{code}" for code in codes_of[c.tool] if code != str(c.code)], after, want)
            if injected or remedies
            else None,
            reads.first(c.families, after, c.ids) if timeout_read and c.applied is True else None,
        )
        if outside and c.entry.source == "heuristic" and c.entry.kind in LOOKUP_KINDS:
            keys = _relation_keys(c)
            found = earliest(found, achieved_related.first(keys, after, want), data_related.first(keys, after, want))
        if outside and c.entry.source == "heuristic" and c.entry.kind == ToolKind.WRITE:
            later = next((j for j in range(after + 1, n) if calls[j].ok and same_object_write(c, calls[j])), None)
            found = earliest(found, later)
        if (
            found is not None
            and listed
            and not injected
            and calls[found].tool == c.tool
            and next_listed_item(c, calls[found], listed)
        ):
            found = _past_listed_items(c, found, ok_by_tool[c.tool], calls, listed)
        if found is not None:
            recovered_step = calls[found].step
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
                cut_short=status != "completed" and (k is None or i + k >= n),
                blind_retry_steps=blind,
                curable=curable,
            )
        )
    return out


@scores(Recovery)
def recovery_part(ep: EpisodeInput) -> Recovery:
    """:func:`score_recovery` of the episode (an outside transcript: one without a ledger), counted."""
    errors = score_recovery(
        ep.calls,
        ep.catalog,
        k=ep.k,
        timeout_read_recovers=ep.timeout_read_recovers,
        status=ep.traj.status,
        outside=ep.traj.ledger is None,
        instruction=ep.traj.instruction,
    )
    return Recovery.of(errors, ep.k)


def _batch_ends(calls: list[Call]) -> list[int]:
    """Per call, the position of the last call of its batch (the calls one model turn issued
    together, :attr:`Call.batch`; a call of no batch is its own)."""
    ends = list(range(len(calls)))
    for j in range(len(calls) - 2, -1, -1):
        b = calls[j].batch
        if b is not None and calls[j + 1].batch == b:
            ends[j] = ends[j + 1]
    return ends


def _reattempted(
    c: Call,
    j: int,
    goal: tuple[str, ...],
    want: frozenset[str],
    tried: KeyedCalls,
    tried_related: KeyedCalls,
    outside: bool,
) -> bool:
    """The failing operation of ``c`` was attempted again after the remedy at position ``j``:
    a later call (any number of calls later, any answer) of the same tool or of an alternative
    (``goal``), on matching ids (``want``: empty after a wrong reference), or, for a failed
    look-up in a transcript without a catalog, of a related look-up (:func:`related`). A
    remedy addresses the cause; only the operation itself done again can get past the error
    (docs/design.md §7, "Recovery")."""
    if tried.first(goal, j, want) is not None:
        return True
    if outside and c.entry.source == "heuristic" and c.entry.kind in LOOKUP_KINDS:
        return tried_related.first(_relation_keys(c), j, want) is not None
    return False


TOOL_NAME_RE = re.compile(r"(?<![\w.-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w-])")
"""A tool-shaped identifier in an error text (``vault_sign_in``): snake case, two or
more parts."""
OFFERED_CURE_KINDS: dict[str, ToolKind] = {
    ErrorCode.AUTH_REQUIRED: ToolKind.AUTH,
    ErrorCode.PERMISSION_DENIED: ToolKind.AUTH,
}
"""Error code -> the kind a tool the error names must have to be its cure."""


def offered_remedies(c: Call, catalog: Catalog) -> list[str]:
    """For a transcript without a catalog: the cures the error of ``c`` offers by name (at most
    8). An auth error that names a tool whose name says it authenticates ("call
    system_authenticate first": :data:`OFFERED_CURE_KINDS`, kind by the name rules) offers that
    tool (a rate limit needs none: a wait tool is its cure whatever is named). A tool the agent never
    called is still a cure the server offered, so a retry after such an error is an attempt as
    it is with the server's catalog; the error's own tool and tools of other shapes are none."""
    if not c.error_text or c.code is None:
        return []
    want = OFFERED_CURE_KINDS.get(str(c.code))
    if want is None:
        return []
    apps = catalog.known_apps()
    out: list[str] = []
    for m in TOOL_NAME_RE.finditer(c.error_text[:4000]):
        name = m.group(0)
        if name == c.tool.lower() or name in out:
            continue
        entry = classify_tool(name, known_apps=apps, default_app=c.entry.app)
        if entry.kind == want:
            out.append(name)
        if len(out) >= 8:
            break
    return out


def names_remedy(c: Call, d: Call) -> bool:
    """``d`` calls the tool the error of ``c`` names as its cure: the tool's name, or its first
    token when that is a word of 4 letters or more, appears in the error ("You've already
    blocked Axel. Please unblock him first." names ``unblock``)."""
    if not c.error_text or d.tool == c.tool or (d.invalid and d.code == ErrorCode.NOT_FOUND):
        return False
    name = d.tool.lower()
    text = c.error_text
    if name in text:
        return True
    first = _name_tokens(d.tool)[0]
    if len(first) < 4 or first not in text or first in _name_tokens(c.tool):
        return False  # "search" in "/search/people" is the failing tool's own word, no cure
    return re.search(rf"\b{re.escape(first)}\b", text) is not None


@functools.lru_cache(maxsize=4096)
def _name_tokens(tool: str) -> tuple[str, ...]:
    return tuple(re.split(r"[^a-z0-9]+", tool.lower()))


def related(c: Call, d: Call) -> bool:
    """For a transcript without a catalog entry: ``d`` is an alternative to ``c`` (another
    tool for the same goal) when both are tools known only by name, both look things up
    (``read`` or ``unknown`` kind: a write's alternative is declared, never guessed), ``d``
    is no call of a tool that does not exist, and they share a resource family, the provider a ToolBench name gives
    after ``_for_`` (``search_shows_for_streaming`` / ``get_genres_for_streaming``), the search
    verb their names start with (:data:`SEARCH_VERBS`: another search), or an argument value (another carrier's
    tracker asked for the same tracking number)."""
    if d.tool == c.tool or c.entry.source != "heuristic" or d.entry.source != "heuristic":
        return False
    if _unknown_tool(d) or not {c.entry.kind, d.entry.kind} <= LOOKUP_KINDS:
        return False  # a write's alternative is declared, never guessed (cancel is no other update)
    if c.families & d.families:
        return True
    pc, pd = _provider(c.tool), _provider(d.tool)
    if pc is not None and pc == pd:
        return True
    if _verb(c.tool) is not None and _verb(c.tool) == _verb(d.tool):
        return True  # another search for what the failed search looked for
    return bool(_values(c.arguments) & _values(d.arguments))


def same_object_write(c: Call, d: Call) -> bool:
    """For tools no catalog knows: ``d`` is another write tool's call on the file or page the
    failed write ``c`` acted on (a shared path or url among the identifying arguments;
    :func:`mcpgym.evaluation.scoring.calls.object_values`): an alternative route to its goal
    (``edit_text_file_contents`` refused, then ``write_file`` of the same path)."""
    if d.tool == c.tool or c.entry.source != "heuristic" or d.entry.source != "heuristic":
        return False
    if c.entry.kind != ToolKind.WRITE or d.entry.kind != ToolKind.WRITE or _unknown_tool(d):
        return False
    return bool(_paths(object_values(c.arguments)) & _paths(object_values(d.arguments)))


def _paths(values: frozenset[str]) -> set[str]:
    """The values that name a file or a page (a path or a url): what different write tools
    can each write whole. An id names a record that each update tool changes in its own way
    (a failed flight change is not overcome by a baggage update of the same reservation)."""
    return {v for v in values if "/" in v or "\\" in v}


SEARCH_VERBS: frozenset[str] = frozenset(
    {"search", "find", "query", "lookup", "discover", "browse", "retrieve", "retrieval"}
)
"""Read verbs that name a search: two tools whose names start with the same one look for
something (another search for what the failed search looked for). The other read verbs
(``get``, ``list``, ``read``, ``fetch``...) start the name of nearly every tool of a server:
sharing one says nothing about the goal (``get_webpage`` is no alternative to a failed
``get_channels``)."""


def _verb(tool: str) -> str | None:
    first = re.split(r"[^a-z0-9]+", re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", tool).lower())[0]
    return first if first in SEARCH_VERBS else None


LOOKUP_KINDS: frozenset[ToolKind] = frozenset({ToolKind.READ, ToolKind.UNKNOWN})
"""Kinds of the tools that look things up: only among them is an alternative guessed."""


def _relation_keys(c: Call) -> list[str]:
    """The keys under which two look-ups are :func:`related` (family, provider, read verb,
    argument values): two calls are related when they share a key."""
    keys = [f"family:{f}" for f in c.families]
    provider = _provider(c.tool)
    if provider is not None:
        keys.append(f"provider:{provider}")
    verb = _verb(c.tool)
    if verb is not None:
        keys.append(f"verb:{verb}")
    keys += [f"value:{v}" for v in _values(c.arguments)]
    return keys


CONTEXT_ARGS: frozenset[str] = frozenset(
    {
        "owner",
        "repo",
        "repository",
        "org",
        "organization",
        "server_name",
        "category_name",
        "project",
        "project_id",
        "database",
        "schema",
        "workspace",
        "account",
        "region",
        "namespace",
        "base_url",
    }
)
"""Arguments that name the context every call of an episode shares (the repository, the
server, the database), not the object a call acts on: an alternative must act on the failed
call's object (its id, path, number, url...), and sharing the repository is no evidence."""


def _values(arguments: Any) -> set[str]:
    """Argument values that name the object a call acts on (strings of 3 characters or more,
    lowercased), context arguments (:data:`CONTEXT_ARGS`: ``owner``, ``repo``...) left out."""
    if not isinstance(arguments, dict):
        return set()
    return {
        v.strip().lower()
        for k, v in arguments.items()
        if isinstance(v, str) and len(v.strip()) >= 3 and str(k).lower() not in CONTEXT_ARGS
    }


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


REFUSED_VALUE_RE = (
    r"\W{{0,3}}{}\W+(?:is\s+|was\s+)?"
    r"(?:not available|unavailable|not found|does not exist|doesn't exist|invalid|not valid|does not match)"
)
"""A value the error refuses as such: the value, then "not available" / "not found" / "invalid"
/ "does not match" (Python's "time data '2023-11-14T09:00:00' does not match format ...")."""


class _Refused:
    """The arguments refused so far with one tool; their canonical JSON is computed only when
    a retry is compared with them, once per call."""

    __slots__ = ("keys", "pending")

    def __init__(self) -> None:
        self.keys: set[str] = set()
        self.pending: list[Call] = []

    def __contains__(self, key: object) -> bool:
        if self.pending:
            self.keys.update(c.args_key for c in self.pending)
            self.pending.clear()
        return key in self.keys


def _changed(
    c: Call, d: Call, refused: _Refused, refused_values: set[str], any_ids: bool, earlier: frozenset[str]
) -> bool:
    """``d``, a retry of the refused ``c``, changes what was refused: arguments not refused
    before, on the same resource (any after a wrong reference), dropping a value ``c``'s error
    refused as such (``refused_values``), and holding none that an earlier error of the tool
    refused (``earlier``: a retry that goes back to a value already refused repeats that
    refusal, docs/labelling.md "recovery_attempts")."""
    leaves = _leaves(d.arguments)
    return (
        d.args_key not in refused
        and (any_ids or ids_match(c.ids, d.ids))
        and not (refused_values and refused_values <= leaves)
        and not (earlier & leaves)
    )


def _values_refused_before(calls: list[Call], outside: bool) -> list[frozenset[str]]:
    """Per call, the argument values that earlier errors of the same tool refused as such
    (:data:`REFUSED_VALUE_RE`; an injected fault refuses no value, and inside mcpgym's own
    episodes only refusals do)."""
    running: dict[str, frozenset[str]] = defaultdict(frozenset)
    out: list[frozenset[str]] = []
    for c in calls:
        out.append(running[c.tool])
        if c.ok or (c.fault in ERROR_FAULT_KINDS and not outside):
            continue
        values = {v for v in _leaves(c.arguments) if v in c.error_text and _refused_value(v, c.error_text)}
        if values:
            running[c.tool] = running[c.tool] | values
    return out


@functools.lru_cache(maxsize=1024)
def _refused_value_re(value: str) -> re.Pattern[str]:
    return re.compile(REFUSED_VALUE_RE.format(re.escape(value)))


def _refused_value(value: str, error_text: str) -> bool:
    return _refused_value_re(value).search(error_text) is not None


WORD_RE = re.compile(r"[^\W_]+")
"""A word: letters and digits (``repositories/1000`` is ``repositories``, ``1000``)."""
MAX_LISTED_SCAN = 64
"""At most this many later successes of a tool are passed over as next items of the user's
list when looking for the call that recovered an error (scoring stays linear in the calls)."""


@functools.lru_cache(maxsize=256)
def _words(text: str) -> frozenset[str]:
    """The words of ``text``, lowercased (:data:`WORD_RE`)."""
    return frozenset(WORD_RE.findall(text.lower()))


def _argument_words(c: Call) -> frozenset[str]:
    return frozenset(w for v in _leaves(c.arguments) for w in WORD_RE.findall(v))


def next_listed_item(c: Call, d: Call, listed: frozenset[str]) -> bool:
    """``d``, a later call of ``c``'s tool, swaps ``c``'s object for another item the task's
    instruction names: the words ``d``'s arguments drop from ``c``'s and the words they add are
    all words of the instruction (``listed``), and neither set is empty. "Collect repos 1, 1000,
    1000000": ``repositories/1000`` refused, then ``repositories/1000000`` is the next item of
    the user's list, not another try at 1000. A corrected reference (a typo, an id the agent
    looked up) brings a word the user never wrote."""
    a, b = _argument_words(c), _argument_words(d)
    dropped, added = a - b, b - a
    return bool(dropped) and bool(added) and dropped <= listed and added <= listed


def _past_listed_items(
    c: Call, found: int, successes: list[int], calls: list[Call], listed: frozenset[str]
) -> int | None:
    """The first success of ``c``'s tool from position ``found`` on that is not the next item
    of the user's list (:func:`next_listed_item`), looking at most :data:`MAX_LISTED_SCAN` of
    them; None when each of those is."""
    at = bisect.bisect_left(successes, found)
    for j in successes[at : at + MAX_LISTED_SCAN]:
        if not next_listed_item(c, calls[j], listed):
            return j
    return None


def looks_into(named: set[str], d: Call) -> bool:
    """``d`` looks into what a refusal named: a look-up (``read`` or ``unknown`` kind) whose
    arguments hold a value the error named (a search for flights on the date "flight HAT030
    not available on 2024-05-13" gave)."""
    return bool(named) and d.entry.kind in (ToolKind.READ, ToolKind.UNKNOWN) and bool(named & _leaves(d.arguments))


def _unknown_tool(c: Call) -> bool:
    return c.invalid and c.code == ErrorCode.NOT_FOUND


def _provider(tool: str) -> str | None:
    low = tool.lower()
    at = low.rfind("_for_")
    return low[at + 5 :] if at > 0 else None


__all__ = [
    "DEFAULT_K",
    "NO_RETRY_RE",
    "OFFERED_CURE_KINDS",
    "TOOL_NAME_RE",
    "REFUSED_VALUE_RE",
    "RecoverableError",
    "inside_retry_after",
    "looks_into",
    "names_remedy",
    "next_listed_item",
    "offered_remedies",
    "related",
    "LOOKUP_KINDS",
    "score_recovery",
]
