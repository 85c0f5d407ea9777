"""Loud failures: a run whose episodes mostly errored exits 1 and names the first causes
(endpoint, status, attempts) on stderr and in report.md; ``mcpgym score`` of a file no format
reads as a transcript exits 2 naming the formats tried (issue 37's newcomer frictions, each
reproduced here as the issue met it)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mcpgym.evaluation.formats import FORMATS
from tests.support.cli_runs import cli_at_width

DEAD = "http://127.0.0.1:9/v1"
"""Nothing listens on port 9 (discard) of the loopback: every connection is refused."""


def _run(agents: list[str], server: tuple[str, str], out: Path) -> list[str]:
    url, token = server
    args = ["run", *[a for agent in agents for a in ("--agent", agent)], "--task", "system.dark_mode"]
    args += ["--task", "weather.use_fahrenheit", "--trials", "2", "--faults", "none", "--server", url]
    return [*args, "--token", token, "--agent-option", "max_retries=1", "-q", "--out", str(out)]


def test_a_run_whose_episodes_all_errored_fails_and_names_the_cause(
    http_server: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", DEAD)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    code, out, err = cli_at_width(_run(["openai:gpt-x"], http_server, tmp_path / "dead"), 200, monkeypatch, capsys)
    assert code == 1, err  # before: 0, with "0 scored, 4 errored" and a table of dashes
    flat = " ".join(err.split())
    assert "ERROR: 4 of 4 episodes errored (provider or harness failures, in no success figure); the run failed" in flat
    assert re.search(r"openai:gpt-x, \S+ trial \d \(and 3 more episodes\): provider_error: connection failed", flat)
    assert f"(POST {DEAD}/chat/completions; gave up after 2 attempts)" in flat
    assert "Traceback" not in err and "report:" in out  # the report is written all the same
    md = (tmp_path / "dead" / "report.md").read_text(encoding="utf-8")
    assert "**ERROR: 4 of 4 episodes errored" in md
    assert f"POST {DEAD}/chat/completions; gave up after 2 attempts" in md.replace("\\", "")


def test_a_run_with_some_errored_episodes_warns_and_succeeds(
    http_server: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", DEAD)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    args = _run(["careful", "openai:gpt-x"], http_server, tmp_path / "half")
    code, _, err = cli_at_width(args, 200, monkeypatch, capsys)
    assert code == 0, err  # half errored: not most; the careful agent's figures stand
    flat = " ".join(err.split())
    assert "WARNING: 4 of 8 episodes errored" in flat and "the run failed" not in flat
    assert "connection failed" in flat


def test_score_refuses_a_file_no_format_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    readme = Path(__file__).resolve().parents[3] / "README.md"
    for extra in ([], ["--json"]):
        code, out, err = cli_at_width(["score", str(readme), *extra], 120, monkeypatch, capsys)
        assert code == 2, out  # before: read as a ComplexMCP transcript, empty tables, exit 0
        # Refused by format detection (no marker of any format) or, for a file some format
        # claims, by the no-call rule: either way every format tried is named, no table printed.
        said = " ".join((out + err).split())
        assert "tried" in said and all(f in said for f in FORMATS if f != "auto"), said
        assert "Traceback" not in said and "| Success" not in said
