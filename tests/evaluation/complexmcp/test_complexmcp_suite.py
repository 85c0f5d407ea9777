"""ComplexMCP's tasks end to end under mcpgym: the apps on loopback, login per episode,
``session_id`` injected and hidden, mcpgym's proxy in front (faults, ledger, trajectory), and
the ``complexmcp`` outcome rule on the states from login and logout.

Four tasks run here on LightSystem, LightTalk and LightShop (the apps these tasks use; one
start of them for the module): a human transcript replayed faults off (complexmcp_01), one
under ``harsh`` faults (complexmcp_05), one replayed with ``+5`` distractors (complexmcp_04),
and an episode of the local 0.5B model with the task's tools, ``provide`` (complexmcp_00). tests/evaluation/complexmcp/test_complexmcp_docs.py runs the commands of
docs/complexmcp.md (one more task, all seven apps).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpgym.evaluation.complexmcp.reference import their_judge
from mcpgym.evaluation.complexmcp.run import exposure
from mcpgym.evaluation.complexmcp.suite import OpenSuite, open_suite
from mcpgym.evaluation.records.trajectory import ToolCallStep
from mcpgym.evaluation.scoring.complexmcp_rule import judge_complexmcp
from tests.evaluation.llm.test_real_model import local_model

APPS = ("LightSystem", "LightTalk", "LightShop")


@pytest.fixture(scope="module")
def suite(complexmcp_folder: Path) -> Iterator[OpenSuite]:
    with open_suite(complexmcp_folder, APPS) as opened:
        yield opened


def task(suite: OpenSuite, task_id: str):
    return next(t for t in suite.tasks if t.id == task_id)


def test_a_replayed_transcript_solves_its_task_and_never_shows_the_session(suite: OpenSuite) -> None:
    traj = suite.run(task(suite, "complexmcp_01"), "complexmcp-replay")
    s = traj.scores
    assert traj.status == "completed" and traj.metadata["outcome"] == "complexmcp"
    assert s.success is True and s.recall == s.total == 3 and s.misbehave == 0
    calls = [st for st in traj.steps if isinstance(st, ToolCallStep)]
    assert len(calls) == 11 and traj.ledger == []
    text = json.dumps([c.model_dump(mode="json") for c in calls])
    assert "session_id" not in text and all(c.tool not in ("login", "logout") for c in calls)
    # the states come from login and logout: LightSystem plus the task's apps
    assert (
        set(traj.initial_snapshot["complexmcp"])
        == set(traj.final_snapshot["complexmcp"])
        == {
            "LightSystem",
            "LightTalk",
            "LightShop",
        }
    )
    assert {"login", "logout", "_step", "_gen_past"}.isdisjoint(suite.table)
    assert all("session_id" not in r.input_schema.get("properties", {}) for r in suite.table.values())


def test_a_transcript_under_harsh_faults_meets_injected_faults_and_the_rule_agrees_with_theirs(
    suite: OpenSuite, complexmcp_folder: Path
) -> None:
    t = task(suite, "complexmcp_05")
    traj = suite.run(t, "complexmcp-replay", faults="harsh", fault_seed=3)
    assert traj.fault_profile == "harsh" and traj.ledger, "harsh injects faults into these 8 calls"
    faulted = [st for st in traj.steps if isinstance(st, ToolCallStep) and st.fault]
    assert faulted and all(st.is_error for st in faulted if st.fault != "timeout")
    before, after = traj.initial_snapshot["complexmcp"], traj.final_snapshot["complexmcp"]
    [theirs] = their_judge(complexmcp_folder, [{"before": before, "after": after, "gold": t.gold}])
    ours = judge_complexmcp(before, after, t.gold)
    assert theirs == ours.model_dump(include={"total", "recall", "misbehave"})
    assert (traj.scores.recall, traj.scores.total, traj.scores.success) == (ours.recall, ours.total, ours.solved)


def test_provide_and_plus_n_offer_the_transcripts_tools_and_seeded_distractors(suite: OpenSuite) -> None:
    t = task(suite, "complexmcp_00")
    provided, search = exposure("provide", t, suite.table)
    assert provided == ["get_uid_from_name", "mark_as_read"] and not search
    plus, _ = exposure("+5", t, suite.table)
    assert plus[:2] == provided and len(plus) == 7 and plus == exposure("+5", t, suite.table)[0]
    assert exposure("search", t, suite.table) == ([], True)
    rag, _ = exposure("rag:5", t, suite.table)
    assert len(rag) == 5 and "mark_as_read" in rag  # "Mark the messages from Sean Baker as read"
    with pytest.raises(ValueError, match="list_all, provide, \\+N"):
        exposure("some", t, suite.table)
    other = task(suite, "complexmcp_04")
    traj = suite.run(other, "complexmcp-replay", tools="+5")
    assert traj.scores.success is True  # the transcript's tools are all offered
    assert traj.metadata["complexmcp"]["tools"] == "+5"


def test_the_local_model_plays_a_task_with_its_tools_and_is_judged(suite: OpenSuite, tmp_path: Path) -> None:
    from mcpgym.evaluation.llm import LLMLimits, OpenAIAgent, RetryPolicy
    from mcpgym.evaluation.llm.local_model import MODEL_NAME

    with local_model(tmp_path / "model.log") as url:
        agent = OpenAIAgent(
            MODEL_NAME,
            base_url=url,
            temperature=0.0,
            seed=7,
            limits=LLMLimits(max_turns=1, max_output_tokens=40),
            retry=RetryPolicy(max_retries=0, request_timeout=240.0),
            name="qwen",
        )
        traj = suite.run(task(suite, "complexmcp_00"), "qwen", agent, tools="provide", timeout=400.0)
    assert traj.status in ("completed", "limit", "truncated"), traj.stop_reason
    assert traj.agent == "qwen" and traj.tokens is not None and traj.tokens.input > 0
    s = traj.scores
    assert s.success is not None and s.total == 1 and s.outcome_unavailable is None
    assert all(st.tool in ("get_uid_from_name", "mark_as_read") for st in traj.steps if isinstance(st, ToolCallStep))


class SearchThenReplay:
    """Finds its tools with ``search_tools`` (the ``search`` mode), then makes the transcript's calls."""

    name = "search-then-replay"

    async def run(self, task, tools, call, context=None):
        from mcpgym.evaluation.agents.base import AgentResult
        from mcpgym.evaluation.complexmcp.replay import transcript_calls

        self.listed = [t.name for t in tools]
        found = await call("search_tools", {"query": "mark messages as read uid from name", "k": 5})
        self.found = [t["name"] for t in found.payload.get("tools", [])]
        calls, final = transcript_calls(task.transcript)
        for tool, arguments in calls:
            await call(tool, dict(arguments))
        return AgentResult(final_message=final)


def test_search_lists_only_the_meta_tool_and_unlocks_what_it_finds(suite: OpenSuite) -> None:
    agent = SearchThenReplay()
    traj = suite.run(task(suite, "complexmcp_00"), agent.name, agent, tools="search")
    assert agent.listed == ["search_tools"]
    assert {"get_uid_from_name", "mark_as_read"} <= set(agent.found)
    assert traj.scores.success is True
    assert [s.tool for s in traj.steps if isinstance(s, ToolCallStep)] == [
        "search_tools",
        "get_uid_from_name",
        "mark_as_read",
    ]
