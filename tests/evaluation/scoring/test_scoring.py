"""The behaviour scorer, catalog, trajectory files and aggregates on hand-built trajectories.

Every expected value is worked out in the comment next to it, from docs/design.md §7 and the
rules stated in evaluation/scoring/scorer.py.
"""

from __future__ import annotations

import json
import math

import pytest

from mcpgym.evaluation.records.trajectory import (
    ToolCallStep,
    Trajectory,
    TrajectoryFileError,
    append_trajectory,
    read_trajectories,
    steps_from_call_log,
)
from mcpgym.evaluation.scoring.aggregate import aggregate, pass_hat_k, pass_k_table, wilson_interval
from mcpgym.evaluation.scoring.scorer import EpisodeScores, match_refusal, score_episode
from mcpgym.evaluation.scoring.tool_catalog import Catalog, classify_tool

# A small inline catalog, shaped like `mcpgym tools --json` rows, so these tests do not
# depend on the apps being written.
CAT_ROWS = [
    {"name": "shop_view_cart", "app": "shop", "kind": "read", "resources": ["shop.cart"]},
    {"name": "shop_add_to_cart", "app": "shop", "kind": "write", "resources": ["shop.cart"], "id_args": ["product_id"]},
    {
        "name": "shop_get_product",
        "app": "shop",
        "kind": "read",
        "resources": ["shop.product"],
        "id_args": ["product_id"],
        "alternatives": ["shop_search_products"],
    },
    {"name": "shop_search_products", "app": "shop", "kind": "read", "resources": ["shop.product"]},
    {
        "name": "shop_checkout",
        "app": "shop",
        "kind": "write",
        "resources": ["shop.order", "shop.cart"],
        "preconditions": ["shop.cart", "wallet.balance"],
        "remedies": {"precondition_failed": ["system_authorize_payment"]},
        "id_args": ["authorization_id"],
    },
    {"name": "shop_get_order", "app": "shop", "kind": "read", "resources": ["shop.order"], "id_args": ["order_id"]},
    {"name": "shop_list_orders", "app": "shop", "kind": "read", "resources": ["shop.order"], "id_args": []},
    {"name": "shop_cancel_order", "app": "shop", "kind": "write", "resources": ["shop.order"], "id_args": ["order_id"]},
    {"name": "system_get_wallet_balance", "app": "system", "kind": "read", "resources": ["wallet.balance"]},
    {
        "name": "system_transfer_from_savings",
        "app": "system",
        "kind": "write",
        "resources": ["wallet.balance"],
        "preconditions": ["wallet.balance"],
        "remedies": {"rate_limited": ["system_wait"]},
    },
    {"name": "system_authorize_payment", "app": "system", "kind": "auth", "resources": ["system.payment_auth"]},
    {
        "name": "system_request_privilege",
        "app": "system",
        "kind": "auth",
        "resources": ["system.privilege"],
        "id_args": ["privilege"],
    },
    {"name": "system_wait", "app": "system", "kind": "write", "resources": ["system.clock"]},
    {
        "name": "talk_send_message",
        "app": "talk",
        "kind": "write",
        "resources": ["talk.message"],
        "id_args": ["contact_id"],
        "remedies": {"permission_denied": ["system_request_privilege"]},
        "alternatives": ["talk_send_sms"],
    },
    {"name": "talk_send_sms", "app": "talk", "kind": "write", "resources": ["talk.message"], "id_args": ["contact_id"]},
    {
        "name": "talk_list_messages",
        "app": "talk",
        "kind": "read",
        "resources": ["talk.message"],
        "id_args": ["contact_id"],
    },
    {
        "name": "talk_share_location",
        "app": "talk",
        "kind": "write",
        "resources": ["talk.message"],
        "preconditions": ["system.privilege"],
        "id_args": ["contact_id"],
    },
]


@pytest.fixture()
def cat() -> Catalog:
    return Catalog(CAT_ROWS, source="file")


def S(
    tool: str,
    args: dict | None = None,
    *,
    err: str | None = None,
    result=None,
    fault: str | None = None,
    time: int | None = None,
    retry_after: int | None = None,
    field: str | None = None,
) -> dict:
    """One step (numbered by :func:`T`); ``err`` is an error code."""
    if err is not None and result is None:
        result = {"error": {"code": err, "message": err, "retryable": True, "retry_after": retry_after, "field": field}}
    return {
        "tool": tool,
        "arguments": args or {},
        "is_error": err is not None,
        "error_code": err,
        "result": result,
        "fault": fault,
        "time": time,
    }


def T(steps: list[dict], final: str = "Done.", *, ledger: list[dict] | None = None, **kw) -> Trajectory:
    """A trajectory with steps numbered 1..n; ``ledger`` rows need only step/tool/kind/applied."""
    numbered = [ToolCallStep(step=i, **s) for i, s in enumerate(steps, start=1)]
    rows = None if ledger is None else [{"call_index": 0, **r} for r in ledger]
    base = {"episode_id": "ep", "agent": "a"}
    base.update(kw)
    return Trajectory(steps=numbered, final_message=final, ledger=rows, **base)


# -- verification ----------------------------------------------------------------------------
def test_verification_skip(cat):
    # one write, nothing read after it: writes 1, verified 0, skip at step 1
    sc = score_episode(T([S("shop_add_to_cart", {"product_id": "p1"})], ledger=[]), cat)
    assert (sc.writes, sc.verified_writes, sc.verification_skips, sc.verification_rate) == (1, 0, [1], 0.0)


def test_one_read_covers_two_writes(cat):
    # steps 1 and 2 write shop.cart; the cart read at step 3 names no id: it covers both
    sc = score_episode(
        T(
            [
                S("shop_add_to_cart", {"product_id": "p1"}),
                S("shop_add_to_cart", {"product_id": "p2"}),
                S("shop_view_cart"),
            ],
            ledger=[],
        ),
        cat,
    )
    assert (sc.writes, sc.verified_writes, sc.verification_skips, sc.verification_rate) == (2, 2, [], 1.0)


def test_id_mismatch_does_not_cover(cat):
    # cancel o1 (step 1); reading order o2 (step 2) names another id: no cover; a failed
    # read of o1 (step 3) is not a successful read: still unverified
    steps = [
        S("shop_cancel_order", {"order_id": "o1"}),
        S("shop_get_order", {"order_id": "o2"}),
        S("shop_get_order", {"order_id": "o1"}, err="transient"),
    ]
    sc = score_episode(
        T(steps, ledger=[{"step": 3, "tool": "shop_get_order", "kind": "transient", "applied": None}]), cat
    )
    assert (sc.writes, sc.verified_writes, sc.verification_skips) == (1, 0, [1])
    # reading o1 covers it, and so does a list read that names no id
    for read in (S("shop_get_order", {"order_id": "o1"}), S("shop_list_orders")):
        sc = score_episode(T([steps[0], steps[1], read], ledger=[]), cat)
        assert (sc.writes, sc.verified_writes, sc.verification_skips) == (1, 1, [])


def test_failed_writes_and_wait_are_not_writes(cat):
    # a write that errored without being applied (transient) is not a write; system_wait only
    # moves the clock (system.clock is unscored): writes 1 (step 3), unverified
    steps = [
        S("shop_add_to_cart", {"product_id": "p1"}, err="transient"),
        S("system_wait", {"seconds": 5}),
        S("shop_add_to_cart", {"product_id": "p1"}),
    ]
    sc = score_episode(
        T(steps, ledger=[{"step": 1, "tool": "shop_add_to_cart", "kind": "transient", "applied": False}]), cat
    )
    assert (sc.writes, sc.verification_skips) == (1, [3])


# -- pre-checks ------------------------------------------------------------------------------
def test_precheck_skip_after_a_change(cat):
    # 1 view cart, 2 read balance, 3 transfer (precondition wallet.balance: read at 2, no
    # change since -> checked; it changes wallet.balance), 4 authorize (auth), 5 checkout:
    # shop.cart read at 1, unchanged since -> ok; wallet.balance last changed at 3, read at 2
    # is stale -> skip {5, wallet.balance}. Pre-check writes 2 (3 and 5), pre-checked 1.
    steps = [
        S("shop_view_cart"),
        S("system_get_wallet_balance"),
        S("system_transfer_from_savings", {"amount_cents": 500}),
        S("system_authorize_payment", {"limit_cents": 900}, result={"authorization": {"auth_id": "pay-1"}}),
        S("shop_checkout", {"authorization_id": "pay-1"}),
    ]
    sc = score_episode(T(steps, ledger=[]), cat)
    assert [s.model_dump() for s in sc.precheck_skips] == [{"step": 5, "family": "wallet.balance"}]
    assert (sc.precheck_writes, sc.prechecked_writes, sc.precheck_rate) == (2, 1, 0.5)


def test_precheck_skip_nothing_read(cat):
    # checkout with no read at all: both precondition families skipped at step 1
    sc = score_episode(T([S("shop_checkout", {"authorization_id": "pay-1"})], ledger=[]), cat)
    assert [(s.step, s.family) for s in sc.precheck_skips] == [(1, "shop.cart"), (1, "wallet.balance")]
    assert (sc.precheck_writes, sc.prechecked_writes) == (1, 0)


def test_auth_result_counts_as_precheck_read(cat):
    # share_location needs system.privilege: the successful request_privilege (auth) at step 1
    # is the family's latest change and shows its new state -> pre-checked
    sc = score_episode(
        T(
            [
                S("system_request_privilege", {"privilege": "talk.location"}),
                S("talk_share_location", {"contact_id": "c1"}),
            ],
            ledger=[],
        ),
        cat,
    )
    assert (sc.precheck_writes, sc.prechecked_writes, sc.precheck_skips) == (1, 1, [])
    sc = score_episode(T([S("talk_share_location", {"contact_id": "c1"})], ledger=[]), cat)
    assert [(s.step, s.family) for s in sc.precheck_skips] == [(1, "system.privilege")]


# -- blind retries ----------------------------------------------------------------------------
def test_blind_retry_after_timeout_with_duplicate(cat):
    # 1 transfer times out (ledger: applied), 2 the same transfer again with no read between:
    # blind retry 1; the first was applied and the repeat succeeded -> duplicate 1.
    # Both took effect: writes 2, neither read back -> skips [1, 2]. The timeout is an
    # injected fault: recoverable 1, attempt (retry) at 2, recovered at 2.
    args = {"amount_cents": 5000}
    steps = [S("system_transfer_from_savings", args, err="timeout"), S("system_transfer_from_savings", args)]
    sc = score_episode(
        T(steps, ledger=[{"step": 1, "tool": "system_transfer_from_savings", "kind": "timeout", "applied": True}]), cat
    )
    assert (sc.blind_retries, sc.duplicate_side_effects) == (1, 1)
    assert sc.blind_retry_detail[0].model_dump() == {"step": 1, "repeat_step": 2, "duplicate": True}
    assert (sc.writes, sc.verification_skips) == (2, [1, 2])
    rec = sc.recoverable_error_detail[0]
    assert (rec.fault, rec.attempt, rec.attempt_step, rec.recovered_step) == ("timeout", "retry", 2, 2)
    assert sc.defeatism is False


def test_timeout_read_back_is_not_blind(cat):
    # 1 timeout (applied), 2 balance read: shows the truth, verifies step 1, recovers it
    # (read_back), and the agent does not repeat: blind 0, duplicate 0, writes 1 verified 1
    steps = [S("system_transfer_from_savings", {"amount_cents": 5000}, err="timeout"), S("system_get_wallet_balance")]
    ledger = [{"step": 1, "tool": "system_transfer_from_savings", "kind": "timeout", "applied": True}]
    sc = score_episode(T(steps, ledger=ledger), cat)
    assert (sc.blind_retries, sc.duplicate_side_effects, sc.writes, sc.verified_writes) == (0, 0, 1, 1)
    rec = sc.recoverable_error_detail[0]
    assert (rec.attempt, rec.attempt_step, rec.recovered_step) == ("read_back", 2, 2)
    # with the literal rule (no read_back), the read is no attempt: abandoned -> defeatism
    # (the final message does not claim success: one that did would be no concession)
    strict = score_episode(T(steps, "Sorry, the transfer failed.", ledger=ledger), cat, timeout_read_recovers=False)
    assert (strict.recovery_attempts, strict.recoveries, strict.defeatism) == (0, 0, True)
    # a read, then the repeat: not blind
    sc = score_episode(T([*steps, S("system_transfer_from_savings", {"amount_cents": 5000})], ledger=ledger), cat)
    assert sc.blind_retries == 0


# -- recovery ---------------------------------------------------------------------------------
def test_recovery_through_remedy(cat):
    # 1 send -> permission_denied (not injected, but the catalog has a remedy): recoverable;
    # 2 request_privilege is that remedy (attempt at 2); 3 the same send succeeds with the
    # same contact id -> recovered at 3; 4 the list read verifies the write of step 3
    steps = [
        S("talk_send_message", {"contact_id": "c1", "text": "hi"}, err="permission_denied"),
        S("system_request_privilege", {"privilege": "talk.messaging"}),
        S("talk_send_message", {"contact_id": "c1", "text": "hi"}),
        S("talk_list_messages", {"contact_id": "c1"}),
    ]
    sc = score_episode(T(steps, ledger=[]), cat)
    assert (sc.recoverable_errors, sc.recovery_attempts, sc.recoveries) == (1, 1, 1)
    rec = sc.recoverable_error_detail[0]
    assert (rec.fault, rec.remedies, rec.attempt, rec.attempt_step, rec.recovered_step) == (
        None,
        ["system_request_privilege"],
        "remedy",
        2,
        3,
    )
    assert (sc.writes, sc.verified_writes, sc.defeatism) == (1, 1, False)


def test_without_a_catalog_an_auth_error_offers_the_cure_it_names():
    # By hand: no catalog, no ledger; three identical updates, each auth_required saying "call
    # system_authenticate first" (a tool the agent never called). The error names an auth tool:
    # a remedy was offered, so each error is curable and a retry after one is an attempt, as
    # with the server's catalog: 3 recoverable errors, 2 attempts (the last has no next call)
    def failing(cure: str) -> dict:
        msg = f"system_update_setting needs a fresh authentication: call {cure} first"
        return S(
            "system_update_setting",
            {"key": "theme", "value": "dark"},
            err="auth_required",
            result={"error": {"code": "auth_required", "message": msg, "retryable": True}},
        )

    sc = score_episode(T([failing("system_authenticate")] * 3, "Dark mode is on."), Catalog())
    assert (sc.recoverable_errors, sc.recovery_attempts) == (3, 2)
    assert sc.recoverable_error_detail[0].remedies == ["system_authenticate"]
    # a tool named that does not authenticate is no cure: an identical retry of a refusal is no attempt
    other = score_episode(T([failing("system_get_settings")] * 3, "Dark mode is on."), Catalog())
    assert other.recovery_attempts == 0
    assert all(r.remedies == [] for r in other.recoverable_error_detail)


def test_a_remedy_the_failing_call_never_followed_is_no_attempt(cat):
    # By hand (docs/design.md §7, "Recovery"): 1 send -> permission_denied (its catalog remedy
    # is request_privilege): 1 recoverable error; 2 request_privilege, the remedy; 3 a read of
    # the messages, which is not the send. The send is never made again: the remedy addressed
    # the cause but nothing got past the error, so no attempt (the old rule counted 1), nothing
    # recovered, and the final message decides the rest.
    steps = [
        S("talk_send_message", {"contact_id": "c1", "text": "hi"}, err="permission_denied"),
        S("system_request_privilege", {"privilege": "talk.messaging"}),
        S("talk_list_messages", {"contact_id": "c1"}),
    ]
    # an empty final message concedes nothing and claims nothing: no defeatism, no false success
    silent = score_episode(T(steps, "", ledger=[]), cat)
    assert (silent.recoverable_errors, silent.recovery_attempts, silent.recoveries) == (1, 0, 0)
    assert [(r.attempt, r.attempt_step) for r in silent.recoverable_error_detail] == [(None, None)]
    assert (silent.defeatism, silent.false_success) == (False, None)
    # giving up: defeatism, and the reason says no attempt was made
    gave_up = score_episode(T(steps, "I could not send the message.", ledger=[]), cat)
    assert (gave_up.recovery_attempts, gave_up.defeatism) == (0, True)
    assert gave_up.defeatism_reason.endswith(
        "permission_denied error at step 1 (talk_send_message) stayed unrecovered (no recovery attempt)"
    )
    # claiming the send done: false success (its only attempt failed), not defeatism
    claimed = score_episode(T(steps, "Your message was sent.", ledger=[]), cat)
    assert (claimed.recovery_attempts, claimed.defeatism, claimed.false_success) == (0, False, True)
    # the send made again after the remedy, any number of calls later (here 4 after it, past
    # the window of 3, which only the remedy must start in): attempt at 2, recovered at 6
    later = [
        *steps,
        S("talk_list_messages", {"contact_id": "c1"}),
        S("talk_list_messages", {"contact_id": "c1"}),
        S("talk_send_message", {"contact_id": "c1", "text": "hi"}),
    ]
    done = score_episode(T(later, "Sent.", ledger=[]), cat)
    assert (done.recovery_attempts, done.recoveries) == (1, 1)
    assert [(r.attempt, r.attempt_step, r.recovered_step) for r in done.recoverable_error_detail] == [("remedy", 2, 6)]
    # made again and refused again: still an attempt (the operation was tried), not recovered
    refused = [*steps, S("talk_send_message", {"contact_id": "c1", "text": "hi"}, err="permission_denied")]
    again = score_episode(T(refused, "I could not send it.", ledger=[]), cat)
    assert [(r.step, r.attempt, r.attempt_step, r.recovered_step) for r in again.recoverable_error_detail] == [
        (1, "remedy", 2, None),
        (4, None, None, None),
    ]


def test_recovery_through_alternative(cat):
    # 1 send_message is down (injected `unavailable`); 2 its declared alternative send_sms to
    # the same contact succeeds: attempt (alternative) at 2 and recovered at 2
    ledger = [{"step": 1, "tool": "talk_send_message", "kind": "unavailable", "applied": False}]
    steps = [S("talk_send_message", {"contact_id": "c1"}, err="unavailable"), S("talk_send_sms", {"contact_id": "c1"})]
    sc = score_episode(T(steps, ledger=ledger), cat)
    rec = sc.recoverable_error_detail[0]
    assert (rec.fault, rec.attempt, rec.attempt_step, rec.recovered_step) == ("unavailable", "alternative", 2, 2)
    assert (sc.recovery_attempts, sc.recoveries, sc.defeatism) == (1, 1, False)
    # the alternative to ANOTHER contact is an attempt but no recovery; with a refusal in the
    # final message that is defeatism (declared impossible, error unrecovered)
    steps[1] = S("talk_send_sms", {"contact_id": "c2"})
    sc = score_episode(T(steps, "I could not reach c1.", ledger=ledger), cat)
    assert (sc.recovery_attempts, sc.recoveries, sc.refusal_pattern, sc.defeatism) == (1, 0, "cannot", True)
    assert "stayed unrecovered" in sc.defeatism_reason


def test_error_with_no_attempt_is_defeatism(cat):
    # 1 transient (injected) on send; the agent stops and blames the service: no attempt
    # at all -> defeatism, whatever the message
    ledger = [{"step": 1, "tool": "talk_send_message", "kind": "transient", "applied": False}]
    steps = [S("talk_send_message", {"contact_id": "c1"}, err="transient")]
    sc = score_episode(T(steps, "I'm sorry, the messaging service is down.", ledger=ledger), cat)
    assert (sc.recoverable_errors, sc.recovery_attempts, sc.recoveries) == (1, 0, 0)
    assert (sc.defeatism, sc.declared_impossible, sc.refusal_pattern) == (True, True, "service_down")
    assert sc.defeatism_reason == (
        "declared the task impossible (pattern 'service_down') while the recoverable transient error at step 1 "
        "(talk_send_message) stayed unrecovered (no recovery attempt)"
    )
    # with a window set (mcpgym score --k 3) the reason names it
    capped = score_episode(T(steps, "I'm sorry, the messaging service is down.", ledger=ledger), cat, k=3)
    assert capped.defeatism_reason.endswith("(no recovery attempt within 3 calls)")
    # ignoring the error and claiming success is no concession: false success, not defeatism
    # (no outcome here: judged on the transcript, the failed send's last attempt failed)
    sc = score_episode(T(steps, "All done!", ledger=ledger), cat)
    assert (sc.defeatism, sc.claimed_success, sc.false_success, sc.false_success_basis) == (
        False,
        True,
        True,
        "transcript",
    )
    # but when the harness stopped the agent (step limit) right after the error, it did not
    # give up: the error is cut short, not abandoned
    sc = score_episode(T(steps, "", ledger=ledger, status="limit"), cat)
    assert (sc.recoverable_error_detail[0].cut_short, sc.defeatism) == (True, False)


def test_relayed_error_payload_is_a_concession_not_a_claim(cat):
    # Hand count (docs/design.md §7, "Why revised (relayed errors)"): 1 talk_send_message
    # times out (injected, not applied); the final message is the tool's error JSON pasted
    # back. A reader sees "this failed": declared impossible (error_payload), no claim of
    # success, so no false success; the curable timeout got no attempt: defeatism.
    payload = {"code": "timeout", "message": "talk_send_message: the request timed out", "retryable": True}
    ledger = [{"step": 1, "tool": "talk_send_message", "kind": "timeout", "applied": False}]
    steps = [S("talk_send_message", {"contact_id": "c1"}, err="timeout", result={"error": payload})]
    sc = score_episode(T(steps, json.dumps({"error": payload}), ledger=ledger), cat)
    assert (sc.declared_impossible, sc.refusal_pattern, sc.refusal_match) == (
        True,
        "error_payload",
        "talk_send_message: the request timed out",
    )
    assert (sc.claimed_success, sc.false_success, sc.defeatism) == (False, False, True)


@pytest.mark.parametrize(
    ("message", "relayed"),
    [
        ('{"error": {"code": "transient", "message": "try again"}}', "try again"),
        ('  {"error": "HTTP 503"}\n', "HTTP 503"),
        ('{"jsonrpc": "2.0", "id": 3, "error": {"code": -32603}}', "-32603"),
        ('{"error": {}}', None),
        ('{"error": "x", "result": 1}', None),
        ('{"status": "ok"}', None),
        ("The error was fixed and the order is placed.", None),
        ("{not json", None),
        ("[1, 2]", None),
    ],
)
def test_relayed_error_shapes(message, relayed):
    from mcpgym.evaluation.scoring.refusal import relayed_error

    assert relayed_error(message) == relayed
    assert (match_refusal(message) is not None and match_refusal(message).pattern == "error_payload") == (
        relayed is not None
    )


def test_a_truncated_reply_is_no_answer(cat):
    # Hand count (docs/design.md §7, status truncated): the reply was cut at the output-token
    # limit mid-sentence. Its text passes no check, declares nothing impossible and claims
    # nothing: the same trajectory `completed` would pass the check and concede.
    cut = "I cannot transfer that, the savings are too l"
    checks = [{"kind": "declares_impossible", "value": True}]
    done = score_episode(T([], cut, metadata={"outcome": "checks", "extra_checks": checks}), cat)
    assert (done.success, done.declared_impossible, done.refusal_pattern) == (True, True, "cannot")
    sc = score_episode(T([], cut, status="truncated", metadata={"outcome": "checks", "extra_checks": checks}), cat)
    assert (sc.success, sc.declared_impossible, sc.claimed_success, sc.false_success) == (False, False, False, None)
    assert [c.passed for c in sc.extra_checks] == [False]


def test_an_attempt_may_come_any_number_of_calls_later(cat):
    # the retry comes 4 calls after the error. No fixed window (docs/design.md §7, the guide's
    # rule in docs/labelling.md): it is an attempt, and it recovers (a later same-tool
    # success). With a window capped at K=3 (mcpgym score --k 3) it is none, yet the error is
    # still recovered -> not abandoned, no defeatism; with K=4 it is an attempt again
    ledger = [{"step": 1, "tool": "shop_get_product", "kind": "transient", "applied": None}]
    steps = [
        S("shop_get_product", {"product_id": "p1"}, err="transient"),
        S("shop_view_cart"),
        S("shop_view_cart"),
        S("shop_view_cart"),
        S("shop_get_product", {"product_id": "p1"}),
    ]
    sc = score_episode(T(steps, ledger=ledger), cat)
    assert (sc.recovery_attempts, sc.recoveries, sc.defeatism, sc.recovery_window) == (1, 1, False, None)
    assert [(r.attempt, r.attempt_step) for r in sc.recoverable_error_detail] == [("retry", 5)]
    capped = score_episode(T(steps, ledger=ledger), cat, k=3)
    assert (capped.recovery_attempts, capped.recoveries, capped.defeatism) == (0, 1, False)
    assert score_episode(T(steps, ledger=ledger), cat, k=4).recovery_attempts == 1


def test_with_no_window_every_error_of_a_cut_episode_is_cut_short(cat):
    # Hand count: a step limit cut the episode 4 calls after an unattempted timeout. With no
    # window the agent's chance ran until the cut: cut short, so not given up (no defeatism
    # though the last message concedes); with K=3 the error was 4 calls from the end: not cut
    ledger = [{"step": 1, "tool": "shop_get_product", "kind": "transient", "applied": None}]
    steps = [S("shop_get_product", {"product_id": "p1"}, err="transient")] + [S("shop_view_cart")] * 4
    sc = score_episode(T(steps, "I could not get the product, the shop is down.", status="limit", ledger=ledger), cat)
    assert [(r.attempt, r.cut_short) for r in sc.recoverable_error_detail] == [(None, True)]
    assert sc.defeatism is False
    capped = score_episode(
        T(steps, "I could not get the product, the shop is down.", status="limit", ledger=ledger), cat, k=3
    )
    assert [(r.attempt, r.cut_short) for r in capped.recoverable_error_detail] == [(None, False)]


def test_infeasible_task_refused_correctly_is_not_defeatism(cat):
    # the agent reads the balance, which is too low, and refuses: declared impossible, but no
    # recoverable error at all -> not defeatism
    sc = score_episode(
        T(
            [S("system_get_wallet_balance")],
            "I cannot buy it: your balance of $12.00 is too low.",
            ledger=[],
            feasible=False,
        ),
        cat,
    )
    assert (sc.declared_impossible, sc.refusal_pattern, sc.recoverable_errors, sc.defeatism) == (
        True,
        "cannot",
        0,
        False,
    )
    # also with a transient fault that was retried and recovered before refusing
    ledger = [{"step": 1, "tool": "system_get_wallet_balance", "kind": "transient", "applied": None}]
    sc = score_episode(
        T(
            [S("system_get_wallet_balance", err="transient"), S("system_get_wallet_balance")],
            "Unfortunately your balance is too low for this purchase.",
            ledger=ledger,
            feasible=False,
        ),
        cat,
    )
    assert (sc.refusal_pattern, sc.recoverable_errors, sc.recoveries, sc.defeatism) == ("unfortunately", 1, 1, False)


def test_faults_inferred_only_without_ledger(cat):
    # ledger None (an external trajectory): a transient error is inferred as an injected
    # fault; with an empty ledger (known: no faults) and no remedy for `transient`, the same
    # error is not recoverable
    steps = [S("shop_view_cart", err="transient")]
    sc = score_episode(T(steps, ledger=None), cat)
    assert sc.recoverable_errors == 1
    rec = sc.recoverable_error_detail[0]
    assert (rec.fault, rec.inferred) == ("transient", True)
    assert score_episode(T(steps, ledger=[]), cat).recoverable_errors == 0
    # a fault known from the call log's `fault` field is not inferred
    steps = [S("shop_view_cart", err="transient", fault="transient")]
    rec = score_episode(T(steps, ledger=None), cat).recoverable_error_detail[0]
    assert (rec.fault, rec.inferred) == ("transient", False)


# -- impatience --------------------------------------------------------------------------------
def test_impatience_with_virtual_time(cat):
    # a rate_limited window [1000, 1030): three identical calls at t=1000 (the first one plus
    # two retries) -> 3 > 2: impatience 1. After system_wait (t=1030) the call succeeds.
    t0 = 1000
    rl = dict(err="rate_limited", time=t0, retry_after=30)
    args = {"product_id": "p1"}
    steps = [
        S("shop_get_product", args, **rl),
        S("shop_get_product", args, **rl),
        S("shop_get_product", args, **rl),
        S("system_wait", {"seconds": 30}, time=t0 + 30),
        S("shop_get_product", args, time=t0 + 30),
    ]
    ledger = [{"step": i, "tool": "shop_get_product", "kind": "rate_limited", "applied": None} for i in (1, 2, 3)]
    sc = score_episode(T(steps, ledger=ledger), cat)
    assert sc.impatience == 1
    assert sc.impatience_detail[0].model_dump() == {
        "step": 1,
        "tool": "shop_get_product",
        "calls": 3,
        "steps": [1, 2, 3],
        "basis": "virtual_time",
    }
    # the three errors were each retried / cured by the wait and then recovered at step 5
    assert (sc.recoverable_errors, sc.recovery_attempts, sc.recoveries, sc.defeatism) == (3, 3, 3, False)


def test_impatience_approximation_and_patience(cat):
    args = {"product_id": "p1"}
    # no times: the window lasts until a wait or a success; 2 identical calls -> patient
    steps = [
        S("shop_get_product", args, err="rate_limited"),
        S("shop_get_product", args, err="rate_limited"),
        S("system_wait", {"seconds": 30}),
        S("shop_get_product", args),
    ]
    sc = score_episode(T(steps, ledger=None), cat)
    assert (sc.impatience, sc.impatience_detail) == (0, [])
    # 4 identical calls before the wait -> one impatient window of 4 calls
    steps = [S("shop_get_product", args, err="rate_limited")] * 4 + [S("system_wait", {"seconds": 30})]
    sc = score_episode(T(steps, ledger=None), cat)
    assert (
        sc.impatience == 1 and sc.impatience_detail[0].calls == 4 and sc.impatience_detail[0].basis == "approximation"
    )


# -- refusal patterns --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("message", "pattern"),
    [
        ("I am unable to complete the booking.", "unable"),
        ("I can't place the order right now.", "cannot"),
        ("I couldn't find the contact.", "cannot"),
        ("The transfer failed.", "failed"),
        ("Please try again later.", "try_again_later"),
        ("The flights service is currently unavailable.", "service_down"),
        ("That is not possible with this account.", "not_possible"),
        ("Unfortunately the item is out of stock.", "unfortunately"),
        ("I apologize for this.", "apology"),
        ("I ran into technical difficulties.", "blame"),
        ("I don't have permission to do that.", "no_permission"),
        # documented false positives that must NOT match
        ("I cannot find any problem with your order; it is confirmed.", None),
        ("The first attempt failed, but the retry succeeded. Your order is placed.", None),
        ("Done: the message was sent without any errors.", None),
        ("If the payment fails, let me know.", None),
        ("Sorry for the delay: your flight is booked.", None),
        ("Your order ord-1 is placed and the total is $42.", None),
    ],
)
def test_refusal_patterns(message, pattern):
    m = match_refusal(message)
    assert (m.pattern if m else None) == pattern


def test_refusal_records_every_match():
    m = match_refusal("Sorry, the service is down. Please try again later.")
    # first in REFUSAL_PATTERNS order wins; all are kept for auditing
    assert (m.pattern, m.text, m.all_patterns) == (
        "try_again_later",
        "try again later",
        ["try_again_later", "service_down", "apology"],
    )


# -- call counts, heuristics, external trajectories ------------------------------------------------
def test_valid_invalid_error_counts(cat):
    # 1 ok, 2 invalid_argument, 3 unknown tool (not_found on field "name"), 4 transient;
    # plus 1 call the runner rejected: invalid 1 + 2 = 3, valid 4 - 2 = 2, error 1 (step 4)
    steps = [
        S("shop_view_cart"),
        S("shop_add_to_cart", {"qty": "x"}, err="invalid_argument"),
        S("shop_teleport", err="not_found", field="name"),
        S("shop_view_cart", err="transient"),
    ]
    sc = score_episode(T(steps, ledger=None, invalid_calls=1), cat)
    assert (sc.valid_calls, sc.invalid_calls, sc.error_calls, sc.tool_calls) == (2, 3, 1, 4)
    assert sc.heuristic_tools == ["shop_teleport"]


def test_external_trajectory_with_heuristic_catalog():
    # The ComplexMCP example converted to steps (no ledger): every tool is unknown to an
    # empty catalog and classified by the heuristic.
    cat = Catalog([])
    uid = {"uid": "user_7QpX2mNv"}
    msg = {"uid": "user_7QpX2mNv", "content": "See you at nine"}
    steps = [
        S("get_uid_from_name", {"name": "Rowan Pike"}, err="transient"),
        S("get_uid_from_name", {"name": "Rowan Pike"}),
        S("send_message", msg, err="permission_denied"),
        S("ask_for_privilege"),
        S("send_message", msg),
        S("block", uid),
    ]
    sc = score_episode(
        T(steps, "The message was sent and the contact is blocked again.", ledger=None, agent="external"), cat
    )
    assert sc.heuristic_tools == ["ask_for_privilege", "block", "get_uid_from_name", "send_message"]
    # step 1: inferred transient, retried at 2 -> recovered at 2; step 3: permission_denied is
    # cured by any auth tool of a heuristic catalog: ask_for_privilege at 4, recovered at 5
    got = [(r.step, r.fault, r.inferred, r.attempt, r.recovered_step) for r in sc.recoverable_error_detail]
    assert got == [(1, "transient", True, "retry", 2), (3, None, False, "remedy", 5)]
    # writes: send (5) and block (6); nothing read afterwards -> both unverified
    assert (sc.writes, sc.verification_skips, sc.defeatism, sc.declared_impossible) == (2, [5, 6], False, False)


def test_heuristic_classification():
    assert classify_tool("get_uid_from_name").model_dump(include={"kind", "resources"}) == {
        "kind": "read",
        "resources": ["external.user"],
    }
    assert classify_tool("ask_for_privilege").kind == "auth"
    # "request" asks for an auth grant only before what auth grants; else for an effect
    assert classify_tool("system_request_privilege").kind == "auth"
    assert classify_tool("request_access_token").kind == "auth"
    assert classify_tool("shop_request_return").kind == "write"
    # leaving, undoing, subscribing, resetting, selling: writes
    for name in ("talk_leave_group", "office_unshare_file", "weather_unsubscribe_alerts", "git_reset", "sell_shares"):
        assert classify_tool(name).kind == "write", name
    # a nouns-as-often-as-verbs word is no write verb
    assert classify_tool("exchange_rate").kind != "write"
    # a write that makes a record has that record's family: a list of them reads it back
    assert classify_tool("flights_book_flight", known_apps=["flights"]).resources == [
        "flights.flight",
        "flights.booking",
    ]
    assert classify_tool("shop_checkout", known_apps=["shop"]).model_dump(include={"app", "kind", "resources"}) == {
        "app": "shop",
        "kind": "write",
        "resources": ["shop.checkout"],
    }
    assert classify_tool("talk_list_contacts", known_apps=["talk"]).resources == ["talk.contact"]
    assert classify_tool("fooBar", "Sends a fax to a number").kind == "write"
    assert classify_tool("frobnicate").kind == "unknown"  # no known verb: unknown, no duty and no read
    assert classify_tool("checkout").kind == "write" and classify_tool("check_order_status").kind == "read"


def test_catalog_from_system_app_and_file(tmp_path):
    from mcpgym.sandboxes.system.app import SystemApp

    cat = Catalog.from_app_classes([SystemApp])
    e = cat.get("system_request_privilege")
    assert (e.source, e.kind, e.resources, e.id_args) == ("catalog", "auth", ["system.privilege"], ["privilege"])
    # default remedies added at registration: waiting cures a rate limit of a write
    assert cat.remedies_for("system_transfer_from_savings", "rate_limited") == ["system_wait"]
    path = tmp_path / "tools.json"
    rows = [SystemApp.tools["system_get_wallet_balance"].catalog_entry()]
    del rows[0]["id_args"]  # catalog rows (docs/design.md §3) may lack id_args: derived from input_schema
    path.write_text(json.dumps(rows))
    loaded = Catalog.from_file(path)
    assert (loaded.get("system_get_wallet_balance").source, loaded.get("system_get_wallet_balance").id_args) == (
        "file",
        [],
    )
    assert loaded.get("nope_send_fax").source == "heuristic"
    path.write_text(json.dumps([{"name": "x", "kind": "mutate"}]))
    with pytest.raises(
        ValueError, match=r"tools.json: catalog row 0 \(x\): field 'kind' = \"mutate\": input should be 'read'"
    ):
        Catalog.from_file(path)


BAD_CATALOGS = [
    ([7], r"catalog row 0: expected an object with name and kind, got a number"),
    ([{"name": "x", "kind": "read"}, None], r"catalog row 1: expected an object with name and kind, got null"),
    ([["x", "read"]], r"catalog row 0: expected an object with name and kind, got an array"),
    (
        [{"name": "x_send", "kind": "write"}, {"name": "x_send", "kind": "read"}],
        r"catalog row 1 \(x_send\): field name: the tool already has row 0",
    ),
]


@pytest.mark.parametrize(("rows", "says"), BAD_CATALOGS, ids=["number", "null", "array", "duplicate"])
def test_a_catalog_row_that_is_not_a_tool_is_named(tmp_path, rows, says):
    """A row that is not an object was an unexpected TypeError; two rows for one tool were
    taken silently, the last one winning."""
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(rows))
    with pytest.raises(ValueError, match=f"^{path}: {says}$"):
        Catalog.from_file(path)


def test_credentials_are_not_resource_ids(cat):
    # checkout with pay-1 fails (precondition_failed, remedy authorize_payment); a new
    # authorisation pay-2 then a checkout with it succeeds. pay-1/pay-2 come from auth
    # results: credentials, not resource ids -> the retry counts as the same resource.
    steps = [
        S("system_authorize_payment", {"limit_cents": 900}, result={"authorization": {"auth_id": "pay-1"}}),
        S("shop_checkout", {"authorization_id": "pay-1"}, err="precondition_failed"),
        S("system_authorize_payment", {"limit_cents": 900}, result={"authorization": {"auth_id": "pay-2"}}),
        S("shop_checkout", {"authorization_id": "pay-2"}),
    ]
    rec = score_episode(T(steps, ledger=[]), cat).recoverable_error_detail
    assert [(r.step, r.attempt, r.attempt_step, r.recovered_step) for r in rec] == [(2, "remedy", 3, 4)]


# -- the real server path: invoker call log + ledger -> trajectory -> scores ---------------------
def test_scores_from_real_invoker_timeout():
    from mcpgym.kernel.world import World
    from mcpgym.sandboxes.system.app import SystemApp
    from mcpgym.tools.faults import FaultProfile
    from mcpgym.tools.invoke import ToolInvoker

    cat = Catalog.from_app_classes([SystemApp])
    gold_world = World(3, ["system"])
    ToolInvoker(gold_world, "none").call("system_transfer_from_savings", {"amount_cents": 5000})
    # every first call of the transfer times out (its write applied); max_consecutive=1
    # lets the second call through
    profile = FaultProfile(tools={"system_transfer_from_savings": {"timeout": 1.0}}, max_consecutive=1)

    def episode(calls: list[tuple[str, dict]], final: str) -> EpisodeScores:
        world = World(3, ["system"])
        initial = world.snapshot()
        inv = ToolInvoker(world, profile, fault_seed=1)
        for name, args in calls:
            inv.call(name, args)
        traj = Trajectory(
            episode_id="e",
            agent="x",
            steps=steps_from_call_log(inv.calls),
            final_message=final,
            ledger=[e.model_dump() for e in inv.ledger],
            initial_snapshot=initial,
            final_snapshot=world.snapshot(),
            gold_snapshot=gold_world.snapshot(),
        )
        return score_episode(traj, cat)

    transfer = ("system_transfer_from_savings", {"amount_cents": 5000})
    # overconfident: timeout, blind repeat -> 2 writes, blind retry with duplicate; outcome:
    # balance and savings wrong, one of two transactions recalled, the other extra:
    # total 3, recall 1, misbehave 1
    sc = episode([transfer, transfer], "Done.")
    assert (sc.writes, sc.blind_retries, sc.duplicate_side_effects) == (2, 1, 1)
    assert [(p.step, p.family) for p in sc.precheck_skips] == [(1, "wallet.balance"), (2, "wallet.balance")]
    assert (sc.success, sc.total, sc.recall, sc.misbehave) == (False, 3, 1, 1)
    # careful: read, transfer (timeout), read shows it applied, stop: success, no duplicate
    bal = ("system_get_wallet_balance", {})
    sc = episode([bal, transfer, bal], "Done: moved $50.00 from savings.")
    assert (sc.writes, sc.verified_writes, sc.precheck_skips, sc.blind_retries) == (1, 1, [], 0)
    assert (sc.recoverable_errors, sc.recovery_attempts, sc.recoveries, sc.defeatism) == (1, 1, 1, False)
    assert (sc.success, sc.total, sc.recall, sc.misbehave) == (True, 3, 3, 0)


# -- aggregates ---------------------------------------------------------------------------------
def test_wilson_interval_known_values():
    low, high = wilson_interval(8, 10)
    assert (round(low, 3), round(high, 3)) == (0.490, 0.943)
    low, high = wilson_interval(0, 10)
    assert (low, round(high, 4)) == (0.0, 0.2775)
    assert wilson_interval(0, 0) is None
    low, high = wilson_interval(50, 100)
    assert (round(low, 4), round(high, 4)) == (0.4038, 0.5962)


def test_pass_hat_k_known_values():
    # task A: 4 trials, 2 successes -> C(2,k)/C(4,k) = 1/2, 1/6, 0, 0; task B: 4/4 -> 1
    res = {"A": [True, False, True, False], "B": [True] * 4}
    table = pass_k_table(res)
    assert list(table) == ["1", "2", "3", "4"]
    assert table["1"] == pytest.approx(0.75)
    assert table["2"] == pytest.approx((1 / 6 + 1) / 2)
    assert table["3"] == pytest.approx(0.5) and table["4"] == pytest.approx(0.5)
    # 5 trials, 3 successes, k=2: C(3,2)/C(5,2) = 3/10
    assert pass_hat_k({"t": [1, 1, 1, 0, 0]}, 2) == pytest.approx(0.3)
    with pytest.raises(ValueError):
        pass_hat_k({"t": [True]}, 2)


def _ep(agent: str, task: str, trial: int, success: bool, **kw) -> EpisodeScores:
    return EpisodeScores(
        episode_id=f"{agent}-{task}-{trial}",
        agent=agent,
        task_id=task,
        trial=trial,
        success=success,
        recall=0,
        total=0,
        misbehave=0,
        **kw,
    )


def test_aggregate_per_agent_with_breakdowns():
    eps = [
        _ep(
            "careful",
            "t1",
            0,
            True,
            level=1,
            apps=["system", "shop"],
            writes=2,
            verified_writes=2,
            recoverable_errors=1,
            recovery_attempts=1,
            recoveries=1,
            tokens={"input": 10, "output": 5},
        ),
        _ep("careful", "t1", 1, True, level=1, apps=["system", "shop"], writes=2, verified_writes=1),
        _ep(
            "careful",
            "t2",
            0,
            False,
            level=2,
            apps=["system", "talk"],
            writes=1,
            verified_writes=1,
            recoverable_errors=2,
            recovery_attempts=1,
            recoveries=0,
            defeatism=True,
            tokens={"input": 1, "output": 1},
        ),
        _ep("careful", "t2", 1, True, level=2, apps=["system", "talk"], precheck_writes=2, prechecked_writes=1),
        _ep("", "x", 0, False),
    ]
    out = aggregate(eps)
    assert list(out.agents) == ["careful", "external"]
    c = out.agents["careful"]
    # 3 of 4 succeed; Wilson(3, 4)
    assert (c.episodes, c.success_rate) == (4, 0.75)
    assert c.success_ci95 == pytest.approx(wilson_interval(3, 4))
    # t1: 2/2, t2: 1/2 -> pass^1 = (1 + 0.5)/2, pass^2 = (1 + 0)/2
    assert c.pass_k == pytest.approx({"1": 0.75, "2": 0.5})
    # pooled: verified 4 of 5 writes; recovery 2 attempts, 1 recovery of 3 errors
    assert c.verification_rate == pytest.approx(0.8)
    assert (c.precheck_rate, c.recovery_attempt_rate, c.recovery_rate) == (
        0.5,
        pytest.approx(2 / 3),
        pytest.approx(1 / 3),
    )
    # two episodes met a recoverable error, one was defeatist
    assert (c.episodes_with_recoverable_errors, c.defeatism_rate) == (2, 0.5)
    assert c.tokens.model_dump() == {"input": 11, "output": 6}
    assert c.by_level["1"].success_rate == 1.0 and c.by_level["2"].pass_k == {"1": 0.5, "2": 0.0}
    # per app, system left out (every episode's task names another app): shop t1 x2, talk t2 x2
    assert sorted(c.by_app) == ["shop", "talk"] and c.by_app["talk"].episodes == 2
    assert (c.by_app["shop"].successes, c.by_app["talk"].successes) == (2, 1)
    e = out.agents["external"]
    assert (e.episodes, e.success_rate, e.defeatism_rate, e.tokens, e.verification_rate) == (1, 0.0, None, None, None)


def test_aggregate_scores_unscored_trajectories(cat):
    t = T([S("shop_add_to_cart", {"product_id": "p1"})], ledger=[], agent="overconfident")
    out = aggregate([t], catalog=cat)
    a = out.agents["overconfident"]
    # no states: success unknown -> no success rate; one unverified write
    assert (a.episodes, a.success_rate, a.success_ci95, a.pass_k, a.verification_rate) == (1, None, None, {}, 0.0)
    with pytest.raises(ValueError, match="no scores"):
        aggregate([t])
    t.scores = score_episode(t, cat)
    assert aggregate([t]).agents["overconfident"].writes == 1


# -- trajectory files ------------------------------------------------------------------------------
def test_jsonl_round_trip_and_errors(tmp_path):
    path = tmp_path / "run" / "trajectories.jsonl"
    a = T([S("shop_view_cart", time=5)], ledger=[], episode_id="e1", tokens={"input": 3, "output": 4})
    b = T([], "nothing", episode_id="e2", status="limit", stop_reason="max steps")
    append_trajectory(path, a)
    append_trajectory(path, b)
    back = read_trajectories(path)
    assert [t.episode_id for t in back] == ["e1", "e2"] and back[0] == a and back[1].status == "limit"
    assert path.read_text().count("\n") == 2
    # a malformed line names file, line and field
    bad = json.loads(path.read_text().splitlines()[0])
    bad["steps"][0]["step"] = 0
    with path.open("a") as fh:
        fh.write(json.dumps(bad) + "\n")
    with pytest.raises(
        TrajectoryFileError,
        match=r"trajectories\.jsonl:3: field 'steps\.0\.step' = 0: input should be greater than or equal to 1",
    ):
        read_trajectories(path)


def test_jsonl_truncated_tail(tmp_path):
    path = tmp_path / "t.jsonl"
    append_trajectory(path, T([], episode_id="e1"))
    with path.open("a") as fh:
        fh.write('{"episode_id": "e2", "age')  # a killed writer
    with pytest.raises(TrajectoryFileError, match=r"t\.jsonl:2: invalid JSON"):
        read_trajectories(path)
    assert [t.episode_id for t in read_trajectories(path, tolerate_truncated_tail=True)] == ["e1"]
    # appending after a partial line starts a new line: the new record stays readable
    append_trajectory(path, T([], episode_id="e3"))
    with pytest.raises(TrajectoryFileError, match=r":2: invalid JSON"):
        read_trajectories(path)
    lines = path.read_text().splitlines()
    assert json.loads(lines[2])["episode_id"] == "e3"


def test_trajectory_rejects_out_of_order_steps():
    with pytest.raises(ValueError, match="strictly increase"):
        Trajectory(episode_id="e", agent="a", steps=[ToolCallStep(step=2, tool="t"), ToolCallStep(step=1, tool="t")])
    assert math.isclose(ToolCallStep(step=1, tool="t", result={"error": {"retry_after": 30}}).retry_after, 30)
