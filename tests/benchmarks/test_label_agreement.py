"""The ``label_agreement`` benchmark row (benchmarks/label_agreement.py) over a small
validation folder of our own: the interface of docs/labelling.md, agreement counted by hand.
The real validation set is measured by ``python -m mcpgym.benchmarks`` (and its shape checked
in tests/benchmarks/test_benchmarks.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpgym.benchmarks.harness import Settings
from mcpgym.benchmarks.label_agreement import FIELD_MAP, VALIDATION_ENV, compare, label_agreement

FIELDS = ("status", "calls", "errors", "writes", "verification_skips", "recovery_attempts", "recovered")


def _folder(tmp_path: Path, labels: list[dict]) -> Path:
    # two openai episodes: (0) a cancel refused with a 503 inside an ordinary result, then a
    # hand-off; (1) a booking that works, never read back, and a claim
    ep0 = [
        {"role": "user", "content": "cancel ABC"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [_call("c1", "cancel_reservation", {"reservation_id": "ABC"})],
        },
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"error": "", "response": "{'status': 503}"})},
        {"role": "assistant", "content": None, "tool_calls": [_call("c2", "transfer_to_human_agents", {})]},
        {"role": "tool", "tool_call_id": "c2", "content": "Transfer successful"},
    ]
    ep1 = [
        {"role": "user", "content": "book it"},
        {"role": "assistant", "content": None, "tool_calls": [_call("c1", "book_reservation", {"flight": "HAT1"})]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"reservation_id": "XYZ"}'},
        {"role": "assistant", "content": "Booked: reservation XYZ."},
    ]
    (tmp_path / "conv.json").write_text(json.dumps([{"messages": ep0}, {"messages": ep1}]), encoding="utf-8")
    (tmp_path / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in labels), encoding="utf-8")
    return tmp_path


def _call(cid: str, name: str, args: dict) -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def _label(episode: int, **labels) -> dict:
    return {"source": "own", "file": "conv.json", "format": "openai", "episode": episode, "labels": labels, "notes": ""}


def test_agreement_counted_by_hand(tmp_path):
    # episode 0 by hand: completed (hand-off), 2 calls, 1 error (the 503), no write (the
    # cancel failed, the hand-off is no write), 0 skips, no attempt, nothing recovered, no
    # defeatism (a hand-off concedes nothing), false success null (no final message).
    # Episode 1: completed, 1 call, 0 errors, 1 write, 1 skip, claims a booking that worked.
    right0 = dict(
        status="completed",
        calls=2,
        errors=1,
        writes=0,
        verification_skips=0,
        recovery_attempts=0,
        recovered=0,
        defeatism=False,
        false_success=None,
    )
    # one wrong label on purpose: episode 1 "writes": 2
    right1 = dict(
        status="completed",
        calls=1,
        errors=0,
        writes=2,
        verification_skips=1,
        recovery_attempts=0,
        recovered=0,
        defeatism=False,
        false_success=False,
    )
    res = compare(_folder(tmp_path, [_label(0, **right0), _label(1, **right1)]))
    assert (res["pairs"], res["agree"]) == (18, 17)
    assert res["overall"] == pytest.approx(100 * 17 / 18, abs=0.05)
    assert res["per_field"]["writes"] == {"pairs": 2, "agree": 1, "share": 50.0}
    assert all(res["per_field"][f]["share"] == 100.0 for f in FIELD_MAP if f != "writes")
    assert res["disagreements"] == [
        {"source": "own", "file": "conv.json", "episode": 1, "field": "writes", "label": 2, "mcpgym": 1}
    ]
    assert res["per_source"]["own"]["episodes"] == 2


def test_the_figure_fails_a_field_under_its_target(tmp_path, monkeypatch):
    labels = [_label(0, status="completed", calls=2, writes=0), _label(1, status="completed", calls=1, writes=2)]
    monkeypatch.setenv(VALIDATION_ENV, str(_folder(tmp_path, labels)))
    fig = label_agreement(Settings.for_mode("tiny"))
    # 6 pairs, 5 agree (83.3%); writes 50% < 95%: the figure fails even were the total met
    assert (fig.value, fig.details["pairs"], fig.details["agree"]) == (83.3, 6, 5)
    assert fig.details["failed_subtargets"] == {"writes": 50.0} and fig.ok is False


def test_unknown_fields_and_missing_episodes_are_errors(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="unknown label field 'mood'"):
        compare(_folder(tmp_path, [_label(0, mood="fine")]))
    with pytest.raises(ValueError, match="episode 5 is labelled but the file gives 2 episode"):
        compare(_folder(tmp_path, [_label(5, calls=1)]))
    monkeypatch.setenv(VALIDATION_ENV, str(tmp_path / "nowhere"))
    fig = label_agreement(Settings.for_mode("tiny"))
    assert fig.available is False and fig.value is None and "no labels.jsonl" in fig.note


def test_readme_and_performance_figures_are_the_measured_ones():
    """The README's validation table and docs/performance.md's disagreements are what
    ``compare`` measures on the repository's validation set (a claim a test checks)."""
    from mcpgym.benchmarks.label_agreement import validation_dir
    from tests.conftest import ROOT

    res = compare(validation_dir())
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    fields = list(res["per_field"])
    for source, v in res["per_source"].items():
        row = f"| {source} | {v['episodes']} | {len(v['per_field'])} | " + " | ".join(
            f"{v['per_field'][f]:.1f}%" for f in fields
        )
        assert row + f" | {v['share']:.1f}% |" in readme, row
    total = sum(v["episodes"] for v in res["per_source"].values())
    assert f"| all | {total} | {len(fields)} | " in readme
    assert f"{res['overall']:.1f}% ({res['agree']}/{res['pairs']})" in readme
    perf = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    for d in res["disagreements"]:
        label = json.dumps(d["label"]) if isinstance(d["label"], bool) else d["label"]
        got = json.dumps(d["mcpgym"]) if isinstance(d["mcpgym"], bool) else d["mcpgym"]
        assert f"| {d['source']} | {d['episode']} | `{d['field']}` | {label} | {got} |" in perf, d
    assert f"**{res['overall']:.1f}%** of {res['pairs']}" in perf
