"""NodeName: a pod that names a node fits only that node (nodename/node_name.go)."""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from kubesched.framework import events
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import (
    BoolArray,
    ClusterEventWithHint,
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    QueueingHint,
)
from kubesched.framework.node_info import NodeInfo, ParsedNode
from kubesched.framework.node_table import NodeTable
from kubesched.framework.plugins import names
from kubesched.framework.plugins.helper.hints import node_now_passes
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo

NAME: Final = names.NODE_NAME
ERR_REASON: Final = "node(s) didn't match the requested node name"


def fits(pod: PodInfo, node_info: NodeInfo) -> bool:
    return not pod.node_name or pod.node_name == node_info.name


class NodeName(FilterPlugin, EnqueueExtensions):
    NAME = NAME

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [events.event(events.NODE, events.ADD, self._after_node_add)]

    def _after_node_add(self, pod: PodInfo, old: ParsedNode | None, new: ParsedNode | None) -> QueueingHint:
        return node_now_passes(lambda n: not pod.node_name or pod.node_name == n.name, old, new)

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        if not fits(pod, node_info):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON)
        return None

    def filter_batch(self, state: CycleState, pod: PodInfo, table: NodeTable) -> BoolArray:
        if not pod.node_name:
            return np.ones(table.n, dtype=bool)
        return np.array([n == pod.node_name for n in table.names], dtype=bool)


def new(args: Any, handle: Handle) -> NodeName:
    return NodeName()
