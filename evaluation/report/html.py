"""``report.html``: one self-contained page (inline CSS, SVG and script; no fonts, links or
anything to fetch) with the run facts, the comparison table, bar charts of the behaviour rates
per agent and of success per level and per app, the detail tables of
:mod:`mcpgym.evaluation.report.run_report`, and the trajectory viewer (:mod:`mcpgym.evaluation.report.viewer`).

The charts are drawn by :func:`svg_bar_chart`, a small grouped-bar renderer for rates in
[0, 1] with optional 95% interval whiskers.
"""

from __future__ import annotations

import re
from html import escape

from mcpgym.evaluation.records.scores import AgentMetrics, Metrics
from mcpgym.evaluation.report.compare import comparison_html
from mcpgym.evaluation.report.condition_charts import conditions_section
from mcpgym.evaluation.report.conditions import ConditionFigures
from mcpgym.evaluation.report.fault_kinds import FAULT_KIND_HEADER, FAULT_KIND_NOTE, fault_kind_rows, fault_kind_table
from mcpgym.evaluation.report.run_report import (
    AGENTS_LEGEND,
    BEHAVIOUR_METRICS,
    DETAILS_LEGEND,
    TASKS_NOTE,
    Report,
    app_rows,
    comparison_rows,
    episode_note,
    errored_text,
    extra_rows,
    level_rows,
    pass_k_warning,
    pct,
    run_facts,
    task_rows,
    text_call_warning,
)
from mcpgym.evaluation.report.svg_style import PALETTE, coord, legend_layout
from mcpgym.evaluation.report.viewer import VIEWER_CSS, VIEWER_JS, render_viewer
from mcpgym.evaluation.run.run_owner import OWN_FILE_HEADERS

Bar = tuple[float | None, list[float] | None]
"""A bar's value in [0, 1] (None: not applicable) and its optional ``[low, high]`` interval."""


HTML_HEADER = OWN_FILE_HEADERS["report.html"]
"""The start of every ``report.html`` mcpgym writes (how an existing one is known as ours)."""


_f = coord


def svg_bar_chart(
    title: str,
    groups: list[str],
    series: list[str],
    values: dict[tuple[str, str], Bar],
    *,
    height: int = 240,
    bar_width: int = 18,
    note: str = "",
) -> str:
    """An inline ``<svg>`` grouped bar chart of rates in [0, 1].

    Args:
        title: chart title (also the SVG's accessible ``<title>``).
        groups: x-axis groups (e.g. metrics, levels). series: one bar per group each (agents).
        values: (group, series) -> (value, interval); missing or None values are drawn as
            ``n/a``; values are clamped to [0, 1].
        height: plot height in pixels. bar_width: pixels per bar.
        note: a caption under the chart.

    Returns:
        The ``<svg>`` element as a string (every text escaped).
    """
    char = 6.5  # approximate width of an 11px character
    left, right, top, bottom = 44, 12, 30, 40
    longest = max((len(g) for g in groups), default=0)
    group_w = max(len(series) * bar_width + 24, int(longest * char) + 14, 70)
    width = max(left + right + group_w * max(len(groups), 1), int(len(note) * char) + left + right, 360)
    group_w = max(group_w, (width - left - right) // max(len(groups), 1))  # spread groups over the width
    legend = legend_layout(series, left, width - right, char, 34)  # (x, row) of each entry, wrapped
    row = legend[-1][1] if legend else 0
    plot_top = top + 22 * (row + 1)
    total_h = plot_top + height + bottom + (16 if note else 0)
    y0 = plot_top + height

    def y(v: float) -> float:
        return y0 - max(0.0, min(1.0, v)) * height

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{total_h}" '
        f'viewBox="0 0 {width} {total_h}" font-family="system-ui, sans-serif" font-size="11">',
        f"<title>{escape(title)}</title>",
        f'<text x="{left}" y="16" font-size="13" font-weight="600">{escape(title)}</text>',
    ]
    for i, name in enumerate(series):  # legend
        lx, ly = legend[i][0], top + legend[i][1] * 22
        parts.append(
            f'<rect x="{_f(lx)}" y="{ly - 9}" width="12" height="12" fill="{PALETTE[i % len(PALETTE)]}"/>'
            f'<text x="{_f(lx + 16)}" y="{ly + 1}">{escape(name)}</text>'
        )
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):  # grid and y labels
        ty = y(tick)
        parts.append(
            f'<line x1="{left}" x2="{width - right}" y1="{_f(ty)}" y2="{_f(ty)}" stroke="#ddd"/>'
            f'<text x="{left - 6}" y="{_f(ty + 4)}" text-anchor="end" fill="#555">{int(tick * 100)}%</text>'
        )
    for gi, group in enumerate(groups):
        gx = left + gi * group_w + (group_w - len(series) * bar_width) / 2
        for si, name in enumerate(series):
            value, ci = values.get((group, name), (None, None))
            bx = gx + si * bar_width
            color = PALETTE[si % len(PALETTE)]
            if value is None:
                parts.append(
                    f'<text x="{_f(bx + bar_width / 2)}" y="{_f(y0 - 4)}" text-anchor="middle" '
                    f'font-size="8" fill="#888" transform="rotate(-90 {_f(bx + bar_width / 2)} {_f(y0 - 4)})">'
                    f"<title>{escape(f'{name}, {group}: not applicable')}</title>n/a</text>"
                )
                continue
            top_y = y(value)
            tip = f"{name}, {group}: {pct(value, 1)}"
            if ci:
                tip += f" (95% CI {pct(ci[0], 1)} to {pct(ci[1], 1)})"
            parts.append(
                f'<rect x="{_f(bx + 1)}" y="{_f(top_y)}" width="{bar_width - 2}" '
                f'height="{_f(y0 - top_y)}" fill="{color}"><title>{escape(tip)}</title></rect>'
            )
            if ci:
                cx, lo, hi = bx + bar_width / 2, y(ci[0]), y(ci[1])
                parts.append(
                    f'<path d="M{_f(cx)},{_f(lo)}V{_f(hi)}M{_f(cx - 4)},{_f(lo)}H{_f(cx + 4)}'
                    f'M{_f(cx - 4)},{_f(hi)}H{_f(cx + 4)}" stroke="#222" stroke-width="1" fill="none"/>'
                )
            else:
                parts.append(
                    f'<text x="{_f(bx + bar_width / 2)}" y="{_f(top_y - 3)}" text-anchor="middle" '
                    f'font-size="8" fill="#333">{round(value * 100)}</text>'
                )
        parts.append(
            f'<text x="{_f(left + gi * group_w + group_w / 2)}" y="{y0 + 16}" text-anchor="middle">'
            f"{escape(group)}</text>"
        )
    parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y0}" y2="{y0}" stroke="#333"/>')
    if note:
        parts.append(f'<text x="{left}" y="{total_h - 6}" fill="#555">{escape(note)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def behaviour_chart(report: Report) -> str:
    """Behaviour rates (verification, pre-check, recovery attempt, recovery, defeatism) per agent."""
    agents = report.scores.agents
    values: dict[tuple[str, str], Bar] = {}
    for key, label in BEHAVIOUR_METRICS:
        for name, m in agents.items():
            values[(label, name)] = (getattr(m, key), None)
    return svg_bar_chart(
        "Behaviour per agent",
        [label for _, label in BEHAVIOUR_METRICS],
        list(agents),
        values,
        note="Higher is better except defeatism; n/a: no such event (e.g. no recoverable error).",
    )


def success_chart(report: Report, by: str) -> str:
    """Success rate with its 95% Wilson interval per level (``by="level"``) or app (``by="app"``)."""
    agents = report.scores.agents

    def breakdown(m: AgentMetrics) -> dict[str, Metrics]:
        return (m.by_level if by == "level" else m.by_app) or {}

    groups_raw = report.levels if by == "level" else sorted({a for m in agents.values() for a in breakdown(m)})
    groups = [f"Level {g}" if by == "level" else g for g in groups_raw] + ["All"]
    values: dict[tuple[str, str], Bar] = {}
    for name, m in agents.items():
        for raw, label in zip(groups_raw, groups, strict=False):
            b = breakdown(m).get(raw)
            if b:
                values[(label, name)] = (b.success_rate, b.success_ci95)
        values[("All", name)] = (m.success_rate, m.success_ci95)
    return svg_bar_chart(f"Success per {by}", groups, list(agents), values, note="Whiskers: 95% Wilson interval.")


_FIGURE = re.compile(r"^[\d–\-.,%/()\[\] n=]+$|^\d")
"""A cell that starts with a digit or is made of figures (rates, counts, intervals): right-aligned."""


def _table(header: list[str], rows: list[list[str]], first_left: bool = True) -> str:
    """An HTML table: figures right-aligned, names and prose left-aligned (and the first column)."""
    head = "".join(f"<th>{escape(str(h))}</th>" for h in header)

    def cls(i: int, cell: str) -> str:
        return "l" if (i == 0 and first_left) or not _FIGURE.match(cell) else "r"

    body = "".join(
        "<tr>" + "".join(f'<td class="{cls(i, str(c))}">{escape(str(c))}</td>' for i, c in enumerate(row)) + "</tr>"
        for row in rows
    )
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def conditions_html(figs: ConditionFigures) -> str:
    """The "Conditions" section of ``report.html`` (and of ``mcpgym view``'s run page): the
    curves of :func:`~mcpgym.evaluation.report.condition_charts.conditions_section` with
    their tables in this page's table style."""
    return conditions_section(figs, _table)


CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:1200px;padding:0 1rem;color:#222}
.scroll{overflow-x:auto;max-width:100%}svg{max-width:100%;height:auto}
h1{font-size:1.6rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
table{border-collapse:collapse;margin:.5rem 0;font-size:.85rem}th,td{border:1px solid #ddd;padding:.25rem .5rem}
th{background:#f4f4f4;text-align:center}td.r{text-align:right}td.l{text-align:left}
dl{display:grid;grid-template-columns:max-content auto;gap:.2rem 1rem;font-size:.9rem}dt{font-weight:600}dd{margin:0}
.charts{display:flex;flex-wrap:wrap;gap:1.5rem}.curves{gap:1rem}h3{font-size:1.05rem}h4{font-size:.95rem;margin-bottom:.2rem}.note{color:#555;font-size:.85rem;max-width:60rem}
""".strip()


def render_html(report: Report) -> str:
    """``report.html`` as a string: self-contained (inline CSS, SVG and script, no external assets),
    readable from 390 px wide (tables scroll sideways inside their box, the viewer stacks)."""
    facts = "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in run_facts(report))
    notable = report.notable()
    kinds = fault_kind_rows(report.trajectories)
    notable_html = (
        _table(
            ["Agent", "Task", "Trial", "Note"],
            [[e.agent, e.task_id or e.episode_id, str(e.trial), episode_note(e)] for e in notable],
        )
        if notable
        else "<p>None: every episode succeeded without defeatism, blind retries or impatience.</p>"
    )
    sections = [
        "<h1>mcpgym run report</h1>",
        f"<dl>{facts}</dl>",
        f'<p class="warning"><strong>{escape(text_call_warning(report) or "")}</strong></p>'
        if text_call_warning(report)
        else "",
        "".join(
            f'<p class="warning"><strong>{escape(line)}</strong></p>' if i == 0 else f"<p>{escape(line)}</p>"
            for i, line in enumerate(errored_text(report))
        ),
        "<h2>Agents</h2>",
        _table(*comparison_rows(report.scores)),
        f'<p class="warning"><strong>{escape(pass_k_warning(report.scores) or "")}</strong></p>'
        if pass_k_warning(report.scores)
        else "",
        f'<p class="note">{escape(AGENTS_LEGEND)}</p>',
        "<h2>Charts</h2>",
        '<div class="charts">',
        behaviour_chart(report),
        success_chart(report, "level"),
        success_chart(report, "app"),
        "</div>",
        conditions_html(report.conditions) if report.conditions is not None else "",
        "<h2>Success per level</h2>",
        _table(*level_rows(report)),
        "<h2>Success per app</h2>",
        _table(*app_rows(report)),
        "<h2>Behaviour details</h2>",
        _table(*extra_rows(report)),
        f'<p class="note">{escape(DETAILS_LEGEND)}</p>',
        "<h2>Tasks</h2>",
        f'<p class="note">{escape(TASKS_NOTE)}</p>',
        _table(*task_rows(report)),
        '<h2 id="faults-by-kind">Faults by kind</h2>',
        (_table(FAULT_KIND_HEADER, fault_kind_table(kinds)) + f'<p class="note">{escape(FAULT_KIND_NOTE)}</p>')
        if kinds
        else "<p>No fault was injected.</p>",
        "<h2>Notable episodes</h2>",
        notable_html,
        comparison_html(report.comparison) if report.comparison is not None else "",
        render_viewer(report.trajectories),
    ]
    return (
        HTML_HEADER + '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>mcpgym report: {escape(str(report.run_dir.name))}</title><style>{CSS}\n{VIEWER_CSS}</style>"
        "</head><body>" + "\n".join(sections) + f"<script>{VIEWER_JS}</script></body></html>\n"
    )


__all__ = ["PALETTE", "behaviour_chart", "conditions_html", "render_html", "success_chart", "svg_bar_chart"]
