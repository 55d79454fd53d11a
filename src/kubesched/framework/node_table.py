"""NodeTable: the snapshot's nodes as numpy columns, for plugins' vectorised paths.

Row i is the i-th node of the snapshot's node list. The cache rewrites only the rows
of nodes that changed since the previous cycle, so a cycle over 5000 nodes costs a
handful of array operations rather than 5000 Python calls. Columns that most
workloads never read (one per node label key) are built on first use and kept up to
date from then on.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence

import numpy as np
import numpy.typing as npt

from kubesched.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from kubesched.api.taints import Taint
from kubesched.framework.node_info import NodeInfo

BASE_RESOURCES = (CPU, MEMORY, EPHEMERAL_STORAGE, PODS)
POD_COUNT = 3  # in `requested`, the PODS column holds the number of pods on the node
ABSENT = -1
MAX_DERIVED_COLUMNS = 16  # derived columns kept; each costs one fn call per rewritten row


class NodeTable:
    def __init__(self, nodes: Sequence[NodeInfo]) -> None:
        self.n = len(nodes)
        self.names: list[str] = [ni.name for ni in nodes]
        self.resource_index: dict[str, int] = {r: i for i, r in enumerate(BASE_RESOURCES)}
        for ni in nodes:
            for r in ni.allocatable:
                self.resource_index.setdefault(r, len(self.resource_index))
        width = len(self.resource_index)
        self.allocatable = np.zeros((self.n, width), dtype=np.int64)
        self.requested = np.zeros((self.n, width), dtype=np.int64)
        self.non_zero_requested = np.zeros((self.n, 2), dtype=np.int64)
        self.unschedulable = np.zeros(self.n, dtype=bool)
        self.taint_group = np.zeros(self.n, dtype=np.int32)
        self.taint_groups: list[tuple[Taint, ...]] = [()]
        self._taint_group_ids: dict[tuple[Taint, ...], int] = {(): 0}
        self.image_nodes = 0  # how many nodes report any image; 0 lets ImageLocality skip the work
        self._has_images = np.zeros(self.n, dtype=bool)
        self._label_columns: dict[str, npt.NDArray[np.int32]] = {}
        self._label_values: dict[str, dict[str, int]] = {}
        self._derived: dict[Hashable, tuple[Callable[[NodeInfo], int], npt.NDArray[np.int64]]] = {}
        self._nodes = list(nodes)
        for i, ni in enumerate(nodes):
            self._fill(i, ni)

    def _fill(self, i: int, ni: NodeInfo) -> None:
        idx = self.resource_index
        alloc_row = self.allocatable[i]
        alloc_row[:] = 0
        for r, v in ni.allocatable.items():
            alloc_row[idx[r]] = v
        req_row = self.requested[i]
        req_row[:] = 0
        for r, v in ni.requested.items():
            j = idx.get(r)
            if j is None:
                j = self._add_resource(r)
                req_row = self.requested[i]
            req_row[j] = v
        req_row[POD_COUNT] = len(ni.pods)
        self.non_zero_requested[i, 0] = ni.non_zero_cpu
        self.non_zero_requested[i, 1] = ni.non_zero_mem
        node = ni.node
        self.unschedulable[i] = node is not None and node.unschedulable
        taints = node.taints if node is not None else ()
        gid = self._taint_group_ids.get(taints)
        if gid is None:
            gid = self._taint_group_ids[taints] = len(self.taint_groups)
            self.taint_groups.append(taints)
        self.taint_group[i] = gid
        has_images = node is not None and bool(node.images)
        self.image_nodes += int(has_images) - int(self._has_images[i])
        self._has_images[i] = has_images
        labels = ni.labels
        for key, col in self._label_columns.items():
            col[i] = self._code(key, labels.get(key))
        for fn, values in self._derived.values():
            values[i] = fn(ni)

    def _add_resource(self, name: str) -> int:
        j = self.resource_index[name] = len(self.resource_index)
        pad = np.zeros((self.n, 1), dtype=np.int64)
        self.allocatable = np.hstack([self.allocatable, pad])
        self.requested = np.hstack([self.requested, pad])
        return j

    def update_row(self, i: int, ni: NodeInfo) -> None:
        """Rewrite row i from a changed NodeInfo (same node, new generation)."""
        self._nodes[i] = ni
        for r in ni.allocatable:
            if r not in self.resource_index:
                self._add_resource(r)
        self._fill(i, ni)

    @property
    def node_infos(self) -> list[NodeInfo]:
        return self._nodes

    def _code(self, key: str, value: str | None) -> int:
        if value is None:
            return ABSENT
        values = self._label_values[key]
        code = values.get(value)
        if code is None:
            code = values[value] = len(values)
        return code

    def label_column(self, key: str) -> npt.NDArray[np.int32]:
        """Codes of each node's value for label `key` (ABSENT where the node lacks it)."""
        col = self._label_columns.get(key)
        if col is None:
            self._label_values[key] = {}
            col = np.fromiter((self._code(key, ni.labels.get(key)) for ni in self._nodes), dtype=np.int32, count=self.n)
            self._label_columns[key] = col
        return col

    def label_values(self, key: str) -> list[str]:
        """The label values of `key` by code: label_column(key)[i] indexes this list."""
        self.label_column(key)
        return list(self._label_values[key])

    def derived_column(self, key: Hashable, fn: Callable[[NodeInfo], int]) -> npt.NDArray[np.int64]:
        """fn(node) for every row, kept current as rows are rewritten (e.g. pods matching a selector).

        `key` names what fn computes; the few most recent keys are kept, older ones dropped.
        """
        entry = self._derived.get(key)
        if entry is None:
            if len(self._derived) >= MAX_DERIVED_COLUMNS:
                del self._derived[next(iter(self._derived))]
            values = np.fromiter((fn(ni) for ni in self._nodes), dtype=np.int64, count=self.n)
            entry = self._derived[key] = (fn, values)
        else:
            self._derived[key] = self._derived.pop(key)  # most recently used last
        return entry[1]

    def value_code(self, key: str, value: str) -> int:
        """Code of `value` for `key`, or -2 (matches no node) if no node has it."""
        self.label_column(key)
        return self._label_values[key].get(value, -2)

    def value_codes(self, key: str, values: frozenset[str]) -> npt.NDArray[np.int32]:
        self.label_column(key)
        known = self._label_values[key]
        return np.fromiter((known[v] for v in values if v in known), dtype=np.int32)
