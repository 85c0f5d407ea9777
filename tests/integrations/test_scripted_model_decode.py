"""How the scripted model behind the harnesses reads a tool result back (tests/support/harnesses/
scripted_model.py, ``decode_result``): in each wrapping a harness gives mcpgym's error, the
scripted agent must get the same ``CallResult``, or it would behave differently per harness
and the server-truth comparison would compare different episodes."""

from __future__ import annotations

import json

import pytest

from tests.support.harnesses.scripted_model import decode_result

ERROR = {
    "error": {"code": "rate_limited", "message": "rate limited: retry after 30 virtual seconds", "retry_after": 30}
}
TEXT = json.dumps(ERROR, separators=(",", ":"))


@pytest.mark.parametrize(
    "content",
    [
        TEXT,  # Inspect's tool message
        [{"type": "text", "text": TEXT, "id": "lc_1"}],  # LangGraph's ToolMessage content (status "error")
        [{"type": "input_text", "text": TEXT}],  # the Agents SDK's function_call_output
        json.dumps(
            {"type": "text", "text": TEXT, "annotations": None}
        ),  # the Agents SDK (older): one content item as JSON
        json.dumps({"error": TEXT}),  # pydantic-ai's tool return for an MCP error
        f"Error: ToolException({TEXT!r})\n Please fix your mistakes.",  # ToolNode's text for a raised ToolException
        json.dumps({"content": [{"type": "text", "text": TEXT}], "isError": True}),  # a CallToolResult dump
    ],
    ids=[
        "plain",
        "langgraph",
        "agents-sdk-items",
        "agents-sdk-json",
        "pydantic-ai",
        "langchain-exception",
        "calltoolresult",
    ],
)
def test_every_wrapping_of_mcpgyms_error_reads_as_that_error(content: object) -> None:
    res = decode_result(content)
    assert res.is_error and res.code == "rate_limited" and res.error["retry_after"] == 30


def test_a_success_is_its_json_object_and_plain_text_stays_text() -> None:
    ok = decode_result([{"type": "input_text", "text": '{"settings": {"theme": "dark"}}'}])
    assert not ok.is_error and ok.payload == {"settings": {"theme": "dark"}}
    text = decode_result("no JSON here")
    assert not text.is_error and text.payload == {"text": "no JSON here"}
    other = decode_result(json.dumps({"error": "something broke"}))  # an error without mcpgym's object
    assert other.is_error and other.error == {"message": "something broke"}
