"""DefaultPreemption (plugins/defaultpreemption/default_preemption.go): PostFilter preemption, async as in v1.36.

As a PreEnqueue plugin it holds a preemptor back until its victims are evicted, so
the pod is not retried against a node that is still full.
"""

from __future__ import annotations

from typing import Any, Final

from kubesched.config import names
from kubesched.config.types import DefaultPreemptionArgs
from kubesched.framework import events
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import (
    ClusterEvent,
    ClusterEventWithHint,
    EnqueueExtensions,
    Handle,
    PostFilterPlugin,
    PostFilterResult,
    PreEnqueuePlugin,
    QueueingHint,
)
from kubesched.framework.plugins.helper.pod_group import pod_group_name
from kubesched.framework.preemption.evaluator import Candidate, Evaluator
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeToStatus, PodInfo
from kubesched.release import TOPOLOGY_AWARE_WORKLOAD_SCHEDULING, WORKLOAD_AWARE_PREEMPTION

NAME: Final = names.DEFAULT_PREEMPTION
MSG_WAITING: Final = "waiting for the preemption for this pod to be finished"


class DefaultPreemption(PostFilterPlugin, PreEnqueuePlugin, EnqueueExtensions):
    NAME = NAME

    def __init__(self, args: DefaultPreemptionArgs, handle: Handle, *, run_async: bool = True) -> None:
        self.handle = handle
        self.evaluator = Evaluator(
            NAME,
            handle,
            args.minCandidateNodesPercentage if args.minCandidateNodesPercentage is not None else 10,
            args.minCandidateNodesAbsolute if args.minCandidateNodesAbsolute is not None else 100,
            run_async=run_async,
        )

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """Pod deletions may end the wait of a preemptor it holds back; whether they help is for the plugins that
        rejected the preemptor to say, so this plugin's own hint is always Skip.
        """
        if not self.evaluator.run_async:
            return []
        return [ClusterEventWithHint(ClusterEvent(events.POD, events.DELETE), _skip)]

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        if self.evaluator.is_pod_running_preemption(pod.uid):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MSG_WAITING)
        return None

    def post_filter(
        self, state: CycleState, pod: PodInfo, filtered_node_status_map: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        refused = self._pod_group_refusal(pod)
        if refused is not None:
            return None, Status(Code.UNSCHEDULABLE, refused)
        result, status = self.evaluator.preempt(state, pod, filtered_node_status_map)
        return result, _prefixed(status)

    def dry_run(
        self, state: CycleState, pod: PodInfo, filtered_node_status_map: NodeToStatus
    ) -> tuple[Candidate | None, Status | None]:
        """The node and victims post_filter would pick, with its status when none; nothing evicted or nominated."""
        refused = self._pod_group_refusal(pod)
        if refused is not None:
            return None, Status(Code.UNSCHEDULABLE, refused)
        best, _, status = self.evaluator.choose(state, pod, filtered_node_status_map)
        return best, _prefixed(status)

    def _pod_group_refusal(self, pod: PodInfo) -> str | None:
        """v1.36: a group member is not preempted for one by one under placement or workload-aware preemption."""
        group = pod_group_name(pod)
        if group is None:
            return None
        gates, handle = self.handle.release, self.handle
        if gates.enabled(TOPOLOGY_AWARE_WORKLOAD_SCHEDULING):
            pg = handle.listers().get("PodGroup", pod.namespace, group)
            if pg is None:
                return "preemption: pod group for pod not found"
            if (pg.get("spec") or {}).get("schedulingConstraints") is not None:
                return "preemption: not eligible due to placement-based pod group scheduling limitation"
        if gates.enabled(WORKLOAD_AWARE_PREEMPTION):
            return "preemption: not eligible due to workload aware preemption enabled"
        return None


def _prefixed(status: Status | None) -> Status | None:
    if status is not None and status.message():
        return Status(status.code, "preemption: " + status.message())
    return status


def _skip(pod: PodInfo, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.QUEUE_SKIP


def new(args: Any, handle: Handle) -> DefaultPreemption:
    return DefaultPreemption(args if args is not None else DefaultPreemptionArgs(), handle)
