"""Cluster events plugins register for requeueing (staging framework/events.go, v1.34 bits)."""

from __future__ import annotations

from typing import Final

from kubesched.framework.interface import ClusterEvent, ClusterEventWithHint, QueueingHintFn

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
UPDATE: Final = (1 << 12) - 1 - ADD - DELETE
ALL: Final = (1 << 12) - 1

NODE: Final = "Node"
POD: Final = "Pod"
ASSIGNED_POD: Final = "AssignedPod"
UNSCHEDULED_POD: Final = "UnscheduledPod"
WILDCARD: Final = "*"

# Events the queue raises itself; both match every registration.
UNSCHEDULABLE_TIMEOUT: Final = ClusterEvent(WILDCARD, ALL, "UnschedulableTimeout")
FORCE_ACTIVATE: Final = ClusterEvent(WILDCARD, ALL, "ForceActivate")


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
