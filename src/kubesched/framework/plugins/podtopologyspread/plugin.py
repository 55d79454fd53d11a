"""PodTopologySpread: mirrors framework/plugins/podtopologyspread/{plugin,filtering,scoring}.go.

Filter keeps DoNotSchedule constraints' skew within maxSkew; Score prefers domains
with fewer matching pods for ScheduleAnyway constraints, or for the system default
constraints with a selector derived from the pod's Services and controller.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from kubesched.api.selectors import LabelSelector
from kubesched.api.taints import find_matching_untolerated_taint
from kubesched.config import names
from kubesched.config.types import PodTopologySpreadArgs
from kubesched.framework import events
from kubesched.framework.cycle_state import ERROR_READING, READING, CycleState, read_state
from kubesched.framework.interface import (
    MAX_NODE_SCORE,
    BoolArray,
    ClusterEventWithHint,
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    IntArray,
    NodeScoreList,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueingHint,
    ScorePlugin,
    SignFragment,
)
from kubesched.framework.node_info import NodeInfo, ParsedNode
from kubesched.framework.node_table import ABSENT, NodeTable
from kubesched.framework.plugins.helper.normalize_score import go_round
from kubesched.framework.plugins.helper.spread import default_selector
from kubesched.framework.plugins.nodeaffinity.node_affinity import required_node_affinity_mask
from kubesched.framework.plugins.podtopologyspread.common import (
    DO_NOT_SCHEDULE,
    Constraint,
    count_pods_match_selector,
    filter_constraints,
    node_labels_match_spread_constraints,
    pod_matches_selector,
)
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo, TopologySpreadConstraint, parse_spread_constraints

NAME: Final = names.POD_TOPOLOGY_SPREAD
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME
ERR_REASON_CONSTRAINTS_NOT_MATCH: Final = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH: Final = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
LABEL_HOSTNAME: Final = "kubernetes.io/hostname"
MAX_INT32: Final = 2**31 - 1

SYSTEM_DEFAULT_CONSTRAINTS: Final = (
    {"topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway", "maxSkew": 3},
    {"topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway", "maxSkew": 5},
)


class CriticalPaths:
    """The two domains with the fewest matching pods; [0] holds the global minimum."""

    __slots__ = ("paths",)

    def __init__(self) -> None:
        self.paths: list[list[Any]] = [["", MAX_INT32], ["", MAX_INT32]]  # [topology value, matching pods]

    def update(self, value: str, num: int) -> None:
        p = self.paths
        i = 0 if value == p[0][0] else (1 if value == p[1][0] else -1)
        if i >= 0:
            p[i][1] = num
            if p[0][1] > p[1][1]:
                p[0], p[1] = p[1], p[0]
        elif num < p[0][1]:
            p[1] = p[0]
            p[0] = [value, num]
        elif num < p[1][1]:
            p[1] = [value, num]

    def copy(self) -> CriticalPaths:
        c = CriticalPaths()
        c.paths = [list(self.paths[0]), list(self.paths[1])]
        return c


Domains = tuple[npt.NDArray[np.signedinteger[Any]], IntArray]  # value codes in first-seen order, matching pods


class _PreFilterState:
    """Matching pods per domain for each DoNotSchedule constraint.

    Held as NodeTable value codes and sums (`domains`), which Filter's vectorised path reads;
    the per-value dicts and critical paths that the per-node path and AddPod/RemovePod use
    are built on first use, and once edited they are the state (`domains` is dropped).
    """

    __slots__ = ("constraints", "_table", "_domains", "_mins", "_match_num", "_paths")

    def __init__(
        self,
        constraints: list[Constraint],
        table: NodeTable,
        domains: list[Domains] | None,
        match_num: list[dict[str, int]] | None = None,
        paths: list[CriticalPaths] | None = None,
    ) -> None:
        self.constraints = constraints
        self._table = table
        self._domains = domains
        self._mins = [int(sums.min()) if len(sums) else MAX_INT32 for _, sums in domains or []]
        self._match_num = match_num
        self._paths = paths

    @property
    def tp_value_to_match_num(self) -> list[dict[str, int]]:
        if self._match_num is None:
            self._match_num = [
                dict(zip(_values_of(self._table, c.topology_key, codes), sums.tolist(), strict=True))
                for c, (codes, sums) in zip(self.constraints, self._domains or [], strict=True)
            ]
        return self._match_num

    @property
    def critical_paths(self) -> list[CriticalPaths]:
        if self._paths is None:
            out = []
            for counts in self.tp_value_to_match_num:
                paths = CriticalPaths()
                for v, n in counts.items():
                    paths.update(v, n)
                out.append(paths)
            self._paths = out
        return self._paths

    def min_match_num(self, i: int, min_domains: int) -> int:
        if self._domains is not None:
            if len(self._domains[i][0]) < min_domains:
                return 0
            return self._mins[i]
        if len(self.tp_value_to_match_num[i]) < min_domains:
            return 0
        return self.critical_paths[i].paths[0][1]

    def matching_by_code(self, i: int) -> IntArray:
        """Constraint i's matching pods by value code of its key, with a trailing 0 that ABSENT (-1) indexes."""
        key = self.constraints[i].topology_key
        per_code = np.zeros(self._table.value_count(key) + 1, dtype=np.int64)
        if self._domains is not None:
            codes, sums = self._domains[i]
            per_code[codes] = sums
        else:
            counts = self.tp_value_to_match_num[i]
            per_code[:-1] = [counts.get(v, 0) for v in self._table.label_values(key)]
        return per_code

    def clone(self) -> _PreFilterState:
        return _PreFilterState(
            list(self.constraints),
            self._table,
            self._domains,  # never changed in place
            [dict(m) for m in self._match_num] if self._match_num is not None else None,
            [p.copy() for p in self._paths] if self._paths is not None else None,
        )

    def update_with_pod(self, updated: PodInfo, preemptor: PodInfo, node_info: NodeInfo, delta: int) -> None:
        if updated.namespace != preemptor.namespace or node_info.node is None:
            return
        match_num, paths = self.tp_value_to_match_num, self.critical_paths
        self._domains = None
        labels = node_info.labels
        if not node_labels_match_spread_constraints(labels, self.constraints):
            return
        for i, c in enumerate(self.constraints):
            if not c.match_node_inclusion_policies(preemptor, node_info):
                continue
            if not c.selector.matches(updated.labels):
                continue
            v = labels[c.topology_key]
            counts = match_num[i]
            counts[v] = counts.get(v, 0) + delta
            paths[i].update(v, counts[v])


@dataclass(slots=True)
class _PreScoreState:
    constraints: list[Constraint]
    ignored_nodes: set[str]
    topology_value_to_pod_counts: list[dict[str, int]]
    topology_normalizing_weight: list[float]
    ignored_rows: BoolArray | None = None  # ignored_nodes as NodeTable rows, for the vectorised paths

    def clone(self) -> _PreScoreState:
        return self


def topology_normalizing_weight(size: int) -> float:
    return math.log(size + 2)


def score_for_count(cnt: int, max_skew: int, tp_weight: float) -> float:
    return cnt * tp_weight + (max_skew - 1)


class PodTopologySpread(
    PreFilterPlugin, PreFilterExtensions, FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions
):
    NAME = NAME

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """Spreading depends on where every matching pod is, so a pod with constraints, its own or the
        profile's defaults, is never batched."""
        if pod.topology_spread_constraints:
            return [], Status(Code.UNSCHEDULABLE, "pods with topology constraints are not signable")
        if self.default_constraints:
            return [], Status(Code.UNSCHEDULABLE, "pods with default topology constraints are not signable")
        return [], None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        pod_actions = events.ADD | events.UPDATE_POD_LABEL | events.UPDATE_POD_TOLERATION | events.DELETE
        return [
            events.event(events.POD, pod_actions, self._after_pod_change),
            events.event(
                events.NODE,
                events.ADD | events.DELETE | events.UPDATE_NODE_LABEL | events.UPDATE_NODE_TAINT,
                self._after_node_change,
            ),
        ]

    def _after_pod_change(self, pod: PodInfo, old: PodInfo | None, new: PodInfo | None) -> QueueingHint:
        """A pod that counts in the spreading appeared, left, or changed whether the selectors match it.

        The pod itself counts too: a new toleration matters under nodeTaintsPolicy Honor.
        """

        def involved(p: PodInfo | None) -> bool:
            return p is None or p.uid == pod.uid or (bool(p.node_name) and p.namespace == pod.namespace)

        if not (involved(old) and involved(new)):
            return QueueingHint.QUEUE_SKIP
        constraints = self._constraints(pod, "DoNotSchedule")
        if old is not None and new is not None:
            if (
                new.uid == pod.uid
                and old.tolerations != new.tolerations
                and any(c.node_taints_policy == "Honor" for c in constraints)
            ):
                return QueueingHint.QUEUE
            if old.labels == new.labels:
                return QueueingHint.QUEUE_SKIP
            if any(c.selector.matches(old.labels) != c.selector.matches(new.labels) for c in constraints):
                return QueueingHint.QUEUE
            return QueueingHint.QUEUE_SKIP
        changed = new if new is not None else old
        assert changed is not None
        if any(c.selector.matches(changed.labels) for c in constraints):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def _after_node_change(self, pod: PodInfo, old: ParsedNode | None, new: ParsedNode | None) -> QueueingHint:
        """Any node carrying all the topology keys that came, changed or went may change the skew."""
        constraints = self._constraints(pod, "DoNotSchedule")
        node = new if new is not None else old
        assert node is not None
        ok = node_labels_match_spread_constraints(node.labels, constraints)
        return QueueingHint.QUEUE if ok else QueueingHint.QUEUE_SKIP

    def __init__(self, args: PodTopologySpreadArgs, handle: Handle) -> None:
        self._handle = handle
        self.system_defaulted = args.defaultingType == "System"
        raw: list[Mapping[str, Any]] = (
            list(SYSTEM_DEFAULT_CONSTRAINTS) if self.system_defaulted else list(args.defaultConstraints)
        )
        self.default_constraints: tuple[TopologySpreadConstraint, ...] = parse_spread_constraints(
            raw, {}, "defaultConstraints"
        )

    def _constraints(self, pod: PodInfo, action: str) -> list[Constraint]:
        if pod.topology_spread_constraints:
            return filter_constraints(pod.topology_spread_constraints, action)
        constraints = filter_constraints(self.default_constraints, action)
        if not constraints:
            return []
        selector = default_selector(pod, self._handle.lister)
        if selector.is_everything:
            return []
        return [
            Constraint(
                c.max_skew, c.topology_key, selector, c.min_domains, c.node_affinity_policy, c.node_taints_policy
            )
            for c in constraints
        ]

    # PreFilter / Filter

    def pre_filter(self, state: CycleState, pod: PodInfo, nodes: Any) -> tuple[PreFilterResult | None, Status | None]:
        constraints = self._constraints(pod, "DoNotSchedule")
        if not constraints:
            return None, Status(Code.SKIP)
        table = self._handle.shared_lister().table
        state.write(
            PRE_FILTER_STATE_KEY, _PreFilterState(constraints, table, domains_per_constraint(pod, constraints, table))
        )
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions:
        return self

    def add_pod(self, state: CycleState, pod: PodInfo, to_add: PodInfo, node_info: NodeInfo) -> Status | None:
        read_state(state, PRE_FILTER_STATE_KEY, _PreFilterState, READING).update_with_pod(to_add, pod, node_info, 1)
        return None

    def remove_pod(self, state: CycleState, pod: PodInfo, to_remove: PodInfo, node_info: NodeInfo) -> Status | None:
        read_state(state, PRE_FILTER_STATE_KEY, _PreFilterState, READING).update_with_pod(to_remove, pod, node_info, -1)
        return None

    def filter_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: slice) -> BoolArray:
        """`filter` for each row: the node has each topology key, and its domain's skew is within maxSkew."""
        s = read_state(state, PRE_FILTER_STATE_KEY, _PreFilterState, READING)
        mask = np.ones(rows.stop - rows.start, dtype=bool)
        for i, c in enumerate(s.constraints):
            codes = table.label_column(c.topology_key)[rows]
            matching = s.matching_by_code(i)[codes]
            self_match = 1 if c.selector.matches(pod.labels) else 0
            mask &= (codes != ABSENT) & (matching + self_match - s.min_match_num(i, c.min_domains) <= c.max_skew)
        return mask

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        s = read_state(state, PRE_FILTER_STATE_KEY, _PreFilterState, READING)
        if not s.constraints:
            return None
        labels = node_info.labels
        for i, c in enumerate(s.constraints):
            value = labels.get(c.topology_key)
            if value is None:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NODE_LABEL_NOT_MATCH)
            min_match = s.min_match_num(i, c.min_domains)
            self_match = 1 if c.selector.matches(pod.labels) else 0
            skew = s.tp_value_to_match_num[i].get(value, 0) + self_match - min_match
            if skew > c.max_skew:
                return Status(Code.UNSCHEDULABLE, ERR_REASON_CONSTRAINTS_NOT_MATCH)
        return None

    # PreScore / Score

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        snapshot = self._handle.shared_lister()
        positions = np.fromiter((snapshot.position[ni.name] for ni in nodes), dtype=np.int64, count=len(nodes))
        return self.pre_score_batch(state, pod, nodes, snapshot.table, positions)

    def pre_score_batch(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo], table: NodeTable, positions: IntArray
    ) -> Status | None:
        """PreScore with the scored nodes given as NodeTable rows."""
        if not nodes or not table.n:
            return None
        constraints = self._constraints(pod, "ScheduleAnyway")
        if not constraints:
            return Status(Code.SKIP)
        require_all = bool(pod.topology_spread_constraints) or not self.system_defaulted
        state.write(PRE_SCORE_STATE_KEY, pre_score_state(pod, constraints, positions, table, require_all))
        return None

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = read_state(state, PRE_SCORE_STATE_KEY, _PreScoreState, ERROR_READING)
        if node_info.name in s.ignored_nodes:
            return 0, None
        score = 0.0
        labels = node_info.labels
        for i, c in enumerate(s.constraints):
            value = labels.get(c.topology_key)
            if value is None:
                continue
            if c.topology_key == LABEL_HOSTNAME:
                cnt = count_pods_match_selector(node_info.pods, c.selector, pod.namespace)
            else:
                cnt = s.topology_value_to_pod_counts[i][value]
            score += score_for_count(cnt, c.max_skew, s.topology_normalizing_weight[i])
        return go_round(score), None

    def score_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, positions: IntArray) -> IntArray:
        """`score` for the rows at `positions`: per constraint, the matching pods of the row's domain (or of the
        row itself, for hostname), weighted, summed in constraint order and rounded as Go's math.Round."""
        s = read_state(state, PRE_SCORE_STATE_KEY, _PreScoreState, ERROR_READING)
        score = np.zeros(len(positions), dtype=np.float64)
        for i, c in enumerate(s.constraints):
            codes = table.label_column(c.topology_key)[positions]
            if c.topology_key == LABEL_HOSTNAME:
                cnt = _matching_column(pod, c.selector, table)[positions]
            else:
                counts = s.topology_value_to_pod_counts[i]
                per_code = [counts.get(v, 0) for v in table.label_values(c.topology_key)]
                cnt = np.array([*per_code, 0], dtype=np.int64)[codes]
            for_count = cnt * s.topology_normalizing_weight[i] + float(c.max_skew - 1)
            score += np.where(codes != ABSENT, for_count, 0.0)
        floor = np.floor(score)
        rounded = (floor + (score - floor >= 0.5)).astype(np.int64)  # scores are >= 0: halves go up, as Go
        if s.ignored_rows is not None:
            rounded[s.ignored_rows[positions]] = 0
        return rounded

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: NodeScoreList) -> Status | None:
        """Fewer matching pods score higher: MAX * (max + min - score) / max over the nodes not ignored."""
        s = read_state(state, PRE_SCORE_STATE_KEY, _PreScoreState, ERROR_READING)
        vals = scores.scores
        if not len(vals):
            return None
        ignored = (
            np.fromiter((n in s.ignored_nodes for n in scores.names), dtype=bool, count=len(vals))
            if s.ignored_nodes
            else np.zeros(len(vals), dtype=bool)
        )
        counted = vals[~ignored]
        min_score = int(counted.min()) if len(counted) else 2**63 - 1
        max_score = int(counted.max()) if len(counted) else 0
        if max_score == 0:
            vals[:] = MAX_NODE_SCORE
        else:
            vals[:] = MAX_NODE_SCORE * (max_score + min_score - vals) // max_score  # non-negative: floor = Go's
        vals[ignored] = 0
        return None


def new(args: PodTopologySpreadArgs, handle: Handle) -> PodTopologySpread:
    return PodTopologySpread(args, handle)


def match_num_per_domain_plain(
    pod: PodInfo, constraints: Sequence[Constraint], nodes: Sequence[NodeInfo]
) -> list[dict[str, int]]:
    """Per constraint, matching pods per topology value over the eligible nodes, in node order (the plain twin)."""
    out: list[dict[str, int]] = [{} for _ in constraints]
    for ni in nodes:
        if ni.node is None or not node_labels_match_spread_constraints(ni.labels, constraints):
            continue
        for i, c in enumerate(constraints):
            if not c.match_node_inclusion_policies(pod, ni):
                continue
            v = ni.labels[c.topology_key]
            counts = out[i]
            counts[v] = counts.get(v, 0) + count_pods_match_selector(ni.pods, c.selector, pod.namespace)
    return out


def domains_per_constraint(pod: PodInfo, constraints: Sequence[Constraint], table: NodeTable) -> list[Domains]:
    """Per constraint, the value codes of the eligible nodes' domains in the order the nodes first show them, and
    the matching pods in each: label and matching-pod columns kept by the cache, summed by domain.

    Where every node with the constraint's key is eligible (no other key missing, no inclusion policy
    leaving a node out), the sums are the ones the NodeTable keeps as pods come and go and the order is
    kept until a node changes: a cycle's cost is its domains', not its nodes'.
    """
    keys = {c.topology_key for c in constraints}
    has_all = _rows_with_every_key(table, keys)
    out: list[Domains] = []
    for c in constraints:
        if (has_all is None or len(keys) == 1) and _includes_every_row(pod, c, table):
            out.append(_kept_domains(pod, c, table))
            continue
        rows = _inclusion_mask(pod, c, table)
        if has_all is not None:
            rows &= has_all
        codes = table.label_column(c.topology_key)[rows]
        if not len(codes):
            out.append((codes, np.zeros(0, dtype=np.int64)))
            continue
        matching = _matching_column(pod, c.selector, table)
        out.append(domain_sums(codes, matching[rows], table.value_count(c.topology_key)))
    return out


def _kept_domains(pod: PodInfo, c: Constraint, table: NodeTable) -> Domains:
    """The domains of every row with c's key, in first-appearance order, and their matching pods as the
    NodeTable keeps them; where each node is its own domain, the matching-pod column as it is."""
    distinct, present = table.first_appearance(c.topology_key, _appearance_order)
    matching = _matching_column(pod, c.selector, table)
    if distinct:
        return present, matching.astype(np.int64)
    kept = table.domain_sums(_matching_key(pod, c.selector), c.topology_key)
    return present, kept.sums[present]


def _appearance_order(codes: npt.NDArray[np.int32]) -> npt.NDArray[np.int32]:
    """The codes of the rows that have the label, in the order the rows first show them."""
    codes = codes[codes != ABSENT]
    if not len(codes):
        return codes
    return domain_sums(codes, np.zeros(len(codes), dtype=np.int64), int(codes.max(initial=-1)) + 1)[0]


def _rows_with_every_key(table: NodeTable, keys: frozenset[str] | set[str]) -> BoolArray | None:
    """The rows having every label of `keys`, or None when that is every row: kept until a node changes."""

    def build() -> BoolArray | None:
        mask = np.ones(table.n, dtype=bool)
        for key in sorted(keys):
            mask &= table.label_column(key) != ABSENT
        return None if mask.all() else mask

    return table.node_memo((NAME, "rows with every key", frozenset(keys)), build)


def _includes_every_row(pod: PodInfo, c: Constraint, table: NodeTable) -> bool:
    """Whether c's inclusion policies can leave no node out: `_inclusion_mask` is then every row."""
    if c.node_affinity_policy == "Honor" and (pod.node_selector or pod.required_node_affinity is not None):
        return False
    if c.node_taints_policy == "Honor":
        return all(
            find_matching_untolerated_taint(t, pod.tolerations, DO_NOT_SCHEDULE) is None for t in table.taint_groups
        )
    return True


def domain_sums(codes: npt.NDArray[np.int32], matching: IntArray, values: int) -> Domains:
    """The distinct codes (each in [0, values)) in the order they first appear, and `matching` summed by code.

    Counting instead of np.unique's sort: at 10,000 nodes the sort was a tenth of a realistic run's
    cycles. Where no code repeats (a hostname's), the rows are the domains as they are.
    """
    if np.bincount(codes, minlength=values).max() <= 1:
        return codes, matching.astype(np.int64)
    first = np.full(values, len(codes), dtype=np.int64)
    np.minimum.at(first, codes, np.arange(len(codes), dtype=np.int64))
    present = np.flatnonzero(first < len(codes))
    present = present[np.argsort(first[present], kind="stable")]
    sums = np.bincount(codes, weights=matching, minlength=values).astype(np.int64)
    return present.astype(codes.dtype), sums[present]


def match_num_per_domain(pod: PodInfo, constraints: Sequence[Constraint], table: NodeTable) -> list[dict[str, int]]:
    """match_num_per_domain_plain over the NodeTable, as dicts.

    Values keep the order in which the nodes first show them, as the plain loop inserts them:
    the critical paths break ties by that order.
    """
    return [
        dict(zip(_values_of(table, c.topology_key, codes), sums.tolist(), strict=True))
        for c, (codes, sums) in zip(constraints, domains_per_constraint(pod, constraints, table), strict=True)
    ]


def _values_of(table: NodeTable, key: str, codes: npt.NDArray[np.signedinteger[Any]]) -> list[str]:
    values = table.label_values(key)
    return [values[code] for code in codes.tolist()]


def pre_score_state_plain(
    pod: PodInfo,
    constraints: list[Constraint],
    nodes: Sequence[NodeInfo],
    all_nodes: Sequence[NodeInfo],
    require_all: bool,
) -> _PreScoreState:
    """PreScore's state node by node, as upstream's initPreScoreState and its walk over all nodes (the plain twin).

    A node without a topology key counts under the value "", as Go's map lookup gives.
    """
    ignored: set[str] = set()
    counts: list[dict[str, int]] = [{} for _ in constraints]
    topo_size = [0] * len(constraints)
    for ni in nodes:
        if require_all and not node_labels_match_spread_constraints(ni.labels, constraints):
            ignored.add(ni.name)
            continue
        for i, c in enumerate(constraints):
            if c.topology_key == LABEL_HOSTNAME:
                continue
            v = ni.labels.get(c.topology_key, "")
            if v not in counts[i]:
                counts[i][v] = 0
                topo_size[i] += 1
    weights = []
    for i, c in enumerate(constraints):
        size = len(nodes) - len(ignored) if c.topology_key == LABEL_HOSTNAME else topo_size[i]
        weights.append(topology_normalizing_weight(size))
    for ni in all_nodes:
        if ni.node is None:
            continue
        if require_all and not node_labels_match_spread_constraints(ni.labels, constraints):
            continue
        for i, c in enumerate(constraints):
            if not c.match_node_inclusion_policies(pod, ni):
                continue
            v = ni.labels.get(c.topology_key, "")
            if v not in counts[i]:
                continue
            counts[i][v] += count_pods_match_selector(ni.pods, c.selector, pod.namespace)
    return _PreScoreState(constraints, ignored, counts, weights)


def pre_score_state(
    pod: PodInfo, constraints: list[Constraint], positions: IntArray, table: NodeTable, require_all: bool
) -> _PreScoreState:
    """pre_score_state_plain over the NodeTable: the scored nodes are rows at `positions`; the domains' matching
    pods are the sums the NodeTable keeps of the matching-pod columns (where no node is left out, as in
    domains_per_constraint) or sums of those columns, instead of a walk over every node."""
    has_all = _rows_with_every_key(table, {c.topology_key for c in constraints}) if require_all else None
    kept = positions
    ignored_rows: BoolArray | None = None
    ignored: set[str] = set()
    if has_all is not None:
        kept = positions[has_all[positions]]
        if len(kept) < len(positions):
            ignored_rows = ~has_all
            ignored = {table.names[p] for p in positions[~has_all[positions]].tolist()}
    counts: list[dict[str, int]] = []
    weights = []
    for c in constraints:
        if c.topology_key == LABEL_HOSTNAME:
            counts.append({})
            weights.append(topology_normalizing_weight(len(positions) - len(ignored)))
            continue
        values = table.label_values(c.topology_key)
        empty = table.value_code(c.topology_key, "")
        if empty < 0:
            empty = len(values)
            values = [*values, ""]
        kept_codes = table.label_column(c.topology_key)[kept]
        kept_codes = np.where(kept_codes == ABSENT, empty, kept_codes)
        registered = np.flatnonzero(np.bincount(kept_codes, minlength=len(values)))  # sorted, as np.unique
        weights.append(topology_normalizing_weight(len(registered)))
        matching = _matching_column(pod, c.selector, table)
        if has_all is None and _includes_every_row(pod, c, table):
            found = table.domain_sums(_matching_key(pod, c.selector), c.topology_key)
            sums = np.zeros(len(values), dtype=np.int64)
            sums[: len(found.sums)] = found.sums
            sums[empty] += found.absent
        else:
            rows = _inclusion_mask(pod, c, table)
            if has_all is not None:
                rows &= has_all
            codes, _ = _codes_absent_as_empty(table, c.topology_key)
            sums = np.bincount(codes[rows], weights=matching[rows], minlength=len(values)).astype(np.int64)
        counts.append({values[code]: int(sums[code]) for code in registered.tolist()})
    return _PreScoreState(constraints, ignored, counts, weights, ignored_rows)


def _codes_absent_as_empty(table: NodeTable, key: str) -> tuple[npt.NDArray[np.signedinteger[Any]], Sequence[str]]:
    """Value codes of `key` per row, a missing label read as the value "" (Go's map lookup), and the values."""
    codes = table.label_column(key)
    values = table.label_values(key)
    if not (codes == ABSENT).any():
        return codes, values
    empty = table.value_code(key, "")
    if empty < 0:
        empty = len(values)
        values = [*values, ""]
    return np.where(codes == ABSENT, empty, codes), values


def _matching_key(pod: PodInfo, selector: LabelSelector) -> tuple[str, LabelSelector, str]:
    """The NodeTable's name for the column of pods in the pod's namespace that `selector` matches."""
    return (names.POD_TOPOLOGY_SPREAD, selector, pod.namespace)


def _matching_column(pod: PodInfo, selector: LabelSelector, table: NodeTable) -> IntArray:
    """Per row, the pods in the pod's namespace that `selector` matches, kept by the NodeTable."""
    return table.derived_column(
        _matching_key(pod, selector),
        functools.partial(pod_matches_selector, selector, pod.namespace),
        selector,
    )


def _inclusion_mask(pod: PodInfo, c: Constraint, table: NodeTable) -> BoolArray:
    """Constraint.match_node_inclusion_policies for every row."""
    mask = np.ones(table.n, dtype=bool)
    if c.node_affinity_policy == "Honor" and (pod.node_selector or pod.required_node_affinity is not None):
        mask &= required_node_affinity_mask(pod, table)
    if c.node_taints_policy == "Honor":
        ok = np.fromiter(
            (find_matching_untolerated_taint(t, pod.tolerations, DO_NOT_SCHEDULE) is None for t in table.taint_groups),
            dtype=bool,
            count=len(table.taint_groups),
        )
        mask &= ok[table.taint_group]
    return mask
