"""What the workload-aware plugins share about a pod's group (helper/podgroup.go)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.framework.types import PodInfo


def pod_group_name(pod: PodInfo) -> str | None:
    """The PodGroup a pod names in spec.schedulingGroup, None when it names none."""
    group = (pod.obj.get("spec") or {}).get("schedulingGroup")
    if not isinstance(group, Mapping):
        return None
    name = group.get("podGroupName")
    return name if isinstance(name, str) and name else None


def matching_scheduling_group(a: PodInfo, b: PodInfo) -> bool:
    """Both pods name the same group in the same namespace."""
    name = pod_group_name(a)
    return name is not None and a.namespace == b.namespace and name == pod_group_name(b)


def gang_min_count(pod_group: Mapping[str, Any]) -> int | None:
    """The gang policy's minCount; None for a group without one (basic policy)."""
    gang = ((pod_group.get("spec") or {}).get("schedulingPolicy") or {}).get("gang")
    if not isinstance(gang, Mapping):
        return None
    count = gang.get("minCount")
    return count if isinstance(count, int) else 0


def topology_key(pod_group: Mapping[str, Any]) -> str | None:
    """The first (in v1alpha2 the only) topology constraint's key, None without constraints."""
    constraints = (pod_group.get("spec") or {}).get("schedulingConstraints") or {}
    topology = constraints.get("topology") or []
    if not topology:
        return None
    key = topology[0].get("key") if isinstance(topology[0], Mapping) else None
    return str(key) if key else None
