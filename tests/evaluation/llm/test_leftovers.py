"""Leftover call syntax (issue 38): Qwen2.5-Coder-1.5B writes ``{{"name": ..., "arguments": ...}}``;
llama.cpp takes the inner call out and leaves ``{}`` as the reply's content. That text is neither
recorded as the reply's text nor sent back to the model, and the trajectory says it was removed.

The replay below is the case as llama.cpp b6301 answered it (content ``{}`` beside the parsed
call), played by the loopback fake provider.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcpgym.evaluation.agents.base import CallResult, ToolInfo
from mcpgym.evaluation.llm.leftovers import is_leftover_call_syntax, removed_shown
from mcpgym.evaluation.records.trajectory import MessageStep
from tests.support.fake_provider import OpenAIDialect

LEFTOVERS = [
    "{}",
    "{{}}",
    " {} ",
    "[]",
    "null",
    "```json\n```",
    "```\n```",
    "{}\n{}",
    "<tool_call>\n</tool_call>",
    "{,}",
]
NOT_LEFTOVERS = ["", "   ", "Done.", '{"ok": true}', "I set it: {}", "{} Dark mode is on.", "0"]


@pytest.mark.parametrize("text", LEFTOVERS)
def test_call_syntax_alone_is_a_leftover(text):
    assert is_leftover_call_syntax(text)


@pytest.mark.parametrize("text", NOT_LEFTOVERS)
def test_words_or_values_are_no_leftover(text):
    assert not is_leftover_call_syntax(text)


def test_removed_text_is_bounded():
    assert removed_shown("{}") == "{}"
    long = "{" * 500
    assert len(removed_shown(long)) == 200 and removed_shown(long).endswith("...")


class Recording:
    """A call function that records the steps (as the runner's does) and answers every call."""

    def __init__(self) -> None:
        self.steps: list[Any] = []

    async def __call__(self, name: str, arguments: dict) -> CallResult:
        return CallResult(False, {"theme": "dark"})

    def record(self, step: Any) -> None:
        self.steps.append(step)


TOOLS = [
    ToolInfo(
        "system_update_setting",
        "Change a setting.",
        {"type": "object", "properties": {"key": {"type": "string"}, "value": {}}},
        "write",
    )
]


async def test_the_1_5b_brace_leftover_is_neither_recorded_nor_sent_back(fake):
    d = OpenAIDialect()
    first = d.reply([("call_0", "system_update_setting", {"key": "theme", "value": "dark"})])
    first["choices"][0]["message"]["content"] = "{}"  # what llama.cpp left of {{"name": ..., "arguments": ...}}
    sent_back: list[dict] = []

    def second(body: dict) -> dict:
        sent_back.append(next(m for m in reversed(body["messages"]) if m["role"] == "assistant"))
        return d.reply(text="Dark mode is on now.")

    fake.play(first, second)
    call = Recording()
    result = await d.agent(fake).run("Turn on dark mode.", TOOLS, call)
    assert result.status == "completed" and result.final_message == "Dark mode is on now."
    # not sent back: the assistant turn carries the call and no content
    [assistant] = sent_back
    assert assistant["content"] is None and assistant["tool_calls"][0]["function"]["name"] == "system_update_setting"
    # not recorded as text; recorded as removed
    messages = [s for s in call.steps if isinstance(s, MessageStep)]
    assert [(m.text, m.removed_text, m.tool_calls) for m in messages] == [
        ("", "{}", 1),
        ("Dark mode is on now.", None, 0),
    ]


async def test_text_beside_a_call_is_kept_and_a_final_brace_message_stays_the_answer(fake):
    """Only leftovers beside a call go: words beside a call stay, and a final message of braces
    (no call) is the model's answer as it gave it, flagged by the report
    (``non_language_final_message``), never silently emptied."""
    d = OpenAIDialect()
    first = d.reply([("call_0", "system_update_setting", {"key": "theme", "value": "dark"})])
    first["choices"][0]["message"]["content"] = "Setting the theme."
    fake.play(first, d.reply(text="{}"))
    call = Recording()
    result = await d.agent(fake).run("Turn on dark mode.", TOOLS, call)
    assert result.final_message == "{}"
    messages = [s for s in call.steps if isinstance(s, MessageStep)]
    assert [(m.text, m.removed_text) for m in messages] == [("Setting the theme.", None), ("{}", None)]
    assert fake.requests[1].body["messages"][-2]["content"] == "Setting the theme."
