"""What every inline SVG chart of the reports shares: the series colours and number format."""

from __future__ import annotations

PALETTE: tuple[str, ...] = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#8C6D31", "#000000")
"""Series colours (Okabe-Ito, distinguishable with colour-vision deficiencies), then repeated."""


def coord(x: float) -> str:
    """An SVG coordinate with one decimal (``12.5``)."""
    return f"{x:.1f}"


__all__ = ["PALETTE", "coord"]
