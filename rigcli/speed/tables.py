"""A view (styled lines and tables) described once, and its Rich-free writer for output that is not a terminal.

A command's human output is written as a ``View``: a sequence of ``Line`` (styled spans) and
``Table`` (columns, rows, a style per cell). ``rigcli.render.tables`` writes a view with Rich on
a terminal, and with ``plain_lines`` everywhere else: off a terminal nothing is coloured or
wrapped, so Rich's measuring buys nothing and costs its import plus per-cell work (a
20,000-node plan spent most of its time there). The plain layout is Rich's ``SIMPLE_HEAD`` table
exactly as rig configures it — tests/render compares the two.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import chain, zip_longest

# Not typing.TYPE_CHECKING: rig ls answered from the cache writes with this and imports no typing; mypy treats
# any name TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import TextIO

RULE = "─"
GAP = "   "  # a cell's right padding, the (blank) column separator, the next cell's left padding


# Plain slotted classes: nothing is generated per class at import (a NamedTuple costs ~0.6M
# instructions, a frozen dataclass ~3M; see rigcli/speed/__init__.py). Views are built, written, dropped.
class Span:
    """A piece of text and its Rich style (``""``: none)."""

    __slots__ = ("style", "text")

    def __init__(self, text: str, style: str = "") -> None:
        self.text = text
        self.style = style


class Line:
    """One line of styled spans (never wrapped: a terminal folds it)."""

    __slots__ = ("spans",)

    def __init__(self, spans: Sequence[Span]) -> None:
        self.spans = spans

    @classmethod
    def of(cls, *parts: str | tuple[str, str]) -> Line:
        """``Line.of("plain", ("bold text", "bold"))``."""
        return cls([Span(part) if isinstance(part, str) else Span(part[0], part[1]) for part in parts])

    @property
    def text(self) -> str:
        return "".join(span.text for span in self.spans)


_UNSTYLED: Mapping[str, Mapping[str, str]] = {}


class Table:
    """Columns and rows of text, and how cells are styled: ``styles[column][cell text]``.

    Styles go by column and value (``{"status": {"failed": "red"}}``), so describing a 20,000-row
    table costs nothing per row. ``empty`` (dim) stands in for no rows; None shows nothing.
    """

    __slots__ = ("columns", "empty", "rows", "styles")

    def __init__(
        self,
        columns: Sequence[str],
        rows: Sequence[Sequence[str]],
        styles: Mapping[str, Mapping[str, str]] = _UNSTYLED,
        empty: str | None = None,
    ) -> None:
        self.columns = columns
        self.rows = rows
        self.styles = styles
        self.empty = empty


View = Sequence[Line | Table]


def plain_lines(view: View) -> list[str] | None:
    """The view as plain text lines, or None when a cell spans lines (Rich folds those)."""
    lines: list[str] = []
    for block in view:
        if isinstance(block, Line):
            lines.append(block.text)
        elif not can_render(block.rows):
            return None
        elif block.rows:
            lines += table_lines(block.columns, block.rows)
        elif block.empty is not None:
            lines.append(block.empty)
    return lines


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
    joined = "".join(chain.from_iterable(rows))  # one C-level pass, not a generator step per cell
    return "\n" not in joined and "\r" not in joined


def table_lines(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Header, rule and rows, each cell padded to its column's width."""
    # The usual table is ASCII: a character is a column, and len (C) measures it for cell_width's loop.
    ascii_only = "".join(chain.from_iterable((columns, *rows))).isascii()
    measure: Callable[[str], int] = len if ascii_only else cell_width
    widths = [max(map(measure, column)) for column in zip_longest(columns, *rows, fillvalue="")]

    def line(cells: Sequence[str]) -> str:
        if ascii_only:  # a character is a column: str.ljust pads each cell in C
            return GAP.join(map(str.ljust, cells, widths))
        return GAP.join(cell + " " * (width - measure(cell)) for cell, width in zip(cells, widths, strict=False))

    rule = RULE * (sum(widths) + len(GAP) * (len(widths) - 1))
    return [line(columns), rule, *map(line, rows)]


def write_lines(stream: TextIO, lines: Sequence[str]) -> None:
    """All of it in one write (and one flush), not a write per line."""
    if lines:
        stream.write("\n".join(lines) + "\n")
        stream.flush()


__all__ = [
    "Line",
    "Span",
    "Table",
    "View",
    "can_render",
    "cell_width",
    "plain_lines",
    "table_lines",
    "write_lines",
]
