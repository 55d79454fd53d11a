"""The NodeAffinity signer's written-out requirements and terms equal the canonical JSON of their plain twins."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework import signers

_TEXT = st.text(max_size=6) | st.sampled_from(["metadata.name", "In", "NotIn", "Exists", "zone-a", 'é"\\\n'])
_ODD = st.none() | st.integers(-3, 3) | st.booleans() | st.lists(_TEXT, max_size=2)


@st.composite
def _requirements(draw: st.DrawFn) -> dict[str, Any]:
    """Mostly the usual key, operator and string values; sometimes a field missing, odd or extra."""
    r: dict[str, Any] = {}
    for name in ("key", "operator"):
        if draw(st.integers(0, 9)):
            r[name] = draw(_TEXT) if draw(st.integers(0, 9)) else draw(_ODD)
    if draw(st.booleans()):
        r["values"] = draw(st.lists(_TEXT, max_size=4) | st.none() | st.lists(st.integers(0, 3), max_size=3))
    if not draw(st.integers(0, 9)):
        r[draw(st.sampled_from(["extra", "Values", "a"]))] = draw(_ODD)
    return r


def _plain_term(term: dict[str, Any]) -> str:
    return signers.canonical(
        {
            "MatchExpressions": sorted(signers._requirement(r) for r in term.get("matchExpressions") or ()),
            "MatchFields": sorted(signers._requirement(r) for r in term.get("matchFields") or ()),
        }
    )


@settings(max_examples=300, deadline=None)
@given(r=_requirements())
def test_a_written_out_requirement_equals_its_canonical_json(r: dict[str, Any]) -> None:
    assert signers._plain_requirement(r) == signers._requirement(r)


@settings(max_examples=200, deadline=None)
@given(
    exprs=st.none() | st.lists(_requirements(), max_size=3),
    fields=st.none() | st.lists(_requirements(), max_size=2),
)
def test_a_written_out_term_equals_its_canonical_json(
    exprs: list[dict[str, Any]] | None, fields: list[dict[str, Any]] | None
) -> None:
    term: dict[str, Any] = {}
    if exprs is not None:
        term["matchExpressions"] = exprs
    if fields is not None:
        term["matchFields"] = fields
    assert signers._term_text(term) == _plain_term(term)
