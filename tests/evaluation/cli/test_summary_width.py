"""The Quickstart's promise: ``mcpgym run`` with the three reference agents "prints one comparison
table", also in an 80-column terminal that is no TTY (it printed three blocks, one per agent;
found by a new-user try). When one row per agent does not fit even with the short headers, the
table turns: one column per agent (``transposed``); one block per agent only when that does not
fit either.

The run is real: ``mcpgym`` in a subprocess with its output piped (no TTY) and ``COLUMNS=80``,
the scripted agents against a real mcpgym HTTP server.
"""

from __future__ import annotations

import os
import subprocess
import sys

from rich.console import Console

from mcpgym.evaluation.report.tables import Column, print_table

AGENTS = ("careful", "overconfident", "defeatist")


def table_lines(text: str) -> list[str]:
    """The lines of the comparison table: from its header line (starting with "Agent") to the
    line before the pass^k note."""
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("Agent"))
    end = next(i for i, ln in enumerate(lines) if ln.startswith("pass^") and "chance" in ln)
    return lines[start:end]


def test_three_agents_print_one_table_at_80_columns_without_a_tty(http_server, tmp_path) -> None:
    url, token = http_server
    args = ["run", "--task", "stocks.buy_at_open", "--trials", "1", "--faults", "default"]
    for agent in AGENTS:
        args += ["--agent", agent]
    args += ["--server", url, "--token", token, "-q", "--out", "run"]
    env = {**os.environ, "COLUMNS": "80", "TERM": "dumb"}
    env.pop("FORCE_COLOR", None)
    proc = subprocess.run(
        [sys.executable, "-m", "mcpgym.evaluation.cli", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    assert all(len(line) <= 80 for line in out.splitlines()), out
    table = table_lines(out)
    assert sum(1 for ln in table if set(ln.strip()) == {"─"}) == 1, out  # one table: one rule
    assert "Success (95% CI):" not in out and "Success:" not in out  # no block per agent
    header = table[0].split()
    if header[0] == "Agent" and sorted(header[1:]) == sorted(AGENTS):  # one column per agent
        labels = [ln.split("  ")[0].strip() for ln in table[2:]]
        assert labels[:4] == ["Episodes run/scored/errored", "Success (95% CI)", "pass^1", "Verification"], out
        assert labels[-1] == "Calls valid/invalid/error", out
        for line, label in zip(table[2:], labels, strict=True):  # one cell per agent in every row
            assert len(line[len(label) :].split()) >= len(AGENTS), line
    else:  # one row per agent (a layout with narrower cells)
        assert sorted(ln.split()[0] for ln in table[2:] if ln.split()[0] in AGENTS) == sorted(AGENTS), out


def test_the_transposed_layout_fits_or_falls_back_and_keeps_cells_whole() -> None:
    cols = [
        Column("Agent"),
        Column("Episodes run/scored/errored", "Eps", "episodes run/scored/errored", justify="right"),
        Column("Success (95% CI)", "Success", "success rate [95% interval]", justify="right"),
        Column("Calls valid/invalid/error", "Calls", "tool calls valid/invalid/error", justify="right"),
        *(Column(f"Figure number {i}", f"F{i}", f"figure {i}", justify="right") for i in range(8)),
    ]
    rows = [[name, "8/8/0", "100% [68–100]", "86/0/14", *["100%"] * 8] for name in AGENTS]
    cases = (
        (200, True, "full"),
        (80, True, "transposed"),  # too wide as rows (13+5+13+7+8*4 cells + gaps > 80)
        (80, False, "stacked"),  # without transpose, as before
        (50, True, "transposed"),  # the short headers as row labels, with the legend
        (30, True, "stacked"),  # three 13-cell columns cannot fit 30
    )
    for width, transpose, want in cases:
        console = Console(width=width, record=True, highlight=False)
        got = print_table(console, cols, rows, transpose=transpose)
        text = console.export_text()
        assert got == want, (width, transpose, text)
        assert all(len(ln) <= width for ln in text.splitlines()), text
        if want != "stacked":  # a table never breaks a cell (a block may wrap a field at spaces)
            for cell in ("100% [68–100]", "86/0/14", "overconfident"):
                assert any(cell in ln for ln in text.splitlines()), (cell, text)
        if want == "transposed":
            head = text.splitlines()[0].split()
            assert head == ["Agent", *AGENTS], text
            short = width < 60
            assert ("Eps: episodes run/scored/errored" in " ".join(text.split())) is short, text
            label = "Eps" if short else "Episodes"
            assert any(ln.startswith(label) and ln.split()[-3:] == ["8/8/0"] * 3 for ln in text.splitlines()), text
