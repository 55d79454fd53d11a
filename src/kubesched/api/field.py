"""Field errors worded as apimachinery's field.Error, so a refused manifest reads as the API server's answer.

Each helper returns one message, `<path>: <Type>: <detail>`; `aggregate` joins several
the way Go's error aggregate does (`[a, b]`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any


def show(value: Any) -> str:
    """A value as field.Error prints it: strings quoted, numbers bare, anything else as JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if value is None:
        return "null"
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def required(path: str, detail: str = "") -> str:
    return f"{path}: Required value" + (f": {detail}" if detail else "")


def invalid(path: str, value: Any, detail: str) -> str:
    return f"{path}: Invalid value: {show(value)}: {detail}"


def not_supported(path: str, value: Any, supported: Sequence[str]) -> str:
    return f"{path}: Unsupported value: {show(value)}: supported values: " + ", ".join(f'"{s}"' for s in supported)


def forbidden(path: str, detail: str) -> str:
    return f"{path}: Forbidden: {detail}"


def duplicate(path: str, value: Any) -> str:
    return f"{path}: Duplicate value: {show(value)}"


def too_long(path: str, limit: int) -> str:
    return f"{path}: Too long: must have at most {limit} bytes"


def aggregate(errors: Iterable[str]) -> str:
    errs = list(errors)
    return errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]"
