"""A resume that raises the run's trials, and pass^k of agents with fewer finished trials.

Found by a new-user try: ``mcpgym run --resume --trials 2 --agent careful`` on a run of three
agents raised the manifest's trials for all three but ran only careful's second trial; the
report then showed the others' pass^1 under a pass^2 header and its prose held backslash-
escaped backticks. Every command here runs for real (``mcpgym`` in-process, a real server).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_text
from tests.support.cli_runs import cli_at_width

AGENTS = ["--agent", "careful", "--agent", "defeatist"]


def cli(args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> tuple[int, str, str]:
    """Run ``mcpgym ARGS`` at 200 columns; return (exit code, stdout, stderr)."""
    return cli_at_width(args, 200, monkeypatch, capsys)


def episodes(run: Path) -> list[tuple[str, int]]:
    """(agent, trial) of every trajectory line of ``run``, sorted."""
    return sorted((t["agent"], t["trial"]) for t in map(json.loads, run_text(run).splitlines()))


def test_a_resume_raising_trials_for_some_agents_is_refused_and_a_bare_one_runs_them_all(
    http_server, tmp_path, monkeypatch, capsys
):
    url, token = http_server
    run = tmp_path / "run"
    where = ["--out", str(run), "--server", url, "--token", token, "-q"]
    code, _, err = cli(["run", "--task", "system.dark_mode", *AGENTS, "--trials", "1", *where], monkeypatch, capsys)
    assert code == 0, err
    before = {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()}

    code, out, err = cli(["run", "--resume", "--trials", "2", "--agent", "careful", *where], monkeypatch, capsys)
    assert code == 2 and out == "", (out, err)
    assert err.count("\n") == 1 and err.startswith("error: cannot resume"), err
    for says in ("from 1 to 2", "leaves out agent defeatist", "resume without --agent"):
        assert says in err, err
    # refused before anything was written: the run is as it was
    assert {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()} == before

    # the same narrowing by task: a task of the run left out of a resume that raises trials
    code, _, err = cli(
        ["run", "--resume", "--trials", "2", "--task", "system.moved_to_porto", *AGENTS, *where], monkeypatch, capsys
    )
    assert code == 2 and "leaves out task system.dark_mode" in err, err

    # a bare resume with more trials runs the missing trial of every agent
    code, out, err = cli(["run", "--resume", "--trials", "2", *where], monkeypatch, capsys)
    assert code == 0, err
    assert episodes(run) == [("careful", 0), ("careful", 1), ("defeatist", 0), ("defeatist", 1)]
    assert json.loads((run / "manifest.json").read_text())["trials"] == 2
    assert "WARNING" not in err and "n/a" not in out, (out, err)


def test_pass_k_is_never_shown_for_an_agent_with_fewer_trials(http_server, tmp_path, monkeypatch, capsys):
    """A run whose defeatist lost its second trial (a run written before the refusal above, or
    an interrupted one): the pass^2 column says n/a for it, with the reason, in the terminal
    and report.md, and a loud warning names it; careful keeps its pass^2."""
    url, token = http_server
    run = tmp_path / "run"
    where = ["--out", str(run), "--server", url, "--token", token, "-q", "--faults", "none"]
    code, _, err = cli(["run", "--task", "system.dark_mode", *AGENTS, "--trials", "2", *where], monkeypatch, capsys)
    assert code == 0, err
    lines = run_text(run).splitlines()
    kept = [ln for ln in lines if (json.loads(ln)["agent"], json.loads(ln)["trial"]) != ("defeatist", 1)]
    (run / "trajectories.jsonl.zst").unlink()
    (run / "trajectories.jsonl").write_text("\n".join(kept) + "\n", encoding="utf-8")  # an older run's plain file

    code, out, err = cli(["report", str(run)], monkeypatch, capsys)
    assert code == 0, err
    md = (run / "report.md").read_text(encoding="utf-8")
    agents_table = md.split("## Agents")[1].split("\n\n")[1]  # the comparison table
    rows = {line.split(" | ")[0].lstrip("| "): line.split(" | ") for line in agents_table.splitlines()}
    header = rows["Agent"]
    col = header.index("pass^2")
    assert rows["careful"][col] == "1.00"
    assert rows["defeatist"][col] == "n/a (a task has fewer than 2 scored trials)"
    assert "**WARNING: pass^2 cannot be computed for defeatist (pass^1 only)" in md
    # the missing episode is named in prose without escaped backticks
    assert "3 of 4 planned" in md and "\\`" not in md, md

    from mcpgym.evaluation.report.run_report import pass_k_warning, print_comparison
    from mcpgym.evaluation.report.tables import terminal_console
    from mcpgym.evaluation.run.run_dir import compute_scores, load_run

    scores = compute_scores(load_run(run, states=False))
    print_comparison(terminal_console(), scores)
    table = capsys.readouterr().out
    [line] = [ln for ln in table.splitlines() if ln.startswith("defeatist")]
    assert "n/a" in line and "1.00" not in line, table  # its pass^1 is 1.00: not shown as pass^2
    warning = pass_k_warning(scores)
    assert warning is not None and "defeatist" in warning and "careful" not in warning
