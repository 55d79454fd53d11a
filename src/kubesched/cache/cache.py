"""The scheduler cache: assumed and bound pods aggregated per node (backend/cache/cache.go).

Pod state machine, as upstream draws it:

    Initial --Assume--> Assumed --Add (informer confirms)--> Added --Remove--> Deleted
    Assumed --Forget--> Initial    (binding failed or pod rejected at Permit)

Assumed pods never expire (durationToExpireAssumedPod is 0 in 1.30-1.34). Node
mutations bump a generation; `update_snapshot` walks the most recently changed
nodes until it reaches ones the snapshot already has, so a cycle copies only what
changed and rewrites only those rows of the NodeTable.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from kubesched.cache.node_tree import NodeTree
from kubesched.cache.pod_groups import PodGroupStates
from kubesched.cache.snapshot import Snapshot
from kubesched.framework.node_info import ImageStateSummary, NodeInfo, ParsedNode, next_generation
from kubesched.framework.types import PodInfo

log = logging.getLogger(__name__)


class CacheError(RuntimeError):
    pass


@dataclass(slots=True)
class _PodState:
    pod: PodInfo
    binding_finished: bool = False


class Cache:
    def __init__(self) -> None:
        self.nodes: dict[str, NodeInfo] = {}  # ordered by last change: most recent last
        self.node_tree = NodeTree()
        self.pod_states: dict[str, _PodState] = {}
        self.assumed_pods: set[str] = set()
        self._nodes_changed = False  # nodes added or removed since the last snapshot
        self._images_changed = False
        self._image_num_nodes: dict[str, int] = {}
        # PodGroups' members (GenericWorkload); None while the gate is off, as upstream's cache ignores groups then.
        self.pod_groups: PodGroupStates | None = None

    # Nodes

    def _touch(self, name: str, ni: NodeInfo) -> None:
        """Move a changed node to the recent end, where update_snapshot starts its walk."""
        self.nodes.pop(name, None)
        self.nodes[name] = ni

    def add_node(self, node: ParsedNode) -> NodeInfo:
        ni = self.nodes.get(node.name)
        if ni is None:
            ni = NodeInfo()
            self.nodes[node.name] = ni
            self._nodes_changed = True
        else:
            self.node_tree.remove_node(node.name, ni.labels)
        ni.set_node(node)
        self.node_tree.add_node(node.name, node.labels)
        self._images_changed = True
        self._touch(node.name, ni)
        return ni

    def update_node(self, old: ParsedNode | None, new: ParsedNode) -> NodeInfo:
        ni = self.nodes.get(new.name)
        if ni is None or ni.node is None:
            return self.add_node(new)
        if old is not None and ni.labels != new.labels:
            self._nodes_changed = True  # the zone may change the tree order
        self.node_tree.update_node(new.name, ni.labels, new.labels)
        if ni.node.images != new.images:
            self._images_changed = True
        ni.set_node(new)
        self._touch(new.name, ni)
        return ni

    def remove_node(self, name: str) -> None:
        ni = self.nodes.get(name)
        if ni is None or ni.node is None:
            raise CacheError(f"node {name} is not found")
        self.node_tree.remove_node(name, ni.labels)
        self._nodes_changed = True
        self._images_changed = True
        if ni.pods:
            # Keep the NodeInfo while pods remain; it is dropped with the last pod.
            ni.node = None
            ni.generation = next_generation()
            self._touch(name, ni)
        else:
            del self.nodes[name]

    # Pods

    def _add_pod_to_node(self, pod: PodInfo) -> None:
        ni = self.nodes.get(pod.node_name)
        if ni is None:
            ni = NodeInfo()  # a pod bound to a node the cache has not seen yet
            self.nodes[pod.node_name] = ni
        ni.add_pod(pod)
        self._touch(pod.node_name, ni)

    def _remove_pod_from_node(self, pod: PodInfo) -> None:
        ni = self.nodes.get(pod.node_name)
        if ni is None:
            log.error("node not found when trying to remove pod node=%s pod=%s", pod.node_name, pod.key)
            return
        ni.remove_pod(pod)
        if not ni.pods and ni.node is None:
            del self.nodes[pod.node_name]
            self._nodes_changed = True
        else:
            self._touch(pod.node_name, ni)

    def assume_pod(self, pod: PodInfo) -> None:
        if pod.uid in self.pod_states:
            raise CacheError(f"pod {pod.key}({pod.uid}) is in the cache, so can't be assumed")
        self._add_pod_to_node(pod)
        self.pod_states[pod.uid] = _PodState(pod)
        self.assumed_pods.add(pod.uid)
        if self.pod_groups is not None:
            self.pod_groups.assume(pod)

    def finish_binding(self, pod: PodInfo) -> None:
        ps = self.pod_states.get(pod.uid)
        if ps is not None and pod.uid in self.assumed_pods:
            ps.binding_finished = True

    def forget_pod(self, pod: PodInfo) -> None:
        ps = self.pod_states.get(pod.uid)
        if ps is not None and ps.pod.node_name != pod.node_name:
            raise CacheError(f"pod {pod.key} was assumed on {pod.node_name} but assigned to {ps.pod.node_name}")
        if ps is None or pod.uid not in self.assumed_pods:
            raise CacheError(f"pod {pod.key}({pod.uid}) wasn't assumed so cannot be forgotten")
        self._remove_pod_from_node(ps.pod)
        del self.pod_states[pod.uid]
        self.assumed_pods.discard(pod.uid)
        if self.pod_groups is not None:
            self.pod_groups.forget(ps.pod)

    def add_pod(self, pod: PodInfo) -> PodInfo | None:
        """An assigned pod from the informer: confirms an assumed pod, or adds one bound elsewhere.

        Returns the assumed pod when the informer's is on another node (another binder won the race), so
        that the caller can tell the pods kept out of the assumed node that its room is free again.
        """
        if self.pod_groups is not None:
            self.pod_groups.add(pod)
        ps = self.pod_states.get(pod.uid)
        if ps is not None and pod.uid in self.assumed_pods:
            assumed, moved = ps.pod, None
            ni = self.nodes.get(pod.node_name)
            if assumed.node_name == pod.node_name and ni is not None and _same_footprint(assumed, pod):
                ni.replace_pod(pod)  # the usual confirmation: no need to re-aggregate the node
                self._touch(pod.node_name, ni)
            else:
                self._remove_pod_from_node(assumed)
                self._add_pod_to_node(pod)
                moved = assumed if assumed.node_name != pod.node_name else None
            ps.pod = pod
            self.assumed_pods.discard(pod.uid)
            return moved
        if ps is not None:
            raise CacheError(f"pod {pod.key}({pod.uid}) was already in added state")
        self._add_pod_to_node(pod)
        self.pod_states[pod.uid] = _PodState(pod)
        return None

    def update_pod(self, old: PodInfo, new: PodInfo) -> None:
        ps = self.pod_states.get(old.uid)
        if ps is None or old.uid in self.assumed_pods:
            raise CacheError(f"pod {old.key}({old.uid}) is not added to scheduler cache, so cannot be updated")
        self._remove_pod_from_node(ps.pod)
        self._add_pod_to_node(new)
        ps.pod = new
        if self.pod_groups is not None:
            self.pod_groups.update(old, new)

    def remove_pod(self, pod: PodInfo) -> None:
        ps = self.pod_states.get(pod.uid)
        if ps is None:
            raise CacheError(f"pod {pod.key}({pod.uid}) is not found in scheduler cache, so cannot be removed from it")
        self._remove_pod_from_node(ps.pod)
        del self.pod_states[pod.uid]
        self.assumed_pods.discard(pod.uid)
        if self.pod_groups is not None:
            self.pod_groups.remove(pod)

    def is_assumed_pod(self, pod: PodInfo) -> bool:
        return pod.uid in self.assumed_pods

    def get_pod(self, uid: str) -> PodInfo | None:
        ps = self.pod_states.get(uid)
        return ps.pod if ps is not None else None

    def node_count(self) -> int:
        return sum(1 for ni in self.nodes.values() if ni.node is not None)

    # Snapshot

    def update_snapshot(self, snapshot: Snapshot) -> None:
        """Copy nodes changed since the snapshot's generation; rebuild lists only when needed."""
        changed: list[NodeInfo] = []
        for name in reversed(self.nodes):
            ni = self.nodes[name]
            if ni.generation <= snapshot.generation:
                break
            changed.append(ni)
        if not changed and not self._nodes_changed:
            return
        if changed:
            snapshot.generation = max(ni.generation for ni in changed)
        for ni in changed:
            if ni.node is None:
                continue
            clone = ni.clone()
            old = snapshot.node_info_map.get(ni.name)
            if old is None:
                self._nodes_changed = True
            if ni.node.images and not self._images_changed:
                clone.image_states = self._image_summaries(ni.node.images)
            snapshot.node_info_map[ni.name] = clone
        if self._nodes_changed:
            # Only a structural change can leave nodes in the snapshot that the cache no longer has.
            for name in [n for n in snapshot.node_info_map if n not in self.nodes or self.nodes[n].node is None]:
                del snapshot.node_info_map[name]
        if self._images_changed:
            self._refresh_image_states(snapshot)
        if self._nodes_changed:
            snapshot.rebuild_lists(self.node_tree.list())
            self._nodes_changed = False
            self._images_changed = False
            return
        self._images_changed = False
        pos = snapshot.position
        for ni in changed:
            i = pos.get(ni.name)
            if i is not None:
                clone = snapshot.node_info_map[ni.name]
                snapshot.node_info_list[i] = clone
                snapshot.table.update_row(i, clone)

    def _image_summaries(self, images: dict[str, int]) -> dict[str, ImageStateSummary]:
        return {image: ImageStateSummary(size, self._image_num_nodes.get(image, 0)) for image, size in images.items()}

    def _refresh_image_states(self, snapshot: Snapshot) -> None:
        """Node images changed: recount nodes per image and refresh every snapshot node's summary."""
        num_nodes: dict[str, int] = {}
        for ni in self.nodes.values():
            if ni.node is not None:
                for image in ni.node.images:
                    num_nodes[image] = num_nodes.get(image, 0) + 1
        self._image_num_nodes = num_nodes
        for ni in snapshot.node_info_map.values():
            if ni.node is not None:
                ni.image_states = self._image_summaries(ni.node.images)


def _same_footprint(a: PodInfo, b: PodInfo) -> bool:
    """Whether two versions of a pod add the same amounts to a NodeInfo."""
    return (
        a.requests == b.requests
        and a.non_zero_cpu == b.non_zero_cpu
        and a.non_zero_mem == b.non_zero_mem
        and a.host_ports == b.host_ports
        and a.has_affinity == b.has_affinity
        and bool(a.required_anti_affinity_terms) == bool(b.required_anti_affinity_terms)
        and (a.obj.get("spec") or {}).get("volumes") == (b.obj.get("spec") or {}).get("volumes")
    )
