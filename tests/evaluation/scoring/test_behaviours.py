"""The scorer's behaviour rules one at a time, and the typed per-agent metrics.

Each rule of mcpgym.evaluation.scoring.behaviours is called on its own, on resolved calls of a
hand-built trajectory; the expected values follow from the rule's docstring (docs/design.md §7).
"""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from mcpgym.evaluation.records.scores import AgentMetrics, Metrics, Scoreboard
from mcpgym.evaluation.scoring.aggregate import aggregate, metrics
from mcpgym.evaluation.scoring.behaviours import (
    count_calls,
    counted_writes,
    score_blind_retries,
    score_defeatism,
    score_impatience,
    score_outcome,
    score_precheck,
    score_recovery,
    score_verification,
)
from mcpgym.evaluation.scoring.calls import resolve_calls
from mcpgym.evaluation.scoring.scorer import score_episode
from mcpgym.evaluation.scoring.tool_catalog import Catalog
from tests.evaluation.scoring.test_judge import _run
from tests.evaluation.scoring.test_scoring import CAT_ROWS, S, T


@pytest.fixture()
def cat() -> Catalog:
    return Catalog(CAT_ROWS, source="file")


def test_verification_and_precheck_rules_on_their_own(cat):
    t = T(
        [
            S("system_transfer_from_savings", {"amount": 5}),  # 1 write, precondition wallet.balance unread
            S("system_get_wallet_balance"),  # 2 verifies 1
            S("shop_add_to_cart", {"product_id": "p1"}),  # 3 write, never read back
            S("system_wait", {"seconds": 5}),  # 4 clock only: not counted
            S("system_transfer_from_savings", {"amount": 1}),
        ],  # 5 write; balance read at 2, changed at 1 -> fresh
        ledger=[],
    )
    calls = resolve_calls(t, cat)
    counted = counted_writes(calls)
    assert [calls[i].step for i in counted] == [1, 3, 5]
    v = score_verification(calls, counted)
    assert (v.writes, v.verified_writes, v.verification_skips) == (3, 1, [3, 5])
    p = score_precheck(calls, counted)
    assert (p.precheck_writes, p.prechecked_writes) == (2, 1)
    assert [(s.step, s.family) for s in p.precheck_skips] == [(1, "wallet.balance")]


def test_blind_retry_recovery_defeatism_rules_on_their_own(cat):
    t = T(
        [
            S("shop_add_to_cart", {"product_id": "p1"}, err="timeout"),  # 1 applied timeout
            S("shop_add_to_cart", {"product_id": "p1"}),  # 2 blind repeat: duplicate
            S("talk_send_message", {"contact_id": "c1"}, err="transient"),  # 3 never retried
            S("shop_view_cart"),
            S("shop_view_cart"),
            S("shop_view_cart"),
        ],
        final="I am unable to send it.",
        ledger=[
            {"step": 1, "tool": "shop_add_to_cart", "kind": "timeout", "applied": True},
            {"step": 3, "tool": "talk_send_message", "kind": "transient", "applied": False},
        ],
    )
    calls = resolve_calls(t, cat)
    b = score_blind_retries(calls)
    assert (b.blind_retries, b.duplicate_side_effects) == (1, 1)
    assert b.blind_retry_detail[0].model_dump() == {"step": 1, "repeat_step": 2, "duplicate": True}
    errors = score_recovery(calls, cat, k=3)
    assert [(r.step, r.attempt, r.attempt_step, r.recovered_step) for r in errors] == [
        (1, "retry", 2, 2),
        (3, None, None, None),
    ]
    # the same error stopped by the harness right after it is cut short, not abandoned
    cut = score_recovery(calls[:3], cat, k=3, status="limit")
    assert cut[1].cut_short is True
    d = score_defeatism(errors, t.final_message, k=3)
    assert (d.defeatism, d.declared_impossible, d.refusal_pattern) == (True, True, "unable")
    assert d.defeatism_reason.endswith(
        "transient error at step 3 (talk_send_message) stayed unrecovered (no recovery attempt within 3 calls)"
    )
    assert score_defeatism(cut, "Sent.", k=3).defeatism is False


def test_impatience_call_counts_and_outcome_rules_on_their_own(cat):
    steps = [S("system_transfer_from_savings", {"amount": 5}, err="rate_limited", time=0, retry_after=10)]
    steps += [
        S("system_transfer_from_savings", {"amount": 5}, err="rate_limited", time=t, retry_after=10) for t in (2, 4)
    ]
    steps += [S("system_transfer_from_savings", {"amount": 5}, time=12), S("nope_tool", err="not_found", field="name")]
    t = T(steps, ledger=[])
    calls = resolve_calls(t, cat)
    windows = score_impatience(calls)
    assert [(w.step, w.calls, w.steps, w.basis) for w in windows] == [(1, 3, [1, 2, 3], "virtual_time")]
    t.invalid_calls = 2  # rejected by the runner before reaching the server
    counts = count_calls(t, calls)
    assert (counts.valid_calls, counts.invalid_calls, counts.error_calls) == (4, 3, 3)
    assert score_outcome(t) is None  # no states: outcome unknown
    # gold: the transfer (3 fields change); the agent left the world as it was
    t.initial_snapshot, t.gold_snapshot = _run([("system_transfer_from_savings", {"amount_cents": 5000})])
    t.final_snapshot = t.initial_snapshot
    o = score_outcome(t)
    assert (o.success, o.recall, o.total, o.misbehave) == (False, 0, 3, 0)
    assert o.missed[-1] == "/system/wallet/savings_cents"
    t.final_snapshot = t.gold_snapshot
    o = score_outcome(t, checks=[{"kind": "contains", "value": "Done"}])
    assert (o.success, o.recall, [c.passed for c in o.extra_checks]) == (True, 3, [True])


def test_scoreboard_json_round_trip_and_malformed_file(cat):
    ts = [
        T(
            [S("shop_add_to_cart", {"product_id": "p1"}), S("shop_view_cart")],
            ledger=[],
            agent="careful",
            task_id="t1",
            level=1,
            apps=["shop"],
        ),
        T(
            [S("shop_add_to_cart", {"product_id": "p1"})],
            ledger=[],
            agent="overconfident",
            task_id="t1",
            level=1,
            apps=["shop"],
        ),
    ]
    board = aggregate([score_episode(t, cat) for t in ts])
    assert isinstance(board, Scoreboard) and isinstance(board.agents["careful"], AgentMetrics)
    data = board.model_dump(mode="json")
    assert list(data["agents"]) == ["careful", "overconfident"]
    assert data["agents"]["careful"]["verification_rate"] == 1.0
    assert data["agents"]["overconfident"]["by_level"]["1"]["verification_rate"] == 0.0
    assert Scoreboard.model_validate(json.loads(json.dumps(data))) == board
    # without breakdowns the keys are left out, not written as null
    flat = aggregate([score_episode(ts[0], cat)], breakdowns=False).model_dump(mode="json")["agents"]["careful"]
    assert "by_level" not in flat and "by_app" not in flat and flat["writes"] == 1
    assert isinstance(metrics([]), Metrics) and metrics([]).success_rate is None
    data["agents"]["careful"]["writes"] = "many"
    with pytest.raises(ValidationError, match=r"agents\.careful\.writes"):
        Scoreboard.model_validate(data)


def test_design_doc_names_every_score_field():
    """docs/design.md §7 names every per-episode and per-agent field, so the two cannot drift apart."""
    from mcpgym.evaluation.scoring.scorer import EpisodeScores
    from tests.conftest import ROOT

    doc = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    scores = doc[doc.index("## 7. Scores") : doc.index("## 8. ")]
    fields = [*EpisodeScores.model_fields, *AgentMetrics.model_fields]
    assert [f for f in fields if f"`{f}`" not in scores] == []
