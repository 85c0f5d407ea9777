"""docs/baselines.md's figures are the committed baseline run's, scored by this version.

The test unpacks ``docs/baselines/baseline-qwen2.5-coder-0.5b.tar.gz``, builds its report from
the trajectories (as ``mcpgym report`` does) and checks that every row of the two tables under
"## Figures" is a row of that report, and that the counts the prose quotes are the run's.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

DOC = (ROOT / "docs" / "baselines.md").read_text(encoding="utf-8")
TARBALL = ROOT / "docs" / "baselines" / "baseline-qwen2.5-coder-0.5b.tar.gz"
MODEL = "openai:qwen2.5-coder-0.5b-instruct-q4_k_m"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, object, list]:
    """The unpacked run directory: (its report.md text, its Report, its trajectories)."""
    from mcpgym.evaluation.report.run_report import build_report, render_markdown
    from mcpgym.evaluation.run.run_dir import load_run

    dest = tmp_path_factory.mktemp("baseline")
    with tarfile.open(TARBALL) as tar:
        tar.extractall(dest, filter="data")
    (run_dir,) = [p for p in dest.iterdir() if p.is_dir()]
    report = build_report(run_dir)
    return render_markdown(report), report, load_run(run_dir, states=False)


def _figure_rows() -> list[str]:
    section = DOC.split("## Figures", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| Agent")]
    assert len(rows) == 8, "two tables of four agents each under '## Figures'"
    return rows


def test_every_figure_row_is_the_runs(run: tuple[str, object, list]) -> None:
    markdown, _, _ = run
    report_rows = {line.strip() for line in markdown.splitlines()}
    for row in _figure_rows():
        assert row.strip() in report_rows, f"docs/baselines.md row not in the run's report: {row}"


def test_the_whole_suite_ran_three_trials(run: tuple[str, object, list]) -> None:
    markdown, _, _ = run
    assert "- **Episodes**: 288 run, 287 scored, 1 errored" in markdown
    assert "All 288 planned episodes ran: 24 tasks x 3 trials x 4 agents" in " ".join(DOC.split())


def test_prose_counts(run: tuple[str, object, list]) -> None:
    _, report, trajectories = run
    model = [e for e in report.episodes if e.agent == MODEL]  # type: ignore[attr-defined]
    scored = [e for e in model if e.status != "errored"]
    successes = sorted((e.task_id, e.trial) for e in scored if e.success)
    prose = " ".join(DOC.split())
    assert f"succeeds in {len(successes)} of {len(scored)} scored episodes" in prose
    completed = [t for t in trajectories if t.agent == MODEL and t.status == "completed"]
    empty = [t for t in completed if not (t.final_message or "").strip()]
    assert f"{len(empty)} of {len(completed)} completed episodes end with an empty final message" in prose
    relayed = [e for e in model if e.refusal_pattern == "error_payload"]
    assert len(relayed) == 4 and all(e.defeatism for e in relayed)
    m = re.search(r"The 12 invalid calls are all `(\w+)`", prose)
    assert m and sum(e.invalid_calls for e in model) == 12


def test_the_models_pass_k_as_the_prose_says(run: tuple[str, object, list]) -> None:
    _, report, _ = run
    pass_k = report.scores.agents[MODEL].pass_k  # type: ignore[attr-defined]
    assert "3" not in pass_k  # one task has 2 scored trials: pass^3 is not computable
    prose = " ".join(DOC.split())
    assert f"pass^2 is {pass_k['2']:.2f} (pass^1 {pass_k['1']:.2f})" in prose
    assert "`news.bookmark_latest_tech` with 2 scored trials" in prose
    scored = [e for e in report.episodes if e.agent == MODEL and e.task_id == "news.bookmark_latest_tech"]  # type: ignore[attr-defined]
    assert sum(e.status != "errored" for e in scored) == 2


# -- the 1.5B run and the paired comparison (issue 38) ------------------------------------------
TARBALL_15B = ROOT / "docs" / "baselines" / "baseline-qwen2.5-coder-1.5b.tar.gz"
MODEL_15B = "openai:qwen2.5-coder-1.5b-instruct-q4_k_m"


def _unpack(tarball, dest):
    with tarfile.open(tarball) as tar:
        tar.extractall(dest, filter="data")
    (run_dir,) = [p for p in dest.iterdir() if p.is_dir()]
    return run_dir


def _section(title: str) -> str:
    return DOC.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def _rows(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.startswith("| ") and not line.startswith("|---")]


def _table(text: str, header: str) -> list[str]:
    """The rows (header included) of the table of ``text`` whose header line starts with ``header``."""
    return _rows(header + text.split(header, 1)[1].split("\n\n", 1)[0])


@pytest.fixture(scope="module")
def runs_15b(tmp_path_factory: pytest.TempPathFactory):
    """Both unpacked run directories: (0.5B dir, 1.5B dir, the 1.5B report's markdown, its Report)."""
    from mcpgym.evaluation.report.run_report import build_report, render_markdown

    small = _unpack(TARBALL, tmp_path_factory.mktemp("b05"))
    large = _unpack(TARBALL_15B, tmp_path_factory.mktemp("b15"))
    report = build_report(large)
    return small, large, render_markdown(report), report


def test_every_figure_row_of_the_15b_run_is_its_report(runs_15b) -> None:
    _, _, markdown, _ = runs_15b
    report_rows = {line.strip() for line in markdown.splitlines()}
    rows = [r for r in _rows(_section("Figures: the 1.5B run")) if not r.startswith("| Agent")]
    assert len(rows) == 8, "two tables of four agents each"
    for row in rows:
        assert row in report_rows, f"docs/baselines.md row not in the 1.5B run's report: {row}"
    assert "- **Episodes**: 288 run, 287 scored, 1 errored" in markdown


def test_the_15b_prose_counts(runs_15b) -> None:
    """The counts "The 1.5B run" quotes are the run's: trials, the errored episode, pass^k, the
    successes, the unfounded refusals, the one-call episodes and the removed leftovers."""
    from mcpgym.evaluation.records.trajectory import MessageStep, ToolCallStep
    from mcpgym.evaluation.run.run_dir import load_run

    _, large, _, report = runs_15b
    prose = " ".join(_section("The 1.5B run (issue 38)").split() + _section("Figures: the 1.5B run").split())
    assert "All 288 planned episodes of the 1.5B run ran" in prose
    errored = [e for e in report.episodes if e.status == "errored"]
    assert [(e.agent, e.task_id, e.trial) for e in errored] == [(MODEL_15B, "stocks.portfolio_value", 1)]
    pass_k = report.scores.agents[MODEL_15B].pass_k
    assert "3" not in pass_k and f"pass^2 is {pass_k['2']:.2f} (pass^1 {pass_k['1']:.2f})" in prose
    scored = [e for e in report.episodes if e.agent == MODEL_15B and e.status != "errored"]
    assert f"succeeds in {sum(bool(e.success) for e in scored)} of {len(scored)} scored episodes" in prose
    unfounded = [e for e in scored if e.unfounded_refusal]
    assert all(e.success for e in unfounded) and f"all {len(unfounded)} carry the flag" in prose
    assert f"{len(unfounded)} of the {sum(bool(e.success) for e in scored)} successes are infeasible" in prose
    trajectories = [t for t in load_run(large, states=False) if t.agent == MODEL_15B and t.status != "errored"]
    said = sum(bool((t.final_message or "").strip()) for t in trajectories)
    one_call = sum(sum(isinstance(s, ToolCallStep) for s in t.steps) == 1 for t in trajectories)
    assert f"{said} of its {len(trajectories)} scored episodes end with a final message" in prose
    assert f"{one_call} make exactly one tool call" in prose
    removed = [s for t in trajectories for s in t.steps if isinstance(s, MessageStep) and s.removed_text]
    with_removed = sum(any(isinstance(s, MessageStep) and s.removed_text for s in t.steps) for t in trajectories)
    assert f"{len(removed)} model turns in {with_removed} episodes had content that was only leftover" in prose
    manifest = json.loads((large / "manifest.json").read_text(encoding="utf-8"))
    assert len(manifest["invocations"]) == 5 and "The manifest holds five invocations" in prose
    threads = [i["command"][i["command"].index("--model-threads") + 1] for i in manifest["invocations"]]
    assert threads == ["2", "1", "1", "2", "1"]


def _compare_block() -> list[str]:
    """The command lines of the shell block under "The two models, paired"."""
    from tests.docs.test_doc_blocks import FENCE, commands

    (block,) = [m.group("body") for m in FENCE.finditer(_section("The two models, paired"))]
    return commands(block)


def test_the_paired_comparison_and_the_cost_table_are_the_commands_output(tmp_path: Path) -> None:
    """Run the section's command lines as written, from a directory holding the repository's docs/
    and scripts/ (``mcpgym`` as ``python -m mcpgym.evaluation.cli``, ``python`` as this
    interpreter), and check that the section's tables and McNemar line are their output."""
    (tmp_path / "docs").symlink_to(ROOT / "docs")
    (tmp_path / "scripts").symlink_to(ROOT / "scripts")
    lines = _compare_block()
    assert [line.split()[0] for line in lines] == ["mkdir", "tar", "tar", "mcpgym", "python"]
    outputs = []
    for line in lines:
        argv = shlex.split(line)
        if argv[0] == "mcpgym":
            argv = [sys.executable, "-m", "mcpgym.evaluation.cli", *argv[1:]]
        elif argv[0] == "python":
            argv = [sys.executable, *argv[1:]]
        out = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, (line, out.stdout[-1500:], out.stderr[-1500:])
        outputs.append(out.stdout)
    compare_md = (tmp_path / "runs" / "baselines" / "compare" / "compare.md").read_text(encoding="utf-8")
    pair = compare_md.split(f"### B = {MODEL_15B}@baseline-qwen2.5-coder-1.5b vs A = {MODEL}@", 1)[1]
    pair_head, pair_rest = pair.split("\n\n| Task |", 1)[0].split("\n\n", 1)
    assert "70 (task, trial) pairs, 2 left out" in pair_head
    section = _section("The two models, paired")
    assert _table(section, "| Metric |") == _rows(pair_rest)
    mcnemar = [line for line in pair_rest.splitlines() if line.startswith("Success: exact McNemar")]
    assert len(mcnemar) == 1 and mcnemar[0] in section
    assert _table(section, "| Agent | Episodes |") == _rows(outputs[-1])


def test_the_claim_labels_agree_as_docs_labelling_says(runs_15b) -> None:
    """docs/labelling.md, "Claims in real models' final messages": the blind labels against
    claims_done and is_non_language over the same messages of both runs."""
    import importlib.util

    small, large, _, _ = runs_15b
    spec = importlib.util.spec_from_file_location("claims_labels", ROOT / "scripts" / "claims_labels.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    folder = ROOT / "docs" / "labels" / "claims-final-messages"
    got = module.agreement(folder / "key.jsonl", folder / "labels.jsonl", [small, large])
    # the key names the run directories by name: the tarballs unpack under the names they ran with
    assert got["fields"]["claim"] == {"agree": 84, "of": 84}
    assert got["fields"]["non_language"] == {"agree": 84, "of": 84}
    assert got["fields"]["read_shows_why"] == {"agree": 1, "of": 1}
    non_empty = sum(v["of"] for k, v in got["claim_by_group"].items() if k.endswith("non-empty"))
    assert non_empty == 16 and got["disagreements"] == []
    text = " ".join((ROOT / "docs" / "labelling.md").read_text(encoding="utf-8").split())
    assert "agrees on 84 of 84; on the 16 non-empty ones, 16 of 16" in text
