"""Outcome judge: the state diff of initial, final and gold worlds (docs/design.md §7, "Outcome").

Each snapshot (``World.snapshot()`` dict) is rebuilt with ``World.restore`` and reduced with
``World.comparable()``: volatile fields (generated ids, timestamps) are gone and dicts marked
``VOLATILE_KEYS`` have become sorted lists of their values. That comparable state is then
flattened into leaf paths (JSON-pointer style, ``/system/wallet/balance_cents``):

* a dict contributes its keys' paths (an empty dict contributes nothing, so adding the first
  key to an empty dict is one field, not two);
* a scalar (str, number, bool, null) is one field; values are compared as JSON (``1`` equals
  ``1.0``; ``true`` does not equal ``1``);
* a list is one *multiset* path: its elements are compared whole, by canonical JSON, order
  ignored (the lists ``comparable()`` makes from ``VOLATILE_KEYS`` dicts are unordered by
  nature; an outcome that differs only in list order is not seen);
* a path absent from a state has the value MISSING.

Counting (docs/design.md §7: ``total`` = fields where gold differs from initial; ``recall`` =
those the agent got right; ``misbehave`` = fields the agent changed that gold left alone):

* scalar path with values I, G, F: if G != I it adds 1 to ``total``, and 1 to ``recall``
  when F == G; if G == I and F != I it adds 1 to ``misbehave``.
* multiset path, each added or removed element one field: with multiset differences
  ``gold_added = G - I``, ``gold_removed = I - G``, ``agent_added = F - I``,
  ``agent_removed = I - F``:

  - ``total``  += |gold_added| + |gold_removed|
  - ``recall`` += |gold_added & agent_added| + |gold_removed & agent_removed|
  - ``misbehave`` += |agent_removed - gold_removed| (elements gold kept but the agent
    removed) + max(0, |agent_added - gold_added| - |gold_added - agent_added|) (additions
    beyond the number of gold additions the agent missed).

  An agent addition that takes the place of a missed gold addition is a wrong value in a
  field gold changed (not recalled, not misbehaviour), as for a scalar set to the wrong
  value. Example: gold adds a 5000-cent transaction and the agent adds a 3000-cent one:
  total 1, recall 0, misbehave 0; had the agent added both, recall 1, misbehave 1.

Success = ``recall == total`` and ``misbehave == 0``, and every task-defined
:class:`ExtraCheck` on the final message passes.
"""

from __future__ import annotations

import re
import threading
from collections import Counter, OrderedDict
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, Field

from mcpgym.evaluation.records.scores import CheckResult, CheckSpec
from mcpgym.evaluation.scoring.refusal import match_refusal
from mcpgym.kernel.app import get_app
from mcpgym.kernel.volatile import comparable, comparable_changed
from mcpgym.kernel.world import World, canonical_json


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
"""The value of a path absent from a state."""

MAX_LISTED_PATHS = 100
"""Most paths listed in ``missed`` / ``misbehaved`` (the counts are always complete)."""

_NUMBER_RE = re.compile(r"(?<![\w.])[-+]?\$?\d[\d,]*(?:\.\d+)?|(?<![\w.])[-+]?\$?\.\d+")


def _numbers(text: str) -> list[float]:
    out = []
    for m in _NUMBER_RE.finditer(text):
        raw = m.group(0).replace(",", "").replace("$", "")
        try:
            out.append(float(raw))
        except ValueError:
            continue
    return out


class ExtraCheck(CheckSpec):
    """A task-defined check on the agent's final message (docs/design.md §6): the stored
    :class:`~mcpgym.evaluation.records.scores.CheckSpec` (its fields and their rules) and its
    evaluation, :meth:`evaluate`."""

    def evaluate(self, final_message: str) -> bool:
        """Return whether ``final_message`` passes the check.

        Raises:
            re.error: for an invalid ``regex`` pattern.
        """
        text = final_message or ""
        if self.kind in ("contains", "not_contains"):
            needle, hay = str(self.value), text
            if not self.case_sensitive:
                needle, hay = needle.casefold(), hay.casefold()
            return (needle in hay) == (self.kind == "contains")
        if self.kind == "regex":
            return re.search(str(self.value), text, 0 if self.case_sensitive else re.IGNORECASE) is not None
        if self.kind == "number":
            target = float(self.value)
            return any(abs(x - target) <= self.tolerance + 1e-9 for x in _numbers(text))
        return (match_refusal(text) is not None) == bool(self.value)


class JudgeResult(BaseModel):
    """The outcome of one episode (see the module docstring for the counting rules).

    Attributes:
        success: ``recall == total and misbehave == 0`` and all checks passed.
        total: fields where gold differs from initial.
        recall: of those, fields where final equals gold.
        misbehave: fields the agent changed that gold left alone.
        missed: paths gold changed that the agent did not get right (at most
            :data:`MAX_LISTED_PATHS`; multiset elements as ``path[+]`` added / ``path[-]``
            removed).
        misbehaved: paths of the misbehaviour, same notation.
        checks: the extra checks and their results.
    """

    success: bool
    total: int
    recall: int
    misbehave: int
    missed: list[str] = Field(default_factory=list)
    misbehaved: list[str] = Field(default_factory=list)
    checks: list[CheckResult] = Field(default_factory=list)


def comparable_state(snapshot: dict[str, Any]) -> dict[str, Any]:
    """Restore ``snapshot`` with ``World.restore`` and return ``World.comparable()``.

    Raises:
        KeyError: for an unknown app; pydantic ``ValidationError`` for malformed state.
    """
    return World.restore(snapshot).comparable()


_SHARED_LIMIT = 64
_shared: dict[tuple[int, tuple[str, ...]], tuple[Any, dict[str, Any]]] = {}
_shared_lock = threading.Lock()


def shared_comparable_state(snapshot: dict[str, Any]) -> dict[str, Any]:
    """:func:`comparable_state` of a snapshot shared by many episodes (a run's initial and gold
    states: the runner and :class:`~mcpgym.evaluation.records.snapshots.SnapshotStore` hand out one
    object per distinct state), computed once per state object and kept for the last
    :data:`_SHARED_LIMIT` of them. The cache is keyed on the identity of the snapshot's
    ``state`` mapping (with its app list), not of the snapshot itself: a pydantic model that
    holds a snapshot (``Trajectory.gold_snapshot``) keeps a shallow copy of the outer dict but
    the same ``state`` object. The result is shared: callers must not modify it, nor the
    snapshot's ``state`` (the judge does neither).

    Raises:
        KeyError / pydantic ``ValidationError`` as :func:`comparable_state`.
    """
    state_obj = snapshot.get("state")
    key = (id(state_obj), tuple(snapshot.get("apps") or ()))
    with _shared_lock:
        hit = _shared.get(key)
    if hit is not None and hit[0] is state_obj:
        return hit[1]
    state = comparable_state(snapshot)
    with _shared_lock:
        if len(_shared) >= _SHARED_LIMIT:
            _shared.pop(next(iter(_shared)))
        _shared[key] = (state_obj, state)
    return state


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def flatten(state: Any, prefix: str = "") -> dict[str, Any]:
    """Flatten a comparable state into ``{path: leaf}``.

    Dicts recurse (``/a/b``, ``/`` and ``~`` in keys escaped as in JSON pointer); a list
    becomes one leaf, a ``Counter`` of its elements' canonical JSON (a multiset); anything
    else is a scalar leaf.
    """
    if isinstance(state, dict):
        out: dict[str, Any] = {}
        for k, v in state.items():
            out.update(flatten(v, f"{prefix}/{_escape(str(k))}"))
        return out
    if isinstance(state, (list, tuple)):
        return {prefix or "/": Counter(canonical_json(_norm(v)) for v in state)}
    return {prefix or "/": state}


def _norm(value: Any) -> Any:
    """Integral floats become ints (1.0 == 1 as JSON numbers); bools stay bools."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_norm(v) for v in value]
    return value


_PLAIN = (str, int, bool, type(None))
"""Scalar types whose JSON equality is ``==`` of the same type (no float normalisation)."""


def _same(a: Any, b: Any) -> bool:
    if a is MISSING or b is MISSING:
        return a is b
    if type(a) is type(b) and type(a) in _PLAIN:  # the canonical JSON of both, without building it
        return bool(a == b)
    if isinstance(a, Counter) or isinstance(b, Counter):
        return isinstance(a, Counter) and isinstance(b, Counter) and a == b
    return canonical_json(_norm(a)) == canonical_json(_norm(b))


def _prune(initial: Any, final: Any, gold: Any) -> tuple[Any, Any, Any]:
    """Drop the dict keys whose value is the same in all three states, recursively.

    Only a speed-up of :func:`diff_states`: an unchanged subtree adds nothing to total, recall
    or misbehave, and flattening it was most of the judge's time (whole untouched apps).
    Values are compared with ``==`` and the same type; lists equal in order are equal as
    multisets too, so the counts are exactly those of the unpruned states.
    """
    if not (isinstance(initial, dict) and isinstance(final, dict) and isinstance(gold, dict)):
        return initial, final, gold
    out_i: dict[Any, Any] = {}
    out_f: dict[Any, Any] = {}
    out_g: dict[Any, Any] = {}
    for key in initial.keys() | final.keys() | gold.keys():
        i, f, g = initial.get(key, MISSING), final.get(key, MISSING), gold.get(key, MISSING)
        if i is not MISSING and (i is f is g or (type(i) is type(f) is type(g) and i == f == g)):
            continue
        i, f, g = _prune(i, f, g)
        for out, value in ((out_i, i), (out_f, f), (out_g, g)):
            if value is not MISSING:
                out[key] = value
    return out_i, out_f, out_g


def _size(c: Counter[Any]) -> int:
    return sum(c.values())


def _label(path: str, sign: str, element: str) -> str:
    text = element if len(element) <= 120 else element[:117] + "..."
    return f"{path}[{sign}] {text}"


def _counted(total: int, recall: int, misbehave: int, missed: list[str], bad: list[str]) -> JudgeResult:
    """The :class:`JudgeResult` of counted changes: success when every gold change was made
    (``recall == total``) and nothing else changed; the path lists cut at :data:`MAX_LISTED_PATHS`."""
    return JudgeResult(
        success=recall == total and misbehave == 0,
        total=total,
        recall=recall,
        misbehave=misbehave,
        missed=missed[:MAX_LISTED_PATHS],
        misbehaved=bad[:MAX_LISTED_PATHS],
    )


def diff_states(initial: dict[str, Any], final: dict[str, Any], gold: dict[str, Any]) -> JudgeResult:
    """Count total / recall / misbehave between three comparable states (no extra checks).

    Args:
        initial, final, gold: ``World.comparable()``-shaped dicts.

    Returns:
        A :class:`JudgeResult` (``checks`` empty).
    """
    initial, final, gold = _prune(initial, final, gold)
    fi, ff, fg = flatten(initial), flatten(final), flatten(gold)
    total = recall = misbehave = 0
    missed: list[str] = []
    bad: list[str] = []
    for path in sorted(set(fi) | set(ff) | set(fg)):
        i, f, g = fi.get(path, MISSING), ff.get(path, MISSING), fg.get(path, MISSING)
        values = (i, f, g)
        if any(isinstance(v, Counter) for v in values) and all(isinstance(v, Counter) or v is MISSING for v in values):
            ci, cf, cg = (v if isinstance(v, Counter) else Counter() for v in values)
            g_add, g_rem, a_add, a_rem = cg - ci, ci - cg, cf - ci, ci - cf
            total += _size(g_add) + _size(g_rem)
            recall += _size(g_add & a_add) + _size(g_rem & a_rem)
            wrong_rem = a_rem - g_rem
            extra_add, missed_add = a_add - g_add, g_add - a_add
            excess = max(0, _size(extra_add) - _size(missed_add))
            misbehave += _size(wrong_rem) + excess
            missed += [_label(path, "+", e) for e in (g_add - a_add).elements()]
            missed += [_label(path, "-", e) for e in (g_rem - a_rem).elements()]
            bad += [_label(path, "-", e) for e in wrong_rem.elements()]
            if excess:
                bad += [_label(path, "+", e) for e in list(extra_add.elements())[-excess:]]
            continue
        if not _same(g, i):
            total += 1
            if _same(f, g):
                recall += 1
            else:
                missed.append(path)
        elif not _same(f, i):
            misbehave += 1
            bad.append(path)
    return _counted(total, recall, misbehave, missed, bad)


def run_checks(checks: Iterable[ExtraCheck | dict[str, Any]], final_message: str) -> list[CheckResult]:
    """Evaluate task-defined checks on ``final_message``.

    Args:
        checks: :class:`ExtraCheck` objects or their dicts.

    Raises:
        pydantic ``ValidationError`` for a malformed check dict; ``re.error`` for a bad regex.
    """
    out = []
    for c in checks:
        check = c if isinstance(c, ExtraCheck) else ExtraCheck.model_validate(c)
        out.append(CheckResult(check=check, passed=check.evaluate(final_message)))
    return out


_APP_CACHE_LIMIT = 512
"""Most (key, app) slots of :func:`comparable_app` kept (each holds up to four dumps with their views)."""
_APP_CANDIDATES = 4
_app_cache: OrderedDict[tuple[Any, ...], list[tuple[dict[str, Any], Any]]] = OrderedDict()
_app_cache_lock = threading.Lock()


def comparable_app(name: str, dump: Any, key: Any = None) -> Any:
    """The comparable view (:func:`mcpgym.kernel.volatile.comparable`) of app ``name``'s
    snapshot state ``dump`` (``snapshot["state"][name]``), validated by the app's state model.

    Cached by content: under ``(key, name)`` the last few dumps seen are kept with their views,
    and a dump equal to a kept one (``==``, the same object at once) gets the kept view
    and takes the kept dump's place (its next look-up is found by identity, without a deep ``==``). ``key``
    only narrows the search (the judge passes ``("initial", seed)`` and ``("gold", task, seed)``);
    a wrong key costs a miss, never a wrong view. The view is shared: callers must not modify it.

    Raises:
        KeyError: (``UnknownAppError``) for an unknown app; pydantic ``ValidationError`` for a
            malformed state.
    """
    slot = (key, name)
    with _app_cache_lock:
        kept = _app_cache.get(slot)
        if kept is not None:
            _app_cache.move_to_end(slot)
            kept = list(kept)
    for old_dump, view in kept or ():
        if old_dump is dump:
            return view
        if old_dump == dump:  # keep the newer equal object: its next call hits by identity
            with _app_cache_lock:
                entries = _app_cache.get(slot)
                if entries is not None:
                    for j, (kept_dump, kept_view) in enumerate(entries):
                        if kept_dump is old_dump and kept_view is view:
                            entries[j] = (dump, view)
                            break
            return view
    view = comparable(get_app(name).State.model_validate(dump))
    with _app_cache_lock:
        entries = _app_cache.setdefault(slot, [])
        entries.insert(0, (dump, view))
        del entries[_APP_CANDIDATES:]
        _app_cache.move_to_end(slot)
        while len(_app_cache) > _APP_CACHE_LIMIT:
            _app_cache.popitem(last=False)
    return view


def _final_view(name: str, dump: Any, before: Any, before_view: Any) -> Any:
    """The comparable view of app ``name``'s final ``dump``, reusing the initial view
    (``before_view`` of the initial dump ``before``) for every top-level field (collection) whose
    dumped value did not change."""
    state = get_app(name).State.model_validate(dump)
    if not (isinstance(dump, dict) and isinstance(before, dict) and isinstance(before_view, dict)):
        return comparable(state)
    return comparable_changed(state, before_view, before, dump)


def clear_judge_cache() -> None:
    """Forget every cached app view of :func:`comparable_app` (tests)."""
    with _app_cache_lock:
        _app_cache.clear()
        _untouched.clear()


def _apps_of(snapshot: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    apps, state = snapshot["apps"], snapshot["state"]
    if not isinstance(apps, list) or not isinstance(state, dict):
        raise ValueError("a world snapshot needs an 'apps' list and a 'state' mapping")
    return apps, state


def judge(
    initial_snapshot: dict[str, Any],
    final_snapshot: dict[str, Any],
    gold_snapshot: dict[str, Any],
    *,
    checks: Iterable[ExtraCheck | dict[str, Any]] = (),
    final_message: str = "",
    task: str | None = None,
) -> JudgeResult:
    """Judge one episode's outcome (docs/design.md §7, "Outcome"; rules in the module docstring).

    Compares what changed only: an app whose final state is the initial one (the same object,
    as an app no call touched shares its template's dump, or an equal one) is not validated
    again; the initial and gold views are cached per app by content (:func:`comparable_app`,
    keyed by world seed, and by ``task`` and seed for the gold state). The verdict is that of
    :func:`judge_restored` (the whole worlds restored and compared; a test compares both over
    every task of the ``full`` suite).

    Args:
        initial_snapshot, final_snapshot, gold_snapshot: ``World.snapshot()`` dicts of the
            episode's initial world, the world after the agent, and the oracle's final world
            (same seed, faults off).
        checks: task-defined :class:`ExtraCheck` items on the final message.
        final_message: the agent's final message.
        task: the task's id, to find the gold state's cached view faster (optional).

    Returns:
        A :class:`JudgeResult`; ``success`` also needs every check to pass.

    Raises:
        KeyError for a snapshot without ``apps``/``state`` or naming an unknown app; ValueError
        when they are not a list and a mapping; pydantic ``ValidationError`` for a malformed
        app state.
    """
    seed = initial_snapshot.get("seed")
    i_apps, i_state = _apps_of(initial_snapshot)
    f_apps, f_state = _apps_of(final_snapshot)
    g_apps, g_state = _apps_of(gold_snapshot)
    initial = {n: comparable_app(n, i_state[n], ("initial", seed)) for n in i_apps}
    gold = {n: comparable_app(n, g_state[n], ("gold", task, gold_snapshot.get("seed"))) for n in g_apps}
    final: dict[str, Any] = {}
    for n in f_apps:
        dump = f_state[n]
        before = i_state.get(n, MISSING) if n in initial else MISSING
        if before is not MISSING and (before is dump or before == dump):  # untouched: the initial view
            final[n] = initial[n]
        else:
            final[n] = _final_view(n, dump, before, initial.get(n))
    result = _diff_per_app(initial, final, gold)
    result.checks = run_checks(checks, final_message)
    result.success = result.success and all(c.passed for c in result.checks)
    return result


_UNTOUCHED_LIMIT = 256
"""Most (app, initial view, gold view) diffs of untouched apps kept by :func:`_diff_per_app`."""
_untouched: OrderedDict[tuple[str, int, int], tuple[Any, Any, JudgeResult]] = OrderedDict()


def _untouched_diff(name: str, view: Any, gold_view: Any) -> JudgeResult:
    """:func:`diff_states` of one app the agent left as it was (final view = initial view), kept
    per (app, initial view object, gold view object): both are the shared, never-modified views of
    :func:`comparable_app`, held here so their identities stay theirs."""
    key = (name, id(view), id(gold_view))
    with _app_cache_lock:
        hit = _untouched.get(key)
    if hit is not None and hit[0] is view and hit[1] is gold_view:
        return hit[2]
    result = diff_states({name: view}, {name: view}, {name: gold_view})
    with _app_cache_lock:
        _untouched[key] = (view, gold_view, result)
        while len(_untouched) > _UNTOUCHED_LIMIT:
            _untouched.popitem(last=False)
    return result


def _diff_per_app(initial: dict[str, Any], final: dict[str, Any], gold: dict[str, Any]) -> JudgeResult:
    """:func:`diff_states` of three ``{app: view}`` states, app by app: every path of app ``n``
    starts with ``/n/``, so the paths of one app are contiguous in sorted order and the sorted
    walk of the whole states is the apps' walks in the order of their ``/n/`` prefixes (the same
    counts and the same ``missed`` / ``misbehaved`` lists). An app whose final view is its initial
    view is diffed once per (initial view, gold view) (:func:`_untouched_diff`)."""
    names = set(initial) | set(final) | set(gold)
    total = recall = misbehave = 0
    missed: list[str] = []
    bad: list[str] = []
    for n in sorted(names, key=lambda n: f"/{_escape(str(n))}/"):
        if n in initial and n in gold and final.get(n, MISSING) is initial[n]:
            part = _untouched_diff(n, initial[n], gold[n])
        else:
            part = diff_states(*({n: s[n]} if n in s else {} for s in (initial, final, gold)))
        total, recall, misbehave = total + part.total, recall + part.recall, misbehave + part.misbehave
        missed += part.missed
        bad += part.misbehaved
    return _counted(total, recall, misbehave, missed, bad)


def judge_restored(
    initial_snapshot: dict[str, Any],
    final_snapshot: dict[str, Any],
    gold_snapshot: dict[str, Any],
    *,
    checks: Iterable[ExtraCheck | dict[str, Any]] = (),
    final_message: str = "",
) -> JudgeResult:
    """The judge as it was before :func:`judge` compared per app: the three worlds restored
    whole (``World.restore``) and compared (initial and gold cached by snapshot identity). Kept
    as the reference the per-app judge is tested against; same arguments and errors."""
    result = diff_states(
        shared_comparable_state(initial_snapshot),
        comparable_state(final_snapshot),
        shared_comparable_state(gold_snapshot),
    )
    result.checks = run_checks(checks, final_message)
    result.success = result.success and all(c.passed for c in result.checks)
    return result


__all__ = [
    "CheckResult",
    "ExtraCheck",
    "JudgeResult",
    "MISSING",
    "comparable_state",
    "shared_comparable_state",
    "diff_states",
    "flatten",
    "clear_judge_cache",
    "comparable_app",
    "judge",
    "judge_restored",
    "run_checks",
]
