"""SchedulingGates: keeps pods with spec.schedulingGates out of activeQ (schedulinggates/scheduling_gates.go)."""

from __future__ import annotations

from typing import Any, Final

from kubesched.config import names
from kubesched.framework import events
from kubesched.framework.interface import (
    ClusterEventWithHint,
    EnqueueExtensions,
    Handle,
    PreEnqueuePlugin,
    QueueingHint,
)
from kubesched.framework.plugins.helper.hints import same_pod
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo

NAME: Final = names.SCHEDULING_GATES


class SchedulingGates(PreEnqueuePlugin, EnqueueExtensions):
    NAME = NAME

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [events.event(events.UNSCHEDULED_POD, events.UPDATE_POD_SCHEDULING_GATES_ELIMINATED, self._after_update)]

    def _after_update(self, pod: PodInfo, old: PodInfo | None, new: PodInfo | None) -> QueueingHint:
        if same_pod(pod, new) and new is not None and not new.scheduling_gates:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        if not pod.scheduling_gates:
            return None
        return Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"waiting for scheduling gates: [{' '.join(pod.scheduling_gates)}]"
        )


def new(args: Any, handle: Handle) -> SchedulingGates:
    return SchedulingGates()
