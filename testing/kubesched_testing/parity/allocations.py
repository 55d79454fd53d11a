"""What the two schedulers wrote into ResourceClaims: the part of an allocation a parity run compares."""

from __future__ import annotations

from kubesched.api.object import Obj
from kubesched.backend.embedded.controllers.resource_claim import claim_name


def claim_names(pod: Obj) -> list[str]:
    """The ResourceClaims a pod names: directly, or as the resourceclaim controller recorded a template's claim."""
    names = (claim_name(pod, entry) for entry in (pod.get("spec") or {}).get("resourceClaims") or ())
    return [name for name in names if name]


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
