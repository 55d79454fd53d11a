"""Quantity text as apimachinery writes it back (Quantity.String / CanonicalizeBytes)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from kubesched.api.quantity import QuantityError
from kubesched.dra import quantity


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("0", "0"),
        ("2", "2"),
        ("1Gi", "1Gi"),
        ("1024Mi", "1Gi"),
        ("1.5Gi", "1536Mi"),
        ("1536", "1536"),
        ("1000", "1k"),
        ("1500m", "1500m"),
        ("0.5", "500m"),
        ("1e3", "1e3"),
        ("1E", "1E"),
        ("12e2", "1200"),
        ("0.1n", "1n"),
        ("100Mi", "100Mi"),
        ("1000Ki", "1000Ki"),
        ("0.5Ki", "512"),
        ("-2Gi", "-2Gi"),
        ("5G", "5G"),
    ],
)
def test_canonical(text: str, canonical: str) -> None:
    assert str(quantity.parse(text)) == canonical


def test_binary_and_numbers() -> None:
    assert str(quantity.binary(4)) == "4"
    assert str(quantity.binary(2048)) == "2Ki"
    assert quantity.parse(3).value == Fraction(3)
    with pytest.raises(QuantityError):
        quantity.parse("lots")
    with pytest.raises(QuantityError):
        quantity.parse(True)
