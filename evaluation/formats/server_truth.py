"""Server truth: a harness's saved transcript scored by ``mcpgym score`` against the server's
own trajectory of the same episode (issue 35, validation 1).

An *episode folder* holds what one mcpgym episode played through a real harness left behind:
``transcript.json`` (what the harness saved, the way its users save it), possibly further
transcripts of the same conversation (``openai_messages.json``: the Chat Completions messages as
an OpenAI chat client logs them), ``server_trajectory.jsonl`` (the server's call log, fault
ledger and the harness's final answer as one mcpgym trajectory line) and ``episode.json``
(``{"harness", "formats": {FILE: FORMAT}, "task", "agent", "faults", ...}``; each ``FORMAT`` is
the ``mcpgym score --format`` to read that transcript with; without ``formats``,
``{"transcript.json": "auto"}``). Each transcript is one comparison, under the harness's name
for ``transcript.*`` (``transcript.eval`` for Inspect) and ``HARNESS/STEM`` for another file (``agents_sdk_chat/openai_messages``).

The server's side is scored with mcpgym's catalog from its call log *as the agent saw it*
(:func:`agent_view`: the fault ledger, the call log's fault kinds and the virtual clock left
out, so its faults are inferred from error codes as a transcript's are): what a transcript can
at best say. What only the ledger knows (a timed-out write the server applied, a lost write)
is measured apart, as the *ledger gap* (:func:`ledger_gap`): the same call log scored with and
without its ledger. The transcript
is scored twice: with mcpgym's catalog (:func:`mcpgym.evaluation.formats.score_files`, what
``mcpgym score FILE`` does; target: every field equal) and *without* it, as a transcript of an
unknown server is (every tool classified from the transcript alone: an empty
:class:`~mcpgym.evaluation.scoring.tool_catalog.Catalog`; target: at least
:data:`NO_CATALOG_TARGET` percent per field over a harness's episodes). :data:`FIELDS` names
the compared score fields; every difference is listed (:class:`FieldDifference`). A
transcript that gives no episode, or more than one, is an unreadable comparison: every field
counts as a difference, never a silent skip.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from mcpgym.evaluation.records.scores import EpisodeScores
from mcpgym.evaluation.records.trajectory import ToolCallStep, Trajectory
from mcpgym.evaluation.scoring.tool_catalog import Catalog

NO_CATALOG_TARGET = 95.0
"""Per-field agreement target without a catalog, percent of a harness's episodes."""
CATALOG_TARGET = 100.0
"""Agreement target with mcpgym's catalog: every field of every episode equal."""


def _skips(sc: EpisodeScores) -> list[dict[str, Any]]:
    return [s.model_dump(mode="json") for s in sc.precheck_skips]


FIELDS: dict[str, Callable[[EpisodeScores], Any]] = {
    "status": lambda sc: str(sc.status),
    "tool_calls": lambda sc: sc.tool_calls,
    "valid_calls": lambda sc: sc.valid_calls,
    "invalid_calls": lambda sc: sc.invalid_calls,
    "error_calls": lambda sc: sc.error_calls,
    "writes": lambda sc: sc.writes,
    "verified_writes": lambda sc: sc.verified_writes,
    "verification_skips": lambda sc: list(sc.verification_skips),
    "precheck_writes": lambda sc: sc.precheck_writes,
    "prechecked_writes": lambda sc: sc.prechecked_writes,
    "precheck_skips": _skips,
    "blind_retries": lambda sc: sc.blind_retries,
    "duplicate_side_effects": lambda sc: sc.duplicate_side_effects,
    "recoverable_errors": lambda sc: sc.recoverable_errors,
    "recovery_attempts": lambda sc: sc.recovery_attempts,
    "recoveries": lambda sc: sc.recoveries,
    "declared_impossible": lambda sc: sc.declared_impossible,
    "defeatism": lambda sc: sc.defeatism,
    "claimed_success": lambda sc: sc.claimed_success,
    "false_success": lambda sc: sc.false_success,
    "impatience": lambda sc: sc.impatience,
}
"""Compared field -> how to read it from :class:`EpisodeScores`: the behaviour scores a
transcript carries (the outcome needs world states, which neither side holds here)."""


class FieldDifference(BaseModel):
    """One field where the transcript's score differs from the server's."""

    field: str
    transcript: Any = None
    server: Any = None


class EpisodeComparison(BaseModel):
    """One episode folder compared (module docstring).

    Attributes:
        folder: the episode folder. harness, task, agent, faults: from ``episode.json``.
        catalog: True when the transcript was scored with mcpgym's catalog.
        readable: False when the transcript gave no single episode (``problem`` says why).
        agree: field -> equal. differences: every unequal field with both values.
    """

    folder: str
    harness: str
    task: str = ""
    agent: str = ""
    faults: str = ""
    catalog: bool
    readable: bool = True
    problem: str | None = None
    agree: dict[str, bool] = Field(default_factory=dict)
    differences: list[FieldDifference] = Field(default_factory=list)


def _transcript_scores(path: Path, fmt: str, catalog: bool) -> tuple[EpisodeScores | None, str | None]:
    from mcpgym.evaluation.formats import score_files
    from mcpgym.evaluation.formats.score import load_file
    from mcpgym.evaluation.scoring.scorer import score_episode

    if catalog:
        report = score_files([path], fmt)
        episodes = [ep.scores for ep in report.episodes]
        problems = [p.message for p in report.problems]
    else:
        res, _ = load_file(path, fmt)
        empty = Catalog([])
        episodes = [score_episode(ep.trajectory, empty) for ep in res.episodes]
        problems = [p.message for p in res.problems]
    if len(episodes) != 1:
        why = "; ".join(problems)[:400] or "no problem reported"
        return None, f"the transcript gives {len(episodes)} episode(s) in format {fmt!r} (expected 1): {why}"
    return episodes[0], None


def agent_view(traj: Trajectory) -> Trajectory:
    """A copy of a server trajectory with only what the agent saw: no ledger, and no step's
    ``fault``, ``fault_inferred`` or virtual ``time``."""
    steps = [
        s.model_copy(update={"fault": None, "fault_inferred": False, "time": None})
        if isinstance(s, ToolCallStep)
        else s
        for s in traj.steps
    ]
    return traj.model_copy(update={"ledger": None, "steps": steps})


def server_scores(path: Path, *, ledger: bool = False) -> EpisodeScores:
    """The server side's scores from its trajectory line with mcpgym's catalog: as the agent
    saw the episode (:func:`agent_view`), or with ``ledger`` the ground truth of its faults.

    Raises:
        ValueError: when the file does not give exactly one trajectory.
    """
    from mcpgym.evaluation.formats.score import build_catalog, load_file
    from mcpgym.evaluation.scoring.scorer import score_episode

    res, _ = load_file(path, "mcpgym")
    if len(res.episodes) != 1:
        raise ValueError(f"{path}: expected one server trajectory, got {len(res.episodes)}")
    traj = res.episodes[0].trajectory
    catalog, _ = build_catalog()
    return score_episode(traj if ledger else agent_view(traj), catalog)


def _diff(a: EpisodeScores | None, b: EpisodeScores) -> tuple[dict[str, bool], list[FieldDifference]]:
    agree: dict[str, bool] = {}
    diffs = []
    for name, read in FIELDS.items():
        want = read(b)
        have = read(a) if a is not None else None
        agree[name] = a is not None and have == want
        if not agree[name]:
            diffs.append(FieldDifference(field=name, transcript=have, server=want))
    return agree, diffs


def ledger_gap(folder: Path) -> list[FieldDifference]:
    """The fields of an episode folder's server trajectory that differ when scored without
    its ledger (``transcript``: the agent's view) and with it (``server``): what no transcript
    can know."""
    path = folder / "server_trajectory.jsonl"
    return _diff(server_scores(path), server_scores(path, ledger=True))[1]


def transcripts_of(folder: Path) -> dict[str, str]:
    """``{transcript file name: format}`` of an episode folder (module docstring)."""
    meta = json.loads((folder / "episode.json").read_text(encoding="utf-8"))
    formats = meta.get("formats")
    return {str(k): str(v) for k, v in formats.items()} if isinstance(formats, dict) else {"transcript.json": "auto"}


def compare_episode(folder: Path, *, catalog: bool, transcript_name: str = "transcript.json") -> EpisodeComparison:
    """Compare one transcript of an episode folder with its server trajectory (module docstring).

    Raises:
        FileNotFoundError: a missing ``episode.json`` / ``server_trajectory.jsonl`` /
            ``transcript.json``. ValueError: an unreadable server trajectory.
    """
    meta = json.loads((folder / "episode.json").read_text(encoding="utf-8"))
    truth = server_scores(folder / "server_trajectory.jsonl")
    transcript = folder / transcript_name
    if not transcript.is_file():
        raise FileNotFoundError(f"{transcript}: no transcript")
    got, problem = _transcript_scores(transcript, transcripts_of(folder).get(transcript_name, "auto"), catalog)
    harness = str(meta.get("harness", folder.parent.name))
    if Path(transcript_name).stem != "transcript":
        harness = f"{harness}/{Path(transcript_name).stem}"
    out = EpisodeComparison(
        folder=str(folder),
        harness=harness,
        task=str(meta.get("task", "")),
        agent=str(meta.get("agent", "")),
        faults=str(meta.get("faults", "")),
        catalog=catalog,
        readable=got is not None,
        problem=problem,
    )
    out.agree, out.differences = _diff(got, truth)
    return out


def episode_folders(root: Path) -> list[Path]:
    """Every episode folder below ``root`` (a folder holding ``episode.json``), sorted."""
    return sorted(p.parent for p in root.rglob("episode.json"))


class HarnessAgreement(BaseModel):
    """Agreement of one harness's transcripts with the server, per field (percent)."""

    harness: str
    episodes: int
    readable: int
    per_field: dict[str, float]
    overall: float
    differences: list[dict[str, Any]] = Field(default_factory=list)


def _share(xs: Sequence[bool]) -> float:
    return round(100 * sum(xs) / len(xs), 1) if xs else 0.0


def agreement(comparisons: Sequence[EpisodeComparison]) -> dict[str, HarnessAgreement]:
    """Per harness: the share of its episodes where each field agrees, the share of every
    (episode, field) pair, and every difference (folder, field, both values)."""
    by: dict[str, list[EpisodeComparison]] = defaultdict(list)
    for c in comparisons:
        by[c.harness].append(c)
    out = {}
    for harness, cs in sorted(by.items()):
        per_field = {f: _share([c.agree.get(f, False) for c in cs]) for f in FIELDS}
        every = [c.agree.get(f, False) for c in cs for f in FIELDS]
        diffs = [
            {"folder": Path(c.folder).name, "field": d.field, "transcript": d.transcript, "server": d.server}
            | ({"problem": c.problem} if c.problem else {})
            for c in cs
            for d in c.differences
        ]
        out[harness] = HarnessAgreement(
            harness=harness,
            episodes=len(cs),
            readable=sum(c.readable for c in cs),
            per_field=per_field,
            overall=_share(every),
            differences=diffs,
        )
    return out


def compare_tree(root: Path, *, catalog: bool) -> list[EpisodeComparison]:
    """:func:`compare_episode` of every episode folder below ``root``.

    Raises:
        ValueError: when ``root`` holds no episode folder.
    """
    folders = episode_folders(root)
    if not folders:
        raise ValueError(f"{root}: no episode folder (episode.json) below it")
    return [compare_episode(f, catalog=catalog, transcript_name=name) for f in folders for name in transcripts_of(f)]


__all__ = [
    "CATALOG_TARGET",
    "FIELDS",
    "NO_CATALOG_TARGET",
    "EpisodeComparison",
    "FieldDifference",
    "HarnessAgreement",
    "agent_view",
    "agreement",
    "compare_episode",
    "compare_tree",
    "episode_folders",
    "ledger_gap",
    "server_scores",
    "transcripts_of",
]
