"""docs/baselines.md's figures are the committed baseline run's, scored by this version.

The test unpacks ``docs/baselines/baseline-qwen2.5-coder-0.5b.tar.gz``, builds its report from
the trajectories (as ``mcpgym report`` does) and checks that every row of the two tables under
"## Figures" is a row of that report, and that the counts the prose quotes are the run's.
"""

from __future__ import annotations

import re
import tarfile

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


def _paired_models():
    """scripts/paired_models.py, imported from its file (scripts/ is no package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("paired_models", ROOT / "scripts" / "paired_models.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _section(title: str) -> str:
    return DOC.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def _rows(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.startswith("| ") and not line.startswith("|---")]


@pytest.fixture(scope="module")
def runs_15b(tmp_path_factory: pytest.TempPathFactory):
    """Both unpacked run directories: (0.5B dir, 1.5B dir, the 1.5B report's markdown)."""
    from mcpgym.evaluation.report.run_report import build_report, render_markdown

    small = _unpack(TARBALL, tmp_path_factory.mktemp("b05"))
    large = _unpack(TARBALL_15B, tmp_path_factory.mktemp("b15"))
    return small, large, render_markdown(build_report(large))


def test_every_figure_row_of_the_15b_run_is_its_report(runs_15b) -> None:
    _, _, markdown = runs_15b
    report_rows = {line.strip() for line in markdown.splitlines()}
    rows = [r for r in _rows(_section("Figures: the 1.5B run")) if not r.startswith("| Agent")]
    assert len(rows) == 8, "two tables of four agents each"
    for row in rows:
        assert row in report_rows, f"docs/baselines.md row not in the 1.5B run's report: {row}"


def test_the_paired_comparison_and_the_cost_table_are_the_runs(runs_15b) -> None:
    small, large, _ = runs_15b
    paired = _paired_models()
    a, b = paired.episodes_of(small, MODEL), paired.episodes_of(large, MODEL_15B)
    table = _rows(paired.markdown(paired.compare(a, b)))
    assert _rows(_section("The two models, paired").split("\n\n| Model |", 1)[0]) == table
    cost = _rows(paired.cost_table([(MODEL, a), (MODEL_15B, b)]))
    assert all(row in _rows(_section("The two models, paired")) for row in cost)


def test_the_mcnemar_rule_by_hand() -> None:
    paired = _paired_models()
    # 5 discordant pairs, all one way: 2 * (1/2)^5 = 0.0625 (the p = 0.06)
    assert paired.mcnemar_exact(0, 5) == pytest.approx(0.0625)
    assert paired.mcnemar_exact(3, 3) == 1.0 and paired.mcnemar_exact(0, 0) == 1.0


def test_the_claim_labels_agree_as_docs_labelling_says(runs_15b) -> None:
    """docs/labelling.md, "Claims in real models' final messages": the blind labels against
    claims_done and is_non_language over the same messages of both runs."""
    import importlib.util

    small, large, _ = runs_15b
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
