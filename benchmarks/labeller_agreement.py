"""Figure ``labeller_agreement``: mcpgym against what two blind labellers agree on.

``label_agreement`` compares mcpgym with one labeller; how far that figure can go depends on
how far a second careful person would agree with the first. Each episode of
``second_labels.jsonl`` (same record shape as ``labels.jsonl``, docs/labelling.md, "A second
labeller") was labelled again by a second labeller who saw neither the first labels nor
mcpgym's scores. For every (episode, field) pair labelled twice:

- the **inter-labeller agreement** is the share of pairs where the two labels are equal (the
  row's baseline: the agreement two people reach by the guide);
- the **gold label** of a pair is the two labels where they are equal; where they differ, a
  third blind labeller (``third_labels.jsonl``, labelling only those pairs) decides when it
  sides with one of them; a pair the third label does not resolve (none given, or a third
  value) has no gold label and is counted apart (``details["unresolved"]``);
- the figure is the share of gold pairs where mcpgym equals the gold label, in percent
  (target at least 98% overall,
  :data:`~mcpgym.benchmarks.label_agreement.TARGET`, and at least 95% on every field,
  :data:`~mcpgym.benchmarks.label_agreement.FIELD_TARGET`, the targets of issue 35);
- ``details`` also has mcpgym against each labeller alone and every pair where the labellers
  differ (with both values and mcpgym's), which no target judges.

A second label for an episode the first file does not label is an error (the message names
it), never a silent skip; so is a second label for a field the first labels lack.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from mcpgym.benchmarks.harness import Figure, Settings
from mcpgym.benchmarks.label_agreement import (
    FIELD_MAP,
    FIELD_TARGET,
    TARGET,
    read_labels,
    score_labelled,
    unavailable,
    under_target,
    validation_dir,
)

SECOND_LABELS = "second_labels.jsonl"
"""The second labeller's file, beside ``labels.jsonl`` in a validation folder."""
THIRD_LABELS = "third_labels.jsonl"
"""The third labeller's file (only the pairs the first two split on), optional."""


def read_second_labels(folder: Path, name: str = SECOND_LABELS) -> list[dict[str, Any]]:
    """The records of ``folder/<name>`` (``second_labels.jsonl`` or ``third_labels.jsonl``:
    ``file``, ``episode``, ``labels``; the ``format`` is the first label's).

    Raises:
        FileNotFoundError: without the file. ValueError: naming the line of a record that is
            not JSON or lacks ``file`` / ``episode`` / ``labels``.
    """
    return read_labels(folder, name, ("file", "episode", "labels"))


_NONE = object()
"""No third label for a pair."""


def _share(agree: int, pairs: int) -> float:
    return round(100 * agree / pairs, 1) if pairs else 0.0


def compare_labellers(folder: Path) -> dict[str, Any]:
    """Compare the two labellers and mcpgym on every episode labelled twice (module docstring).

    Returns:
        ``{"episodes", "inter": {"pairs", "agree", "share", "per_field"}, "consensus": {...}
        (mcpgym against the gold labels), "mcpgym_vs_first": {...}, "mcpgym_vs_second": {...},
        "labeller_disagreements": [...] (with the third label or None), "consensus_disagreements":
        [...] (mcpgym against gold), "unresolved": pairs without a gold label}``; each ``{...}`` has ``pairs``, ``agree``, ``share``
        (percent) and ``per_field`` (``{field: {"pairs", "agree", "share"}}``).

    Raises:
        ValueError: a second label of an episode or field the first labels lack, or an
            episode the file does not give.
    """
    first = {(r["file"], r["episode"]): r for r in read_labels(folder)}
    second = read_second_labels(folder)
    for rec in second:
        if (rec["file"], rec["episode"]) not in first:
            raise ValueError(f"{SECOND_LABELS}: {rec['file']} episode {rec['episode']} has no first label")
    third: dict[tuple[str, int], dict[str, Any]] = {}
    if (folder / THIRD_LABELS).is_file():
        for rec in read_second_labels(folder, THIRD_LABELS):
            third.setdefault((rec["file"], rec["episode"]), {}).update(rec["labels"])
    twice = [first[(r["file"], r["episode"])] for r in second]
    scored = score_labelled(folder, twice)
    tallies: dict[str, dict[str, list[int]]] = {
        k: defaultdict(lambda: [0, 0]) for k in ("inter", "consensus", "mcpgym_vs_first", "mcpgym_vs_second")
    }
    split, missed = [], []
    unresolved = 0
    for rec, r1 in zip(second, twice, strict=True):
        eps = scored[(r1["file"], r1["format"])]
        if not 0 <= r1["episode"] < len(eps):
            raise ValueError(f"{r1['file']}: episode {r1['episode']} is labelled but the file gives {len(eps)}")
        sc = eps[r1["episode"]]
        for field, b in rec["labels"].items():
            if field not in FIELD_MAP or field not in r1["labels"]:
                raise ValueError(
                    f"{SECOND_LABELS}: {rec['file']} episode {rec['episode']}: field {field!r} is not a first label"
                )
            a, got = r1["labels"][field], FIELD_MAP[field][1](sc)
            where = {
                "source": r1.get("source", r1["file"]),
                "file": r1["file"],
                "episode": r1["episode"],
                "field": field,
            }
            for name, same in (("inter", a == b), ("mcpgym_vs_first", got == a), ("mcpgym_vs_second", got == b)):
                tallies[name][field][0] += same
                tallies[name][field][1] += 1
            gold = a
            if a != b:
                c = third.get((r1["file"], r1["episode"]), {}).get(field, _NONE)
                split.append({**where, "first": a, "second": b, "third": None if c is _NONE else c, "mcpgym": got})
                if c is _NONE or c not in (a, b):
                    unresolved += 1
                    continue
                gold = c
            tallies["consensus"][field][0] += got == gold
            tallies["consensus"][field][1] += 1
            if got != gold:
                missed.append({**where, "labels": gold, "mcpgym": got})

    def summary(t: dict[str, list[int]]) -> dict[str, Any]:
        agree, pairs = sum(v[0] for v in t.values()), sum(v[1] for v in t.values())
        per_field = {f: {"pairs": v[1], "agree": v[0], "share": _share(v[0], v[1])} for f, v in t.items()}
        return {"pairs": pairs, "agree": agree, "share": _share(agree, pairs), "per_field": per_field}

    return {
        "episodes": len(second),
        **{name: summary(t) for name, t in tallies.items()},
        "labeller_disagreements": split,
        "consensus_disagreements": missed,
        "unresolved": unresolved,
    }


def labeller_agreement(settings: Settings) -> Figure:
    """Figure: the share of gold-labelled pairs (module docstring) where mcpgym agrees.

    The same in every mode (scoring the twice-labelled episodes takes about a second).
    Unavailable, saying why, when the validation folder has no ``second_labels.jsonl``; a
    field under :data:`FIELD_TARGET` fails the figure like a missed target
    (``details["failed_subtargets"]``).
    """
    folder = validation_dir()
    title = "behaviour scores vs two blind labellers (a third deciding where they differ)"
    if not (folder / SECOND_LABELS).is_file():
        return unavailable("labeller_agreement", title, folder, SECOND_LABELS)
    res = compare_labellers(folder)
    cons = res["consensus"]
    low = under_target(cons["per_field"])
    return Figure(
        name="labeller_agreement",
        title=title,
        value=cons["share"],
        unit="% pairs",
        target=TARGET,
        op=">=",
        baseline=f"the labellers agree with each other on {res['inter']['share']}% of pairs",
        ratio=round(cons["share"] / 100, 3),
        details={
            "episodes": res["episodes"],
            "pairs": res["inter"]["pairs"],
            "gold_pairs": cons["pairs"],
            "unresolved": res["unresolved"],
            "gold_agree": cons["agree"],
            "per_field": {f: v["share"] for f, v in cons["per_field"].items()},
            "inter_labeller": {f: v["share"] for f, v in res["inter"]["per_field"].items()},
            "inter_labeller_share": res["inter"]["share"],
            "mcpgym_vs_first": res["mcpgym_vs_first"]["share"],
            "mcpgym_vs_second": res["mcpgym_vs_second"]["share"],
            "field_target": FIELD_TARGET,
            "failed_subtargets": low,
            "labeller_disagreements": res["labeller_disagreements"],
            "consensus_disagreements": res["consensus_disagreements"],
        },
        note="" if not low else "fields under 95%: " + ", ".join(f"{f} {v}%" for f, v in low.items()),
    )


__all__ = ["SECOND_LABELS", "THIRD_LABELS", "compare_labellers", "labeller_agreement", "read_second_labels"]
