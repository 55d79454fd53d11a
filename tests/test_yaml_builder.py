"""The YAML builder's inline handling of common events agrees with its general `feed`, both ways.

`_Builder.documents` handles unanchored scalars and collections inside collections itself
(the bulk of every manifest) and hands the rest to `feed`; `feed` alone handles every
event. Both must give the same documents and the same errors, on valid and broken input.
"""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.apiserver import documents
from kubesched.apiserver.documents import DocumentError


def _outcome(docs: Any) -> tuple[str, Any]:
    """What reading gives: ("ok", every document) or ("error", the message)."""
    try:
        return "ok", list(docs)
    except DocumentError as err:
        return "error", str(err)


def _inline(text: str, max_nodes: int) -> tuple[str, Any]:
    return _outcome(documents._yaml_documents(text, max_nodes))


def _general(text: str, max_nodes: int) -> tuple[str, Any]:
    """Every event through `feed`, the plain twin of the inline loop."""

    def docs() -> Any:
        builder = documents._Builder(max_nodes)
        loader = documents._Loader(text)
        try:
            for event in iter(loader.get_event, None):
                builder.feed(event)
                yield from builder.docs
                builder.docs.clear()
        except yaml.YAMLError as err:
            raise documents._syntax_error(err) from err
        finally:
            loader.dispose()

    return _outcome(docs())


SCALARS = st.sampled_from(
    ["v1", "Pod", "yes", "on", "0777", "1_000", "1e3", "1:20", "~", "null", "2001-01-01", "'8'", '"x"', "1", "-3.5"]
)
KEYS = st.sampled_from(["a", "b", "c", "name", "1", "yes", "<<", "a"])
TOKENS = st.one_of(
    SCALARS,
    KEYS.map(lambda k: f"{k}:"),
    st.sampled_from(["- ", "\n", "\n  ", "\n    ", "\n      ", "\n---\n", "{}", "[]", "&x ", "*x", "&y ", "*y"]),
    st.sampled_from(["[1, [2, {a: b}]]", "{a: {b: [c]}}", "!!str 5", "!!binary x", ": ", ", ", "]", "'"]),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(TOKENS, max_size=40).map(" ".join), st.integers(min_value=3, max_value=200))
def test_inline_and_general_agree_on_token_soup(text: str, max_nodes: int) -> None:
    assert _inline(text, max_nodes) == _general(text, max_nodes)


LEAVES = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5), st.sampled_from(["yes", "0777", "~"]))
TREES = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(TREES, min_size=1, max_size=3), st.booleans(), st.integers(min_value=5, max_value=10_000))
def test_inline_and_general_agree_on_dumped_documents(trees: list[Any], shared: bool, max_nodes: int) -> None:
    """Deep documents as PyYAML writes them; `shared` repeats one subtree, which PyYAML writes as anchor and alias."""
    if shared:
        trees = [{"a": {"b": {"c": trees[0]}}, "d": [[trees[0]]]}, *trees[1:]]
    text = yaml.safe_dump_all(trees, default_flow_style=False)
    inline = _inline(text, max_nodes)
    assert inline == _general(text, max_nodes)
    if inline[0] == "ok":  # within the limits, what PyYAML itself reads (no timestamps or tags here)
        assert inline[1] == trees


FLOW = st.recursive(
    SCALARS | st.sampled_from(["*x", "*y", "[]", "{}"]),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(lambda items: "[" + ", ".join(items) + "]"),
        st.lists(st.tuples(KEYS, inner), max_size=3).map(
            lambda pairs: "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
        ),
        st.tuples(st.sampled_from(["&x ", "&y "]), inner).map("".join),
    ),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(st.lists(FLOW, min_size=1, max_size=4), st.integers(min_value=3, max_value=300))
def test_inline_and_general_agree_on_nested_anchors_and_merges(values: list[str], max_nodes: int) -> None:
    """Anchors, aliases and merge keys deep inside a document, where the inline loop handles their neighbours."""
    text = "a:\n  b:\n    c:\n" + "".join(f"      k{i}: {v}\n" for i, v in enumerate(values))
    assert _inline(text, max_nodes) == _general(text, max_nodes)


def _block(text: str, max_nodes: int) -> tuple[str, Any]:
    return _outcome(documents._block_documents(text, max_nodes))


def _events(text: str, max_nodes: int) -> tuple[str, Any]:
    return _outcome(documents._yaml_documents(text, max_nodes))


PLAIN_KEYS = st.sampled_from(["a", "b", "name", "yes", "1", "0777", "null", "1.5", "kubernetes.io/os", "x_y-z", "1:20"])
TEXT = st.one_of(
    st.sampled_from(["v1", "8", "'8'", "yes", "1_000", "0x1F", "~", "", "a: b", "a #b", "it's", 'say "x"', "é", "-1"]),
    st.text(alphabet=st.characters(codec="ascii"), max_size=8),
)
MANIFEST_LEAVES = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), TEXT)
MANIFESTS = st.recursive(
    MANIFEST_LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(PLAIN_KEYS | TEXT, inner, max_size=3),
    max_leaves=25,
)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(MANIFESTS, min_size=1, max_size=4),
    st.booleans(),
    st.integers(min_value=1, max_value=3),
    st.integers(min_value=5, max_value=400),
)
def test_block_style_reads_dumped_documents_as_pyyaml_does(
    docs: list[Any], explicit_start: bool, indent: int, max_nodes: int
) -> None:
    """Documents as PyYAML writes them (the style kubectl and Helm write) read line by line give PyYAML's values,
    and PyYAML's error where the budget or the text stops it."""
    text = yaml.safe_dump_all(docs, explicit_start=explicit_start, indent=indent + 1, default_flow_style=False)
    assert _block(text, max_nodes) == _events(text, max_nodes)


LINES = st.sampled_from(
    [
        "a: 1",
        "b: x",
        "a:",
        "- a: 1",
        "- b:",
        "- x",
        "-",
        "- ",
        "c: {}",
        "d: []",
        "e: 'q''s'",
        'f: "g"',
        "yes: 2",
        "true: 3",
        "g: h # c",
        "# comment",
        "",
        "   ",
        "---",
        "--- a",
        "...",
        "h: &x 1",
        "i: *x",
        "<<: {a: 1}",
        "j: |",
        "j: |+",
        "%YAML 1.1",
        "a: 1\r",
        "# \u2028",
        "'x",
        "  y'",
        "  k",
        "l: a: b",
        "m: 'open",
        "n:\tx",
        "o: é",
        "p:  q",
        "r: -s",
        "t: -1",
        "u: [1]",
        "v: ~",
    ]
)


@settings(max_examples=600, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["", "  ", "    ", " ", "      "]), LINES), max_size=25),
    st.integers(min_value=3, max_value=60),
)
def test_block_style_agrees_with_pyyaml_on_line_soup(lines: list[tuple[str, str]], max_nodes: int) -> None:
    """Any mix of lines, valid or not, within or over the budget: the same documents or the same error."""
    text = "\n".join(indent + line for indent, line in lines)
    assert _block(text, max_nodes) == _events(text, max_nodes)


@settings(max_examples=200, deadline=None)
@given(st.lists(MANIFESTS, min_size=1, max_size=4), st.integers(min_value=1, max_value=4))
def test_block_style_reads_alike_when_its_memory_of_lines_fills(docs: list[Any], entries: int) -> None:
    """What lines say is remembered up to MAX_SEEN_LINES, then forgotten: reading stays PyYAML's."""
    text = yaml.safe_dump_all(docs, explicit_start=True, default_flow_style=False)
    kept = documents.MAX_SEEN_LINES
    documents.MAX_SEEN_LINES = entries
    try:
        assert _block(text, 10_000) == _events(text, 10_000)
    finally:
        documents.MAX_SEEN_LINES = kept


def test_manifests_in_block_style_are_read_without_pyyaml(monkeypatch: Any) -> None:
    """The fast path is taken for what kubectl writes (it is not PyYAML answering every time)."""
    text = yaml.safe_dump_all(
        [
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"a": "b"}}, "spec": {}},
            {"kind": "Pod", "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "8"}}}]}},
        ],
        explicit_start=True,
    )
    expected = list(documents._yaml_documents(text, 1000))
    monkeypatch.setattr(documents, "_yaml_documents", None)
    assert list(documents._block_documents(text, 1000)) == expected
