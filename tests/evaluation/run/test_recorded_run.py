"""The same run gives the same scores: a recorded run directory is the reference.

``tests/data/recorded_run/smoke-scripted.tar.gz`` holds a run directory recorded with
``mcpgym run --suite smoke --trials 1`` (the three scripted agents, the default fault profile,
the tasks' world seeds and ``fault_seed_for(task, 0)``): its ``trajectories.jsonl``,
``snapshots/``, ``scores.json`` and ``manifest.json``. It was first recorded before issue 27's
refactoring (enums, typed records, one error base; commit f28faa0) and stayed equal through it;
it was re-recorded once, when main's revision of the recovery and defeatism definitions (and
the new false-success fields) changed only the lines' ``scores``, and again when ``by_app`` stopped
counting every episode under ``system`` (docs/design.md §7, "Per app": only ``scores.json``'s
``by_app.system`` changed; careful's row went from 8 episodes to 1), and when issue 38 added ``unfounded_refusal`` (a new
score field and its per-agent count; no other value changed). These tests show that nothing
a run stores moves unnoticed:

- re-scoring the recorded trajectories gives the recorded ``scores.json`` and each line's
  recorded ``scores`` (fast: no server);
- a fresh run with the same options writes the same trajectories (but for the episode ids and
  the wall-clock timings), the same snapshot files, the same ``scores.json`` and the same
  manifest (but for the machine, the times, the server's port and the paths).

A deliberate change of a definition (docs/design.md §7 explains it with an example) re-records
the reference: ``python -m tests.evaluation.run.test_recorded_run --record``.
"""

from __future__ import annotations

import io
import json
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mcpgym.evaluation.cli import app
from mcpgym.evaluation.formats.score import score_files
from mcpgym.evaluation.records.compressed import read_text, trajectories_file
from tests.conftest import ROOT

REFERENCE = ROOT / "tests" / "data" / "recorded_run" / "smoke-scripted.tar.gz"
RUN_ARGS = ["run", "--suite", "smoke", "--trials", "1", "--quiet"]
STORED = ("scores.json", "manifest.json", "snapshots")  # and the trajectory file, plain or zstd
# Fields that depend on the wall clock, the machine or the random episode id, never on the run.
EPISODE_VOLATILE = ("episode_id",)
METADATA_VOLATILE = ("phase_seconds", "wall_seconds")
MANIFEST_VOLATILE = (
    "started_at",
    "finished_at",
    "command",
    "cwd",
    "out",
    "url",
    "python",
    "implementation",
    "platform",
    "run_id",  # random, names the run directory's owner (added on main after the recording)
)
SETTINGS_ADDED = ("agents", "task_ids", "progress", "user_simulator")
"""Fields of an invocation's ``settings`` (``RunConfig.recorded()``) added after the recording:
the RunConfig fields that were not in ``RunSettings.public()``; left out of the comparison."""


def _extract(dest: Path) -> Path:
    with tarfile.open(REFERENCE, "r:gz") as tar:
        tar.extractall(dest, filter="data")
    return dest


def _trajectories(run: Path) -> dict[tuple[str, str, int], dict[str, Any]]:
    """(agent, task, trial) -> the trajectory line without its volatile fields."""
    out: dict[tuple[str, str, int], dict[str, Any]] = {}
    text, _ = read_text(trajectories_file(run))
    for line in text.splitlines():
        t = json.loads(line)
        for key in EPISODE_VOLATILE:
            t.pop(key, None)
            t["scores"].pop(key, None)
        for key in METADATA_VOLATILE:
            t["metadata"].pop(key, None)
        out[(t["agent"], t["task_id"], t["trial"])] = t
    return out


def _manifest(run: Path) -> dict[str, Any]:
    m = json.loads((run / "manifest.json").read_text(encoding="utf-8"))

    def strip(d: dict[str, Any]) -> None:
        for key in MANIFEST_VOLATILE:
            d.pop(key, None)
        for v in d.values():
            if isinstance(v, dict):
                strip(v)
            elif isinstance(v, list):
                for item in v:
                    if isinstance(item, dict):
                        strip(item)

    strip(m)
    for invocation in m.get("invocations", []):
        for key in SETTINGS_ADDED:
            invocation["settings"].pop(key, None)
    return m


def _snapshots(run: Path) -> dict[str, str]:
    return {p.name: read_text(p)[0] for p in sorted((run / "snapshots").iterdir())}


def _differences(got: Any, want: Any, path: str = "") -> list[str]:
    """Paths (``.a.b[2]``) where two JSON values differ, for a readable failure."""
    if type(got) is not type(want):
        return [f"{path}: {got!r:.80} != {want!r:.80}"]
    if isinstance(got, dict):
        return [d for k in sorted(set(got) | set(want)) for d in _differences(got.get(k), want.get(k), f"{path}.{k}")]
    if isinstance(got, list):
        if len(got) != len(want):
            return [f"{path}: {len(got)} items != {len(want)}"]
        return [d for i, (a, b) in enumerate(zip(got, want, strict=True)) for d in _differences(a, b, f"{path}[{i}]")]
    return [] if got == want else [f"{path}: {got!r:.80} != {want!r:.80}"]


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _extract(tmp_path_factory.mktemp("reference"))


def test_the_reference_is_the_smoke_suite_run_by_the_scripted_agents(reference: Path) -> None:
    from mcpgym.evaluation.agents import SCRIPTED_AGENTS
    from mcpgym.evaluation.tasks import fault_seed_for, load_tasks

    trajs = _trajectories(reference)
    smoke = load_tasks("smoke")
    assert set(trajs) == {(a, t.id, 0) for a in SCRIPTED_AGENTS for t in smoke}
    for (_, task_id, trial), t in trajs.items():
        task = next(x for x in smoke if x.id == task_id)
        assert (t["world_seed"], t["fault_seed"]) == (task.seed, fault_seed_for(task, trial))


def test_rescoring_the_recorded_run_gives_its_recorded_scores(reference: Path) -> None:
    report = score_files([reference])
    assert report.problems == [], report.problems[:3]
    recorded = json.loads((reference / "scores.json").read_text(encoding="utf-8"))
    got = json.loads(json.dumps({name: a.model_dump(mode="json") for name, a in report.agents.items()}))
    assert _differences(got, recorded["agents"]) == []
    lines = {t["scores"]["task_id"] + "/" + t["agent"]: t["scores"] for t in _trajectories(reference).values()}
    for ep in report.episodes:
        scores = ep.scores.model_dump(mode="json")
        scores.pop("episode_id")
        assert _differences(scores, lines[f"{ep.scores.task_id}/{ep.scores.agent}"]) == [], ep.episode


def test_a_fresh_run_stores_what_the_recorded_run_stored(reference: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = CliRunner().invoke(app, [*RUN_ARGS, "--out", str(out)])
    assert result.exit_code == 0, result.output
    got, want = _trajectories(out), _trajectories(reference)
    assert set(got) == set(want)
    for key in want:
        assert _differences(got[key], want[key]) == [], key
    assert (
        _differences(
            json.loads((out / "scores.json").read_text(encoding="utf-8")),
            json.loads((reference / "scores.json").read_text(encoding="utf-8")),
        )
        == []
    )
    assert _differences(_manifest(out), _manifest(reference)) == []
    assert _snapshots(out) == _snapshots(reference)


def record(dest: Path = REFERENCE) -> None:
    """Run the reference run in a temporary folder and store its files in ``dest`` (tar.gz)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        result = CliRunner().invoke(app, [*RUN_ARGS, "--out", str(out)])
        if result.exit_code != 0:
            raise SystemExit(result.output)
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            for name in STORED:
                tar.add(out / name, arcname=name)
            lines = read_text(trajectories_file(out))[0].encode("utf-8")  # stored plain: readable in review
            info = tarfile.TarInfo("trajectories.jsonl")
            info.size = len(lines)
            tar.addfile(info, io.BytesIO(lines))
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(buf.getvalue())


if __name__ == "__main__":
    if sys.argv[1:] != ["--record"]:
        raise SystemExit("usage: python -m tests.evaluation.run.test_recorded_run --record")
    record()
    print(f"recorded {REFERENCE}")
