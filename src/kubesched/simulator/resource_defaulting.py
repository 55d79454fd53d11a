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
from kubesched.simulator.resource_validation import drop_disabled_fields

CREATION_TIME = "2026-01-01T00:00:00Z"  # virtual time 0 (the embedded cluster's EPOCH), for timeAdded


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _default_request(request: dict[str, Any]) -> None:
    request.setdefault("allocationMode", "ExactCount")
    if request["allocationMode"] == "ExactCount" and not request.get("count"):
        request["count"] = 1
    for tol in _dicts(request.get("tolerations")):
        if not tol.get("operator"):
            tol["operator"] = "Equal"


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
            for tol in _dicts(result.get("tolerations")):
                if not tol.get("operator"):
                    tol["operator"] = "Equal"


def default_resource_claim_template(template: Obj) -> None:
    spec = template.get("spec")
    if isinstance(spec, dict):
        default_claim_spec(spec.get("spec"))


def default_resource_slice(rs: Obj) -> None:
    drop_disabled_fields(rs)
    spec = rs.get("spec")
    for device in _dicts(spec.get("devices") if isinstance(spec, dict) else None):
        for taint in _dicts(device.get("taints")):
            taint.setdefault("timeAdded", CREATION_TIME)


DEFAULTERS: dict[str, Callable[[Obj], None]] = {
    "ResourceClaim": default_resource_claim,
    "ResourceClaimTemplate": default_resource_claim_template,
    "ResourceSlice": default_resource_slice,
}
