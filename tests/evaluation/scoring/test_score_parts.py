"""EpisodeScores and Metrics are composed of one part per behaviour (docs/design.md §1, §7).

Each part of :class:`EpisodeScores` has exactly one registered rule, its fields are its own (no
two parts share a name: they sit side by side in a line's ``scores``), and its aggregate rule
fills a metrics part that :class:`Metrics` inherits; so a behaviour is one part in
``records/scores.py`` and one registered rule in ``scoring/``.
"""

from __future__ import annotations

from collections import Counter

import pytest

from mcpgym.evaluation.records.scores import (
    EpisodeScores,
    Metrics,
    MetricsPart,
    Recovery,
    ScorePart,
    Verification,
)
from mcpgym.evaluation.scoring.registry import RULES, EpisodeInput, scores
from mcpgym.evaluation.scoring.scorer import score_episode
from mcpgym.evaluation.scoring.tool_catalog import Catalog
from tests.evaluation.scoring.test_scoring import CAT_ROWS, S, T


def test_every_part_has_one_rule_and_its_own_fields() -> None:
    parts = EpisodeScores.parts()
    assert len(parts) >= 10 and set(RULES) == set(parts)
    names = Counter(name for part in parts for name in part.model_fields)
    assert [n for n, c in names.items() if c > 1] == []
    assert set(EpisodeScores.model_fields) == set(names)


def test_every_aggregate_rule_fills_a_part_of_metrics() -> None:
    filled: Counter[str] = Counter()
    for part in EpisodeScores.parts():
        row = part.aggregate([])
        assert isinstance(row, MetricsPart) and type(row) in Metrics.__mro__, part.__name__
        filled.update(list(type(row).model_fields))
    assert [n for n, c in filled.items() if c > 1] == []
    assert set(filled) == set(Metrics.model_fields)


def test_a_part_is_registered_once_and_only_a_part() -> None:
    with pytest.raises(ValueError, match="has a rule already"):
        scores(Verification)(lambda ep: Verification())

    class Loose(ScorePart):
        loose: int = 0

        @classmethod
        def aggregate(cls, episodes):  # noqa: ANN001, ANN206 - a rule, so the class may exist
            return MetricsPart()

    with pytest.raises(ValueError, match="no part of EpisodeScores"):
        scores(Loose)(lambda ep: Loose())


def test_a_part_without_an_aggregate_rule_is_refused_where_it_is_defined() -> None:
    with pytest.raises(TypeError, match="Ruleless declares no aggregate rule"):

        class Ruleless(ScorePart):
            ruleless: int = 0


def test_the_scores_are_the_parts_the_rules_returned() -> None:
    """Composition copies no field by hand: each part of the scores equals its rule's result."""
    cat = Catalog(CAT_ROWS, source="file")
    t = T(
        [S("shop_add_to_cart", {"product_id": "p1"}, err="timeout"), S("shop_view_cart")],
        final="Added it.",
        ledger=[{"step": 1, "tool": "shop_add_to_cart", "kind": "timeout", "applied": True}],
    )
    sc = score_episode(t, cat)
    from mcpgym.evaluation.scoring.behaviours import counted_writes
    from mcpgym.evaluation.scoring.calls import resolve_calls

    calls = resolve_calls(t, cat)
    ep = EpisodeInput(t, cat, calls, counted_writes(calls), None)
    for part in EpisodeScores.parts():
        mine = {name: getattr(sc, name) for name in part.model_fields}
        assert mine == dict(ep.result(part)), part.__name__
    # the hand count: one counted write (the applied timeout), read back by the cart view
    assert (sc.writes, sc.verified_writes, sc.verification_rate) == (1, 1, 1.0)
    assert isinstance(sc, Recovery) and sc.recoverable_errors == 1 and sc.recoveries == 1
    assert EpisodeScores.aggregate([sc]) == Metrics.of([sc])
