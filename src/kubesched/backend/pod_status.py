"""Pod status writes shared by both backends: what a condition and a nomination change, and how patches merge.

The scheduler asks for "PodScheduled=False with this reason" or "nominate node X";
only the fields that differ from the pod's status are written, a condition keeps
its lastTransitionTime while its status stays the same, and conditions merge by
type, as a strategic merge patch merges them on the API server.
"""

from __future__ import annotations

from kubesched.api.object import Obj


def status_patch(
    status: Obj, condition: Obj | None, nominated_node_name: str | None, now: str, generation: int = 0
) -> Obj:
    """The status fields to write ({} when nothing changes); nominatedNodeName None means remove it.

    A written condition carries the pod's generation as observedGeneration (PodObservedGenerationTracking,
    GA in 1.35); a condition that differs only there is not rewritten, as upstream's UpdatePodCondition.
    """
    patch: Obj = {}
    if condition is not None:
        old = next((c for c in status.get("conditions") or () if c.get("type") == condition["type"]), None)
        if old is None or any(old.get(k) != v for k, v in condition.items()):
            same = old is not None and old.get("status") == condition["status"]
            since = old.get("lastTransitionTime", now) if same and old is not None else now
            written = dict(condition, lastProbeTime=None, lastTransitionTime=since)
            if generation:
                written["observedGeneration"] = generation
            patch["conditions"] = [written]
    if nominated_node_name is not None and (status.get("nominatedNodeName") or "") != nominated_node_name:
        patch["nominatedNodeName"] = nominated_node_name or None
    return patch


def merge_conditions(old: list[Obj], new: list[Obj]) -> list[Obj]:
    """Conditions merged by type: a new one updates the fields of the old one of its type, in its place."""
    merged = {c.get("type"): dict(c) for c in old}
    for c in new:
        merged[c.get("type")] = {**merged.get(c.get("type"), {}), **c}
    return list(merged.values())


def apply_status_patch(status: Obj, patch: Obj) -> Obj:
    """A status with a patch applied: conditions merge by type, a None value removes the field."""
    out = dict(status)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        elif key == "conditions":
            out[key] = merge_conditions(out.get(key) or [], value)
        else:
            out[key] = value
    return out


def generation(obj: Obj) -> int:
    """metadata.generation (0 when the object has none)."""
    value = (obj.get("metadata") or {}).get("generation")
    return value if isinstance(value, int) else 0
