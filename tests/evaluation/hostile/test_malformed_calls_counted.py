"""A malformed tool call in the newer transcript readers (the hostile pass of issue 36) is kept
as a malformed call: counted in ``invalid_calls`` and in the scorability's failed blocks, with
a warning naming the file, the episode and the message, and the episode still scored. It
vanished silently (a call entry that is no object) or cost the whole episode (a call without
a name), where the chat reader's rule is one malformed call, the rest scored."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tests.evaluation.formats.test_harness_readers import _langchain, _pydantic_ai, _responses_items, _tau2
from tests.support.cli_runs import cli_at_width

ANTHROPIC = Path(__file__).resolve().parents[2] / "data" / "formats" / "talk_episode.anthropic.json"


def _bad_responses() -> Any:
    items = _responses_items()
    items.insert(-1, {"type": "function_call", "call_id": "bad", "arguments": "{}"})  # no name
    return items


def _bad_langchain() -> Any:
    msgs = _langchain(False)
    msgs[1]["tool_calls"].append("not a call object")
    return msgs


def _bad_pydantic_ai() -> Any:
    msgs = _pydantic_ai()
    msgs[1]["parts"].append({"part_kind": "tool-call", "args": {}, "tool_call_id": "bad"})  # no tool_name
    return msgs


def _bad_tau2() -> Any:
    run = _tau2()
    run["simulations"][0]["messages"][1]["tool_calls"].append(17)
    return run


def _bad_anthropic() -> Any:
    msgs = json.loads(ANTHROPIC.read_text(encoding="utf-8"))
    msgs = copy.deepcopy(msgs)
    msgs[1]["content"].append({"type": "mcp_tool_use", "id": "mcptoolu_bad", "server_name": "s", "input": {}})
    return msgs


CASES = {
    "responses": _bad_responses,
    "langchain": _bad_langchain,
    "pydantic-ai": _bad_pydantic_ai,
    "tau2": _bad_tau2,
    "anthropic": _bad_anthropic,
}


@pytest.mark.parametrize("fmt", sorted(CASES))
def test_a_malformed_call_is_counted_and_warned_naming_where(fmt: str, tmp_path: Path, monkeypatch, capsys) -> None:
    path = tmp_path / f"bad.{fmt}.json"
    path.write_text(json.dumps(CASES[fmt]()), encoding="utf-8")
    code, out, err = cli_at_width(["score", str(path), "--format", fmt, "--json"], 160, monkeypatch, capsys)
    assert code == 0, err  # a warning, not an unreadable episode
    report = json.loads(out)
    assert len(report["episodes"]) == 1 and report["scorability"]["blocks_failed"] == 1, report["scorability"]
    assert report["episodes"][0]["scores"]["invalid_calls"] >= 1
    (warned,) = [p for p in report["problems"] if "malformed call" in p["message"]]
    assert warned["file"] == str(path) and warned["severity"] == "warning"
    assert warned["message"].startswith("message "), warned  # its position
