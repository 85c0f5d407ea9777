"""The ``complexmcp`` outcome rule: its counting on small states, and its agreement with
ComplexMCP's own ``judge.py`` on the apps' recorded states of all 47 tasks.

The recorded states (``tests/data/complexmcp/states.json.zst``) are the ``login`` and
``logout`` answers of the 47 transcripts replayed against the live apps, faults off and under
``harsh`` (94 episodes, 17 of them unsolved); the gold state is each task's ``gt_env`` from
the parquet. mcpgym's rule and theirs (run in the apps' environment) must give the same
``total``, ``recall`` and ``misbehave`` on every one. The file was made with
``mcpgym run --suite complexmcp --agent complexmcp-replay`` (docs/complexmcp.md) keeping each
trajectory's ``initial_snapshot`` / ``final_snapshot``; ComplexMCP is MIT-licensed
(its LICENSE file) and these are its apps' generated states.
"""

from __future__ import annotations

import json
from pathlib import Path

import zstandard

from mcpgym.evaluation.complexmcp.reference import their_judge
from mcpgym.evaluation.complexmcp.tasks import load_tasks
from mcpgym.evaluation.scoring.complexmcp_rule import EXCLUDED_KEYS, fuzzy_match, judge_complexmcp, levenshtein
from tests.conftest import ROOT

STATES = ROOT / "tests" / "data" / "complexmcp" / "states.json.zst"


def test_a_changed_leaf_is_recalled_and_an_untouched_one_changed_is_misbehaviour() -> None:
    before = {"A": {"output": {"price": 100, "count": 20, "ids": [1, 2, 3]}}}
    gold = {"A": {"output": {"price": 110, "count": 20, "ids": [1, 2]}}}
    after = {"A": {"output": {"price": 110, "count": 10, "ids": [1, 2, 3]}}}
    verdict = judge_complexmcp(before, after, gold)
    # price and ids[2] differ in gold: price recalled, ids[2] not; count kept by gold, changed
    assert (verdict.total, verdict.recall, verdict.misbehave) == (2, 1, 1)
    assert not verdict.solved and verdict.recall_rate == 0.5 and verdict.misbehave_rate == 0.5
    assert verdict.missed == ["A/output/ids/2"] and verdict.misbehaved == ["A/output/count"]


def test_generated_ids_are_skipped_but_rid_and_oid_are_compared_as_their_judge_does() -> None:
    gold = {"x": {"sid": "s2", "rid": "r2", "oid": "o2", "timestamp": "t2"}}
    before = {"x": {"sid": "s1", "rid": "r1", "oid": "o1", "timestamp": "t1"}}
    verdict = judge_complexmcp(before, before, gold)
    assert {"sid", "timestamp", "ridoid"} <= EXCLUDED_KEYS and not {"rid", "oid"} & EXCLUDED_KEYS
    assert (verdict.total, verdict.recall) == (2, 0) and sorted(verdict.missed) == ["x/oid", "x/rid"]


def test_content_matches_fuzzily_and_one_way() -> None:
    assert levenshtein("kitten", "sitting") == 3
    assert fuzzy_match("Hello Sean, see you at 5 pm", "see you at 5 pm")  # contains, >= 10 characters
    assert not fuzzy_match("see you", "Hello Sean, see you at 5 pm")
    assert fuzzy_match("  Grapes ", "grape")  # similarity 0.83
    assert not fuzzy_match(None, "") and fuzzy_match(None, None)
    verdict = judge_complexmcp(
        {"m": {"content": "hi"}}, {"m": {"content": "Hi there Sean!"}}, {"m": {"content": "hi there sean"}}
    )
    assert verdict.solved


def test_a_task_that_wants_no_change_has_completion_one_and_counts_misbehaviour_whole() -> None:
    state = {"A": {"output": {"n": 1, "m": 2}}}
    verdict = judge_complexmcp(state, {"A": {"output": {"n": 2, "m": 3}}}, state)
    assert verdict.total == 0 and verdict.recall_rate == 1.0 and verdict.misbehave == 2
    assert verdict.misbehave_rate == 2.0 and not verdict.solved


def recorded_cases(folder: Path) -> list[dict]:
    """Every recorded episode as ``{"task", "profile", "before", "after", "gold"}``."""
    gold = {t.id: t.gold for t in load_tasks(folder / "tree")}
    rows = json.loads(zstandard.ZstdDecompressor().decompress(STATES.read_bytes()))
    cases = [{**r, "gold": gold[r["task"]]} for r in rows]
    return cases


def test_the_rule_agrees_with_their_judge_on_the_recorded_states_of_all_47_tasks(complexmcp_folder: Path) -> None:
    cases = recorded_cases(complexmcp_folder)
    assert {c["task"] for c in cases} == {f"complexmcp_{i:02d}" for i in range(47)}
    assert {c["profile"] for c in cases} == {"none", "harsh"} and len(cases) == 94
    theirs = their_judge(complexmcp_folder, [{k: c[k] for k in ("before", "after", "gold")} for c in cases])
    ours = [judge_complexmcp(c["before"], c["after"], c["gold"]) for c in cases]
    differ = [
        (c["task"], c["profile"], t, o.model_dump(include={"total", "recall", "misbehave"}))
        for c, t, o in zip(cases, theirs, ours, strict=True)
        if t != o.model_dump(include={"total", "recall", "misbehave"})
    ]
    assert differ == []
    # the cases are not all alike: solved and unsolved, with and without misbehaviour
    assert any(o.solved for o in ours) and any(not o.solved for o in ours)
    assert any(o.misbehave for o in ours) and any(o.total == 0 or o.recall < o.total for o in ours)
