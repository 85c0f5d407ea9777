"""Terminal tables that fit the width they are given, without breaking a word or an id.

Every table the CLI prints goes through :func:`print_table`. It tries three layouts, widest
first, and prints the first whose least width (:func:`fitted_widths`: every unwrappable
cell whole, every prose cell and header at its longest word) fits; the column widths are
computed here and handed to rich as fixed widths, so rich never has to shrink a column:

1. ``full``: the full column headers (headers may wrap between words);
2. ``short``: the short headers, with a legend under the table naming what each stands for;
3. ``transposed`` (only when the caller asks, for tables of a few rows such as one row per
   agent): rows and columns swapped, so each row of the table is a column headed by its first
   cell and each other column a row headed by its header (full headers, else the short ones
   with the legend), one table however many columns there are;
4. ``stacked``: one block per row: the first cell on its own line, then the other cells as
   ``header: value`` fields packed onto indented lines (:func:`pack_fields`), for terminals
   too narrow for any table.

Cells of columns with ``wrap=False`` (ids, figures, counts) are never wrapped; cells with
``wrap=True`` (tags, descriptions) wrap only at spaces. The width is the console's
(``COLUMNS`` when set, else the terminal's, else 80).
"""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

Layout = Literal["full", "short", "transposed", "stacked"]


@dataclass(frozen=True)
class Column:
    """One table column.

    Attributes:
        header: the full header (``"Success (95% CI)"``).
        short: a short header for narrow terminals (``"Success"``); None: same as ``header``.
        legend: what ``short`` stands for, printed under a short-header table; None: nothing.
        justify: ``left`` or ``right`` (figures).
        wrap: whether cells may wrap at spaces (prose); ids and figures never wrap.
    """

    header: str
    short: str | None = None
    legend: str | None = None
    justify: Literal["left", "right"] = "left"
    wrap: bool = False


def wrap_words(text: str, width: int, indent: str = "", subsequent: str | None = None) -> list[str]:
    """Wrap ``text`` to ``width`` at spaces only (a word longer than the line stays whole)."""
    subsequent = indent if subsequent is None else subsequent
    wrapper = textwrap.TextWrapper(
        width=max(width, 1),
        initial_indent=indent,
        subsequent_indent=subsequent,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return wrapper.wrap(" ".join(str(text).split())) or [indent.rstrip()]


def pack_fields(fields: Sequence[str], width: int, indent: str = "", sep: str = "  ") -> list[str]:
    """Pack ``header: value`` fields onto lines of at most ``width`` cells, ``sep`` between
    fields; a field is split (at spaces only) just when it cannot fit on a line of its own."""
    lines: list[str] = []
    line = ""
    for field_text in fields:
        candidate = f"{line}{sep}{field_text}" if line else indent + field_text
        if cell_len(candidate) <= width:
            line = candidate
            continue
        if line:
            lines.append(line)
        if cell_len(indent + field_text) <= width:
            line = indent + field_text
        else:
            *head, line = wrap_words(field_text, width, indent, indent + "  ")
            lines.extend(head)
    if line:
        lines.append(line)
    return lines


def _limits(columns: Sequence[Column], rows: Sequence[Sequence[str]], short: bool) -> list[tuple[int, int]]:
    """(least, natural) width of each column: least keeps every unwrappable cell whole and
    every word of a prose cell or header whole; natural is the widest cell or header line."""
    out = []
    for i, col in enumerate(columns):
        header = (col.short or col.header) if short else col.header
        cells = [str(row[i]) for row in rows]
        pieces = [w for c in cells for w in c.split()] if col.wrap else cells
        least = max([cell_len(p) for p in pieces] + [cell_len(w) for w in header.split()] + [1])
        natural = max([cell_len(c) for c in cells] + [cell_len(header), least])
        out.append((least, natural))
    return out


def _gap(short: bool) -> int:
    return 1 if short else 3


def fitted_widths(
    columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int, short: bool
) -> list[int] | None:
    """Column widths that fit ``width`` with nothing broken, or None when no such widths exist.

    Every column gets its least width; what is left goes to the prose columns, in proportion to
    how much narrower than their natural width they are."""
    limits = _limits(columns, rows, short)
    gaps = _gap(short) * (len(columns) - 1)
    least = sum(lo for lo, _ in limits) + gaps
    if least > width:
        return None
    natural = sum(hi for _, hi in limits) + gaps
    if natural <= width:
        return [hi for _, hi in limits]
    spare = width - least
    wants = [hi - lo for lo, hi in limits]
    total = sum(wants) or 1
    widths = [lo + (spare * want) // total for (lo, _), want in zip(limits, wants, strict=True)]
    return widths


def _table(columns: Sequence[Column], rows: Sequence[Sequence[str]], widths: Sequence[int], *, short: bool) -> Table:
    # SIMPLE_HEAD's column divider is a space: padding 1 gives 3-space gaps, 0 gives 1-space gaps
    table = Table(
        box=box.SIMPLE_HEAD, header_style="bold", pad_edge=False, padding=(0, 0 if short else 1), show_edge=False
    )
    for col, w in zip(columns, widths, strict=True):
        header = (col.short or col.header) if short else col.header
        # a no_wrap column would crop its header too: break the header between words here
        table.add_column(
            "\n".join(wrap_words(header, w)), justify=col.justify, no_wrap=not col.wrap, overflow="fold", width=w
        )
    for row in rows:
        table.add_row(*(Text(str(c)) for c in row))
    return table


def transposed(
    columns: Sequence[Column], rows: Sequence[Sequence[str]], short: bool
) -> tuple[list[Column], list[list[str]]]:
    """``columns`` and ``rows`` swapped: the first column's header, then one column per row
    headed by its first cell (never wrapped, right-justified); one row per other column, its
    header (``short``: the short header) first, then that column's cells."""
    new_columns = [Column(columns[0].header, wrap=True)] + [Column(str(row[0]), justify="right") for row in rows]
    new_rows = [
        [(col.short or col.header) if short else col.header, *(str(row[i]) for row in rows)]
        for i, col in enumerate(columns)
        if i
    ]
    return new_columns, new_rows


def _choose(
    columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int, transpose: bool
) -> tuple[Layout, Table | None, bool]:
    """(layout, its table, whether it shows the short headers) of :func:`choose_layout`."""
    for layout, short in (("full", False), ("short", True)):
        widths = fitted_widths(columns, rows, width, short)
        if widths is not None:
            return layout, _table(columns, rows, widths, short=short), short  # type: ignore[return-value]
    if transpose and rows:
        for short in (False, True):
            t_columns, t_rows = transposed(columns, rows, short)
            widths = fitted_widths(t_columns, t_rows, width, short)
            if widths is not None:
                return "transposed", _table(t_columns, t_rows, widths, short=short), short
    return "stacked", None, False


def choose_layout(
    columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int, *, transpose: bool = False
) -> tuple[Layout, Table | None]:
    """The widest layout of :func:`print_table` that fits ``width`` columns, and its table
    (``transposed`` only with ``transpose``)."""
    layout, table, _ = _choose(columns, rows, width, transpose)
    return layout, table


def print_table(
    console: Console,
    columns: Sequence[Column],
    rows: Sequence[Sequence[str]],
    *,
    title: str | None = None,
    notes: Sequence[str] = (),
    width: int | None = None,
    transpose: bool = False,
) -> Layout:
    """Print a table that fits ``width`` (default: the console's) and return the layout used.

    Args:
        console: where to print (its width is the default ``width``).
        columns: the columns; the first one names a row in the stacked layout.
        rows: one sequence of cell strings per row, as many as ``columns``.
        title: printed above, wrapped at spaces.
        notes: paragraphs printed under the table (wrapped at spaces), after the legend.
        width: the width to fit, in character cells (at most the console's).
        transpose: when neither ``full`` nor ``short`` fits, try rows as columns
            (``transposed``) before one block per row; for tables of a few rows.

    Returns:
        ``"full"``, ``"short"``, ``"transposed"`` or ``"stacked"`` (see the module docstring).

    Raises:
        ValueError: when a row has a different number of cells than ``columns``.
    """
    width = min(width or console.width, console.width)
    for i, row in enumerate(rows):
        if len(row) != len(columns):
            raise ValueError(f"row {i} has {len(row)} cells for {len(columns)} columns")

    def para(text: str, indent: str = "", subsequent: str | None = None) -> None:
        for line in wrap_words(text, width, indent, subsequent):
            console.print(line, markup=False, highlight=False, soft_wrap=True)

    if title:
        para(title)
    layout, table, short = _choose(columns, rows, width, transpose)
    if table is not None:
        console.print(table, width=width)
        if short:
            legend = "; ".join(
                f"{c.short}: {c.legend}" for c in columns if c.short and c.legend and c.short != c.header
            )
            if legend:
                para(legend)
    else:
        for row in rows:
            para(str(row[0]))
            for line in pack_fields(
                [f"{col.header}: {cell}" for col, cell in zip(columns[1:], row[1:], strict=True)], width, indent="  "
            ):
                console.print(line, markup=False, highlight=False, soft_wrap=True)
    for note in notes:
        para(note)
    return layout


class PipeConsole(Console):
    """A rich console for a command's output: when the reader goes away (``mcpgym tasks | head
    -1``), the command ends quietly with exit code 0, as the reader has what it wanted (rich's
    own console exits 1)."""

    def on_broken_pipe(self) -> None:
        """Send the rest of the output to ``/dev/null`` and exit 0."""
        self.quiet = True
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise SystemExit(0)


def terminal_console(stderr: bool = False) -> Console:
    """A rich console at the terminal's width (``COLUMNS`` wins), no highlighting of numbers;
    a reader that closes the pipe ends the command with exit code 0 (:class:`PipeConsole`)."""
    return PipeConsole(stderr=stderr, highlight=False)


__all__ = [
    "Column",
    "Layout",
    "PipeConsole",
    "choose_layout",
    "fitted_widths",
    "pack_fields",
    "print_table",
    "terminal_console",
    "transposed",
    "wrap_words",
]
