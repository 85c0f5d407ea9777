"""The report of a run with condition axes: every figure of the condition curves is checked
against a hand count over the run's own episodes; the HTML draws one inline SVG panel per
(metric, value of the other axis) with those figures and fetches nothing; report.md and the
terminal print the same tables; a figure that cannot be computed is a gap, never 0; compare,
the CSV and the leaderboard keep agents and conditions apart."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mcpgym.evaluation.agents import SCRIPTED_AGENTS
from mcpgym.evaluation.cli.app import app
from mcpgym.evaluation.records.condition import EpisodeCondition, condition_key
from mcpgym.evaluation.records.statistics import wilson_interval
from mcpgym.evaluation.records.trajectory import ToolCallStep, Trajectory
from mcpgym.evaluation.report.compare import build_comparison
from mcpgym.evaluation.report.condition_charts import svg_line_chart
from mcpgym.evaluation.report.conditions import (
    AXIS_METRICS,
    ConditionFigures,
    Curve,
    CurveMetric,
    Point,
    curves,
    selection_errors,
)
from mcpgym.evaluation.report.run_report import build_report
from mcpgym.evaluation.tasks import get_task, load_tasks, oracle_tools

TASKS = [t.id for t in load_tasks("smoke")[:2]]
FAULTS, TOOLS = ["none", "harsh"], ["task", "all"]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run: 3 scripted agents x 2 tasks x 2 trials x 4 conditions."""
    out = tmp_path_factory.mktemp("conditions-report") / "run"
    args = ["run", *[a for t in TASKS for a in ("--task", t)], "--trials", "2", "--quiet", "--out", str(out)]
    result = CliRunner().invoke(app, [*args, "--faults", ",".join(FAULTS), "--tools", ",".join(TOOLS)])
    assert result.exit_code == 0, result.output
    return out


def test_every_figure_is_a_hand_count_of_the_conditions_episodes(run: Path) -> None:
    report = build_report(run, rescore=False)
    assert report.conditions is not None
    figs = report.conditions
    assert figs.agents == sorted(SCRIPTED_AGENTS) and figs.unknown_tasks == []
    sets = {t: set(oracle_tools(get_task(t))) for t in TASKS}
    checked = 0
    for agent in SCRIPTED_AGENTS:
        for f in FAULTS:
            for t in TOOLS:
                cond = EpisodeCondition(faults=f, tools=t)
                mine = [(tr, sc) for tr, sc in report.trajectories if tr.agent == agent and tr.condition == cond]
                assert len(mine) == len(TASKS) * 2
                wins = sum(bool(sc.success) for _, sc in mine)
                p = figs.points[(agent, cond, CurveMetric.success)]
                assert (p.value, p.n) == (wins / len(mine), len(mine))
                assert p.ci is not None and list(p.ci) == wilson_interval(wins, len(mine))
                met = sum(sc.recoverable_errors for _, sc in mine)
                got = sum(sc.recoveries for _, sc in mine)
                r = figs.points[(agent, cond, CurveMetric.recovery)]
                assert (r.value, r.n) == ((got / met, met) if met else (None, 0))
                off = [sum(s.tool not in sets[tr.task_id] for s in tr.tool_calls) for tr, _ in mine]
                e = figs.points[(agent, cond, CurveMetric.selection_errors)]
                assert (e.value, e.n) == (sum(off) / len(off), len(off))
                tok = figs.points[(agent, cond, CurveMetric.tokens)]
                assert tok.value is None and "scripted agents report none" in tok.why  # never a silent 0
                checked += 1
    assert checked == len(SCRIPTED_AGENTS) * 4
    # faults change what the agents meet: no recoverable error without faults, some under harsh
    assert all(
        figs.points[(a, EpisodeCondition(faults="none", tools=t), CurveMetric.recovery)].value is None
        for a in SCRIPTED_AGENTS
        for t in TOOLS
    )
    careful = figs.points[("careful", EpisodeCondition(faults="harsh", tools="all"), CurveMetric.recovery)]
    assert careful.value is not None and careful.n > 0
    # the exposure changes what the episodes list: task offers fewer tools than all
    assert figs.tools_listed["task"] is not None and figs.tools_listed["all"] is not None
    assert figs.tools_listed["task"] < figs.tools_listed["all"]


def _svgs(html: str) -> list[str]:
    return re.findall(r'<svg[^>]*class="curve".*?</svg>', html, flags=re.S)


def test_the_html_draws_each_curve_with_the_runs_figures(run: Path) -> None:
    report = build_report(run, rescore=False)
    assert report.conditions is not None
    html = (run / "report.html").read_text()
    section = html[html.index('<h2 id="conditions">') :]
    section = section[: section.index("<h2", 5)]
    assert not re.search(r"(src|href)=\"(https?:)?//", section)  # nothing to fetch (the report's CSP)
    svgs = _svgs(section)
    # a panel per metric and value of the other axis: 2 x 2 against faults, 3 x 2 against tools
    assert len(svgs) == len(AXIS_METRICS["faults"]) * len(TOOLS) + len(AXIS_METRICS["tools"]) * len(FAULTS)
    drawn = 0
    for svg in svgs:
        axis = re.search(r'data-axis="(\w+)"', svg).group(1)
        metric = CurveMetric(re.search(r'data-metric="(\w+)"', svg).group(1))
        other = re.search(r'data-fixed="(\w+)=([^"]+)"', svg).group(2)
        for agent, x, value in re.findall(r'data-agent="([^"]+)" data-x="([^"]+)" data-value="([^"]+)"', svg):
            cond = (
                EpisodeCondition(faults=x, tools=other) if axis == "faults" else EpisodeCondition(faults=other, tools=x)
            )
            want = report.conditions.points[(agent, cond, metric)].value
            assert want is not None and abs(float(value) - want) < 1e-5, (agent, cond, metric)
            drawn += 1
        if metric is CurveMetric.tokens:
            assert "not computable:" in svg and "data-value" not in svg
    assert drawn > 0
    md = (run / "report.md").read_text()
    assert (
        "## Conditions" in md and "### Success vs fault profile" in md and "### Tokens / episode vs exposed tools" in md
    )
    assert "faults none, harsh x tools task, all: 4 conditions" in md


def test_the_terminal_prints_the_condition_tables(run: Path) -> None:
    result = CliRunner().invoke(app, ["report", str(run)], env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    for title in (
        "Success vs fault profile",
        "Recovery vs fault profile",
        "Success vs exposed tools",
        "Tool-selection errors / episode vs exposed tools",
        "Tokens / episode vs exposed tools",
    ):
        assert title in result.output


def test_selection_errors_count_calls_outside_the_tasks_tool_set() -> None:
    traj = Trajectory(
        episode_id="e",
        agent="a",
        steps=[
            ToolCallStep(step=1, tool="shop_get_item", arguments={}),
            ToolCallStep(step=2, tool="shop_list_orders", arguments={}),
            ToolCallStep(tool="shop_teleport", arguments={}, invalid=True, is_error=True, error_code="not_found"),
        ],
    )
    assert selection_errors(traj, frozenset({"shop_get_item"})) == 2  # a distractor and a refused unknown tool
    assert selection_errors(traj, frozenset({"shop_get_item", "shop_list_orders", "shop_teleport"})) == 0


def test_a_point_that_cannot_be_computed_is_a_gap_never_zero() -> None:
    from mcpgym.evaluation.records.condition import ConditionAxis

    figs = ConditionFigures(axis=ConditionAxis(faults=["none", "harsh"], tools=["all"]), agents=["a"])
    curve = Curve(
        axis="faults",
        metric=CurveMetric.recovery,
        fixed=None,
        x=["none", "harsh"],
        series={"a": [Point(None, None, 0, "no recoverable error met"), Point(0.5, (0.2, 0.8), 4)]},
    )
    svg = svg_line_chart(curve, figs)
    assert svg.count("<circle") == 1 and 'data-value="0.5"' in svg
    assert "n/a at none: no recoverable error met (a)" in svg and "<polyline" not in svg  # one point: no line
    empty = Curve(
        "faults", CurveMetric.tokens, None, ["none", "harsh"], {"a": [Point(None, why="no token counts")] * 2}
    )
    assert "not computable:" in svg_line_chart(empty, figs) and "<circle" not in svg_line_chart(empty, figs)
    assert (
        curves(ConditionFigures(axis=ConditionAxis(faults=["none", "harsh"], tools=["all"]), agents=[]), "tools") == []
    )


def test_compare_and_exports_keep_agents_and_conditions_apart(run: Path, tmp_path: Path) -> None:
    comp = build_comparison([run])
    labels = {c for r in comp.runs for c in r.agents}
    assert labels == {
        condition_key(a, EpisodeCondition(faults=f, tools=t)) for a in SCRIPTED_AGENTS for f in FAULTS for t in TOOLS
    }
    assert comp.comparisons and len(comp.comparisons) == 3 * 4  # 3 pairs of agents in each of 4 conditions
    for pair in comp.comparisons:
        assert pair.a.split(" [", 1)[1] == pair.b.split(" [", 1)[1]  # the same condition on both sides
        assert pair.pairs == len(TASKS) * 2
    result = CliRunner().invoke(
        app, ["export", str(run), "--format", "leaderboard", "--out", str(tmp_path / "lb.json")]
    )
    assert result.exit_code == 0, result.output
    rows = json.loads((tmp_path / "lb.json").read_text())["rows"]
    assert sorted((r["agent"], r["condition"]["faults"], r["condition"]["tools"]) for r in rows) == sorted(
        (a, f, t) for a in SCRIPTED_AGENTS for f in FAULTS for t in TOOLS
    )
    scores = json.loads((run / "scores.json").read_text())["agents"]
    for r in rows:
        key = condition_key(r["agent"], EpisodeCondition(**r["condition"]))
        assert r["episodes"] == scores[key]["episodes"] == len(TASKS) * 2
    result = CliRunner().invoke(app, ["export", str(run), "--format", "csv", "--out", str(tmp_path / "e.csv")])
    assert result.exit_code == 0, result.output
    lines = list(csv.DictReader(io.StringIO((tmp_path / "e.csv").read_text())))
    assert len(lines) == len(SCRIPTED_AGENTS) * len(TASKS) * 2 * 4
    assert {(d["tools"], d["fault_profile"], d["condition"]) for d in lines} == {
        (t, f, f"faults={f}, tools={t}") for f in FAULTS for t in TOOLS
    }
