"""``report.md`` shows what agents and task files hold as text, never as markup (issue 29).

The report is rendered by a real CommonMark parser with GFM tables (markdown-it-py): no raw HTML
survives, no table gains a column, no emphasis, code span or link appears that the data did not
ask to be shown literally.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from mcpgym.evaluation.records.trajectory import Trajectory, write_trajectories
from mcpgym.evaluation.report.markdown_text import md_text
from mcpgym.evaluation.report.run_report import write_report

HOSTILE = {
    "script": "<script>alert(1)</script>",
    "img": '<img src=x onerror="alert(1)">',
    "pipes": "a|b||c",
    "backticks": "``code`` and `more`",
    "emphasis": "*bold* __strong__ _em_",
    "link": "[click](javascript:alert(1))",
    "image": "![x](https://example.invalid/i.png) and [ref][1]",
    "autolink": "<https://example.invalid/x>",
    "newline": "line one\n| injected | row |",
    "entity": "&lt;script&gt; &amp;",
    "backslash": "C:\\path\\",
}

RENDER = MarkdownIt("commonmark").enable("table")


def text_of(html: str) -> str:
    """The visible text of rendered HTML (tags dropped, the few entities markdown-it emits decoded)."""
    text = re.sub(r"<[^>]+>", "", html)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")


@pytest.mark.parametrize("value", list(HOSTILE.values()), ids=list(HOSTILE))
def test_md_text_renders_exactly_its_characters(value: str) -> None:
    html = RENDER.render(md_text(value))
    assert text_of(html).strip() == value.replace("\n", " ")
    for tag in ("<script", "<img", "<a ", "<code", "<em", "<strong", "<table", "<del", "<s>"):
        assert tag not in html, (tag, html)


def test_dark_mode_and_plain_ids_are_left_readable() -> None:
    for plain in ("system.dark_mode", "careful", "openai:gpt-4o-mini", "shop_add_to_cart"):
        assert md_text(plain) == plain


def hostile_run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    trajs = [
        Trajectory(
            episode_id=f"ep{i}",
            task_id=f"task {name}: {value}",
            agent=f"agent {name}: {value}",
            trial=0,
            level=1,
            apps=["system"],
            steps=[],
            final_message=value,
            ledger=[],
        )
        for i, (name, value) in enumerate(HOSTILE.items())
    ]
    write_trajectories(run / "trajectories.jsonl", trajs)
    (run / "manifest.json").write_text(
        json.dumps(
            {
                "manifest_version": 1,
                "suite": HOSTILE["script"],
                "fault_profile": {"name": HOSTILE["link"], "rates": {}},
                "agents": [{"name": t.agent, "describe": {"model": HOSTILE["img"]}} for t in trajs],
            }
        )
    )
    return run


def test_report_md_escapes_agent_names_task_ids_and_manifest_values(tmp_path: Path) -> None:
    run = hostile_run(tmp_path)
    md, _ = write_report(run)
    source = md.read_text()
    assert "<script>" not in source and "<img" not in source
    html = RENDER.render(source)
    for tag in ("<script", "<img", '<a href="javascript', "<code"):
        assert tag not in html, tag
    visible = text_of(html)
    for name, value in HOSTILE.items():
        assert f"agent {name}: {value.replace(chr(10), ' ')}" in visible, name
    # every table row has as many cells as its header: no pipe opened a column
    for table in re.findall(r"<table>.*?</table>", html, flags=re.S):
        widths = {len(re.findall(r"<t[hd][ >]", row)) for row in re.findall(r"<tr>.*?</tr>", table, flags=re.S)}
        assert len(widths) == 1, widths
