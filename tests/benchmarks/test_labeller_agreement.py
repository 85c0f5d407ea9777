"""The ``labeller_agreement`` benchmark row (benchmarks/labeller_agreement.py) over a small
validation folder of our own (the two episodes of test_label_agreement.py), counted by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpgym.benchmarks.harness import Settings
from mcpgym.benchmarks.label_agreement import FIELD_MAP, VALIDATION_ENV
from mcpgym.benchmarks.labeller_agreement import SECOND_LABELS, THIRD_LABELS, compare_labellers, labeller_agreement
from tests.benchmarks.test_label_agreement import _folder, _label

# what mcpgym says of the two episodes (counted by hand in test_label_agreement.py), field by
# field in FIELD_MAP's order
EP0 = dict(zip(FIELD_MAP, ("completed", 2, 1, 0, 0, 0, 0, False, None), strict=True))
EP1 = dict(zip(FIELD_MAP, ("completed", 1, 0, 1, 1, 0, 0, False, False), strict=True))


def _second(folder: Path, records: list[dict], name: str = SECOND_LABELS) -> None:
    (folder / name).write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def test_consensus_inter_labeller_and_each_labeller_counted_by_hand(tmp_path):
    # first labeller: episode 1 writes 2 (wrong); second: episode 1 writes 1 (right) and
    # episode 0 recovery_attempts 1 (wrong). So the labellers split on 2 of 18 pairs; on the
    # 16 consensus pairs mcpgym agrees on all 16. Both labellers share one wrong label on
    # purpose too: episode 0 defeatism True, so consensus is 15 of 16.
    first0, first1 = dict(EP0, defeatism=True), dict(EP1, writes=2)
    second0, second1 = dict(EP0, defeatism=True, recovery_attempts=1), dict(EP1)
    folder = _folder(tmp_path, [_label(0, **first0), _label(1, **first1)])
    _second(
        folder,
        [
            {"file": "conv.json", "episode": 0, "labels": second0},
            {"file": "conv.json", "episode": 1, "labels": second1},
        ],
    )
    res = compare_labellers(folder)
    assert res["episodes"] == 2
    assert (res["inter"]["pairs"], res["inter"]["agree"]) == (18, 16)
    assert (res["consensus"]["pairs"], res["consensus"]["agree"]) == (16, 15)
    assert res["consensus"]["per_field"]["defeatism"] == {"pairs": 2, "agree": 1, "share": 50.0}
    assert res["mcpgym_vs_first"]["agree"] == 16 and res["mcpgym_vs_second"]["agree"] == 16
    split = {(d["episode"], d["field"]): (d["first"], d["second"], d["mcpgym"]) for d in res["labeller_disagreements"]}
    assert split == {(0, "recovery_attempts"): (0, 1, 0), (1, "writes"): (2, 1, 1)}
    assert [(d["episode"], d["field"]) for d in res["consensus_disagreements"]] == [(0, "defeatism")]


def test_a_third_label_decides_a_split_pair_only_when_it_sides_with_one(tmp_path):
    # the two labellers split on episode 1 writes (2 / 1) and episode 0 recovery_attempts
    # (0 / 1); the third says writes 2 (sides with the first: gold 2, mcpgym 1 is wrong) and
    # recovery_attempts 5 (sides with neither: unresolved, out of the figure)
    folder = _folder(tmp_path, [_label(0, **EP0), _label(1, **dict(EP1, writes=2))])
    _second(
        folder,
        [
            {"file": "conv.json", "episode": 0, "labels": dict(EP0, recovery_attempts=1)},
            {"file": "conv.json", "episode": 1, "labels": EP1},
        ],
    )
    _second(
        folder,
        [
            {"file": "conv.json", "episode": 1, "labels": {"writes": 2}},
            {"file": "conv.json", "episode": 0, "labels": {"recovery_attempts": 5}},
        ],
        THIRD_LABELS,
    )
    res = compare_labellers(folder)
    assert res["unresolved"] == 1
    assert (res["consensus"]["pairs"], res["consensus"]["agree"]) == (17, 16)
    assert res["consensus"]["per_field"]["writes"] == {"pairs": 2, "agree": 1, "share": 50.0}
    assert [(d["episode"], d["field"], d["labels"], d["mcpgym"]) for d in res["consensus_disagreements"]] == [
        (1, "writes", 2, 1)
    ]
    thirds = {(d["episode"], d["field"]): d["third"] for d in res["labeller_disagreements"]}
    assert thirds == {(0, "recovery_attempts"): 5, (1, "writes"): 2}


def test_row_reads_the_consensus_and_fails_a_field_under_target(tmp_path, monkeypatch):
    folder = _folder(tmp_path, [_label(0, **dict(EP0, defeatism=True)), _label(1, **EP1)])
    _second(folder, [{"file": "conv.json", "episode": 0, "labels": dict(EP0, defeatism=True)}])
    monkeypatch.setenv(VALIDATION_ENV, str(folder))
    fig = labeller_agreement(Settings.for_mode("tiny"))
    assert fig.available and fig.value == pytest.approx(100 * 8 / 9, abs=0.05)
    assert fig.details["failed_subtargets"] == {"defeatism": 0.0}
    assert fig.details["inter_labeller_share"] == 100.0 and "100.0%" in fig.baseline


def test_row_unavailable_without_second_labels(tmp_path, monkeypatch):
    folder = _folder(tmp_path, [_label(0, **EP0)])
    monkeypatch.setenv(VALIDATION_ENV, str(folder))
    fig = labeller_agreement(Settings.for_mode("tiny"))
    assert not fig.available and fig.value is None and SECOND_LABELS in fig.note


@pytest.mark.parametrize(
    ("record", "said"),
    [
        ({"file": "conv.json", "episode": 1, "labels": {"calls": 1}}, "has no first label"),
        ({"file": "conv.json", "episode": 0, "labels": {"calls": 2, "vibes": 3}}, "'vibes' is not a first label"),
        ({"file": "conv.json", "labels": {"calls": 2}}, "missing episode"),
    ],
)
def test_bad_second_labels_are_errors_naming_them(tmp_path, record, said):
    folder = _folder(tmp_path, [_label(0, **EP0)])
    _second(folder, [record])
    with pytest.raises(ValueError, match=said):
        compare_labellers(folder)


def test_the_committed_labels_and_the_quoted_figures_are_the_measured_ones():
    """The committed second and third labels name first-labelled episodes with every field,
    and docs/labelling.md / docs/performance.md quote what ``compare_labellers`` measures on
    the committed folder (a claim a test checks)."""
    from mcpgym.benchmarks.label_agreement import validation_dir
    from tests.conftest import ROOT

    folder = validation_dir()
    res = compare_labellers(folder)
    assert res["episodes"] == 62 and res["inter"]["pairs"] == 62 * len(FIELD_MAP)
    cons, inter = res["consensus"], res["inter"]
    quoted = f"**{cons['share']:.1f}%** ({cons['agree']} of {cons['pairs']}; labellers {inter['share']:.1f}%)"
    assert quoted in (ROOT / "docs" / "labelling.md").read_text(encoding="utf-8")
    perf = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    assert f"{cons['share']:.1f}% of the gold pairs ({cons['agree']} of {cons['pairs']})" in perf
    assert f"agree with each other on {inter['share']:.1f}%" in perf
