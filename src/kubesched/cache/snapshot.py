"""Snapshot: the cycle's immutable view of the cluster (backend/cache/snapshot.go), plus its NodeTable."""

from __future__ import annotations

from kubesched.framework.node_info import NodeInfo
from kubesched.framework.node_table import NodeTable


class Snapshot:
    def __init__(self, nodes: list[NodeInfo] | None = None) -> None:
        self.node_info_map: dict[str, NodeInfo] = {}
        self.node_info_list: list[NodeInfo] = []
        self._affinity_lists: tuple[int, list[NodeInfo], list[NodeInfo]] | None = None
        self.position: dict[str, int] = {}
        self.generation = 0
        self.table = NodeTable([])
        self._used_pvcs: tuple[int, int, frozenset[str]] = (-1, -1, frozenset())
        if nodes is not None:
            self.node_info_map = {ni.name: ni for ni in nodes}
            self.rebuild_lists([ni.name for ni in nodes])

    def rebuild_lists(self, order: list[str]) -> None:
        self.node_info_list = [self.node_info_map[n] for n in order if n in self.node_info_map]
        self.position = {ni.name: i for i, ni in enumerate(self.node_info_list)}
        self._affinity_lists = None
        self.table = NodeTable(self.node_info_list)

    def _lists(self) -> tuple[int, list[NodeInfo], list[NodeInfo]]:
        """The nodes with affinity pods, built when first asked for in a generation.

        The cache swaps in clones of changed nodes, so lists kept across generations would
        hold stale NodeInfos; the hot paths read the NodeTable's term index instead.
        """
        lists = self._affinity_lists
        if lists is None or lists[0] != self.generation:
            nodes = self.node_info_list
            lists = self._affinity_lists = (
                self.generation,
                [ni for ni in nodes if ni.pods_with_affinity],
                [ni for ni in nodes if ni.pods_with_required_anti_affinity],
            )
        return lists

    @property
    def have_pods_with_affinity_list(self) -> list[NodeInfo]:
        return self._lists()[1]

    @property
    def have_pods_with_required_anti_affinity_list(self) -> list[NodeInfo]:
        return self._lists()[2]

    def is_pvc_used_by_pods(self, key: str) -> bool:
        """StorageInfos().IsPVCUsedByPods: a pod on some node (assumed ones included) uses the claim "ns/name"."""
        gen, n, used = self._used_pvcs
        if gen != self.generation or n != len(self.node_info_list):
            used = frozenset(k for ni in self.node_info_list for k in ni.pvc_ref_counts)
            self._used_pvcs = (self.generation, len(self.node_info_list), used)
        return key in used

    def get(self, name: str) -> NodeInfo | None:
        return self.node_info_map.get(name)

    def __len__(self) -> int:
        return len(self.node_info_list)
