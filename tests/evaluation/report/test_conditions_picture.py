"""The README's picture of the condition curves is of this run: one ``mcpgym run`` of the three
scripted agents over the smoke suite with the fault-profile and tool-exposure axes
(:data:`COMMAND`, the README's line as written).

``docs/images/conditions.json`` holds the figures the picture shows (every point of every
curve, as the report computes them), the PNG's size and sha256. The tests run the command and
check that its figures are the recorded ones, that ``docs/images/conditions.png`` is the PNG the
record names, and (in headless Chromium) that the report page draws the recorded panels at the
recorded width. ``python -m tests.evaluation.report.test_conditions_picture --record`` runs the
command, takes the screenshot in Chromium and writes both files again.

The browser test needs Chromium (Debian's ``chromium``); without it it is skipped, unless
``MCPGYM_REQUIRE_BROWSER=1`` (set by ``.ci/run``), where it fails.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import struct
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mcpgym.evaluation.cli.app import app
from mcpgym.evaluation.report.conditions import ConditionFigures, curves
from mcpgym.evaluation.report.run_report import build_report
from tests.support.cdp import Browser, find_chromium, require_browser

ROOT = Path(__file__).resolve().parents[3]
PICTURE = ROOT / "docs" / "images" / "conditions.png"
RECORD = ROOT / "docs" / "images" / "conditions.json"
COMMAND = "mcpgym run --suite smoke --trials 1 --faults none,default,harsh --tools task,task+20,task+100,all --out runs/conditions"
"""The README's command (the test runs it with another ``--out``)."""
VIEWPORT = 1280

CLIP_JS = """(() => {
  const a = document.getElementById('conditions'), b = document.getElementById('conditions-tables');
  const top = a.getBoundingClientRect().top + scrollY, bottom = b.getBoundingClientRect().top + scrollY;
  return {x: 0, y: Math.floor(top - 8), width: document.documentElement.clientWidth, height: Math.ceil(bottom - top)};
})()"""
"""The page region of the picture: the Conditions section's charts (down to its tables)."""


def run_command(out: Path) -> Path:
    """Run :data:`COMMAND` with ``--out out``; return the run directory.

    Raises:
        AssertionError: when the run exits non-zero (its output in the message).
    """
    argv = shlex.split(COMMAND)[1:]
    argv[argv.index("--out") + 1] = str(out)
    result = CliRunner().invoke(app, [*argv, "--quiet"])
    assert result.exit_code == 0, result.output
    return out


def figures(figs: ConditionFigures) -> dict[str, Any]:
    """Every point of every curve of ``figs`` as JSON: ``{"PANEL": {agent: [value or null]}}``
    (values rounded to 6 digits), and the mean tools listed per exposure."""
    panels: dict[str, Any] = {}
    for axis in ("faults", "tools"):
        for c in curves(figs, axis):
            key = f"{c.metric.value} vs {axis}" + (f" ({c.fixed})" if c.fixed else "")
            panels[key] = {
                "x": c.x,
                "series": {
                    a: [None if p.value is None else round(p.value, 6) for p in pts] for a, pts in c.series.items()
                },
            }
    return {"panels": panels, "tools_listed": figs.tools_listed}


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) of a PNG from its IHDR chunk.

    Raises:
        AssertionError: when ``data`` is no PNG.
    """
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def screenshot(run: Path, path: Path, exe: str) -> dict[str, Any]:
    """Open the run's report.html at :data:`VIEWPORT` px and save the Conditions charts to
    ``path``; return what the page showed (panel count, clip, console errors)."""
    with Browser(exe) as b:
        b.open((run / "report.html").resolve().as_uri(), VIEWPORT)
        clip = b.eval(CLIP_JS)
        panels = b.eval("document.querySelectorAll('#conditions ~ .curves svg.curve').length")
        b.screenshot(path, clip=clip)
        return {"clip": clip, "panels": panels, "errors": list(b.errors)}


@pytest.fixture(scope="module")
def picture_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The README's run (3 scripted agents x 8 smoke tasks x 1 trial x 12 conditions)."""
    return run_command(tmp_path_factory.mktemp("picture") / "conditions")


def test_the_readme_shows_this_command_and_picture() -> None:
    readme = (ROOT / "README.md").read_text()
    assert COMMAND in readme
    assert "docs/images/conditions.png" in readme


def test_the_picture_is_of_this_runs_figures(picture_run: Path) -> None:
    record = json.loads(RECORD.read_text())
    report = build_report(picture_run, rescore=False)
    assert report.conditions is not None
    assert figures(report.conditions) == record["figures"], "the run's figures changed: --record the picture again"
    data = PICTURE.read_bytes()
    assert hashlib.sha256(data).hexdigest() == record["png_sha256"], "conditions.png is not the recorded picture"
    assert list(png_size(data)) == [record["clip"]["width"], record["clip"]["height"]]
    assert record["command"] == COMMAND


def test_the_page_draws_the_recorded_panels(picture_run: Path, tmp_path: Path) -> None:
    exe = require_browser()
    record = json.loads(RECORD.read_text())
    shown = screenshot(picture_run, tmp_path / "conditions.png", exe)
    assert shown["errors"] == []
    assert shown["panels"] == len(record["figures"]["panels"]) == 2 * 4 + 3 * 3
    assert shown["clip"]["width"] == record["clip"]["width"]  # the same page width as the picture
    width, height = png_size((tmp_path / "conditions.png").read_bytes())
    assert width == record["clip"]["width"] and abs(height - record["clip"]["height"]) < 0.1 * record["clip"]["height"]


def record() -> None:
    """Run :data:`COMMAND`, screenshot its charts and write conditions.png and conditions.json."""
    exe = find_chromium()
    if exe is None:
        raise SystemExit("no chromium on PATH (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as tmp:
        run = run_command(Path(tmp) / "conditions")
        report = build_report(run, rescore=False)
        assert report.conditions is not None
        PICTURE.parent.mkdir(parents=True, exist_ok=True)
        shown = screenshot(run, PICTURE, exe)
        assert shown["errors"] == [], shown["errors"]
        data = PICTURE.read_bytes()
        width, height = png_size(data)
        doc = {
            "command": COMMAND,
            "png_sha256": hashlib.sha256(data).hexdigest(),
            "clip": {"width": width, "height": height},
            "figures": figures(report.conditions),
        }
        RECORD.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(f"wrote {PICTURE} ({width}x{height}) and {RECORD}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--record"]:
        raise SystemExit("usage: python -m tests.evaluation.report.test_conditions_picture --record")
    record()
