"""What every inline SVG chart of the reports shares: the series colours and number format."""

from __future__ import annotations

PALETTE: tuple[str, ...] = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#8C6D31", "#000000")
"""Series colours (Okabe-Ito, distinguishable with colour-vision deficiencies), then repeated."""


def coord(x: float) -> str:
    """An SVG coordinate with one decimal (``12.5``)."""
    return f"{x:.1f}"


def legend_layout(names: list[str], left: float, right_edge: float, char: float, pad: float) -> list[tuple[float, int]]:
    """The ``(x, row)`` of each legend entry, wrapped to rows that end before ``right_edge``:
    an entry is ``pad`` pixels plus its name (``char`` pixels a character) wide; a row holds at
    least one entry."""
    out: list[tuple[float, int]] = []
    lx, row = float(left), 0
    for name in names:
        w = pad + len(name) * char
        if lx + w > right_edge and lx > left:
            lx, row = float(left), row + 1
        out.append((lx, row))
        lx += w
    return out


__all__ = ["PALETTE", "coord", "legend_layout"]
