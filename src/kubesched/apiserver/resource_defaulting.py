"""The API server's defaulting of `resource.k8s.io/v1` objects (pkg/apis/resource/v1/defaults.go, v1.36).

- Requests (`exactly` and each `firstAvailable` subrequest): allocationMode ExactCount,
  then count 1 for ExactCount; tolerations' operator Equal (also in allocation results).
- ResourceSlice devices: a taint's timeAdded is the time of creation (virtual time 0 for
  the input); list-valued attributes and node allocatable resource mappings are dropped,
  as the API server drops fields of alpha features that are off.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubesched.api.object import Obj
from kubesched.apiserver.resource_validation import LIST_ATTRIBUTES
from kubesched.clock import EPOCH

CREATION_TIME = EPOCH.strftime("%Y-%m-%dT%H:%M:%SZ")  # virtual time 0, for timeAdded


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _default_tolerations(holder: dict[str, Any]) -> None:
    for tol in _dicts(holder.get("tolerations")):
        if not tol.get("operator"):
            tol["operator"] = "Equal"


def _default_request(request: dict[str, Any]) -> None:
    request.setdefault("allocationMode", "ExactCount")
    if request["allocationMode"] == "ExactCount" and not request.get("count"):
        request["count"] = 1
    _default_tolerations(request)


def default_claim_spec(spec: Any) -> None:
    devices = spec.get("devices") if isinstance(spec, dict) else None
    if not isinstance(devices, dict):
        return
    for request in _dicts(devices.get("requests")):
        exactly = request.get("exactly")
        if isinstance(exactly, dict):
            _default_request(exactly)
        for sub in _dicts(request.get("firstAvailable")):
            _default_request(sub)


def default_resource_claim(claim: Obj) -> None:
    default_claim_spec(claim.get("spec"))
    status = claim.get("status")
    allocation = status.get("allocation") if isinstance(status, dict) else None
    devices = allocation.get("devices") if isinstance(allocation, dict) else None
    if isinstance(devices, dict):
        for result in _dicts(devices.get("results")):
            _default_tolerations(result)


def default_resource_claim_template(template: Obj) -> None:
    spec = template.get("spec")
    if isinstance(spec, dict):
        default_claim_spec(spec.get("spec"))


def _drop_disabled_fields(spec: Any) -> None:
    """What the API server drops from a new ResourceSlice with v1.36's default gates: list-valued attributes
    (DRAListTypeAttributes) and node allocatable resource mappings (DRANodeAllocatableResources), both alpha."""
    for device in _dicts(spec.get("devices") if isinstance(spec, dict) else None):
        device.pop("nodeAllocatableResourceMappings", None)
        attributes = device.get("attributes")
        for attr in attributes.values() if isinstance(attributes, dict) else ():
            if isinstance(attr, dict):
                for key in LIST_ATTRIBUTES:
                    attr.pop(key, None)


def default_resource_slice(rs: Obj) -> None:
    _drop_disabled_fields(rs.get("spec"))
    spec = rs.get("spec")
    for device in _dicts(spec.get("devices") if isinstance(spec, dict) else None):
        for taint in _dicts(device.get("taints")):
            taint.setdefault("timeAdded", CREATION_TIME)


DEFAULTERS: dict[str, Callable[[Obj], None]] = {
    "ResourceClaim": default_resource_claim,
    "ResourceClaimTemplate": default_resource_claim_template,
    "ResourceSlice": default_resource_slice,
}
