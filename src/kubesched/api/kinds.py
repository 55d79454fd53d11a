"""The kinds of object kubesched keeps, which of them live in a namespace, and which make pods.

One registry for the store, the API-server stand-in's validation and admission, the
embedded cluster's controllers and the simulator's inputs: a kind added here is stored,
keyed by namespace when it has one, and accepted everywhere at once.
"""

from typing import Final

NAMESPACED: Final = frozenset(
    {
        "Pod",
        "PersistentVolumeClaim",
        "PodDisruptionBudget",
        "Service",
        "ReplicaSet",
        "ReplicationController",
        "StatefulSet",
        "CSIStorageCapacity",
        # Workloads: the embedded cluster's controllers turn them into pods (backend/embedded/controllers).
        "Deployment",
        "DaemonSet",
        "Job",
        "CronJob",
        # resource.k8s.io (DRA): claims, and the templates the resourceclaim controller makes them from.
        "ResourceClaim",
        "ResourceClaimTemplate",
        # scheduling.k8s.io/v1alpha2 (workload-aware scheduling, behind GenericWorkload).
        "Workload",
        "PodGroup",
    }
)
CLUSTER_SCOPED: Final = frozenset(
    {
        "Node",
        "Namespace",
        "PriorityClass",
        "PersistentVolume",
        "StorageClass",
        "CSINode",
        "CSIDriver",
        "DeviceClass",
        "ResourceSlice",
    }
)
KINDS: Final = NAMESPACED | CLUSTER_SCOPED
"""Every kind the object store holds."""

SCALED_KINDS: Final = ("Deployment", "ReplicaSet", "StatefulSet", "ReplicationController")
"""Workloads with a replica count, which a what-if question or a sweep may scale."""
WORKLOAD_KINDS: Final = (*SCALED_KINDS, "DaemonSet", "Job", "CronJob")
"""Workloads whose controllers make pods."""
