"""``mcpgym run --resume`` keeps one run's conditions and says true things about it.

Found by a new-user try: a resume adding a scripted agent to a run of LLM agents was refused
over an LLM setting nobody passed (the run's own, restored); another ``--temperature``,
``--tools``, ``--timeout`` or ``--model-context`` was taken silently, mixing two conditions in
one run; ``--trials`` below the run's was taken and printed above a pass^k table of the run's
k, with every episode of the run counted as "resumed"; the pass^k warning told to ``--resume``
for an agent whose only episode errored (``--resume`` counts errored episodes as done); and an
agent of the manifest with no episode written had no row. Every command runs for real
(``mcpgym`` in-process, a real server; the LLM agent's provider is a closed loopback port, so
its episode errors at once).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_text
from tests.support.cli_runs import cli_at_width

DEAD_PROVIDER = "http://127.0.0.1:9/v1"
"""An OpenAI-compatible base URL nothing answers on (port 9, discard): the request fails at once."""


def cli(args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> tuple[int, str, str]:
    """Run ``mcpgym ARGS`` at 200 columns; return (exit code, stdout, stderr)."""
    return cli_at_width(args, 200, monkeypatch, capsys)


def files(run: Path) -> dict[str, bytes]:
    """The run's files and their bytes (what a refusal must leave as it was)."""
    return {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()}


def agent_rows(table: str) -> dict[str, list[str]]:
    """Agent -> cells of the Markdown comparison table under ``## Agents`` of a report.md."""
    body = table.split("## Agents")[1].split("\n\n")[1]
    return {line.split(" | ")[0].lstrip("| "): line.split(" | ") for line in body.splitlines()}


def test_an_llm_run_takes_a_scripted_agent_on_resume_and_refuses_other_conditions(
    http_server, tmp_path, monkeypatch, capsys
):
    url, token = http_server
    monkeypatch.setenv("OPENAI_BASE_URL", DEAD_PROVIDER)
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    run = tmp_path / "run"
    where = ["--out", str(run), "--server", url, "--token", token, "-q"]
    first = ["run", "--task", "system.dark_mode", "--agent", "openai:m", "--trials", "1", "--faults", "none"]
    first += ["--max-turns", "2", "--agent-option", "max_retries=0", "--timeout", "60"]
    code, _, err = cli([*first, *where], monkeypatch, capsys)
    assert code == 1 and "the run failed: most episodes errored" in err, err  # every episode errored
    [line] = [json.loads(x) for x in run_text(run).splitlines()]
    assert line["status"] == "errored", line  # the provider never answered
    before = files(run)

    # another value of a setting every episode (or every LLM episode) ran under: refused, naming both
    for given, says in (
        (["--temperature", "0.5"], "--temperature 0.5 differs from this run: the episodes of openai:m ran without it"),
        (["--max-turns", "3"], "--max-turns 3 differs from this run's 2"),
        (["--agent-option", "max_retries=1"], "--agent-option max_retries=1 differs from this run's 0"),
        (["--tools", "task"], "--tools task differs from this run's all"),
        (["--timeout", "30"], "--timeout 30 differs from this run's 60: its episodes ran with 60"),
        (["--validate-output"], "--validate-output differs from this run: its episodes ran without it"),
    ):
        code, out, err = cli(["run", "--resume", *given, *where], monkeypatch, capsys)
        assert code == 2 and out == "", (given, out, err)
        assert err.startswith("error: ") and says in " ".join(err.split()), (given, err)
        assert "mix two conditions" in " ".join(err.split()) and "another --out" in err, err
        assert files(run) == before
    # the same value is no change: accepted (nothing left to run)
    code, out, err = cli(["run", "--resume", "--max-turns", "2", "--timeout", "60", *where], monkeypatch, capsys)
    assert code == 1 and "0 episodes run, 1 resumed" in out, (out, err)  # still all errored

    # a scripted agent added on resume runs, as on a run of scripted agents only; the run's LLM
    # settings stay recorded for its LLM agent (they were refused: "set LLM agents, and this run has none")
    code, out, err = cli(["run", "--resume", "--agent", "careful", *where], monkeypatch, capsys)
    assert code == 0, err
    assert "1 episode run, 1 resumed" not in out and "1 episode run" in out, out
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    assert [a["name"] for a in manifest["agents"]] == ["openai:m", "careful"]
    assert manifest["invocations"][-1]["settings"]["agent_options"] == {"max_turns": 2, "max_retries": 0}

    # pass^1 is n/a for the LLM agent: its only episode errored, which --resume does not run
    # again, so the warning says that, not "--resume runs the missing trials"
    warning = " ".join(next(ln for ln in err.splitlines() if ln.startswith("WARNING: pass^1")).split())
    assert "openai:m (no scored trial): some task has no scored trial." in warning, warning
    assert "openai:m has 1 errored episode, which --resume counts as done and does not run again" in warning
    assert "another --out" in warning and "runs the missing trials" not in warning, warning
    md = (run / "report.md").read_text(encoding="utf-8")
    assert "does not run again" in md and "fewer than 1" not in md
    assert agent_rows(md)["openai:m"][3] == "n/a (a task has no scored trial)"

    # an LLM setting given to a run that has, and gets, no LLM agent is still refused
    scripted = tmp_path / "scripted"
    code, _, err = cli(
        ["run", "--task", "system.dark_mode", "--agent", "careful", "--trials", "1", "--out", str(scripted)]
        + ["--server", url, "--token", token, "-q"],
        monkeypatch,
        capsys,
    )
    assert code == 0, err
    for given, says in (
        (["--temperature", "0.5"], "set LLM agents, and this run has none"),
        (["--model-context", "512"], "--model-context sets the model server of local: agents, and this run has none"),
    ):
        code, _, err = cli(
            ["run", "--resume", "--out", str(scripted), "--server", url, "--token", token, "-q", *given],
            monkeypatch,
            capsys,
        )
        assert code == 2 and says in err, (given, err)


def test_a_resume_keeps_the_runs_trials_and_counts_only_its_own_episodes(http_server, tmp_path, monkeypatch, capsys):
    url, token = http_server
    run = tmp_path / "m1"
    where = ["--out", str(run), "--server", url, "--token", token, "-q"]
    agents = ["--agent", "careful", "--agent", "defeatist", "--agent", "overconfident"]
    code, _, err = cli(["run", "--task", "system.dark_mode", *agents, "--trials", "2", *where], monkeypatch, capsys)
    assert code == 0, err
    before = files(run)

    # --trials below the run's would print a 1-trial title above the run's pass^2 table: refused
    code, out, err = cli(["run", "--resume", "--agent", "careful", "--trials", "1", *where], monkeypatch, capsys)
    assert code == 2 and out == "", (out, err)
    err = " ".join(err.split())
    assert "--trials 1 is below this run's 2 trials per agent and task" in err, err
    assert "leave --trials out, give 2 or more" in err, err
    assert files(run) == before

    # a resume of one agent counts that agent's episodes as resumed, not the run's six
    code, out, err = cli(["run", "--resume", "--agent", "careful", *where], monkeypatch, capsys)
    assert code == 0, err
    assert "1 task x 2 trials" in out and "0 episodes run, 2 resumed" in out, out
    assert "pass^2" in out


def test_an_agent_of_the_run_with_no_episode_written_gets_an_na_row_and_the_warning(
    http_server, tmp_path, monkeypatch, capsys
):
    """A run interrupted before defeatist's episode was written (its lines taken out, as a
    kill would leave them): the manifest lists defeatist; report.md and the terminal table
    give it a row, with n/a, and the warning names it and says --resume runs it."""
    url, token = http_server
    run = tmp_path / "run"
    where = ["--out", str(run), "--server", url, "--token", token, "-q"]
    agents = ["--agent", "careful", "--agent", "defeatist"]
    code, _, err = cli(["run", "--task", "system.dark_mode", *agents, "--trials", "1", *where], monkeypatch, capsys)
    assert code == 0, err
    kept = [ln for ln in run_text(run).splitlines() if json.loads(ln)["agent"] != "defeatist"]
    (run / "trajectories.jsonl.zst").unlink()
    (run / "trajectories.jsonl").write_text("\n".join(kept) + "\n", encoding="utf-8")  # an older run's plain file

    code, out, err = cli(["report", str(run)], monkeypatch, capsys)
    assert code == 0, err
    md = (run / "report.md").read_text(encoding="utf-8")
    rows = agent_rows(md)
    assert rows["defeatist"][1:4] == ["0/0/0", "–", "n/a (a task has no scored trial)"], rows
    assert "**WARNING: pass^1 cannot be computed for defeatist (no scored trial)" in md, md
    assert "For defeatist, mcpgym run --resume with the run's --out runs the missing trials" in md

    # the terminal table of a resume that runs careful only shows defeatist too
    code, out, err = cli(["run", "--resume", "--agent", "careful", *where], monkeypatch, capsys)
    assert code == 0, err
    [row] = [ln for ln in out.splitlines() if ln.startswith("defeatist")]
    assert "0/0/0" in row and "n/a" in row, out
    assert "WARNING: pass^1 cannot be computed for defeatist" in err, err
