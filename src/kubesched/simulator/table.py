"""Long rich tables, printed as rich prints them, without rich's cost for every cell.

`kubesched simulate --output table` at 50000 pods spent longer in rich (measuring,
wrapping and padding 300000 cells, about 1 ms a row) than in scheduling the pods. Most
rows are plain ASCII that fits its column: such a row is one line of text once the column
widths are known. So rich is asked only for what needs it:

- the column widths: rich lays out a probe table holding the header and, per column, the
  rows with the widest cell and the longest word (a column's width depends on nothing
  else), and the widths are read off its bottom edge;
- the title, borders and header, from a table with those widths fixed, which also shows
  how one plain row is drawn (checked against the line built here);
- every row that is not plain (markup, emoji codes, wide or control characters, text
  that wraps), in runs, by a headerless table with the same widths.

Anything unexpected (colours on a terminal, a layout that does not check out) prints the
whole table with rich, as before.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

Cell = tuple[str, str | None]
"""What rich is given (console markup) and the text it prints when that is plain, else None."""
Column = tuple[str, str | None]
"""Header and overflow (None: rich's default)."""

MIN_ROWS = 200  # smaller tables go to rich whole: it is quick there
_EMOJI_LIKE = re.compile(r":\S*?:")


def _plain(text: str) -> bool:
    """Text rich prints unchanged: printable ASCII, no backslash escapes, nothing that could be an emoji code."""
    return text.isascii() and text.isprintable() and "\\" not in text and not _EMOJI_LIKE.search(text)


def text(value: str) -> Cell:
    """A cell given to rich as is (markup in it would be read as markup)."""
    return value, value if "[" not in value and _plain(value) else None


def escaped(value: str) -> Cell:
    """A cell that prints `value` literally (escaped markup)."""
    return escape(value), value if _plain(value) else None


def styled(value: str, style: str) -> Cell:
    """`value` in a style (which shows only on a terminal)."""
    return f"[{style}]{value}[/]", value if "[" not in value and _plain(value) else None


def print_table(console: Console, title: str, columns: Sequence[Column], rows: Sequence[Sequence[Cell]]) -> None:
    """console.print(Table(title=title)) with these columns and rows."""
    lines = _fast_lines(console, title, columns, rows) if len(rows) >= MIN_ROWS else None
    if lines is None:
        console.print(_table(title, columns, rows))
        return
    console.file.write("".join(line + "\n" for line in lines))


def _table(
    title: str | None,
    columns: Sequence[Column],
    rows: Sequence[Sequence[Cell]],
    widths: Sequence[int] | None = None,
    show_header: bool = True,
) -> Table:
    table = Table(title=title, show_header=show_header)
    for i, (header, overflow) in enumerate(columns):
        width = widths[i] - 2 if widths is not None else None  # less the cell padding
        if overflow is None:
            table.add_column(header, width=width)
        else:
            table.add_column(header, overflow=overflow, width=width)  # type: ignore[arg-type]
    for row in rows:
        table.add_row(*(markup for markup, _ in row))
    return table


def _render(console: Console, table: Table) -> list[str]:
    with console.capture() as capture:
        console.print(table)
    return capture.get().split("\n")[:-1]


def _measure(value: str) -> tuple[int, int]:
    """rich's measurement of a text cell: its longest word and its longest line."""
    lines = value.splitlines()
    widest = max(cell_len(line) for line in lines) if lines else 0
    words = value.split()
    return (max(cell_len(word) for word in words) if words else widest), widest


def _representatives(console: Console, rows: Sequence[Sequence[Cell]], n: int) -> list[int]:
    """Per column, a row holding its longest word and one holding its widest cell."""
    best_min, best_max = [-1] * n, [-1] * n
    at_min, at_max = [0] * n, [0] * n
    for i, row in enumerate(rows):
        for j, (markup, plain) in enumerate(row):
            if plain is not None:
                widest = len(plain)
                if widest > best_max[j]:
                    best_max[j], at_max[j] = widest, i
                if widest > best_min[j]:  # its longest word can beat the best only then
                    word = max(map(len, plain.split()), default=widest)
                    if word > best_min[j]:
                        best_min[j], at_min[j] = word, i
                continue
            word, widest = _measure(console.render_str(markup, highlight=False).plain)
            if widest > best_max[j]:
                best_max[j], at_max[j] = widest, i
            if word > best_min[j]:
                best_min[j], at_min[j] = word, i
    return sorted(set(at_min) | set(at_max))


def _edge_widths(edge: str) -> list[int]:
    """Column widths from a bottom border: runs of its horizontal line between the joints."""
    inner = edge[1:-1]
    if not inner:
        return []
    return [len(part) for part in inner.split(next((c for c in inner if c != inner[0]), "\0"))]


def _fast_lines(
    console: Console, title: str, columns: Sequence[Column], rows: Sequence[Sequence[Cell]]
) -> list[str] | None:
    """The table's lines, or None where rich must print it."""
    if console.color_system is not None or not rows:
        return None
    n = len(columns)
    probe = _render(console, _table(title, columns, [rows[i] for i in _representatives(console, rows, n)]))
    widths = _edge_widths(probe[-1]) if probe else []
    if len(widths) != n or min(widths) < 3:
        return None
    overflows = [overflow or "ellipsis" for _, overflow in columns]

    def one_line(row: Sequence[Cell]) -> bool:
        return all(len(p or "") <= w - 2 for (_, p), w in zip(row, widths, strict=True))

    fast = [row for row in rows if all(p is not None for _, p in row)]
    short = next((row for row in fast if one_line(row)), None)
    wrapping = next((row for row in fast if not one_line(row)), None)
    samples = [row for row in (short, wrapping) if row is not None] * 2
    if not samples:
        return None
    fixed = _render(console, _table(title, columns, samples, widths))
    bare = _render(console, _table(None, columns, samples, widths, show_header=False))
    first_row = len(fixed) - 1 - (len(bare) - 2)
    if first_row < 1 or fixed[-1] != probe[-1]:
        return None
    sample_line = fixed[first_row]
    left, right, divider = sample_line[0], sample_line[-1], sample_line[widths[0] + 1]

    def lines(row: Sequence[Cell]) -> list[str]:
        """A row of plain cells; cells that do not fit are wrapped by rich's own Text.wrap."""
        cells: list[list[str]] = []
        for (_, plain), width, overflow in zip(row, widths, overflows, strict=True):
            assert plain is not None
            if len(plain) <= width - 2:
                cells.append([f" {plain.ljust(width - 2)} "])
            else:
                wrapped = Text(plain).wrap(console, width - 2, justify="left", overflow=overflow)  # type: ignore[arg-type]
                cells.append([f" {line.plain.ljust(width - 2)} " for line in wrapped])
        height = max(len(c) for c in cells)
        return [
            left + divider.join(c[i] if i < len(c) else " " * w for c, w in zip(cells, widths, strict=True)) + right
            for i in range(height)
        ]

    expected = [line for row in samples for line in lines(row)]
    if fixed[first_row:-1] != expected or bare[1:-1] != expected:
        return None
    out = fixed[:first_row]
    run: list[Sequence[Cell]] = []
    for row in rows:
        if all(p is not None for _, p in row):
            if run:
                out += _render(console, _table(None, columns, run, widths, show_header=False))[1:-1]
                run = []
            out += lines(row)
        else:
            run.append(row)
    if run:
        out += _render(console, _table(None, columns, run, widths, show_header=False))[1:-1]
    out.append(fixed[-1])
    return out
