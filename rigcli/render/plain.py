"""Tables and lines for output that is not a terminal, written without Rich.

Off a terminal nothing is coloured or wrapped, so Rich's measuring buys nothing and costs its
import plus per-cell work (a 20,000-node plan spent most of its time there). The layout is
Rich's ``SIMPLE_HEAD`` table exactly as rig configures it — tests/render compares the two.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from rigcli.streams import real_stderr, real_stdout

RULE = "─"
GAP = "   "  # a cell's right padding, the (blank) column separator, the next cell's left padding


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def plain_stdout() -> TextIO | None:
    """stdout when it is not a terminal (write plain text to it), else None (use Rich)."""
    stream = real_stdout()
    return None if is_terminal(stream) else stream


def plain_stderr() -> TextIO | None:
    stream = real_stderr()
    return None if is_terminal(stream) else stream


def cell_width(text: str) -> int:
    """Columns ``text`` takes in a terminal: wide East Asian characters count two, combining marks none."""
    if text.isascii():
        return len(text)
    import unicodedata

    width = 0
    for char in text:
        if unicodedata.combining(char):
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def can_render(rows: Sequence[Sequence[str]]) -> bool:
    """Single-line cells only; anything else is left to Rich, which folds lines."""
    return not any("\n" in cell or "\r" in cell for row in rows for cell in row)


def table_lines(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Header, rule and rows, each cell padded to its column's width."""
    widths = [cell_width(name) for name in columns]
    for row in rows:
        for index, cell in enumerate(row):
            widths[index] = max(widths[index], cell_width(cell))

    def line(cells: Sequence[str]) -> str:
        return GAP.join(cell + " " * (width - cell_width(cell)) for cell, width in zip(cells, widths, strict=False))

    rule = RULE * (sum(widths) + len(GAP) * (len(widths) - 1))
    return [line(columns), rule, *(line(row) for row in rows)]


def write_lines(stream: TextIO, lines: Sequence[str]) -> None:
    """All of it in one write (and one flush), not a write per line."""
    if lines:
        stream.write("\n".join(lines) + "\n")
        stream.flush()


__all__ = ["can_render", "cell_width", "is_terminal", "plain_stderr", "plain_stdout", "table_lines", "write_lines"]
