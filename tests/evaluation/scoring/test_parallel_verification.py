"""A read verifies only writes issued before it, never one of its own parallel batch
(newuser3 finding 12; docs/design.md §7, "Verification")."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mcpgym.evaluation.cli import app
from mcpgym.evaluation.records.trajectory import MessageStep, ToolCallStep, Trajectory
from mcpgym.evaluation.scoring.scorer import score_episode
from mcpgym.evaluation.scoring.tool_catalog import Catalog

SEND = {"name": "talk_send_message", "arguments": json.dumps({"contact_id": "c-002", "text": "hi"})}
READ = {"name": "talk_get_chat", "arguments": json.dumps({"contact_id": "c-002"})}


def _call(cid: str, fn: dict) -> dict:
    return {"id": cid, "type": "function", "function": fn}


def _parallel() -> list[dict]:
    # one assistant message asks for both; the read's answer shows no message
    return [
        {"role": "user", "content": "Say hi to c-002."},
        {"role": "assistant", "content": None, "tool_calls": [_call("a", SEND), _call("b", READ)]},
        {"role": "tool", "tool_call_id": "b", "content": json.dumps({"messages": []})},
        {"role": "tool", "tool_call_id": "a", "content": json.dumps({"message_id": "m-1"})},
        {"role": "assistant", "content": "Sent."},
    ]


def _sequential() -> list[dict]:
    # the read is asked for after the write's result came back: a read-back
    return [
        {"role": "user", "content": "Say hi to c-002."},
        {"role": "assistant", "content": None, "tool_calls": [_call("a", SEND)]},
        {"role": "tool", "tool_call_id": "a", "content": json.dumps({"message_id": "m-1"})},
        {"role": "assistant", "content": None, "tool_calls": [_call("b", READ)]},
        {"role": "tool", "tool_call_id": "b", "content": json.dumps({"messages": [{"id": "m-1", "text": "hi"}]})},
        {"role": "assistant", "content": "Sent."},
    ]


def _then_read_again() -> list[dict]:
    # the parallel pair, then a read in a later turn: that one verifies the send
    msgs = _parallel()[:-1]
    msgs += [
        {"role": "assistant", "content": None, "tool_calls": [_call("c", READ)]},
        {"role": "tool", "tool_call_id": "c", "content": json.dumps({"messages": [{"id": "m-1", "text": "hi"}]})},
        {"role": "assistant", "content": "Sent."},
    ]
    return msgs


def test_a_read_in_the_writes_parallel_batch_verifies_nothing(tmp_path: Path) -> None:
    path = tmp_path / "par.openai.jsonl"
    path.write_text(
        "".join(json.dumps(m) + "\n" for m in (_parallel(), _sequential(), _then_read_again())), encoding="utf-8"
    )
    res = CliRunner().invoke(app, ["score", str(path), "--format", "openai", "--json"])
    assert res.exit_code == 0, res.output
    got = [
        (s["writes"], s["verified_writes"], s["verification_skips"])
        for s in (e["scores"] for e in json.loads(res.stdout)["episodes"])
    ]
    # Hand count. 1: step 1 send and step 2 read were issued together: the read ran beside the
    # write, not after it: 1 write, 0 verified, skip [1]. 2: the read (step 2) was asked for
    # after the send's result: verified. 3: the batch's read does not verify, the read of the
    # next turn (step 3) does.
    assert got == [(1, 0, [1]), (1, 1, []), (1, 1, [])]


def test_anthropic_parallel_tool_use_blocks_are_one_batch(tmp_path: Path) -> None:
    """The same episode as Messages-API blocks: two ``tool_use`` blocks in one assistant
    message ran in parallel (hand count as above: 1 write, 0 verified, skip [1])."""

    def use(cid: str, fn: dict) -> dict:
        return {"type": "tool_use", "id": cid, "name": fn["name"], "input": json.loads(fn["arguments"])}

    def result(cid: str, body: dict) -> dict:
        return {"type": "tool_result", "tool_use_id": cid, "content": json.dumps(body)}

    msgs = [
        {"role": "user", "content": "Say hi to c-002."},
        {"role": "assistant", "content": [use("a", SEND), use("b", READ)]},
        {"role": "user", "content": [result("a", {"message_id": "m-1"}), result("b", {"messages": []})]},
        {"role": "assistant", "content": [{"type": "text", "text": "Sent."}]},
    ]
    path = tmp_path / "par.anthropic.json"
    path.write_text(json.dumps(msgs), encoding="utf-8")
    res = CliRunner().invoke(app, ["score", str(path), "--format", "anthropic", "--json"])
    assert res.exit_code == 0, res.output
    [ep] = json.loads(res.stdout)["episodes"]
    assert (ep["scores"]["writes"], ep["scores"]["verified_writes"], ep["scores"]["verification_skips"]) == (1, 0, [1])


def test_our_own_agents_parallel_calls_are_one_batch() -> None:
    """mcpgym's LLM agents record a message step with ``tool_calls`` before the calls it made:
    the calls after a message that made two are one batch (same rule, same hand count)."""
    cat = Catalog.from_apps(["talk"])
    send = ToolCallStep(step=1, tool="talk_send_message", arguments={"contact_id": "c-002", "text": "hi"})
    read = ToolCallStep(step=2, tool="talk_get_chat", arguments={"contact_id": "c-002"}, result={"messages": []})

    def traj(*steps: object) -> Trajectory:
        return Trajectory(episode_id="e", agent="a", steps=list(steps), final_message="Sent.", ledger=[])

    together = score_episode(traj(MessageStep(tool_calls=2), send, read), cat)
    apart = score_episode(traj(MessageStep(tool_calls=1), send, MessageStep(tool_calls=1), read), cat)
    assert (together.writes, together.verified_writes, together.verification_skips) == (1, 0, [1])
    assert (apart.writes, apart.verified_writes, apart.verification_skips) == (1, 1, [])
