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

A table wider than the console is laid out here first (`fit`), because rich narrows the widest
columns, and those are the ones holding pod and node names, which it then folds mid-name onto
three or four lines. Here text columns (messages, numbers) give up their width first; columns
of names keep theirs as long as possible, and a name that still does not fit loses its middle
(`elide`), never wraps. Only a console too narrow for that is left to rich's folding.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Collection, Iterator, Sequence
from typing import Literal

from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

Cell = tuple[str, str | None]
"""What rich is given (console markup) and the text it prints when that is plain, else None."""
Column = tuple[str, str | None] | tuple[str, str | None, str]
"""Header, overflow (None: rich's default) and, optionally, "right" for a right-justified column."""

MIN_ROWS = 200  # smaller tables go to rich whole: it is quick there
ELISION = "..."  # never in a Kubernetes name (no empty DNS label), so it cannot be misread as part of one
# The narrowing steps when a table is wider than the console: which columns narrow, and down to
# how many columns of text (no column below its header's longest word, but in the last step,
# which folds headers and words: still better than folding names).
_TEXT, _NAMES, _WORDS, _FOLD = "text", "names", "words", "fold"
_STEPS = ((_TEXT, 30), (_NAMES, 24), (_TEXT, 16), (_WORDS, 0), (_NAMES, 12), (_FOLD, 1))
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


def domain_suffix(names: Collection[str]) -> str:
    """The longest dot-led suffix every name ends with, leaving each at least its first label
    (".eu-west-1.compute.internal" of EKS's node names), or "": tables show names without it."""
    split = [name.split(".") for name in names]
    if not split:
        return ""
    first, can_go = split[0], min(len(labels) for labels in split) - 1
    common = 0
    while common < can_go and all(labels[-common - 1] == first[-common - 1] for labels in split):
        common += 1
    return "." + ".".join(first[len(first) - common :]) if common else ""


def without(name: str, suffix: str) -> str:
    """`name` less `suffix` (a `domain_suffix`), when it ends with it."""
    return name[: len(name) - len(suffix)] if suffix and name.endswith(suffix) and name != suffix else name


def elide(name: str, width: int) -> str:
    """`name` in `width` columns: whole when it fits, else its start and its end around ELISION.

    The end gets the larger half: names of one workload differ there (an ordinal, a hash)."""
    if len(name) <= width:
        return name
    keep = max(0, width - len(ELISION))
    head = keep // 2
    return name[:head] + ELISION + name[len(name) - (keep - head) :]


def print_table(
    console: Console,
    title: str | None,
    columns: Sequence[Column],
    rows: Sequence[Sequence[Cell]],
    names: Collection[int] = (),
    unbroken: Collection[int] = (),
) -> None:
    """console.print(Table(title=title)) with these columns and rows, fitted to the console (`fit`);
    the columns at `names` hold names, those at `unbroken` lines that should not wrap (`fit`)."""
    widths, rows = fit(console, columns, rows, names, unbroken)
    lines = _fast_lines(console, title, columns, rows, widths) if len(rows) >= MIN_ROWS else None
    if lines is None:
        console.print(_table(title, columns, rows, widths))
        return
    write = console.file.write
    while chunk := list(itertools.islice(lines, _CHUNK)):
        write("".join(line + "\n" for line in chunk))


_CHUNK = 1000  # lines written at a time: a long table is never one string


def fit(
    console: Console,
    columns: Sequence[Column],
    rows: Sequence[Sequence[Cell]],
    names: Collection[int] = (),
    unbroken: Collection[int] = (),
) -> tuple[list[int] | None, Sequence[Sequence[Cell]]]:
    """Column widths (padding included) for a table wider than the console, with its rows' names
    elided to them; None and the rows as they are when the table fits, or cannot (rich folds then).

    Narrowing goes by `_STEPS`, each lowering the widest columns of its kind first: text columns
    (any not in `names`) to 30, names to 24, text to 16, text to its longest word, names to 12,
    and last text to a single column, folding its words and header. Text columns at `unbroken`
    (explain's scores, a plugin's a line) keep their width until that last step."""
    n = len(columns)
    room = console.width - (3 * n + 1)  # less a border before each column and after the last, and padding
    heads = [max((cell_len(w) for w in column[0].split()), default=0) for column in columns]
    widest = _widest(console, rows, n)
    natural = [max(cell_len(column[0]), widest[j]) for j, column in enumerate(columns)]
    excess = sum(natural) - room
    if excess <= 0 or not rows:
        return None, rows
    widths = list(natural)
    for kind, floor in _STEPS:
        if kind == _NAMES:
            cols = [j for j in range(n) if j in names]
            floors = [max(heads[j], min(natural[j], floor)) for j in range(n)]
        elif kind == _TEXT:
            cols = [j for j in range(n) if j not in names and j not in unbroken]
            floors = [max(heads[j], min(natural[j], floor)) for j in range(n)]
        elif kind == _WORDS:
            cols = [j for j in range(n) if j not in names and j not in unbroken]
            words = _longest_words(console, rows, cols)
            floors = [max(heads[j], words.get(j, 0)) for j in range(n)]
        else:
            cols = [j for j in range(n) if j not in names]
            floors = [min(natural[j], floor) for j in range(n)]
        excess = _lower(widths, floors, cols, excess)
        if excess <= 0:
            break
    else:
        return None, rows
    fitted = [[_elided(cell, widths[j]) if j in names else cell for j, cell in enumerate(row)] for row in rows]
    return [w + 2 for w in widths], fitted


def _elided(cell: Cell, width: int) -> Cell:
    """A name's cell in `width` columns (a cell with markup is left to rich)."""
    plain = cell[1]
    return escaped(elide(plain, width)) if plain is not None and len(plain) > width else cell


def _lower(widths: list[int], floors: list[int], cols: list[int], excess: int) -> int:
    """Narrow the widest of `cols` (in place), none below its floor, by up to `excess` in all; what is left of it."""
    while excess > 0:
        movable = [j for j in cols if widths[j] > floors[j]]
        if not movable:
            break
        j = max(movable, key=lambda k: widths[k])
        below = max((widths[k] for k in movable if k != j and widths[k] < widths[j]), default=0)
        step = min(excess, widths[j] - floors[j], max(1, widths[j] - below))
        widths[j] -= step
        excess -= step
    return excess


def _widest(console: Console, rows: Sequence[Sequence[Cell]], n: int) -> list[int]:
    """Per column, its widest cell (its longest line)."""
    widest = [0] * n
    for row in rows:
        for j, (markup, plain) in enumerate(row):
            w = len(plain) if plain is not None else _measure(console.render_str(markup, highlight=False).plain)[1]
            if w > widest[j]:
                widest[j] = w
    return widest


def _longest_words(console: Console, rows: Sequence[Sequence[Cell]], cols: list[int]) -> dict[int, int]:
    """Per column of `cols`, its longest word."""
    longest = dict.fromkeys(cols, 0)
    for row in rows:
        for j in cols:
            markup, plain = row[j]
            word = (
                max(map(len, plain.split()), default=0)
                if plain is not None
                else _measure(console.render_str(markup, highlight=False).plain)[0]
            )
            longest[j] = max(longest[j], word)
    return longest


def _table(
    title: str | None,
    columns: Sequence[Column],
    rows: Sequence[Sequence[Cell]],
    widths: Sequence[int] | None = None,
    show_header: bool = True,
) -> Table:
    table = Table(title=title, show_header=show_header)
    for i, column in enumerate(columns):
        header, overflow, justify = column[0], column[1], _justify(column)
        width = widths[i] - 2 if widths is not None else None  # less the cell padding
        if overflow is None:
            table.add_column(header, width=width, justify=justify)
        else:
            table.add_column(header, overflow=overflow, width=width, justify=justify)  # type: ignore[arg-type]
    for row in rows:
        table.add_row(*(markup for markup, _ in row))
    return table


def _justify(column: Column) -> Literal["left", "right"]:
    return "right" if len(column) > 2 and column[2] == "right" else "left"


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
    console: Console,
    title: str | None,
    columns: Sequence[Column],
    rows: Sequence[Sequence[Cell]],
    fixed_widths: Sequence[int] | None = None,
) -> Iterator[str] | None:
    """The table's lines (columns `fixed_widths` wide when given), made as they are read, or None where
    rich must print it (known before the first line)."""
    if console.color_system is not None or not rows:
        return None
    n = len(columns)
    chosen = [rows[i] for i in _representatives(console, rows, n)]
    probe = _render(console, _table(title, columns, chosen, fixed_widths))
    widths = _edge_widths(probe[-1]) if probe else []
    if len(widths) != n or min(widths) < 3:
        return None
    overflows = [column[1] or "ellipsis" for column in columns]
    justified = [_justify(column) for column in columns]

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
        for (_, plain), width, overflow, justify in zip(row, widths, overflows, justified, strict=True):
            assert plain is not None
            if len(plain) <= width - 2:
                padded = plain.rstrip().rjust(width - 2) if justify == "right" else plain.ljust(width - 2)
                cells.append([f" {padded} "])
            else:
                wrapped = Text(plain).wrap(console, width - 2, justify=justify, overflow=overflow)  # type: ignore[arg-type]
                cells.append([f" {line.plain.ljust(width - 2)} " for line in wrapped])
        height = max(len(c) for c in cells)
        return [
            left + divider.join(c[i] if i < len(c) else " " * w for c, w in zip(cells, widths, strict=True)) + right
            for i in range(height)
        ]

    expected = [line for row in samples for line in lines(row)]
    if fixed[first_row:-1] != expected or bare[1:-1] != expected:
        return None
    return _all_lines(console, columns, rows, widths, fixed[:first_row], fixed[-1], lines)


def _all_lines(
    console: Console,
    columns: Sequence[Column],
    rows: Sequence[Sequence[Cell]],
    widths: list[int],
    top: list[str],
    bottom: str,
    lines: Callable[[Sequence[Cell]], list[str]],
) -> Iterator[str]:
    """`top`, each row's lines (plain rows by `lines`, runs of the others by rich), then `bottom`."""
    yield from top
    run: list[Sequence[Cell]] = []
    for row in rows:
        if all(p is not None for _, p in row):
            if run:
                yield from _render(console, _table(None, columns, run, widths, show_header=False))[1:-1]
                run = []
            yield from lines(row)
        else:
            run.append(row)
    if run:
        yield from _render(console, _table(None, columns, run, widths, show_header=False))[1:-1]
    yield bottom
