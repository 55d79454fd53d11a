"""NodeUnschedulable: rejects cordoned nodes unless the pod tolerates the unschedulable taint."""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from kubesched.api.taints import NO_SCHEDULE, Taint, tolerations_tolerate_taint
from kubesched.config import names
from kubesched.framework import events, signers
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import (
    BoolArray,
    ClusterEventWithHint,
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    QueueingHint,
    SignFragment,
)
from kubesched.framework.node_info import NodeInfo, ParsedNode
from kubesched.framework.node_table import NodeTable
from kubesched.framework.plugins.helper.hints import node_now_passes, same_pod
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo

NAME: Final = names.NODE_UNSCHEDULABLE
ERR_REASON_UNKNOWN_CONDITION: Final = "node(s) had unknown conditions"
ERR_REASON_UNSCHEDULABLE: Final = "node(s) were unschedulable"
TAINT_NODE_UNSCHEDULABLE: Final = "node.kubernetes.io/unschedulable"
_UNSCHEDULABLE_TAINT = Taint(TAINT_NODE_UNSCHEDULABLE, "", NO_SCHEDULE)


class NodeUnschedulable(FilterPlugin, EnqueueExtensions):
    NAME = NAME

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        return [(signers.TOLERATIONS, signers.tolerations(pod))], None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            events.event(events.NODE, events.ADD | events.UPDATE_NODE_TAINT, self._after_node_change),
            events.event(events.POD, events.UPDATE_POD_TOLERATION, self._after_toleration_change),
        ]

    def _after_node_change(self, pod: PodInfo, old: ParsedNode | None, new: ParsedNode | None) -> QueueingHint:
        """A schedulable node added, or a node uncordoned; the pod's tolerations are not consulted, as upstream."""
        return node_now_passes(lambda n: not n.unschedulable, old, new)

    def _after_toleration_change(self, pod: PodInfo, old: PodInfo | None, new: PodInfo | None) -> QueueingHint:
        if same_pod(pod, new) and new is not None and tolerations_tolerate_taint(new.tolerations, _UNSCHEDULABLE_TAINT):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        if node is None:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNKNOWN_CONDITION)
        if not node.unschedulable:
            return None
        if tolerations_tolerate_taint(pod.tolerations, _UNSCHEDULABLE_TAINT):
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE)

    def filter_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: slice) -> BoolArray:
        if tolerations_tolerate_taint(pod.tolerations, _UNSCHEDULABLE_TAINT):
            return np.ones(rows.stop - rows.start, dtype=bool)
        return ~table.unschedulable[rows]


def new(args: Any, handle: Handle) -> NodeUnschedulable:
    return NodeUnschedulable()
