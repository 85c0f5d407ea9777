"""The condition curves of ``report.html``: inline SVG line charts, nothing fetched.

:func:`svg_line_chart` draws one :class:`~mcpgym.evaluation.report.conditions.Curve` (each
agent's score against one condition axis; rates with their 95% interval as whiskers; a point
that cannot be computed leaves a gap and is listed under the chart, never drawn as 0).
:func:`conditions_section` is the report's "Conditions" section: the fault-profile charts and
the saturation charts (scores against the exposed tools), then their tables. Every ``<svg>``
and point carries ``data-`` attributes with its figures, so that a test (and a reader's
script) can check the drawing against the run.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from html import escape

from mcpgym.evaluation.report.conditions import (
    AXIS_TITLES,
    CONDITIONS_NOTE,
    LABELS,
    RATES,
    ConditionFigures,
    Curve,
    curve_rows,
    curves,
    point_text,
    unknown_note,
    x_label,
)
from mcpgym.evaluation.report.svg_style import PALETTE, coord, legend_layout

WIDTH, PLOT_H = 360, 150
"""A panel's width and plot height in pixels."""

CHAR = 6.0
"""Approximate width of a 10px character (for the legend's wrapping)."""


def _ceiling(values: list[float]) -> float:
    """The y-axis top for means: the largest value rounded up to 1, 2 or 5 x 10^n (at least 1)."""
    top = max(values, default=0.0)
    if top <= 1:
        return 1.0
    exp = 10.0 ** math.floor(math.log10(top))
    return float(next(m * exp for m in (1, 2, 5, 10) if m * exp >= top))


def svg_line_chart(curve: Curve, figs: ConditionFigures) -> str:
    """One panel as an inline ``<svg>``: x the axis's values (evenly spaced, in the order the
    run gave them), y the metric (0-100% for rates, else 0 to a round ceiling), one line per
    agent. Points that cannot be computed are gaps, named under the chart with the reason.

    Returns:
        The ``<svg>`` element (every text escaped), with ``data-axis``, ``data-metric`` and
        ``data-fixed`` on it and ``data-agent``, ``data-x``, ``data-value`` on each point.
    """
    left, right, top, bottom = 40, 14, 44, 40
    legend = legend_layout(list(curve.series), left, WIDTH - right, CHAR, 28)
    row = legend[-1][1] if legend else 0
    plot_top = top + 16 * (row + 1)
    gaps: dict[tuple[str, str], list[str]] = {}
    for a, pts in curve.series.items():
        for x, p in zip(curve.x, pts, strict=True):
            if p.value is None:
                gaps.setdefault((x, p.why), []).append(a)
    missing = [
        f"at {x}: {why} ({'every agent' if len(names) == len(curve.series) > 1 else ', '.join(names)})"
        for (x, why), names in gaps.items()
    ]
    empty = all(p.value is None for pts in curve.series.values() for p in pts)
    notes = [] if empty else missing[:3] + ([f"... and {len(missing) - 3} more"] if len(missing) > 3 else [])
    height = plot_top + PLOT_H + bottom + 13 * len(notes)
    y0 = plot_top + PLOT_H
    rate = curve.metric in RATES
    ymax = 1.0 if rate else _ceiling([p.value for pts in curve.series.values() for p in pts if p.value is not None])
    span = (WIDTH - left - right) / max(len(curve.x), 1)

    def xpos(i: int, si: int = 0) -> float:
        offset = (si - (len(curve.series) - 1) / 2) * 4  # agents side by side, so equal points stay visible
        return left + span * (i + 0.5) + offset

    def ypos(v: float) -> float:
        return y0 - max(0.0, min(1.0, v / ymax)) * PLOT_H

    fixed = escape(curve.fixed or "")
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="system-ui, sans-serif" font-size="10" '
        f'class="curve" data-axis="{curve.axis}" data-metric="{curve.metric.value}" data-fixed="{fixed}">',
        f"<title>{escape(curve.title)}</title>",
        f'<text x="{left - 30}" y="14" font-size="12" font-weight="600">{escape(LABELS[curve.metric])}</text>',
        f'<text x="{left - 30}" y="27" fill="#555">vs {escape(AXIS_TITLES[curve.axis])}'
        f"{escape(f', {curve.fixed}' if curve.fixed else '')}</text>",
    ]
    for si, name in enumerate(curve.series):
        lx, ly = legend[si][0], top + legend[si][1] * 16
        colour = PALETTE[si % len(PALETTE)]
        parts.append(
            f'<line x1="{coord(lx)}" x2="{coord(lx + 10)}" y1="{ly - 3}" y2="{ly - 3}" stroke="{colour}" stroke-width="2"/>'
            f'<text x="{coord(lx + 14)}" y="{ly + 1}">{escape(name)}</text>'
        )
    for k in range(5):
        v = ymax * k / 4
        ty = ypos(v)
        label = f"{round(v * 100)}%" if rate else (f"{v:,.0f}" if ymax >= 4 else f"{v:g}")
        parts.append(
            f'<line x1="{left}" x2="{WIDTH - right}" y1="{coord(ty)}" y2="{coord(ty)}" stroke="#e3e3e3"/>'
            f'<text x="{left - 5}" y="{coord(ty + 3)}" text-anchor="end" fill="#555">{label}</text>'
        )
    for i, value in enumerate(curve.x):
        name, _, count = x_label(figs, curve.axis, value).partition(" · ")
        under = f'<tspan x="{coord(xpos(i))}" dy="11" fill="#555">{escape(count)}</tspan>' if count else ""
        parts.append(f'<text x="{coord(xpos(i))}" y="{y0 + 13}" text-anchor="middle">{escape(name)}{under}</text>')
    parts.append(f'<line x1="{left}" x2="{WIDTH - right}" y1="{y0}" y2="{y0}" stroke="#333"/>')
    if empty:
        why = next((p.why for pts in curve.series.values() for p in pts if p.why), "not computable")
        mid = coord(left + (WIDTH - left - right) / 2)
        parts.append(
            f'<text x="{mid}" y="{coord(y0 - PLOT_H / 2 - 6)}" text-anchor="middle" fill="#777" class="empty">'
            f'not computable:<tspan x="{mid}" dy="14">{escape(why)}</tspan></text>'
        )
    for si, (name, pts) in enumerate(curve.series.items()):
        colour = PALETTE[si % len(PALETTE)]
        run: list[str] = []
        segments: list[list[str]] = [run]
        for i, p in enumerate(pts):
            if p.value is None:
                run = []
                segments.append(run)
                continue
            run.append(f"{coord(xpos(i, si))},{coord(ypos(p.value))}")
        for seg in segments:
            if len(seg) > 1:
                parts.append(f'<polyline points="{" ".join(seg)}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for i, p in enumerate(pts):
            if p.value is None:
                continue
            cx, cy = xpos(i, si), ypos(p.value)
            tip = f"{name}, {curve.x[i]}: {point_text(curve.metric, p)} (n={p.n})"
            if p.ci is not None:
                lo, hi = ypos(p.ci[0]), ypos(p.ci[1])
                parts.append(
                    f'<path d="M{coord(cx)},{coord(lo)}V{coord(hi)}" stroke="{colour}" stroke-width="1" opacity="0.6"/>'
                )
            parts.append(
                f'<circle cx="{coord(cx)}" cy="{coord(cy)}" r="3" fill="{colour}" data-agent="{escape(name)}" '
                f'data-x="{escape(curve.x[i])}" data-value="{p.value:.6g}"><title>{escape(tip)}</title></circle>'
            )
    for n, line in enumerate(notes):
        parts.append(f'<text x="{left - 30}" y="{y0 + 36 + 13 * n}" fill="#555">n/a {escape(line)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def conditions_section(figs: ConditionFigures, table: Callable[[list[str], list[list[str]]], str]) -> str:
    """The "Conditions" section of ``report.html``: the fault-profile charts, the saturation
    charts and, for each, its tables (``table``: the report's table renderer, ``(header, rows) -> html``)."""
    out = ['<h2 id="conditions">Conditions</h2>', f'<p class="note">{escape(CONDITIONS_NOTE)}</p>']
    note = unknown_note(figs)
    if note:
        out.append(f'<p class="warning"><strong>{escape(note)}</strong></p>')
    for axis, heading in (("faults", "Scores vs fault profile"), ("tools", "Saturation: scores vs exposed tools")):
        panels = curves(figs, axis)
        if panels:
            out.append(f'<h3 id="conditions-{axis}">{escape(heading)}</h3>')
            out.append(f'<div class="charts curves" data-axis="{axis}">')
            out += [svg_line_chart(c, figs) for c in panels]
            out.append("</div>")
    out.append('<h3 id="conditions-tables">The figures of the charts</h3>')
    for axis in ("faults", "tools"):
        for title, header, rows in curve_rows(figs, axis):
            out.append(f"<h4>{escape(title)}</h4>")
            out.append(table(header, rows))
    return "\n".join(out)


__all__ = ["conditions_section", "svg_line_chart"]
