"""What ``mcpgym run`` prints when it ends, as a new user reads it at 80, 120 and 200 columns.

Every run here is real (``mcpgym`` in-process against a real server, scripted agents).
"""

from __future__ import annotations

import re

import pytest

from tests.support.cli_runs import cli_at_width, one_episode_args

WIDTHS = (80, 120, 200)


cli = cli_at_width


@pytest.fixture(scope="module")
def one_episode_run(http_server, tmp_path_factory) -> list[str]:
    """The arguments of a run of one episode (careful, system.dark_mode, 1 trial, no faults)."""
    return one_episode_args(http_server, tmp_path_factory.mktemp("summary") / "run")


@pytest.mark.parametrize("width", WIDTHS)
def test_the_episodes_column_shows_run_scored_and_errored(width, one_episode_run, monkeypatch, capsys):
    """The column is headed "Episodes run/scored/errored" (or "Eps" with that legend): it shows
    the three counts at every width, not one number when all were scored."""
    args = [*one_episode_run, "--resume"] if width != WIDTHS[0] else one_episode_run
    code, out, err = cli(args, width, monkeypatch, capsys)
    assert code == 0, err
    [row] = [ln for ln in out.splitlines() if ln.startswith("careful")] or [
        ln for ln in out.splitlines() if "Episodes run/scored/errored:" in ln
    ]
    assert "1/1/0" in row, out


WRONG_NUMBER = re.compile(
    r"(?<![\d.,^])1 (tasks|trials|episodes|agents|calls|tools|problems|errors|faults|windows)\b|\w\(s\)"
)
"""A count of one with a plural noun ("1 trials"), or a hedged plural ("episode(s)")."""


def test_one_of_anything_is_singular_in_every_output(http_server, tmp_path, monkeypatch, capsys):
    """A run of 1 task x 1 trial x 1 agent printed "1 tasks x 1 trials ...: 1 episodes run",
    the pass^1 note "all 1 trials", and score / tasks said "episode(s)", "problem(s)" (found
    by a new-user try): the run's output, report.md and report.html, `mcpgym score` and
    `mcpgym tasks` of a one-task file say "1 task", "1 trial", "1 episode"."""
    from mcpgym.kernel.wording import counted

    assert [counted(n, "trial") for n in (0, 1, 2)] == ["0 trials", "1 trial", "2 trials"]
    assert counted(1, "retry", "retries") == "1 retry" and counted(3, "retry", "retries") == "3 retries"

    url, token = http_server
    run = tmp_path / "run"
    args = ["run", "--task", "system.dark_mode", "--agent", "careful", "--trials", "1", "--faults", "none"]
    code, out, err = cli([*args, "--server", url, "--token", token, "-q", "--out", str(run)], 200, monkeypatch, capsys)
    assert code == 0, err
    assert "1 task x 1 trial, faults none: 1 episode run" in out, out
    assert "pass^1: chance that one trial of a task succeeds" in out, out
    texts = {"run": out + err, "report.md": (run / "report.md").read_text(encoding="utf-8")}
    html = (run / "report.html").read_text(encoding="utf-8")
    texts["report.html"] = re.sub(r"<(script|style)\b.*?</\1>", "", html, flags=re.S)  # its text, not its code
    for name, args in {
        "score": ["score", str(run)],
        "score of a file": ["score", str(run / "nope.jsonl"), str(run)],
    }.items():
        code, out, err = cli(args, 200, monkeypatch, capsys)
        texts[name] = out + err
    task_file = tmp_path / "one.yaml"
    task_file.write_text(
        "tasks:\n  - id: mine.ok\n    instruction: x\n    apps: [system]\n    seed: 2\n    level: 1\n"
        "    oracle: [{answer: ok}]\n",
        encoding="utf-8",
    )
    code, out, err = cli(["tasks", "--tasks", str(task_file)], 200, monkeypatch, capsys)
    assert code == 0, err
    texts["tasks"] = out + err
    assert "1 episode read" in texts["score"] and ": 1 task" in texts["tasks"], texts
    for name, text in texts.items():
        assert not WRONG_NUMBER.search(text), (name, WRONG_NUMBER.search(text), text[:3000])
