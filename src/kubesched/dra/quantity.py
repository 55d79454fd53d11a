"""Quantities as DRA keeps them: an exact value plus the format it is written back in.

Capacities, counters and capacity requests are resource.Quantity values. The allocator
compares them exactly (kubesched.api.quantity gives the value) and writes the consumed
capacity back into the allocation result, where apimachinery prints a quantity in the
canonical form of its format (Quantity.CanonicalizeBytes): BinarySI ("Ki".."Ei" suffixes),
DecimalSI ("n".."E") or DecimalExponent ("e3").
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Final

from kubesched.api.quantity import QuantityError, parse_quantity

BINARY_SI: Final = "BinarySI"
DECIMAL_SI: Final = "DecimalSI"
DECIMAL_EXPONENT: Final = "DecimalExponent"

_BINARY_SUFFIXES: Final = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_DECIMAL_SUFFIXES: Final = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_NANO: Final = 10**9


@dataclass(frozen=True, slots=True)
class Quantity:
    """A quantity's exact value and the format its text was written in."""

    value: Fraction
    format: str = DECIMAL_SI

    def __str__(self) -> str:
        return canonical(self.value, self.format)


def _format_of(text: str) -> str:
    """The format ParseQuantity infers from the suffix."""
    s = text.strip()
    if s.endswith(_BINARY_SUFFIXES):
        return BINARY_SI
    i = len(s)
    while i > 0 and (s[i - 1].isdigit() or s[i - 1] in "+-"):
        i -= 1
    if i > 0 and s[i - 1] in "eE" and i < len(s) and i > 1 and (s[i - 2].isdigit() or s[i - 2] == "."):
        return DECIMAL_EXPONENT
    return DECIMAL_SI


def _round_up_to_nano(v: Fraction) -> Fraction:
    """ParseQuantity rounds non-zero values away from zero to whole nano units."""
    scaled = v * _NANO
    if scaled.denominator == 1:
        return v
    n = -((-scaled.numerator) // scaled.denominator) if v > 0 else scaled.numerator // scaled.denominator
    return Fraction(n, _NANO)


def parse(raw: object) -> Quantity:
    """Parse a quantity from JSON (a string, or a number in hand-written YAML).

    Raises QuantityError for text that is not a quantity.
    """
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        raise QuantityError(f'"{raw}" is not a valid quantity')
    value = _round_up_to_nano(parse_quantity(raw))
    fmt = _format_of(raw) if isinstance(raw, str) else DECIMAL_SI
    if fmt == BINARY_SI and 0 < abs(value) < 1:
        fmt = DECIMAL_SI
    return Quantity(value, fmt)


def binary(n: int) -> Quantity:
    """resource.NewQuantity(n, BinarySI)."""
    return Quantity(Fraction(n), BINARY_SI)


def canonical(value: Fraction, fmt: str) -> str:
    """The text apimachinery writes for this value in this format."""
    if value == 0:
        return "0"
    if fmt == BINARY_SI:
        if -1024 < value < 1024 or value.denominator != 1:
            fmt = DECIMAL_SI
        else:
            amount, exponent = value.numerator, 0
            while amount % 1024 == 0 and exponent < len(_BINARY_SUFFIXES):
                amount //= 1024
                exponent += 1
            return f"{amount}{_BINARY_SUFFIXES[exponent - 1] if exponent else ''}"
    mantissa = value * _NANO
    amount, exponent = mantissa.numerator // mantissa.denominator, -9
    while amount % 10 == 0:
        amount //= 10
        exponent += 1
    while exponent % 3 != 0:
        amount *= 10
        exponent -= 1
    if fmt == DECIMAL_EXPONENT:
        return f"{amount}e{exponent}" if exponent else str(amount)
    return f"{amount}{_DECIMAL_SUFFIXES.get(exponent, '')}"
