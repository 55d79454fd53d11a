"""`kubesched snapshot`: a cluster's scheduling-relevant objects as manifests `kubesched simulate` reads.

Everything the scheduler's informers list is written (pods as its informer sees
them: finished ones left out), with what only the API server cares about
stripped: managed fields, resource versions, generations, last-applied
annotations, and status fields the scheduler never reads.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TextIO

import yaml

from kubesched.api.object import Obj
from kubesched.backend.kube.api import KubeAPI
from kubesched.backend.kube.reflector import list_all
from kubesched.backend.kube.resources import SNAPSHOT, Resource

_META_NOISE = ("managedFields", "resourceVersion", "selfLink", "generation", "creationTimestamp", "generateName")
_ANNOTATION_NOISE = ("kubectl.kubernetes.io/last-applied-configuration",)
# Status fields the scheduler reads, by kind; other kinds keep no status.
_STATUS_KEPT = {
    "Pod": ("phase", "startTime", "nominatedNodeName", "conditions", "resourceClaimStatuses"),
    "Node": ("allocatable", "capacity", "images", "declaredFeatures"),
    "PersistentVolume": ("phase",),
    "PersistentVolumeClaim": ("phase", "capacity", "accessModes"),
    "PodDisruptionBudget": ("disruptionsAllowed", "disruptedPods", "currentHealthy", "desiredHealthy", "expectedPods"),
    "ResourceClaim": ("allocation", "reservedFor", "devices"),  # devices: binding conditions, read by Filter
}
# Of a pod's conditions, only the one preemption reads.
_POD_CONDITIONS = ("DisruptionTarget",)


def clean(obj: Obj, resource: Resource) -> Obj:
    out: Obj = {"apiVersion": resource.group_version, "kind": resource.kind}
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in _META_NOISE}
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in _ANNOTATION_NOISE}
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
    out["metadata"] = meta
    for key, value in obj.items():
        if key not in ("apiVersion", "kind", "metadata", "status"):
            out[key] = value
    kept = _STATUS_KEPT.get(resource.kind, ())
    status = {k: v for k, v in (obj.get("status") or {}).items() if k in kept}
    if "conditions" in status:
        status["conditions"] = [c for c in status["conditions"] if c.get("type") in _POD_CONDITIONS]
        if not status["conditions"]:
            del status["conditions"]
    if status:
        out["status"] = status
    return out


def take_snapshot(api: KubeAPI, resources: Iterable[Resource] = SNAPSHOT.values()) -> list[Obj]:
    """Cluster-scoped kinds first, nodes before pods, so the file reads like the cluster is built."""
    order = sorted(resources, key=lambda r: (r.kind == "Pod", r.kind == "Node", r.namespaced))
    return [clean(obj, r) for r in order for obj in list_all(api, r)[0]]


def write_manifests(objects: list[Obj], out: TextIO) -> None:
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    yaml.dump_all(objects, out, Dumper=dumper, sort_keys=False, default_flow_style=False)
