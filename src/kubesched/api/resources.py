"""Pod and node resource accounting with upstream's rules (component-helpers `resource`, v1.36).

A pod's effective request (`PodRequests`) is the larger of the regular containers plus
restartable (sidecar) init containers, and the peak of the init container sequence;
pod-level `spec.resources.requests` (PodLevelResources, beta and on) then replace the
cpu, memory and hugepages totals, and `spec.overhead` is added.

Since InPlacePodVerticalScaling is GA, the scheduler also reads what the kubelet reports
for a pod being resized: per container (and, with InPlacePodLevelResourcesVerticalScaling,
beta and on in v1.36, for the pod level) the request counts as the largest of the spec,
the actuated `status...resources` and `allocatedResources`, or of the last two alone when
the resize is marked infeasible. Quantities are summed exactly and rounded up only at the
end, as resource.Quantity does.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from functools import lru_cache
from typing import Any, Final

from kubesched.api.quantity import parse_quantity, resource_value

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"
HUGEPAGES_PREFIX = "hugepages-"

DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

Resources = dict[str, int]
_Amount = int | Fraction  # exact, in the unit the scheduler keeps (millicores for cpu)
_Exact = dict[str, _Amount]

NON_ZERO_DEFAULTS: Final[Mapping[str, int]] = {CPU: DEFAULT_MILLI_CPU_REQUEST, MEMORY: DEFAULT_MEMORY_REQUEST}
"""What scoring assumes for a container that leaves cpu or memory out (NonMissingContainerRequests)."""


def is_extended_resource_name(name: str) -> bool:
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def is_scalar_resource_name(name: str) -> bool:
    """Resources NodeInfo tracks beyond cpu/memory/ephemeral-storage/pods."""
    return (
        is_extended_resource_name(name)
        or name.startswith(HUGEPAGES_PREFIX)
        or "kubernetes.io/" in name
        or name.startswith("attachable-volumes-")
    )


def is_supported_pod_level_resource(name: str) -> bool:
    """Pod-level requests may set cpu, memory and hugepages; other names there are ignored."""
    return name in (CPU, MEMORY) or name.startswith(HUGEPAGES_PREFIX)


def parse_resource_list(raw: Mapping[str, Any] | None) -> Resources:
    """Parse a ResourceList; raises QuantityError naming nothing (callers add the path)."""
    if not raw:
        return {}
    return {name: resource_value(name, q) for name, q in raw.items()}


@lru_cache(maxsize=8192)
def _exact_value(is_cpu: bool, q: str | int | float) -> _Amount:
    v = parse_quantity(q) * 1000 if is_cpu else parse_quantity(q)
    return v.numerator if v.denominator == 1 else v


def _exact_list(raw: Mapping[str, Any] | None) -> _Exact:
    if not raw:
        return {}
    return {name: _exact_value(name == CPU, q) for name, q in raw.items()}


def _round_up(v: _Amount) -> int:
    return v if isinstance(v, int) else -((-v.numerator) // v.denominator)


def _add(into: _Exact, other: Mapping[str, _Amount]) -> None:
    for k, v in other.items():
        into[k] = into.get(k, 0) + v


def _max(into: _Exact, other: Mapping[str, _Amount]) -> None:
    for k, v in other.items():
        if k not in into or v > into[k]:
            into[k] = v


def is_pod_level_requests_set(spec: Mapping[str, Any]) -> bool:
    return any(is_supported_pod_level_resource(n) for n in ((spec.get("resources") or {}).get("requests") or ()))


def _resize_infeasible(status: Mapping[str, Any]) -> bool:
    """IsPodResizeInfeasible: the first PodResizePending condition says Infeasible."""
    for c in status.get("conditions") or ():
        if c.get("type") == "PodResizePending":
            return bool(c.get("reason") == "Infeasible")
    return False


def _effective(
    spec: _Exact, actuated: Mapping[str, Any] | None, allocated: Mapping[str, Any] | None, infeasible: bool
) -> _Exact:
    """determineEffectiveRequests: a resize in flight counts at its largest; an infeasible one not at all."""
    out: _Exact = {} if infeasible else dict(spec)
    _max(out, _exact_list(actuated))
    _max(out, _exact_list(allocated))
    return out


def _container_requests(
    c: Mapping[str, Any],
    statuses: Mapping[str, Mapping[str, Any]] | None,
    infeasible: bool,
    non_missing: Mapping[str, int] | None,
) -> _Exact:
    reqs = _exact_list((c.get("resources") or {}).get("requests"))
    if statuses is not None:
        cs = statuses.get(str(c.get("name") or ""))
        if cs is not None and cs.get("resources") is not None:
            reqs = _effective(reqs, cs["resources"].get("requests"), cs.get("allocatedResources"), infeasible)
    if non_missing:
        reqs = {**{k: v for k, v in non_missing.items() if k not in reqs}, **reqs}
    return reqs


def pod_requests(
    pod: Mapping[str, Any],
    *,
    use_status_resources: bool = True,
    skip_pod_level_resources: bool = False,
    non_missing: Mapping[str, int] | None = None,
) -> Resources:
    """PodRequests for a Pod object, in the units the scheduler keeps, limited to what framework.Resource tracks.

    `use_status_resources` reads resize state (InPlacePodVerticalScaling and its pod-level
    twin, both on); `skip_pod_level_resources` ignores spec.resources; `non_missing`
    fills cpu/memory a container leaves out.
    """
    spec = pod.get("spec") or {}
    status = (pod.get("status") or {}) if use_status_resources else {}
    statuses: dict[str, Mapping[str, Any]] | None = None
    infeasible = False
    if use_status_resources:
        statuses = {
            str(cs.get("name") or ""): cs
            for group in ("containerStatuses", "initContainerStatuses")
            for cs in status.get(group) or ()
        }
        infeasible = _resize_infeasible(status)
    reqs: _Exact = {}
    for c in spec.get("containers") or ():
        _add(reqs, _container_requests(c, statuses, infeasible, non_missing))
    restartable: _Exact = {}
    init_peak: _Exact = {}
    for c in spec.get("initContainers") or ():
        sidecar = c.get("restartPolicy") == "Always"
        # Resize status counts for sidecars only: a regular init container has finished.
        c_reqs = _container_requests(c, statuses if sidecar else None, infeasible, non_missing)
        if sidecar:
            _add(reqs, c_reqs)
            _add(restartable, c_reqs)
            step = restartable
        else:
            step = dict(c_reqs)
            _add(step, restartable)
        _max(init_peak, step)
    _max(reqs, init_peak)
    if not skip_pod_level_resources and is_pod_level_requests_set(spec):
        pod_level = _exact_list(spec["resources"]["requests"])
        effective: _Exact | None = None
        if use_status_resources and status.get("resources") is not None:
            actuated = status["resources"].get("requests")
            effective = _effective(pod_level, actuated, status.get("allocatedResources"), infeasible)
        for name, amount in pod_level.items():
            if is_supported_pod_level_resource(name):
                reqs[name] = amount if effective is None else effective.get(name, 0)
    _add(reqs, _exact_list(spec.get("overhead")))
    # framework.Resource keeps only the names it knows; anything else in a request is not accounted.
    return {k: _round_up(v) for k, v in reqs.items() if k in _TRACKED or is_scalar_resource_name(k)}


def reads_status_resources(pod: Mapping[str, Any]) -> bool:
    """Whether resize state in the pod's status could change its requests (kubelet-reported resources)."""
    status = pod.get("status") or {}
    return status.get("resources") is not None or any(
        cs.get("resources") is not None
        for group in ("containerStatuses", "initContainerStatuses")
        for cs in status.get(group) or ()
    )


def calculate_resource(pod: Mapping[str, Any]) -> tuple[Resources, int, int]:
    """PodInfo.CalculateResource: (requests, non-zero cpu, non-zero memory) a pod adds to its node.

    With pod-level requests set, the scoring defaults fill only cpu or memory that
    neither the pod level nor any container requests.
    """
    requests = pod_requests(pod)
    non_missing: Mapping[str, int] = NON_ZERO_DEFAULTS
    if is_pod_level_requests_set(pod.get("spec") or {}):
        non_missing = {k: v for k, v in NON_ZERO_DEFAULTS.items() if k not in requests}
    non_zero = pod_requests(pod, non_missing=non_missing) if non_missing else requests
    return requests, non_zero.get(CPU, 0), non_zero.get(MEMORY, 0)


_TRACKED = frozenset((CPU, MEMORY, EPHEMERAL_STORAGE, PODS))
