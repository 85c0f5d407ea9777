"""The proxy's fault plan (mcpgym.server.proxy.plan) without any process: its decisions are the
sandboxes' seeded schedule, a rate limit lasts retry_after / 5 calls through the proxy, a
stale read shows a real earlier answer, and kinds that would need faking are never injected."""

from __future__ import annotations

from mcpgym.server.proxy.plan import Action, ProxiedTool, ProxyFaultPlan
from mcpgym.tools.faults import ToolSchedule, load_profile


def describe(answer):
    """Answers here are (is_error, text) pairs."""
    is_error, text = answer
    return is_error, None, {"text": text}


def plan_for(profile, seed=0, **tools):
    plan = ProxyFaultPlan(profile, seed, describe)
    plan.set_tools({name: ProxiedTool(name=name, kind=kind) for name, kind in tools.items()})
    return plan


def run(plan, name, n, answer=(False, "ok")):
    out = []
    for _ in range(n):
        d = plan.decide(name)
        settled = plan.settle(d, {"x": 1}, None if d.action is Action.REFUSE else answer)
        out.append((d.action, d.fault, settled.record.is_error))
    return out


def test_decisions_are_the_sandbox_schedule_of_seed_tool_and_call_index():
    # harsh's per-call rates of a write, less rate_limited (a limit's window refuses later calls
    # whatever their own draw: the test below)
    profile = load_profile({"rates": {"transient": 0.12, "timeout": 0.08, "lost_write": 0.06, "auth_challenge": 0.05}})
    for seed in (1, 2, 3):
        plan = plan_for(profile, seed, commit="write")
        decisions = [plan.decide("commit") for _ in range(40)]
        expected = ToolSchedule(profile, seed, "commit", "external", "write").first(40)
        # the kinds the proxy cannot inject without faking (lost_write), or that need a
        # declared reauth tool (auth_challenge), are dropped; the rest are the schedule's
        for d, kind in zip(decisions, expected, strict=True):
            assert d.fault == (None if kind in ("lost_write", "auth_challenge") else kind), (seed, d, kind)


def test_a_rate_limit_refuses_the_next_calls_until_the_virtual_clock_passes_it():
    profile = load_profile({"tools": {}, "rates": {"rate_limited": 1.0}, "max_consecutive": 1, "retry_after": 20})
    plan = plan_for(profile, read="read")
    seen = run(plan, "read", 7)
    # call 0 (virtual second 5) draws the limit: blocked until second 25, so calls 1-3 (10, 15,
    # 20 s) are refused by it (persisting); call 4 (25 s) is past the window and makes its own
    # draw: the schedule alternates under max_consecutive 1 (fault, none, fault, none, fault),
    # so call 4 draws a new limit (until 45 s): call 5 persisting, call 6 (35 s) too
    assert [e.persisting for e in plan.ledger] == [False, True, True, True, False, True, True]
    assert all(action is Action.REFUSE and fault == "rate_limited" for action, fault, _ in seen)
    assert plan.ledger[4].call_index == 4 and plan.calls[4].time == 25


def test_a_stale_read_shows_the_earlier_real_answer_only_when_it_differs():
    profile = load_profile({"rates": {"stale_read": 1.0}, "max_consecutive": 1})
    plan = plan_for(profile, read="read")
    first = plan.settle(plan.decide("read"), {"x": 1}, (False, "v1"))  # call 0: stale drawn, nothing older
    second = plan.settle(plan.decide("read"), {"x": 1}, (False, "v2"))  # call 1: no fault in a row
    third = plan.settle(plan.decide("read"), {"x": 1}, (False, "v3"))  # call 2: stale: shows v2
    fourth = plan.settle(plan.decide("read"), {"x": 1}, (False, "v3"))  # call 3: none
    fifth = plan.settle(plan.decide("read"), {"x": 1}, (False, "v3"))  # call 4: stale, but nothing differs
    assert [s.answer for s in (first, second, third, fourth, fifth)] == [
        (False, "v1"),
        (False, "v2"),
        (False, "v2"),
        (False, "v3"),
        (False, "v3"),
    ]
    assert [(e.step, e.kind, e.applied) for e in plan.ledger] == [(3, "stale_read", None)]


def test_a_withheld_timeout_yields_to_a_real_error_and_unknown_kinds_get_only_refusals():
    profile = load_profile({"rates": {"timeout": 1.0}, "max_consecutive": 5})
    plan = plan_for(profile, write="write")
    d = plan.decide("write")
    assert d.action is Action.WITHHOLD
    settled = plan.settle(d, {}, (True, "upstream said no"))
    assert settled.error is None and plan.ledger == []  # the real error wins: nothing injected
    d = plan.decide("write")
    settled = plan.settle(d, {}, (False, "done"))
    assert settled.error is not None and settled.error.code == "timeout"
    assert [(e.kind, e.applied) for e in plan.ledger] == [("timeout", True)]
    everything = load_profile({"rates": {"timeout": 0.5, "transient": 0.5}, "max_consecutive": 100})
    odd = plan_for(everything, 4, handoff="handoff")
    faults = {odd.decide("handoff").fault for _ in range(50)}
    assert faults <= {"transient", None}  # a tool whose effect is unknown is never forwarded-and-faulted
