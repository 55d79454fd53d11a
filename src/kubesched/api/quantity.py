"""Kubernetes resource quantities with exact arithmetic.

Mirrors apimachinery's resource.Quantity parsing: a signed decimal number with an
optional binary (Ki..Ei), decimal (n, u, m, k, M, G, T, P, E) or exponent (e3, E-2)
suffix. Values are kept as exact fractions; `milli_value` and `value` round up as
upstream's MilliValue()/Value() do, so "0.5m" CPU is 1 millicore.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

_NUMBER = re.compile(r"^([+-]?)([0-9]*)(?:\.([0-9]*))?(.*)$")
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_BINARY_DIGITS = {"Ki": 4, "Mi": 7, "Gi": 10, "Ti": 13, "Pi": 16, "Ei": 19}  # decimal digits of each unit
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_EXPONENT = re.compile(r"^[eE]([+-]?[0-9]+)$")

MAX_INT64 = 2**63 - 1
"""The largest amount the scheduler counts; larger quantities saturate here, as Quantity.Value() does for 8Ei."""
_MAGNITUDE_LIMIT = 40  # decimal digits beyond which a value is saturated (or, below 10**-40, taken as tiny)
_SIGNIFICANT_DIGITS = 60  # digits kept from a longer mantissa, rounding away from zero


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity."""


def _saturate(v: Fraction) -> Fraction:
    if v > MAX_INT64:
        return Fraction(MAX_INT64)
    if v < -MAX_INT64 - 1:
        return Fraction(-MAX_INT64 - 1)
    return v


@lru_cache(maxsize=4096)
def parse_quantity(text: str | int | float) -> Fraction:
    """Return the value of a quantity such as ``"1.5Gi"`` or ``"250m"``, exact within int64.

    Values beyond int64 saturate at its bounds and values below 10**-40 are taken as
    10**-40 (still rounding up to one unit), so `1e999999999` costs no more than `1`.
    """
    if isinstance(text, bool):
        raise QuantityError(f'"{text}" is not a valid quantity')
    if isinstance(text, int):
        return _saturate(Fraction(text))
    if isinstance(text, float):
        if text != text or text in (float("inf"), float("-inf")):
            raise QuantityError(f'"{text}" is not a valid quantity')
        return _saturate(Fraction(repr(text)))
    s = str(text).strip()
    m = _NUMBER.match(s)
    if not m or not (m.group(2) or m.group(3)):
        raise QuantityError(f'"{_shorten(text)}" is not a valid quantity')
    sign, whole, frac, suffix = m.group(1), m.group(2), m.group(3) or "", m.group(4)
    exp10, factor = 0, 1
    if suffix in _BINARY:
        factor, exp10_estimate = _BINARY[suffix], _BINARY_DIGITS[suffix]
    elif suffix in _DECIMAL:
        exp10 = exp10_estimate = _DECIMAL[suffix]
    else:
        e = _EXPONENT.match(suffix)
        if not e:
            raise QuantityError(f'"{_shorten(text)}" is not a valid quantity')
        digits = e.group(1).lstrip("+-").lstrip("0")
        if len(digits) > 12:  # far beyond any limit below: decide by its sign alone
            exp10 = exp10_estimate = (-1 if e.group(1).startswith("-") else 1) * 10**13
        else:
            exp10 = exp10_estimate = int(e.group(1))
    mantissa = (whole + frac).lstrip("0")
    if not mantissa:
        return Fraction(0)
    negative = sign == "-"
    # Decimal digits before the point of the value, roughly: enough to tell huge and tiny apart.
    magnitude = len(mantissa) - len(frac) + exp10_estimate
    if magnitude > _MAGNITUDE_LIMIT:
        return Fraction(-MAX_INT64 - 1 if negative else MAX_INT64)
    if magnitude < -_MAGNITUDE_LIMIT:
        return Fraction(-1 if negative else 1, 10**_MAGNITUDE_LIMIT)
    point = len(frac)
    if len(mantissa) > _SIGNIFICANT_DIGITS:
        dropped = len(mantissa) - _SIGNIFICANT_DIGITS
        mantissa = str(int(mantissa[:_SIGNIFICANT_DIGITS]) + 1)
        point -= dropped
    value = Fraction(int(mantissa)) * factor * Fraction(10) ** (exp10 - point)
    return _saturate(-value if negative else value)


def _shorten(text: object) -> str:
    s = str(text)
    return s if len(s) <= 40 else s[:37] + "..."


def _ceil(value: Fraction) -> int:
    return -((-value.numerator) // value.denominator)


def _clamp(n: int) -> int:
    return max(-MAX_INT64 - 1, min(MAX_INT64, n))


def milli_value(text: str | int | float) -> int:
    """Quantity in thousandths, rounded up (CPU millicores), saturating at the int64 bounds."""
    return _clamp(_ceil(parse_quantity(text) * 1000))


def value(text: str | int | float) -> int:
    """Quantity as a whole number, rounded up (bytes, counts)."""
    return _clamp(_ceil(parse_quantity(text)))


def resource_value(name: str, text: str | int | float) -> int:
    """The integer the scheduler keeps for a resource: millicores for cpu, else the value."""
    return milli_value(text) if name == "cpu" else value(text)


def format_quantity(name: str, amount: int) -> str:
    """Render an integer amount back in Kubernetes notation (cpu from millicores)."""
    if name == "cpu":
        return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
    if amount == 0:
        return "0"
    for suffix in ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki"):
        unit = _BINARY[suffix]
        if amount % unit == 0:
            return f"{amount // unit}{suffix}"
    return str(amount)
