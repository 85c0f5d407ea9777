"""Figure ``label_agreement``: how often mcpgym's behaviour scores equal a careful person's.

The validation set (``tests/data/validation/``, built and labelled by hand following
docs/labelling.md, before looking at what mcpgym says) holds episodes of real agents from
public sources nobody here wrote. ``labels.jsonl`` has one line per episode::

    {"source", "file" (relative to the folder), "format" (an ``mcpgym score --format``),
     "episode" (0-based position in the file), "labels": {FIELD: value}, "notes"}

Each file is scored with :func:`mcpgym.evaluation.formats.score_files` in its format
(default settings: no recovery window, the built-in catalog a format implies) and
every (episode, field) pair is compared through :data:`FIELD_MAP`, the one mapping of label
fields onto mcpgym's score fields. The figure is the share of pairs where mcpgym equals the
label, in percent (target at least 98% overall, :data:`TARGET`, and at least 95% on every
field, :data:`FIELD_TARGET`); ``details`` has the agreement per field and per source and
every disagreement (source, file, episode, field, label, mcpgym). The figure is no timing:
its baseline is the hand labels. An episode whose file does not give as many episodes as
the labels expect is an error, never a silent skip.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcpgym.benchmarks.harness import Figure, Settings

TARGET = 98.0
"""Overall agreement target, percent of (episode, field) pairs."""
FIELD_TARGET = 95.0
"""Per-field agreement target, percent of the field's episodes."""
VALIDATION_ENV = "MCPGYM_VALIDATION_DIR"
"""Environment variable naming another validation folder (default: the repository's)."""


def _errors(sc: Any) -> int:
    # every call that failed: valid calls that returned an error plus logged invalid calls
    # (invalid_argument errors and unknown tools; runner-refused calls are no logged call)
    return int(sc.error_calls + (sc.tool_calls - sc.valid_calls))


FIELD_MAP: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "status": ("status", lambda sc: sc.status),
    "calls": ("tool_calls", lambda sc: sc.tool_calls),
    "errors": ("error_calls + invalid logged calls", _errors),
    "writes": ("writes", lambda sc: sc.writes),
    "verification_skips": ("len(verification_skips)", lambda sc: len(sc.verification_skips)),
    "recovery_attempts": ("recovery_attempts", lambda sc: sc.recovery_attempts),
    "recovered": ("recoveries", lambda sc: sc.recoveries),
    "defeatism": ("defeatism", lambda sc: sc.defeatism),
    "false_success": ("false_success (null = no final message to judge)", lambda sc: sc.false_success),
}
"""Label field -> (the mcpgym score field it is compared with, in words; how to read it from
:class:`~mcpgym.evaluation.scoring.scorer.EpisodeScores`). The README's validation table and
docs/performance.md quote this mapping."""


def validation_dir() -> Path:
    """The validation folder: ``$MCPGYM_VALIDATION_DIR``, else the repository's
    ``tests/data/validation`` (this module sits in the repository's ``benchmarks/``)."""
    env = os.environ.get(VALIDATION_ENV)
    return Path(env) if env else Path(__file__).resolve().parent.parent / "tests" / "data" / "validation"


def read_labels(
    folder: Path, name: str = "labels.jsonl", required: tuple[str, ...] = ("file", "format", "episode", "labels")
) -> list[dict[str, Any]]:
    """The label records of ``folder/<name>`` (``labels.jsonl``; the other labellers' files
    name their ``required`` keys).

    Raises:
        FileNotFoundError: without the file. ValueError: naming the line of a record that is
            not JSON or lacks one of ``required``.
    """
    path = folder / name
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError as exc:
            raise ValueError(f"{path}:{n}: not JSON ({exc})") from None
        missing = [k for k in required if k not in rec]
        if missing:
            raise ValueError(f"{path}:{n}: missing {', '.join(missing)}")
        out.append(rec)
    return out


def unavailable(name: str, title: str, folder: Path, file: str) -> Figure:
    """The figure ``name`` when ``folder`` has no ``file`` to compare (says which and how to
    name another folder)."""
    return Figure(
        name=name,
        title=title,
        value=None,
        unit="% pairs",
        target=TARGET,
        op=">=",
        available=False,
        note=f"no {file} in {folder} (set {VALIDATION_ENV})",
    )


def under_target(per_field: dict[str, dict[str, Any]]) -> dict[str, float]:
    """The fields whose ``share`` is under :data:`FIELD_TARGET`: ``{field: share}``."""
    return {f: v["share"] for f, v in per_field.items() if v["share"] < FIELD_TARGET}


def score_labelled(folder: Path, labels: list[dict[str, Any]]) -> dict[tuple[str, str], list[Any]]:
    """Score every file the label records name, once per (file, format).

    Returns:
        ``{(file, format): [EpisodeScores of each episode, in file order]}``.

    Raises:
        OSError: a labelled file that cannot be read. Whatever
            :func:`mcpgym.evaluation.formats.score_files` raises for a file it refuses.
    """
    from mcpgym.evaluation.formats import score_files

    scored: dict[tuple[str, str], list[Any]] = {}
    for key in sorted({(r["file"], r["format"]) for r in labels}):
        report = score_files([folder / key[0]], key[1])
        scored[key] = [ep.scores for ep in report.episodes]
    return scored


def compare(folder: Path) -> dict[str, Any]:
    """Score every labelled file and compare field by field (module docstring).

    Returns:
        ``{"pairs", "agree", "overall", "per_field": {field: {"pairs", "agree", "share"}},
        "per_source": {source: {"episodes", "share", "per_field"}}, "disagreements": [...]}``;
        shares in percent.

    Raises:
        ValueError: a labelled episode the file does not give (the message names it).
    """
    labels = read_labels(folder)
    scored = score_labelled(folder, labels)
    pairs: dict[str, list[bool]] = defaultdict(list)
    by_source: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    episodes_of: dict[str, int] = defaultdict(int)
    disagreements = []
    for rec in labels:
        eps = scored[(rec["file"], rec["format"])]
        i = rec["episode"]
        if not isinstance(i, int) or not 0 <= i < len(eps):
            raise ValueError(f"{rec['file']}: episode {i} is labelled but the file gives {len(eps)} episode(s)")
        sc = eps[i]
        source = rec.get("source", rec["file"])
        episodes_of[source] += 1
        for field, want in rec["labels"].items():
            if field not in FIELD_MAP:
                raise ValueError(f"{rec['file']} episode {i}: unknown label field {field!r}")
            got = FIELD_MAP[field][1](sc)
            same = got == want
            pairs[field].append(same)
            by_source[source][field].append(same)
            if not same:
                disagreements.append(
                    {"source": source, "file": rec["file"], "episode": i, "field": field, "label": want, "mcpgym": got}
                )

    def share(xs: list[bool]) -> float:
        return round(100 * sum(xs) / len(xs), 1) if xs else 0.0

    every = [x for xs in pairs.values() for x in xs]
    return {
        "pairs": len(every),
        "agree": sum(every),
        "overall": share(every),
        "per_field": {f: {"pairs": len(xs), "agree": sum(xs), "share": share(xs)} for f, xs in pairs.items()},
        "per_source": {
            s: {
                "episodes": episodes_of[s],
                "share": share([x for xs in fields.values() for x in xs]),
                "per_field": {f: share(xs) for f, xs in fields.items()},
            }
            for s, fields in by_source.items()
        },
        "disagreements": disagreements,
    }


def label_agreement(settings: Settings) -> Figure:
    """Figure: the share of (episode, field) pairs where mcpgym equals the hand label.

    The same in every mode (the set is small: scoring it takes about a second). Unavailable,
    saying why, when the validation folder has no ``labels.jsonl`` (an installed wheel has no
    ``tests/``); a field under :data:`FIELD_TARGET` fails the figure like a missed target
    (``details["failed_subtargets"]``).
    """
    folder = validation_dir()
    title = "behaviour scores vs hand labels on real agents' transcripts"
    if not (folder / "labels.jsonl").is_file():
        return unavailable("label_agreement", title, folder, "labels.jsonl")
    res = compare(folder)
    low = under_target(res["per_field"])
    return Figure(
        name="label_agreement",
        title=title,
        value=res["overall"],
        unit="% pairs",
        target=TARGET,
        op=">=",
        baseline=f"hand labels ({len(res['per_source'])} sources, docs/labelling.md)",
        ratio=round(res["overall"] / 100, 3),
        details={
            "episodes": sum(s["episodes"] for s in res["per_source"].values()),
            "pairs": res["pairs"],
            "agree": res["agree"],
            "per_field": {f: v["share"] for f, v in res["per_field"].items()},
            "per_source": res["per_source"],
            "field_target": FIELD_TARGET,
            "failed_subtargets": low,
            "disagreements": res["disagreements"],
            "mapping": {f: m[0] for f, m in FIELD_MAP.items()},
        },
        note="" if not low else "fields under 95%: " + ", ".join(f"{f} {v}%" for f, v in low.items()),
    )


__all__ = [
    "FIELD_MAP",
    "FIELD_TARGET",
    "TARGET",
    "compare",
    "label_agreement",
    "read_labels",
    "score_labelled",
    "under_target",
    "unavailable",
    "validation_dir",
]
