"""Reports, aggregation order and the manifest, on hand-made run directories (no server)."""

from __future__ import annotations

import random
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mcpgym.evaluation.cli import app
from mcpgym.evaluation.records.manifest import (
    AgentRecord,
    Manifest,
    build_manifest,
    describe_agent,
    merge_for_resume,
    write_json_atomic,
)
from mcpgym.evaluation.records.trajectory import write_trajectories
from mcpgym.evaluation.report.html import render_html, svg_bar_chart
from mcpgym.evaluation.report.run_report import build_report, comparison_rows, render_markdown, write_report
from mcpgym.evaluation.run.runner import compute_scores, load_run
from mcpgym.evaluation.scoring.scorer import EpisodeScores
from mcpgym.tools.faults import load_profile
from tests.support.run_dirs import write_run_dir


def _episode(
    agent: str,
    task: str,
    trial: int,
    *,
    success: bool,
    level: int = 1,
    writes: int = 2,
    verified: int = 2,
    errors: int = 0,
    attempts: int = 0,
    recovered: int = 0,
    defeatism: bool = False,
) -> EpisodeScores:
    return EpisodeScores(
        episode_id=f"{agent}-{task}-{trial}",
        task_id=task,
        agent=agent,
        trial=trial,
        level=level,
        apps=["system", "shop"],
        success=success,
        recall=1 if success else 0,
        total=1,
        misbehave=0,
        writes=writes,
        verified_writes=verified,
        verification_rate=verified / writes if writes else None,
        recoverable_errors=errors,
        recovery_attempts=attempts,
        recoveries=recovered,
        defeatism=defeatism,
        defeatism_reason="no recovery attempt within 3 calls after the recoverable transient error at step 2"
        if defeatism
        else None,
        valid_calls=5,
        error_calls=errors,
        tool_calls=5,
    )


def _episodes() -> list[EpisodeScores]:
    eps = []
    for trial in range(2):
        eps.append(_episode("careful", "t.one", trial, success=True, level=1, errors=1, attempts=1, recovered=1))
        eps.append(_episode("careful", "t.two", trial, success=trial == 0, level=2, writes=3, verified=1))
        eps.append(
            _episode("<b>bold</b>", "t.one", trial, success=False, level=1, verified=0, errors=1, defeatism=True)
        )
        eps.append(_episode("<b>bold</b>", "t.two", trial, success=True, level=2, writes=0, verified=0))
    return eps


def _run_dir(tmp_path: Path) -> Path:
    return write_run_dir(
        tmp_path / "run",
        _episodes(),
        tasks=["t.one", "t.two"],
        agents=["careful"],
        fault_seeds={"t.one": [1, 2], "t.two": [3, 4]},
    )


def test_comparison_rows_show_rates_intervals_and_counts() -> None:
    scores = compute_scores(_episodes())
    header, rows = comparison_rows(scores)
    assert header[3] == "pass^2"
    careful = next(r for r in rows if r[0] == "careful")
    # 3 successes of 4: Wilson 95% interval [0.30, 0.95]; pass^2 = (1 + 0) / 2.
    assert careful[1:4] == ["4/4/0", "75% [30–95]", "0.50"]
    assert careful[4] == "60% (6/10)"  # verified writes 2+1+2+1 of 2+3+2+3
    assert careful[5] == "–"  # these hand-made scores carry no false-success verdict
    assert careful[7] == "100% (2/2)" and careful[8] == "100% (2/2)"
    assert careful[9] == "0% (0/2)"
    bold = next(r for r in rows if r[0] == "<b>bold</b>")
    assert bold[2] == "50% [15–85]" and bold[9] == "100% (2/2)" and bold[7] == "0% (0/2)"
    short_header, short_rows = comparison_rows(scores, counts=False)
    assert next(r for r in short_rows if r[0] == "careful")[4] == "60%"


def test_aggregation_does_not_depend_on_episode_order() -> None:
    eps = _episodes()
    # Rates whose float sums depend on order without the sort in compute_scores.
    for i, e in enumerate(eps):
        e.verification_rate = [0.1, 0.2, 0.7, 1 / 3][i % 4]
    expected = compute_scores(eps).model_dump_json()
    rng = random.Random(5)
    for _ in range(20):
        shuffled = eps[:]
        rng.shuffle(shuffled)
        assert compute_scores(shuffled).model_dump_json() == expected


def test_report_files_are_self_contained_and_escaped(tmp_path: Path) -> None:
    run = _run_dir(tmp_path)
    md_path, html_path = write_report(run, rescore=False)  # the synthetic scores, as stored
    md, html = md_path.read_text(encoding="utf-8"), html_path.read_text(encoding="utf-8")
    for text in (md, html):
        assert "careful" in text and "t.one" in text and "t.two" in text
    assert "| careful | 4/4/0 | 75% [30–95] | 0.50 | 60% (6/10) |" in md
    assert "## Success per level" in md and "unit" in md and "default" in md
    assert "defeatism: no recovery attempt" in md  # the notable-episodes section explains why
    # HTML: three inline SVG charts, nothing fetched, user-provided names escaped.
    assert html.count("<svg") == 3 and html.count("</svg>") == 3
    assert "&lt;b&gt;bold&lt;/b&gt;" in html and "<b>bold</b>" not in html
    for needle in ("<script src", "<link", "src=", "@import", "url("):  # one inline script: the viewer's
        assert needle not in html
    assert html.count("<script>") == 1
    hrefs = re.findall(r'href="([^"]*)"', html)
    assert hrefs and all(h.startswith("#ep-") for h in hrefs)  # links only within the page (the viewer)
    assert "http" not in html.replace("http://www.w3.org/2000/svg", "")  # only the SVG namespace
    assert "Behaviour per agent" in html and "Success per level" in html and "Success per app" in html


def test_svg_chart_is_well_formed_with_missing_values_and_intervals() -> None:
    svg = svg_bar_chart(
        "Rates & things",
        ["a", "b"],
        ["x", "y"],
        {("a", "x"): (0.5, [0.2, 0.8]), ("a", "y"): (None, None), ("b", "x"): (1.4, None)},
    )
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    bars = [r for r in root.iter(f"{ns}rect") if r.find(f"{ns}title") is not None]
    assert len(bars) == 2  # ("b", "y") is absent and ("a", "y") is n/a
    assert "n/a" in "".join(root.itertext())
    heights = sorted(float(b.get("height")) for b in bars)
    assert heights == [120.0, 240.0]  # 0.5 of the 240-px plot; 1.4 clamped to 1.0
    assert any(p.get("d", "").count("M") == 3 for p in root.iter(f"{ns}path"))  # one CI whisker
    assert root.find(f"{ns}title").text == "Rates & things"


def test_report_and_markdown_from_build_report(tmp_path: Path) -> None:
    report = build_report(_run_dir(tmp_path), rescore=False)
    assert report.agents == ["<b>bold</b>", "careful"]
    assert report.levels == ["1", "2"]
    assert report.task_matrix["t.two"]["careful"] == [1, 2, 0]
    assert [e.agent for e in report.notable()].count("<b>bold</b>") == 2  # failed + defeatist at t.one
    assert render_markdown(report).startswith("# mcpgym run report")
    assert "<!DOCTYPE html>" in render_html(report)


def test_report_command_and_its_errors(tmp_path: Path) -> None:
    run = _run_dir(tmp_path)
    result = CliRunner().invoke(app, ["report", str(run)])
    assert result.exit_code == 0, result.output
    assert (run / "report.html").exists() and (run / "report.md").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    result = CliRunner().invoke(app, ["report", str(empty)])
    assert result.exit_code == 2 and "not a run directory" in result.output


def test_load_run_ignores_and_repairs_a_torn_last_line(tmp_path: Path) -> None:
    run = _run_dir(tmp_path)
    path = run / "trajectories.jsonl"
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"episode_id": "x", "agent": "care')
    assert len(load_run(run)) == 8
    assert path.read_bytes().endswith(b'"care')  # reading alone changes nothing
    assert len(load_run(run, repair=True)) == 8
    assert path.read_bytes() == whole


def test_manifest_resume_merge_and_describe_hook() -> None:
    class Good:
        name = "llm"

        def describe(self) -> dict:
            return {"model": "m-1", "system_prompt_sha256": "ab" * 32}

    class Broken:
        name = "broken"

        def describe(self) -> dict:
            raise RuntimeError("no")

    class Plain:
        name = "plain"

    assert describe_agent(Good(), "x:m-1").model_dump() == {
        "name": "llm",
        "spec": "x:m-1",
        "describe": {"model": "m-1", "system_prompt_sha256": "ab" * 32},
    }
    assert describe_agent(Broken(), "b").describe == {"error": "describe() raised RuntimeError: no"}
    assert describe_agent(Plain(), "plain").describe is None

    def manifest(profile: str, agents: list[str], trials: int) -> Manifest:
        return build_manifest(
            suite="s",
            tasks=[],
            trials=trials,
            agents=[AgentRecord(name=a, spec=a, describe=None) for a in agents],
            profile=load_profile(profile),
            fault_seeds={},
            concurrency=2,
            episode_timeout=9.0,
            server_url="u",
            server_spawned=True,
            recovery_window=3,
            command=["mcpgym", "run"],
        )

    merged = merge_for_resume(manifest("default", ["a"], 2), manifest("default", ["a", "b"], 3))
    assert [a.name for a in merged.agents] == ["a", "b"] and merged.trials == 3
    assert len(merged.invocations) == 2 and merged.suite == "s"
    with pytest.raises(ValueError, match="cannot resume it with 'harsh'"):
        merge_for_resume(manifest("default", ["a"], 2), manifest("harsh", ["a"], 2))


def _facts(run: Path) -> dict[str, str]:
    from mcpgym.evaluation.report.run_report import run_facts

    return dict(run_facts(build_report(run, rescore=False)))


def test_a_run_killed_midway_says_how_many_episodes_it_planned(tmp_path: Path) -> None:
    """A report of a killed run used to read like a finished one with fewer episodes."""
    import json

    run = _run_dir(tmp_path)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest.update(trials=3, agents=[{"name": n, "spec": n, "describe": None} for n in ("careful", "<b>bold</b>")])
    manifest.pop("finished_at", None)
    write_json_atomic(run / "manifest.json", manifest)
    said = _facts(run)["Episodes"]
    assert said.startswith("8 of 12 planned (the run did not finish: mcpgym run --resume"), said
    manifest["finished_at"] = "2026-12-01T06:00:00Z"
    write_json_atomic(run / "manifest.json", manifest)
    assert "8 of 12 planned (the others could not be run" in _facts(run)["Episodes"]
    manifest["trials"] = 2
    write_json_atomic(run / "manifest.json", manifest)
    assert _facts(run)["Episodes"] == "8 run, 8 scored, 0 errored"


def test_a_run_without_a_manifest_does_not_claim_no_faults(tmp_path: Path) -> None:
    run = _run_dir(tmp_path)
    (run / "manifest.json").unlink()
    assert _facts(run)["Fault profile"] == "unknown (no manifest.json)"
    assert _facts(_run_dir(tmp_path / "again"))["Fault profile"].startswith("default (transient 0.07")


def test_report_of_a_run_with_no_episode_is_refused(tmp_path: Path) -> None:
    """An empty trajectories.jsonl used to give a report saying every episode succeeded."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "trajectories.jsonl").write_text("")
    result = CliRunner().invoke(app, ["report", str(run)])
    assert result.exit_code == 2, result.output
    assert "trajectories.jsonl holds no episode: nothing to report" in result.output
    assert not (run / "report.md").exists()


@pytest.mark.parametrize("width", [80, 200])
def test_the_terminal_table_says_what_every_number_is(width: int) -> None:
    """The terminal legend called valid calls "ok" (they include the errored ones: 5 valid of
    which 1 errored read as 5 ok + 1 error) and never said what pass^k is."""
    from rich.console import Console

    from mcpgym.evaluation.report.run_report import print_comparison

    console = Console(width=width, record=True, highlight=False)
    print_comparison(console, compute_scores(_episodes()))
    text = " ".join(console.export_text().split())
    assert "20/0/2" in text  # careful: 4 episodes x 5 valid calls, 2 of them errored (t.one)
    assert "pass^2: chance that all 2 trials of a task succeed" in text, text
    assert "ok/invalid" not in text
    if width == 80:
        assert "Calls: tool calls valid/invalid/error (error: valid calls that returned an error)" in text, text
    else:
        assert "Calls valid/invalid/error" in text, text


def test_both_reports_say_what_every_column_means(tmp_path: Path) -> None:
    """Impatience, blind retries (dup.), declared impossible and the calls column had no
    legend anywhere in the reports."""
    run = _run_dir(tmp_path)
    write_report(run, rescore=False)
    md = (run / "report.md").read_text()
    html = " ".join((run / "report.html").read_text().split())
    for said in (
        "Impatience: rate-limit windows in which the same call was made more than twice",
        "Blind retries: timed-out writes repeated with no read in between",
        "Declared impossible: episodes whose final message says the task cannot be done",
        "Calls: valid (well formed, reached the server; the errored ones included)",
    ):
        assert said in md and said in html, said


def test_a_lone_surrogate_in_a_line_does_not_stop_the_report(tmp_path: Path) -> None:
    """A final message holding "\\ud800" alone (valid JSON) made `mcpgym report` fail with a
    UTF-8 encoding error naming no file."""
    import json

    run = _run_dir(tmp_path)
    lines = (run / "trajectories.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["final_message"] = "I cannot do that \ud800."
    first["scores"] = None  # scored again from the line: the refusal match carries the text
    lines[0] = json.dumps(first)  # ensure_ascii: the surrogate stays a \ud800 escape
    (run / "trajectories.jsonl").write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(app, ["report", str(run)])
    assert result.exit_code == 0, result.output
    assert "\\ud800" in (run / "report.html").read_text(encoding="utf-8")


def test_report_figures_follow_from_the_steps_not_from_stored_scores(tmp_path: Path) -> None:
    """`mcpgym report` showed the scores stored in each line: an edited line (or one scored by
    an older scorer) gave figures no one could count from its steps, and that `score` did not
    show (10**30 recoveries printed as a rate of 10**31 %)."""
    import anyio

    from mcpgym.evaluation.agents import make_agent
    from mcpgym.evaluation.agents.inprocess import run_in_process
    from mcpgym.evaluation.scoring.scorer import score_episode
    from mcpgym.evaluation.scoring.tool_catalog import Catalog
    from mcpgym.evaluation.tasks import get_task

    task, catalog = get_task("system.dark_mode"), Catalog.from_apps()
    lines = []
    for trial in (0, 1):
        traj = anyio.run(lambda t=trial: run_in_process(make_agent("careful"), task, faults="none", trial=t))
        traj.scores = score_episode(traj, catalog)
        lines.append(traj)
    run = tmp_path / "run"
    write_trajectories(run / "trajectories.jsonl", lines)
    assert CliRunner().invoke(app, ["report", str(run)]).exit_code == 0
    honest = (run / "report.md").read_text()
    assert "differ from the scores stored" not in honest
    assert lines[1].scores is not None
    lines[1].scores = lines[1].scores.model_copy(update={"tool_calls": 999, "writes": -5, "recoveries": 10**30})
    write_trajectories(run / "trajectories.jsonl", lines)
    result = CliRunner().invoke(app, ["report", str(run)])
    assert result.exit_code == 0, result.output
    md = (run / "report.md").read_text()
    assert "1 episode differs from the scores stored in the trajectory lines" in md
    assert md.split("## Agents")[1] == honest.split("## Agents")[1]
