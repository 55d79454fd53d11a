"""Cluster events plugins register for requeueing (staging framework/events.go, v1.34 bits)."""

from __future__ import annotations

from typing import Final

from kubesched.framework.interface import ClusterEvent, ClusterEventWithHint, QueueingHintFn
from kubesched.framework.types import PodInfo

ADD: Final = 1
DELETE: Final = 1 << 1
UPDATE_NODE_ALLOCATABLE: Final = 1 << 2
UPDATE_NODE_LABEL: Final = 1 << 3
UPDATE_NODE_TAINT: Final = 1 << 4
UPDATE_NODE_CONDITION: Final = 1 << 5
UPDATE_NODE_ANNOTATION: Final = 1 << 6
UPDATE_POD_LABEL: Final = 1 << 7
UPDATE_POD_SCALE_DOWN: Final = 1 << 8
UPDATE_POD_TOLERATION: Final = 1 << 9
UPDATE_POD_SCHEDULING_GATES_ELIMINATED: Final = 1 << 10
UPDATE_POD_GENERATED_RESOURCE_CLAIM: Final = 1 << 11
UPDATE_NODE_DECLARED_FEATURE: Final = 1 << 12  # v1.36 (NodeDeclaredFeatures); upstream's bit order is not needed
UPDATE: Final = (1 << 13) - 1 - ADD - DELETE
ALL: Final = (1 << 13) - 1

NODE: Final = "Node"
POD: Final = "Pod"
ASSIGNED_POD: Final = "AssignedPod"
UNSCHEDULED_POD: Final = "UnscheduledPod"
WILDCARD: Final = "*"
PERSISTENT_VOLUME: Final = "PersistentVolume"
PERSISTENT_VOLUME_CLAIM: Final = "PersistentVolumeClaim"
STORAGE_CLASS: Final = "StorageClass"
CSI_NODE: Final = "CSINode"
CSI_DRIVER: Final = "CSIDriver"
CSI_STORAGE_CAPACITY: Final = "CSIStorageCapacity"
RESOURCE_CLAIM: Final = "ResourceClaim"
RESOURCE_SLICE: Final = "ResourceSlice"
DEVICE_CLASS: Final = "DeviceClass"
POD_GROUP: Final = "PodGroup"  # scheduling.k8s.io/v1alpha2 (GenericWorkload)
# Kinds besides pods and nodes whose changes reach the queue as cluster events.
OTHER_RESOURCES: Final = frozenset(
    {
        PERSISTENT_VOLUME,
        PERSISTENT_VOLUME_CLAIM,
        STORAGE_CLASS,
        CSI_NODE,
        CSI_DRIVER,
        CSI_STORAGE_CAPACITY,
        RESOURCE_CLAIM,
        RESOURCE_SLICE,
        DEVICE_CLASS,
        POD_GROUP,
    }
)


def event(resource: str, action: int, hint: QueueingHintFn | None = None) -> ClusterEventWithHint:
    """A registration; without a hint function every matching event queues the pod."""
    return ClusterEventWithHint(ClusterEvent(resource, action), hint)


def matches(registered: ClusterEvent, resource: str, action: int) -> bool:
    if registered.resource == WILDCARD:
        return True
    res_ok = registered.resource == resource or (
        registered.resource == POD and resource in (ASSIGNED_POD, UNSCHEDULED_POD)
    )
    return res_ok and bool(registered.action_type & action)


_POD_UPDATE_BITS: Final = (
    UPDATE_POD_LABEL,
    UPDATE_POD_SCALE_DOWN,
    UPDATE_POD_TOLERATION,
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED,
    UPDATE_POD_GENERATED_RESOURCE_CLAIM,
)


def pod_update_action(old: PodInfo, new: PodInfo) -> int:
    """PodSchedulingPropertiesChange: the update bits a pod change amounts to (0: nothing the scheduler reads)."""
    action = 0
    if old.labels != new.labels:
        action |= UPDATE_POD_LABEL
    if any(new.requests.get(k, 0) < v for k, v in old.requests.items()):
        action |= UPDATE_POD_SCALE_DOWN
    if old.tolerations != new.tolerations:
        action |= UPDATE_POD_TOLERATION
    if old.scheduling_gates and not new.scheduling_gates:
        action |= UPDATE_POD_SCHEDULING_GATES_ELIMINATED
    old_status, new_status = old.obj.get("status") or {}, new.obj.get("status") or {}
    if any(
        (old_status.get(f) or None) != (new_status.get(f) or None)
        for f in ("resourceClaimStatuses", "extendedResourceClaimStatus")
    ):
        action |= UPDATE_POD_GENERATED_RESOURCE_CLAIM  # the resourceclaim controller (or PreBind) named its claims
    return action


def split_pod_update(action: int) -> list[int]:
    """One event per bit, as upstream delivers pod updates to the queue."""
    return [bit for bit in _POD_UPDATE_BITS if action & bit]


def event_label(event: ClusterEvent) -> str:
    """The event's label as upstream builds it: resource and action (NodeAdd, AssignedPodDelete, ...)."""
    if event.label:
        return event.label
    action = {ADD: "Add", DELETE: "Delete"}.get(event.action_type, "Update")
    return f"{event.resource}{action}"
