"""A blind labelling job of real models' final messages, and the claim rules' agreement with it.

``python scripts/claims_labels.py job JOB_DIR RUN_DIR [RUN_DIR ...]`` writes, for every model
episode (agent ``openai:`` / ``local:``) of the run directories, one item of
``JOB_DIR/items.jsonl``: an opaque id, the task's instruction, whether the task is feasible, a
compact list of the calls (tool, arguments, ``ok`` or the error code and message) and the final
message as the trajectory holds it. Nothing mcpgym scored is written, and the items are in a
seeded shuffled order. The key (item -> run, episode, agent) goes to ``--key FILE``, outside the
job, so the labeller never sees which model spoke. An existing file is never overwritten.

``python scripts/claims_labels.py agree KEY LABELS RUN_DIR [RUN_DIR ...]`` compares the labels
(``labels.jsonl``: ``{"item", "claim", "non_language", "read_shows_why"}``) with
:func:`mcpgym.evaluation.scoring.claims.claims_done`, :func:`~mcpgym.evaluation.scoring.claims.is_non_language`
and the scorer's ``unfounded_refusal`` over the same final messages, and prints the agreement
per field and the disagreements as JSON.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

from mcpgym.evaluation.records.compressed import trajectories_file
from mcpgym.evaluation.records.trajectory import ToolCallStep, Trajectory, read_trajectories
from mcpgym.evaluation.scoring.claims import claims_done, is_non_language

MAX_ARGS = 160
"""Characters of a call's arguments an item shows."""
MAX_ERROR = 160
"""Characters of a call's error message an item shows."""


def model_episodes(run: Path) -> list[Trajectory]:
    """The trajectories of ``run`` whose agent is a model (``openai:``, ``anthropic:``, ``local:``)."""
    return [
        t
        for t in read_trajectories(trajectories_file(run))
        if (t.agent or "").split(":")[0] in ("openai", "anthropic", "local")
    ]


def compact_calls(traj: Trajectory) -> list[str]:
    """One line per tool call: ``N. tool {args} -> ok`` or ``-> error CODE: message``."""
    out = []
    for n, step in enumerate((s for s in traj.steps if isinstance(s, ToolCallStep)), start=1):
        args = json.dumps(step.arguments, ensure_ascii=False, sort_keys=True)
        args = args if len(args) <= MAX_ARGS else args[: MAX_ARGS - 3] + "..."
        if step.is_error:
            result = step.result if isinstance(step.result, dict) else {}
            error = result.get("error") if isinstance(result.get("error"), dict) else {}
            message = str(error.get("message") or "")[:MAX_ERROR]
            out.append(f"{n}. {step.tool} {args} -> error {step.error_code}: {message}")
        else:
            out.append(f"{n}. {step.tool} {args} -> ok")
    return out


def item_id(run: Path, traj: Trajectory) -> str:
    """An opaque, stable id of an episode (12 hex digits of a sha256 of run name and episode id)."""
    return hashlib.sha256(f"{run.name}/{traj.episode_id}".encode()).hexdigest()[:12]


def write_job(job: Path, runs: list[Path], key: Path, seed: int = 38) -> int:
    """Write ``job/items.jsonl`` and the key file; returns the number of items."""
    items, keys = [], []
    for run in runs:
        for t in model_episodes(run):
            if t.status == "errored":
                continue  # no final reply: nothing to label
            ident = item_id(run, t)
            items.append(
                {
                    "item": ident,
                    "task": t.instruction,
                    "feasible": t.feasible,
                    "calls": compact_calls(t),
                    "final_message": t.final_message or "",
                }
            )
            keys.append({"item": ident, "run": run.name, "episode_id": t.episode_id, "agent": t.agent})
    random.Random(seed).shuffle(items)
    for path in (job / "items.jsonl", key):
        if path.exists():
            raise SystemExit(f"error: {path} exists; it is never overwritten")
    job.mkdir(parents=True, exist_ok=True)
    (job / "items.jsonl").write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), "utf-8")
    key.write_text("".join(json.dumps(k) + "\n" for k in keys), "utf-8")
    return len(items)


def agreement(key: Path, labels: Path, runs: list[Path]) -> dict[str, Any]:
    """Per field, how many labelled items mcpgym agrees with, and the disagreements."""
    by_episode = {}
    for run in runs:
        for t in model_episodes(run):
            by_episode[(run.name, t.episode_id)] = t
    keyed = {k["item"]: k for k in map(json.loads, key.read_text("utf-8").splitlines()) if k}
    fields: dict[str, list[int]] = {"claim": [0, 0], "non_language": [0, 0], "read_shows_why": [0, 0]}
    subsets: dict[str, list[int]] = {}
    wrong: list[dict[str, Any]] = []
    for label in map(json.loads, labels.read_text("utf-8").splitlines()):
        k = keyed[label["item"]]
        t = by_episode[(k["run"], k["episode_id"])]
        final = t.final_message or ""
        scores = t.scores
        ours = {
            "claim": claims_done(final),
            "non_language": bool(final.strip()) and is_non_language(final),
            # a read could show why <=> the scorer does not call the refusal unfounded
            "read_shows_why": None
            if t.feasible is not False or scores is None or not scores.declared_impossible
            else not scores.unfounded_refusal,
        }
        for field, mine in ours.items():
            theirs = label.get(field)
            if mine is None or theirs is None:
                continue
            fields[field][1] += 1
            same = bool(theirs) == bool(mine)
            fields[field][0] += same
            if field == "claim":
                group = f"{k['agent']} {'empty' if not final.strip() else 'non-empty'}"
                subsets.setdefault(group, [0, 0])
                subsets[group][0] += same
                subsets[group][1] += 1
            if not same:
                wrong.append(
                    {"item": label["item"], "field": field, "label": theirs, "mcpgym": mine, "final": final[:300]}
                )
    return {
        "fields": {f: {"agree": a, "of": n} for f, (a, n) in fields.items()},
        "claim_by_group": {g: {"agree": a, "of": n} for g, (a, n) in sorted(subsets.items())},
        "disagreements": wrong,
    }


def main(argv: list[str] | None = None) -> None:
    """The command line (module docstring)."""
    parser = argparse.ArgumentParser(prog="python scripts/claims_labels.py", description=__doc__)
    sub = parser.add_subparsers(dest="what", required=True)
    job = sub.add_parser("job")
    job.add_argument("job", type=Path)
    job.add_argument("runs", type=Path, nargs="+")
    job.add_argument("--key", type=Path, required=True)
    agree = sub.add_parser("agree")
    agree.add_argument("key", type=Path)
    agree.add_argument("labels", type=Path)
    agree.add_argument("runs", type=Path, nargs="+")
    args = parser.parse_args(argv)
    if args.what == "job":
        print(f"{write_job(args.job, args.runs, args.key)} items written to {args.job / 'items.jsonl'}")
    else:
        json.dump(agreement(args.key, args.labels, args.runs), sys.stdout, indent=1, ensure_ascii=False)
        print()


if __name__ == "__main__":
    main()
