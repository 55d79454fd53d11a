"""Snapshot: the cycle's immutable view of the cluster (backend/cache/snapshot.go), plus its NodeTable.

A pod group's cycle may narrow the snapshot to a placement (a topology domain): only the
cycle's choice of nodes is narrowed (which nodes are filtered and scored, how many there
are); plugins still see every node, as upstream's do. The placement is a set of rows of
the snapshot's lists and NodeTable, so trying a placement copies nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from kubesched.framework.node_info import NodeInfo
from kubesched.framework.node_table import NodeTable


class PlacementError(Exception):
    """A placement names a node the snapshot does not have."""


class Snapshot:
    def __init__(self, nodes: list[NodeInfo] | None = None) -> None:
        self.node_info_map: dict[str, NodeInfo] = {}
        self.node_info_list: list[NodeInfo] = []
        self._affinity_lists: tuple[int, list[NodeInfo], list[NodeInfo]] | None = None
        self.position: dict[str, int] = {}
        self.generation = 0
        self.table = NodeTable([])
        self._used_pvcs: tuple[int, int, frozenset[str]] = (-1, -1, frozenset())
        self._placement: list[str] | None = None  # the names of the placement's nodes, in its order
        self._placement_rows: npt.NDArray[np.int64] | None = None
        if nodes is not None:
            self.node_info_map = {ni.name: ni for ni in nodes}
            self.rebuild_lists([ni.name for ni in nodes])

    def rebuild_lists(self, order: list[str]) -> None:
        self.node_info_list = [self.node_info_map[n] for n in order if n in self.node_info_map]
        self.position = {ni.name: i for i, ni in enumerate(self.node_info_list)}
        self._affinity_lists = None
        self.table = NodeTable(self.node_info_list)
        if self._placement is not None:
            self._placement_rows = self._rows(self._placement)

    def _rows(self, names: list[str]) -> npt.NDArray[np.int64]:
        pos = self.position
        return np.fromiter((pos[n] for n in names if n in pos), dtype=np.int64)

    def assume_placement(self, names: Iterable[str]) -> None:
        """Narrow the cycle's nodes to these (AssumePlacement); all of the snapshot's nodes is no narrowing."""
        chosen = list(names)
        for name in chosen:
            if name not in self.position:
                raise PlacementError(f"node {name} in placement is not present in snapshot")
        if len(chosen) == len(self.node_info_list):
            self.forget_placement()
            return
        self._placement = chosen
        self._placement_rows = self._rows(chosen)

    def forget_placement(self) -> None:
        self._placement = None
        self._placement_rows = None

    @property
    def placement_rows(self) -> npt.NDArray[np.int64] | None:
        """Rows of the placement's nodes in its order, or None when the cycle may use every node."""
        return self._placement_rows

    def nodes_in_placement(self) -> list[NodeInfo]:
        """ListNodesInPlacement: the placement's nodes, or all of them when there is none."""
        if self._placement is None:
            return self.node_info_list
        info = self.node_info_map
        return [info[n] for n in self._placement if n in info]

    def num_nodes_in_placement(self) -> int:
        rows = self._placement_rows
        return len(self.node_info_list) if rows is None else len(rows)

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
