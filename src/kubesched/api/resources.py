"""Pod and node resource accounting with upstream's rules.

A pod's effective request (component-helpers `PodRequests`) is the larger of the
regular containers plus restartable (sidecar) init containers, and the peak of the
init container sequence, plus `spec.overhead`. The "non-zero" variant used for
scoring substitutes 100m CPU and 200Mi memory for containers that omit them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.api.quantity import resource_value

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

Resources = dict[str, int]


def is_extended_resource_name(name: str) -> bool:
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def is_scalar_resource_name(name: str) -> bool:
    """Resources NodeInfo tracks beyond cpu/memory/ephemeral-storage/pods."""
    return (
        is_extended_resource_name(name)
        or name.startswith("hugepages-")
        or "kubernetes.io/" in name
        or name.startswith("attachable-volumes-")
    )


def parse_resource_list(raw: Mapping[str, Any] | None) -> Resources:
    """Parse a ResourceList; raises QuantityError naming nothing (callers add the path)."""
    if not raw:
        return {}
    return {name: resource_value(name, q) for name, q in raw.items()}


def _add(into: Resources, other: Mapping[str, int]) -> None:
    for k, v in other.items():
        into[k] = into.get(k, 0) + v


def _max(into: Resources, other: Mapping[str, int]) -> None:
    for k, v in other.items():
        if v > into.get(k, 0):
            into[k] = v


def _container_requests(container: Mapping[str, Any], non_zero: bool) -> Resources:
    reqs = parse_resource_list((container.get("resources") or {}).get("requests"))
    if non_zero:
        reqs.setdefault(CPU, DEFAULT_MILLI_CPU_REQUEST)
        reqs.setdefault(MEMORY, DEFAULT_MEMORY_REQUEST)
    return reqs


def pod_requests(spec: Mapping[str, Any], *, non_zero: bool = False) -> Resources:
    """Effective pod requests (see module docstring); `non_zero` applies scoring defaults."""
    pod_level = (spec.get("resources") or {}).get("requests")
    reqs: Resources = {}
    for c in spec.get("containers") or ():
        _add(reqs, _container_requests(c, non_zero))
    restartable: Resources = {}
    init_peak: Resources = {}
    for c in spec.get("initContainers") or ():
        c_reqs = _container_requests(c, non_zero)
        if c.get("restartPolicy") == "Always":
            _add(reqs, c_reqs)
            _add(restartable, c_reqs)
            step = dict(restartable)
        else:
            step = dict(c_reqs)
            _add(step, restartable)
        _max(init_peak, step)
    _max(reqs, init_peak)
    if pod_level:
        # PodLevelResources (beta, on in 1.34): pod-level cpu/memory replace the aggregate.
        for name, amount in parse_resource_list(pod_level).items():
            if name in (CPU, MEMORY):
                reqs[name] = amount
    _add(reqs, parse_resource_list(spec.get("overhead")))
    # framework.Resource keeps only the names it knows; anything else in a request is not accounted.
    return {k: v for k, v in reqs.items() if k in _TRACKED or is_scalar_resource_name(k)}


_TRACKED = frozenset((CPU, MEMORY, EPHEMERAL_STORAGE, PODS))
