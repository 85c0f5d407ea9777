"""What ``mcpgym run`` prints when it ends, as a new user reads it at 80, 120 and 200 columns.

Every run here is real (``mcpgym`` in-process against a real server, scripted agents).
"""

from __future__ import annotations

import pytest

from mcpgym.evaluation.cli.app import main

WIDTHS = (80, 120, 200)


def cli(
    args: list[str], width: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> tuple[int, str, str]:
    """Run ``mcpgym ARGS`` at a terminal width; return (exit code, stdout, stderr)."""
    monkeypatch.setenv("COLUMNS", str(width))
    with pytest.raises(SystemExit) as exc:
        main(args)
    out, err = capsys.readouterr()
    return exc.value.code, out, err


@pytest.fixture(scope="module")
def one_episode_run(http_server, tmp_path_factory) -> list[str]:
    """The arguments of a run of one episode (careful, system.dark_mode, 1 trial, no faults)."""
    url, token = http_server
    out = tmp_path_factory.mktemp("summary") / "run"
    return [
        "run",
        "--task",
        "system.dark_mode",
        "--agent",
        "careful",
        "--trials",
        "1",
        "--faults",
        "none",
        "--server",
        url,
        "--token",
        token,
        "-q",
        "--out",
        str(out),
    ]


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
