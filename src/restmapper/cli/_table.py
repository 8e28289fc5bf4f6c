"""Tab-aligned text tables, laid out as kubectl's printer lays them out.

kubectl prints tables through Go's ``text/tabwriter`` configured by ``printers.GetNewTabWriter``: minimum cell
width 6, padding 3, padded with spaces, no flags. Every cell but the last of a row is padded to
``max(6, widest cell of its column + 3)`` characters; the last cell is written as is.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["MIN_WIDTH", "PADDING", "format_table"]

MIN_WIDTH = 6
"""Minimum width of a column, padding included (``tabwriter`` minwidth in kubectl's printer)."""

PADDING = 3
"""Spaces added to the widest cell of a column (``tabwriter`` padding in kubectl's printer)."""


def format_table(rows: Sequence[Sequence[str]]) -> str:
    """Return ``rows`` laid out as kubectl's tab writer would print them, one line per row.

    Args:
        rows: the cells of each row (header first, when there is one); rows may have different lengths.

    Returns:
        The text, each line ending with a newline; ``""`` for no rows.

    Mirrors Go ``text/tabwriter`` with kubectl's ``printers.GetNewTabWriter`` settings (width in characters).
    """
    widths: dict[int, int] = {}
    for row in rows:
        # The last cell of a row is not terminated by a tab, so it takes no part in column widths.
        for i, cell in enumerate(row[:-1]):
            widths[i] = max(widths.get(i, MIN_WIDTH), len(cell) + PADDING)
    lines = []
    for row in rows:
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])]
        if row:
            cells.append(row[-1])
        lines.append("".join(cells) + "\n")
    return "".join(lines)
