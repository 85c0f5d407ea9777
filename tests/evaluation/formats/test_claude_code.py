"""``--format claude-code``: Claude Code's session logs, one content block a line (inputs written
here in the shape Claude Code 2.x writes, as EnterpriseBench's ``agent_trace.jsonl`` stores it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcpgym.evaluation.formats.claude_code import session_messages
from mcpgym.evaluation.formats.detect import detect_format
from mcpgym.evaluation.formats.score import load_file, score_files

BASE = {"sessionId": "s-1", "cwd": "/workspace", "isSidechain": False, "version": "2.1.220"}


def _line(kind: str, blocks: Any, mid: str | None = None, **more: Any) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": kind, "content": blocks}
    if mid:
        msg.update(id=mid, model="claude-sonnet-4-6")
    return {**BASE, "type": kind, "message": msg, **more}


def _use(i: int, name: str, args: dict[str, Any], mid: str) -> dict[str, Any]:
    return _line("assistant", [{"type": "tool_use", "id": f"t{i}", "name": name, "input": args}], mid)


def _result(i: int, text: str, is_error: bool = False) -> dict[str, Any]:
    return _line("user", [{"type": "tool_result", "tool_use_id": f"t{i}", "content": text, "is_error": is_error}])


def _session() -> list[dict[str, Any]]:
    """C1 and C2 in one turn (one message id), C2 flagged an error; a sub-agent's lines; C3
    retries C2; C4 mkdir -p of the working directory; C5 writes the report; final answer."""
    return [
        {"type": "queue-operation", "operation": "enqueue", "sessionId": "s-1", "content": "task"},
        _line("user", "Write /workspace/REPORT.md about the repo."),
        _line("assistant", [{"type": "thinking", "thinking": "", "signature": "sig"}], "m1"),
        _use(1, "Bash", {"command": "ls /workspace/repo"}, "m1"),
        _use(2, "Read", {"file_path": "/workspace/repo/src"}, "m1"),
        _result(1, "src\nREADME.md"),
        _result(2, "EISDIR: illegal operation on a directory, read", is_error=True),
        _line("user", "Look for the entry point", isSidechain=True),
        _line("assistant", [{"type": "text", "text": "main.go"}], "side", isSidechain=True),
        _use(3, "Read", {"file_path": "/workspace/repo/src/main.go"}, "m2"),
        _result(3, "1\tpackage main\n2\t\n3\tfunc main() {}"),
        _use(4, "Bash", {"command": "mkdir -p /workspace"}, "m3"),
        _result(4, ""),
        _use(5, "Write", {"file_path": "/workspace/REPORT.md", "content": "# Report"}, "m4"),
        _result(5, "File created successfully at: /workspace/REPORT.md"),
        _line("assistant", [{"type": "text", "text": "I wrote /workspace/REPORT.md."}], "m5"),
        {"type": "last-prompt", "sessionId": "s-1"},
    ]


def _write(tmp_path: Path, lines: list[dict[str, Any]], name: str = "agent_trace.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_a_session_log_is_one_episode_read_by_the_messages_rules(tmp_path: Path) -> None:
    path = _write(tmp_path, _session())
    assert detect_format(path)[0] == "claude-code"
    report = score_files([path])
    (ep,) = report.episodes
    sc = ep.scores
    # 5 calls (the sub-agent's lines left out), the flagged EISDIR an error retried and recovered
    # by C3, mkdir -p of the cwd no write, the report one write never read back
    assert (sc.agent, sc.status, sc.tool_calls, sc.error_calls) == ("claude-sonnet-4-6", "completed", 5, 1)
    assert (sc.recovery_attempts, sc.recoveries, sc.writes, sc.verification_skips) == (1, 1, 1, [5])
    assert (sc.defeatism, sc.false_success) == (False, False)
    loaded, _ = load_file(path, "claude-code")
    assert any("2 sub-agent line(s) left out" in w for w in loaded.episodes[0].warnings)


def test_lines_of_one_message_form_one_turn_and_thinking_is_dropped() -> None:
    messages, sidechain = session_messages([x for x in _session() if "message" in x])
    assert sidechain == 2
    first = messages[1]
    assert first["role"] == "assistant" and [b["type"] for b in first["content"]] == ["tool_use", "tool_use"]
    assert [b["tool_use_id"] for b in messages[2]["content"]] == ["t1", "t2"]  # the turn's results, merged


def test_an_api_error_as_the_last_line_is_errored_and_sessions_are_episodes(tmp_path: Path) -> None:
    lines = _session()[:-2] + [
        _line(
            "assistant",
            [{"type": "text", "text": "API Error: 400 messages: text content blocks must be non-empty"}],
            "m9",
            isApiErrorMessage=True,
        )
    ]
    other = [{**x, "sessionId": "s-2"} for x in _session() if "message" in x]
    report = score_files([_write(tmp_path, lines + other)])
    by_session = {e.episode: e.scores for e in report.episodes}
    assert by_session["s-1"].status == "errored" and by_session["s-1"].false_success is None
    assert by_session["s-2"].status == "completed"


def test_a_file_of_bookkeeping_lines_only_is_a_problem_never_an_empty_score(tmp_path: Path) -> None:
    path = _write(tmp_path, [{"type": "queue-operation", "sessionId": "s-1"}, {"type": "summary", "summary": "x"}])
    loaded, _ = load_file(path, "claude-code")
    assert loaded.episodes == []
    assert any("no Claude Code message line" in p.message for p in loaded.problems)


def _stream(end: dict[str, Any]) -> list[dict[str, Any]]:
    """The session as ``claude -p --output-format stream-json --verbose`` prints it: session_id,
    an init line, a sub-agent's line marked by parent_tool_use_id, a result line."""
    out: list[dict[str, Any]] = [
        {"type": "system", "subtype": "init", "session_id": "r-1", "cwd": "/workspace", "model": "claude-opus-4-5",
         "tools": ["Bash", "Read", "Write"], "mcp_servers": []},
    ]  # fmt: skip
    for x in _session():
        if "message" not in x:
            continue
        y = {k: v for k, v in x.items() if k not in ("sessionId", "cwd", "isSidechain", "version")}
        y.update(session_id="r-1", parent_tool_use_id="t9" if x.get("isSidechain") else None)
        out.append(y)
    return [*out, {"type": "result", "session_id": "r-1", "num_turns": 6, **end}]


def test_stream_json_output_reads_as_the_session_log_and_its_result_line_ends_it(tmp_path: Path) -> None:
    ok = _write(tmp_path, _stream({"subtype": "success", "is_error": False, "result": "I wrote it."}), "ok.txt")
    assert detect_format(ok)[0] == "claude-code"
    sc = score_files([ok]).episodes[0].scores
    log = score_files([_write(tmp_path, _session())]).episodes[0].scores
    keep = {"status", "tool_calls", "error_calls", "writes", "verification_skips", "recovery_attempts", "recoveries"}
    assert sc.model_dump(include=keep) == log.model_dump(include=keep)
    assert sc.agent == "claude-sonnet-4-6"  # the assistant lines' model
    capped = _write(tmp_path, _stream({"subtype": "error_max_turns", "is_error": True}), "capped.txt")
    assert score_files([capped]).episodes[0].scores.status == "limit"
    broke = _write(tmp_path, _stream({"subtype": "error_during_execution", "is_error": True}), "broke.txt")
    sc = score_files([broke]).episodes[0].scores
    assert (sc.status, sc.false_success) == ("errored", None)


def test_local_slash_commands_after_the_answer_are_no_unanswered_user_turn(tmp_path: Path) -> None:
    # the user leaves with /exit after the agent's answer: Claude Code records the command, its
    # output and a caveat as user lines; the session still ended with the agent's answer
    tail = [
        _line("user", "<local-command-caveat>Caveat: DO NOT respond to these messages</local-command-caveat>",
              isMeta=True),
        _line("user", "<command-name>/exit</command-name>\n<command-message>exit</command-message>"),
        _line("user", [{"type": "text", "text": "<local-command-stdout>See ya!</local-command-stdout>"}]),
    ]  # fmt: skip
    sc = score_files([_write(tmp_path, _session() + tail)]).episodes[0].scores
    assert (sc.status, sc.false_success) == ("completed", False)
    # a real message from the user after the answer is still a turn nobody answered
    sc = score_files([_write(tmp_path, [*_session(), _line("user", "And the tests?")], "more.jsonl")]).episodes[0]
    assert sc.scores.status == "limit"


def test_broken_lines_are_problems_naming_their_line_and_a_cut_stream_warns(tmp_path: Path) -> None:
    lines = _session()
    broken = [42, None, {**lines[3], "message": "hello"}, {**lines[5], "message": {"role": "user", "content": 7}},
              {**lines[1], "sessionId": ["s-1"]}]  # fmt: skip
    path = _write(tmp_path, [*lines[:3], *broken, *lines[3:]], "broken.jsonl")
    loaded, _ = load_file(path, "claude-code")
    said = {(p.line, p.message) for p in loaded.problems if p.severity == "error"}
    assert {line for line, _ in said} == {4, 5, 6, 7, 8}
    assert any("its message is a string" in m for _, m in said) and any("sessionId is a list" in m for _, m in said)
    assert any("content is a number" in m for _, m in said) and any("a JSON null" in m for _, m in said)
    assert len(loaded.episodes) == 1  # the good lines are still read
    cut = _stream({"subtype": "success"})[:-1]  # the process died before its result line
    loaded, _ = load_file(_write(tmp_path, cut, "cut.jsonl"), "claude-code")
    assert any(p.severity == "warning" and "ends without its result line" in p.message for p in loaded.problems)
    assert not any(p.severity == "error" for p in loaded.problems)
