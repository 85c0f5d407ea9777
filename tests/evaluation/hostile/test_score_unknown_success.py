"""``mcpgym score`` is loud when success cannot be computed: a warning on stderr naming how
many episodes are n/a and why (text and ``--json`` alike), and a non-zero exit when that is
most episodes of the run directories of ``mcpgym run`` (with their manifest; the runner
always records the states success needs); a foreign transcript carries no states, so it is warned
and ``--strict`` keeps its own meaning (the scorability warnings); never silent."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.evaluation.report.test_compare import _run, _scores
from tests.support.cli_runs import cli_at_width

DATA = Path(__file__).resolve().parents[2] / "data" / "formats"
WHY = "no initial, final and gold states"  # a hand-made run directory has no snapshots


@pytest.fixture(scope="module")
def judged_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run of 3 episodes (``mcpgym run``, its own server), every success computed."""
    out = tmp_path_factory.mktemp("judged") / "run"
    cmd = [sys.executable, "-m", "mcpgym.evaluation.cli", "run", "--task", "system.dark_mode", "--agent", "careful"]
    cmd += ["--trials", "3", "--faults", "none", "-q", "-o", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return out


def _unjudged(where: Path, n: int) -> Path:
    return _run(where, [_scores("bot", f"t.{i}", 0, True) for i in range(n)])


def test_a_run_without_any_judged_outcome_exits_non_zero_with_a_warning(tmp_path: Path, monkeypatch, capsys) -> None:
    run = _unjudged(tmp_path / "run", 3)
    for target, want in ((run, 1), (run / "trajectories.jsonl", 0)):  # a lone file may be anyone's
        for extra in ([], ["--json"]):
            code, _, err = cli_at_width(["score", str(target), *extra], 160, monkeypatch, capsys)
            assert code == want, err
            assert f"success cannot be computed for 3 of the 3 episodes ('{WHY}')" in err
    (run / "manifest.json").unlink()  # a proxy session, or trajectories dropped in a folder: states never promised
    code, _, err = cli_at_width(["score", str(run)], 160, monkeypatch, capsys)
    assert code == 0 and "success cannot be computed for 3 of the 3 episodes" in err, err


def test_most_versus_some_unjudged_episodes(judged_run: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    code, _, err = cli_at_width(["score", str(judged_run)], 160, monkeypatch, capsys)
    assert code == 0 and "success cannot be computed" not in err, err
    some = _unjudged(tmp_path / "some", 2)  # 2 of 5: warned, not most
    code, _, err = cli_at_width(["score", str(judged_run), str(some)], 160, monkeypatch, capsys)
    assert code == 0, err
    assert "success cannot be computed for 2 of the 5 episodes" in err
    most = _unjudged(tmp_path / "most", 4)  # 4 of 7: most
    code, _, err = cli_at_width(["score", str(judged_run), str(most), "--json"], 160, monkeypatch, capsys)
    assert code == 1, err
    assert "success cannot be computed for 4 of the 7 episodes" in err


def test_a_transcript_without_states_warns(tmp_path: Path, monkeypatch, capsys) -> None:
    transcript = shutil.copy(DATA / "talk_episode.openai.json", tmp_path / "t.json")
    for extra, want in (([], 0), (["--json"], 0), (["--strict"], 0)):
        code, _, err = cli_at_width(["score", str(transcript), *extra], 160, monkeypatch, capsys)
        assert "success cannot be computed for 1 of the 1 episode" in err, err
        assert code == want, (extra, code, err)
