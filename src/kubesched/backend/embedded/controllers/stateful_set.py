"""The StatefulSet controller (pkg/controller/statefulset): pods with a stable identity, in order.

Pod `<set>-<ordinal>` for each ordinal from `spec.ordinals.start`, with hostname and
subdomain (`spec.serviceName`), the labels `statefulset.kubernetes.io/pod-name`,
`apps.kubernetes.io/pod-index` and `controller-revision-hash`, and a volume per
`volumeClaimTemplates` entry naming the claim `<template>-<set>-<ordinal>`, which is
created first when missing. With `podManagementPolicy: OrderedReady` (the default) pod
N+1 is created only once pod N is Running and Ready (here: bound, as no kubelet runs),
and scaling down removes the highest ordinal first, one at a time; `Parallel` does all
at once. Claims are deleted on scale-down or with the set only when the retention
policy says Delete (they then carry the owner references the controller gives them).
A template change applies to pods created from then on: existing pods are not rolled.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kubesched.api.object import Obj, ObjView
from kubesched.backend.embedded.controllers.controller_utils import (
    Plan,
    compute_hash,
    controller_ref,
    is_being_deleted,
    is_pod_active,
    is_running_and_ready,
    meta,
    name_of,
    namespace_of,
    pod_from_template,
    spec,
    template_of,
)
from kubesched.backend.embedded.controllers.replica_set import replicas

POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
REVISION_LABEL = "controller-revision-hash"
_ORDINAL = re.compile(r"^(.*)-([0-9]+)$")


def parent_and_ordinal(pod: ObjView) -> tuple[str, int]:
    """getParentNameAndOrdinal: ("", -1) when the name is not `<parent>-<ordinal>`."""
    m = _ORDINAL.match(name_of(pod))
    if not m:
        return "", -1
    try:
        return m.group(1), int(m.group(2))
    except ValueError:
        return "", -1


def start_ordinal(sts: ObjView) -> int:
    ordinals = spec(sts).get("ordinals")
    start = ordinals.get("start") if isinstance(ordinals, Mapping) else None
    return int(start) if isinstance(start, int) and not isinstance(start, bool) else 0


def revision_name(sts: ObjView) -> str:
    """The ControllerRevision's name, `<set>-<hash>` (our hash of the template, not upstream's)."""
    count = (sts.get("status") or {}).get("collisionCount")
    return f"{name_of(sts)[:223]}-{compute_hash(template_of(sts) or {}, count if isinstance(count, int) else None)}"


def _claim_templates(sts: ObjView) -> list[Mapping[str, Any]]:
    return [t for t in spec(sts).get("volumeClaimTemplates") or () if isinstance(t, Mapping)]


def claim_name(sts: ObjView, template: Mapping[str, Any], ordinal: int) -> str:
    return f"{name_of(template)}-{name_of(sts)}-{ordinal}"


def _retention(sts: ObjView) -> tuple[str, str]:
    policy = spec(sts).get("persistentVolumeClaimRetentionPolicy") or {}
    return str(policy.get("whenDeleted") or "Retain"), str(policy.get("whenScaled") or "Retain")


def new_claims(sts: ObjView, ordinal: int) -> list[Obj]:
    """getPersistentVolumeClaims: one claim per template, labelled with the set's matchLabels."""
    match_labels = (spec(sts).get("selector") or {}).get("matchLabels") or {}
    when_deleted, _ = _retention(sts)
    out = []
    for template in _claim_templates(sts):
        claim_meta: Obj = {
            "name": claim_name(sts, template, ordinal),
            "namespace": namespace_of(sts),
            "labels": {**(meta(template).get("labels") or {}), **match_labels},
        }
        if meta(template).get("annotations"):
            claim_meta["annotations"] = dict(meta(template)["annotations"])
        if when_deleted == "Delete":
            claim_meta["ownerReferences"] = [controller_ref(sts)]
        out.append(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": claim_meta,
                "spec": dict(spec(template)),
            }
        )
    return out


def new_pod(sts: ObjView, ordinal: int, revision: str) -> Obj:
    """newStatefulSetPod: identity, storage and revision on a pod from the template."""
    pod = pod_from_template(template_of(sts) or {}, sts)
    name = f"{name_of(sts)}-{ordinal}"
    pod_meta = pod["metadata"]
    del pod_meta["generateName"]
    pod_meta["name"] = name
    pod_meta["labels"].update({POD_NAME_LABEL: name, POD_INDEX_LABEL: str(ordinal), REVISION_LABEL: revision})
    pod_spec = pod["spec"]
    pod_spec["hostname"] = name
    if spec(sts).get("serviceName"):
        pod_spec["subdomain"] = spec(sts)["serviceName"]
    templates = _claim_templates(sts)
    claimed = {name_of(t) for t in templates}
    volumes: list[Any] = [
        {"name": name_of(t), "persistentVolumeClaim": {"claimName": claim_name(sts, t, ordinal)}} for t in templates
    ]
    volumes += [v for v in pod_spec.get("volumes") or () if not (isinstance(v, Mapping) and v.get("name") in claimed)]
    if volumes:
        pod_spec["volumes"] = volumes
    return pod


def _healthy(pod: ObjView) -> bool:
    return is_running_and_ready(pod) and not is_being_deleted(pod)


def sync(
    sts: ObjView, pods: Sequence[ObjView], claim_exists: Callable[[str], bool], revision: str
) -> tuple[Plan, list[str]]:
    """updateStatefulSet without rolling updates: create missing ordinals, delete condemned ones.

    Returns the plan and, for scale-down with `whenScaled: Delete`, the claims to delete.
    """
    if template_of(sts) is None or is_being_deleted(sts):
        return Plan(), []
    start, count = start_ordinal(sts), replicas(sts)
    monotonic = spec(sts).get("podManagementPolicy") != "Parallel"
    by_ordinal: dict[int, ObjView] = {}
    condemned: list[tuple[int, ObjView]] = []
    for pod in pods:
        parent, ordinal = parent_and_ordinal(pod)
        if parent != name_of(sts) or ordinal < 0:
            continue
        if start <= ordinal < start + count:
            by_ordinal[ordinal] = pod
        else:
            condemned.append((ordinal, pod))
    plan = Plan()
    for ordinal in range(start, start + count):
        replica = by_ordinal.get(ordinal)
        if replica is None:
            plan.create += [c for c in new_claims(sts, ordinal) if not claim_exists(name_of(c))]
            plan.create.append(new_pod(sts, ordinal, revision))
            if monotonic:
                return plan, []
            continue
        if not is_pod_active(replica):
            if monotonic:
                return plan, []
            continue
        if monotonic and not is_running_and_ready(replica):
            return plan, []
    _, when_scaled = _retention(sts)
    claims: list[str] = []
    # Ordered scale-down waits on an unhealthy pod unless it is the first unhealthy one (lowest ordinal).
    first_unhealthy = next((p for _, p in sorted(condemned, key=lambda c: c[0]) if not _healthy(p)), None)
    for ordinal, pod in sorted(condemned, key=lambda c: -c[0]):
        if is_being_deleted(pod):
            if monotonic:
                break
            continue
        if monotonic and not is_running_and_ready(pod) and pod is not first_unhealthy:
            break
        plan.delete.append(pod)
        if when_scaled == "Delete":
            claims += [claim_name(sts, t, ordinal) for t in _claim_templates(sts)]
        if monotonic:
            break
    return plan, claims
