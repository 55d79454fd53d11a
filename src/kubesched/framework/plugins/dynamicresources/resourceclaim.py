"""How a pod refers to its ResourceClaims (k8s.io/dynamic-resource-allocation/resourceclaim, v1.36).

The error texts are upstream's: the scheduler shows them as the reason a pod waits.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.framework.types import PodInfo

FINALIZER = "resource.kubernetes.io/delete-protection"


class ClaimError(Exception):
    """A pod cannot use its claims now (upstream: the pod is unschedulable and unresolvable for the moment)."""


def claim_name(pod: PodInfo, entry: Mapping[str, Any]) -> tuple[str | None, bool]:
    """resourceclaim.Name: (the claim's name or None when none is needed, whether IsForPod must be checked)."""
    if entry.get("resourceClaimName") is not None:
        return str(entry["resourceClaimName"]), False
    if entry.get("resourceClaimTemplateName") is not None:
        for status in (pod.obj.get("status") or {}).get("resourceClaimStatuses") or ():
            if isinstance(status, Mapping) and status.get("name") == entry.get("name"):
                name = status.get("resourceClaimName")
                return (None if name is None else str(name)), True
        raise ClaimError(f'pod "{pod.namespace}/{pod.name}": ResourceClaim not created yet')
    raise ClaimError(
        f'pod "{pod.namespace}/{pod.name}", spec.resourceClaim "{entry.get("name", "")}": '
        "none of the supported fields are set"
    )


def check_is_for_pod(pod: PodInfo, claim: Mapping[str, Any]) -> None:
    """resourceclaim.IsForPod (PodGroup owners not accepted: DRAWorkloadResourceClaims is off in v1.36)."""
    meta = claim.get("metadata") or {}
    ns, name = str(meta.get("namespace") or "default"), str(meta.get("name") or "")
    if ns != pod.namespace:
        raise ClaimError(f"ResourceClaim {ns}/{name} is not in the same namespace as Pod {pod.namespace}/{pod.name}")
    if controller_uid(claim) != pod.uid:
        raise ClaimError(
            f"ResourceClaim {ns}/{name} was not created for Pod {pod.namespace}/{pod.name} (Pod is not owner)"
        )


def controller_uid(obj: Mapping[str, Any]) -> str | None:
    """The uid of the object's controlling owner (metav1.GetControllerOf)."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if isinstance(ref, Mapping) and ref.get("controller"):
            return str(ref.get("uid") or "")
    return None


def is_reserved_for_pod(pod: PodInfo, claim: Mapping[str, Any]) -> bool:
    """resourceclaim.IsReservedForPod: the pod's uid is among status.reservedFor."""
    return any(
        isinstance(r, Mapping) and r.get("uid") == pod.uid for r in (claim.get("status") or {}).get("reservedFor") or ()
    )


def pod_consumer(pod: PodInfo) -> dict[str, str]:
    """The reservedFor entry for the pod (resourceclaim.BindTo without a PodGroup)."""
    return {"resource": "pods", "name": pod.name, "uid": pod.uid}


def is_subrequest_ref(ref: str) -> bool:
    return len(ref.split("/")) == 2


def kobj(claim: Mapping[str, Any]) -> str:
    """klog.KObj: namespace/name."""
    meta = claim.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"


def claim_uid(claim: Mapping[str, Any]) -> str:
    """The claim's uid; one listed without (a test's object) stands in with namespace/name."""
    return str((claim.get("metadata") or {}).get("uid") or "") or kobj(claim)
