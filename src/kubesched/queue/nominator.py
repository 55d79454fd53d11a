"""Nominator: the pods preemption nominated to nodes; separate because the framework reads it, not only the queue."""

from __future__ import annotations

from kubesched.framework.interface import NominatingInfo
from kubesched.framework.types import PodInfo


class Nominator:
    """Pods nominated to nodes by preemption (or by status.nominatedNodeName), for the two-pass filter."""

    def __init__(self) -> None:
        self.nominated_pods: dict[str, list[PodInfo]] = {}
        self.pod_to_node: dict[str, str] = {}

    def add_nominated_pod(self, pod: PodInfo, nominating_info: NominatingInfo | None = None) -> None:
        self.delete_nominated_pod_if_exists(pod)
        if nominating_info is not None and nominating_info.mode == "Override":
            node = nominating_info.nominated_node_name
        else:
            node = pod.nominated_node_name
        if not node or pod.node_name:
            return
        self.pod_to_node[pod.uid] = node
        self.nominated_pods.setdefault(node, []).append(pod)

    def delete_nominated_pod_if_exists(self, pod: PodInfo) -> None:
        node = self.pod_to_node.pop(pod.uid, None)
        if node is None:
            return
        left = [p for p in self.nominated_pods.get(node, ()) if p.uid != pod.uid]
        if left:
            self.nominated_pods[node] = left
        else:
            self.nominated_pods.pop(node, None)

    def update_nominated_pod(self, old: PodInfo, new: PodInfo) -> None:
        """Keep a nomination the update does not carry yet (status may lag behind our own nomination)."""
        info = None
        if not new.nominated_node_name and old.nominated_node_name == new.nominated_node_name:
            node = self.pod_to_node.get(old.uid)
            if node:
                info = NominatingInfo(node, "Override")
        self.add_nominated_pod(new, info)

    def nominated_pods_for_node(self, node: str) -> list[PodInfo]:
        return list(self.nominated_pods.get(node, ()))
