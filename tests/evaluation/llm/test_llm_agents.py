"""LLM agents (OpenAI chat completions, Anthropic messages) against a real loopback fake
provider and our real MCP server over streamable HTTP (issue: LLM agents, tool exposure).

The fake provider is an ``http.server`` on 127.0.0.1 that plays a script of replies (JSON
answers, functions of the request, HTTP errors, or silence) and records every request, so
the tests assert both what the agent did on the server (call log, final state) and what it
sent to the provider (tool schemas, fed-back results and their ids).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from mcp import Client

from mcpgym.evaluation.agents import AgentContext
from mcpgym.evaluation.llm import (
    AnthropicAgent,
    CallResult,
    LLMLimits,
    OpenAIAgent,
    RetryPolicy,
    ToolInfo,
    episode_request,
    is_llm_spec,
    parse_exposure,
    parse_llm_spec,
    parse_retry_after,
    pick_distractors,
)
from mcpgym.evaluation.llm.tools import object_schema, provider_name
from mcpgym.kernel.world import World
from mcpgym.tools.invoke import ToolInvoker
from mcpgym.tools.mcp_bridge import payload_of
from tests.conftest import run_text
from tests.support.fake_provider import HANG, INSTRUCTION, Fail, FakeProvider, OpenAIDialect, Raw, both
from tests.support.mcp_helpers import control_get, create_episode

SEED = 7


# -- the MCP side ------------------------------------------------------------------------------
@dataclass
class Task:
    instruction: str = INSTRUCTION


@asynccontextmanager
async def mcp_episode(http_server, apps=("system",), **extra: Any):
    """Create an episode, connect the SDK client, and yield (episode, tools, call)."""
    base, token = http_server
    ep = create_episode(base, token, seed=SEED, apps=list(apps), **extra)
    async with Client(ep["mcp_url"]) as client:
        listed = (await client.list_tools()).tools
        tools = [
            ToolInfo(
                t.name,
                t.description or "",
                t.input_schema or {},
                (t.meta or {}).get("mcpgym/kind")
                or ("read" if t.annotations and t.annotations.read_only_hint else "write"),
            )
            for t in listed
        ]

        async def call(name: str, arguments: dict) -> CallResult:
            result = await client.call_tool(name, arguments)
            return CallResult(bool(result.is_error), payload_of(result))

        yield ep, tools, call, client


def calls_of(http_server, ep) -> list[dict]:
    base, token = http_server
    return control_get(base, token, f"/control/episodes/{ep['episode_id']}/calls")


def wallet_of(http_server, ep) -> dict:
    base, token = http_server
    return control_get(base, token, f"/control/episodes/{ep['episode_id']}/snapshot")["state"]["system"]["wallet"]


INITIAL_WALLET = World(SEED, ["system"]).snapshot()["state"]["system"]["wallet"]


def transfer_script(d) -> list[Any]:
    """Read the balance (checking what was fed back), transfer 2500 cents, then answer."""

    def second(body: dict) -> dict:
        [(cid, payload, is_error)] = d.results(body)
        assert cid == "c1" and is_error in (None, False)
        assert payload["savings_cents"] == INITIAL_WALLET["savings_cents"]
        return d.reply([("c2", "system_transfer_from_savings", {"amount_cents": 2500})], usage=(30, 7))

    def third(body: dict) -> dict:
        [(cid, payload, is_error)] = d.results(body)
        assert cid == "c2" and is_error in (None, False)
        return d.reply(text=f"Done: your balance is now {payload['balance_cents']} cents.", usage=(50, 9))

    return [d.reply([("c1", "system_get_wallet_balance", {})], usage=(20, 6)), second, third]


# -- end to end ----------------------------------------------------------------------------------
@both
async def test_correct_episode_end_to_end(d, fake, http_server):
    fake.play(*transfer_script(d))
    async with mcp_episode(http_server) as (ep, tools, call, _):
        result = await d.agent(fake).run(Task(), tools, call)
    after = INITIAL_WALLET["balance_cents"] + 2500
    assert result.status == "completed" and result.error is None and result.invalid_calls == 0
    assert result.final_message == f"Done: your balance is now {after} cents."
    assert (result.tokens.input, result.tokens.output) == (100, 22)
    assert result.stop_reason == ("stop" if d.name == "openai" else "end_turn")
    log = calls_of(http_server, ep)
    assert [(c["tool"], c["arguments"], c["is_error"]) for c in log] == [
        ("system_get_wallet_balance", {}, False),
        ("system_transfer_from_savings", {"amount_cents": 2500}, False),
    ]
    wallet = wallet_of(http_server, ep)
    assert (wallet["balance_cents"], wallet["savings_cents"]) == (after, INITIAL_WALLET["savings_cents"] - 2500)
    # what the provider received
    assert len(fake.requests) == 3
    d.check_first_request(fake.requests[0])
    offered = d.offered(fake.requests[0].body)
    assert set(offered) == {t.name for t in tools} and len(offered) == 18  # the 18 system tools
    transfer = next(t for t in tools if t.name == "system_transfer_from_savings")
    assert offered["system_transfer_from_savings"] == transfer.input_schema
    assert offered["system_get_wallet_balance"] == {"additionalProperties": False, "properties": {}, "type": "object"}
    for earlier, later in zip(fake.requests, fake.requests[1:], strict=False):  # the conversation only grows
        assert later.body["messages"][: len(earlier.body["messages"])] == earlier.body["messages"]


@both
async def test_several_calls_in_one_reply_run_in_order(d, fake, http_server):
    def second(body: dict) -> dict:
        got = d.results(body)
        assert [g[0] for g in got] == ["a", "b", "c"]
        assert set(got[0][1]) == {"now", "iso", "weekday"}
        assert got[1][1]["balance_cents"] == INITIAL_WALLET["balance_cents"]
        assert "privileges" in got[2][1]
        return d.reply(text="It is Monday and you have money.")

    fake.play(
        d.reply(
            [("a", "system_get_time", {}), ("b", "system_get_wallet_balance", {}), ("c", "system_list_privileges", {})]
        ),
        second,
    )
    async with mcp_episode(http_server) as (ep, tools, call, _):
        result = await d.agent(fake).run(Task(), tools, call)
    assert result.status == "completed" and result.final_message == "It is Monday and you have money."
    assert [c["tool"] for c in calls_of(http_server, ep)] == [
        "system_get_time",
        "system_get_wallet_balance",
        "system_list_privileges",
    ]
    if d.name == "openai":  # the assistant message is echoed with its three calls, then three tool messages
        msgs = fake.requests[1].body["messages"]
        assert [m["role"] for m in msgs] == ["system", "user", "assistant", "tool", "tool", "tool"]
        assert [tc["id"] for tc in msgs[2]["tool_calls"]] == ["a", "b", "c"]
    else:  # one user message with three tool_result blocks
        msgs = fake.requests[1].body["messages"]
        assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
        assert [b["id"] for b in msgs[1]["content"]] == ["a", "b", "c"]


@both
async def test_invalid_json_arguments_are_a_local_tool_error(d, fake, http_server):
    def second(body: dict) -> dict:
        [(cid, payload, is_error)] = d.results(body)
        assert cid == "bad" and is_error in (None, True)
        assert payload["error"]["code"] == "invalid_argument" and "not valid JSON" in payload["error"]["message"]
        return d.reply([("ok", "system_get_wallet_balance", {})])

    fake.play(
        d.reply([("bad", "system_transfer_from_savings", Raw('{"amount_cents": 25'))]),
        second,
        d.reply(text="I could only read the balance."),
    )
    async with mcp_episode(http_server) as (ep, tools, call, _):
        result = await d.agent(fake).run(Task(), tools, call)
    assert result.status == "completed" and result.invalid_calls == 1
    assert [c["tool"] for c in calls_of(http_server, ep)] == ["system_get_wallet_balance"]
    assert wallet_of(http_server, ep) == INITIAL_WALLET
    if d.name == "anthropic":
        assert d.results(fake.requests[1].body)[0][2] is True
        echoed = fake.requests[1].body["messages"][1]["content"][0]
        assert echoed == {"type": "tool_use", "id": "bad", "name": "system_transfer_from_savings", "input": {}}
    else:
        echoed = fake.requests[1].body["messages"][2]["tool_calls"][0]
        assert echoed["function"] == {"name": "system_transfer_from_savings", "arguments": "{}"}


@both
async def test_hallucinated_tool_is_a_local_tool_error(d, fake, http_server):
    def second(body: dict) -> dict:
        [(cid, payload, is_error)] = d.results(body)
        assert cid == "h1" and is_error in (None, True)
        assert payload["error"]["code"] == "not_found" and payload["error"]["field"] == "name"
        assert "wallet_teleport_money" in payload["error"]["message"]
        return d.reply([("h2", "system_transfer_from_savings", {"amount_cents": 100})])

    fake.play(
        d.reply([("h1", "wallet_teleport_money", {"amount_cents": 100})]), second, d.reply(text="Moved 1 dollar.")
    )
    async with mcp_episode(http_server) as (ep, tools, call, _):
        result = await d.agent(fake).run(Task(), tools, call)
    assert result.status == "completed" and result.invalid_calls == 1
    assert [c["tool"] for c in calls_of(http_server, ep)] == ["system_transfer_from_savings"]
    assert wallet_of(http_server, ep)["balance_cents"] == INITIAL_WALLET["balance_cents"] + 100


# -- provider failures ------------------------------------------------------------------------------
@both
async def test_429_retry_after_is_honoured(d, fake, http_server):
    events: list[dict] = []
    fake.play(Fail(429, {"Retry-After": "0.3"}), d.reply(text="Nothing to do."))
    async with mcp_episode(http_server) as (ep, tools, call, _):
        agent = d.agent(fake, retry=RetryPolicy(backoff_base=5.0, request_timeout=10), observer=events.append)
        result = await agent.run(Task(), tools, call)
    assert result.status == "completed" and result.final_message == "Nothing to do."
    assert [(e["status"], e["delay"], e["retry_after"]) for e in events] == [(429, 0.3, 0.3)]
    first, second = fake.requests
    assert first.body == second.body
    assert second.at - first.at >= 0.25  # waited the header's 0.3 s, not the 5 s backoff


@both
async def test_500_three_times_then_success(d, fake, http_server):
    events: list[dict] = []
    fake.play(Fail(500), Fail(502), Fail(500), *transfer_script(d))
    async with mcp_episode(http_server) as (ep, tools, call, _):
        agent = d.agent(fake, retry=RetryPolicy(max_retries=3, backoff_base=0.01), observer=events.append)
        result = await agent.run(Task(), tools, call)
    assert result.status == "completed" and result.error is None
    assert [(e["attempt"], e["status"], e["delay"]) for e in events] == [(1, 500, 0.01), (2, 502, 0.02), (3, 500, 0.04)]
    assert len(fake.requests) == 6 and len(calls_of(http_server, ep)) == 2


@both
async def test_provider_that_keeps_failing_errors_the_episode(d, fake, http_server):
    fake.play(Fail(503, body="overloaded"), Fail(503, body="overloaded"), Fail(503, body="overloaded"))
    async with mcp_episode(http_server) as (ep, tools, call, _):
        result = await d.agent(fake, retry=RetryPolicy(max_retries=2, backoff_base=0.01)).run(Task(), tools, call)
    assert result.status == "errored" and result.final_message == ""
    assert result.stop_reason.startswith("provider_error: HTTP 503: overloaded")
    assert "gave up after 3 attempts" in result.error
    assert len(fake.requests) == 3 and calls_of(http_server, ep) == []


@both
async def test_bad_request_is_not_retried(d, fake, http_server):
    fake.play(Fail(400, body='{"error": "context too long"}'))
    async with mcp_episode(http_server) as (ep, tools, call, _):
        result = await d.agent(fake, retry=RetryPolicy(backoff_base=0.01)).run(Task(), tools, call)
    assert result.status == "errored" and "HTTP 400" in result.error and "context too long" in result.error
    assert len(fake.requests) == 1


@both
async def test_silent_provider_times_out_as_errored(d, fake, http_server):
    fake.play(HANG, HANG)
    async with mcp_episode(http_server) as (ep, tools, call, _):
        agent = d.agent(fake, retry=RetryPolicy(max_retries=1, backoff_base=0.01, request_timeout=0.3))
        result = await agent.run(Task(), tools, call)
    assert result.status == "errored"
    assert "no answer within 0.3 s" in result.error and "gave up after 2 attempts" in result.error
    assert len(fake.requests) == 2 and calls_of(http_server, ep) == []
    assert (result.tokens.input, result.tokens.output) == (0, 0)


# -- limits ---------------------------------------------------------------------------------------
@both
async def test_turn_limit(d, fake, http_server):
    fake.play(*[d.reply([(f"t{i}", "system_get_time", {})]) for i in range(3)])
    async with mcp_episode(http_server) as (ep, tools, call, _):
        result = await d.agent(fake, limits=LLMLimits(max_turns=2)).run(Task(), tools, call)
    assert result.status == "limit" and result.stop_reason == "turn limit reached (2 model turns)"
    assert len(fake.requests) == 2 and [c["tool"] for c in calls_of(http_server, ep)] == ["system_get_time"] * 2


@both
async def test_tool_call_limit(d, fake, http_server):
    pair = lambda i: d.reply([(f"x{i}", "system_get_time", {}), (f"y{i}", "system_get_wallet_balance", {})])  # noqa: E731
    fake.play(pair(0), pair(1), pair(2))
    async with mcp_episode(http_server) as (ep, tools, call, _):
        result = await d.agent(fake, limits=LLMLimits(max_tool_calls=3)).run(Task(), tools, call)
    assert result.status == "limit" and result.stop_reason == "tool-call limit reached (3 tool calls)"
    assert [c["tool"] for c in calls_of(http_server, ep)] == [
        "system_get_time",
        "system_get_wallet_balance",
        "system_get_time",
    ]


@both
async def test_token_limit(d, fake, http_server):
    fake.play(
        d.reply([("k1", "system_get_time", {})], usage=(80, 20)),
        d.reply([("k2", "system_get_wallet_balance", {})], usage=(90, 10)),
    )
    async with mcp_episode(http_server) as (ep, tools, call, _):
        result = await d.agent(fake, limits=LLMLimits(max_tokens=150)).run(Task(), tools, call)
    assert result.status == "limit" and result.stop_reason == "token limit reached (200 > 150 tokens)"
    assert (result.tokens.input, result.tokens.output) == (170, 30)
    assert [c["tool"] for c in calls_of(http_server, ep)] == ["system_get_time"]


# -- determinism --------------------------------------------------------------------------------
@both
async def test_same_script_same_trajectory(d, http_server):
    runs = []
    for _ in range(2):
        fake = FakeProvider()
        try:
            fake.play(*transfer_script(d))
            async with mcp_episode(http_server) as (ep, tools, call, _):
                result = await d.agent(fake).run(Task(), tools, call)
            base, token = http_server
            info = control_get(base, token, f"/control/episodes/{ep['episode_id']}")
            log = [
                {k: c[k] for k in ("tool", "arguments", "is_error", "result", "time")}
                for c in calls_of(http_server, ep)
            ]
            runs.append((result.model_dump(), log, info["state_hash"], [r.body for r in fake.requests]))
        finally:
            fake.close()
        assert fake.errors == []
    assert runs[0] == runs[1]
    assert len(runs[0][1]) == 2


# -- exposure modes --------------------------------------------------------------------------------
ALL_TOOLS = sorted(ToolInvoker(World(SEED, ["system", "shop"]), "none").specs)
TASK_TOOLS = ["shop_add_to_cart", "shop_checkout", "system_authorize_payment"]


def test_parse_exposure_modes():
    assert [parse_exposure(m).mode for m in ("all", " Task ", "task+0", "task+5", "retrieval")] == [
        "all",
        "task",
        "task",
        "task+5",
        "retrieval",
    ]
    assert parse_exposure("task+12").distractors == 12
    for bad in ("", "some", "task+", "task+-1", "task+x", "task-3", "retrieval+2"):
        with pytest.raises(ValueError, match="expected 'all', 'task', 'task\\+N'"):
            parse_exposure(bad)


def test_episode_request_per_mode():
    assert episode_request("all", TASK_TOOLS, ALL_TOOLS, 1) == {}
    assert episode_request("retrieval", TASK_TOOLS, ALL_TOOLS, 1) == {"search_tools": True}
    assert episode_request("task", reversed(TASK_TOOLS), ALL_TOOLS, 1) == {"tools": TASK_TOOLS}
    five = episode_request("task+5", TASK_TOOLS, ALL_TOOLS, 1)["tools"]
    assert len(five) == 8 and set(TASK_TOOLS) <= set(five) and set(five) <= set(ALL_TOOLS) and five == sorted(five)
    # deterministic in the seed, independent of argument order
    assert episode_request("task+5", list(reversed(TASK_TOOLS)), list(reversed(ALL_TOOLS)), 1)["tools"] == five
    draws = {tuple(pick_distractors(TASK_TOOLS, ALL_TOOLS, 5, s)) for s in range(6)}
    assert len(draws) > 1
    assert pick_distractors(TASK_TOOLS, ALL_TOOLS, 500, 1) == sorted(set(ALL_TOOLS) - set(TASK_TOOLS))
    with pytest.raises(ValueError, match="not among the episode's tools: talk_send_message"):
        episode_request("task", ["talk_send_message"], ALL_TOOLS, 1)
    with pytest.raises(ValueError, match="needs the task's oracle tools"):
        episode_request("task+2", [], ALL_TOOLS, 1)


async def test_task_plus_n_episode_lists_exactly_those_tools(http_server):
    extra = episode_request("task+4", TASK_TOOLS, ALL_TOOLS, SEED)
    async with mcp_episode(http_server, apps=("system", "shop"), **extra) as (ep, tools, call, _):
        assert sorted(t.name for t in tools) == extra["tools"] and len(tools) == 7
        assert {t.kind for t in tools if t.name in TASK_TOOLS} == {"write", "auth"}


@both
async def test_retrieval_mode_unlocks_what_search_returns(d, fake, http_server):
    def second(body: dict) -> dict:
        [(cid, payload, _)] = d.results(body)
        found = [t["name"] for t in payload["tools"]]
        assert cid == "s1" and "system_transfer_from_savings" in found and len(found) == 3
        offered = d.offered(body)
        assert list(offered) == ["search_tools", *found]
        assert offered["system_transfer_from_savings"]["required"] == ["amount_cents"]
        return d.reply([("s2", "system_transfer_from_savings", {"amount_cents": 700})])

    fake.play(
        d.reply([("s1", "search_tools", {"query": "transfer money from savings into the wallet", "k": 3})]),
        second,
        d.reply(text="Moved 7 dollars."),
    )
    extra = episode_request("retrieval", [], ALL_TOOLS, SEED)
    async with mcp_episode(http_server, **extra) as (ep, tools, call, client):
        assert [t.name for t in tools] == ["search_tools"]
        result = await d.agent(fake, tool_exposure="retrieval").run(Task(), tools, call)
        relisted = {t.name for t in (await client.list_tools()).tools}
    assert result.status == "completed" and result.invalid_calls == 0
    assert list(d.offered(fake.requests[0].body)) == ["search_tools"]
    log = calls_of(http_server, ep)
    assert [(c["tool"], c["is_error"]) for c in log] == [
        ("search_tools", False),
        ("system_transfer_from_savings", False),
    ]
    assert "system_transfer_from_savings" in relisted and len(relisted) == 4
    assert wallet_of(http_server, ep)["balance_cents"] == INITIAL_WALLET["balance_cents"] + 700


# -- specs, describe, helpers -----------------------------------------------------------------------
def test_parse_llm_spec(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    local = parse_llm_spec("openai:llama3.1:8b", base_url="http://localhost:11434/v1", max_turns=5, backoff_base=0.5)
    assert isinstance(local, OpenAIAgent) and local.model == "llama3.1:8b" and local.name == "openai:llama3.1:8b"
    assert local.limits.max_turns == 5 and local.retry.backoff_base == 0.5
    assert local.headers()["Authorization"] == "Bearer EMPTY"
    with pytest.raises(ValueError, match="set OPENAI_API_KEY"):
        parse_llm_spec("openai:gpt-4o-mini")
    with pytest.raises(ValueError, match="set ANTHROPIC_API_KEY"):
        parse_llm_spec("anthropic:claude-sonnet-4-5")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "ak-env")
    claude = parse_llm_spec("anthropic:claude-sonnet-4-5", temperature=None)
    assert isinstance(claude, AnthropicAgent) and claude.endpoint() == "https://api.anthropic.com/v1/messages"
    assert claude.headers()["x-api-key"] == "ak-env" and claude.temperature is None
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    monkeypatch.setenv("OPENAI_BASE_URL", "https://example.invalid/v1/")
    assert parse_llm_spec("openai:gpt-4o-mini").endpoint() == "https://example.invalid/v1/chat/completions"
    for bad, message in [
        ("gpt-4o", "must look like"),
        ("mistral:large", "unknown LLM provider 'mistral'"),
        ("openai:", "names no model"),
        ("openai: ", "names no model"),
    ]:
        with pytest.raises(ValueError, match=message):
            parse_llm_spec(bad)
    with pytest.raises(ValueError, match="unknown option\\(s\\) for 'openai:x': colour"):
        parse_llm_spec("openai:x", colour="red")
    with pytest.raises(ValueError, match="no sampling seed"):
        parse_llm_spec("anthropic:claude", seed=3)
    with pytest.raises(ValueError, match="unknown tool exposure mode"):
        parse_llm_spec("openai:x", tool_exposure="some")
    assert is_llm_spec("openai:gpt-4o") and is_llm_spec("anthropic:c") and not is_llm_spec("careful")


def test_describe_records_what_changes_results():
    agent = OpenAIAgent(
        "gpt-test",
        base_url="http://127.0.0.1:9/v1",
        api_key="sk-secret",
        seed=3,
        system_prompt="Be brief.",
        tool_exposure="task+5",
        limits=LLMLimits(max_turns=9),
    )
    info = agent.describe()
    assert info["provider"] == "openai" and info["model"] == "gpt-test" and info["seed"] == 3
    assert info["temperature"] == 0.0 and info["system_prompt"] == "Be brief."
    assert info["system_prompt_sha256"] == hashlib.sha256(b"Be brief.").hexdigest()
    assert info["tool_exposure"] == "task+5" and info["limits"]["max_turns"] == 9
    assert "tool_call_id" in info["tool_results"] and info["retry"]["max_retries"] == 4
    assert "sk-secret" not in json.dumps(info)
    claude = AnthropicAgent("c", base_url="http://localhost:1", api_key="k").describe()
    assert claude["provider"] == "anthropic" and claude["seed"] is None and "is_error" in claude["tool_results"]


def test_parse_retry_after():
    assert parse_retry_after({"Retry-After": "2"}) == 2.0
    assert parse_retry_after({"retry-after": "0.25"}) == 0.25
    assert parse_retry_after({"retry-after-ms": "1500", "Retry-After": "9"}) == 1.5
    assert parse_retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:10 GMT"}, now=1445412480.0) == 10.0
    assert parse_retry_after({"Retry-After": "soon"}) is None and parse_retry_after({}) is None
    assert parse_retry_after({"Retry-After": "-3"}) is None
    assert RetryPolicy(backoff_base=0.5, backoff_max=3).backoff(0) == 0.5
    assert [RetryPolicy(backoff_base=0.5, backoff_max=3).backoff(i) for i in range(5)] == [0.5, 1.0, 2.0, 3, 3]


def test_tool_names_and_schemas_for_providers():
    assert provider_name("system_get_time") == "system_get_time"
    assert provider_name("files.read/v2") == "files_read_v2"
    assert provider_name("x" * 70) == "x" * 64
    assert provider_name("a.b", {"a_b"}) == "a_b_2"
    assert object_schema({"type": "object"}) == {"type": "object", "properties": {}}
    assert object_schema({"type": "array"}) == {"type": "object", "properties": {}}
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    assert object_schema(schema) == schema and object_schema(schema) is not schema


async def test_agent_problems_are_errored_results_not_exceptions(fake):
    async def raising_call(name: str, arguments: dict) -> CallResult:
        raise RuntimeError("MCP session gone")

    agent = OpenAIDialect().agent(fake)
    bad_task = await agent.run(object(), [], raising_call)
    assert bad_task.status == "errored" and "instruction" in bad_task.error and fake.requests == []
    fake.play(OpenAIDialect().reply([("r1", "system_get_time", {})]))
    tools = [ToolInfo("system_get_time", "Current virtual time.", {"type": "object"}, "read")]
    result = await agent.run(Task(), tools, raising_call)
    assert result.status == "errored" and result.stop_reason == "agent_error: RuntimeError: MCP session gone"
    assert (result.tokens.input, result.tokens.output) == (10, 5)
    assert OpenAIDialect().offered(fake.requests[0].body) == {"system_get_time": {"type": "object", "properties": {}}}


@both
async def test_runner_call_budget_ends_in_limit(d, fake, http_server):
    """With the runner's own call function (EpisodeCaller raising CallLimitReached)."""
    from mcpgym.evaluation.agents import CallLimitReached
    from mcpgym.evaluation.run.episode_runner import EpisodeCaller, tool_infos

    fake.play(*[d.reply([(f"b{i}", "system_get_time", {})]) for i in range(3)])
    base, token = http_server
    ep = create_episode(base, token, seed=SEED, apps=["system"])
    async with Client(ep["mcp_url"]) as client:
        tools = tool_infos((await client.list_tools()).tools, ToolInfo)
        caller = EpisodeCaller(client, 2, CallResult, CallLimitReached)
        result = await d.agent(fake).run(Task(), tools, caller)
    assert result.status == "limit" and result.stop_reason == "call budget of 2 spent"
    assert caller.limit_hit and len(calls_of(http_server, ep)) == 2 and result.tokens.input == 30


def test_make_agent_builds_llm_agents_once_registered(monkeypatch):
    import mcpgym.evaluation.agents as agents_pkg
    from mcpgym.evaluation.llm import register_llm_agents

    monkeypatch.setattr(agents_pkg, "_FACTORIES", {})  # a fresh registry: no effect on other tests
    assert register_llm_agents(tool_exposure="task+2", base_url="http://127.0.0.1:8000/v1") == [
        "openai",
        "anthropic",
        "local",
    ]
    assert register_llm_agents() == []
    agent = agents_pkg.make_agent("openai:qwen2.5-7b")
    assert isinstance(agent, OpenAIAgent) and agent.name == "openai:qwen2.5-7b"
    assert (
        agent.describe()["tool_exposure"] == "task+2"
        and agent.endpoint() == "http://127.0.0.1:8000/v1/chat/completions"
    )
    assert "openai:..." in agents_pkg.known_agents()


# -- text no UTF-8 writer takes -------------------------------------------------------------------
@both
async def test_a_lone_surrogate_in_a_reply_becomes_a_replacement_character(d, fake, http_server):
    """A reply whose JSON holds "\\ud800" alone (valid JSON, no valid text) used to reach the
    trajectory as a lone surrogate, which cannot be written as UTF-8: the run failed on it."""
    from mcpgym.evaluation.records.trajectory import Trajectory

    fake.play(d.reply(text="Done \ud800 and \U0001f600 \udfff."))  # json.dumps escapes all three
    async with mcp_episode(http_server) as (ep, tools, call, _):
        result = await d.agent(fake).run(Task(), tools, call)
    assert result.status == "completed" and result.final_message == "Done \ufffd and \U0001f600 \ufffd."
    line = Trajectory(episode_id="e", agent="a", final_message=result.final_message).model_dump_json()
    assert "\ufffd" in json.loads(line)["final_message"]


# -- replies nobody on the team wrote: malformed calls stay invalid steps, never crashes ---------
class LocalCall:
    """A recording call function without a server: every call succeeds with its index."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict]] = []
        self.steps: list[Any] = []

    async def __call__(self, name: str, arguments: dict) -> CallResult:
        self.calls.append((name, arguments))
        return CallResult(False, {"n": len(self.calls)})

    def record(self, step: Any) -> None:
        self.steps.append(step)


TIME_TOOLS = [ToolInfo("system_get_time", "Current virtual time.", {"type": "object"}, "read")]


def echoed_ids(d, body: dict) -> list[str]:
    """The call ids of the last assistant message sent back to the provider."""
    last = next(m for m in reversed(body["messages"]) if m["role"] == "assistant")
    if d.name == "openai":
        return [tc["id"] for tc in last["tool_calls"]]
    return [b["id"] for b in last["content"] if b["type"] == "tool_use"]


@both
async def test_repeated_call_ids_are_made_unique_in_the_conversation(d, fake):
    """A model that repeats a call id (in one reply, or across turns) gets every result under
    its own id: both APIs refuse a conversation whose ids collide."""

    def second(body: dict) -> dict:
        fed = [cid for cid, _, _ in d.results(body)]
        assert fed == echoed_ids(d, body) and fed[0] == "dup" and len(set(fed)) == 2
        assert [p["n"] for _, p, _ in d.results(body)] == [1, 2]
        return d.reply([("dup", "system_get_time", {})])

    def third(body: dict) -> dict:
        earlier = {
            cid for m in body["messages"][:-2] if m["role"] == "assistant" for cid in echoed_ids(d, {"messages": [m]})
        }
        [(cid, payload, _)] = d.results(body)
        assert cid == echoed_ids(d, body)[0] and cid not in earlier and payload["n"] == 3
        return d.reply(text="Done.")

    fake.play(d.reply([("dup", "system_get_time", {}), ("dup", "system_get_time", {})]), second, third)
    call = LocalCall()
    result = await d.agent(fake).run(Task(), TIME_TOOLS, call)
    assert result.status == "completed" and len(call.calls) == 3 and len(fake.requests) == 3


@both
async def test_a_huge_hallucinated_name_is_cut_in_the_error_and_the_trajectory(d, fake):
    name = "teleport " * 5_000

    def second(body: dict) -> dict:
        [(cid, payload, _)] = d.results(body)
        assert payload["error"]["code"] == "not_found" and "teleport teleport" in payload["error"]["message"]
        assert len(payload["error"]["message"]) < 400
        return d.reply(text="Sorry.")

    fake.play(d.reply([("h", name, {})]), second)
    call = LocalCall()
    result = await d.agent(fake).run(Task(), TIME_TOOLS, call)
    [invalid] = [s for s in call.steps if getattr(s, "invalid", False)]
    assert result.status == "completed" and call.calls == []
    assert invalid.tool.startswith("teleport teleport") and len(invalid.tool) <= 200
    assert invalid.result == json.loads(json.dumps(invalid.result)) and len(invalid.result["error"]["message"]) < 400


@both
@pytest.mark.parametrize("name", ["", "   ", None, 42])
async def test_a_call_without_a_tool_name_is_told_so(d, name, fake):
    def second(body: dict) -> dict:
        [(_, payload, _)] = d.results(body)
        assert payload["error"]["code"] == "not_found" and payload["error"]["field"] == "name"
        assert payload["error"]["message"].startswith("the tool call names no tool (name: ")
        return d.reply(text="Sorry.")

    fake.play(d.reply([("n1", name, {})]), second)
    call = LocalCall()
    result = await d.agent(fake).run(Task(), TIME_TOOLS, call)
    [invalid] = [s for s in call.steps if getattr(s, "invalid", False)]
    assert result.status == "completed" and call.calls == [] and invalid.call_id == "n1"


# -- a provider that never answers, under the episode's wall timeout ------------------------------
@both
async def test_a_deadline_cuts_a_silent_provider_as_errored(d, fake):
    import anyio

    fake.play(d.reply([("t1", "system_get_time", {})], usage=(11, 4)), HANG, HANG)
    call = LocalCall()
    started = anyio.current_time()
    result = await d.agent(fake).run(
        Task(), TIME_TOOLS, call, AgentContext(deadline=started + 1.5)
    )  # default 120 s timeout
    waited = anyio.current_time() - started
    assert result.status == "errored" and result.stop_reason.startswith("provider_error: no answer within the")
    assert "before the episode's timeout" in result.error and 0.8 < waited < 1.4
    assert (result.tokens.input, result.tokens.output) == (11, 4) and len(call.calls) == 1


@both
async def test_no_retry_starts_past_the_deadline(d, fake):
    import anyio

    fake.play(Fail(503, {"Retry-After": "30"}))
    started = anyio.current_time()
    result = await d.agent(fake).run(Task(), TIME_TOOLS, LocalCall(), AgentContext(deadline=started + 5.0))
    assert result.status == "errored" and "HTTP 503" in result.error and "no time left for a retry" in result.error
    assert anyio.current_time() - started < 2.0 and len(fake.requests) == 1


@pytest.mark.parametrize("d", [OpenAIDialect()], ids=lambda d: d.name)
def test_a_run_records_a_silent_provider_as_errored_not_as_the_agents_timeout(d, fake, http_server, tmp_path):
    from mcpgym.evaluation.run.runner import AgentEntry, RunConfig, run_evaluation
    from mcpgym.evaluation.tasks import get_task

    base, token = http_server
    fake.play(d.reply([("t1", "system_get_time", {})], usage=(11, 4)), HANG)
    agent = d.agent(fake)
    settings = RunConfig(
        out=tmp_path / "run", trials=1, server_url=base, token=token, episode_timeout=2.0, progress=False
    )
    result = run_evaluation([get_task("system.dark_mode")], [AgentEntry(agent.name, agent)], settings)
    [traj] = [json.loads(line) for line in run_text(tmp_path / "run").splitlines()]
    assert result.ran == 1 and traj["status"] == "errored", traj["stop_reason"]
    assert traj["stop_reason"].startswith("provider_error: no answer within the")
    assert traj["tokens"] == {"input": 11, "output": 4}
    assert [s["type"] for s in traj["steps"]] == ["message", "tool_call"]


# -- malformed or cut-off calls ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "tool_calls",
    [{"id": "d1", "type": "function", "function": {"name": "system_get_time", "arguments": "{}"}}, "call it", 7],
    ids=["object", "string", "number"],
)
async def test_tool_calls_that_is_no_list_is_an_invalid_call(tool_calls, fake):
    """An OpenAI-compatible reply whose tool_calls is not a list asked for tools all the same:
    the model is told, the step is recorded invalid, and the episode goes on (it ended as
    completed with an empty final message)."""
    d = OpenAIDialect()
    reply = d.reply(text="")
    reply["choices"][0]["message"]["tool_calls"] = tool_calls
    reply["choices"][0]["finish_reason"] = "tool_calls"

    def second(body: dict) -> dict:
        [(_, payload, _)] = d.results(body)
        assert (
            payload["error"]["code"] == "invalid_argument"
            and "tool_calls must be a list" in payload["error"]["message"]
        )
        return d.reply(text="Sorry.")

    fake.play(reply, second)
    call = LocalCall()
    result = await d.agent(fake).run(Task(), TIME_TOOLS, call)
    [invalid] = [s for s in call.steps if getattr(s, "invalid", False)]
    assert result.status == "completed" and result.final_message == "Sorry." and call.calls == []
    assert invalid.error_code == "invalid_argument" and len(fake.requests) == 2


@both
async def test_the_call_a_reply_was_cut_off_in_is_not_run(d, fake):
    """A reply stopped by the output-token limit (OpenAI ``length``, Anthropic ``max_tokens``)
    may end inside its last tool call, whose arguments can parse and still be cut (2500 -> 25):
    that call never reaches the server; the model is told to send it again. Earlier calls of
    the reply run."""
    reply = d.reply([("a", "system_get_time", {}), ("b", "system_get_time", {"tz": "Europe/Be"})])
    if d.name == "openai":
        reply["choices"][0]["finish_reason"] = "length"
    else:
        reply["stop_reason"] = "max_tokens"

    def second(body: dict) -> dict:
        (_, ok, _), (cid, cut, _) = d.results(body)
        assert ok == {"n": 1} and cid == "b" and cut["error"]["code"] == "invalid_argument"
        assert "output-token limit" in cut["error"]["message"]
        return d.reply(text="Done.")

    fake.play(reply, second)
    call = LocalCall()
    result = await d.agent(fake).run(Task(), TIME_TOOLS, call)
    [invalid] = [s for s in call.steps if getattr(s, "invalid", False)]
    assert result.status == "completed" and call.calls == [("system_get_time", {})]
    assert invalid.call_id == "b" and invalid.arguments == {"tz": "Europe/Be"}


@both
async def test_usage_figures_count_only_when_they_are_counts(d, fake):
    """Usage written as 12.0 (some OpenAI-compatible servers) counts; negative, fractional,
    textual or missing figures count 0, and the episode's total is the sum of its replies."""
    odd = d.reply([("u1", "system_get_time", {})])
    fin = d.reply(text="Done.")
    if d.name == "openai":
        odd["usage"] = {"prompt_tokens": 12.0, "completion_tokens": -3}
        fin["usage"] = {"prompt_tokens": "7", "completion_tokens": 2.5}
    else:
        odd["usage"] = {"input_tokens": 12.0, "output_tokens": -3}
        fin["usage"] = {"input_tokens": "7", "output_tokens": 2.5}
    fake.play(odd, fin)
    call = LocalCall()
    result = await d.agent(fake).run(Task(), TIME_TOOLS, call)
    replies = [s for s in call.steps if getattr(s, "type", "") == "message"]
    assert [(s.tokens.input, s.tokens.output) for s in replies] == [(12, 0), (0, 0)]
    assert (result.tokens.input, result.tokens.output) == (12, 0)


class _EndlessAnswer(BaseHTTPRequestHandler):
    """Answers 200 and then streams blanks without end (a broken proxy or streaming server)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        """Keep the test output free of http.server's request lines."""

    def do_POST(self) -> None:  # noqa: N802 - http.server API
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        chunk = b" " * 65536
        with suppress(OSError):  # the client hangs up once it has read its limit: that ends the answer
            while True:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))


async def test_an_endless_answer_is_cut_at_the_size_cap_not_read_into_memory():
    import httpx

    from mcpgym.evaluation.llm.transport import ProviderError, post_json

    server = ThreadingHTTPServer(("127.0.0.1", 0), _EndlessAnswer)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1/chat/completions"
        started = time.monotonic()
        async with httpx.AsyncClient() as client:
            with pytest.raises(ProviderError, match="answer larger than 1000000 bytes") as err:
                await post_json(client, url, {}, {}, RetryPolicy(max_retries=0, request_timeout=3), max_bytes=1_000_000)
        assert err.value.attempts == 1 and err.value.status == 200 and time.monotonic() - started < 10
    finally:
        server.shutdown()
        server.server_close()


@both
async def test_an_oversized_error_answer_is_cut_too(d, fake):
    from mcpgym.evaluation.llm.transport import MAX_ANSWER_BYTES

    fake.play(Fail(500, body="x" * (MAX_ANSWER_BYTES + 10)))
    result = await d.agent(fake, retry=RetryPolicy(backoff_base=0.01)).run(Task(), TIME_TOOLS, LocalCall())
    assert result.status == "errored" and f"answer larger than {MAX_ANSWER_BYTES} bytes" in result.error
    assert len(fake.requests) == 1


BAD_BASE_URLS = ["ftp://127.0.0.1/v1", "not a url", "http://", "http://[::1", "file:///tmp/x", "localhost:8000/v1"]


@pytest.mark.parametrize("url", BAD_BASE_URLS)
@pytest.mark.parametrize(("provider", "variable"), [("openai", "OPENAI_BASE_URL"), ("anthropic", "ANTHROPIC_BASE_URL")])
def test_a_base_url_that_is_no_http_url_is_refused_naming_the_variable(provider, variable, url, monkeypatch):
    """It was accepted, and every episode retried an unsupported-protocol error 5 times
    (15 s each) before ending errored; a broken IPv6 host failed without naming the variable."""
    monkeypatch.setenv(variable, url)
    monkeypatch.setenv(variable.replace("BASE_URL", "API_KEY"), "k-env")
    with pytest.raises(ValueError) as err:
        parse_llm_spec(f"{provider}:m")
    assert str(err.value).startswith(f"{variable} {url!r} is not an http(s) URL"), str(err.value)
    with pytest.raises(ValueError, match="base_url 'ftp://h' is not an http"):
        parse_llm_spec(f"{provider}:m", base_url="ftp://h")
    assert parse_llm_spec(f"{provider}:m", base_url="HTTP://127.0.0.1:8000/v1").base_url == "HTTP://127.0.0.1:8000/v1"


@both
async def test_arguments_nested_too_deep_for_the_parser_are_an_invalid_call(d, fake):
    """ "[[[[..." 100,000 deep raised RecursionError (no ValueError): the episode ended errored
    as an agent error instead of an invalid call the model is told about."""
    deep = "[" * 100_000

    def second(body: dict) -> dict:
        [(_, payload, _)] = d.results(body)
        assert payload["error"]["code"] == "invalid_argument" and "nested too deeply" in payload["error"]["message"]
        return d.reply(text="Sorry.")

    fake.play(d.reply([("deep", "system_get_time", Raw(deep) if d.name == "openai" else deep)]), second)
    call = LocalCall()
    result = await d.agent(fake).run(Task(), TIME_TOOLS, call)
    [invalid] = [s for s in call.steps if getattr(s, "invalid", False)]
    assert result.status == "completed" and call.calls == [] and invalid.raw_arguments == deep[:4000]


@both
async def test_an_answer_nested_too_deep_is_a_provider_error(d, fake):
    fake.play(Fail(200, body='{"choices": ' + "[" * 100_000))
    result = await d.agent(fake).run(Task(), TIME_TOOLS, LocalCall())
    assert result.status == "errored" and result.stop_reason.startswith(
        "provider_error: HTTP 200 with JSON nested too deeply"
    )


@both
@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
async def test_a_body_that_fails_its_content_encoding_is_a_provider_error(d, encoding, fake):
    """A body that claims gzip (or deflate) and is not: httpx's DecodingError is no
    TransportError, so it escaped the transport and ended the episode as an agent error."""
    fake.play(
        Fail(200, {"Content-Encoding": encoding}, body="not compressed at all"),
        Fail(200, {"Content-Encoding": encoding}, body="not compressed at all"),
    )
    result = await d.agent(fake, retry=RetryPolicy(max_retries=1, backoff_base=0.01)).run(
        Task(), TIME_TOOLS, LocalCall()
    )
    assert result.status == "errored" and result.stop_reason.startswith("provider_error: HTTP 200 with a body that")
    assert f"{encoding}" in result.error and "gave up after 2 attempts" in result.error and len(fake.requests) == 2


# -- the API key: never in a trajectory -----------------------------------------------------------
@both
async def test_an_api_key_read_with_its_newline_is_stripped(d, fake):
    """`export OPENAI_API_KEY=$(cat key.txt)` keeps no newline, but a .env or a secret file read
    raw does: the header was illegal, every request "failed to connect", and the error --
    written to the trajectory -- held the key."""
    agent = d.agent(fake)
    agent = type(agent)(agent.model, base_url=agent.base_url, api_key=" sk-SECRET123\n")
    fake.play(d.reply(text="Hello."))
    result = await agent.run(Task(), TIME_TOOLS, LocalCall())
    assert result.status == "completed"
    sent = fake.requests[0].headers
    assert sent.get("authorization", sent.get("x-api-key")) in ("Bearer sk-SECRET123", "sk-SECRET123")


@pytest.mark.parametrize("cls", [OpenAIAgent, AnthropicAgent])
@pytest.mark.parametrize("key", ["sk-SEC\nRET123", "sk-SECRÉT123", "sk-SEC\x00RET123"])
def test_an_api_key_no_header_can_carry_is_refused_without_echoing_it(cls, key):
    with pytest.raises(ValueError) as err:
        cls("m", base_url="http://127.0.0.1:9/v1", api_key=key)
    assert "API key" in str(err.value) and "SEC" not in str(err.value) and "RET123" not in str(err.value)


@both
async def test_a_provider_error_that_echoes_the_key_is_recorded_without_it(d, fake):
    agent = d.agent(fake)
    key = "sk-test" if d.name == "openai" else "ak-test"
    fake.play(Fail(401, body=json.dumps({"error": f"invalid key {key} for this model"})))
    result = await agent.run(Task(), TIME_TOOLS, LocalCall())
    assert result.status == "errored" and "HTTP 401" in result.error
    assert key not in result.error and key not in result.stop_reason and "[API key]" in result.error


class _TalkThenHang:
    """Records a model reply with its tokens, makes a call, then never returns."""

    name = "talker"

    async def run(self, task: Any, tools: Any, call: Any, context: Any = None) -> Any:
        import anyio

        from mcpgym.evaluation.records.trajectory import MessageStep, TokenUsage

        call.record(MessageStep(turn=0, text="", tool_calls=1, tokens=TokenUsage(input=7, output=2)))
        await call("system_get_time", {})
        await anyio.sleep(60)


def test_an_episode_cut_by_the_timeout_keeps_the_tokens_of_its_replies(http_server, tmp_path):
    """The runner's timeout leaves no agent result: the trajectory's tokens were None although
    its message steps hold them; now they are the steps' sum, as for any other episode."""
    from mcpgym.evaluation.run.runner import AgentEntry, RunConfig, run_evaluation
    from mcpgym.evaluation.tasks import get_task

    base, token = http_server
    settings = RunConfig(
        out=tmp_path / "run", trials=1, server_url=base, token=token, episode_timeout=1.5, progress=False
    )
    run_evaluation([get_task("system.dark_mode")], [AgentEntry("talker", _TalkThenHang())], settings)
    [traj] = [json.loads(line) for line in run_text(tmp_path / "run").splitlines()]
    assert traj["status"] == "limit" and [s["type"] for s in traj["steps"]] == ["message", "tool_call"]
    assert traj["tokens"] == {"input": 7, "output": 2}
