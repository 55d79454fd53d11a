"""NodeName: a pod that names a node fits only that node (nodename/node_name.go)."""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from kubesched.config import names
from kubesched.framework import events, signers
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import (
    BoolArray,
    ClusterEventWithHint,
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    SignFragment,
)
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.node_table import NodeTable
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo

NAME: Final = names.NODE_NAME
ERR_REASON: Final = "node(s) didn't match the requested node name"


def fits(pod: PodInfo, node_info: NodeInfo) -> bool:
    return not pod.node_name or pod.node_name == node_info.name


class NodeName(FilterPlugin, EnqueueExtensions):
    NAME = NAME

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        return [(signers.NODE_NAME, pod.node_name)], None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """A node add, without a hint: upstream retries on every added node, whatever its name."""
        return [events.event(events.NODE, events.ADD)]

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        if not fits(pod, node_info):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON)
        return None

    def filter_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: slice) -> BoolArray:
        if not pod.node_name:
            return np.ones(rows.stop - rows.start, dtype=bool)
        return np.array([n == pod.node_name for n in table.names[rows]], dtype=bool)


def new(args: Any, handle: Handle) -> NodeName:
    return NodeName()
