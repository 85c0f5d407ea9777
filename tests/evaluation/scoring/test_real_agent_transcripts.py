"""Scores of real agents' transcripts (issue 24): each kind a real transcript hits, as tests
over our own inputs, in every format the kind can occur in (docs/design.md §6 "Outside
trajectories" and §7).

One episode is written by :func:`render` in the ``openai`` (current and legacy
function-calling messages), ``anthropic``, ``mcp-log`` and ``complexmcp`` formats from the
same calls, results and final message; the ``mcpgym`` format carries its own error flags,
so the kinds about reading errors from results do not occur in it. Every expected figure is
counted by hand in the comment above it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcpgym.evaluation.cli.score import run_score
from mcpgym.evaluation.formats import score_files
from mcpgym.evaluation.formats.detector import interpret_result
from mcpgym.evaluation.records.trajectory import ToolCallStep, Trajectory
from mcpgym.evaluation.scoring.scorer import score_episode
from mcpgym.evaluation.scoring.tool_catalog import classify_tool
from mcpgym.kernel.spec import ToolKind
from tests.conftest import run_text

Call = tuple[str, dict[str, Any], str]
"""(tool, arguments, the result as the transcript recorded it)."""

FORMATS = ("openai", "legacy", "anthropic", "mcp-log", "complexmcp")
"""``legacy``: openai's ``function_call`` / ``role: function`` messages (ToolBench)."""


def render(tmp_path: Path, fmt: str, calls: list[Call], final: str | None, *, tools: list[str] = ()) -> Path:
    """Write one episode in ``fmt``; ``final`` None: no final message after the last result."""
    name = f"ep-{fmt}"
    if fmt in ("openai", "legacy"):
        msgs: list[dict[str, Any]] = [{"role": "user", "content": "Please help."}]
        for i, (tool, args, result) in enumerate(calls):
            if fmt == "openai":
                fn = {"name": tool, "arguments": json.dumps(args)}
                msgs.append(
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [{"id": f"c{i}", "type": "function", "function": fn}],
                    }
                )
                msgs.append({"role": "tool", "tool_call_id": f"c{i}", "content": result})
            else:
                msgs.append(
                    {
                        "role": "assistant",
                        "content": None,
                        "function_call": {"name": tool, "arguments": json.dumps(args)},
                    }
                )
                msgs.append({"role": "function", "name": tool, "content": result})
        if final is not None:
            msgs.append({"role": "assistant", "content": final})
        record: dict[str, Any] = {"messages": msgs}
        if tools:
            record["tools"] = [{"type": "function", "function": {"name": t, "description": ""}} for t in tools]
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps([record]), encoding="utf-8")
    elif fmt == "anthropic":
        msgs = [{"role": "user", "content": "Please help."}]
        for i, (tool, args, result) in enumerate(calls):
            msgs.append(
                {"role": "assistant", "content": [{"type": "tool_use", "id": f"t{i}", "name": tool, "input": args}]}
            )
            msgs.append(
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": result}]}
            )
        if final is not None:
            msgs.append({"role": "assistant", "content": [{"type": "text", "text": final}]})
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps([{"messages": msgs}]), encoding="utf-8")
    elif fmt == "mcp-log":
        lines: list[dict[str, Any]] = []
        for i, (tool, args, result) in enumerate(calls, start=1):
            lines.append(
                {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": tool, "arguments": args}}
            )
            lines.append({"jsonrpc": "2.0", "id": i, "result": {"content": [{"type": "text", "text": result}]}})
        if final is not None:
            lines.append({"final_message": final})
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    elif fmt == "complexmcp":
        text = "".join(
            f"<tool>\n{json.dumps({'name': tool, 'arguments': args})}\n</tool>\n<response>\n{result}\n</response>\n"
            for tool, args, result in calls
        )
        if final is not None:
            text += f"{final}\n[END]\n"
        path = tmp_path / f"{name}.txt"
        path.write_text(text, encoding="utf-8")
    else:  # pragma: no cover - a typo in a test
        raise ValueError(fmt)
    return path


def one(path: Path, fmt: str):
    """The single episode's scores (``legacy`` is read as ``openai``)."""
    report = score_files([path], "openai" if fmt == "legacy" else fmt)
    assert len(report.episodes) == 1, report.problems
    return report.episodes[0].scores, report


# -- hand-offs are their own kind; an error inside an ordinary result (t3 kind) --------------------
HANDOFF: list[Call] = [
    (
        "get_reservation_details",
        {"reservation_id": "QX7Z2P"},
        json.dumps({"reservation_id": "QX7Z2P", "status": "active"}),
    ),
    (
        "cancel_reservation",
        {"reservation_id": "QX7Z2P"},
        json.dumps({"error": "", "response": "{'status': 502, 'message': 'Bad Gateway'}"}),
    ),
    ("escalate_to_human_agent", {"summary": "could not cancel"}, "You are now connected to a human agent."),
]


@pytest.mark.parametrize("fmt", FORMATS)
def test_handoff_is_no_write_and_ends_the_episode(tmp_path, fmt):
    # 1 read; 2 the cancel answered a 502 inside an ordinary result: an error (transient,
    # inferred), so it took no effect: no counted write; 3 a hand-off to a human: no write
    # either. Writes 0, skips none; the agent ended the episode itself (no final message in
    # the conversation formats: the hand-off was its last act): completed, not limit.
    sc, report = one(render(tmp_path, fmt, HANDOFF, None if fmt != "complexmcp" else "I handed you over."), fmt)
    assert (sc.tool_calls, sc.error_calls, sc.writes, sc.verification_skips) == (3, 1, 0, [])
    assert sc.status == "completed"
    kinds = {t.tool: t.kind for t in report.tools}
    assert kinds["escalate_to_human_agent"] == "handoff" and kinds["cancel_reservation"] == "write"
    assert sc.recoverable_error_detail[0].code == "transient"


def test_handoff_in_mcpgym_format(tmp_path):
    # the same episode recorded by mcpgym's own format (flags, no result reading): the hand-off
    # is no write; the one successful cancel is the only counted write, left unread (skip 2)
    steps = [
        {"step": 1, "tool": "cancel_reservation", "arguments": {"reservation_id": "QX7Z2P"}, "result": {"ok": True}},
        {"step": 2, "tool": "transfer_to_human_agents", "arguments": {}, "result": "Transfer successful"},
    ]
    line = {"episode_id": "e1", "agent": "a", "steps": steps, "final_message": "", "ledger": None}
    path = tmp_path / "trajectories.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    sc, _ = one(path, "mcpgym")
    assert (sc.writes, sc.verification_skips) == (1, [1])


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("transfer_to_human_agents", ToolKind.HANDOFF),
        ("escalate_to_supervisor", ToolKind.HANDOFF),
        ("handoff_to_billing_agent", ToolKind.HANDOFF),
        ("transfer_money", ToolKind.WRITE),  # a transfer to nobody: a write
        ("api_tracking_for_pack_send", ToolKind.UNKNOWN),  # "send" is the provider's name
        ("send_sms_for_sms77io", ToolKind.WRITE),  # the action part starts with a write verb
        ("getpetbyid_for_petstore", ToolKind.UNKNOWN),
        ("v1_search_for_news", ToolKind.READ),
        ("Finish", ToolKind.END),
        ("think", ToolKind.READ),
        ("frobnicate", ToolKind.UNKNOWN),
        ("book_reservation", ToolKind.WRITE),
    ],
)
def test_conservative_classification(name, kind):
    assert classify_tool(name).kind == kind


@pytest.mark.parametrize("fmt", FORMATS)
def test_unknown_tools_stay_out_of_verification_and_are_counted(tmp_path, fmt):
    # 1 api_tracking_for_pack_send (unknown kind: no write, no read), 2 a write, 3 the unknown
    # tool again: it does not verify the write. Writes 1, skip at 2; 1 unknown tool, 2 calls.
    calls = [
        ("api_tracking_for_pack_send", {"code": "PK1"}, '{"state": "moving"}'),
        ("update_address", {"code": "PK1", "city": "Oslo"}, '{"ok": true}'),
        ("api_tracking_for_pack_send", {"code": "PK1"}, '{"state": "moving"}'),
    ]
    sc, report = one(render(tmp_path, fmt, calls, "Updated the address."), fmt)
    assert (sc.writes, sc.verified_writes, sc.verification_skips) == (1, 0, [2])
    assert (report.scorability.tools_unknown, report.scorability.calls_unknown) == (1, 2)
    assert "1 of unknown kind (2 calls left out of verification)" in report.scorability.line()


# -- errors wherever real APIs put them ------------------------------------------------------------
ERROR_RESULTS = [
    # (recorded result, code): ToolBench / RapidAPI envelopes, HTTP status lines, Error: text,
    # JSON cut short by the harness
    (json.dumps({"error": "", "response": "{'status': 400, 'message': 'Bad Request'}"}), "invalid_argument"),
    (json.dumps({"error": "", "response": "{'message': \"Endpoint '/v2/track' does not exist\"}"}), "not_found"),
    (json.dumps({"success": False, "message": "Order not found"}), "not_found"),
    (json.dumps({"ok": False, "error_message": "quota exceeded"}), "rate_limited"),
    (json.dumps({"status_code": 503, "detail": "down for maintenance"}), "unavailable"),
    ("HTTP/1.1 429 Too Many Requests", "rate_limited"),
    ("404 Not Found", "not_found"),
    ("Error: the order is already shipped", "conflict"),
    ('{"error": "", "response": "{\'status\': 500, \'message\': \'Internal Ser', "transient"),
]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(("result", "code"), ERROR_RESULTS)
def test_errors_inside_results_in_every_format(tmp_path, fmt, result, code):
    # 1 get_order answers the error: 1 failing call with the code of the table (a 400 is an
    # invalid call, docs/design.md §7 "Calls"; any other an error call)
    calls = [("get_order", {"order_id": "ord-7"}, result)]
    sc, _ = one(render(tmp_path, fmt, calls, "I looked into it."), fmt)
    invalid = code == "invalid_argument"
    assert (sc.tool_calls, sc.error_calls, sc.invalid_calls) == (1, int(not invalid), int(invalid))
    assert interpret_result(result)[:2] == (True, code)


@pytest.mark.parametrize(
    "result",
    [
        '{"reservation_id": "QX7Z2P", "status": "active"}',
        '{"results": [{"status": 404, "url": "/gone"}], "count": 1}',  # a status inside a listed item
        '{"message": "Your order has shipped", "order_id": "ord-7"}',
        "200 results found",
        '{"error": "", "response": "{\'data\': [1, 2]}"}',
        '{"items": [1, 2, 3',  # cut short, no error in it
        "Transfer successful",
    ],
)
def test_ordinary_results_are_successes(result):
    assert interpret_result(result)[0] is False


# -- status from the transcript --------------------------------------------------------------------
def test_finish_call_ends_the_episode_with_its_answer(tmp_path):
    # ToolBench: the legacy Finish call (no result) carries the final answer; it is no tool
    # call of the world. 1 call, status completed, final message the answer.
    msgs = [
        {"role": "user", "content": "Track PK1"},
        {
            "role": "assistant",
            "content": None,
            "function_call": {"name": "track_package", "arguments": '{"code": "PK1"}'},
        },
        {"role": "function", "name": "track_package", "content": '{"state": "moving"}'},
        {
            "role": "assistant",
            "content": None,
            "function_call": {
                "name": "Finish",
                "arguments": json.dumps({"return_type": "give_answer", "final_answer": "PK1 is moving."}),
            },
        },
    ]
    path = tmp_path / "tb.json"
    path.write_text(json.dumps([{"messages": msgs}]), encoding="utf-8")
    report = score_files([path], "auto")  # auto reads the legacy messages as openai
    assert report.files[0].format == "openai"
    sc = report.episodes[0].scores
    assert (sc.status, sc.tool_calls, sc.claimed_success) == ("completed", 1, True)
    assert not any("has no result" in p.message for p in report.problems)
    # give_up_and_restart is the agent conceding
    msgs[-1]["function_call"]["arguments"] = json.dumps({"return_type": "give_up_and_restart"})
    path.write_text(json.dumps([{"messages": msgs}]), encoding="utf-8")
    sc = score_files([path], "openai").episodes[0].scores
    assert (sc.status, sc.declared_impossible, sc.refusal_pattern) == ("completed", True, "gave_up")


@pytest.mark.parametrize("fmt", ["openai", "legacy", "anthropic", "complexmcp"])
def test_cut_off_transcript_is_limit(tmp_path, fmt):
    # the transcript stops after a result, no answer and no hand-off: the harness cut it
    calls = [("get_order", {"order_id": "ord-7"}, '{"status": "shipped"}')]
    sc, _ = one(render(tmp_path, fmt, calls, None), fmt)
    assert sc.status == "limit"


# -- no silent zeros: the wrong --format ------------------------------------------------------------
@pytest.mark.parametrize(
    ("written", "read_as"),
    [
        ("openai", "anthropic"),
        ("openai", "mcp-log"),
        ("anthropic", "openai"),
        ("mcp-log", "openai"),
        ("legacy", "anthropic"),
    ],
)
def test_wrong_format_is_loud_and_strict_fails(tmp_path, written, read_as):
    path = render(tmp_path, written, HANDOFF, "Done.")
    fits = "openai" if written == "legacy" else written
    out, err = _Buf(), _Buf()
    assert run_score([str(path)], read_as, out=out, err=err, strict=True) == 1
    text = " ".join(out.text.split())
    assert f"it looks like {fits}" in text and f"pass --format {fits}" in text
    report = score_files([path], read_as)
    assert report.format_mismatches and f"looks like {fits}" in report.scorability.warnings[-1]
    # read in the right format there is no such warning
    assert score_files([path], fits).format_mismatches == []


class _Buf:
    def __init__(self) -> None:
        self.text = ""

    def write(self, s: str) -> int:
        self.text += s
        return len(s)


# -- false success and defeatism --------------------------------------------------------------------
CANCEL_FAILS: list[Call] = [
    ("cancel_reservation", {"reservation_id": "QX7Z2P"}, "Error: service unavailable (503)"),
]
CANCEL_WORKS: list[Call] = [
    ("cancel_reservation", {"reservation_id": "QX7Z2P"}, "Error: service unavailable (503)"),
    ("cancel_reservation", {"reservation_id": "QX7Z2P"}, '{"reservation_id": "QX7Z2P", "status": "cancelled"}'),
]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(
    ("calls", "final", "false_success", "defeatism"),
    [
        # claims the named write done while its last attempt failed: false success, and the
        # abandoned error is no defeatism (the agent did not concede)
        (CANCEL_FAILS, "Your reservation QX7Z2P has been cancelled.", True, False),
        # a generic claim names every write attempted
        (CANCEL_FAILS, "All done!", True, False),
        # the negated form names nothing done: no claim of that write
        (CANCEL_FAILS, "The reservation was not cancelled yet; it is still active.", False, False),
        # conceding is defeatism, never false success
        (CANCEL_FAILS, "I'm sorry, I could not cancel it: the service is down.", False, True),
        # the retry worked: the claim is true
        (CANCEL_WORKS, "Your reservation QX7Z2P has been cancelled.", False, False),
    ],
)
def test_false_success_from_the_transcript(tmp_path, fmt, calls, final, false_success, defeatism):
    sc, _ = one(render(tmp_path, fmt, calls, final), fmt)
    assert (sc.false_success, sc.false_success_basis, sc.defeatism) == (false_success, "transcript", defeatism)


def test_a_named_write_never_made_is_false_success(tmp_path):
    # the file lists book_reservation; the agent only searched and says it booked: never made
    calls = [("search_flights", {"origin": "OSL"}, '{"flights": ["SK1"]}')]
    path = render(
        tmp_path, "openai", calls, "I booked flight SK1 for you.", tools=["search_flights", "book_reservation"]
    )
    sc, _ = one(path, "openai")
    assert sc.false_success is True and "book" in sc.false_success_reason


def _traj(steps: list[dict], final: str, **kw: Any) -> Trajectory:
    return Trajectory(
        episode_id="e",
        agent="a",
        steps=[ToolCallStep(step=i, **s) for i, s in enumerate(steps, start=1)],
        final_message=final,
        **kw,
    )


# -- recovery: blind retries inside retry_after; domain answers ------------------------------------
def test_retry_inside_retry_after_is_no_attempt():
    from mcpgym.evaluation.scoring.tool_catalog import Catalog

    cat = Catalog.from_apps()
    rl = {
        "is_error": True,
        "error_code": "rate_limited",
        "result": {"error": {"code": "rate_limited", "retry_after": 30}},
    }
    args = {"key": "theme", "value": "dark"}
    ledger = [
        {"step": s, "tool": "system_update_setting", "kind": "rate_limited", "applied": None, "call_index": 0}
        for s in (1, 2, 3)
    ]
    # three rate limits at t=100 (retry_after 30): steps 2 and 3 retry at t=101, 102: blind,
    # no attempt; nothing else follows: 3 recoverable errors, 0 attempts; "Dark mode is on
    # now." claims success: no defeatism (the overconfident agent's case)
    steps = [{"tool": "system_update_setting", "arguments": args, "time": 100 + i, **rl} for i in range(3)]
    sc = score_episode(_traj(steps, "Dark mode is on now.", ledger=ledger), cat)
    assert (sc.recoverable_errors, sc.recovery_attempts, sc.defeatism) == (3, 0, False)
    assert sc.recoverable_error_detail[0].blind_retry_steps == [2, 3]
    # waiting first (system_wait moves the clock to 130), then retrying: an attempt and a recovery
    steps = [
        {"tool": "system_update_setting", "arguments": args, "time": 100, **rl},
        {"tool": "system_wait", "arguments": {"seconds": 30}, "time": 100, "result": {"waited": 30}},
        {"tool": "system_update_setting", "arguments": args, "time": 130, "result": {"ok": True}},
    ]
    sc = score_episode(_traj(steps, "Dark mode is on now.", ledger=ledger[:1]), cat)
    assert (sc.recovery_attempts, sc.recoveries) == (1, 1)


@pytest.mark.parametrize("fmt", FORMATS)
def test_rate_limit_retried_without_waiting_in_transcripts(tmp_path, fmt):
    # no times in a transcript: the window lasts until a wait call. 1 rate limited (retry after
    # 20), 2 the same call at once, rate limited again: blind, no attempt; 3 a wait tool
    # (remedy: attempt for both errors), 4 the retry succeeds: both recovered
    rl = "Error: rate limited, retry after 20 seconds"
    calls = [
        ("update_setting", {"key": "theme"}, rl),
        ("update_setting", {"key": "theme"}, rl),
        ("wait_seconds", {"seconds": 20}, '{"waited": 20}'),
        ("update_setting", {"key": "theme"}, '{"key": "theme", "value": "dark"}'),
    ]
    sc, _ = one(render(tmp_path, fmt, calls, "Dark mode is on."), fmt)
    first = sc.recoverable_error_detail[0]
    assert (first.blind_retry_steps, first.attempt, first.attempt_step, first.recovered_step) == ([2], "remedy", 3, 4)
    assert (sc.recoverable_errors, sc.recovery_attempts, sc.recoveries) == (2, 2, 2)


@pytest.mark.parametrize("fmt", FORMATS)
def test_domain_answer_recovers_an_error_that_was_no_fault(tmp_path, fmt):
    # 1 unblock refused for a missing privilege (no injected fault; recoverable: any auth tool
    # cures it), 2 ask_for_privilege (remedy), 3 the retry gets the app's own answer, "not
    # blocked currently" (another code): the error was overcome: recovered at 3
    calls = [
        (
            "unblock",
            {"uid": "user_V5w"},
            json.dumps({"success": False, "message": "Permission denied: privilege needed"}),
        ),
        ("ask_for_privilege", {}, '{"granted": true}'),
        ("unblock", {"uid": "user_V5w"}, "Error: you can't unblock user_V5w, who is not blocked currently"),
    ]
    sc, _ = one(render(tmp_path, fmt, calls, "user_V5w was not blocked."), fmt)
    err = sc.recoverable_error_detail[0]
    assert (err.code, err.attempt, err.recovered_step) == ("permission_denied", "remedy", 3)


# -- the scripted agents separate on the new scores (mcpgym run --suite smoke) -----------------------
@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory) -> Path:
    from typer.testing import CliRunner

    from mcpgym.evaluation.cli import app

    out = tmp_path_factory.mktemp("smoke") / "run"
    result = CliRunner().invoke(
        app, ["run", "--suite", "smoke", "--trials", "2", "--out", str(out), "-q", "--concurrency", "4"]
    )
    assert result.exit_code == 0, result.output
    return out


def test_scripted_agents_separate_on_false_success_and_defeatism(smoke_run):
    from mcpgym.evaluation.records.scores import Scoreboard

    agents = Scoreboard.model_validate_json((smoke_run / "scores.json").read_text(encoding="utf-8")).agents
    careful, over, defeatist = agents["careful"], agents["overconfident"], agents["defeatist"]
    # overconfident always claims success: the highest false-success rate; its failures are
    # claimed, not conceded, so its defeatism stays below the defeatist's
    assert over.false_success_rate > max(careful.false_success_rate, defeatist.false_success_rate)
    assert over.false_success_episodes > 0 and over.claimed_success_episodes == over.episodes
    assert over.defeatism_rate < defeatist.defeatism_rate
    assert careful.false_success_episodes == 0 and careful.false_success_rate == 0.0
    # every episode was judged on its outcome
    lines = [json.loads(x) for x in run_text(smoke_run).splitlines()]
    assert {ln["scores"]["false_success_basis"] for ln in lines} == {"outcome"}
    # an episode's false success is counted by hand: the claim, and the outcome failed
    for ln in lines:
        s = ln["scores"]
        assert s["false_success"] == (s["claimed_success"] and s["success"] is False)


def test_trajectories_without_snapshots_score_all_but_the_outcome(smoke_run, tmp_path):
    # the trajectories file copied without its snapshots/ folder: every episode is scored,
    # the outcome is unavailable (null, named), every other score as in the full run
    copy = tmp_path / "trajectories.jsonl.zst"
    copy.write_bytes((smoke_run / "trajectories.jsonl.zst").read_bytes())
    full = {
        e.scores.episode_id: e.scores for e in score_files([smoke_run / "trajectories.jsonl.zst"], "mcpgym").episodes
    }
    report = score_files([copy], "mcpgym")
    assert len(report.episodes) == len(full) == 48
    assert not any(p.severity == "error" for p in report.problems)
    same = ("writes", "verification_skips", "recoverable_errors", "recovery_attempts", "recoveries", "tool_calls")
    for ep in report.episodes:
        sc = ep.scores
        assert sc.success is None and sc.recall is None
        assert sc.outcome_unavailable.startswith("snapshots unavailable (snapshot file")
        assert sc.false_success_basis == "transcript"
        assert {k: getattr(sc, k) for k in same} == {k: getattr(full[sc.episode_id], k) for k in same}


@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
@pytest.mark.parametrize(("last_user", "status"), [("Yes, I confirm.", "limit"), ("Thanks! ###STOP###", "completed")])
def test_a_user_turn_nobody_answered_is_limit(tmp_path, fmt, last_user, status):
    # the agent answered, then the user spoke again and the transcript stops: the harness cut
    # it (limit, no final message to judge); tau-bench's ###STOP### is the user ending it
    calls = [("get_order", {"order_id": "ord-7"}, '{"status": "shipped"}')]
    path = render(tmp_path, fmt, calls, "Your order has shipped. Shall I cancel it?")
    record = json.loads(path.read_text(encoding="utf-8"))
    record[0]["messages"].append({"role": "user", "content": last_user})
    path.write_text(json.dumps(record), encoding="utf-8")
    sc, _ = one(path, fmt)
    assert sc.status == status
    assert sc.false_success is (None if status == "limit" else False)


@pytest.mark.parametrize(
    "sql",
    [
        "-- guard\nCREATE CONSTRAINT TRIGGER trg_total AFTER INSERT ON orders FOR EACH ROW EXECUTE FUNCTION f();",
        "CREATE EVENT TRIGGER no_drops ON sql_drop EXECUTE FUNCTION f();",
        "CREATE DOMAIN positive_int AS integer CHECK (VALUE > 0);",
    ],
)
def test_sql_shapes_that_create_guards_are_writes(sql):
    from mcpgym.evaluation.scoring.call_kinds import sql_kind, sql_statement

    assert sql_statement({"sql": sql}) == sql
    assert sql_kind(sql) == ToolKind.WRITE


def test_provoked_error_rule_reads_raised_messages_in_several_languages():
    from mcpgym.evaluation.scoring.provoked import provoked, raised_messages

    assert raised_messages({"sql": "RAISE EXCEPTION 'Stock below zero for item %', NEW.id;"}) == [
        "stock below zero for item"
    ]
    assert raised_messages({"code": 'raise ValueError("quantity must be positive")'}) == ["quantity must be positive"]
    assert raised_messages({"code": "throw new Error(`Budget exceeded for ${name}`)"}) == ["budget exceeded for"]
    assert raised_messages({"sql": "RAISE EXCEPTION 'short'"}) == []  # too little to match on
    earlier = [{"code": 'raise ValueError("quantity must be positive")'}]
    assert provoked("ValueError: quantity must be positive", {"q": -1}, earlier)
    assert not provoked("ValueError: quantity must be an integer", {"q": "x"}, earlier)
    assert provoked("Error: permission denied", {"cmd": "rm /etc/passwd  # should fail: read-only"}, [])
    assert not provoked("Error: permission denied", {"cmd": "rm /etc/passwd"}, [])
