"""The API resources the scheduler reads and writes: where each kind lives on the API server."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Resource:
    kind: str
    group_version: str  # the objects' apiVersion: "v1" for the core group, else "group/version"
    plural: str
    namespaced: bool
    field_selector: str = ""

    def path(self, namespace: str = "", name: str = "", subresource: str = "") -> str:
        """Collection or object path; a namespaced kind without a namespace means all namespaces."""
        base = "/api/v1" if self.group_version == "v1" else f"/apis/{self.group_version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        base += f"/{self.plural}"
        if name:
            base += f"/{name}"
            if subresource:
                base += f"/{subresource}"
        return base


# Upstream's pod informer leaves out pods that have finished (scheduler.go, NewInformerFactory).
POD_FIELD_SELECTOR = "status.phase!=Succeeded,status.phase!=Failed"

_ALL = (
    Resource("Pod", "v1", "pods", True, POD_FIELD_SELECTOR),
    Resource("Node", "v1", "nodes", False),
    Resource("Namespace", "v1", "namespaces", False),
    Resource("PersistentVolume", "v1", "persistentvolumes", False),
    Resource("PersistentVolumeClaim", "v1", "persistentvolumeclaims", True),
    Resource("Service", "v1", "services", True),
    Resource("ReplicationController", "v1", "replicationcontrollers", True),
    Resource("ReplicaSet", "apps/v1", "replicasets", True),
    Resource("StatefulSet", "apps/v1", "statefulsets", True),
    Resource("StorageClass", "storage.k8s.io/v1", "storageclasses", False),
    Resource("CSINode", "storage.k8s.io/v1", "csinodes", False),
    Resource("CSIDriver", "storage.k8s.io/v1", "csidrivers", False),
    Resource("CSIStorageCapacity", "storage.k8s.io/v1", "csistoragecapacities", True),
    Resource("PodDisruptionBudget", "policy/v1", "poddisruptionbudgets", True),
    Resource("PriorityClass", "scheduling.k8s.io/v1", "priorityclasses", False),
    Resource("DeviceClass", "resource.k8s.io/v1", "deviceclasses", False),
    Resource("ResourceSlice", "resource.k8s.io/v1", "resourceslices", False),
    Resource("ResourceClaim", "resource.k8s.io/v1", "resourceclaims", True),
)
# What `kubesched snapshot` reads for the simulator.
SNAPSHOT: dict[str, Resource] = {r.kind: r for r in _ALL}
# What the scheduler keeps informers for, in the order they start. Not PriorityClasses: on a real cluster the
# API server's admission has already written each pod's priority, and upstream's kube-scheduler (whose RBAC
# deploy/rbac.yaml copies) cannot read them either; only the simulator's own admission needs them.
WATCHED: dict[str, Resource] = {k: r for k, r in SNAPSHOT.items() if k != "PriorityClass"}
# Written, never watched.
LEASE = Resource("Lease", "coordination.k8s.io/v1", "leases", True)
EVENT = Resource("Event", "events.k8s.io/v1", "events", True)
# Served only with the alpha API and GenericWorkload on: watched (and its status written) only then.
POD_GROUP = Resource("PodGroup", "scheduling.k8s.io/v1alpha2", "podgroups", True)
BY_KIND: dict[str, Resource] = {**SNAPSHOT, LEASE.kind: LEASE, EVENT.kind: EVENT, POD_GROUP.kind: POD_GROUP}


def watched_resources(workload_aware: bool) -> list[Resource]:
    """The informers a scheduler starts: PodGroups too when GenericWorkload is on, as upstream's do."""
    return [*WATCHED.values(), *((POD_GROUP,) if workload_aware else ())]
