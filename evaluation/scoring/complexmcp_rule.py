"""ComplexMCP's outcome rule (``complexmcp``), written from its description in their paper and
``benchmark/judge.py`` (commit 570c75b), not copied; and the rule as an mcpgym
:class:`~mcpgym.evaluation.records.scores.Outcome` (:func:`complexmcp_outcome`).

The judge walks the gold state (``gt_env``: every app's ``logout`` answer after the human
solved the task) beside the state before (``login``) and after (``logout``) the agent:

* a list in gold is walked index by index, up to the longest of the three lists (a missing
  element, or a side that is no list, is None); its elements keep the key of the list;
* a dict in gold is walked key by key over the keys of all three sides that are dicts (a side
  without the key gives None);
* anything else is a leaf, compared under the name of the key it sits under: a key in
  :data:`EXCLUDED_KEYS` (generated ids, timestamps) is skipped with all below it; ``content``
  compares by :func:`fuzzy_match`; every other key by equality (Python's ``==`` on the decoded
  JSON, so ``1 == 1.0``);
* a leaf where before equals gold counts as *misbehave* when after differs from before; a leaf
  where before differs from gold adds 1 to *total*, and 1 to *recall* when after equals gold.

A task is solved (*accuracy*) when ``recall == total`` and ``misbehave == 0``. Their
per-task rates (``run_benchmark.py``): completion ``recall / total`` (1 when ``total`` is 0)
and misbehave rate ``misbehave / total`` (``misbehave`` when ``total`` is 0), capped at 3.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from mcpgym.evaluation.records.scores import Outcome

EXCLUDED_KEYS: frozenset[str] = frozenset(
    {"timestamp", "mid", "moid", "cid", "gid", "sid", "tid", "caid", "aid", "bid", "brid", "ridoid", "nid"}
)
"""Keys whose values the rule skips, as ``judge.py`` defines them in effect. Its source lists
``"rid"`` and ``"oid"`` on two lines with no comma between them, so Python joins them into the
one key ``"ridoid"``: LightFlight's ``rid`` and LightStock's ``oid`` *are* compared. This
set keeps that, so that the numbers agree with theirs (docs/complexmcp.md, "The judge")."""

FUZZY_MIN_LENGTH = 10
"""A fuzzy text of at least this many characters also matches when it contains the other."""
FUZZY_MIN_SIMILARITY = 0.7
"""A fuzzy match needs a Levenshtein similarity above this (1 - distance / longer length)."""
MISBEHAVE_RATE_CAP = 3.0
"""Their per-task misbehave rate is capped at this."""


def levenshtein(a: str, b: str) -> int:
    """The edit distance (insertions, deletions, substitutions of one character each) of ``a`` and ``b``."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def similarity(a: str, b: str) -> float:
    """``1 - levenshtein(a, b) / max(len(a), len(b))``: 1.0 for equal texts, 0.0 for wholly different ones.

    Raises:
        ZeroDivisionError: for two empty texts (never reached from :func:`fuzzy_match`, which
            sees them equal first).
    """
    return 1 - levenshtein(a, b) / max(len(a), len(b))


def fuzzy_match(value: Any, gold: Any) -> bool:
    """The rule's text match, for the key ``content``: None matches only None; otherwise both
    are lower-cased and stripped and match when equal, when ``value`` has at least
    :data:`FUZZY_MIN_LENGTH` characters and contains ``gold``, or when their similarity is above
    :data:`FUZZY_MIN_SIMILARITY`. Not symmetric: the containment goes one way.

    Non-text values (never stored under ``content`` by the apps) compare by equality.
    """
    if value is None or gold is None:
        return value is None and gold is None
    if not isinstance(value, str) or not isinstance(gold, str):
        return bool(value == gold)
    v, g = value.lower().strip(), gold.lower().strip()
    return v == g or (len(v) >= FUZZY_MIN_LENGTH and g in v) or similarity(v, g) > FUZZY_MIN_SIMILARITY


def exact_match(value: Any, gold: Any) -> bool:
    """Equality of decoded JSON values (``1 == 1.0``, ``True == 1``, as Python compares them)."""
    return bool(value == gold)


COMPARERS: dict[str, Callable[[Any, Any], bool]] = {"content": fuzzy_match}
"""Key name -> how its leaves compare; every other key by :func:`exact_match`."""


class ComplexJudgement(BaseModel):
    """The rule's counts for one task (module docstring), with the leaf paths behind them.

    Attributes:
        total: leaves where gold differs from before. recall: of those, leaves after equals gold.
        misbehave: leaves gold kept as before that the agent changed.
        missed, misbehaved: up to 20 paths each (``LightShop/output/cart/0/cnt``).
    """

    total: int = Field(ge=0)
    recall: int = Field(ge=0)
    misbehave: int = Field(ge=0)
    missed: list[str] = Field(default_factory=list)
    misbehaved: list[str] = Field(default_factory=list)

    @property
    def solved(self) -> bool:
        """Accuracy's verdict: everything recalled and nothing misbehaved."""
        return self.recall == self.total and self.misbehave == 0

    @property
    def recall_rate(self) -> float:
        """Their completion rate: ``recall / total``, 1.0 when the task wants no change."""
        return self.recall / self.total if self.total else 1.0

    @property
    def misbehave_rate(self) -> float:
        """Their misbehave rate: ``misbehave / total`` (``misbehave`` when total is 0), capped at 3."""
        rate = self.misbehave / self.total if self.total else float(self.misbehave)
        return min(rate, MISBEHAVE_RATE_CAP)


MAX_PATHS = 20


def _at(items: Any, index: int) -> Any:
    return items[index] if isinstance(items, list) and index < len(items) else None


def _get(mapping: Any, key: str) -> Any:
    return mapping.get(key) if isinstance(mapping, dict) else None


class _Walk:
    """One judgement's counters while the gold state is walked."""

    def __init__(self, excluded: frozenset[str]) -> None:
        self.excluded = excluded
        self.total = self.recall = self.misbehave = 0
        self.missed: list[str] = []
        self.misbehaved: list[str] = []

    def node(self, before: Any, after: Any, gold: Any, key: str, path: str) -> None:
        if key in self.excluded:
            return
        if isinstance(gold, list):
            sizes = [len(gold)] + [len(x) for x in (before, after) if isinstance(x, list)]
            for i in range(max(sizes)):
                self.node(_at(before, i), _at(after, i), _at(gold, i), key, f"{path}/{i}")
        elif isinstance(gold, dict):
            keys = set(gold) | {k for side in (before, after) if isinstance(side, dict) for k in side}
            for sub in sorted(keys, key=str):
                self.node(_get(before, sub), _get(after, sub), _get(gold, sub), sub, f"{path}/{sub}")
        else:
            self.leaf(before, after, gold, key, path)

    def leaf(self, before: Any, after: Any, gold: Any, key: str, path: str) -> None:
        same = COMPARERS.get(key, exact_match)
        if same(before, gold):
            if not same(before, after):
                self.misbehave += 1
                if len(self.misbehaved) < MAX_PATHS:
                    self.misbehaved.append(path.lstrip("/"))
            return
        self.total += 1
        if same(after, gold):
            self.recall += 1
        elif len(self.missed) < MAX_PATHS:
            self.missed.append(path.lstrip("/"))


def judge_complexmcp(
    before: dict[str, Any], after: dict[str, Any], gold: dict[str, Any], *, excluded: frozenset[str] = EXCLUDED_KEYS
) -> ComplexJudgement:
    """Judge one task by ComplexMCP's rule (module docstring).

    Args:
        before, after, gold: app name -> that app's ``login`` / ``logout`` envelope
            (``{"status": "ok", "output": {...}}``), as their harness collects them.
        excluded: the keys skipped (default: :data:`EXCLUDED_KEYS`, theirs in effect).

    Returns:
        The counts, with the paths of the misses and misbehaviours.
    """
    walk = _Walk(excluded)
    walk.node(before, after, gold, "", "")
    return ComplexJudgement(
        total=walk.total, recall=walk.recall, misbehave=walk.misbehave, missed=walk.missed, misbehaved=walk.misbehaved
    )


# -- the rule as an mcpgym outcome -----------------------------------------------------------
# A trajectory of ``mcpgym run --suite complexmcp`` has ``metadata.outcome == "complexmcp"`` and
# keeps their states in its snapshots: ``initial_snapshot`` / ``final_snapshot`` /
# ``gold_snapshot`` are ``{"complexmcp": {app: envelope}}`` (the ``login`` answers, the
# ``logout`` answers, the task's ``gt_env``). Success is their accuracy (everything recalled,
# nothing misbehaved); recall, total and misbehave are their counts.

STATE_KEY = "complexmcp"
"""The key of a snapshot that holds ComplexMCP app states."""


def wrap_states(states: dict[str, Any]) -> dict[str, Any]:
    """A snapshot holding ComplexMCP's per-app states ``states``."""
    return {STATE_KEY: states}


def complexmcp_outcome(traj: Any) -> Outcome:
    """The rule's verdict on a trajectory's three states (module docstring); an outcome
    whose ``outcome_unavailable`` says which state is missing when one is."""
    states = {}
    for name in ("initial_snapshot", "final_snapshot", "gold_snapshot"):
        snap = getattr(traj, name)
        if not isinstance(snap, dict) or not isinstance(snap.get(STATE_KEY), dict):
            return Outcome(outcome_unavailable=f"ComplexMCP outcome: the trajectory has no {name} of the apps")
        states[name] = snap[STATE_KEY]
    verdict = judge_complexmcp(states["initial_snapshot"], states["final_snapshot"], states["gold_snapshot"])
    return Outcome(
        success=verdict.solved,
        recall=verdict.recall,
        total=verdict.total,
        misbehave=verdict.misbehave,
        missed=verdict.missed,
        misbehaved=verdict.misbehaved,
    )
