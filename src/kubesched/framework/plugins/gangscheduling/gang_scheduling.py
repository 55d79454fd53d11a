"""GangScheduling (gangscheduling/gangscheduling.go, v1.36): all or nothing for a PodGroup's gang.

PreEnqueue keeps a gang's pods out of the queue until its PodGroup exists and at least
minCount of its pods do; Permit holds each placed pod (up to five minutes) until minCount
are placed, then lets them all through to binding together. A pod without a group, or
whose group has the basic policy, passes untouched.
"""

from __future__ import annotations

from typing import Any, Final

from kubesched.config import names
from kubesched.framework import events
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import (
    ClusterEventWithHint,
    EnqueueExtensions,
    Handle,
    PermitPlugin,
    PreEnqueuePlugin,
    QueueingHint,
)
from kubesched.framework.plugins.helper.pod_group import gang_min_count, matching_scheduling_group, pod_group_name
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo

NAME: Final = names.GANG_SCHEDULING
POD_GROUP: Final = "PodGroup"
PERMIT_TIMEOUT: Final = 5 * 60.0
WAITING_FOR_PODS: Final = "waiting for minCount pods from a gang to appear in scheduling queue"
WAITING_FOR_QUORUM: Final = "waiting for minCount pods from a gang to be scheduled"


class GangScheduling(PreEnqueuePlugin, PermitPlugin, EnqueueExtensions):
    NAME = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # A pod's group is immutable and so are PodGroups: additions are what may complete a gang.
        return [
            events.event(events.POD, events.ADD, self._after_pod_added),
            events.event(POD_GROUP, events.ADD, self._after_pod_group_added),
        ]

    def _after_pod_added(self, pod: PodInfo, old: Any, new: Any) -> QueueingHint:
        if isinstance(new, PodInfo) and matching_scheduling_group(pod, new):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def _after_pod_group_added(self, pod: PodInfo, old: Any, new: Any) -> QueueingHint:
        meta = (new or {}).get("metadata") or {}
        name = pod_group_name(pod)
        if name is None or (meta.get("namespace") or "default") != pod.namespace or meta.get("name") != name:
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    def _pod_group(self, pod: PodInfo, name: str) -> Any:
        return self.handle.listers().get(POD_GROUP, pod.namespace, name)

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        name = pod_group_name(pod)
        if name is None:
            return None
        group = self._pod_group(pod, name)
        if group is None:
            return Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                f'waiting for pods\'s pod group "{name}" to appear in scheduling queue',
            )
        min_count = gang_min_count(group)
        if min_count is None:
            return None
        states = self.handle.pod_groups
        state = states.get(pod.namespace, name) if states is not None else None
        if state is None:
            return Status(Code.ERROR, f"pod group state not found for pod group {pod.namespace}/{name}")
        if state.all_count() < min_count:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, WAITING_FOR_PODS)
        return None

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, float]:
        name = pod_group_name(pod)
        if name is None:
            return None, 0.0
        group = self._pod_group(pod, name)
        if group is None:
            return Status(Code.ERROR, f"failed to get podGroup {pod.namespace}/{name}: not found"), 0.0
        min_count = gang_min_count(group)
        if min_count is None:
            return None, 0.0
        states = self.handle.pod_groups
        members = states.get(pod.namespace, name) if states is not None else None
        if members is None:
            return Status(Code.ERROR, f"pod group state not found for pod group {pod.namespace}/{name}"), 0.0
        if members.scheduled_count() < min_count:
            if self.handle.activate is not None:
                self.handle.activate(members.unscheduled_pods())
            return Status(Code.WAIT, WAITING_FOR_QUORUM), PERMIT_TIMEOUT
        framework = self.handle.framework
        if framework is not None:
            for uid in list(members.assumed):
                waiting = framework.get_waiting_pod(uid)
                if waiting is not None:
                    waiting.allow(NAME)
        return None, 0.0


def new(args: Any, handle: Handle) -> GangScheduling:
    return GangScheduling(handle)
