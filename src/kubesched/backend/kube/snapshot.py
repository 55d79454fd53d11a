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
from kubesched.backend.kube.api import APIError, KubeAPI
from kubesched.backend.kube.reflector import list_all
from kubesched.backend.kube.resources import SNAPSHOT, Resource
from kubesched.release import snapshot_header

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


def cluster_version(api: KubeAPI) -> str | None:
    """GET /version's gitVersion, for simulate to follow that release; None when the server does not say."""
    try:
        answer = api.request("GET", "/version", retries=0)
    except APIError:
        return None
    version = answer.get("gitVersion") if isinstance(answer, dict) else None
    return version if isinstance(version, str) and version else None


def write_manifests(objects: list[Obj], out: TextIO, version: str | None = None) -> None:
    """The objects as YAML documents; with `version`, a first comment line recording the cluster's release."""
    if version is not None:
        out.write(snapshot_header(version))
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    yaml.dump_all(objects, out, Dumper=dumper, sort_keys=False, default_flow_style=False)
