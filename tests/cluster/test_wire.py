"""backend/kube/wire.py: orjson where it agrees with the json module, json where orjson refuses."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.backend.kube import wire

# What an API server's JSON holds: strings (any Unicode), 64-bit integers, finite floats, booleans, null.
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
_documents = st.recursive(
    _scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4), max_leaves=20
)


@given(_documents)
def test_loads_gives_what_json_gives(doc: Any) -> None:
    for text in (json.dumps(doc), json.dumps(doc, ensure_ascii=False), json.dumps(doc, indent=1)):
        assert wire.loads(text.encode()) == json.loads(text)


@given(_documents)
def test_dumps_round_trips(doc: Any) -> None:
    assert json.loads(wire.dumps(doc)) == doc


@pytest.mark.parametrize(
    ("text", "want"),
    [
        (b'{"a":"\\ud800"}', {"a": "\ud800"}),  # a lone surrogate escape: orjson refuses it
        (b"[NaN]", [math.nan]),
        (b"1e400", math.inf),
    ],
)
def test_what_orjson_refuses_falls_back_to_json(text: bytes, want: Any) -> None:
    got = wire.loads(text)
    assert repr(got) == repr(want)


def test_not_json_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        wire.loads(b"<html>502 Bad Gateway</html>")


def test_a_body_orjson_cannot_encode_goes_through_json() -> None:
    assert json.loads(wire.dumps({"n": 2**70})) == {"n": 2**70}
