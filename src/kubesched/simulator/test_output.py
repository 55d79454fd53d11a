"""The simulator's fast writers print exactly what json.dump and rich print."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from kubesched.simulator import table
from kubesched.simulator.report import write_json

_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
)
_json = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=6) | st.integers() | st.booleans() | st.none(), inner, max_size=4)
    ),
    max_leaves=30,
)


@_SETTINGS
@given(st.dictionaries(st.text(max_size=8), _json, max_size=5) | _json)
def test_write_json_is_json_dump_with_indent_1(doc: Any) -> None:
    out = io.StringIO()
    write_json(doc, out)
    assert out.getvalue() == json.dumps(doc, indent=1)


def test_write_json_batches_long_lists() -> None:
    doc = {"pods": [{"name": f"p{i}", "victims": [], "at": i / 3} for i in range(2500)], "warnings": [], "end": 1.5}
    out = io.StringIO()
    write_json(doc, out)
    assert out.getvalue() == json.dumps(doc, indent=1)


def test_write_json_refuses_what_json_refuses() -> None:
    with pytest.raises(TypeError):
        write_json({"a": [object()]}, io.StringIO())


_PLAIN = ["web", "node-7", "namespace-3/pod-000123", "0/5000", "nodes", "are", "available:", "Insufficient", "cpu."]
_PLAIN += ["a-very-long-word-that-has-to-be-folded-over-several-lines", ""]
_SPECIAL = ["[example.com/hold]", "[red]", "a\\", ":smile:", "x:y:z", "日本", "tab\tbed", "two\nlines", "  "]
_plain_text = st.lists(st.sampled_from(_PLAIN), max_size=8).map(" ".join)
_mixed_text = st.lists(st.sampled_from(_PLAIN + _SPECIAL), max_size=8).map(" ".join)
_cell_text = st.one_of(_plain_text, _plain_text, _plain_text, _mixed_text)  # mostly rows the fast path takes
_MAKERS: list[Callable[[str], table.Cell]] = [table.text, table.escaped, lambda v: table.styled(v, "red")]
_cell = st.builds(lambda make, value: make(value), st.sampled_from(_MAKERS), _cell_text)
_OVERFLOWS = st.sampled_from([None, "fold", "ellipsis", "crop"])


def _both(
    columns: list[table.Column], rows: list[list[table.Cell]], width: int, names: frozenset[int] = frozenset()
) -> tuple[str, str]:
    """What rich prints for the table as fitted, and what table.print_table prints (fast path forced)."""
    slow, fast = io.StringIO(), io.StringIO()
    widths, fitted = table.fit(Console(width=width), columns, rows, names)
    Console(file=slow, width=width).print(table._table("T", columns, fitted, widths))
    saved, table.MIN_ROWS = table.MIN_ROWS, 0
    try:
        table.print_table(Console(file=fast, width=width), "T", columns, rows, names)
    finally:
        table.MIN_ROWS = saved
    return slow.getvalue(), fast.getvalue()


_HEADERS = st.sampled_from(["Pod", "Node", "Why", "Memory requested", "X"])
_COLUMNS: st.SearchStrategy[table.Column] = st.tuples(_HEADERS, _OVERFLOWS) | st.tuples(
    _HEADERS, _OVERFLOWS, st.just("right")
)
_shapes = st.integers(1, 6).flatmap(
    lambda n: st.tuples(
        st.lists(_COLUMNS, min_size=n, max_size=n),
        st.lists(st.lists(_cell, min_size=n, max_size=n), max_size=12),
        st.frozensets(st.integers(0, n - 1)),
    )
)


@_SETTINGS
@given(_shapes, st.integers(20, 140))
def test_table_prints_what_rich_prints(
    shape: tuple[list[table.Column], list[list[table.Cell]], frozenset[int]], width: int
) -> None:
    columns, rows, names = shape
    slow, fast = _both(columns, rows, width, names)
    assert fast == slow


def test_plain_rows_take_the_fast_path() -> None:
    """Mostly plain rows, some wrapping, some escaped or marked up: built here, and still what rich prints."""
    rows = [
        [
            table.text(f"namespace-3/pod-{i:06d}"),
            table.text("-" if i % 7 else f"node-{i}"),
            table.styled("Scheduled" if i % 5 else "Unschedulable", "green"),
            table.escaped("" if i % 5 else "0/5000 nodes are available: 5000 Insufficient cpu. [preemption] " * 2),
        ]
        for i in range(300)
    ]
    columns: list[table.Column] = [("Pod", "fold"), ("Node", "fold"), ("Result", "fold"), ("Why", "fold")]
    console = Console(file=io.StringIO(), width=60)
    assert table._fast_lines(console, "T", columns, rows) is not None
    slow, fast = _both(columns, rows, 60)
    assert fast == slow
