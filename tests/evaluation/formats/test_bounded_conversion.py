"""One bad part of a transcript costs that part, never the episode, and is never silent
(newuser3 finding 9): arguments nested too deep to parse make one malformed call, with a
warning; an MCP-log response that answers no request is a counted warning."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mcpgym.evaluation.cli import app

DEEP = "[" * 50000 + "]" * 50000


def _score(path: Path, fmt: str) -> dict:
    res = CliRunner().invoke(app, ["score", str(path), "--format", fmt, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_one_absurdly_deep_argument_costs_one_call_not_the_episode(tmp_path: Path) -> None:
    add = {"item_id": "item-0101", "quantity": 1}
    episode = [
        {"role": "user", "content": "Add item-0101 to my cart."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "shop_add_to_cart", "arguments": DEEP}}
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": json.dumps({"error": {"code": "invalid_argument", "message": "bad"}}),
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c2", "type": "function", "function": {"name": "shop_add_to_cart", "arguments": json.dumps(add)}}
            ],
        },
        {"role": "tool", "tool_call_id": "c2", "content": json.dumps({"cart": {"items": [{"id": "item-0101"}]}})},
        {"role": "assistant", "content": "Added item-0101 to your cart."},
    ]
    path = tmp_path / "deeparg.openai.jsonl"
    path.write_text(json.dumps(episode) + "\n", encoding="utf-8")
    out = _score(path, "openai")
    [ep] = out["episodes"]
    s = ep["scores"]
    # Hand count: 2 calls; step 1 is a malformed call (invalid_argument), step 2 the add that
    # took effect: 1 write (never read back: skip [2]); the claim names "added", whose last
    # attempt succeeded: no false success.
    assert (s["tool_calls"], s["invalid_calls"], s["writes"], s["verification_skips"]) == (2, 1, 1, [2])
    assert (s["claimed_success"], s["false_success"]) == (True, False)
    [problem] = out["problems"]
    assert problem["severity"] == "warning" and "nested too deep" in problem["message"]
    assert "message 2: the call of shop_add_to_cart" in problem["message"]
    assert out["files"][0]["problems"] == 1
    # bounded: the step keeps 200 characters of the 100,000 sent
    res = CliRunner().invoke(app, ["score", str(path), "--format", "openai"])
    assert res.exit_code == 0 and "1 problem" in res.output and "nested too deep" in " ".join(res.output.split())


def test_an_mcp_log_response_to_no_request_is_a_counted_warning(tmp_path: Path) -> None:
    lines = [
        {"jsonrpc": "2.0", "id": 5, "result": {"content": [{"type": "text", "text": "{}"}], "isError": False}},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "shop_get_cart", "arguments": {}}},
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {"content": [{"type": "text", "text": '{"items": []}'}], "isError": False},
        },
    ]
    path = tmp_path / "orphan.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in lines), encoding="utf-8")
    out = _score(path, "mcp-log")
    [ep] = out["episodes"]
    assert ep["scores"]["tool_calls"] == 1  # the answered call is scored
    [problem] = out["problems"]
    assert problem["severity"] == "warning"
    assert "a response with id 5 answers no open request; ignored" in problem["message"]
    assert out["files"][0]["problems"] == 1
