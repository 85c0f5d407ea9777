"""``mcpgym export`` under hostile input (the hostile pass of issue 36): cells that a
spreadsheet would run as formulas, a crash mid-write, output names that are other run files,
and price tables with a key given twice. Every command runs through the real CLI on real files."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest

from mcpgym.evaluation.report.exports import FORMULA_STARTS, csv_cell
from tests.evaluation.report.test_compare import _run, _scores
from tests.support.cli_runs import cli_at_width

HOSTILE_CELLS = ["=1+1", "+SUM(A1)", "-2+3", "@cmd", "\tx", "\rx", '=HYPERLINK("http://x")']


def _hostile_run(where: Path) -> Path:
    eps = []
    for i, text in enumerate(HOSTILE_CELLS):
        e = _scores(text, f"t.{i}", 0, True)  # the agent's name and the task id come from the run's files
        e.task_id = text + f".{i}"
        eps.append(e)
    return _run(where, eps)


def test_every_formula_start_is_neutralised_in_every_cell(tmp_path: Path, monkeypatch, capsys) -> None:
    run = _hostile_run(tmp_path / "run")
    code, _, err = cli_at_width(["export", "--format", "csv", str(run)], 120, monkeypatch, capsys)
    assert code == 0, err
    with (run / "episodes.csv").open(encoding="utf-8", newline="") as fh:  # a CR inside a cell stays one
        rows = list(csv.reader(fh))
    assert len(rows) == 1 + len(HOSTILE_CELLS)  # a CR inside a cell splits no row
    cells = [c for row in rows[1:] for c in row]
    assert not [c for c in cells if c[:1] in FORMULA_STARTS], "a cell a spreadsheet would evaluate"
    agents = {row[1] for row in rows[1:]}
    assert agents == {"'" + t for t in HOSTILE_CELLS}
    # numbers stay numbers: a negative float is not text to a spreadsheet, and it is ours
    assert csv_cell(-0.5) == "-0.5" and csv_cell(-3) == "-3"
    assert csv_cell("-3") == "'-3"  # a string that looks like a number came from a file: escaped


def test_a_crash_mid_export_leaves_no_torn_file(tmp_path: Path, monkeypatch, capsys) -> None:
    run = _run(tmp_path / "run", [_scores("bot", f"t.{i}", 0, True) for i in range(3)])
    real_write = os.write
    calls = {"n": 0}

    def dying_fsync(fd: int) -> None:
        calls["n"] += 1
        raise OSError(5, "Input/output error")  # the disk fails before the file is whole

    monkeypatch.setattr(os, "fsync", dying_fsync)
    for fmt, name in (("csv", "episodes.csv"), ("leaderboard", "leaderboard.json")):
        code, _, err = cli_at_width(["export", "--format", fmt, str(run)], 120, monkeypatch, capsys)
        assert code != 0 and "Traceback" not in err
        assert not (run / name).exists(), f"a torn {name} was left"
        assert [p.name for p in run.iterdir() if p.name.endswith(".tmp")] == []
    assert calls["n"] == 2 and real_write is os.write


@pytest.mark.parametrize(
    ("fmt", "out"),
    [
        ("leaderboard", "episodes.csv"),
        ("csv", "leaderboard.json"),
        ("csv", "report.md"),
        ("leaderboard", "server.log"),
        ("csv", "manifest.json"),
        ("csv", "trajectories.jsonl"),
    ],
)
def test_an_output_named_as_another_run_file_is_a_clear_error(
    tmp_path: Path, monkeypatch, capsys, fmt: str, out: str
) -> None:
    run = _run(tmp_path / "run", [_scores("bot", "t.a", 0, True)])
    before = {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()}
    elsewhere = tmp_path / "out"
    elsewhere.mkdir()
    for target in (run / out, elsewhere / out):
        code, _, err = cli_at_width(
            ["export", "--format", fmt, str(run), "--out", str(target)], 120, monkeypatch, capsys
        )
        assert code == 2, err
        assert "AssertionError" not in err and "unexpected" not in err
        assert out in err and "run file" in err
    assert {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()} == before
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize(
    ("name", "body", "key"),
    [
        (
            "p.json",
            '{"prices": {"m": {"input_per_million": 1, "output_per_million": 2}, "m": {"input_per_million": 0, "output_per_million": 0}}}',
            "m",
        ),
        (
            "p.json",
            '{"prices": {"m": {"input_per_million": 1, "input_per_million": 9, "output_per_million": 2}}}',
            "input_per_million",
        ),
        (
            "p.yaml",
            "prices:\n  m: {input_per_million: 1, output_per_million: 2}\n  m: {input_per_million: 0, output_per_million: 0}\n",
            "m",
        ),
        ("p.yml", "prices: {}\nprices: {}\n", "prices"),
    ],
)
def test_a_price_table_with_a_key_twice_is_refused_naming_it(
    tmp_path: Path, monkeypatch, capsys, name: str, body: str, key: str
) -> None:
    run = _run(tmp_path / "run", [_scores("bot", "t.a", 0, True)])
    prices = tmp_path / name
    prices.write_text(body, encoding="utf-8")
    code, _, err = cli_at_width(
        ["export", "--format", "csv", str(run), "--prices", str(prices)], 120, monkeypatch, capsys
    )
    assert code == 2, err
    assert f"'{key}'" in err and "twice" in err and name in err
    assert not (run / "episodes.csv").exists()
