"""Issue 35: the readers of what harnesses store, the layered result reader, tool kinds without
a catalog, alternatives on the failed call's object and episode endings, each over inputs
written here (shapes checked against openai-agents 0.24, langchain-core 1.x, pydantic-ai 1.x
and tau2-bench's source), in every format it can occur in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcpgym.evaluation.formats import detect_format, score_files
from mcpgym.evaluation.formats.layers import read_result
from mcpgym.evaluation.records.error_rule import ErrorRule
from mcpgym.evaluation.scoring.call_kinds import classify_call, kind_from_annotations, sql_kind, sql_tables
from mcpgym.evaluation.scoring.tool_catalog import classify_tool
from mcpgym.kernel.spec import ToolKind


def _wrap(result: dict[str, Any]) -> str:
    """An MCP result as the Agents SDK hands it over: a text part holding the CallToolResult JSON."""
    return json.dumps({"type": "text", "text": json.dumps(result)})


def _ctr(text: str, is_error: bool = False) -> dict[str, Any]:
    return {"meta": None, "content": [{"type": "text", "text": text}], "isError": is_error}


def _score(tmp_path: Path, data: Any, fmt: str = "auto", name: str = "t.json") -> Any:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return score_files([path], fmt)


# -- one episode in each harness's form -------------------------------------------------------------------
# 1 get_page fails (a REST error body inside the wrapper), 2 get_page again succeeds, 3 update_page
# writes, 4 get_page reads it back; final text claims the update.
ERR_BODY = {"object": "error", "status": 404, "code": "object_not_found", "message": "Could not find page p-0001"}
OK_PAGE = {"object": "page", "id": "p-0001", "title": "Plan"}


def _responses_items() -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [{"role": "user", "content": "Rename the page."}]
    steps = [
        ("get_page", {"page_id": "p-0001"}, _wrap(_ctr(json.dumps(ERR_BODY)))),
        ("get_page", {"page_id": "p-0001"}, _wrap(_ctr(json.dumps(OK_PAGE)))),
        ("update_page", {"page_id": "p-0001", "title": "Q3"}, _wrap(_ctr(json.dumps({**OK_PAGE, "title": "Q3"})))),
        ("get_page", {"page_id": "p-0001"}, _wrap(_ctr(json.dumps({**OK_PAGE, "title": "Q3"})))),
    ]
    for i, (name, args, out) in enumerate(steps):
        items.append({"type": "function_call", "call_id": f"c{i}", "name": name, "arguments": json.dumps(args)})
        items.append({"type": "function_call_output", "call_id": f"c{i}", "output": out})
    items.append(
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "I updated the page."}]}
    )
    return items


def _langchain(dict_form: bool) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = [{"type": "human", "content": "Rename the page."}]
    answers = [json.dumps(ERR_BODY), json.dumps(OK_PAGE), json.dumps({**OK_PAGE, "title": "Q3"}), json.dumps(OK_PAGE)]
    calls = [("get_page", {"page_id": "p-0001"}), ("get_page", {"page_id": "p-0001"}),
             ("update_page", {"page_id": "p-0001", "title": "Q3"}), ("get_page", {"page_id": "p-0001"})]  # fmt: skip
    for i, ((name, args), ans) in enumerate(zip(calls, answers, strict=True)):
        msgs.append(
            {
                "type": "ai",
                "content": "",
                "tool_calls": [{"name": name, "args": args, "id": f"c{i}", "type": "tool_call"}],
            }
        )
        msgs.append({"type": "tool", "content": ans, "tool_call_id": f"c{i}", "name": name, "status": "success"})
    msgs.append({"type": "ai", "content": "I updated the page.", "tool_calls": []})
    if dict_form:  # messages_to_dict
        return [{"type": m["type"], "data": {**m, "additional_kwargs": {}}} for m in msgs]
    return msgs


def _pydantic_ai() -> list[dict[str, Any]]:
    answers = [ERR_BODY, OK_PAGE, {**OK_PAGE, "title": "Q3"}, OK_PAGE]
    calls = [("get_page", {"page_id": "p-0001"}), ("get_page", {"page_id": "p-0001"}),
             ("update_page", {"page_id": "p-0001", "title": "Q3"}), ("get_page", {"page_id": "p-0001"})]  # fmt: skip
    out: list[dict[str, Any]] = [
        {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "Rename the page."}]}
    ]
    for i, ((name, args), ans) in enumerate(zip(calls, answers, strict=True)):
        out.append(
            {
                "kind": "response",
                "parts": [{"part_kind": "tool-call", "tool_name": name, "args": args, "tool_call_id": f"c{i}"}],
            }
        )
        out.append(
            {
                "kind": "request",
                "parts": [{"part_kind": "tool-return", "tool_name": name, "content": ans, "tool_call_id": f"c{i}"}],
            }
        )
    out.append({"kind": "response", "parts": [{"part_kind": "text", "content": "I updated the page."}]})
    return out


def _tau2() -> dict[str, Any]:
    msgs: list[dict[str, Any]] = [{"role": "user", "content": "Rename the page."}]
    answers = [json.dumps(ERR_BODY), json.dumps(OK_PAGE), json.dumps({**OK_PAGE, "title": "Q3"}), json.dumps(OK_PAGE)]
    calls = [("get_page", {"page_id": "p-0001"}), ("get_page", {"page_id": "p-0001"}),
             ("update_page", {"page_id": "p-0001", "title": "Q3"}), ("get_page", {"page_id": "p-0001"})]  # fmt: skip
    for i, ((name, args), ans) in enumerate(zip(calls, answers, strict=True)):
        msgs.append({"role": "assistant", "content": None,
                     "tool_calls": [{"id": f"c{i}", "name": name, "arguments": args, "requestor": "assistant"}]})  # fmt: skip
        msgs.append({"role": "tool", "id": f"c{i}", "content": ans, "requestor": "assistant", "error": False})
    msgs.append({"role": "assistant", "content": "I updated the page."})
    msgs.append({"role": "user", "content": "Thanks! ###STOP###"})
    return {"info": {}, "tasks": [], "simulations": [{"id": "s1", "task_id": "7", "trial": 0,
            "termination_reason": "user_stop", "messages": msgs}]}  # fmt: skip


def _claude_code() -> list[dict[str, Any]]:
    """The episode as Claude Code logs it: one content block a line, bookkeeping lines between."""
    base = {"sessionId": "s-1", "cwd": "/work", "isSidechain": False}

    def line(kind: str, block: Any, mid: str | None = None) -> dict[str, Any]:
        msg: dict[str, Any] = {"role": kind, "content": block if isinstance(block, str) else [block]}
        if mid:
            msg.update(id=mid, model="claude-sonnet-4-6")
        return {**base, "type": kind, "message": msg}

    out = [{"type": "queue-operation", "operation": "enqueue", "sessionId": "s-1"}, line("user", "Rename the page.")]
    answers = [json.dumps(ERR_BODY), json.dumps(OK_PAGE), json.dumps({**OK_PAGE, "title": "Q3"}), json.dumps(OK_PAGE)]
    calls = [("get_page", {"page_id": "p-0001"}), ("get_page", {"page_id": "p-0001"}),
             ("update_page", {"page_id": "p-0001", "title": "Q3"}), ("get_page", {"page_id": "p-0001"})]  # fmt: skip
    for i, ((name, args), ans) in enumerate(zip(calls, answers, strict=True)):
        out.append(line("assistant", {"type": "thinking", "thinking": "", "signature": "x"}, f"m{i}"))
        out.append(line("assistant", {"type": "tool_use", "id": f"c{i}", "name": name, "input": args}, f"m{i}"))
        out.append(line("user", {"type": "tool_result", "tool_use_id": f"c{i}", "content": ans}))
    out.append(line("assistant", {"type": "text", "text": "I updated the page."}, "m9"))
    return out


CASES = {
    "claude-code": _claude_code,
    "responses": _responses_items,
    "langchain-dict": lambda: _langchain(True),
    "langchain-dump": lambda: _langchain(False),
    "langgraph-state": lambda: {"messages": _langchain(False)},
    "pydantic-ai": _pydantic_ai,
    "tau2": _tau2,
}
FORMAT_OF = {"claude-code": "claude-code", "responses": "responses", "langchain-dict": "langchain", "langchain-dump": "langchain",
             "langgraph-state": "langchain", "pydantic-ai": "pydantic-ai", "tau2": "tau2"}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_harness_form_reads_the_same_episode(tmp_path: Path, case: str) -> None:
    """Hand-counted: 4 calls, 1 error (REST error body, 404) recovered by the retry at 2, 1 write
    (update_page) read back at 4, no defeatism, no false success, completed."""
    report = _score(tmp_path, CASES[case]())
    assert [f.format for f in report.files] == [FORMAT_OF[case]]
    sc = report.episodes[0].scores
    assert (sc.status, sc.tool_calls, sc.error_calls, sc.writes, sc.verification_skips) == ("completed", 4, 1, 1, [])
    assert (sc.recovery_attempts, sc.recoveries, sc.defeatism, sc.false_success) == (1, 1, False, False)
    assert [(h.step, h.rule) for h in sc.error_rules] == [(1, ErrorRule.REST_ERROR_BODY)]


def test_format_openai_reads_responses_items_never_a_silent_zero(tmp_path: Path) -> None:
    sc = _score(tmp_path, _responses_items(), "openai").episodes[0].scores
    assert (sc.tool_calls, sc.error_calls, sc.writes) == (4, 1, 1)


def test_hosted_mcp_call_items_and_their_tool_list(tmp_path: Path) -> None:
    """A Responses ``mcp_call`` carries its answer; ``mcp_list_tools`` annotations give kinds
    the names do not (``pages_touch`` reads nothing from its name: the hint says write)."""
    items = [
        {"role": "user", "content": "Touch the page."},
        {
            "type": "mcp_list_tools",
            "server_label": "notes",
            "tools": [
                {"name": "pages_touch", "input_schema": {}, "annotations": {"readOnlyHint": False}},
                {"name": "pages_peek", "input_schema": {}, "annotations": {"readOnlyHint": True}},
            ],
        },  # fmt: skip
        {
            "type": "mcp_call",
            "id": "m1",
            "name": "pages_touch",
            "arguments": '{"page_id": "p-0001"}',
            "server_label": "notes",
            "output": None,
            "error": "upstream 503",
        },  # fmt: skip
        {
            "type": "mcp_call",
            "id": "m2",
            "name": "pages_touch",
            "arguments": '{"page_id": "p-0001"}',
            "server_label": "notes",
            "output": "ok",
            "error": None,
        },  # fmt: skip
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]},
    ]
    sc = _score(tmp_path, items).episodes[0].scores
    assert (sc.tool_calls, sc.error_calls, sc.writes, sc.recoveries) == (2, 1, 1, 1)
    assert [h.rule for h in sc.error_rules] == [ErrorRule.FORMAT_FLAG]


def test_anthropic_mcp_connector_blocks(tmp_path: Path) -> None:
    msgs = [
        {"role": "user", "content": "Rename the page."},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "mcp_tool_use",
                    "id": "u1",
                    "name": "update_page",
                    "server_name": "notes",
                    "input": {"page_id": "p-0001", "title": "Q3"},
                },
                {
                    "type": "mcp_tool_result",
                    "tool_use_id": "u1",
                    "is_error": False,
                    "content": [
                        {"type": "text", "text": json.dumps({"status": 400, "object": "error", "message": "bad title"})}
                    ],
                },
                {"type": "text", "text": "The title was refused."},
            ],
        },  # fmt: skip
    ]
    report = _score(tmp_path, msgs)
    sc = report.episodes[0].scores
    assert report.files[0].format == "anthropic"
    assert (sc.tool_calls, sc.error_calls + sc.invalid_calls, sc.writes) == (1, 1, 0)
    assert sc.error_rules[0].rule == ErrorRule.REST_ERROR_BODY


# -- tau2: user-simulator markers, termination reasons, the user's own tools ------------------------------
def _tau2_run(reason: str, last_user: str, calls: int = 1) -> dict[str, Any]:
    msgs: list[dict[str, Any]] = [{"role": "user", "content": "Help"}]
    for i in range(calls):
        msgs.append({"role": "assistant", "content": "",
                     "tool_calls": [{"id": f"a{i}", "name": "transfer_to_human_agents", "arguments": {}, "requestor": "assistant"}]})  # fmt: skip
        msgs.append({"role": "tool", "id": f"a{i}", "content": "Transfer successful", "requestor": "assistant"})
    msgs.append(
        {
            "role": "user",
            "content": "",
            "tool_calls": [{"id": "u1", "name": "toggle_airplane_mode", "arguments": {}, "requestor": "user"}],
        }
    )
    msgs.append({"role": "tool", "id": "u1", "content": "Airplane mode off", "requestor": "user"})
    msgs.append({"role": "user", "content": last_user})
    return {"id": "s", "task_id": "1", "termination_reason": reason, "messages": msgs}


@pytest.mark.parametrize(
    ("reason", "last", "status"),
    [
        ("user_stop", "###TRANSFER###", "completed"),
        ("user_stop", "###OUT-OF-SCOPE###", "completed"),
        ("max_steps", "still there?", "limit"),
        ("agent_error", "hello?", "errored"),
    ],  # fmt: skip
)
def test_tau2_termination_reasons_and_user_tools(tmp_path: Path, reason: str, last: str, status: str) -> None:
    sc = _score(tmp_path, _tau2_run(reason, last)).episodes[0].scores
    assert sc.status == status
    assert sc.tool_calls == 1  # the simulated user's toggle_airplane_mode is not the agent's


@pytest.mark.parametrize("marker", ["###TRANSFER###", "###OUT-OF-SCOPE###", "###STOP###"])
def test_user_markers_end_a_chat_conversation_completed(tmp_path: Path, marker: str) -> None:
    msgs = [{"role": "user", "content": "Help"}, {"role": "assistant", "content": "I cannot do that."},
            {"role": "user", "content": marker}]  # fmt: skip
    assert _score(tmp_path, msgs, "openai").episodes[0].scores.status == "completed"


def _one_call_then(fmt: str, final: str) -> Any:
    """1 get_order answers, then a last assistant turn whose text is ``final``, in ``fmt``."""
    args, answer = {"order_id": "o-12"}, '{"id": "o-12", "state": "shipped"}'
    ask = "Where is order o-12?"
    if fmt == "openai":
        return [
            {"role": "user", "content": ask},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "get_order", "arguments": json.dumps(args)}}]},
            {"role": "tool", "tool_call_id": "c1", "content": answer},
            {"role": "assistant", "content": final},
        ]  # fmt: skip
    if fmt == "anthropic":
        return [
            {"role": "user", "content": ask},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "get_order", "input": args}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": answer}]},
            {"role": "assistant", "content": [{"type": "text", "text": final}]},
        ]  # fmt: skip
    if fmt == "responses":
        return [
            {"role": "user", "content": ask},
            {"type": "function_call", "call_id": "c1", "name": "get_order", "arguments": json.dumps(args)},
            {"type": "function_call_output", "call_id": "c1", "output": answer},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": final}]},
        ]
    if fmt == "langchain":
        return [
            {"type": "human", "content": ask},
            {"type": "ai", "content": "", "tool_calls": [{"name": "get_order", "args": args, "id": "c1", "type": "tool_call"}]},
            {"type": "tool", "content": answer, "tool_call_id": "c1", "name": "get_order", "status": "success"},
            {"type": "ai", "content": final, "tool_calls": []},
        ]  # fmt: skip
    assert fmt == "pydantic-ai"
    return [
        {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": ask}]},
        {"kind": "response", "parts": [{"part_kind": "tool-call", "tool_name": "get_order", "args": args, "tool_call_id": "c1"}]},
        {"kind": "request", "parts": [{"part_kind": "tool-return", "tool_name": "get_order", "content": answer, "tool_call_id": "c1"}]},
        {"kind": "response", "parts": [{"part_kind": "text", "content": final}]},
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("final", "status", "judged"),
    [
        ("Error: Timeout, no response from LLM", "errored", None),
        ("no response from the model", "errored", None),
        ("", "errored", None),
        ("  ", "errored", None),
        ("Agent stopped due to iteration limit or time limit.", "limit", None),
        ("Agent stopped due to max iterations.", "limit", None),
        ("No response from the model was needed: the order o-12 is shipped.", "completed", False),
        ("The agent stopped due to max iterations last time; order o-12 is shipped.", "completed", False),
    ],
)
@pytest.mark.parametrize("fmt", ["openai", "anthropic", "responses", "langchain", "pydantic-ai"])
def test_a_harness_text_or_an_empty_turn_as_the_last_message_is_no_answer(
    tmp_path: Path, fmt: str, final: str, status: str, judged: bool | None
) -> None:
    # 1 get_order answers; then the harness writes its own text where the answer would be, or
    # the model's last turn is empty: no final message to judge (false_success null); the
    # status the harness text shows (errored: the model gave no answer; limit: the step limit)
    sc = _score(tmp_path, _one_call_then(fmt, final), fmt).episodes[0].scores
    assert (sc.tool_calls, sc.status, sc.false_success, sc.defeatism) == (1, status, judged, False)


def test_a_hand_off_repeated_until_the_step_limit_is_limit(tmp_path: Path) -> None:
    def conv(n: int) -> list[dict[str, Any]]:
        msgs: list[dict[str, Any]] = [{"role": "user", "content": "Help"}]
        for i in range(n):
            msgs.append({"role": "assistant", "content": "", "tool_calls": [
                {"id": f"t{i}", "type": "function", "function": {"name": "transfer_to_human_agents", "arguments": "{}"}}]})  # fmt: skip
            msgs.append({"role": "tool", "tool_call_id": f"t{i}", "content": "Transfer successful"})
        return msgs

    assert _score(tmp_path, conv(1), "openai").episodes[0].scores.status == "completed"
    assert _score(tmp_path, conv(3), "openai").episodes[0].scores.status == "limit"


def test_pydantic_ai_retry_prompt_is_an_error_of_that_call(tmp_path: Path) -> None:
    msgs = [
        {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "Rename"}]},
        {"kind": "response", "parts": [{"part_kind": "tool-call", "tool_name": "update_page", "args": {"title": 3}, "tool_call_id": "c1"}]},
        {"kind": "request", "parts": [{"part_kind": "retry-prompt", "tool_name": "update_page", "content": "title must be a string", "tool_call_id": "c1"}]},
        {"kind": "response", "parts": [{"part_kind": "tool-call", "tool_name": "update_page", "args": {"title": "3"}, "tool_call_id": "c2"}]},
        {"kind": "request", "parts": [{"part_kind": "tool-return", "tool_name": "update_page", "content": "ok", "tool_call_id": "c2"}]},
        {"kind": "response", "parts": [{"part_kind": "text", "content": "Renamed."}]},
    ]  # fmt: skip
    sc = _score(tmp_path, msgs).episodes[0].scores
    assert (sc.tool_calls, sc.writes, sc.status) == (2, 1, "completed")
    assert sc.error_calls + sc.invalid_calls == 1


def test_langchain_tool_status_error_is_the_harness_flag(tmp_path: Path) -> None:
    msgs = [{"type": "human", "content": "x"},
            {"type": "ai", "content": "", "tool_calls": [{"name": "get_page", "args": {}, "id": "c1"}]},
            {"type": "tool", "content": "boom", "tool_call_id": "c1", "status": "error"},
            {"type": "ai", "content": "It failed."}]  # fmt: skip
    sc = _score(tmp_path, msgs).episodes[0].scores
    assert sc.error_calls == 1 and sc.error_rules[0].rule == ErrorRule.FORMAT_FLAG


@pytest.mark.parametrize(
    "text", ["# A README\n\nMentions `<tool>` and `[END]` in prose.\n", "[]", '{"a": 1, "b": [1, 2]}']
)
def test_auto_refuses_what_is_no_transcript_naming_the_formats_tried(tmp_path: Path, text: str) -> None:
    path = tmp_path / "x.md"
    path.write_text(text, encoding="utf-8")
    fmt, reason = detect_format(path)
    assert fmt is None and "tried mcpgym, openai" in reason and "pydantic-ai" in reason
    report = score_files([path])
    assert report.episodes == [] and report.problems[0].severity == "error"


# -- the layered result reader: one case per rule ----------------------------------------------------------
@pytest.mark.parametrize(
    ("content", "flag", "rule"),
    [
        (_wrap(_ctr("done", is_error=True)), None, ErrorRule.IS_ERROR),
        (_wrap(_ctr("Error: page is archived")), None, ErrorRule.ERROR_PREFIX),
        (json.dumps({"error": {"code": "timeout", "message": "slow"}}), None, ErrorRule.ERROR_FIELD),
        (json.dumps({"error": "Message error...", "response": "{'status': 503}"}), None, ErrorRule.ENVELOPE),
        (json.dumps({"status": "failed", "output": "no"}), None, ErrorRule.ENVELOPE_STATUS),
        (json.dumps({"success": False, "message": "nope"}), None, ErrorRule.SUCCESS_FALSE),
        (json.dumps({"status_code": 403, "detail": "forbidden"}), None, ErrorRule.HTTP_STATUS),
        (
            _wrap(_ctr(json.dumps({"status": 400, "object": "error", "message": "bad"}))),
            None,
            ErrorRule.REST_ERROR_BODY,
        ),
        (
            json.dumps({"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}),
            None,
            ErrorRule.REST_ERROR_BODY,
        ),
        (
            _wrap(_ctr(json.dumps({"action_name": "x", "execution_result": {"error": {"status_code": 403}}}))),
            None,
            ErrorRule.NESTED_ERROR,
        ),
        (
            json.dumps({"/a.md": {"result": "error", "reason": "End line must be >= start line"}}),
            None,
            ErrorRule.NESTED_ERROR,
        ),
        (json.dumps({"message": "Not Found"}), None, ErrorRule.ERROR_MESSAGE),
        ("<html><title>403 Forbidden</title></html>", None, ErrorRule.HTML_ERROR_PAGE),
        ("404 Not Found", None, ErrorRule.HTTP_STATUS_LINE),
        (
            "failed to get file contents: GET https://api.github.com/repos/o/r/contents/x: 422 Unprocessable []",
            None,
            ErrorRule.ERROR_TEXT,
        ),
        ("Contents of http://example.org/a:\nurl error", None, ErrorRule.ERROR_TEXT),
        ("Tool git-log not found in agent Assistant", None, ErrorRule.ERROR_TEXT),
        ('{"status": 500, "message": "upstre', None, ErrorRule.BROKEN_JSON),
        ("it did not work out", True, ErrorRule.FORMAT_FLAG),
        ("### Error\nError: page._evaluateFunction: Execution context was destroyed", None, ErrorRule.ERROR_HEADING),
        (
            "meta=None content=[TextContent(type='text', text='{\"content\": [], \"isError\": true}', annotations=None)] isError=False",
            None,
            ErrorRule.IS_ERROR,
        ),  # fmt: skip
    ],
)
def test_each_error_rule_fires_and_is_named(content: Any, flag: bool | None, rule: ErrorRule) -> None:
    r = read_result(content, flag=flag)
    assert (r.is_error, r.rule) == (True, rule)


@pytest.mark.parametrize(
    "content",
    [
        _wrap(_ctr(json.dumps([{"id": 1, "error": "listed as data"}]))),  # a record's field, in a list
        _wrap(_ctr('{"rows": [], "count": 0}')),
        "Contents of http://example.org:\nHello <error>Content truncated. Call again</error>",
        json.dumps({"title": "Fix error handling", "state": "open"}),
        "No error occurred",
    ],
)
def test_answers_that_only_mention_errors_are_successes(content: Any) -> None:
    assert read_result(content).is_error is False


@pytest.mark.parametrize(
    "output",
    [
        'Python 3.13.2\r\nTraceback (most recent call last):\r\n  File "<string>", line 1\r\nModuleNotFoundError: x',
        '  File "<string>", line 1\r\n    for i in x: print(i)\r\nSyntaxError: invalid syntax\r\n',
        "/usr/bin/bash: line 1: gh: command not found\n",
        "/usr/bin/bash: line 1: cd: D:Adu: No such file or directory\n",
        "python.exe: can't open file 'pack.py': [Errno 2] No such file or directory\r\n",
        "C:\\Python313\\python.exe: No module named markitdown\r\n",
        "/usr/bin/bash: -c: line 56: unexpected EOF while looking for matching `''\n",
        "\x1b[31m✗\x1b[0m page.evaluate: TypeError: Cannot read properties of null (reading '0')",
        'Using keyring backend: keyring\n{\n  "error": {\n    "code": 400,\n    "message": "userId is missing"\n  }\n}',
        "Unpacked a.docx (16 XML files)\r\nerror: pack failed\r\n",
    ],
)
def test_a_failed_command_in_a_runners_output_is_an_error_only_there(output: str) -> None:
    # The output of bash (opencode's runs, skill-vs-mcp source 6) shows the failure on a line of
    # its own; the same text read from a file is the file's content, no failure of the read.
    for tool in ("bash", "terminal-run_command", "python_exec"):
        r = read_result(output, tool=tool)
        assert (r.is_error, r.rule) == (True, ErrorRule.COMMAND_FAILURE), tool
    assert read_result(output, tool="read_file").is_error is False
    assert read_result(output).is_error is False


@pytest.mark.parametrize(
    "output",
    [
        "Resolved 30 packages in 1.12s\nwarning: Failed to hardlink files; falling back to full copy.",
        "Total students: 165\r\nFailed students count: 69\r\n",
        "src/app.py:12: raise ValueError: bad input",  # grep's hit, not a failure
    ],
)
def test_a_runners_output_that_only_mentions_failure_is_a_success(output: str) -> None:
    assert read_result(output, tool="bash").is_error is False


@pytest.mark.parametrize(
    "output",
    [
        # a probe's "no" is the answer asked for (source 7: an ls loop probing for node_modules)
        "lodash:\nls: cannot access '/workspace/lodash/node_modules': No such file or directory\njest:\n",
        "bfs: error: /workspace/.task: Permission denied.\n/workspace/jest/yarn.lock\n",
        "find: '/root/.cache': Permission denied\n./src/a.py\n",
    ],
)
def test_a_probes_no_in_a_runners_output_is_an_answer(output: str) -> None:
    assert read_result(output, tool="Bash").is_error is False
    # the same line from a command that is no probe is the command's failure
    failed = output.replace("ls: cannot access", "cd:").replace("bfs: error:", "cp: error:").replace("find:", "cat:")
    assert read_result(failed, tool="Bash").is_error is True


def test_a_clis_thing_not_found_line_is_a_failure_and_a_numbered_listing_no_status() -> None:
    out = 'repository not found: repo not found: name="tonic"\n---\n## Query 1: ok'
    r = read_result(out, tool="Bash")
    assert (r.is_error, r.rule) == (True, ErrorRule.COMMAND_FAILURE)
    for zsh in ("(eval):1: command not found: br\nbr not available", "zsh: command not found: gh\n"):
        assert read_result(zsh, tool="Bash").rule == ErrorRule.COMMAND_FAILURE
    # Claude Code's Read shows a file with line numbers: line 540 is no "540" status line
    for listing in ("540\t\treturn nil\n541\t}\n", "405\t  peerDependencies:\n406\t    x\n"):
        assert read_result(listing, tool="Read").is_error is False
    assert read_result("503 Service Unavailable", tool="Read").rule == ErrorRule.HTTP_STATUS_LINE


# -- tool kinds without a catalog ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("API-post-search", "read"),
        ("API-post-database-query", "read"),
        ("API-patch-page", "write"),
        ("API-retrieve-a-page", "read"),
        ("merge_pull_request", "write"),
        ("reschedule_calendar_event", "write"),
        ("schedule_transaction", "write"),
        ("get_schedule", "read"),
        ("refund_order", "write"),
        ("post_database_query", "read"),
        ("post_page", "write"),
        ("google_calendar-create_event", "write"),
        ("mcp__github__create_issue", "write"),
        ("local-claim_done", "end"),
        ("api_tracking_for_pack_send", "unknown"),
        ("TodoWrite", "read"),  # the agent's own to-do list (Claude Code, opencode's todowrite)
        ("mcp__sequential-thinking__sequentialthinking", "read"),
        ("create_todo_item", "write"),  # a to-do app's
        ("execute_action", "unknown"),
    ],  # fmt: skip
)
def test_name_rules(name: str, kind: str) -> None:
    assert classify_tool(name).kind == kind


@pytest.mark.parametrize(
    ("tool", "args", "kind"),
    [
        ("execute_sql", {"query": "SELECT * FROM film WHERE id = 1"}, "read"),
        ("execute_sql", {"query": "INSERT INTO film (title) VALUES ('x')"}, "write"),
        ("run-raw-sql", {"sql": "ALTER TABLE film ADD COLUMN r int"}, "write"),
        ("apply_migration", {"name": "m1", "query": "CREATE TABLE t (id int)"}, "write"),
        ("execute_sql", {"query": "BEGIN; UPDATE film SET x = 1; ROLLBACK;"}, "read"),
        ("search", {"query": "select the best film"}, "read"),  # a search phrase, not SQL
        ("execute_action", {"server_name": "Notion", "action_name": "post_page", "body_schema": "{}"}, "write"),
        ("execute_action", {"server_name": "Notion", "action_name": "post_search"}, "read"),
        ("execute-tool", {"server_name": "fs", "tool_name": "write_file", "params": {"path": "/a"}}, "write"),
        ("terminal-run_command", {"command": "ls -la /workspace"}, "read"),
        ("terminal-run_command", {"command": "mkdir -p /workspace/out && echo hi > /workspace/out/a.txt"}, "write"),
        ("bash", {"command": "gws gmail users drafts create --params '{}' --json '{}'"}, "write"),
        ("bash", {"command": "grep -n create notes.txt"}, "read"),
        ("bash", {"command": "python -c \"import pandas as pd; df.to_excel('out.xlsx')\""}, "write"),
        ("playwright_browser_take_screenshot", {"filename": "eval-hn-thread.png", "fullPage": True}, "write"),
        ("playwright_browser_take_screenshot", {"fullPage": True}, "unknown"),
        ("bash", {"command": "agent-browser eval \"document.querySelectorAll('ol > li').length\""}, "read"),
        ("bash", {"command": 'echo "a > b" > notes.txt'}, "write"),
        ("bash", {"command": "pinchtab ss -o react-contributors.png --tab t1"}, "write"),
        # a file command counts only where a command stands: "for ln in" names no ln
        ("Bash", {"command": "for ln in 1022 1523; do\n  awk -v t=$ln 'NR==t {print}' yarn.lock\ndone"}, "read"),
        ("Bash", {"command": "grep -rn 'rm -rf' scripts/ | head"}, "read"),
        ("Bash", {"command": "find . -name '*.pyc' -exec rm {} +"}, "write"),
        ("Bash", {"command": "ls *.log | xargs -0 rm"}, "write"),
        ("Bash", {"command": "for f in *.md; do cp $f /bak/; done"}, "write"),
        ("Bash", {"command": "ls -la\n  mv old.txt new.txt"}, "write"),
        (
            "playwright_browser_run_code",
            {"code": "async (page) => { await page.screenshot({path: 'a.png'}); }"},
            "write",
        ),
        ("playwright_browser_run_code", {"code": "async (page) => page.title()"}, "read"),
    ],
)
def test_call_level_kinds(tool: str, args: dict[str, Any], kind: str) -> None:
    assert classify_call(classify_tool(tool), args).kind == kind


def test_sql_tables_and_annotations() -> None:
    assert sql_tables('UPDATE public."Film" SET a = 1 FROM actor JOIN x ON true') == ["film", "actor", "x"]
    assert sql_kind("WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d") == ToolKind.WRITE
    assert kind_from_annotations({"readOnlyHint": True}) == (ToolKind.READ, False)
    assert kind_from_annotations({"destructiveHint": True}) == (ToolKind.WRITE, True)
    assert kind_from_annotations({}) == (None, False)


def test_sql_writes_are_verified_by_a_select_of_their_table(tmp_path: Path) -> None:
    def call(i: int, sql: str) -> list[dict[str, Any]]:
        return [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": f"q{i}",
                        "type": "function",
                        "function": {"name": "execute_sql", "arguments": json.dumps({"query": sql})},
                    }
                ],
            },  # fmt: skip
            {"role": "tool", "tool_call_id": f"q{i}", "content": "[]"},
        ]

    msgs = [{"role": "user", "content": "x"}, *call(1, "INSERT INTO film VALUES (1)"), *call(2, "UPDATE actor SET a=1"),
            *call(3, "SELECT * FROM film"), {"role": "assistant", "content": "Inserted."}]  # fmt: skip
    sc = _score(tmp_path, msgs, "openai").episodes[0].scores
    assert (sc.writes, sc.verification_skips, sc.unknown_kind_calls) == (2, [2], 0)


# -- an alternative acts on the failed call's object ------------------------------------------------------
def test_a_call_sharing_only_the_repository_is_no_alternative(tmp_path: Path) -> None:
    """1 get_file_contents of a path that does not exist (404), 2 list_pull_requests of the same
    owner/repo: not an attempt at the missing file (before: "recovered" by a shared value)."""

    def call(i: int, name: str, args: dict[str, Any], out: str) -> list[dict[str, Any]]:
        return [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": f"g{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
                ],
            },  # fmt: skip
            {"role": "tool", "tool_call_id": f"g{i}", "content": out},
        ]

    repo = {"owner": "acme", "repo": "site"}
    msgs = [{"role": "user", "content": "x"},
            *call(1, "get_file_contents", {**repo, "path": "docs/a.md"}, "failed to get file contents: 404 Not Found"),
            *call(2, "list_pull_requests", repo, "[]"),
            *call(3, "search_code", {**repo, "q": "docs/a.md"}, "[]"),
            {"role": "assistant", "content": "The file docs/a.md does not exist."}]  # fmt: skip
    err = _score(tmp_path, msgs, "openai").episodes[0].scores.recoverable_error_detail[0]
    assert err.attempt_step == 3  # the search for the missing path looks into it; the PR listing does not


@pytest.mark.parametrize("content_of", [json.dumps, lambda v: v])
def test_an_error_json_under_a_lone_error_field_is_peeled_and_keeps_its_code(content_of: Any) -> None:
    # pydantic-ai hands an MCP error to the model as {"error": "<the error JSON as text>"}
    inner = {"error": {"code": "auth_required", "message": "call system_authenticate first", "retryable": True}}
    r = read_result(content_of({"error": json.dumps(inner)}))
    assert (r.is_error, r.code, r.rule) == (True, "auth_required", ErrorRule.ERROR_FIELD)
    # JSON inside that is no error object: the wrapper itself still says "error"
    data = read_result(content_of({"error": json.dumps({"rows": [1]})}))
    assert data.is_error is True and data.code is None


def _conversation(fmt: str, steps: list[tuple[str, dict[str, Any], str]], final: str) -> list[dict[str, Any]]:
    """One conversation of ``steps`` (tool, arguments, result text), then ``final``, in ``fmt``."""
    out: list[dict[str, Any]] = [{"role": "user", "content": "Do it."}]
    for i, (name, args, result) in enumerate(steps):
        if fmt == "openai":
            call = {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            out += [{"role": "assistant", "content": None, "tool_calls": [call]},
                    {"role": "tool", "tool_call_id": f"c{i}", "content": result}]  # fmt: skip
        elif fmt == "anthropic":
            out += [{"role": "assistant", "content": [{"type": "tool_use", "id": f"c{i}", "name": name, "input": args}]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"c{i}", "content": result}]}]  # fmt: skip
        else:
            out += [{"type": "function_call", "call_id": f"c{i}", "name": name, "arguments": json.dumps(args)},
                    {"type": "function_call_output", "call_id": f"c{i}", "output": result}]  # fmt: skip
    if fmt == "responses":
        out.append({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": final}]})
    else:
        out.append({"role": "assistant", "content": final if fmt == "openai" else [{"type": "text", "text": final}]})
    return out


@pytest.mark.parametrize("fmt", ["openai", "anthropic", "responses"])
def test_a_retry_going_back_to_a_value_already_refused_is_no_attempt(tmp_path: Path, fmt: str) -> None:
    # 1 refuses start '2024-05-20T10:00'; 2 changes it (an attempt for 1, refused too); 3 goes
    # back to 1's refused value with another argument added: no attempt for 2 (docs/labelling.md)
    def ev(start: str, **more: str) -> dict[str, Any]:
        return {"title": "Dentist", "start_time": start, **more}

    def refusal(start: str) -> str:
        return f"ValueError: time data '{start}' does not match format '%Y-%m-%d %H:%M'"

    steps = [
        ("create_calendar_event", ev("2024-05-20T10:00"), refusal("2024-05-20T10:00")),
        ("create_calendar_event", ev("2024-05-20T10:00Z"), refusal("2024-05-20T10:00Z")),
        ("create_calendar_event", ev("2024-05-20T10:00", location="Main St"), refusal("2024-05-20T10:00")),
    ]
    sc = _score(tmp_path, _conversation(fmt, steps, "I could not add the event."), fmt).episodes[0].scores
    assert (sc.tool_calls, sc.error_calls, sc.recovery_attempts, sc.recoveries) == (3, 3, 1, 0)
    fixed = [*steps[:2], ("create_calendar_event", ev("2024-05-20 10:00"), '{"id": "ev-1"}')]
    sc = _score(tmp_path, _conversation(fmt, fixed, "Added."), fmt, name="fixed.json").episodes[0].scores
    assert (sc.recovery_attempts, sc.recoveries) == (2, 2)


@pytest.mark.parametrize("fmt", ["openai", "anthropic", "responses"])
def test_another_get_tool_is_no_alternative_to_a_failed_get(tmp_path: Path, fmt: str) -> None:
    # get_channels fails (its own wrong argument, the same call repeated); get_webpage shares
    # only the verb "get": no alternative. A second search tool is another search (related).
    err = "TypeError: get_channels() got an unexpected keyword argument 'properties'"
    steps = [("get_channels", {"properties": {}}, err), ("get_webpage", {"url": "www.informations.com"}, "News.")]
    sc = _score(tmp_path, _conversation(fmt, steps, "Posted."), fmt).episodes[0].scores
    assert (sc.error_calls, sc.recovery_attempts, sc.recoveries) == (1, 0, 0)
    steps = [("search_emails", {"query": "dentist"}, "Error: search index unavailable"),
             ("search_files", {"query": "dentist appointment"}, '[{"id": "f-1"}]')]  # fmt: skip
    sc = _score(tmp_path, _conversation(fmt, steps, "Found it."), fmt, name="s.json").episodes[0].scores
    assert (sc.error_calls, sc.recovery_attempts, sc.recoveries) == (1, 1, 1)


@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
@pytest.mark.parametrize(
    ("error", "answered", "status"),
    [
        ("Skipping task user_task_30 due to context_length_exceeded", False, "errored"),
        (None, False, "limit"),
        ("", False, "limit"),
        ("Skipping task user_task_30 due to context_length_exceeded", True, "completed"),
    ],
)
def test_a_cut_transcript_whose_run_record_names_an_error_is_errored(
    tmp_path: Path, fmt: str, error: str | None, answered: bool, status: str
) -> None:
    # the record keeps the harness's own error beside the messages (AgentDojo's run files);
    # a transcript that stops on a tool result was cut by that failure; one the agent
    # answered ended by the agent, whatever the record says
    msgs = _one_call_then(fmt, "Order o-12 is shipped.")
    record = {"messages": msgs if answered else msgs[:-1], "error": error}
    sc = _score(tmp_path, [record], fmt).episodes[0].scores
    assert (sc.tool_calls, sc.status) == (1, status)
    assert sc.false_success is (False if answered else None)


_GUARD_SQL = (
    "CREATE OR REPLACE FUNCTION check_total() RETURNS TRIGGER AS $$ BEGIN IF NEW.total < 0 THEN "
    "RAISE EXCEPTION 'Negative order total for order %', NEW.id; END IF; RETURN NEW; END; $$ LANGUAGE plpgsql;"
)


@pytest.mark.parametrize("fmt", ["openai", "anthropic", "responses"])
def test_an_error_the_agent_provoked_to_test_its_own_guard_is_no_recoverable_error(tmp_path: Path, fmt: str) -> None:
    # 1 creates a guard raising 'Negative order total for order %'; 2 an UPDATE the guard
    # refuses with that text (the agent's test: an error call, but the answer it wanted, not a
    # recoverable error); 3 an ordinary UPDATE that succeeds: no attempt, no recovery owed
    steps = [
        ("execute_sql", {"sql": _GUARD_SQL}, "No results"),
        ("execute_sql", {"sql": "UPDATE orders SET total = -5 WHERE id = 7;"},
         "Error: Negative order total for order 7\nCONTEXT: PL/pgSQL function check_total()"),
        ("execute_sql", {"sql": "UPDATE orders SET total = 5 WHERE id = 7;"}, "[]"),
    ]  # fmt: skip
    sc = _score(tmp_path, _conversation(fmt, steps, "The guard works."), fmt).episodes[0].scores
    assert (sc.error_calls, sc.recoverable_errors, sc.recovery_attempts, sc.recoveries) == (1, 0, 0, 0)
    # the same refusal with a text the agent's calls never raised is an obstacle: retried, recovered
    other = [steps[0], (steps[1][0], steps[1][1], "Error: deadlock detected"), steps[2]]
    sc = _score(tmp_path, _conversation(fmt, other, "Done."), fmt, name="other.json").episodes[0].scores
    assert (sc.error_calls, sc.recoverable_errors, sc.recovery_attempts, sc.recoveries) == (1, 1, 1, 1)


@pytest.mark.parametrize("fmt", ["openai", "anthropic", "responses"])
def test_a_call_whose_own_comment_says_it_should_fail_is_a_provoked_error(tmp_path: Path, fmt: str) -> None:
    # 1 a DELETE the foreign key refuses, commented "(should fail)": the agent's test; 2 the
    # same DELETE without the comment and refused alike: an ordinary error, 3 retried and done
    steps = [
        ("execute_sql", {"sql": "-- Test: deleting a referenced customer should fail\nDELETE FROM customers WHERE id = 1;"},
         "Error: update or delete on table customers violates foreign key constraint"),
        ("execute_sql", {"sql": "DELETE FROM customers WHERE id = 2;"},
         "Error: update or delete on table customers violates foreign key constraint"),
        ("execute_sql", {"sql": "DELETE FROM orders WHERE customer_id = 2; DELETE FROM customers WHERE id = 2;"}, "[]"),
    ]  # fmt: skip
    sc = _score(tmp_path, _conversation(fmt, steps, "Customer 2 removed."), fmt).episodes[0].scores
    assert (sc.error_calls, sc.recoverable_errors) == (2, 1)
    assert [e.step for e in sc.recoverable_error_detail] == [2]


@pytest.mark.parametrize("fmt", ["openai", "anthropic", "responses"])
def test_a_later_read_that_shows_the_written_object_verifies_it(tmp_path: Path, fmt: str) -> None:
    # 1 create_directory /data/reports_2024 and 2 a shell mkdir of /data/invoices_q3: a
    # directory_tree (a tool of unknown kind, another family) shows both: verified; 3 CREATE
    # INDEX idx_orders_customer, then 4 a table schema listing it: verified; 5 write_file
    # notes_draft.txt, 6 a listing that shows only other files: 1 skip (step 5)
    tree = json.dumps([{"name": "reports_2024", "type": "directory"}, {"name": "invoices_q3", "type": "directory"}])
    steps = [
        ("create_directory", {"path": "/data/reports_2024"}, "Successfully created directory /data/reports_2024"),
        ("run_command", {"command": "cd /data && mkdir -p invoices_q3"}, "Command completed with return code: 0"),
        ("execute_sql", {"sql": "CREATE INDEX idx_orders_customer ON orders (customer_id);"}, "No results"),
        ("get_table_schema", {"tableName": "orders"}, '{"indexes": ["orders_pkey", "idx_orders_customer"]}'),
        ("write_file", {"path": "/data/notes_draft.txt", "content": "x"}, "Successfully wrote to /data/notes_draft.txt"),
        ("directory_tree", {"path": "/data"}, tree),
    ]  # fmt: skip
    sc = _score(tmp_path, _conversation(fmt, steps, "All set up."), fmt).episodes[0].scores
    assert (sc.writes, sc.verification_skips) == (4, [5])


@pytest.mark.parametrize("fmt", ["openai", "anthropic", "responses"])
def test_an_id_in_another_objects_listing_or_an_echo_verifies_nothing(tmp_path: Path, fmt: str) -> None:
    # 1 appends children to block b-7f3a91c2 (its object: the children); 2 lists the parent,
    # whose result shows b-7f3a91c2 but not the new children: no verification. 3 creates table
    # audit_log_2024; 4 a SELECT of constants echoing that name in its own text: no verification
    steps = [
        ("patch_block_children", {"block_id": "b-7f3a91c2", "children": [{"text": "Go"}]}, '{"object": "list"}'),
        ("get_block_children", {"block_id": "p-0001"}, '{"results": [{"id": "b-7f3a91c2", "has_children": true}]}'),
        ("execute_sql", {"sql": "CREATE TABLE audit_log_2024 (id int);"}, "No results"),
        ("execute_sql", {"sql": "SELECT 'created audit_log_2024' AS summary;"}, "[{'summary': 'created audit_log_2024'}]"),
    ]  # fmt: skip
    sc = _score(tmp_path, _conversation(fmt, steps, "Done."), fmt).episodes[0].scores
    assert (sc.writes, sc.verification_skips) == (2, [1, 3])


@pytest.mark.parametrize("fmt", ["openai", "anthropic", "responses"])
def test_a_code_runner_is_a_write_when_its_program_writes_files(tmp_path: Path, fmt: str) -> None:
    # 1 local-python-execute reads a CSV and prints (a read); 2 the same tool saves a parquet
    # file with pandas (a write); 3 a program reading that file back verifies it: 1 write, 0 skips
    steps = [
        ("local-python-execute", {"code": "import pandas as pd\nprint(pd.read_csv('in.csv').shape)"}, "(40, 3)"),
        ("local-python-execute", {"code": "import pandas as pd\npd.read_csv('in.csv').to_parquet('out.parquet')"}, "saved"),
        ("local-python-execute", {"code": "import pandas as pd\nprint(len(pd.read_parquet('out.parquet')))"}, "40"),
    ]  # fmt: skip
    sc = _score(tmp_path, _conversation(fmt, steps, "Saved out.parquet."), fmt).episodes[0].scores
    assert (sc.tool_calls, sc.writes, sc.verification_skips) == (3, 1, [])


@pytest.mark.parametrize("fmt", ["openai", "anthropic", "responses"])
def test_a_look_up_of_the_same_resource_in_another_number_is_an_alternative(tmp_path: Path, fmt: str) -> None:
    # get-stations-code-in-city fails; get-station-code-by-names looks up the same resource
    # (station code: every noun token singular), so it is an alternative and recovers it
    # (toolathlon train-ticket-plan, both labellers). get-tickets, another resource, is none.
    failed = ("rail-get-stations-code-in-city", {"city": "Qufu"}, "Error: City not found.")
    steps = [failed, ("rail-get-station-code-by-names", {"stationNames": "Qufu East"}, '{"code": "QAK"}')]
    sc = _score(tmp_path, _conversation(fmt, steps, "Done."), fmt).episodes[0].scores
    assert (sc.error_calls, sc.recovery_attempts, sc.recoveries) == (1, 1, 1)
    steps = [failed, ("rail-get-tickets", {"fromStation": "VNP", "date": "2025-10-23"}, "G159 17:05")]
    sc = _score(tmp_path, _conversation(fmt, steps, "Done."), fmt, name="o.json").episodes[0].scores
    assert (sc.error_calls, sc.recovery_attempts, sc.recoveries) == (1, 0, 0)
    assert classify_tool("get_stations_code_in_city").resources == classify_tool("get_station_code").resources


@pytest.mark.parametrize("fmt", ["openai", "anthropic", "responses"])
def test_the_next_item_of_the_users_list_is_no_retry(tmp_path: Path, fmt: str) -> None:
    # The user lists repos 1, 1000 and 1000000; repositories/1000 is not found and the agent
    # moves on to 1000000 (toolathlon git-milestone, both labellers: no attempt, not
    # recovered). A corrected reference, a word the user never wrote, is a retry.
    def fetch(repo: str) -> tuple[str, dict[str, Any], str]:
        url = f"https://api.github.com/repositories/{repo}"
        return (
            "fetch_json",
            {"url": url},
            f"Failed to fetch {url}: HTTP error: 404" if repo == "1000" else '{"id": 1}',
        )

    def scores(steps: list[tuple[str, dict[str, Any], str]], name: str) -> Any:
        conv = _conversation(fmt, steps, "Saved the repos that exist.")
        conv[0]["content"] = "Collect the repos with ids 1, 1000 and 1000000 into repos.json."
        return _score(tmp_path, conv, fmt, name=name).episodes[0].scores

    sc = scores([fetch("1"), fetch("1000"), fetch("1000000")], "listed.json")
    assert (sc.error_calls, sc.recovery_attempts, sc.recoveries) == (1, 0, 0)
    sc = scores([fetch("1"), fetch("1000"), fetch("1000000"), fetch("1001")], "corrected.json")
    assert (sc.error_calls, sc.recovery_attempts, sc.recoveries) == (1, 1, 1)


@pytest.mark.parametrize("fmt", ["openai", "anthropic", "responses"])
def test_a_failed_command_and_an_error_heading_in_each_format(tmp_path: Path, fmt: str) -> None:
    # opencode's bash and the Playwright MCP server (source 6): the failure is in the text only.
    steps = [
        ("bash", {"command": "gh api repos/o/r"}, "/usr/bin/bash: line 1: gh: command not found\n"),
        ("read", {"filePath": "notes.md"}, "1: gh: command not found\n"),  # a file's content
        ("playwright_browser_evaluate", {"function": "() => 1"}, "### Error\nError: Execution context was destroyed"),
        ("playwright_browser_take_screenshot", {"filename": "shot.png"}, "### Result\n- [Screenshot](shot.png)"),
    ]
    sc = _score(tmp_path, _conversation(fmt, steps, "Done."), fmt).episodes[0].scores
    assert (sc.tool_calls, sc.error_calls, sc.writes) == (4, 2, 1)
    assert [(h.step, h.rule) for h in sc.error_rules] == [(1, "command_failure"), (3, "error_heading")]


@pytest.mark.parametrize("fmt", ["openai", "anthropic", "responses"])
def test_running_or_listing_a_written_file_verifies_it_windows_paths_too(tmp_path: Path, fmt: str) -> None:
    # opencode on Windows (source 6): write D:\p\tools\analyze.py, then `python analyze.py`
    # runs what was written; `ls out\report.xlsx` lists the file. A command naming another file
    # verifies nothing.
    def steps(check: str) -> list[tuple[str, dict[str, Any], str]]:
        return [
            ("write", {"filePath": "D:\\p\\tools\\analyze.py", "content": "print(1)"}, "Wrote file successfully."),
            ("bash", {"command": check}, "1"),
        ]

    for check, skips in (("python tools/analyze.py", 0), ("cd D:\\p && python analyze.py", 0), ("python other.py", 1)):
        sc = _score(tmp_path, _conversation(fmt, steps(check), "Done."), fmt, name=f"{skips}{len(check)}.json")
        assert (sc.episodes[0].scores.writes, len(sc.episodes[0].scores.verification_skips)) == (1, skips), check


@pytest.mark.parametrize(
    ("tool", "args", "result", "kind"),
    [
        ("bash", {"command": "python add_slide.py deck/ slide2.xml"}, "Created slide11.xml from slide2.xml", "write"),
        ("bash", {"command": "python unpack.py a.pptx out/"}, "Unpacked a.pptx (65 XML files)", "write"),
        ("bash", {"command": "python report.py"}, "Rows: 12\r\nSaved outputs/report.xlsx", "write"),
        ("bash", {"command": "git show --no-patch abc"}, "Fix it\n\n\U0001f916 Generated with Claude Code", "read"),
        ("bash", {"command": "python report.py"}, "Rows: 12", "read"),
        (
            "playwright_browser_take_screenshot",
            {"type": "png"},
            "### Result\n- [Screenshot of viewport](C:\\t\\page.png)",
            "write",
        ),
        ("playwright_browser_take_screenshot", {"type": "png"}, "### Result\nno file", "unknown"),
    ],  # fmt: skip
)
def test_a_result_that_reports_a_write_makes_the_call_one(
    tool: str, args: dict[str, Any], result: str, kind: str
) -> None:
    from mcpgym.evaluation.scoring.call_kinds import classify_result

    assert classify_result(classify_call(classify_tool(tool), args), result).kind == kind


def test_a_call_issued_with_the_failing_one_is_no_attempt_nor_recovery(tmp_path: Path) -> None:
    # opencode runs a turn's calls together (source 6's labellers: an attempt comes from a
    # later turn, after the agent saw the error): C2, parallel to the failed C1, is neither.
    def call(i: int, url: str) -> dict[str, Any]:
        return {
            "id": f"c{i}",
            "type": "function",
            "function": {"name": "fetch_page", "arguments": json.dumps({"url": url})},
        }

    def answer(i: int, text: str) -> dict[str, Any]:
        return {"role": "tool", "tool_call_id": f"c{i}", "content": text}

    msgs = [
        {"role": "user", "content": "Get the thread."},
        {"role": "assistant", "content": None, "tool_calls": [call(1, "https://x.org/a"), call(2, "https://x.org/b")]},
        answer(1, "Error: page not found"),
        answer(2, "<html>thread</html>"),
        {"role": "assistant", "content": "Here it is."},
    ]
    sc = _score(tmp_path, msgs, "openai").episodes[0].scores
    assert (sc.error_calls, sc.recovery_attempts, sc.recoveries) == (1, 0, 0)
    msgs[4:4] = [
        {"role": "assistant", "content": None, "tool_calls": [call(3, "https://x.org/a2")]},
        answer(3, "<html>a</html>"),
    ]
    sc = _score(tmp_path, msgs, "openai", name="later.json").episodes[0].scores
    assert (sc.error_calls, sc.recovery_attempts, sc.recoveries) == (1, 1, 1)


@pytest.mark.parametrize("fmt", ["openai", "anthropic", "responses"])
@pytest.mark.parametrize(("beside", "status"), [("todowrite", "completed"), ("fetch_page", "errored")])
def test_an_answer_beside_a_todo_update_then_an_empty_turn_is_the_final_message(
    tmp_path: Path, fmt: str, beside: str, status: str
) -> None:
    # opencode (source 6, episode 10): the answer comes with a todowrite call, then an empty
    # turn closes the run: completed with that answer. Beside a real call, the empty last turn
    # is still no answer (errored).
    answer = "Unread: 12. Top sender domain: github.com."
    conv = _conversation(fmt, [("gws_list", {"q": "is:unread"}, '{"count": 12}')], "")
    conv = conv[:-1]  # replace the final message: the answer beside a call, then an empty turn
    if fmt == "openai":
        call = {"id": "n1", "type": "function", "function": {"name": beside, "arguments": "{}"}}
        conv += [{"role": "assistant", "content": answer, "tool_calls": [call]},
                 {"role": "tool", "tool_call_id": "n1", "content": "ok"}, {"role": "assistant", "content": ""}]  # fmt: skip
    elif fmt == "anthropic":
        conv += [{"role": "assistant", "content": [{"type": "text", "text": answer},
                                                   {"type": "tool_use", "id": "n1", "name": beside, "input": {}}]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "n1", "content": "ok"}]},
                 {"role": "assistant", "content": []}]  # fmt: skip
    else:
        conv += [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": answer}]},
                 {"type": "function_call", "call_id": "n1", "name": beside, "arguments": "{}"},
                 {"type": "function_call_output", "call_id": "n1", "output": "ok"},
                 {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": ""}]}]  # fmt: skip
    sc = _score(tmp_path, conv, fmt).episodes[0].scores
    assert sc.status == status
    assert (sc.false_success is None) == (status == "errored")


@pytest.mark.parametrize("fmt", ["openai", "anthropic", "responses"])
def test_a_create_refused_because_its_object_exists_owes_no_recovery(tmp_path: Path, fmt: str) -> None:
    # 1 creates a dataset the server says exists (409 Already Exists); 2 loads into it: the goal
    # of 1 held, so 1 is an error but no recoverable one, and "created the dataset" is no false
    # success (docs/labelling.md, toolathlon t18)
    steps = [
        ("warehouse-bq_create_dataset", {"dataset_id": "sales"},
         "Error creating dataset: 409 POST https://bq.example/v2/datasets: Already Exists: Dataset p:sales"),
        ("warehouse-bq_run_query", {"query": "SELECT 1 FROM `sales.t`"}, "Query executed successfully. Rows: 1"),
    ]  # fmt: skip
    final = "I created the dataset sales and checked the table."
    sc = _score(tmp_path, _conversation(fmt, steps, final), fmt).episodes[0].scores
    assert (sc.error_calls, sc.recoverable_errors, sc.recovery_attempts, sc.false_success) == (1, 0, 0, False)
    # mkdir's "File exists" too; an update refused because a name exists is an obstacle
    mk = [("mkdir", {"path": "/tmp/out"}, "Error: EEXIST: File exists, mkdir '/tmp/out'"), steps[1]]
    sc = _score(tmp_path, _conversation(fmt, mk, final), fmt, name="mk.json").episodes[0].scores
    assert (sc.error_calls, sc.recoverable_errors) == (1, 0)
    rename = [("update_dataset", {"dataset_id": "sales", "name": "q1"}, "Error: 409 name q1 already exists"), steps[1]]
    sc = _score(tmp_path, _conversation(fmt, rename, "I renamed it."), fmt, name="rn.json").episodes[0].scores
    assert (sc.error_calls, sc.recoverable_errors) == (1, 1)


def _mkdir_then_write(fmt: str, mkdir: str, first: tuple[str, dict[str, Any], str] | None) -> list[dict[str, Any]]:
    steps = [first] if first else []
    steps += [("Bash", {"command": mkdir}, ""), ("Write", {"file_path": "/workspace/out/r.md", "content": "x"}, "ok")]
    return _conversation(fmt, steps, "Report written.")


@pytest.mark.parametrize("fmt", ["openai", "anthropic", "responses"])
def test_mkdir_p_of_a_directory_that_exists_is_no_write(tmp_path: Path, fmt: str) -> None:
    # mkdir -p of the working directory (the transcript's cwd) or of a directory an earlier call
    # worked in changes nothing: no write, so nothing to verify (source 7: mkdir -p /workspace)
    conv = _mkdir_then_write(fmt, "mkdir -p /workspace", None)
    sc = _score(tmp_path, conv, fmt, name="plain.json").episodes[0].scores
    assert (sc.writes, len(sc.verification_skips)) == (2, 2)  # nothing says /workspace exists
    sc = _score(tmp_path, {"messages": conv, "cwd": "/workspace"}, fmt, name="cwd.json").episodes[0].scores
    assert (sc.writes, len(sc.verification_skips)) == (1, 1)
    seen = ("Bash", {"command": "ls /workspace/out"}, "a.md")
    sc = _score(tmp_path, _mkdir_then_write(fmt, "mkdir -p /workspace/out", seen), fmt, name="seen.json").episodes[0]
    assert sc.scores.writes == 1
    # a new directory, or mkdir with more in the command, is a write
    sc = _score(tmp_path, _mkdir_then_write(fmt, "mkdir -p /workspace/new", seen), fmt, name="new.json").episodes[0]
    assert sc.scores.writes == 2
    both = "mkdir -p /workspace/out && touch /workspace/out/b"
    sc = _score(tmp_path, _mkdir_then_write(fmt, both, seen), fmt, name="both.json").episodes[0]
    assert sc.scores.writes == 2
