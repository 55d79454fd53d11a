"""A pod's ResourceClaims as the `kubesched simulate` JSON record shows them (`resourceClaims`).

One entry per `spec.resourceClaims` entry: its name, the claim it resolves to
(`namespace/name`: the named claim, or the one the resourceclaim controller made from
the template and recorded in `status.resourceClaimStatuses`; null while none is made or
when none is needed) and the devices of the claim's `status.allocation.devices.results`,
in their order, as `{"request", "driver", "pool", "device"}` (empty while unallocated).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol


class ClaimReader(Protocol):
    """What the store and the informers' listers both answer."""

    def get(self, kind: str, namespace: str, name: str) -> Mapping[str, Any] | None: ...


def claim_status_name(pod: Mapping[str, Any], entry: str) -> str | None:
    """The claim recorded for a template entry in the pod's status ('' when none is needed, None when none is
    recorded yet)."""
    for status in (pod.get("status") or {}).get("resourceClaimStatuses") or ():
        if isinstance(status, Mapping) and status.get("name") == entry:
            return str(status.get("resourceClaimName") or "")
    return None


def claim_name(pod: Mapping[str, Any], entry: Mapping[str, Any]) -> str | None:
    """resourceclaim.Name: the claim a pod entry refers to; None when a template's claim is not made (or needed)."""
    if entry.get("resourceClaimName"):
        return str(entry["resourceClaimName"])
    return claim_status_name(pod, str(entry.get("name") or "")) or None


def allocated_devices(claim: Mapping[str, Any] | None) -> list[dict[str, str]]:
    allocation = ((claim or {}).get("status") or {}).get("allocation") or {}
    results = (allocation.get("devices") or {}).get("results") or ()
    return [
        {key: str(result.get(key) or "") for key in ("request", "driver", "pool", "device")}
        for result in results
        if isinstance(result, Mapping)
    ]


def pod_resource_claims(reader: ClaimReader, pod: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The contract's `resourceClaims` list for a pod ([] for a pod without claims)."""
    meta = pod.get("metadata") or {}
    namespace = str(meta.get("namespace") or "default")
    out: list[dict[str, Any]] = []
    for entry in (pod.get("spec") or {}).get("resourceClaims") or ():
        if not isinstance(entry, Mapping):
            continue
        name = claim_name(pod, entry)
        claim = reader.get("ResourceClaim", namespace, name) if name else None
        out.append(
            {
                "name": str(entry.get("name") or ""),
                "claim": f"{namespace}/{name}" if name else None,
                "devices": allocated_devices(claim),
            }
        )
    return out
