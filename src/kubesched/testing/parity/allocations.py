"""What the two schedulers wrote into ResourceClaims: the part of an allocation a parity run compares."""

from __future__ import annotations

from kubesched.api.object import Obj


def claim_names(pod: Obj) -> list[str]:
    """The ResourceClaims a pod names: directly, or as the resourceclaim controller recorded a template's claim."""
    statuses = {
        s.get("name"): s.get("resourceClaimName") for s in (pod.get("status") or {}).get("resourceClaimStatuses") or ()
    }
    out = []
    for entry in (pod.get("spec") or {}).get("resourceClaims") or ():
        name = entry.get("resourceClaimName") or statuses.get(entry.get("name"))
        if name:
            out.append(name)
    return out


def allocation_record(claim: Obj | None) -> Obj | None:
    """What a claim's allocation says that both schedulers must agree on.

    Left out: shareID (a random UID per allocation of a shared device) and allocationTimestamp.
    """
    alloc = ((claim or {}).get("status") or {}).get("allocation")
    if not alloc:
        return None
    devices = alloc.get("devices") or {}
    results = [{k: v for k, v in r.items() if k != "shareID"} for r in devices.get("results") or ()]
    out: Obj = {"results": results}
    if devices.get("config"):
        out["config"] = devices["config"]
    if alloc.get("nodeSelector"):
        out["nodeSelector"] = alloc["nodeSelector"]
    return out
