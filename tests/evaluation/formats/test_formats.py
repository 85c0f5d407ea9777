"""Scoring trajectories recorded elsewhere: the five file formats and the front door.

Every example file under tests/data/formats/ was written for these tests; the expected values
are worked out by hand in the comments, from docs/design.md §7 and the rules in
evaluation/scoring/scorer.py, with the tool metadata of mcpgym's catalog (``mcpgym tools --json``)
or, for bare ComplexMCP names, the heuristic of evaluation/scoring/tool_catalog.py.
"""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpgym.evaluation.cli.score import run_score
from mcpgym.evaluation.formats import FORMATS, detect_format, score_files
from mcpgym.evaluation.formats.complexmcp import interpret_response as complexmcp_response
from mcpgym.evaluation.formats.complexmcp import load as load_complexmcp
from mcpgym.evaluation.formats.detector import interpret_result
from mcpgym.evaluation.formats.results import guess_error_code
from mcpgym.evaluation.records.trajectory import Trajectory, steps_from_call_log, write_trajectories
from mcpgym.evaluation.report.score_text import render_text
from tests.conftest import ROOT
from tests.support.score_keys import EPISODE_KEYS

DATA = ROOT / "tests" / "data" / "formats"

TALK_FILES = {
    "mcpgym": DATA / "talk_episode.mcpgym.jsonl",
    "openai": DATA / "talk_episode.openai.json",
    "anthropic": DATA / "talk_episode.anthropic.json",
    "mcp-log": DATA / "talk_episode.mcp-log.jsonl",
    "complexmcp": DATA / "talk_episode.complexmcp.txt",
}
BEHAVIOUR = (
    "tool_calls",
    "writes",
    "verified_writes",
    "verification_skips",
    "precheck_writes",
    "prechecked_writes",
    "blind_retries",
    "recoverable_errors",
    "recovery_attempts",
    "recoveries",
    "defeatism",
    "declared_impossible",
    "valid_calls",
    "invalid_calls",
    "error_calls",
    "impatience",
)


def counts(ep) -> tuple:
    """(writes, verified writes, skipped steps, recoverable errors, attempts, recoveries, defeatism)."""
    s = ep.scores
    return (
        s.writes,
        s.verified_writes,
        s.verification_skips,
        s.recoverable_errors,
        s.recovery_attempts,
        s.recoveries,
        s.defeatism,
    )


def by_label(report) -> dict:
    return {ep.episode: ep for ep in report.episodes}


def problem_texts(report) -> list[str]:
    return [str(p) for p in report.problems]


# -- the same episode in all five formats ---------------------------------------------------------
# The talk episode (tools from mcpgym's catalog):
#   1 talk_search_contacts {query}           transient error (ledger in mcpgym; inferred elsewhere)
#   2 talk_search_contacts {query}           ok                          read talk.contact
#   3 talk_send_message {c-007, text}        precondition_failed ("blocked"); remedy talk_unblock_contact
#   4 talk_unblock_contact {c-007}           ok                          write talk.contact
#   5 talk_send_message {c-007, text}        ok                          write talk.message, talk.chat
#   6 talk_list_chats {}                     ok                          read talk.chat, talk.message
# writes: 4, 5 -> 2. Step 5 is verified by 6 (shared family, no ids on the read); step 4 is not
# (no later read of talk.contact) -> skips [4]. Pre-check: send_message needs talk.contact;
# the counted write 5 comes after the change at 4 with no read in between -> skip (5,
# talk.contact); precheck_writes 1, prechecked 0. Recoverable: 1 (injected) retried at 2 and
# recovered at 2; 3 (code with a remedy) -> remedy at 4, recovered at 5 (same tool, same
# contact id). 2 errors, 2 attempts, 2 recoveries, no defeatism; the final message refuses nothing.
TALK_EXPECTED = {
    "tool_calls": 6,
    "writes": 2,
    "verified_writes": 1,
    "verification_skips": [4],
    "precheck_writes": 1,
    "prechecked_writes": 0,
    "blind_retries": 0,
    "recoverable_errors": 2,
    "recovery_attempts": 2,
    "recoveries": 2,
    "defeatism": False,
    "declared_impossible": False,
    "valid_calls": 6,
    "invalid_calls": 0,
    "error_calls": 2,
    "impatience": 0,
}


@pytest.fixture(scope="module")
def talk_report():
    return score_files([str(p) for p in TALK_FILES.values()])


def test_same_episode_same_behaviour_in_all_five_formats(talk_report):
    assert talk_report.ok and talk_report.problems == []
    # auto found each file's format
    assert {f.format: f.file for f in talk_report.files} == {k: str(v) for k, v in TALK_FILES.items()}
    assert all(f.detected and f.episodes == 1 for f in talk_report.files)
    for ep in talk_report.episodes:
        got = ep.scores.model_dump(include=set(BEHAVIOUR))
        assert got == TALK_EXPECTED, ep.format
        assert [(p.step, p.family) for p in ep.scores.precheck_skips] == [(5, "talk.contact")]
        detail = [
            (r.step, r.code, r.fault, r.attempt, r.attempt_step, r.recovered_step)
            for r in ep.scores.recoverable_error_detail
        ]
        assert detail == [
            (1, "transient", "transient", "retry", 2, 2),
            (3, "precondition_failed", None, "remedy", 4, 5),
        ], ep.format
        assert ep.scores.success is None and ep.scores.recall is None  # no states in any file
        assert ep.agent == "external"
    # the fault is known from the ledger in our format, inferred from the error everywhere else
    faults = {ep.format: (ep.faults, ep.inferred_faults) for ep in talk_report.episodes}
    assert faults == {
        "mcpgym": ("ledger", 0),
        "openai": ("inferred", 1),
        "anthropic": ("inferred", 1),
        "mcp-log": ("inferred", 1),
        "complexmcp": ("inferred", 1),
    }
    assert talk_report.faults_inferred is True and talk_report.inferred_faults == 4
    # every tool is in mcpgym's catalog; 5 files x calls
    assert [(t.tool, t.source, t.calls) for t in talk_report.tools] == [
        ("talk_list_chats", "catalog", 5),
        ("talk_search_contacts", "catalog", 10),
        ("talk_send_message", "catalog", 10),
        ("talk_unblock_contact", "catalog", 5),
    ]
    # aggregated under "external": 5 episodes, 5 of 10 writes verified, 10 of 10 errors recovered
    ext = talk_report.agents["external"]
    assert (
        ext.episodes,
        ext.verification_rate,
        ext.recovery_attempt_rate,
        ext.recovery_rate,
        ext.defeatism_rate,
        ext.success_rate,
        ext.precheck_rate,
    ) == (5, 0.5, 1.0, 1.0, 0.0, None, 0.0)


def test_same_episode_with_explicit_formats():
    for fmt, path in TALK_FILES.items():
        report = score_files([path], fmt)
        assert [f.detected for f in report.files] == [False]
        assert report.episodes[0].scores.model_dump(include=set(BEHAVIOUR)) == TALK_EXPECTED, fmt


def test_formats_list_matches_the_cli():
    assert FORMATS == (
        "auto",
        "mcpgym",
        "openai",
        "anthropic",
        "complexmcp",
        "mcp-log",
        "atif",
        "inspect",
        "responses",
        "tau2",
        "langchain",
        "pydantic-ai",
        "claude-code",
    )


# -- mcpgym ---------------------------------------------------------------------------------------------
def test_mcpgym_file_with_ledger_and_bad_lines():
    report = score_files([DATA / "mcpgym_runs.jsonl"])
    eps = by_label(report)
    # ep-careful: 1 read balance, 2 transfer -> timeout (ledger: applied), 3 read balance.
    # The applied timeout counts as a write (1), verified by 3; pre-checked by 1. The timeout
    # is a recoverable error: read back at 3 = attempt and recovery (a read shows the truth).
    careful = eps["episode ep-careful"]
    assert counts(careful) == (1, 1, [], 1, 1, 1, False)
    assert careful.scores.recoverable_error_detail[0].attempt == "read_back"
    assert (careful.faults, careful.inferred_faults, careful.agent) == ("ledger", 0, "careful")
    # ep-over: 1 transfer -> timeout (applied), 2 the same transfer -> ok. Two writes, nothing
    # read: skips [1, 2], both pre-checks skipped; a blind retry with a duplicate side effect;
    # the retry is the attempt and the recovery.
    over = eps["episode ep-over"]
    assert counts(over) == (2, 0, [1, 2], 1, 1, 1, False)
    assert (over.scores.blind_retries, over.scores.duplicate_side_effects) == (1, 1)
    # line 2 is cut JSON, line 3 lacks the agent: both named; lines 1 and 4 still scored
    assert problem_texts(report) == [
        f"{DATA / 'mcpgym_runs.jsonl'}:2: error: invalid JSON at column 56: Expecting value",
        f"{DATA / 'mcpgym_runs.jsonl'}:3 (episode ep-bad): error: field 'agent': missing (required)",
    ]
    assert [(e.line, e.agent) for e in report.episodes] == [(1, "careful"), (4, "overconfident")]
    assert sorted(report.agents) == ["careful", "overconfident"]
    assert report.faults_inferred is False


def test_run_directory_is_read_as_mcpgym(tmp_path):
    (tmp_path / "trajectories.jsonl").write_text(TALK_FILES["mcpgym"].read_text())
    report = score_files([tmp_path], "mcpgym")  # a directory is a run directory, read as mcpgym
    assert [(f.file, f.format, f.episodes) for f in report.files] == [
        (str(tmp_path / "trajectories.jsonl"), "mcpgym", 1)
    ]
    assert report.episodes[0].scores.model_dump(include=set(BEHAVIOUR)) == TALK_EXPECTED
    empty = tmp_path / "empty"
    empty.mkdir()
    assert problem_texts(score_files([empty])) == [
        f"{empty}: error: {empty} is not a run directory: it has no trajectories.jsonl.zst (nor an older run's "
        "trajectories.jsonl)"
    ]


def test_mcpgym_outcome_scores_when_states_are_given(tmp_path):
    from mcpgym.kernel.world import World
    from mcpgym.tools.faults import FaultProfile
    from mcpgym.tools.invoke import ToolInvoker

    gold = World(3, ["system"])
    ToolInvoker(gold, "none").call("system_transfer_from_savings", {"amount_cents": 5000})
    world = World(3, ["system"])
    initial = world.snapshot()
    profile = FaultProfile(tools={"system_transfer_from_savings": {"timeout": 1.0}}, max_consecutive=1)
    inv = ToolInvoker(world, profile, fault_seed=1)
    for name, args in [
        ("system_get_wallet_balance", {}),
        ("system_transfer_from_savings", {"amount_cents": 5000}),
        ("system_get_wallet_balance", {}),
    ]:
        inv.call(name, args)
    traj = Trajectory(
        episode_id="real",
        agent="careful",
        steps=steps_from_call_log(inv.calls),
        final_message="Done: moved $50.00 from savings.",
        ledger=[e.model_dump() for e in inv.ledger],
        initial_snapshot=initial,
        final_snapshot=world.snapshot(),
        gold_snapshot=gold.snapshot(),
    )
    path = tmp_path / "trajectories.jsonl"
    write_trajectories(path, [traj])
    report = score_files([path, TALK_FILES["openai"]])
    real, other = report.episodes
    # the careful run: timeout applied, read back, no duplicate -> the gold state (balance,
    # savings, one transaction: total 3, all recalled); the openai file has no states
    assert (real.scores.success, real.scores.total, real.scores.recall, real.scores.misbehave) == (True, 3, 3, 0)
    assert (other.scores.success, other.scores.total, other.scores.recall) == (None, None, None)
    assert report.agents["careful"].success_rate == 1.0 and report.agents["careful"].pass_k == {"1": 1.0}
    assert report.agents["external"].success_rate is None


# -- openai ----------------------------------------------------------------------------------------------
def test_openai_taubench_records():
    report = score_files([DATA / "openai_taubench.json"])
    assert report.files[0].format == "openai" and report.ok
    eps = by_label(report)
    # record 1 (trial 0): 1 balance read, 2 add_to_cart -> "Error: rate limited: retry after 30
    # ..." (guessed rate_limited: an inferred fault, remedy system_wait), 3 system_wait (the
    # clock: not a counted write), 4 add_to_cart ok, 5 get_cart. Writes: 4 -> verified by 5.
    # add_to_cart needs shop.item, never read -> pre-check skip (4, shop.item). The error gets
    # the remedy at 3 and is recovered at 4.
    r1 = eps["record 1 task 7"]
    assert counts(r1) == (1, 1, [], 1, 1, 1, False)
    assert [(p.step, p.family) for p in r1.scores.precheck_skips] == [(4, "shop.item")]
    rec = r1.scores.recoverable_error_detail[0]
    assert (rec.code, rec.fault, rec.inferred, rec.attempt, rec.attempt_step, rec.recovered_step) == (
        "rate_limited",
        "rate_limited",
        True,
        "remedy",
        3,
        4,
    )
    # record 2 (trial 1): 1 search, 2 add_to_cart -> JSON {"error": {"code": "timeout"}}: an
    # inferred timeout, so not known to be applied: no write. No call follows and the answer
    # refuses ("unable to"): 1 recoverable error, no attempt, defeatism.
    r2 = eps["record 2 task 7 trial 1"]
    assert counts(r2) == (0, 0, [], 1, 0, 0, True)
    assert (r2.scores.declared_impossible, r2.scores.refusal_pattern) == (True, "unable")
    # the file names the agent (tau-bench "model"); trials and task ids are kept
    assert [(e.agent, e.scores.task_id, e.scores.trial) for e in report.episodes] == [
        ("gpt-4o-mini", "7", 0),
        ("gpt-4o-mini", "7", 1),
    ]
    agg = report.agents["gpt-4o-mini"]
    assert (agg.episodes, agg.verification_rate, agg.recovery_attempt_rate, agg.defeatism_rate) == (2, 1.0, 0.5, 0.5)
    assert "external" not in report.agents


def test_openai_jsonl_broken_line_and_malformed_call():
    path = DATA / "openai_lines.jsonl"
    report = score_files([path])
    eps = by_label(report)
    # line 1: publish_post ok, list_posts (same family talk.post) ok -> 1 write, verified
    assert counts(eps["line 1"]) == (1, 1, [], 0, 0, 0, False)
    # line 3: set_contact_remark with unparsable arguments and an "Error: invalid ..." result
    # -> invalid_argument, an invalid call, not recoverable (no remedy for that code); the
    # get_contact call has no result and is left out; no final answer -> status limit
    line3 = eps["line 3"].scores
    assert (line3.tool_calls, line3.invalid_calls, line3.error_calls, line3.writes, line3.status) == (
        1,
        1,
        0,
        0,
        "limit",
    )
    # line 2 is broken JSON: named by file and line; the other lines are scored
    assert problem_texts(report) == [
        f"{path}:2: error: invalid JSON at column 48: Expecting ',' delimiter",
        f"{path}:3 (line 3): warning: message 4: the call of talk_get_contact (id 'b2') has no result; left out",
    ]
    assert report.ok is False


# -- anthropic -------------------------------------------------------------------------------------------
def test_anthropic_is_error_and_agents():
    report = score_files([DATA / "anthropic_episodes.jsonl"])
    eps = by_label(report)
    # line 1: 1 add_contact_tag -> is_error, "lack ... privilege" -> permission_denied (remedy
    # system_request_privilege), 2 request_privilege (auth), 3 add_contact_tag ok, 4 get_contact
    # (same contact) -> 1 write, verified; the error: remedy at 2, recovered at 3
    t = eps["line 1 task tag-1"]
    assert counts(t) == (1, 1, [], 1, 1, 1, False)
    assert t.scores.recoverable_error_detail[0].code == "permission_denied"
    assert (t.agent, t.faults, t.inferred_faults) == ("claude-test", "inferred", 0)
    # line 2: block_contact ok (no is_error, plain text) -> 1 write, never read -> skip [1];
    # publish_post got no result: left out with a warning, and the episode is cut (limit)
    u = eps["line 2"]
    assert counts(u) == (1, 0, [1], 0, 0, 0, False)
    assert (u.agent, u.scores.tool_calls, u.scores.status) == ("external", 1, "limit")
    assert [(p.line, p.severity) for p in report.problems] == [(2, "warning")]
    assert sorted(report.agents) == ["claude-test", "external"]


# -- mcp-log ---------------------------------------------------------------------------------------------
def test_mcp_log_sessions_interleaved():
    path = DATA / "mcp_sessions.jsonl"
    report = score_files([path])
    eps = by_label(report)
    # session s-A (the initialize of line 1 has no session yet and joins s-A):
    # 1 get_cart, 2 checkout(pa-9) -> isError not_found (remedy system_authorize_payment),
    # 3 authorize_payment (auth; pa-10 is a credential), 4 checkout(pa-10) ok, 5 get_order.
    # Write 4 is verified by 5 (shop.order); pre-checks of 4: shop.cart read at 1, payment_auth
    # set by the auth call at 3, wallet.balance never read -> skip (4, wallet.balance).
    # The error: remedy at 3, recovered at 4.
    a = eps["session s-A"]
    assert counts(a) == (1, 1, [], 1, 1, 1, False)
    assert [(p.step, p.family) for p in a.scores.precheck_skips] == [(4, "wallet.balance")]
    assert (a.agent, a.line) == ("log-agent", 1)
    # session s-B: 1 an unknown tool (JSON-RPC error) -> not_found on "name": an invalid call;
    # 2 publish_post, no isError, text "Error? No: posted p-5.": the detector every format
    # shares reads "Error?" as no error report -> a success: 1 write, never read
    b = eps["session s-B"]
    assert counts(b) == (1, 0, [2], 0, 0, 0, False)
    assert (b.scores.invalid_calls, b.scores.valid_calls, b.scores.error_calls, b.agent) == (1, 1, 0, "external")
    # line 7 is cut JSON; everything else is scored
    assert problem_texts(report) == [
        f"{path}:7: error: invalid JSON at column 91: Expecting property name enclosed in double quotes"
    ]
    assert {t.tool: t.source for t in report.tools}["weather_teleport"] == "heuristic"


def test_mcp_log_split_by_initialize():
    report = score_files([DATA / "mcp_two_runs.jsonl"])
    one, two = report.episodes
    # episode 1: a single read. Episode 2: update_setting -> isError with structuredContent
    # {"error": {"code": "rate_limited", "retry_after": 20}} (inferred fault), the same call
    # again ok (retry + recovery), get_settings reads it back -> 1 write, verified.
    assert (one.episode, counts(one)) == ("episode 1", (0, 0, [], 0, 0, 0, False))
    assert (two.episode, counts(two)) == ("episode 2", (1, 1, [], 1, 1, 1, False))
    assert (two.inferred_faults, two.scores.impatience) == (1, 0)


# -- complexmcp ------------------------------------------------------------------------------------------
def test_complexmcp_jsonl_with_a_malformed_episode():
    path = DATA / "complexmcp_episodes.jsonl"
    report = score_files([path])
    eps = by_label(report)
    # Read as complexmcp (sniffed), so the built-in ComplexMCP catalog classifies the tools.
    # cm-1: 1 get_uid_from_name -> 'internel error' (inferred transient; remedy acc_network),
    # 2 retry ok, 3 send_message -> failed "need privilege" (permission_denied: ComplexMCP's
    # send_message is not a privileged tool, so no remedy: not recoverable), 4
    # ask_for_privilege, 5 send_message ok, 6 block ok. Writes 5, 6, nothing read after them
    # -> skips [5, 6]. Errors: 1 retried/recovered at 2; 3, a refusal in a transcript without
    # a ledger, is met like any error (docs/design.md §7, "Recovery"): no attempt within 3
    # calls (4 is no declared remedy, 5 repeats the refused call), recovered by the send at 5.
    cm1 = eps["line 1 task cm-1"]
    assert report.catalog == "complexmcp"
    assert counts(cm1) == (2, 0, [5, 6], 2, 1, 2, False)
    assert [(r.code, r.inferred, r.remedies) for r in cm1.scores.recoverable_error_detail] == [
        ("transient", True, ["acc_network"]),
        ("permission_denied", False, []),
    ]
    # cm-3: 1 send_message ok (lighttalk.chat), 2 list_messages with uid 5 -> status "error"
    # (invalid_argument: an invalid call), 3 list_messages ok (not ComplexMCP's: guessed
    # external.message, which does not verify 1), 4 checkout_all -> "internal error" (inferred
    # transient) and the answer gives up ("try again later"): defeatism. Without a ledger the
    # invalid call at 2 is met like any error: 3 retries it with the argument corrected
    # (attempt and recovery); 4 gets no attempt: 2 recoverable errors, 1 attempt, 1 recovery.
    cm3 = eps["line 3 task cm-3"]
    assert counts(cm3) == (1, 0, [1], 2, 1, 1, True)
    assert (cm3.scores.invalid_calls, cm3.scores.refusal_pattern, cm3.agent) == (1, "try_again_later", "qwen-test")
    # cm-2 has an unclosed <tool>: the problem names the line and the episode; 1 and 3 scored
    assert problem_texts(report) == [
        f"{path}:2 (line 2 task cm-2): error: unclosed <tool> block opened at transcript line 1 "
        "(the next tag is <response> at transcript line 3)"
    ]
    assert {t.tool: (t.source, t.kind, t.resources[0]) for t in report.tools} == {
        "ask_for_privilege": ("file", "auth", "lighttalk.privilege"),
        "block": ("file", "write", "lighttalk.block"),
        "checkout_all": ("file", "write", "lightshop.cart"),
        "get_uid_from_name": ("file", "read", "lighttalk.directory"),
        "list_messages": ("heuristic", "read", "external.message"),
        "send_message": ("file", "write", "lighttalk.chat"),
    }
    agg = report.agents["qwen-test"]
    assert (
        agg.episodes,
        agg.verified_writes,
        agg.writes,
        agg.recoverable_errors,
        agg.recoveries,
        agg.defeatism_rate,
    ) == (2, 0, 3, 4, 3, 0.5)


def test_complexmcp_with_a_catalog_file():
    report = score_files([DATA / "complexmcp_episodes.jsonl"], "complexmcp", DATA / "complexmcp_catalog.json")
    sources = {t.tool: t.source for t in report.tools}
    assert sources == {
        "ask_for_privilege": "file",
        "block": "heuristic",
        "checkout_all": "heuristic",
        "get_uid_from_name": "heuristic",
        "list_messages": "file",
        "send_message": "file",
    }
    # the file's remedy list is taken as is (no heuristic "any auth tool")
    cm1 = by_label(report)["line 1 task cm-1"]
    assert cm1.scores.recoverable_error_detail[1].remedies == ["ask_for_privilege"]
    assert counts(cm1) == (2, 0, [5, 6], 2, 2, 2, False)
    assert report.catalog == str(DATA / "complexmcp_catalog.json")


def test_complexmcp_plain_text_several_episodes(tmp_path):
    ok = (
        '<tool>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool>\n'
        '<response>\n{"status": "ok", "output": "rain"}\n</response>\nRain in Oslo.\n[END]\n'
    )
    broken = 'Let me look.\n<tool>\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n[END]\n'
    cut = (
        '<tool>\n{"name": "send_message", "arguments": {"uid": "u1"}}\n</tool>\n'
        '<response>\n{"status": "internal error", "output": "network down"}\n</response>\n'
    )
    path = tmp_path / "runs.txt"
    path.write_text(ok + broken + cut)
    report = score_files([path])
    eps = by_label(report)
    assert sorted(eps) == ["episode 1", "episode 3"]
    assert eps["episode 1"].scores.tool_calls == 1 and eps["episode 1"].line == 1
    # episode 1 is file lines 1-8; episode 2 starts at line 9 with its unclosed <tool> on line
    # 10 (named by file line); episode 3 starts at line 13 and has no [END]: scored as cut short
    # (its error at the very end is not counted as given up) with a warning
    assert problem_texts(report) == [
        f"{path}:9 (episode 2): error: unclosed <tool> block opened at line 10",
        f"{path}:13 (episode 3): warning: no [END] marker: scored as cut short (status limit)",
    ]
    e3 = eps["episode 3"].scores
    assert (e3.status, e3.recoverable_errors, e3.recovery_attempts, e3.defeatism) == ("limit", 1, 0, False)
    assert e3.recoverable_error_detail[0].cut_short is True


def test_complexmcp_json_string_and_list(tmp_path):
    text = (DATA / "talk_episode.complexmcp.txt").read_text()
    one = tmp_path / "one.json"
    one.write_text(json.dumps(text))
    many = tmp_path / "many.json"
    many.write_text(json.dumps([{"id": "a", "output": {"transcript": text}}, text]))
    res = load_complexmcp(one)
    assert [e.label for e in res.episodes] == ["transcript"] and res.problems == []
    res = load_complexmcp(many)
    assert [(e.label, e.trajectory.episode_id, len(e.trajectory.steps)) for e in res.episodes] == [
        ("record 1", "a", 6),
        ("record 2", "many.json:record 2", 6),
    ]


@pytest.mark.parametrize(
    "body, expected",
    [
        ('{"status": "ok", "output": "done"}', (False, None)),
        ("{'status': 'ok', 'output': {'ids': ('a', 'b')}}", (False, None)),  # Python literal, a tuple
        ('{"status": "failed", "output": "This operation need privilege"}', (True, "permission_denied")),
        ('{"status": "failed", "output": "User not found"}', (True, "not_found")),
        ('{"status": "failed", "output": "The cart is empty"}', (True, "precondition_failed")),  # the default
        ('{"status": "error", "output": "missing argument uid"}', (True, "invalid_argument")),
        ("{'status': 'internel error', 'output': \"It appears there's a network issue\"}", (True, "transient")),
        ('{"status": "internal error", "output": "Password check failed"}', (True, "transient")),
        ("You have 3 new messages", (False, None)),
        ("Error: rate limit exceeded, retry after 5 seconds", (True, "rate_limited")),
    ],
)
def test_complexmcp_status_mapping(body, expected):
    r = complexmcp_response(body)
    is_error, code, result = r.is_error, r.code, r.result
    assert (is_error, code) == expected
    json.dumps(result)  # always JSON-able
    if code == "rate_limited":
        assert result["error"]["retry_after"] == 5


# -- error detection shared by openai / anthropic -------------------------------------------------------
@pytest.mark.parametrize(
    "content, expected",
    [
        ('{"error": {"code": "timeout", "message": "timed out"}}', (True, "timeout")),
        ('{"error": {"message": "Contact c-9 not found"}}', (True, "not_found")),  # no code: guessed
        ('{"error": "Too many requests"}', (True, "rate_limited")),
        ('{"error": null, "value": 3}', (False, None)),
        ('{"isError": true, "content": [{"type": "text", "text": "network unreachable"}]}', (True, "transient")),
        ("Error: Connection reset by peer", (True, "transient")),
        ("error: unknown tool frobnicate", (True, "not_found")),
        ("Error: something odd", (True, None)),  # no pattern: no code, not recoverable
        ("No errors found in the order.", (False, None)),
        ("errors were fixed earlier", (False, None)),  # only the prefixes "Error" / "error:" count
        ([{"type": "text", "text": "Error: You do not have permission"}], (True, "permission_denied")),
    ],
)
def test_result_error_detection(content, expected):
    is_error, code, _ = interpret_result(content)
    assert (is_error, code) == expected


def test_openai_flat_calls_error_flag_and_unknown_tool():
    from mcpgym.evaluation.formats.openai import trajectory_from_messages
    from mcpgym.evaluation.scoring.scorer import score_episode
    from mcpgym.evaluation.scoring.tool_catalog import Catalog

    msgs = [
        {"role": "user", "content": "Tag Maya."},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "1", "name": "talk_add_contact_tag", "arguments": {"contact_id": "c-002", "tag": "x"}}
            ],
        },
        {"role": "tool", "id": "1", "tool_call_id": "1", "content": "You lack the privilege", "error": True},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "2", "type": "function", "function": {"name": "talk_teleport", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "2", "content": "Error: unknown tool talk_teleport"},
        {"role": "assistant", "content": "I could not tag Maya."},
    ]
    traj, warnings = trajectory_from_messages(msgs, episode_id="e")
    assert warnings == [] and traj.final_message == "I could not tag Maya." and traj.instruction == "Tag Maya."
    # the flat call (tau2-bench style) with "error": true -> permission_denied (guessed from
    # "privilege"); the unknown tool -> not_found on field "name": an invalid call
    assert [(s.tool, s.is_error, s.error_code, s.error_field) for s in traj.steps] == [
        ("talk_add_contact_tag", True, "permission_denied", None),
        ("talk_teleport", True, "not_found", "name"),
    ]
    sc = score_episode(traj, Catalog.from_apps(["system", "talk"]))
    # 1 recoverable error (remedy system_request_privilege) never attempted, and a refusal: defeatism
    assert (sc.invalid_calls, sc.recoverable_errors, sc.recovery_attempts, sc.defeatism) == (1, 1, 0, True)


def test_is_error_flag_forces_an_error():
    assert interpret_result("Blocked.", is_error=True)[:2] == (True, "precondition_failed")
    assert interpret_result("Blocked.", is_error=False)[:2] == (False, None)


def test_guess_error_code_restricted():
    assert guess_error_code("quota exceeded, permission missing") == "rate_limited"
    assert guess_error_code("quota exceeded, permission missing", allowed=["permission_denied"]) == "permission_denied"
    assert guess_error_code("odd", allowed=["not_found"], default="precondition_failed") == "precondition_failed"


# -- auto, problems, rendering, the command ------------------------------------------------------------
def test_detect_format(tmp_path):
    for fmt, path in TALK_FILES.items():
        assert detect_format(path)[0] == fmt
    # the extension is not trusted: a JSON-lines MCP log named .log, a transcript named .json
    log = tmp_path / "session.log"
    log.write_text(TALK_FILES["mcp-log"].read_text())
    assert detect_format(log)[0] == "mcp-log"
    assert score_files([log]).episodes[0].scores.writes == 2
    quoted = tmp_path / "transcript.json"
    quoted.write_text(json.dumps(TALK_FILES["complexmcp"].read_text()))
    assert detect_format(quoted)[0] == "complexmcp"
    assert detect_format(DATA / "openai_taubench.json")[0] == "openai"
    assert detect_format(DATA / "mcp_sessions.jsonl")[0] == "mcp-log"  # despite its broken line
    assert detect_format(DATA / "complexmcp_episodes.jsonl")[0] == "complexmcp"
    assert detect_format(DATA / "complexmcp_catalog.json")[0] is None


def test_unknown_and_missing_files_do_not_stop_the_others(tmp_path):
    missing = tmp_path / "nope.jsonl"
    report = score_files([DATA / "complexmcp_catalog.json", missing, TALK_FILES["anthropic"]])
    assert len(report.episodes) == 1 and report.episodes[0].format == "anthropic"
    assert problem_texts(report) == [
        f"{DATA / 'complexmcp_catalog.json'}: error: cannot tell the format (no marker of any format in the "
        "content; tried mcpgym, openai, anthropic, complexmcp, mcp-log, atif, inspect, responses, tau2, langchain, "
        "pydantic-ai, claude-code); pass --format mcpgym|openai|anthropic|complexmcp|mcp-log|atif|inspect|responses"
        "|tau2|langchain|pydantic-ai|claude-code",
        f"{missing}: error: file not found",
    ]
    # an explicit format reads a missing file as a problem too
    assert problem_texts(score_files([missing], "openai")) == [f"{missing}: error: file not found"]


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="unknown format 'csv'"):
        score_files([TALK_FILES["openai"]], "csv")
    with pytest.raises(ValueError, match="talk_episode.openai.json"):  # not a catalog
        score_files([TALK_FILES["openai"]], catalog_path=TALK_FILES["openai"])
    with pytest.raises(ValueError, match="cannot read the catalog"):
        score_files([TALK_FILES["openai"]], catalog_path=DATA / "absent.json")


def test_render_text():
    report = score_files([DATA / "complexmcp_episodes.jsonl", TALK_FILES["mcpgym"]])
    text = render_text(report, width=200)  # titles hold long paths: one line each here
    assert f"{DATA / 'complexmcp_episodes.jsonl'} (complexmcp): 2 episodes, 1 problem" in text
    rows = {line.split()[0]: line.split() for line in text.splitlines() if line.strip()}
    assert rows["cm-3"][:4] == ["cm-3", "3", "0", "qwen-test"]  # task id, line in the file, trial, agent
    assert rows["talk-unblock-and-message"][:4] == ["talk-unblock-and-message", "1", "0", "external"]
    assert "5 talk.contact" in text  # the pre-check skip of the talk episode
    assert "get_uid_from_name" in text and "heuristic" in text and "catalog" in text
    assert "Faults were inferred from error results" in text
    assert "Outcome (success) is unknown" in text
    assert "unclosed <tool> block opened at transcript line 1" in text
    assert "\x1b[" not in text  # no colour codes


def test_json_report_shape():
    report = score_files([TALK_FILES["openai"], DATA / "openai_lines.jsonl"])
    data = json.loads(json.dumps(report.model_dump(mode="json")))
    ep = data["episodes"][0]
    assert (ep["file"], ep["episode"], ep["format"], ep["faults"]) == (
        str(TALK_FILES["openai"]),
        "conversation",
        "openai",
        "inferred",
    )
    for key in sorted(EPISODE_KEYS):
        assert key in ep["scores"]
    agg = data["agents"]["external"]
    for key in (
        "episodes",
        "success_rate",
        "success_ci95",
        "pass_k",
        "verification_rate",
        "precheck_rate",
        "recovery_attempt_rate",
        "recovery_rate",
        "defeatism_rate",
    ):
        assert key in agg
    assert data["faults_inferred"] is True
    # tools sorted by name; talk_get_contact of openai_lines.jsonl got no result: not a step, not listed
    assert data["tools"][0] == {
        "tool": "talk_list_chats",
        "source": "catalog",
        "app": "talk",
        "kind": "read",
        "resources": ["talk.chat", "talk.message"],
        "preconditions": [],
        "calls": 1,
    }
    assert "talk_get_contact" not in [t["tool"] for t in data["tools"]]
    assert [p["line"] for p in data["problems"]] == [2, 3]


def test_run_score_exit_codes(tmp_path):
    out = io.StringIO()
    assert run_score([str(TALK_FILES["complexmcp"])], out=out) == 0
    assert "talk_episode.complexmcp.txt (complexmcp): 1 episode" in " ".join(out.getvalue().split())  # wrapped
    out = io.StringIO()
    assert run_score([str(DATA / "mcpgym_runs.jsonl")], "mcpgym", as_json=True, out=out) == 1  # malformed lines
    assert len(json.loads(out.getvalue())["episodes"]) == 2
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert run_score([str(empty)], "openai", out=io.StringIO()) == 2  # nothing to score


_LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 2),
    st.sampled_from(["", "Error: x", "<tool>", "[END]", "tools/call", "tool_use", "assistant", "tool"]),
)
_KEYS = st.sampled_from(
    [
        "role",
        "content",
        "tool_calls",
        "function",
        "name",
        "arguments",
        "id",
        "tool_call_id",
        "type",
        "input",
        "tool_use_id",
        "is_error",
        "messages",
        "traj",
        "jsonrpc",
        "method",
        "params",
        "result",
        "error",
        "isError",
        "session",
        "message",
        "status",
        "output",
        "episode_id",
        "agent",
        "steps",
    ]
)
_JSON = st.recursive(
    _LEAF, lambda ch: st.one_of(st.lists(ch, max_size=4), st.dictionaries(_KEYS, ch, max_size=5)), max_leaves=20
)


@settings(max_examples=40, deadline=None)
@given(values=st.lists(_JSON, min_size=1, max_size=3), fmt=st.sampled_from(FORMATS))
def test_no_input_crashes_the_readers(tmp_path_factory, values, fmt):
    # whatever JSON lines a file holds, every reader answers with episodes and/or problems,
    # never an exception, and no converter fails unexpectedly ("cannot be converted/read")
    path = tmp_path_factory.mktemp("fuzz") / "f.jsonl"
    path.write_text("\n".join(json.dumps(v) for v in values))
    report = score_files([path], fmt)
    json.dumps(report.model_dump(mode="json"))
    assert not [p for p in report.problems if "cannot be" in p.message]


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "method": [], "id": []},
        {"jsonrpc": "2.0", "method": "tools/call", "id": [1]},
        {"jsonrpc": "2.0", "method": "tools/call", "id": {"n": 1}},
        {"jsonrpc": "2.0", "method": "tools/call", "id": True},
        {"jsonrpc": "2.0", "method": {"name": "tools/call"}, "id": 1},
        {"id": [], "result": {}},
    ],
)
def test_mcp_log_messages_with_ids_or_methods_of_the_wrong_type_are_named_not_crashed(tmp_path, message):
    # JSON-RPC ids are strings, numbers or null and methods are strings: anything else is a line
    # that is not a JSON-RPC message, reported with its line number, never a converter crash
    path = tmp_path / "log.jsonl"
    path.write_text(json.dumps(message) + "\n")
    report = score_files([path], "mcp-log")
    assert not [p for p in report.problems if "cannot be" in p.message]
    assert [(p.line, "not a JSON-RPC message" in p.message) for p in report.problems if p.line == 1] == [(1, True)]
