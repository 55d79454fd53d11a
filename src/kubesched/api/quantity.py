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

_NUMBER = re.compile(r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(.*)$")
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_EXPONENT = re.compile(r"^[eE]([+-]?[0-9]+)$")


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity."""


@lru_cache(maxsize=4096)
def parse_quantity(text: str | int | float) -> Fraction:
    """Return the exact value of a quantity such as ``"1.5Gi"`` or ``"250m"``."""
    if isinstance(text, bool):
        raise QuantityError(f'"{text}" is not a valid quantity')
    if isinstance(text, int):
        return Fraction(text)
    if isinstance(text, float):
        return Fraction(str(text))
    s = str(text).strip()
    m = _NUMBER.match(s)
    if not m:
        raise QuantityError(f'"{text}" is not a valid quantity')
    number, suffix = m.groups()
    base = Fraction(number)
    if suffix in _BINARY:
        return base * _BINARY[suffix]
    if suffix in _DECIMAL:
        return base * _DECIMAL[suffix]
    e = _EXPONENT.match(suffix)
    if e:
        exp = int(e.group(1))
        return base * (Fraction(10) ** exp)
    raise QuantityError(f'"{text}" is not a valid quantity')


def _ceil(value: Fraction) -> int:
    return -((-value.numerator) // value.denominator)


def milli_value(text: str | int | float) -> int:
    """Quantity in thousandths, rounded up (CPU millicores)."""
    return _ceil(parse_quantity(text) * 1000)


def value(text: str | int | float) -> int:
    """Quantity as a whole number, rounded up (bytes, counts)."""
    return _ceil(parse_quantity(text))


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
