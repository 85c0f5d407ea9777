"""Faults by kind and the task x agent grid, from a real harsh run of the scripted agents,
in the terminal (``mcpgym report``), report.md and report.html."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from mcpgym.evaluation.report.fault_kinds import fault_kind_rows
from mcpgym.evaluation.report.run_report import build_report
from tests.support.cli_runs import cli_at_width


@pytest.fixture(scope="module")
def harsh_run(http_server: tuple[str, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    from mcpgym.evaluation.cli import main

    url, token = http_server
    out = tmp_path_factory.mktemp("kinds") / "run"
    args = ["run", "--task", "system.dark_mode", "--task", "flights.book_cheapest_berlin_paris"]
    args += ["--task", "shop.buy_sold_out_mouse", "--agent", "careful", "--agent", "defeatist"]
    args += ["--agent", "overconfident", "--trials", "3", "--faults", "harsh", "--server", url, "--token", token]
    with pytest.raises(SystemExit) as exc:
        main([*args, "-q", "--out", str(out)])
    assert exc.value.code == 0
    return out


def test_rows_follow_the_ledger_and_the_recovery_records(harsh_run: Path) -> None:
    report = build_report(harsh_run)
    rows = {(r.agent, r.kind): r for r in fault_kind_rows(report.trajectories)}
    assert rows, "the harsh profile injected nothing"
    for agent in ("careful", "defeatist", "overconfident"):
        ledger = Counter(
            e["kind"]
            for t, _ in report.trajectories
            if t.agent == agent
            for e in t.ledger or []
            if not e.get("persisting", False)
        )
        assert {k: r.met for (a, k), r in rows.items() if a == agent and r.met} == dict(ledger)
    for (agent, kind), r in rows.items():
        if kind in ("lost_write", "stale_read"):  # seen as a success: nothing to recover, never a zero
            assert r.recovered is None and r.gave_up is None
            continue
        assert r.recovered is not None and r.gave_up is not None and r.recovered + r.gave_up <= r.errors
        if agent == "careful":
            assert r.gave_up == 0, r
        if agent == "defeatist":  # apologises at its first error: gives up on every one
            assert r.recovered == 0 and r.gave_up == r.errors, r
    assert any(r.false_success_after for (a, _), r in rows.items() if a == "overconfident")


def test_the_terminal_and_the_files_show_both_tables(
    harsh_run: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    code, out, err = cli_at_width(["report", str(harsh_run)], 100, monkeypatch, capsys)
    assert code == 0, err
    assert "Tasks: successes / scored episodes per agent" in out and "Faults by kind" in out
    grid = next(ln for ln in out.splitlines() if ln.startswith("system.dark_mode"))
    assert grid.split()[1:] == ["1", "3/3", *grid.split()[3:]] and len(grid.split()) == 5
    md = (harsh_run / "report.md").read_text(encoding="utf-8")
    html = (harsh_run / "report.html").read_text(encoding="utf-8")
    assert "## Faults by kind" in md and "| Agent | Fault kind | Met | Recovered | Gave up |" in md
    assert '<h2 id="faults-by-kind">Faults by kind</h2>' in html and "False success after it" in html
    assert "| system.dark_mode | 1 | 3/3 |" in md  # the task x agent grid, careful's column first
