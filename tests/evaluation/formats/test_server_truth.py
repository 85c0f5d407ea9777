"""Server truth over the committed harness episodes (tests/data/harness, issue 35): every saved
transcript of a real harness, scored by ``mcpgym score``, against the server's own trajectory
of the same episode. With mcpgym's catalog every field must be equal; without it (as for an
unknown server) every harness must reach 95% on every field. The episodes were recorded by
``scripts/record_harness_episodes.py``; the live runs of the same harnesses are
tests/integrations/test_harness_server_truth.py. The comparison itself is checked on a
difference made by hand first, so that a comparison that always agrees fails here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mcpgym.evaluation.formats.server_truth import (
    FIELDS,
    NO_CATALOG_TARGET,
    agent_view,
    agreement,
    compare_episode,
    compare_tree,
    episode_folders,
    ledger_gap,
    server_scores,
    transcripts_of,
)

ROOT = Path(__file__).resolve().parents[3] / "tests" / "data" / "harness"
FOLDERS = episode_folders(ROOT)
CASES = [(f, name) for f in FOLDERS for name in transcripts_of(f)]
HARNESSES = sorted({f.parent.name for f in FOLDERS})


def _id(case: tuple[Path, str]) -> str:
    return f"{case[0].parent.name}/{case[0].name}/{Path(case[1]).stem}"


def test_the_committed_episodes_cover_four_harnesses_three_behaviours_and_both_profiles() -> None:
    metas = [json.loads((f / "episode.json").read_text(encoding="utf-8")) for f in FOLDERS]
    assert {"agents_sdk_chat", "agents_sdk_responses", "pydantic_ai", "langgraph"} <= set(HARNESSES)
    for harness in HARNESSES:
        mine = [m for m in metas if m["harness"] == harness]
        assert {m["agent"] for m in mine} == {"careful", "overconfident", "defeatist"}, harness
        assert {m["faults"] for m in mine} == {"default", "harsh"}, harness
        assert all(m["versions"] for m in mine), harness  # the package versions that recorded them


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_with_mcpgyms_catalog_every_field_equals_the_servers(case: tuple[Path, str]) -> None:
    folder, name = case
    c = compare_episode(folder, catalog=True, transcript_name=name)
    assert c.readable, c.problem
    assert not c.differences, [d.model_dump() for d in c.differences]


@pytest.mark.parametrize("harness", HARNESSES)
def test_without_a_catalog_each_harness_reaches_95_percent_on_every_field(harness: str) -> None:
    per = agreement(compare_tree(ROOT / harness, catalog=False))
    for name, a in per.items():
        low = {f: v for f, v in a.per_field.items() if v < NO_CATALOG_TARGET}
        assert not low, (name, low, a.differences)


def test_a_difference_made_by_hand_is_listed(tmp_path: Path) -> None:
    # an OpenAI chat transcript of the same episode, its one write's answer turned into an
    # error by hand: error_calls and writes must differ from the server's, both values listed
    src = next(f for f in FOLDERS if "openai_messages.json" in transcripts_of(f) and "careful-default" in f.name)
    folder = tmp_path / src.name
    shutil.copytree(src, folder)
    messages = json.loads((folder / "openai_messages.json").read_text(encoding="utf-8"))
    truth = server_scores(folder / "server_trajectory.jsonl")
    assert truth.writes == 1  # system.dark_mode: one update_setting
    write_ids = [
        tc["id"]
        for m in messages
        if m.get("role") == "assistant"
        for tc in m.get("tool_calls") or []
        if tc["function"]["name"] == "system_update_setting"
    ]
    for m in messages:
        if m.get("role") == "tool" and m.get("tool_call_id") in write_ids:
            m["content"] = json.dumps(
                {"error": {"code": "conflict", "message": "changed meanwhile", "retryable": False}}
            )
    (folder / "openai_messages.json").write_text(json.dumps(messages), encoding="utf-8")
    c = compare_episode(folder, catalog=True, transcript_name="openai_messages.json")
    diffs = {d.field: (d.transcript, d.server) for d in c.differences}
    assert diffs["writes"] == (0, 1)
    assert diffs["error_calls"] == (1, 0)
    assert set(c.agree) == set(FIELDS) and c.agree["tool_calls"] is True


def test_a_transcript_that_gives_no_episode_is_unreadable_never_a_match(tmp_path: Path) -> None:
    src = FOLDERS[0]
    folder = tmp_path / src.name
    shutil.copytree(src, folder)
    (folder / "transcript.json").write_text("# not a transcript\n", encoding="utf-8")
    c = compare_episode(folder, catalog=True)
    assert not c.readable and "0 episode(s)" in (c.problem or "")
    assert len(c.differences) == len(FIELDS) and not any(c.agree.values())


def test_the_agents_view_hides_the_ledger_and_the_ledger_gap_is_what_only_it_knows() -> None:
    # flights careful under harsh: a booking timed out and the server applied it; only the
    # ledger says so (the agent's view infers an unapplied timeout), so writes differ there
    folder = next(f for f in FOLDERS if f.name == "flights.book_cheapest_berlin_paris-careful-harsh")
    from mcpgym.evaluation.formats.score import load_file

    res, _ = load_file(folder / "server_trajectory.jsonl", "mcpgym")
    traj = res.episodes[0].trajectory
    seen = agent_view(traj)
    assert traj.ledger and seen.ledger is None
    assert any(s.fault for s in traj.tool_calls) and not any(s.fault for s in seen.tool_calls)
    gap = {d.field: (d.transcript, d.server) for d in ledger_gap(folder)}
    assert gap["writes"] == (0, 1), gap
