"""NodePorts: a pod's host ports must be free on the node (nodeports/node_ports.go)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from kubesched.api.taints import HostPort, host_ports_conflict
from kubesched.config import names
from kubesched.framework import events, signers
from kubesched.framework.cycle_state import READING, CycleState, read_state
from kubesched.framework.interface import (
    ClusterEventWithHint,
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    PreFilterPlugin,
    PreFilterResult,
    QueueingHint,
    SignFragment,
)
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo

NAME: Final = names.NODE_PORTS
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
ERR_REASON: Final = "node(s) didn't have free ports for the requested pod ports"


@dataclass(frozen=True, slots=True)
class _PreFilterState:
    ports: tuple[HostPort, ...]

    def clone(self) -> _PreFilterState:
        return self


class NodePorts(PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    NAME = NAME

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        return [(signers.HOST_PORTS, signers.host_ports(pod))], None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            events.event(events.POD, events.DELETE, self._after_pod_deleted),
            events.event(events.NODE, events.ADD),  # no hint: always worth a retry (1.34, queueing hints on)
        ]

    def _after_pod_deleted(self, pod: PodInfo, old: PodInfo | None, new: PodInfo | None) -> QueueingHint:
        """Only a scheduled pod that held one of the ports this pod wants frees anything."""
        if old is None or not (old.node_name or old.nominated_node_name):
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE if host_ports_conflict(old.host_ports, pod.host_ports) else QueueingHint.QUEUE_SKIP

    def pre_filter(self, state: CycleState, pod: PodInfo, nodes: Any) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.host_ports:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(pod.host_ports))
        return None, None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        s = read_state(state, PRE_FILTER_STATE_KEY, _PreFilterState, READING)
        if host_ports_conflict(node_info.used_ports, s.ports):
            return Status(Code.UNSCHEDULABLE, ERR_REASON)
        return None


def new(args: Any, handle: Handle) -> NodePorts:
    return NodePorts()
