"""``mcpgym export --format csv | leaderboard``: one CSV row per episode with every score (the
columns documented and stable), the leaderboard's rates with intervals, pass^k and cost from a
price table, checked by hand; files in the way are never overwritten."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from mcpgym.evaluation.records.scores import EpisodeScores, TokenUsage
from mcpgym.evaluation.records.statistics import wilson_interval
from mcpgym.evaluation.report.exports import CSV_COLUMNS
from tests.evaluation.report.test_compare import _run, _scores
from tests.support.cli_runs import cli_at_width

DOCS = Path(__file__).resolve().parents[3] / "docs" / "exports.md"

# EpisodeScores fields that are no CSV column, and why (a list of records has its own table)
NOT_COLUMNS = {
    "episode_id": "a column, named as is",
    "missed": "paths (report.html's state diff)",
    "misbehaved": "paths (report.html's state diff)",
    "extra_checks": "records of the checks",
    "outcome_unavailable": "why success is empty",
    "blind_retry_detail": "records (blind_retries counts them)",
    "recoverable_error_detail": "records (recoverable_errors counts them)",
    "impatience_detail": "records (impatience counts them)",
    "recovery_window": "the run's K (manifest)",
    "heuristic_tools": "tool names (mcpgym score)",
    "feasible": "a task property (mcpgym tasks --json)",
    "tokens": "tokens_input and tokens_output",
    "mean_episode_verification_rate": "an aggregate",
    "false_success_basis": "how false_success was judged",
    "false_success_reason": "why",
    "refusal_pattern": "the matched pattern (report.html)",
    "refusal_match": "the matched text",
    "defeatism_reason": "why",
}


def _llm_run(where: Path) -> Path:
    eps = []
    for i, ok in enumerate([True, True, False]):
        e = _scores("openai:gpt-x", f"t.{i}", 0, ok)
        e.tokens = TokenUsage(input=1000, output=500)
        eps.append(e)
    eps += [_scores("careful", f"t.{i}", 0, True) for i in range(3)]
    return _run(where, eps)


def _prices(where: Path, body: str) -> Path:
    where.write_text(body, encoding="utf-8")
    return where


def test_the_csv_has_every_score_and_the_cost(tmp_path: Path, monkeypatch, capsys) -> None:
    run = _llm_run(tmp_path / "llm")
    prices = _prices(
        tmp_path / "p.json", '{"prices": {"gpt-x": {"input_per_million": 1.0, "output_per_million": 2.0}}}'
    )
    code, out, err = cli_at_width(
        ["export", "--format", "csv", str(run), "--prices", str(prices)], 120, monkeypatch, capsys
    )
    assert code == 0, err
    assert out.strip() == f"wrote 6 episode rows to {run / 'episodes.csv'}"
    text = (run / "episodes.csv").read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert tuple(rows[0]) == CSV_COLUMNS and len(rows) == 6
    llm = [r for r in rows if r["agent"] == "openai:gpt-x"]
    # 1000 input tokens at $1 and 500 output at $2 per million: 0.001 + 0.001
    assert {r["cost_usd"] for r in llm} == {"0.002"} and {r["tokens_input"] for r in llm} == {"1000"}
    assert [r["success"] for r in llm] == ["true", "true", "false"]
    assert {r["cost_usd"] for r in rows if r["agent"] == "careful"} == {""}  # no tokens: unknown, not 0
    assert {r["fault_profile"] for r in rows} == {""} and {r["tools"] for r in rows} == {"all"}
    # every scalar score is a column, or listed above with its reason
    fields = set(EpisodeScores.model_fields)
    assert fields - set(CSV_COLUMNS) <= set(NOT_COLUMNS), fields - set(CSV_COLUMNS) - set(NOT_COLUMNS)


def test_the_columns_are_documented_in_order() -> None:
    doc = DOCS.read_text(encoding="utf-8").split("## CSV columns")[1].split("## Leaderboard")[0]
    assert tuple(re.findall(r"^\| `([a-z_0-9]+)` \|", doc, re.M)) == CSV_COLUMNS


def test_the_leaderboard_by_hand(tmp_path: Path, monkeypatch, capsys) -> None:
    run = _llm_run(tmp_path / "llm")
    prices = _prices(
        tmp_path / "p.yaml", "prices:\n  openai:gpt-x: {input_per_million: 1.0, output_per_million: 2.0}\n"
    )
    code, out, err = cli_at_width(
        ["export", "--format", "leaderboard", str(run), "--prices", str(prices), "--out", "-"], 120, monkeypatch, capsys
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["mcpgym_leaderboard"] == 1 and doc["run"] == "llm"
    rows = {r["agent"]: r for r in doc["rows"]}
    llm = rows["openai:gpt-x"]
    assert llm["condition"] == {"faults": "default", "tools": "all"}
    assert llm["rates"]["success"] == {"rate": 2 / 3, "ci95": wilson_interval(2, 3), "numerator": 2, "denominator": 3}
    assert llm["pass_k"] == {"1": 2 / 3}
    assert llm["tokens"] == {"input": 3000, "output": 1500}
    assert llm["cost_usd"] == pytest.approx(0.006) and llm["cost_per_episode_usd"] == pytest.approx(0.002)
    assert llm["cost_per_success_usd"] == pytest.approx(0.003) and llm["cost_note"] is None
    careful = rows["careful"]
    assert careful["cost_usd"] is None and "no token counts" in careful["cost_note"]
    assert careful["rates"]["recovery"]["rate"] is None and careful["rates"]["recovery"]["ci95"] is None
    code, out, _ = cli_at_width(["export", "--format", "leaderboard", str(run), "--out", "-"], 120, monkeypatch, capsys)
    assert json.loads(out)["rows"][1]["cost_note"] == "no --prices given"


def test_files_in_the_way_and_bad_prices(tmp_path: Path, monkeypatch, capsys) -> None:
    run = _llm_run(tmp_path / "llm")
    args = ["export", "--format", "csv", str(run)]
    assert cli_at_width(args, 120, monkeypatch, capsys)[0] == 0
    code, _, err = cli_at_width(args, 120, monkeypatch, capsys)
    assert code == 2 and "exists; pass --force" in err
    assert cli_at_width([*args, "--force"], 120, monkeypatch, capsys)[0] == 0  # an earlier export: replaced
    (run / "episodes.csv").write_text("my own notes\n", encoding="utf-8")
    code, _, err = cli_at_width([*args, "--force"], 120, monkeypatch, capsys)
    assert code == 2 and "was not written by mcpgym" in err
    assert (run / "episodes.csv").read_text(encoding="utf-8") == "my own notes\n"
    bad = _prices(tmp_path / "bad.json", '{"prices": {"m": {"input_per_million": -1, "output_per_million": 1}}}')
    code, _, err = cli_at_width([*args, "--out", "-", "--prices", str(bad)], 120, monkeypatch, capsys)
    assert code == 2 and "field prices.m.input_per_million" in err and "Traceback" not in err
