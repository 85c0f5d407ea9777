"""The hand-labelled validation set (docs/labelling.md) is well formed and its hand counts
match the transcripts where a count is mechanical.

No scorer runs here: the labels are checked against the files they describe (the episode
exists, the number of answered calls, how each episode ends) and against the guide's figures,
never against what ``mcpgym score`` says. The converter that rebuilds the excerpts
(``scripts/fetch_validation.py``) is run on small local sources.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field

from mcpgym.evaluation.records.trajectory import Trajectory
from tests.conftest import ROOT

DATA = ROOT / "tests" / "data" / "validation"
GUIDE = ROOT / "docs" / "labelling.md"
FILES = {
    "tau_bench_airline.json": ("tau-bench", "openai"),
    "toolbench_answers.json": ("toolbench", "openai"),
    "complexmcp_human.jsonl": ("complexmcp", "complexmcp"),
    "livemcpbench_claude.json": ("livemcpbench", "openai"),
    "agentdojo_none.json": ("agentdojo", "openai"),
    "enterprisebench_claude_code.json": ("enterprisebench", "anthropic"),
}
ORIGINAL = ("tau-bench", "toolbench", "complexmcp")
"""The sources of issue 24's set; LiveMCPBench and AgentDojo came with issue 35 (first contact)."""
CHAT_FILES = ("livemcpbench_claude.json", "agentdojo_none.json")
"""Committed first-contact sources converted to OpenAI chat messages (``messages``)."""
ANTHROPIC_FILES = ("enterprisebench_claude_code.json",)
"""Committed first-contact sources as Anthropic Messages (``messages`` of content blocks)."""
EB_COUNTS = (572, 30, 33)
"""EnterpriseBench's hand counts: calls, errors, writes (the first labeller's)."""
Status = Trajectory.model_fields["status"].annotation  # the trajectory's own closed set


class Labels(BaseModel):
    """The hand-labelled fields of one episode (docs/labelling.md, "The fields")."""

    model_config = ConfigDict(extra="forbid")
    status: Status  # type: ignore[valid-type]
    calls: int = Field(ge=0)
    errors: int = Field(ge=0)
    writes: int = Field(ge=0)
    verification_skips: int = Field(ge=0)
    recovery_attempts: int = Field(ge=0)
    recovered: int = Field(ge=0)
    defeatism: bool
    false_success: bool | None


class LabelRecord(BaseModel):
    """One line of labels.jsonl."""

    model_config = ConfigDict(extra="forbid")
    source: Literal["tau-bench", "toolbench", "complexmcp", "livemcpbench", "agentdojo", "enterprisebench"]
    file: str
    format: Literal["openai", "anthropic", "complexmcp", "mcp-log"]
    episode: int = Field(ge=0)
    labels: Labels
    notes: str


def load_records() -> list[LabelRecord]:
    lines = (DATA / "labels.jsonl").read_text(encoding="utf-8").splitlines()
    return [LabelRecord.model_validate_json(line) for line in lines]


def load_episodes() -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for name in FILES:
        text = (DATA / name).read_text(encoding="utf-8")
        out[name] = [json.loads(x) for x in text.splitlines()] if name.endswith(".jsonl") else json.loads(text)
    return out


def answered_calls(name: str, ep: dict) -> tuple[int, int]:
    """(calls made, calls answered) in one episode, counted mechanically from its transcript."""
    if name == "tau_bench_airline.json":
        made = sum(len(m.get("tool_calls") or []) for m in ep["traj"] if m["role"] == "assistant")
        return made, sum(1 for m in ep["traj"] if m["role"] == "tool")
    if name == "toolbench_answers.json":  # the closing Finish is the end marker, never answered
        made = sum(1 for m in ep["messages"] if m.get("function_call") and m["function_call"]["name"] != "Finish")
        return made, sum(1 for m in ep["messages"] if m["role"] == "function")
    if name in CHAT_FILES:
        made = sum(len(m.get("tool_calls") or []) for m in ep["messages"] if m["role"] == "assistant")
        return made, sum(1 for m in ep["messages"] if m["role"] == "tool")
    if name in ANTHROPIC_FILES:
        blocks = [b for m in ep["messages"] for b in m["content"]]
        return sum(b["type"] == "tool_use" for b in blocks), sum(b["type"] == "tool_result" for b in blocks)
    blocks = len(re.findall(r"</tool>\s*<response>", ep["output"]))
    return blocks, sum(sum(v.values()) for v in ep["tool_cnt"].values())  # ComplexMCP's own count


def ending(name: str, ep: dict) -> str:
    """How a transcript ends: 'handoff', 'finish', 'give_up', 'final', 'cut' or 'failed' (the run
    record says the harness failed: AgentDojo's top-level ``error``)."""
    if name == "tau_bench_airline.json":
        last = ep["traj"][-1]
        if last["role"] == "tool":
            return "handoff" if last.get("name") == "transfer_to_human_agents" else "cut"
        return "final" if last["role"] == "user" and "###STOP###" in (last.get("content") or "") else "cut"
    if name == "toolbench_answers.json":
        call = ep["messages"][-1].get("function_call") or {}
        if call.get("name") != "Finish":
            return "cut"
        return "give_up" if "give_up_and_restart" in call.get("arguments", "") else "finish"
    if name in CHAT_FILES:
        if ep.get("error"):
            return "failed"
        last = ep["messages"][-1]
        return "final" if last["role"] == "assistant" and not last.get("tool_calls") else "cut"
    if name in ANTHROPIC_FILES:
        if ep.get("failure_class"):
            return "failed"
        last = ep["messages"][-1]
        answered = last["role"] == "assistant" and all(b["type"] == "text" for b in last["content"])
        return "final" if answered else "cut"
    return "final" if ep["output"].rstrip().endswith("[END]") else "cut"


def test_every_label_names_an_episode_of_its_file_once_and_is_consistent():
    records, episodes = load_records(), load_episodes()
    keys = [(r.file, r.episode) for r in records]
    assert len(keys) == len(set(keys)), "an episode is labelled twice"
    for r in records:
        assert (r.source, r.format) == FILES[r.file], r
        assert r.episode < len(episodes[r.file]), r
        lab = r.labels
        assert lab.errors <= lab.calls and lab.writes <= lab.calls, r
        assert lab.verification_skips <= lab.writes, r
        assert lab.recovery_attempts <= lab.errors and lab.recovered <= lab.errors, r
        assert not (lab.defeatism and lab.false_success), r
    # Every episode of the committed excerpts is labelled (the excerpts hold nothing else).
    assert sorted(keys) == sorted((f, i) for f, eps in episodes.items() for i in range(len(eps)))


def test_the_hand_counted_calls_equal_the_answered_calls_of_each_transcript():
    episodes = load_episodes()
    for r in load_records():
        made, answered = answered_calls(r.file, episodes[r.file][r.episode])
        assert r.labels.calls == made == answered, (r.file, r.episode, r.labels.calls, made, answered)


def test_status_and_final_message_labels_follow_how_the_transcript_ends():
    """completed = the agent ended it (final message, hand-off, Finish); limit = cut; no final
    message to judge (hand-off, cut) = false_success null."""
    episodes = load_episodes()
    for r in load_records():
        end = ending(r.file, episodes[r.file][r.episode])
        want = {"cut": "limit", "failed": "errored"}.get(end, "completed")
        assert r.labels.status == want, (r.file, r.episode, end)
        if end in ("handoff", "cut", "failed"):
            assert r.labels.false_success is None and not r.labels.defeatism, (r.file, r.episode)
        if end == "give_up":
            assert r.labels.false_success is False, (r.file, r.episode)


def test_the_guide_states_the_figures_of_the_set():
    every, episodes = load_records(), load_episodes()
    guide = GUIDE.read_text(encoding="utf-8")
    per_source = {s: sum(1 for r in every if r.source == s) for s, _ in FILES.values()}
    assert per_source == {
        "tau-bench": 25, "toolbench": 21, "complexmcp": 16, "livemcpbench": 20, "agentdojo": 22, "enterprisebench": 20,
    }  # fmt: skip
    eb = [r for r in every if r.source == "enterprisebench"]
    eb_counts = (sum(r.labels.calls for r in eb), sum(r.labels.errors for r in eb), sum(r.labels.writes for r in eb))
    assert eb_counts == EB_COUNTS
    assert "EnterpriseBench's 20 episodes hold {} calls, {} errors and {} writes".format(*EB_COUNTS) in " ".join(
        guide.split()
    )
    dojo = [r for r in every if r.source == "agentdojo"]
    assert (
        sum(r.labels.calls for r in dojo),
        sum(r.labels.errors for r in dojo),
        sum(r.labels.writes for r in dojo),
    ) == (
        104,
        42,
        17,
    )
    assert "AgentDojo's 22 episodes hold 104 calls, 42 errors and 17 writes" in " ".join(guide.split())
    new = [r for r in every if r.source == "livemcpbench"]
    assert (sum(r.labels.calls for r in new), sum(r.labels.errors for r in new), sum(r.labels.writes for r in new)) == (
        188,
        35,
        26,
    )
    assert "LiveMCPBench's 20 episodes hold 188 calls, 35 errors and 26 writes" in " ".join(guide.split())
    records = [r for r in every if r.source in ORIGINAL]
    ends = [ending(r.file, episodes[r.file][r.episode]) for r in records]
    figures = {
        "episodes": len(records),
        "with an error": sum(1 for r in records if r.labels.errors),
        "hand-offs": ends.count("handoff"),
        "cut": sum(1 for r in records if r.labels.status == "limit"),
        "give-ups": ends.count("give_up"),
        "calls": sum(r.labels.calls for r in records),
        "errors": sum(r.labels.errors for r in records),
        "writes": sum(r.labels.writes for r in records),
    }
    assert figures == {
        "episodes": 62,
        "with an error": 47,
        "hand-offs": 8,
        "cut": 7,
        "give-ups": 9,
        "calls": 498,
        "errors": 136,
        "writes": 75,
    }
    sentence = " ".join(guide.split())
    assert (
        "of the 62, 47 meet at least one error, 8 end with a hand-off, 7 were cut by a harness and 9 give up"
        in sentence
    )
    assert "498 calls, 136 errors and 75 writes" in sentence
    # The guide's example record is episode 0's labels, as labelled.
    example = json.loads(re.search(r"```json\n(.*?)```", guide, re.S).group(1))
    first = next(r for r in records if (r.file, r.episode) == (example["file"], example["episode"]))
    assert example["labels"] == first.labels.model_dump()


def _fetch_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fetch_validation", ROOT / "scripts" / "fetch_validation.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_converter_rebuilds_trimmed_excerpts_from_local_sources_and_never_overwrites(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    fv = _fetch_module()
    src = tmp_path / "src"
    tau = src / "sierra-research+tau-bench" / "historical_trajectories"
    tau.mkdir(parents=True)
    long = "x" * (fv.TRIM + 10)
    traj = [
        {"role": "system", "content": "policy"},
        {"role": "user", "content": "hi"},
        {"role": "tool", "content": long},
    ]
    (tau / "gpt-4o-airline.json").write_text(
        json.dumps([{"task_id": 7, "trial": 1, "reward": 0.0, "info": {}, "traj": traj}])
    )
    answer = src / "OpenBMB+ToolBench" / "data_example" / "answer" / "G1_answer"
    answer.mkdir(parents=True)
    tree = {
        "node_type": "Action Input",
        "children": [
            {"node_type": "Thought", "description": "look it up", "children": [
                {"node_type": "Action", "description": "lookup", "children": [
                    {"node_type": "Action Input", "description": "{}", "observation": '{"error": "Timeout"}', "children": [
                        {"node_type": "Action", "description": "Finish", "children": [
                            {"node_type": "Action Input", "description": '{"return_type": "give_up_and_restart"}',
                             "observation": "gave up", "children": []}]}]}]}]},
        ],
    }  # fmt: skip
    chain = [{"role": "system", "content": "s"}, {"role": "user", "content": "q"}]
    doc = {"answer_generation": {"query": "q", "train_messages": [chain]}, "tree": {"tree": tree}}
    (answer / "1_x.json").write_text(json.dumps(doc))
    monkeypatch.setattr(fv, "TAU_SELECTION", [0])
    monkeypatch.setattr(fv, "TOOLBENCH_SELECTION", [("G1_answer/1_x.json", "final"), ("G1_answer/1_x.json", "tree:0")])
    source = fv.Source(src)

    tau_out = fv.convert_tau(source, everything=False)
    assert [m["content"] for m in tau_out[0]["traj"]][2] == "x" * fv.TRIM + "[... 10 characters trimmed]"
    assert "info" not in tau_out[0] and tau_out[0]["source_index"] == 0
    tb_out = fv.convert_toolbench(source, everything=False)
    assert tb_out[0]["messages"] == chain
    assert tb_out[1]["messages"][2:] == [
        {"role": "assistant", "content": "look it up", "function_call": {"name": "lookup", "arguments": "{}"}},
        {"role": "function", "name": "lookup", "content": '{"error": "Timeout"}'},
        {"role": "assistant", "content": None,
         "function_call": {"name": "Finish", "arguments": '{"return_type": "give_up_and_restart"}'}},
    ]  # fmt: skip

    out = tmp_path / "out"
    out.mkdir()
    (out / "toolbench_answers.json").write_text("mine")
    assert fv.main([str(out), "--source-dir", str(src)]) == 2
    assert (out / "toolbench_answers.json").read_text() == "mine"


def test_the_complexmcp_converter_decodes_the_parquet_transcripts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    pa = pytest.importorskip("pyarrow", reason="ComplexMCP's data.parquet needs pyarrow (the dev extra installs it)")
    import pyarrow.parquet as pq

    fv = _fetch_module()
    data = tmp_path / "AIDC-AI+complex-mcp" / "benchmark" / "data"
    data.mkdir(parents=True)
    text = 'Hi\n<tool>\n{"name": "now", "arguments": {}}\n</tool>\n<response>\n{"status":"ok","output":"x"}\n</response>\nDone [END]'
    table = pa.table(
        {
            "seed": [42],
            "query": ["q"],
            "apps": ['["LightTalk"]'],
            "level": [1],
            "output": [json.dumps(text)],
            "tool_cnt": ['{"now": {"ok": 1}}'],
            "gt_env": ["{}"],
        }
    )
    pq.write_table(table, data / "data.parquet")
    monkeypatch.setattr(fv, "CMCP_SELECTION", [0])
    rows = fv.convert_complexmcp(fv.Source(tmp_path), everything=False)
    assert rows == [
        {"source_index": 0, "seed": 42, "query": "q", "apps": ["LightTalk"], "level": 1, "tool_cnt": {"now": {"ok": 1}},
         "output": text}
    ]  # fmt: skip


FIRST_CONTACT = DATA / "first_contact" / "labels.jsonl"


class FirstContactRecord(BaseModel):
    """One line of first_contact/labels.jsonl: a label of a source whose transcripts are
    rebuilt by scripts/fetch_first_contact.py (no licence to commit them)."""

    model_config = ConfigDict(extra="forbid")
    source: Literal["mcpmark-community", "toolathlon", "mcp-universe-salesforce", "skill-vs-mcp", "claude-code-github"]
    file: str
    format: Literal["auto", "openai", "claude-code"]
    episode: int
    path: str
    repo: str | None = None  # a source whose episodes come from several repositories names each one's
    commit: str | None = Field(default=None, pattern=r"^[0-9a-f]{40}$")
    labels: Labels
    notes: str


def test_the_first_contact_labels_are_well_formed_and_rebuild_from_local_sources(tmp_path: Path) -> None:
    records = [
        FirstContactRecord.model_validate_json(x) for x in FIRST_CONTACT.read_text(encoding="utf-8").splitlines()
    ]
    sources = ("mcpmark-community", "toolathlon", "mcp-universe-salesforce", "skill-vs-mcp", "claude-code-github")
    assert {s: sum(r.source == s for r in records) for s in sources} == {
        "mcpmark-community": 22,
        "toolathlon": 20,
        "mcp-universe-salesforce": 21,
        "skill-vs-mcp": 21,
        "claude-code-github": 12,
    }
    assert all((r.repo is None) == (r.commit is None) == (r.source != "claude-code-github") for r in records)
    assert len({(r.file, r.episode) for r in records}) == len(records)
    for r in records:
        lab = r.labels
        assert lab.errors <= lab.calls and lab.verification_skips <= lab.writes, r.file
        assert not (lab.defeatism and lab.false_success), r.file
    spec = importlib.util.spec_from_file_location("fetch_first_contact", ROOT / "scripts" / "fetch_first_contact.py")
    assert spec and spec.loader
    fc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fc)
    src = tmp_path / "src"
    for r in records:
        repo = (r.repo or fc.SOURCES[r.source][0]).replace("/", "+")
        (src / repo / r.path).parent.mkdir(parents=True, exist_ok=True)
        (src / repo / r.path).write_text(json.dumps({"file": r.file}), encoding="utf-8")
    # MCP-Universe's trajectory files, converted into one file of chat conversations: one
    # trajectory per file, a tool step (Python-repr arguments, a long result) and a thought
    paths, _ = fc.CONVERTED["mcp-universe-salesforce"]
    for n, path in enumerate(paths):
        step = {"tool_name": "list_services", "action_input": "{'name': 'sdb'}", "llm_response": "look",
                "tool_result": "x" * 2500}  # fmt: skip
        traj = {"trajectory_id": f"t{n}", "question": "q", "answer": "a", "steps": [step, {"llm_response": "done"}]}
        (src / "mcp-universe+mcp-universe.github.io" / path).write_text(json.dumps({"trajectories": [traj]}))
    # skill-vs-mcp's opencode event logs and task files: a step with text and two calls (one
    # failed, one long result), a run-level error (left out), a last step that ends with nothing
    opencode = src / "aniruddha-chaudhari+skill-vs-mcp-benchmarks"
    for path in fc.CONVERTED["skill-vs-mcp"][0]:
        (opencode / path).parent.mkdir(parents=True, exist_ok=True)
        if path.endswith(".json"):
            ids = {"_".join(p.split("/")[-2].split("_")[:3]) for p in fc.OPENCODE_RUNS}
            tasks = [{"id": i, "prompt": f"do {i}", "outputFiles": ["out.png"]} for i in sorted(ids)]
            (opencode / path).write_text(json.dumps({"tasks": tasks}), encoding="utf-8")
            continue
        events = [
            {"type": "text", "part": {"messageID": "m1", "text": "Looking."}},
            {"type": "tool_use", "part": {"messageID": "m1", "tool": "bash", "state": {
                "status": "error", "input": {"command": "gh api x"}, "error": "Error: gh not found"}}},
            {"type": "tool_use", "part": {"messageID": "m1", "tool": "read", "state": {
                "status": "completed", "input": {"filePath": "a.md"}, "output": "y" * 2500}}},
            {"type": "error", "error": {"name": "APIError", "data": {"message": "Bad Request"}}},
            {"type": "step_finish", "part": {"messageID": "m2", "reason": "stop"}},
        ]  # fmt: skip
        (opencode / path).write_text("\n".join(json.dumps(e) for e in events) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    assert fc.main([str(out), "--source-dir", str(src)]) == 0
    runs = json.loads((out / "skill_vs_mcp_opencode.json").read_text(encoding="utf-8"))
    assert [r["id"] for r in runs] == list(fc.OPENCODE_RUNS)
    msgs = runs[0]["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "tool", "tool", "assistant"]
    assert msgs[0]["content"].startswith("do EVAL_HN_001") and msgs[0]["content"].endswith("  - out.png")
    assert [c["id"] for c in msgs[1]["tool_calls"]] == ["c1", "c2"] and msgs[1]["content"] == "Looking."
    assert (msgs[2]["content"], len(msgs[3]["content"])) == ("Error: gh not found", 2000)
    assert msgs[4] == {"role": "assistant", "content": ""}
    assert json.loads((out / records[3].file).read_text())["file"] == records[3].file
    written = [json.loads(x) for x in (out / "labels.jsonl").read_text().splitlines()]
    assert [w["file"] for w in written] == [r.file for r in records]
    assert not any({"path", "repo", "commit"} & set(w) for w in written)
    conv = json.loads((out / "mcp_universe_salesforce.json").read_text())
    assert [c["source_file"] for c in conv] == list(paths)
    msgs = conv[0]["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "tool", "assistant", "assistant"]
    assert msgs[1]["tool_calls"][0]["function"] == {"name": "list_services", "arguments": '{"name": "sdb"}'}
    assert msgs[2]["content"].endswith(" ...[trimmed 500 chars]") and len(msgs[2]["content"]) < 2100
    assert (msgs[3]["content"], msgs[4]["content"]) == ("done", "a")
    assert fc.main([str(out), "--source-dir", str(src)]) == 2  # never overwrites


def test_the_enterprisebench_converter_merges_claude_code_lines_and_keeps_the_run_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    fv = _fetch_module()
    run = "results/r1"
    base = {"sessionId": "s", "cwd": "/workspace", "isSidechain": False}
    long = "y" * (fv.EB_TRIM + 5)
    lines = [
        {"type": "queue-operation", "sessionId": "s"},
        {**base, "type": "user", "message": {"role": "user", "content": "task"}},
        {**base, "type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [{"type": "thinking"}]}},
        {**base, "type": "assistant",
         "message": {"id": "m1", "role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]}},
        {**base, "type": "user",
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": long, "is_error": True}]}},
        {**base, "type": "assistant", "message": {"id": "m2", "role": "assistant", "content": [{"type": "text", "text": "done"}]}},
    ]  # fmt: skip
    folder = tmp_path / "sjarmak+EnterpriseBench" / run
    folder.mkdir(parents=True)
    (folder / "agent_trace.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    (folder / "results.json").write_text(json.dumps({"phase": "complete", "error": "", "score": 1}), encoding="utf-8")
    monkeypatch.setattr(fv, "EB_RUNS", [run])
    (conv,) = fv.convert_enterprisebench(fv.Source(tmp_path), False)
    assert conv["cwd"] == "/workspace" and conv["phase"] == "complete" and "error" not in conv and "score" not in conv
    assert [m["role"] for m in conv["messages"]] == ["user", "assistant", "user", "assistant"]
    assert conv["messages"][1]["content"] == [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]
    result = conv["messages"][2]["content"][0]
    assert result["is_error"] is True and result["content"] == "y" * fv.EB_TRIM + " ...[trimmed 5 chars]"
