"""``mcpgym compare``: paired differences checked against hand computations, the refusal of runs
of different conditions, the files it writes, and ``mcpgym score`` telling runs apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpgym.evaluation.run.run_dir import load_run
from mcpgym.evaluation.scoring.paired import bootstrap_interval, mcnemar_exact
from mcpgym.evaluation.scoring.scorer import EpisodeScores
from tests.support.cli_runs import cli_at_width
from tests.support.run_dirs import write_run_dir


def _scores(agent: str, task: str, trial: int, success: bool, writes: int = 1, verified: int = 1) -> EpisodeScores:
    return EpisodeScores(
        episode_id=f"{agent}-{task}-{trial}",
        task_id=task,
        agent=agent,
        trial=trial,
        level=1,
        apps=["system"],
        success=success,
        recall=int(success),
        total=1,
        misbehave=0,
        writes=writes,
        verified_writes=verified,
        verification_rate=verified / writes if writes else None,
        tool_calls=3,
        valid_calls=3,
    )


def _run(path: Path, episodes: list[EpisodeScores], faults: str = "default", tasks: list[str] | None = None) -> Path:
    return write_run_dir(path, episodes, faults=faults, tasks=tasks)


def _json(args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> dict:
    code, out, err = cli_at_width(["compare", *args, "--json"], 120, monkeypatch, capsys)
    assert code == 0, err
    return json.loads(out)


def _row(comp: dict, metric: str, index: int = 0) -> dict:
    return next(d for d in comp["comparisons"][index]["overall"] if d["metric"] == metric)


def test_intervals_match_a_hand_computation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    # Agent "bot" in two runs, two (task, trial) pairs. Success: run x succeeds on both, run y
    # only on (t.a, 0): differences (0, -1). A resample of the 2 pairs draws pair 1 twice
    # (mean 0, chance 1/4), pair 2 twice (mean -1, 1/4) or one of each (-1/2, 1/2); the 2.5% and
    # 97.5% points of 2,000 such draws are -1 and 0 (each end has ~500 draws, far above 50).
    # Verification pooled over the pairs: x = (2 + 0) / (2 + 1) = 2/3, y = (1 + 0) / (2 + 1) =
    # 1/3, difference -1/3; resamples give -1/2 (pair 1 twice: 1/2 - 1), 0 (pair 2 twice: 0 - 0)
    # or -1/3: the interval is [-1/2, 0].
    x = _run(tmp_path / "x", [_scores("bot", "t.a", 0, True, 2, 2), _scores("bot", "t.b", 0, True, 1, 0)])
    y = _run(tmp_path / "y", [_scores("bot", "t.a", 0, True, 2, 1), _scores("bot", "t.b", 0, False, 1, 0)])
    comp = _json([str(x), str(y)], monkeypatch, capsys)
    pair = comp["comparisons"][0]
    assert (pair["a"], pair["b"], pair["pairs"]) == ("bot@x", "bot@y", 2)
    success = _row(comp, "success_rate")
    assert (success["a"], success["b"], success["difference"]) == (1.0, 0.5, -0.5)
    assert success["ci95"] == [-1.0, 0.0] and success["verdict"] == "no detectable difference"
    # exact McNemar: 1 discordant pair (A-only): p = min(1, 2 * C(1, 0) / 2^1) = 1
    assert (success["a_only"], success["b_only"], success["mcnemar_p"]) == (1, 0, 1.0)
    verification = _row(comp, "verification_rate")
    assert verification["a"] == pytest.approx(2 / 3) and verification["b"] == pytest.approx(1 / 3)
    assert verification["difference"] == pytest.approx(-1 / 3)
    assert verification["ci95"] == [-0.5, 0.0] and verification["verdict"] == "no detectable difference"
    # tool calls are equal in every pair: a degenerate interval [0, 0], no difference
    calls = _row(comp, "tool_calls")
    assert calls["difference"] == 0 and calls["ci95"] == [0.0, 0.0]
    # no episode reports tokens: not computable, never a zero
    tokens = _row(comp, "tokens")
    assert tokens["difference"] is None and tokens["ci95"] is None and tokens["verdict"] == "not computable"
    # per task: one pair each; t.b lost its success (-1, interval [-1, -1]) but p = 1
    by_task = {t["task"]: t["difference"] for t in pair["by_task"]}
    assert by_task["t.b"]["ci95"] == [-1.0, -1.0] and by_task["t.b"]["verdict"] == "no detectable difference"
    assert by_task["t.a"]["difference"] == 0


def test_success_differs_only_when_mcnemar_agrees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    # 6 pairs, all discordant the same way: the interval is [1, 1] and McNemar's
    # p = 2 * C(6, 0) / 2^6 = 1/32 < 0.05: "higher"; with 4 pairs p = 2/16 = 0.125: no verdict.
    def runs(n: int, where: Path) -> list[str]:
        a = _run(where / "a", [_scores("one", f"t.{i}", 0, False) for i in range(n)])
        b = _run(where / "b", [_scores("one", f"t.{i}", 0, True) for i in range(n)])
        return [str(a), str(b)]

    six = _row(_json(runs(6, tmp_path / "six"), monkeypatch, capsys), "success_rate")
    assert six["ci95"] == [1.0, 1.0] and six["mcnemar_p"] == pytest.approx(1 / 32)
    assert six["verdict"] == "higher"
    four = _row(_json(runs(4, tmp_path / "four"), monkeypatch, capsys), "success_rate")
    assert four["ci95"] == [1.0, 1.0] and four["mcnemar_p"] == pytest.approx(0.125)
    assert four["verdict"] == "no detectable difference"
    assert mcnemar_exact(3, 1) == pytest.approx(2 * (1 + 4) / 16)
    assert mcnemar_exact(0, 0) == 1.0
    assert bootstrap_interval([]) is None


def test_runs_of_other_conditions_are_refused_unless_the_axis_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    eps = [_scores("bot", "t.a", 0, True), _scores("bot", "t.b", 0, False)]
    soft = _run(tmp_path / "soft", eps, faults="default")
    hard = _run(tmp_path / "hard", eps, faults="harsh")
    code, out, err = cli_at_width(["compare", str(soft), str(hard)], 120, monkeypatch, capsys)
    assert code == 2 and out == ""
    assert "differ in faults (soft: default; hard: harsh)" in err and "--axis faults" in err
    assert "Traceback" not in err
    comp = _json([str(soft), str(hard), "--axis", "faults"], monkeypatch, capsys)
    assert comp["axes"] == ["faults"] and _row(comp, "success_rate")["difference"] == 0
    other = _run(tmp_path / "other", [_scores("bot", "t.a", 0, True)], tasks=["t.a", "t.c"])
    code, _, err = cli_at_width(["compare", str(soft), str(other)], 120, monkeypatch, capsys)
    assert (
        code == 2
        and "differ in tasks (soft: 2 tasks; other: 2 tasks; not in every run: 't.b', 't.c')" in err
        and "--axis tasks" in err
    )
    code, _, err = cli_at_width(["compare", str(soft), "--axis", "weather"], 120, monkeypatch, capsys)
    assert code == 2 and "unknown --axis" in err
    code, _, err = cli_at_width(["compare", str(tmp_path / "missing")], 120, monkeypatch, capsys)
    assert code == 2 and "missing" in err


def test_compare_and_score_of_a_real_run(
    http_server: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    url, token = http_server
    run = tmp_path / "real"
    args = ["run", "--task", "system.dark_mode", "--agent", "careful", "--agent", "defeatist", "--trials", "3"]
    args += ["--faults", "default", "--server", url, "--token", token, "-q", "--out", str(run)]
    code, _, err = cli_at_width(args, 120, monkeypatch, capsys)
    assert code == 0, err
    # the hand computation: pair the two agents' episodes by trial, straight from the lines
    lines = load_run(run, states=False)
    by = {(t.agent, t.trial): t.scores for t in lines}
    wins = {agent: sum(bool(by[(agent, i)].success) for i in range(3)) for agent in ("careful", "defeatist")}
    calls = sum(by[("defeatist", i)].tool_calls - by[("careful", i)].tool_calls for i in range(3)) / 3
    code, out, err = cli_at_width(["compare", str(run), "--out", str(tmp_path / "cmp")], 100, monkeypatch, capsys)
    assert code == 0, err
    assert "B = defeatist@real vs A = careful@real: 3 (task, trial) pairs" in out
    assert "paired percentile bootstrap, 2,000 resamples, seed 37" in out
    comp = _json([str(run)], monkeypatch, capsys)
    success = _row(comp, "success_rate")
    assert success["difference"] == pytest.approx((wins["defeatist"] - wins["careful"]) / 3)
    assert _row(comp, "tool_calls")["difference"] == pytest.approx(calls)
    md = (tmp_path / "cmp" / "compare.md").read_text(encoding="utf-8")
    html = (tmp_path / "cmp" / "compare.html").read_text(encoding="utf-8")
    assert md.startswith("# mcpgym comparison\n") and "## Paired comparison" in md and "| Success | 3 |" in md
    assert '<h2 id="paired-comparison">' in html and "no detectable difference" in html
    # `score` shows the run table's interval and pass^k (3 trials of one task: pass^3)
    code, out, err = cli_at_width(["score", str(run)], 250, monkeypatch, capsys)
    assert code == 0 and "Success (95% CI)" in out and "pass^3" in out, err
    careful = next(ln for ln in out.splitlines() if ln.startswith("careful ") and "[" in ln)
    assert "100% [44–100]" in careful and " 1.00 " in careful  # Wilson of 3/3; careful never fails
    # `score` of two copies of the run: one row per agent and run, never pooled
    copy = tmp_path / "copy"
    copy.mkdir()
    for f in run.iterdir():
        if f.is_file():
            (copy / f.name).write_bytes(f.read_bytes())
    (copy / "snapshots").mkdir()
    for f in (run / "snapshots").iterdir():
        (copy / "snapshots" / f.name).write_bytes(f.read_bytes())
    code, out, err = cli_at_width(["score", str(run), str(copy), "--json"], 120, monkeypatch, capsys)
    assert code == 0, err
    agents = json.loads(out)["agents"]
    assert sorted(agents) == ["careful@copy", "careful@real", "defeatist@copy", "defeatist@real"]
    assert all(m["episodes"] == 3 for m in agents.values())
