"""Answers of pure checks remembered by the content of what they checked.

The pods of one workload repeat one spec: ten thousand replicas decode and validate the
same bytes ten thousand times. A check whose answer depends only on its arguments keeps
it here under their canonical JSON (sorted keys; orjson tells 1 from 1.0 and from true),
so the API server's answer is computed once per distinct content and is still exactly
the answer for every object. Arguments JSON cannot hold exactly (non-string keys,
integers past 64 bits) are not remembered: they are checked each time.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Generic, TypeVar

import orjson

T = TypeVar("T")

DEFAULT_ENTRIES = 1024
"""Distinct contents kept: a workload's pods come together, so a few suffice; the memory stays a few MB."""


class ContentMemo(Generic[T]):
    """Answers by the content of their arguments, at most `entries` of them (all forgotten when full)."""

    __slots__ = ("entries", "_answers")

    def __init__(self, entries: int = DEFAULT_ENTRIES) -> None:
        self.entries = entries
        self._answers: dict[bytes, T] = {}

    @staticmethod
    def key(*parts: Any) -> bytes | None:
        """The canonical JSON of `parts`, or None when JSON cannot tell them apart from others."""
        try:
            return orjson.dumps(parts, option=orjson.OPT_SORT_KEYS)
        except TypeError:  # orjson.JSONEncodeError is one: a non-string key, a huge integer, a lone surrogate
            return None

    def get(self, key: bytes | None) -> T | None:
        return None if key is None else self._answers.get(key)

    def put(self, key: bytes | None, answer: T) -> None:
        if key is None:
            return
        if len(self._answers) >= self.entries:
            self._answers.clear()
        self._answers[key] = answer


PINNED_PLACEHOLDER = "pinned-node"
"""The node name a pinned spec's shape holds in place of its own (any valid name would do)."""


def pinned_shape(spec: Any) -> tuple[dict[str, Any], str] | None:
    """A spec that pins its pod to one node, with that node's name swapped out, and the name; else None.

    A DaemonSet's pods repeat one spec but for the node each names (one required node
    selector term whose only field requirement is metadata.name In [name]), so keyed by
    content every one of them misses. Keyed by this shape, the checks that read the name
    only as a string (decoding, validation once the name itself is valid, parsing) run once
    per DaemonSet. The shape is a copy along the path to the name; `spec` is left as it is.
    """
    affinity = _dict_at(spec, "affinity")
    node_affinity = _dict_at(affinity, "nodeAffinity")
    required = _dict_at(node_affinity, "requiredDuringSchedulingIgnoredDuringExecution")
    if affinity is None or node_affinity is None or required is None:
        return None
    terms = required.get("nodeSelectorTerms")
    if terms.__class__ is not list or len(terms) != 1 or terms[0].__class__ is not dict:
        return None
    term = terms[0]
    fields = term.get("matchFields")
    if fields.__class__ is not list or len(fields) != 1 or fields[0].__class__ is not dict:
        return None
    requirement = fields[0]
    values = requirement.get("values")
    if (
        requirement.get("key") != "metadata.name"
        or requirement.get("operator") != "In"
        or values.__class__ is not list
        or len(values) != 1
        or values[0].__class__ is not str
    ):
        return None
    name: str = values[0]
    shaped_term = {**term, "matchFields": [{**requirement, "values": [PINNED_PLACEHOLDER]}]}
    shaped_required = {**required, "nodeSelectorTerms": [shaped_term]}
    shaped_affinity = {
        **affinity,
        "nodeAffinity": {**node_affinity, "requiredDuringSchedulingIgnoredDuringExecution": shaped_required},
    }
    return {**spec, "affinity": shaped_affinity}, name


def _dict_at(parent: Any, key: str) -> dict[str, Any] | None:
    """parent[key] when both are dicts (parent is whatever the manifest held), else None."""
    value = parent.get(key) if parent.__class__ is dict else None
    return value if value.__class__ is dict else None


def share_specs(objects: Iterable[dict[str, Any]], memo: ContentMemo[dict[str, Any]] | None = None) -> None:
    """Admitted pods whose specs hold the same content end up holding one spec dict.

    A stored spec is never changed in place once admitted (a binding, a status patch or a
    Scenario update writes a new object), so the replicas of a template need one copy, not
    one each: at a million pods that is gigabytes. A spec naming a schedulingGroup is left
    apart: a server without the gate drops it from each pod and counts them.
    """
    memo = memo if memo is not None else ContentMemo()
    for obj in objects:
        spec = obj.get("spec")
        if obj.get("kind") != "Pod" or spec.__class__ is not dict or "schedulingGroup" in spec:
            continue
        key = ContentMemo.key(spec)
        same = memo.get(key)
        if same is None:
            memo.put(key, spec)
        else:
            obj["spec"] = same
