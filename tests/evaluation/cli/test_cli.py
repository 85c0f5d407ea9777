"""The command line as a new user meets it: widths at 80 and 120 columns, help texts, one-line errors.

Every command runs for real, in-process through :func:`mcpgym.evaluation.cli.main` (what the
``mcpgym`` script calls), with ``COLUMNS`` set the way a terminal sets it.
"""

from __future__ import annotations

import json
import re
from importlib.metadata import version
from pathlib import Path

import pytest
from rich.console import Console

from mcpgym.evaluation.cli import app, main
from mcpgym.evaluation.records.trajectory import ToolCallStep, Trajectory, write_trajectories
from mcpgym.evaluation.report.run_report import print_comparison
from mcpgym.evaluation.report.tables import Column, fitted_widths, pack_fields, print_table, terminal_console
from mcpgym.evaluation.run.runner import compute_scores
from mcpgym.evaluation.scoring.scorer import EpisodeScores
from tests.support.cli_runs import cli_at_width

WIDTHS = (80, 120)
COMMANDS = ("serve", "tools", "run", "score", "export", "report", "tasks", "play")


cli = cli_at_width


def assert_fits(text: str, width: int, whole: list[str]) -> None:
    """No line is longer than ``width``, and each string of ``whole`` appears unbroken on one line."""
    lines = text.splitlines()
    too_long = [ln for ln in lines if len(ln) > width]
    assert not too_long, f"{len(too_long)} line(s) over {width}: {too_long[:3]}"
    for token in whole:
        assert any(token in ln for ln in lines), f"{token!r} is broken or missing"


# -- widths -----------------------------------------------------------------------------------
@pytest.mark.parametrize("width", WIDTHS)
def test_tasks_fit_and_ids_stay_whole(width, monkeypatch, capsys):
    code, out, _ = cli(["tasks", "--json"], width, monkeypatch, capsys)
    ids = [t["id"] for t in json.loads(out)]
    tags = {tag for t in json.loads(out) for tag in t["tags"]}
    code, out, err = cli(["tasks"], width, monkeypatch, capsys)
    assert (code, err) == (0, "")
    assert_fits(out, width, [f"{i} " for i in ids] + sorted(tags))
    # a task id can be copied: it is a whole token at the start of its line
    starts = {ln.split()[0] for ln in out.splitlines() if ln.strip()}
    assert set(ids) <= starts


@pytest.mark.parametrize("width", WIDTHS)
def test_tools_compact_is_one_line_per_tool(width, monkeypatch, capsys):
    _, out, _ = cli(["tools", "--app", "shop", "--json"], width, monkeypatch, capsys)
    rows = json.loads(out)
    code, out, err = cli(["tools", "--app", "shop"], width, monkeypatch, capsys)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert len(lines) == len(rows) + 1 == 25  # a heading, then one line per tool
    assert_fits(out, width, [r["name"] for r in rows])
    for row, line in zip(rows, lines[1:], strict=True):
        name, kind, summary = line.split(None, 2)
        assert (name, kind) == (row["name"], row["kind"])
        described = " ".join(row["description"].split())
        assert described.startswith(summary.rstrip("…").rstrip(",;:")), (summary, described)  # cut at a word


@pytest.mark.parametrize("width", WIDTHS)
def test_tools_full_shows_everything_wrapped_at_words(width, monkeypatch, capsys):
    _, out, _ = cli(["tools", "--app", "shop", "--json"], width, monkeypatch, capsys)
    rows = json.loads(out)
    code, out, _ = cli(["tools", "--app", "shop", "--full"], width, monkeypatch, capsys)
    assert code == 0
    assert_fits(out, width, [f"{r['name']} (shop, {r['kind']})" for r in rows])
    flat = " ".join(out.split())
    for r in rows:
        assert " ".join(r["description"].split()) in flat  # every word, in order, none split
        for code_, tools in r["remedies"].items():
            assert f"{code_} -> {', '.join(tools)}" in flat


def _scored_run(tmp_path: Path) -> Path:
    """A run directory of hand-made trajectories with long task ids and several agents."""
    trajs = []
    for i, agent in enumerate(("careful", "overconfident", "openai:gpt-4o-mini-2024-07-18")):
        for trial in range(2):
            steps = [
                ToolCallStep(step=1, tool="shop_get_item", arguments={"item_id": "it_1"}, result={"id": "it_1"}),
                ToolCallStep(
                    step=2,
                    tool="shop_add_to_cart",
                    arguments={"item_id": "it_1", "quantity": 1},
                    is_error=True,
                    error_code="transient",
                    fault="transient",
                    result={"error": {"code": "transient", "message": "try again"}},
                ),
                ToolCallStep(
                    step=3, tool="shop_add_to_cart", arguments={"item_id": "it_1", "quantity": 1}, result={"cart": []}
                ),
            ]
            trajs.append(
                Trajectory(
                    episode_id=f"ep{i}{trial}",
                    task_id="cross.brokerage_tops_up_wallet_for_flight",
                    agent=agent,
                    trial=trial,
                    level=2,
                    apps=["system", "shop"],
                    steps=steps[: 2 + i % 2],
                    final_message="done",
                    ledger=[],
                )
            )
    run = tmp_path / "run"
    write_trajectories(run / "trajectories.jsonl", trajs)
    return run


@pytest.mark.parametrize("width", WIDTHS)
def test_score_fits_and_names_the_task_of_every_episode(width, tmp_path, monkeypatch, capsys):
    _scored_run(tmp_path)
    monkeypatch.chdir(tmp_path)  # a relative path, as typed: a path longer than the line cannot be wrapped
    code, out, err = cli(["score", "run"], width, monkeypatch, capsys)
    assert code == 0, err
    assert_fits(out, width, ["cross.brokerage_tops_up_wallet_for_flight", "openai:gpt-4o-mini-2024-07-18"])
    assert "episode ep" not in out  # the task id names an episode, not the bare episode id
    assert out.count("cross.brokerage_tops_up_wallet_for_flight") == 6


@pytest.mark.parametrize("width", WIDTHS)
def test_comparison_table_fits(width, monkeypatch):
    monkeypatch.setenv("COLUMNS", str(width))
    eps = [
        EpisodeScores(
            episode_id=f"{a}{t}",
            task_id="t.one",
            agent=a,
            trial=t,
            success=bool(t),
            writes=2,
            verified_writes=1,
            recoverable_errors=1,
            recovery_attempts=1,
            recoveries=t,
            valid_calls=14,
            error_calls=1,
            tool_calls=15,
        )
        for a in ("careful", "overconfident", "defeatist")
        for t in range(3)
    ]
    console = terminal_console()
    with console.capture() as cap:
        layout = print_comparison(console, compute_scores(eps), title="suite core: 1 task x 3 trials, faults default")
    text = cap.get()
    # 11 columns of figures need ~130 cells with full headers: short headers and a legend
    assert layout == "short"
    assert_fits(text, width, ["overconfident", "67% [21–94]", "42/0/3"])
    header = next(ln for ln in text.splitlines() if ln.startswith("Agent"))
    words = header.split()
    assert words == [
        "Agent",
        "Eps",
        "Success",
        "pass^3",
        "Verif",
        "FalseOK",
        "Pre",
        "Try",
        "Rec",
        "Defeat",
        "Calls",
    ]
    assert "Verif: writes read back afterwards" in " ".join(text.split())
    with console.capture() as cap:
        assert print_comparison(console, compute_scores(eps[:3])) == "short"  # one agent: the same layout


def test_layouts_fall_back_to_stacked_and_never_split_a_cell():
    cols = [
        Column("Identifier"),
        Column("Long figure heading", "Fig", "figure", justify="right"),
        Column("Notes", wrap=True),
    ]
    rows = [["a.very_long_task_identifier_indeed", "100% [68–100]", "alpha beta gamma-delta epsilon"]]
    # least widths: the id and the figure whole, the prose at its longest word ("gamma-delta")
    assert fitted_widths(cols, rows, 34 + 13 + 11 + 2, short=True) == [34, 13, 11]
    assert fitted_widths(cols, rows, 34 + 13 + 11 + 1, short=True) is None
    for width, layout in ((120, "full"), (62, "short"), (40, "stacked")):
        console = Console(width=width)
        with console.capture() as cap:
            got = print_table(console, cols, rows, notes=["a note long enough to need wrapping " * 3])
        assert got == layout
        text = cap.get()
        assert_fits(text, width, ["a.very_long_task_identifier_indeed", "100% [68–100]", "gamma-delta"])
        if layout != "stacked":  # a header may wrap between its words, never inside one
            assert [w for ln in text.splitlines()[:3] for w in ln.split() if w.isalpha()][:3] == (
                ["Identifier", "Long", "figure"] if layout == "full" else ["Identifier", "Fig", "Notes"]
            )
    assert pack_fields(["a: 1", "b: 2", "c: 3"], 10, indent="  ") == ["  a: 1", "  b: 2", "  c: 3"]
    assert pack_fields(["a: 1", "b: 2"], 20, indent="  ") == ["  a: 1  b: 2"]


def test_run_table_fits_80_columns_and_names_scores_json(http_server, tmp_path, monkeypatch, capsys):
    url, token = http_server
    monkeypatch.chdir(tmp_path)
    out_dir = Path("r")
    code, out, err = cli(
        [
            "run",
            "--task",
            "system.dark_mode",
            "--agent",
            "careful",
            "--agent",
            "overconfident",
            "--trials",
            "1",
            "--out",
            str(out_dir),
            "--server",
            url,
            "--token",
            token,
            "-q",
        ],
        80,
        monkeypatch,
        capsys,
    )
    assert code == 0, err
    assert_fits(out, 80, ["careful", "overconfident", "100% [21–100]"])
    last = out.splitlines()[-3:]
    assert last == [
        f"report: {out_dir / 'report.html'} (and report.md)",
        f"trajectories: {out_dir / 'trajectories.jsonl.zst'}",
        f"scores: {out_dir / 'scores.json'}",
    ]
    assert (tmp_path / "r" / "scores.json").exists()


# -- help -------------------------------------------------------------------------------------
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("command", ("",) + COMMANDS)
def test_help_reads_like_a_well_kept_cli(command, width, monkeypatch, capsys):
    code, out, err = cli([command, "--help"] if command else ["--help"], width, monkeypatch, capsys)
    assert (code, err) == (0, "")
    assert_fits(out, width, [])
    assert out.startswith(f"Usage: mcpgym {command}".rstrip() + " ")
    for bad in ("<bool>", "<str>", "<int", "<float", "<list", "<path>", "{paths}", "x>="):
        assert bad not in out, f"{bad!r} in help of {command or 'mcpgym'}"
    # no word split at a line end: a line never ends inside a hyphenated word
    assert not re.search(r"[A-Za-z]-\n", out)
    options = out.split("Options:")[1]
    for line in options.splitlines():
        m = re.match(r"\s+(?:-\w, )?(--[\w-]+)(?: (\S+))?", line)
        if not m:
            continue
        flag, value = m.groups()
        if value:  # an option's value is named in capitals (DIR, N, SECONDS) or as [a|b] choices
            assert re.fullmatch(r"[A-Z_]+|\[[\w|]+\]", value), line
    if command == "run":
        flat = " ".join(out.split())
        assert "--resume Continue the run" in flat  # a boolean flag shows no value
        assert "-o, --out DIR" in flat and "--trials N" in flat and "--timeout SECONDS" in flat
        assert "[default: 3; at least 1]" in flat
    if command == "score":
        assert "Usage: mcpgym score [OPTIONS] PATH..." in out
        assert "mcp-log |" in out  # the format list is not split at the hyphen
    if command == "":
        for name in COMMANDS:
            assert re.search(rf"^  {name}\s+\S", out, re.M)  # each command with its short help
        assert "--version" in out and "--debug" in out


def test_version(monkeypatch, capsys):
    code, out, err = cli(["--version"], 80, monkeypatch, capsys)
    assert (code, out, err) == (0, f"mcpgym {version('mcpgym')}\n", "")


def test_every_command_is_polished():
    import typer

    group = typer.main.get_command(app)
    assert set(COMMANDS) <= set(group.commands)
    for cmd in group.commands.values():
        assert cmd.short_help and "\n" not in cmd.short_help


# -- errors -----------------------------------------------------------------------------------
ERRORS = [
    (["run", "--trials", "0"], "--trials"),
    (
        ["run", "--out", "/proc/nope/run", "--task", "system.dark_mode", "--agent", "careful", "--trials", "1"],
        "--out /proc/nope/run cannot be created as a directory: No such file or directory",
    ),
    (["run", "--faults", "no_such_profile.toml"], "no_such_profile.toml"),
    (["run", "--tools", "bogus"], "bogus"),
    (["run", "--agent", "nosuchagent", "--task", "system.dark_mode"], "nosuchagent"),
    (["run", "--no-such-flag"], "--no-such-flag"),
    (["score", "/nonexistent/file.jsonl", "--format", "csv"], "unknown format 'csv'"),
    (["tools", "--app", "nope"], "unknown app 'nope'"),
    (["tasks", "--suite", "nope"], "unknown suite 'nope'"),
    (["serve", "--port", "99999"], "--port"),
    (["serve", "--faults", "nope"], "nope"),
    (["serve", "--reward", "shaped"], "--reward applies to --openenv only"),
    (["serve", "--openenv", "--reward", "shapd"], "unknown reward profile 'shapd'"),
    (["nosuchcommand"], "nosuchcommand"),
]


@pytest.mark.parametrize(("args", "says"), ERRORS, ids=[" ".join(a)[:40] for a, _ in ERRORS])
def test_user_errors_are_one_line_with_exit_2(args, says, monkeypatch, capsys):
    code, out, err = cli(args, 80, monkeypatch, capsys)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("error: "), err
    assert says in err
    assert "Traceback" not in err


@pytest.mark.parametrize("command", [["report"], ["cat"], ["export", "--format", "atif"]])
def test_a_path_that_is_no_run_directory_names_what_is_looked_for(command, tmp_path, monkeypatch, capsys):
    """Runs write trajectories.jsonl.zst (an older run's plain trajectories.jsonl still loads):
    every command that takes a run directory names both, as one error line, for an empty
    directory and for a path that does not exist (report and export said only the old name,
    or export the file it would have written)."""
    code, out, err = cli([*command, str(tmp_path)], 80, monkeypatch, capsys)
    assert (code, out) == (2, ""), err
    assert err == (
        f"error: {tmp_path} is not a run directory: it has no trajectories.jsonl.zst "
        "(nor an older run's trajectories.jsonl)\n"
    )
    code, out, err = cli([*command, str(tmp_path / "nope")], 80, monkeypatch, capsys)
    assert (code, out) == (2, ""), err
    assert (
        err == f"error: {tmp_path / 'nope'}: no such file or directory (a run directory holds trajectories.jsonl.zst)\n"
    )


def test_debug_shows_the_traceback(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "80")
    args = ["run", "--out", "/proc/nope/run", "--task", "system.dark_mode", "--agent", "careful", "--trials", "1"]
    with pytest.raises(OSError):
        main(args + ["--debug"])
    with pytest.raises(OSError):
        main(["--debug"] + args)


def test_unexpected_errors_are_one_line_with_exit_1(monkeypatch, capsys):
    import mcpgym.tools.catalog as catalog

    def broken(app=None):  # noqa: ANN001, ANN202 - stands in for a bug
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(catalog, "catalog", broken)
    code, out, err = cli(["tools"], 80, monkeypatch, capsys)
    assert (code, out) == (1, "")
    assert err == "error: unexpected RuntimeError: boom second line (run again with --debug for the traceback)\n"
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(RuntimeError):
        main(["tools", "--debug"])


def test_a_closed_pipe_ends_a_listing_quietly_with_exit_0() -> None:
    """``mcpgym tasks | head -1`` used to exit 1 without a word (rich's console on a broken pipe)."""
    import subprocess
    import sys

    for args in (["tasks"], ["tasks", "--json"]):
        proc = subprocess.Popen(
            [sys.executable, "-m", "mcpgym.evaluation.cli", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        assert proc.stdout is not None and proc.stderr is not None
        first = proc.stdout.readline()
        proc.stdout.close()  # the reader has what it wanted
        code, err = proc.wait(timeout=120), proc.stderr.read()
        proc.stderr.close()
        assert first and (code, err) == (0, b""), (args, code, err)


def test_run_options_are_the_run_config_flags_in_field_order(monkeypatch, capsys):
    """`mcpgym run`'s options are generated from RunConfig's Flag metadata (a new run option is
    a field, docs/design.md §1): every flag is listed with its help text, in field order, then
    the --proxy options and --complexmcp (docs/complexmcp.md)."""
    from mcpgym.evaluation.run.config import Flag, RunConfig

    flags = [m for info in RunConfig.model_fields.values() for m in info.metadata if isinstance(m, Flag)]
    code, out, _ = cli(["run", "--help"], 400, monkeypatch, capsys)
    assert code == 0
    listed = re.findall(r"^  (?:-\w, )?(--[\w-]+)", out.split("Options:")[1], re.M)
    assert listed == [f.names[0] for f in flags] + ["--proxy", "--catalog", "--fault-seed", "--complexmcp", "--help"]
    flat = " ".join(out.split())
    for f in flags:
        assert " ".join(f.help.split()) in flat, f.names


def _commands(group, path=()):
    """(command path, click command) of every command under ``group``, nested ones too."""
    for name, cmd in group.commands.items():
        yield (*path, name), cmd
        if hasattr(cmd, "commands"):
            yield from _commands(cmd, (*path, name))


def test_every_help_reads_as_plain_text(monkeypatch, capsys):
    """Help is built from docstrings, which are reStructuredText: `mcpgym tasks --help` showed
    ``core`` with RST's double backticks (found by a new-user try). No command's help, nor the
    command list, shows RST literals or roles; each command's short help is one sentence-sized
    line in the list."""
    import typer

    group = typer.main.get_command(app)
    helps = [(("mcpgym",), cli(["--help"], 120, monkeypatch, capsys))]
    for path, _ in _commands(group):
        helps.append((path, cli([*path, "--help"], 120, monkeypatch, capsys)))
    assert len(helps) > len(COMMANDS)
    for path, (code, out, err) in helps:
        assert code == 0 and err == "", (path, err)
        assert "``" not in out and not re.search(r":(func|mod|class|meth|attr|data|obj|exc):`", out), (path, out)
    listed = helps[0][1][1].split("Commands:")[1]
    assert "`core`" not in listed  # tasks' short help is its first line, not its whole docstring


def test_each_command_is_summed_up_in_one_sentence_and_help_names_json_values(monkeypatch, capsys):
    """``mcpgym --help`` lists every command with a one-sentence summary (export's was its whole
    multi-sentence docstring); ``tasks --help`` names the value ``--json`` shows (null, not
    Python's None)."""
    code, out, _ = cli(["--help"], 200, monkeypatch, capsys)
    assert code == 0
    listed = out.split("Commands:")[1]
    summaries = dict(re.findall(r"^  (\w+)\s+(.+?)(?=^  \w|\Z)", listed, re.S | re.M))
    assert {"export", "play", "cat", "tasks"} <= set(summaries)
    for name, text in summaries.items():
        flat = " ".join(text.split())
        assert flat.endswith(".") and ". " not in flat and len(flat) <= 100, (name, flat)
    assert (
        " ".join(summaries["export"].split())
        == "Write a run's episodes in another format (ATIF, CSV, leaderboard JSON)."
    )
    code, out, _ = cli(["tasks", "--help"], 200, monkeypatch, capsys)
    flat = " ".join(out.split())
    assert code == 0 and "null for the generated `full` suite" in flat and "None" not in flat
    code, out, _ = cli(["tasks", "--suite", "full", "--json"], 200, monkeypatch, capsys)
    assert code == 0 and json.loads(out)[0]["oracle_calls"] is None and '"oracle_calls": null' in out
