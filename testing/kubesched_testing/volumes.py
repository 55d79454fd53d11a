"""Builders for storage objects in tests: PVs, PVCs, StorageClasses, CSINodes, CSIStorageCapacities."""

from __future__ import annotations

from kubesched.api import volumes as vol
from kubesched.api.object import Obj


def make_pv(
    name: str,
    *,
    storage_class: str = "",
    capacity: str = "1Gi",
    access_modes: tuple[str, ...] = ("ReadWriteOnce",),
    node_affinity: dict[str, list[str]] | None = None,
    claim: tuple[str, str] | None = None,
    phase: str = "Available",
    labels: dict[str, str] | None = None,
    source: Obj | None = None,
) -> Obj:
    """A PV; `node_affinity` maps label keys to allowed values (one term), `claim` is (namespace, name)."""
    spec: Obj = {
        "capacity": {"storage": capacity},
        "accessModes": list(access_modes),
        "storageClassName": storage_class,
        **(source or {}),
    }
    if node_affinity is not None:
        exprs = [{"key": k, "operator": "In", "values": v} for k, v in node_affinity.items()]
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": exprs}]}}
    if claim is not None:
        spec["claimRef"] = {"namespace": claim[0], "name": claim[1]}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name, "labels": dict(labels or {})},
        "spec": spec,
        "status": {"phase": phase},
    }


def make_pvc(
    name: str,
    *,
    namespace: str = "default",
    storage_class: str | None = None,
    volume_name: str = "",
    bound: bool = False,
    request: str = "1Gi",
    access_modes: tuple[str, ...] = ("ReadWriteOnce",),
    phase: str = "",
    annotations: dict[str, str] | None = None,
) -> Obj:
    """A claim; `bound` adds the bind-completed annotation a PV controller sets."""
    ann = dict(annotations or {})
    if bound:
        ann[vol.ANN_BIND_COMPLETED] = "yes"
    spec: Obj = {"accessModes": list(access_modes), "resources": {"requests": {"storage": request}}}
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    if volume_name:
        spec["volumeName"] = volume_name
    obj: Obj = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": namespace, "annotations": ann},
        "spec": spec,
    }
    if phase:
        obj["status"] = {"phase": phase}
    return obj


def make_storage_class(
    name: str,
    *,
    wait_for_first_consumer: bool = True,
    provisioner: str = vol.NOT_SUPPORTED_PROVISIONER,
    allowed_topologies: dict[str, list[str]] | None = None,
) -> Obj:
    sc: Obj = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
        "volumeBindingMode": vol.WAIT_FOR_FIRST_CONSUMER if wait_for_first_consumer else "Immediate",
    }
    if allowed_topologies is not None:
        exprs = [{"key": k, "values": v} for k, v in allowed_topologies.items()]
        sc["allowedTopologies"] = [{"matchLabelExpressions": exprs}]
    return sc


def make_csi_node(name: str, drivers: dict[str, int | None], migrated: tuple[str, ...] = ()) -> Obj:
    """A CSINode; `drivers` maps driver names to their attach limit (None: no limit reported)."""
    entries = []
    for d, count in drivers.items():
        e: Obj = {"name": d, "nodeID": name}
        if count is not None:
            e["allocatable"] = {"count": count}
        entries.append(e)
    meta: Obj = {"name": name}
    if migrated:
        meta["annotations"] = {vol.ANN_MIGRATED_PLUGINS: ",".join(migrated)}
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": meta, "spec": {"drivers": entries}}


def make_csi_driver(name: str, *, storage_capacity: bool) -> Obj:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIDriver",
        "metadata": {"name": name},
        "spec": {"storageCapacity": storage_capacity},
    }


def make_capacity(
    name: str, storage_class: str, capacity: str | None, topology: dict[str, str] | None, *, max_size: str | None = None
) -> Obj:
    obj: Obj = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIStorageCapacity",
        "metadata": {"name": name, "namespace": "default"},
        "storageClassName": storage_class,
    }
    if capacity is not None:
        obj["capacity"] = capacity
    if max_size is not None:
        obj["maximumVolumeSize"] = max_size
    if topology is not None:
        obj["nodeTopology"] = {"matchLabels": topology}
    return obj
