"""How a pod refers to its ResourceClaims (k8s.io/dynamic-resource-allocation/resourceclaim, v1.36).

The error texts are upstream's: the scheduler shows them as the reason a pod waits.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

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


SCHEDULING_GROUP: Final = "scheduling.k8s.io"


def _pod_group_of(pod: PodInfo) -> str | None:
    group = (pod.obj.get("spec") or {}).get("schedulingGroup")
    name = group.get("podGroupName") if isinstance(group, Mapping) else None
    return name if isinstance(name, str) and name else None


def check_is_for_pod(pod: PodInfo, claim: Mapping[str, Any], accept_pod_group: bool = False) -> None:
    """resourceclaim.IsForPod: the claim was made for the pod, or (DRAWorkloadResourceClaims) for its PodGroup."""
    meta = claim.get("metadata") or {}
    ns, name = str(meta.get("namespace") or "default"), str(meta.get("name") or "")
    if ns != pod.namespace:
        raise ClaimError(f"ResourceClaim {ns}/{name} is not in the same namespace as Pod {pod.namespace}/{pod.name}")
    if controller_uid(claim) == pod.uid:
        return
    if not accept_pod_group:
        raise ClaimError(
            f"ResourceClaim {ns}/{name} was not created for Pod {pod.namespace}/{pod.name} (Pod is not owner)"
        )
    if not _owned_by_pod_group(pod, claim):
        raise ClaimError(
            f"ResourceClaim {ns}/{name} was not created for Pod {pod.namespace}/{pod.name} "
            f"(neither Pod nor PodGroup {_pod_group_of(pod) or ''} is the owner)"
        )


def _owned_by_pod_group(pod: PodInfo, claim: Mapping[str, Any]) -> bool:
    """The claim's controller is the pod's PodGroup (by name and API group: pods do not know its uid)."""
    group = _pod_group_of(pod)
    if group is None:
        return False
    for ref in (claim.get("metadata") or {}).get("ownerReferences") or ():
        if isinstance(ref, Mapping) and ref.get("controller"):
            return (
                ref.get("name") == group
                and ref.get("kind") == "PodGroup"
                and str(ref.get("apiVersion") or "").startswith(SCHEDULING_GROUP + "/")
            )
    return False


def controller_uid(obj: Mapping[str, Any]) -> str | None:
    """The uid of the object's controlling owner (metav1.GetControllerOf)."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if isinstance(ref, Mapping) and ref.get("controller"):
            return str(ref.get("uid") or "")
    return None


def is_reserved_for_pod(pod: PodInfo, claim: Mapping[str, Any], accept_pod_group: bool = False) -> bool:
    """resourceclaim.IsReservedForPod: the pod's uid is among status.reservedFor, or (DRAWorkloadResourceClaims)
    its PodGroup is, matched by API group, resource and name."""
    group = _pod_group_of(pod) if accept_pod_group else None
    for r in (claim.get("status") or {}).get("reservedFor") or ():
        if not isinstance(r, Mapping):
            continue
        if r.get("uid") == pod.uid:
            return True
        if (
            group is not None
            and r.get("apiGroup") == SCHEDULING_GROUP
            and r.get("resource") == "podgroups"
            and r.get("name") == group
        ):
            return True
    return False


def pod_consumer(pod: PodInfo) -> dict[str, str]:
    """The reservedFor entry for the pod itself."""
    return {"resource": "pods", "name": pod.name, "uid": pod.uid}


def bind_to(pod: PodInfo, pod_group: Mapping[str, Any] | None, entry: Mapping[str, Any]) -> dict[str, str]:
    """resourceclaim.BindTo: whom the claim of a pod entry is reserved for; the PodGroup when the entry equals one
    of the group's claims (name and claim or template alike), else the pod."""
    if entry.get("resourceClaimName") is None and entry.get("resourceClaimTemplateName") is None:
        raise ClaimError(
            f"Pod {pod.namespace}/{pod.name} claim {entry.get('name', '')}: none of the supported fields are set"
        )
    if pod_group is None:
        return pod_consumer(pod)
    gmeta = pod_group.get("metadata") or {}
    gns, gname = str(gmeta.get("namespace") or "default"), str(gmeta.get("name") or "")
    group = _pod_group_of(pod)
    if group is None:
        raise ClaimError(f"Pod {pod.namespace}/{pod.name} does not belong to a PodGroup")
    if pod.namespace != gns or group != gname:
        raise ClaimError(
            f"Pod {pod.namespace}/{pod.name} belongs to PodGroup {pod.namespace}/{group}, not PodGroup {gns}/{gname}"
        )
    for claim in (pod_group.get("spec") or {}).get("resourceClaims") or ():
        if not isinstance(claim, Mapping):
            continue
        if claim.get("resourceClaimName") is None and claim.get("resourceClaimTemplateName") is None:
            raise ClaimError(
                f"PodGroup {gns}/{gname} claim {claim.get('name', '')}: none of the supported fields are set"
            )
        if all(claim.get(k) == entry.get(k) for k in ("name", "resourceClaimName", "resourceClaimTemplateName")):
            return {
                "apiGroup": SCHEDULING_GROUP,
                "resource": "podgroups",
                "name": gname,
                "uid": pod_group_uid(pod_group),
            }
    return pod_consumer(pod)


def pod_group_claim_name(pod_group: Mapping[str, Any], claim: Mapping[str, Any]) -> tuple[str | None, bool]:
    """resourceclaim.NameFromPodGroup: (the claim's name or None when none is needed, whether its owner must be
    checked)."""
    meta = pod_group.get("metadata") or {}
    where = f"PodGroup {meta.get('namespace') or 'default'}/{meta.get('name') or ''}"
    if claim.get("resourceClaimName") is not None:
        return str(claim["resourceClaimName"]), False
    if claim.get("resourceClaimTemplateName") is not None:
        for status in (pod_group.get("status") or {}).get("resourceClaimStatuses") or ():
            if isinstance(status, Mapping) and status.get("name") == claim.get("name"):
                name = status.get("resourceClaimName")
                return (None if name is None else str(name)), True
        raise ClaimError(f"{where}: ResourceClaim not created yet")
    raise ClaimError(f"{where}, spec.resourceClaim {claim.get('name', '')}: none of the supported fields are set")


def is_for_pod_group(pod_group: Mapping[str, Any], claim: Mapping[str, Any]) -> bool:
    """resourceclaim.IsForPodGroup: same namespace, and the PodGroup controls the claim."""
    gmeta, cmeta = pod_group.get("metadata") or {}, claim.get("metadata") or {}
    same_ns = (gmeta.get("namespace") or "default") == (cmeta.get("namespace") or "default")
    return same_ns and controller_uid(claim) == pod_group_uid(pod_group)


def pod_group_uid(pod_group: Mapping[str, Any]) -> str:
    """The PodGroup's uid; one listed without (a simulation's input) stands in with namespace/name, as pods do."""
    meta = pod_group.get("metadata") or {}
    return str(meta.get("uid") or "") or f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"


def is_subrequest_ref(ref: str) -> bool:
    return len(ref.split("/")) == 2


def kobj(claim: Mapping[str, Any]) -> str:
    """klog.KObj: namespace/name."""
    meta = claim.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"


def claim_uid(claim: Mapping[str, Any]) -> str:
    """The claim's uid; one listed without (a test's object) stands in with namespace/name."""
    return str((claim.get("metadata") or {}).get("uid") or "") or kobj(claim)
