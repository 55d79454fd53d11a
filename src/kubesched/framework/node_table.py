"""NodeTable: the snapshot's nodes as numpy columns, for plugins' vectorised paths.

Row i is the i-th node of the snapshot's node list. The cache rewrites only the rows
of nodes that changed since the previous cycle, so a cycle over 5000 nodes costs a
handful of array operations rather than 5000 Python calls. Columns that most
workloads never read (one per node label key) are built on first use and kept up to
date from then on.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, TypeVar, cast, overload

import numpy as np
import numpy.typing as npt

from kubesched.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from kubesched.api.selectors import LabelSelector, Requirement
from kubesched.api.taints import Taint
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.types import AffinityTerm, PodInfo

T = TypeVar("T")
BASE_RESOURCES = (CPU, MEMORY, EPHEMERAL_STORAGE, PODS)
POD_COUNT = 3  # in `requested`, the PODS column holds the number of pods on the node
ABSENT = -1
MAX_DERIVED_COLUMNS = 16  # derived columns kept; each costs a predicate call per pod that came or went

# Kinds of existing pods' affinity terms that ExistingTerms indexes.
REQUIRED_AFFINITY = 0
REQUIRED_ANTI_AFFINITY = 1
PREFERRED_AFFINITY = 2
PREFERRED_ANTI_AFFINITY = 3


@dataclass(slots=True)
class TermRows:
    """One distinct term of existing pods, its weight (0 for required terms) and the pods holding it, per row."""

    term: AffinityTerm
    weight: int
    rows: dict[int, int] = field(default_factory=dict)

    def row_counts(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        n = len(self.rows)
        return np.fromiter(self.rows, dtype=np.int64, count=n), np.fromiter(self.rows.values(), np.int64, count=n)


TermKey = tuple[int, int, int]  # kind, id of the (interned) term, weight
CodeSums = tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]  # a label key's value codes, ascending, and sums


def sum_by_code(codes: npt.NDArray[np.int64], counts: npt.NDArray[np.int64]) -> CodeSums:
    """`counts` summed by their `codes`: the distinct codes ascending and their integer sums."""
    order = np.argsort(codes, kind="stable")
    codes, counts = codes[order], counts[order]
    if not len(codes):
        return codes, counts
    starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))
    return codes[starts], np.add.reduceat(counts, starts)


def _pod_terms(pod: PodInfo) -> Iterable[tuple[int, AffinityTerm, int]]:
    for t in pod.required_affinity_terms:
        yield REQUIRED_AFFINITY, t, 0
    for t in pod.required_anti_affinity_terms:
        yield REQUIRED_ANTI_AFFINITY, t, 0
    for w in pod.preferred_affinity_terms:
        yield PREFERRED_AFFINITY, w.term, w.weight
    for w in pod.preferred_anti_affinity_terms:
        yield PREFERRED_ANTI_AFFINITY, w.term, w.weight


class ExistingTerms:
    """Existing pods' (anti-)affinity terms by kind, each with the rows whose pods hold it.

    InterPodAffinity matches each distinct term against the incoming pod once, instead of
    walking every pod with affinity, and only the terms that can select the pod's namespace:
    terms are also filed under the namespaces they list, or as any-namespace when they have a
    namespace selector. Terms are interned (types.py), so equal terms share an entry; a term
    evicted from the intern table and parsed again just gets a second entry. An entry keeps its
    term alive, so its id cannot be reused while the entry exists.
    """

    def __init__(self) -> None:
        self.by_kind: tuple[dict[TermKey, TermRows], ...] = ({}, {}, {}, {})
        self._by_namespace: tuple[dict[str, dict[TermKey, TermRows]], ...] = ({}, {}, {}, {})
        self._any_namespace: tuple[dict[TermKey, TermRows], ...] = ({}, {}, {}, {})
        self._row_keys: dict[int, list[TermKey]] = {}

    def _file(self, key: TermKey, entry: TermRows | None) -> None:
        """File a new entry under its namespaces, or unfile a removed one (entry None)."""
        kind = key[0]
        term = entry.term if entry is not None else self.by_kind[kind][key].term
        if not term.namespace_selector.is_nothing:
            buckets = [self._any_namespace[kind]]
        else:
            by_ns = self._by_namespace[kind]
            buckets = [by_ns.setdefault(ns, {}) for ns in term.namespaces]
        for bucket in buckets:
            if entry is not None:
                bucket[key] = entry
            else:
                del bucket[key]
        if entry is None:
            for ns in term.namespaces:
                if not self._by_namespace[kind].get(ns, True):
                    del self._by_namespace[kind][ns]

    def set_row(self, i: int, ni: NodeInfo) -> None:
        for key in self._row_keys.pop(i, ()):
            entries = self.by_kind[key[0]]
            entry = entries[key]
            left = entry.rows[i] - 1
            if left:
                entry.rows[i] = left
            else:
                del entry.rows[i]
                if not entry.rows:
                    self._file(key, None)
                    del entries[key]
        if not ni.pods_with_affinity:
            return
        keys = self._row_keys[i] = []
        for pod in ni.pods_with_affinity:
            for kind, term, weight in _pod_terms(pod):
                key = (kind, id(term), weight)
                entries = self.by_kind[kind]
                found = entries.get(key)
                if found is None:
                    found = entries[key] = TermRows(term, weight)
                    self._file(key, found)
                found.rows[i] = found.rows.get(i, 0) + 1
                keys.append(key)

    def of_kind(self, kind: int) -> Iterable[TermRows]:
        return self.by_kind[kind].values()

    def selecting_namespace(self, kind: int, namespace: str) -> Iterable[TermRows]:
        """The entries of `kind` whose terms may select a pod in `namespace` (a superset: match them still)."""
        listed = self._by_namespace[kind].get(namespace)
        any_ns = self._any_namespace[kind]
        if not listed:
            return any_ns.values()
        if not any_ns:
            return listed.values()
        return itertools.chain(listed.values(), any_ns.values())


def _indexable_requirement(selector: LabelSelector | None) -> Requirement | None:
    """An `In` requirement every pod the selector matches must meet (matchLabels parse to `In`)."""
    if selector is None or not selector.requirements:
        return None
    for r in selector.requirements:
        if r.operator == "In":
            return r
    return None


_UNFILLED: Final = object()


class DomainSums:
    """A derived column summed by the codes of one label key, kept as its rows change: `sums[code]` over the
    rows with that code, `absent` over the rows without the label. `domain_sums_plain` is its plain twin."""

    __slots__ = ("sums", "absent")

    def __init__(self, sums: npt.NDArray[np.int64], absent: int) -> None:
        self.sums = sums
        self.absent = absent

    def add(self, code: int, delta: int) -> None:
        if code < 0:
            self.absent += delta
            return
        if code >= len(self.sums):
            self.sums = np.concatenate([self.sums, np.zeros(code + 1 - len(self.sums), dtype=np.int64)])
        self.sums[code] += delta


def domain_sums_plain(codes: npt.NDArray[np.int32], values: npt.NDArray[np.int64], count: int) -> DomainSums:
    """`values` summed by `codes` (each in [0, count) or ABSENT), afresh."""
    has = codes != ABSENT
    sums = np.bincount(codes[has], weights=values[has], minlength=count).astype(np.int64)
    return DomainSums(sums, int(values[~has].sum()))


def count_matching(matches: Callable[[PodInfo], bool], ni: NodeInfo) -> int:
    """The pods of a node that `matches` accepts: a derived column's value, counted afresh."""
    return sum(1 for p in ni.pods if matches(p))


class NodeTable:
    def __init__(self, nodes: Sequence[NodeInfo]) -> None:
        self.n = len(nodes)
        self.names: list[str] = [ni.name for ni in nodes]
        self.resource_index: dict[str, int] = {r: i for i, r in enumerate(BASE_RESOURCES)}
        for ni in nodes:
            for r in ni.allocatable:
                self.resource_index.setdefault(r, len(self.resource_index))
        width = len(self.resource_index)
        # Column-major: a cycle reads a resource's column over thousands of rows, a rewrite a row's few cells.
        self.allocatable = np.zeros((self.n, width), dtype=np.int64, order="F")
        self.requested = np.zeros((self.n, width), dtype=np.int64, order="F")
        self.non_zero_requested = np.zeros((self.n, 2), dtype=np.int64, order="F")
        self.unschedulable = np.zeros(self.n, dtype=bool)
        self.taint_group = np.zeros(self.n, dtype=np.int32)
        self.taint_groups: list[tuple[Taint, ...]] = [()]
        self._taint_group_ids: dict[tuple[Taint, ...], int] = {(): 0}
        self.image_nodes = 0  # how many nodes report any image; 0 lets ImageLocality skip the work
        self._has_images = np.zeros(self.n, dtype=bool)
        self._label_columns: dict[str, npt.NDArray[np.int32]] = {}
        self._label_values: dict[str, dict[str, int]] = {}
        self._derived: dict[Hashable, tuple[Callable[[PodInfo], bool], npt.NDArray[np.int64]]] = {}
        # Per derived column, the rows where it is not 0: what sums over a column by domain need to read.
        self._derived_nonzero: dict[Hashable, set[int]] = {}
        # Derived column key -> label key -> that column summed by the label's codes, kept with the column.
        self._domain_sums: dict[Hashable, dict[str, DomainSums]] = {}
        self._label_names: dict[str, list[str]] = {}  # label_values: the inverse of _label_values, extended on demand
        # What depends on node columns alone, by the caller's key, kept until node_version moves.
        self._node_memo: dict[Hashable, object] = {}
        self._node_memo_version = 0
        # Each row's pods when it was last filled: a rewrite adjusts derived columns by the pods that came or went.
        self._row_pods: list[tuple[PodInfo, ...]] = [()] * self.n
        # Each row's Node when it was last filled (none yet: _UNFILLED), so a pod's change rewrites only pod columns.
        self._row_node: list[object] = [_UNFILLED] * self.n
        self.node_version = 0  # counts rewrites of node columns: what depends on nodes alone is kept until it moves
        self.existing_terms = ExistingTerms()
        # Pod label pair -> {row: pods with it}; built when a derived column first asks, then kept.
        self._pod_label_rows: dict[tuple[str, str], dict[int, int]] | None = None
        self._row_pod_labels: list[dict[str, Mapping[str, str]]] = []
        self._nodes = list(nodes)
        self._node_array = np.empty(self.n, dtype=object)  # the same NodeInfos, for nodes_at's gather
        for i, ni in enumerate(nodes):
            self._node_array[i] = ni
            self._fill(i, ni)

    def _fill(self, i: int, ni: NodeInfo) -> None:
        idx = self.resource_index
        node = ni.node
        if node is not self._row_node[i]:
            self._fill_node(i, ni)
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
        pods = tuple(ni.pods)
        if self._derived:
            self._adjust_derived(i, self._row_pods[i], pods)
        self._row_pods[i] = pods
        self.existing_terms.set_row(i, ni)
        if self._pod_label_rows is not None:
            self._index_pod_labels(i, ni)

    def _fill_node(self, i: int, ni: NodeInfo) -> None:
        """The columns row i takes from its Node (a ParsedNode is a node version: these change only with it)."""
        node = ni.node
        self._row_node[i] = node
        self.node_version += 1
        idx = self.resource_index
        alloc_row = self.allocatable[i]
        alloc_row[:] = 0
        for r, v in ni.allocatable.items():
            alloc_row[idx[r]] = v
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
            old = int(col[i])
            new = col[i] = self._code(key, labels.get(key))
            if new != old and self._domain_sums:
                self._move_domain_sums(i, key, old, new)

    def _move_domain_sums(self, i: int, key: str, old: int, new: int) -> None:
        """Row i's label `key` went from code `old` to `new`: its derived values move between the domains."""
        for derived_key, by_label in self._domain_sums.items():
            found = by_label.get(key)
            if found is not None:
                value = int(self._derived[derived_key][1][i])
                found.add(old, -value)
                found.add(new, value)

    def _adjust_derived(self, i: int, old: tuple[PodInfo, ...], new: tuple[PodInfo, ...]) -> None:
        """Bring row i of every derived column up to date from the pods that left and came (PodInfos are never
        changed in place: a new version of a pod is a new object). The usual rewrite appends one bound pod."""
        if len(new) == len(old) + 1 and new[:-1] == old:
            came: Sequence[PodInfo] = new[-1:]
            left: Sequence[PodInfo] = ()
        else:
            old_ids = {id(p) for p in old}
            new_ids = {id(p) for p in new}
            came = [p for p in new if id(p) not in old_ids]
            left = [p for p in old if id(p) not in new_ids]
        if not came and not left:
            return
        for key, (matches, values) in self._derived.items():
            delta = sum(1 for p in came if matches(p)) - sum(1 for p in left if matches(p))
            if delta:
                values[i] += delta
                if values[i]:
                    self._derived_nonzero[key].add(i)
                else:
                    self._derived_nonzero[key].discard(i)
                for label_key, found in self._domain_sums.get(key, {}).items():
                    found.add(int(self._label_columns[label_key][i]), delta)

    def _index_pod_labels(self, i: int, ni: NodeInfo) -> None:
        """Bring row i's pods into the pod label index: only pods that came, went or changed labels cost work."""
        index = self._pod_label_rows
        assert index is not None
        old = self._row_pod_labels[i]
        new: dict[str, Mapping[str, str]] = {p.uid: p.labels for p in ni.pods}
        for uid, labels in old.items():
            now = new.get(uid)
            if now is not labels and now != labels:
                for pair in labels.items():
                    rows = index[pair]
                    left = rows[i] - 1
                    if left:
                        rows[i] = left
                    else:
                        del rows[i]
                        if not rows:
                            del index[pair]
        for uid, labels in new.items():
            before = old.get(uid)
            if before is not labels and before != labels:
                for pair in labels.items():
                    rows = index.setdefault(pair, {})
                    rows[i] = rows.get(i, 0) + 1
        self._row_pod_labels[i] = new

    def rows_with_pod_label(self, key: str, values: Iterable[str]) -> list[int]:
        """Rows holding some pod labelled key=v, v in `values` (from the pod label index, built on first use)."""
        if self._pod_label_rows is None:
            self._pod_label_rows = {}
            self._row_pod_labels = [{} for _ in range(self.n)]
            for i, ni in enumerate(self._nodes):
                self._index_pod_labels(i, ni)
        index = self._pod_label_rows
        rows: set[int] = set()
        for v in values:
            found = index.get((key, v))
            if found:
                rows.update(found)
        return sorted(rows)

    def _add_resource(self, name: str) -> int:
        j = self.resource_index[name] = len(self.resource_index)
        pad = np.zeros((self.n, 1), dtype=np.int64)
        self.allocatable = np.asfortranarray(np.hstack([self.allocatable, pad]))
        self.requested = np.asfortranarray(np.hstack([self.requested, pad]))
        return j

    def update_row(self, i: int, ni: NodeInfo) -> None:
        """Rewrite row i from a changed NodeInfo (same node, new generation)."""
        self._nodes[i] = ni
        self._node_array[i] = ni
        for r in ni.allocatable:
            if r not in self.resource_index:
                self._add_resource(r)
        self._fill(i, ni)

    @property
    def node_infos(self) -> list[NodeInfo]:
        return self._nodes

    def nodes_at(self, positions: npt.NDArray[np.int64]) -> list[NodeInfo]:
        """node_infos at `positions`, in their order: one numpy gather (a list's itemgetter over the few hundred
        feasible nodes of a cycle at 5000 cost three times as much)."""
        out: list[NodeInfo] = self._node_array[positions].tolist()
        return out

    def nodes_view(self, positions: npt.NDArray[np.int64]) -> NodesAt:
        """nodes_at, gathered only if someone walks it (NodesAt)."""
        return NodesAt(self, positions)

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

    def label_values(self, key: str) -> Sequence[str]:
        """The label values of `key` by code: label_column(key)[i] indexes this sequence. Kept and extended as
        values appear, not copied per call (100,000 hostnames a pod); callers only read it."""
        self.label_column(key)
        names = self._label_names.setdefault(key, [])
        known = self._label_values[key]
        if len(names) < len(known):
            names.extend(itertools.islice(known, len(names), None))
        return names

    def value_count(self, key: str) -> int:
        """How many distinct values of `key` have codes (codes run from 0 to this, exclusive)."""
        self.label_column(key)
        return len(self._label_values[key])

    def derived_column(
        self, key: Hashable, matches: Callable[[PodInfo], bool], selector: LabelSelector | None = None
    ) -> npt.NDArray[np.int64]:
        """Per row, the pods that `matches` accepts, kept current as rows are rewritten (by the pods that came
        and went: `count_matching` over the row is its plain twin).

        `key` names what `matches` tests; the few most recent keys are kept, older ones dropped.
        Where `matches` accepts only pods `selector` selects, a first build asks about the pods of
        the rows holding a pod with the label one of its `In` requirements names (0 elsewhere).
        """
        entry = self._derived.get(key)
        if entry is None:
            if len(self._derived) >= MAX_DERIVED_COLUMNS:
                oldest = next(iter(self._derived))
                del self._derived[oldest], self._derived_nonzero[oldest]
                self._domain_sums.pop(oldest, None)
            required = _indexable_requirement(selector)
            if required is None:
                values = np.fromiter((count_matching(matches, ni) for ni in self._nodes), dtype=np.int64, count=self.n)
            else:
                values = np.zeros(self.n, dtype=np.int64)
                nodes = self._nodes
                for i in self.rows_with_pod_label(required.key, required.values):
                    values[i] = count_matching(matches, nodes[i])
            entry = self._derived[key] = (matches, values)
            self._derived_nonzero[key] = set(np.flatnonzero(values).tolist())
        else:
            self._derived[key] = self._derived.pop(key)  # most recently used last
        return entry[1]

    def domain_sums(self, derived_key: Hashable, label_key: str) -> DomainSums:
        """The derived column `derived_key` (built: derived_column asked first) summed by the codes of
        `label_key`, built once and then kept as rows change; `sums` has a slot for every code."""
        by_label = self._domain_sums.setdefault(derived_key, {})
        found = by_label.get(label_key)
        if found is None:
            values = self._derived[derived_key][1]
            rows = np.flatnonzero(values)  # a selector's column is mostly 0: sum over the rows with pods only
            found = by_label[label_key] = domain_sums_plain(
                self.label_column(label_key)[rows], values[rows], self.value_count(label_key)
            )
        elif len(found.sums) < self.value_count(label_key):
            found.add(self.value_count(label_key) - 1, 0)
        return found

    def node_memo(self, key: Hashable, build: Callable[[], T]) -> T:
        """`build()`, kept under `key` until a node changes (for what depends on node columns alone)."""
        if self._node_memo_version != self.node_version:
            self._node_memo.clear()
            self._node_memo_version = self.node_version
        if key in self._node_memo:
            return cast(T, self._node_memo[key])
        value = self._node_memo[key] = build()
        return value

    def first_appearance(
        self, key: str, order: Callable[[npt.NDArray[np.int32]], npt.NDArray[np.int32]]
    ) -> tuple[bool, npt.NDArray[np.int32]]:
        """Whether every row has its own code of `key`, and `order` of the whole column (the codes in the order
        the rows first show them, as PodTopologySpread orders domains): kept until a node changes."""

        def build() -> tuple[bool, npt.NDArray[np.int32]]:
            present = order(self.label_column(key).copy())
            return len(present) == self.n, present

        return self.node_memo(("first_appearance", key), build)

    def value_code(self, key: str, value: str) -> int:
        """Code of `value` for `key`, or -2 (matches no node) if no node has it."""
        self.label_column(key)
        return self._label_values[key].get(value, -2)

    def value_codes(self, key: str, values: frozenset[str]) -> npt.NDArray[np.int32]:
        self.label_column(key)
        known = self._label_values[key]
        return np.fromiter((known[v] for v in values if v in known), dtype=np.int32)

    def derived_rows(
        self, key: Hashable, matches: Callable[[PodInfo], bool], selector: LabelSelector | None = None
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """derived_column's rows that are not 0, ascending, and their values: kept with the column, so a sum over
        it costs the rows holding matching pods rather than every row (np.flatnonzero is its plain twin)."""
        values = self.derived_column(key, matches, selector)
        nonzero = self._derived_nonzero[key]
        rows = np.fromiter(nonzero, dtype=np.int64, count=len(nonzero))
        rows.sort()
        return rows, values[rows]

    def derived_domain_sums(
        self, key: Hashable, matches: Callable[[PodInfo], bool], selector: LabelSelector | None, label_key: str
    ) -> CodeSums:
        """derived_column summed by the value code of `label_key` (rows without the label left out), as the codes
        holding matching pods, ascending, and their sums: read off the kept domain_sums at the codes of the rows
        that are not 0, so a pod pays for the rows holding matching pods, not for every domain or row."""
        rows, _ = self.derived_rows(key, matches, selector)
        kept = self.domain_sums(key, label_key)
        codes = np.unique(self.label_column(label_key)[rows]).astype(np.int64)
        codes = codes[codes != ABSENT]
        return codes, kept.sums[codes]


class NodesAt(Sequence[NodeInfo]):
    """A table's NodeInfos at `positions`, as `nodes_at` gives them, but gathered only when first walked.

    The vectorised plugins of a cycle need only how many nodes are scored, and the chosen
    host one NodeInfo; per-node plugins, extenders and records walk them all. Gathering
    5,000 objects for every pod cost more than scoring them with numpy. The table is never
    rewritten while a cycle runs (and a rebuilt snapshot makes a new table), so a late walk
    sees the same nodes.
    """

    __slots__ = ("_gathered", "_table", "positions")

    def __init__(self, table: NodeTable, positions: npt.NDArray[np.int64]) -> None:
        self._table = table
        self.positions = positions
        self._gathered: list[NodeInfo] | None = None

    def _all(self) -> list[NodeInfo]:
        if self._gathered is None:
            self._gathered = self._table.nodes_at(self.positions)
        return self._gathered

    def __len__(self) -> int:
        return len(self.positions)

    @overload
    def __getitem__(self, i: int) -> NodeInfo: ...

    @overload
    def __getitem__(self, i: slice) -> list[NodeInfo]: ...

    def __getitem__(self, i: int | slice) -> NodeInfo | list[NodeInfo]:
        if isinstance(i, slice):
            return self._all()[i]
        if self._gathered is not None:
            return self._gathered[i]
        return self._table.node_infos[int(self.positions[i])]

    def __iter__(self) -> Iterator[NodeInfo]:
        return iter(self._all())
