"""Paths into a JSON-shaped object, for property tests that mutate one spot of a manifest."""

from __future__ import annotations

from typing import Any

Path = tuple[Any, ...]


def object_paths(obj: Any, prefix: Path = ()) -> list[Path]:
    """Every path below `obj` (keys and list indexes), `prefix` first: the root itself is the path ()."""
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.extend(object_paths(v, (*prefix, k)))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.extend(object_paths(v, (*prefix, i)))
    return out
