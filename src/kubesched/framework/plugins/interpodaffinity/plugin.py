"""InterPodAffinity: mirrors framework/plugins/interpodaffinity/{plugin,filtering,scoring}.go.

Filter enforces the incoming pod's required (anti-)affinity and existing pods' required
anti-affinity (symmetry); Score sums preferred terms both ways plus existing pods'
required affinity weighted by hardPodAffinityWeight.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from kubesched.api.selectors import NOTHING
from kubesched.config.types import InterPodAffinityArgs
from kubesched.framework import events
from kubesched.framework.cycle_state import CycleState, read_state
from kubesched.framework.interface import (
    MAX_NODE_SCORE,
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
)
from kubesched.framework.node_info import NodeInfo, ParsedNode
from kubesched.framework.node_table import ABSENT, NodeTable
from kubesched.framework.plugins import names
from kubesched.framework.status import Code, Status
from kubesched.framework.types import AffinityTerm, PodInfo, WeightedAffinityTerm

NAME: Final = names.INTER_POD_AFFINITY
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME
ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH: Final = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY_RULES_NOT_MATCH: Final = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH: Final = "node(s) didn't match pod anti-affinity rules"

TopologyPair = tuple[str, str]


class TopologyToMatchedTermCount(dict[TopologyPair, int]):
    def update_pair(self, labels: Mapping[str, str], key: str, value: int) -> None:
        tv = labels.get(key)
        if tv is None:
            return
        pair = (key, tv)
        n = self.get(pair, 0) + value
        if n == 0:
            self.pop(pair, None)
        else:
            self[pair] = n

    def update_with_affinity_terms(
        self, terms: tuple[AffinityTerm, ...], pod: PodInfo, labels: Mapping[str, str], value: int
    ) -> None:
        if pod_matches_all_affinity_terms(terms, pod):
            for t in terms:
                self.update_pair(labels, t.topology_key, value)

    def update_with_anti_affinity_terms(
        self,
        terms: Iterable[AffinityTerm],
        pod: PodInfo,
        ns_labels: Mapping[str, str] | None,
        labels: Mapping[str, str],
        value: int,
    ) -> None:
        for t in terms:
            if t.matches(pod, ns_labels):
                self.update_pair(labels, t.topology_key, value)


def pod_matches_all_affinity_terms(terms: tuple[AffinityTerm, ...], pod: PodInfo) -> bool:
    if not terms:
        return False
    return all(t.matches(pod, None) for t in terms)


@dataclass(slots=True)
class _PreFilterState:
    existing_anti_affinity_counts: TopologyToMatchedTermCount
    affinity_counts: TopologyToMatchedTermCount
    anti_affinity_counts: TopologyToMatchedTermCount
    pod: PodInfo
    required_affinity_terms: tuple[AffinityTerm, ...]
    required_anti_affinity_terms: tuple[AffinityTerm, ...]
    namespace_labels: Mapping[str, str] | None

    def clone(self) -> _PreFilterState:
        return _PreFilterState(
            TopologyToMatchedTermCount(self.existing_anti_affinity_counts),
            TopologyToMatchedTermCount(self.affinity_counts),
            TopologyToMatchedTermCount(self.anti_affinity_counts),
            self.pod,
            self.required_affinity_terms,
            self.required_anti_affinity_terms,
            self.namespace_labels,
        )

    def update_with_pod(self, p: PodInfo, node_info: NodeInfo, multiplier: int) -> None:
        labels = node_info.labels
        self.existing_anti_affinity_counts.update_with_anti_affinity_terms(
            p.required_anti_affinity_terms, self.pod, self.namespace_labels, labels, multiplier
        )
        self.affinity_counts.update_with_affinity_terms(self.required_affinity_terms, p, labels, multiplier)
        self.anti_affinity_counts.update_with_anti_affinity_terms(
            self.required_anti_affinity_terms, p, None, labels, multiplier
        )


@dataclass(slots=True)
class _PreScoreState:
    topology_score: dict[str, dict[str, int]] = field(default_factory=dict)

    def clone(self) -> _PreScoreState:
        return self


class InterPodAffinity(
    PreFilterPlugin, PreFilterExtensions, FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions
):
    NAME = NAME

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            events.event(events.POD, events.ADD | events.UPDATE_POD_LABEL | events.DELETE, self._after_pod_change),
            # No preCheck with queueing hints on, so taint updates are not needed (1.34).
            events.event(events.NODE, events.ADD | events.UPDATE_NODE_LABEL, self._after_node),
        ]

    def _after_pod_change(self, pod: PodInfo, old: PodInfo | None, new: PodInfo | None) -> QueueingHint:
        """Upstream's rule: a scheduled pod now matches all the affinity terms, or no longer all the anti-affinity ones.

        A deleted pod counts only through the target pod's own anti-affinity, as upstream: the
        deletion of an existing pod whose anti-affinity kept this pod out does not requeue it.
        """
        if (new is not None and not new.node_name) or (old is not None and not old.node_name):
            return QueueingHint.QUEUE_SKIP
        affinity, anti = pod.required_affinity_terms, pod.required_anti_affinity_terms

        def all_match(terms: tuple[AffinityTerm, ...], p: PodInfo) -> bool:
            ns = self._namespace_labels(p.namespace)
            return bool(terms) and all(t.matches(p, ns) for t in terms)

        if old is not None and new is not None:
            if not all_match(affinity, old) and all_match(affinity, new):
                return QueueingHint.QUEUE
            if all_match(anti, old) and not all_match(anti, new):
                return QueueingHint.QUEUE
            return QueueingHint.QUEUE_SKIP
        if new is not None:
            return QueueingHint.QUEUE if all_match(affinity, new) else QueueingHint.QUEUE_SKIP
        assert old is not None
        return QueueingHint.QUEUE if all_match(anti, old) else QueueingHint.QUEUE_SKIP

    def _after_node(self, pod: PodInfo, old: ParsedNode | None, new: ParsedNode | None) -> QueueingHint:
        """A node brings a topology value the affinity needs, or changes one the anti-affinity counted."""
        if new is None:
            return QueueingHint.QUEUE_SKIP
        for t in pod.required_affinity_terms:
            value = new.labels.get(t.topology_key)
            if value is not None and (old is None or old.labels.get(t.topology_key) != value):
                return QueueingHint.QUEUE
        for t in pod.required_anti_affinity_terms:
            if old is None:
                if t.topology_key in new.labels:
                    return QueueingHint.QUEUE
                continue
            value = old.labels.get(t.topology_key)
            if value is not None and new.labels.get(t.topology_key) != value:
                return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def __init__(self, args: InterPodAffinityArgs, handle: Handle) -> None:
        self.hard_pod_affinity_weight = args.hardPodAffinityWeight or 0
        self.ignore_preferred_terms_of_existing_pods = args.ignorePreferredTermsOfExistingPods
        self._handle = handle

    def _namespace_labels(self, namespace: str) -> Mapping[str, str] | None:
        lister = self._handle.lister
        return lister.namespace_labels(namespace) if lister is not None else None

    def _merge_namespaces(self, term: AffinityTerm) -> AffinityTerm:
        """Unroll a non-empty namespaceSelector into namespaces, as upstream does for the incoming pod."""
        if term.namespace_selector.is_everything or term.namespace_selector.is_nothing:
            return term
        lister = self._handle.lister
        extra = lister.namespaces_matching(term.namespace_selector) if lister is not None else []
        return AffinityTerm(term.namespaces | frozenset(extra), term.selector, term.topology_key, NOTHING)

    # PreFilter / Filter

    def pre_filter(self, state: CycleState, pod: PodInfo, nodes: Any) -> tuple[PreFilterResult | None, Status | None]:
        snapshot = self._handle.shared_lister()
        affinity_terms = tuple(self._merge_namespaces(t) for t in pod.required_affinity_terms)
        anti_terms = tuple(self._merge_namespaces(t) for t in pod.required_anti_affinity_terms)
        ns_labels = self._namespace_labels(pod.namespace)
        existing = existing_anti_affinity_counts(pod, ns_labels, snapshot.have_pods_with_required_anti_affinity_list)
        affinity_counts, anti_counts = incoming_counts(affinity_terms, anti_terms, snapshot.table)
        if not existing and not affinity_terms and not anti_terms:
            return None, Status(Code.SKIP)
        state.write(
            PRE_FILTER_STATE_KEY,
            _PreFilterState(existing, affinity_counts, anti_counts, pod, affinity_terms, anti_terms, ns_labels),
        )
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions:
        return self

    def add_pod(self, state: CycleState, pod: PodInfo, to_add: PodInfo, node_info: NodeInfo) -> Status | None:
        read_state(state, PRE_FILTER_STATE_KEY, _PreFilterState).update_with_pod(to_add, node_info, 1)
        return None

    def remove_pod(self, state: CycleState, pod: PodInfo, to_remove: PodInfo, node_info: NodeInfo) -> Status | None:
        read_state(state, PRE_FILTER_STATE_KEY, _PreFilterState).update_with_pod(to_remove, node_info, -1)
        return None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        s = read_state(state, PRE_FILTER_STATE_KEY, _PreFilterState)
        labels = node_info.labels
        if not _satisfy_pod_affinity(s, labels):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH)
        if not _satisfy_pod_anti_affinity(s, labels):
            return Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
        if not _satisfy_existing_pods_anti_affinity(s, labels):
            return Status(Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
        return None

    # PreScore / Score

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        if not nodes:
            return None
        has_constraints = bool(pod.preferred_affinity_terms or pod.preferred_anti_affinity_terms)
        if self.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return Status(Code.SKIP)
        snapshot = self._handle.shared_lister()
        all_nodes = snapshot.node_info_list if has_constraints else snapshot.have_pods_with_affinity_list
        pref = tuple(
            WeightedAffinityTerm(self._merge_namespaces(w.term), w.weight) for w in pod.preferred_affinity_terms
        )
        pref_anti = tuple(
            WeightedAffinityTerm(self._merge_namespaces(w.term), w.weight) for w in pod.preferred_anti_affinity_terms
        )
        ns_labels = self._namespace_labels(pod.namespace)
        scores: dict[str, dict[str, int]] = {}

        def process_term(term: AffinityTerm, weight: int, target: PodInfo, nsl: Any, labels: Mapping[str, str]) -> None:
            if term.matches(target, nsl):
                tv = labels.get(term.topology_key)
                if tv is not None:
                    by_value = scores.setdefault(term.topology_key, {})
                    by_value[tv] = by_value.get(tv, 0) + weight

        for ni in all_nodes:
            labels = ni.labels
            if not labels:
                continue
            for existing in ni.pods if has_constraints else ni.pods_with_affinity:
                for w in pref:
                    process_term(w.term, w.weight, existing, None, labels)
                for w in pref_anti:
                    process_term(w.term, -w.weight, existing, None, labels)
                if self.hard_pod_affinity_weight > 0:
                    for t in existing.required_affinity_terms:
                        process_term(t, self.hard_pod_affinity_weight, pod, ns_labels, labels)
                if not self.ignore_preferred_terms_of_existing_pods:
                    for w in existing.preferred_affinity_terms:
                        process_term(w.term, w.weight, pod, ns_labels, labels)
                    for w in existing.preferred_anti_affinity_terms:
                        process_term(w.term, -w.weight, pod, ns_labels, labels)
        if not scores:
            return Status(Code.SKIP)
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(scores))
        return None

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = read_state(state, PRE_SCORE_STATE_KEY, _PreScoreState)
        labels = node_info.labels
        total = 0
        for key, by_value in s.topology_score.items():
            v = labels.get(key)
            if v is not None:
                total += by_value.get(v, 0)
        return total, None

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: NodeScoreList) -> Status | None:
        s = read_state(state, PRE_SCORE_STATE_KEY, _PreScoreState)
        if not s.topology_score or not len(scores.scores):
            return None
        vals = scores.scores
        lo, hi = int(vals.min()), int(vals.max())
        diff = hi - lo
        for i in range(len(vals)):
            vals[i] = int(MAX_NODE_SCORE * ((int(vals[i]) - lo) / diff)) if diff > 0 else 0
        return None


def _satisfy_existing_pods_anti_affinity(s: _PreFilterState, labels: Mapping[str, str]) -> bool:
    counts = s.existing_anti_affinity_counts
    if counts:
        for pair in labels.items():
            if counts.get(pair, 0) > 0:
                return False
    return True


def _satisfy_pod_anti_affinity(s: _PreFilterState, labels: Mapping[str, str]) -> bool:
    counts = s.anti_affinity_counts
    if counts:
        for t in s.required_anti_affinity_terms:
            v = labels.get(t.topology_key)
            if v is not None and counts.get((t.topology_key, v), 0) > 0:
                return False
    return True


def _satisfy_pod_affinity(s: _PreFilterState, labels: Mapping[str, str]) -> bool:
    pods_exist = True
    for t in s.required_affinity_terms:
        v = labels.get(t.topology_key)
        if v is None:
            return False
        if s.affinity_counts.get((t.topology_key, v), 0) <= 0:
            pods_exist = False
    if not pods_exist:
        # The first pod of a group with affinity to itself may go anywhere that has the topology labels.
        return not s.affinity_counts and pod_matches_all_affinity_terms(s.required_affinity_terms, s.pod)
    return True


def new(args: InterPodAffinityArgs, handle: Handle) -> InterPodAffinity:
    return InterPodAffinity(args, handle)


def existing_anti_affinity_counts(
    pod: PodInfo, ns_labels: Mapping[str, str] | None, nodes: Iterable[NodeInfo]
) -> TopologyToMatchedTermCount:
    """Topology pairs where existing pods' required anti-affinity terms select `pod`.

    Equal terms are one object (types.py interns them): each is matched once per cycle.
    """
    counts = TopologyToMatchedTermCount()
    matched: dict[int, bool] = {}
    for ni in nodes:
        labels = ni.labels
        for p in ni.pods_with_required_anti_affinity:
            for t in p.required_anti_affinity_terms:
                hit = matched.get(id(t))
                if hit is None:
                    hit = matched[id(t)] = t.matches(pod, ns_labels)
                if hit:
                    counts.update_pair(labels, t.topology_key, 1)
    return counts


def incoming_counts(
    affinity_terms: tuple[AffinityTerm, ...], anti_terms: tuple[AffinityTerm, ...], table: NodeTable
) -> tuple[TopologyToMatchedTermCount, TopologyToMatchedTermCount]:
    """Topology pairs holding pods the incoming pod's required (anti-)affinity terms select.

    Per node, the matching pods are a column the NodeTable keeps as the cache rewrites rows,
    so a cycle costs a few array operations instead of a walk over every pod.
    """
    affinity = TopologyToMatchedTermCount()
    anti = TopologyToMatchedTermCount()
    if affinity_terms:
        per_row = table.derived_column(
            ("InterPodAffinity/affinity", affinity_terms), functools.partial(_count_matching_all, affinity_terms)
        )
        for t in affinity_terms:
            _add_pair_counts(table, t.topology_key, per_row, affinity)
    for t in anti_terms:
        per_row = table.derived_column(("InterPodAffinity/anti", t), functools.partial(_count_matching, t))
        _add_pair_counts(table, t.topology_key, per_row, anti)
    return affinity, anti


def incoming_counts_plain(
    affinity_terms: tuple[AffinityTerm, ...], anti_terms: tuple[AffinityTerm, ...], nodes: Iterable[NodeInfo]
) -> tuple[TopologyToMatchedTermCount, TopologyToMatchedTermCount]:
    """incoming_counts, pod by pod (its plain twin)."""
    affinity = TopologyToMatchedTermCount()
    anti = TopologyToMatchedTermCount()
    if affinity_terms or anti_terms:
        for ni in nodes:
            labels = ni.labels
            for p in ni.pods:
                affinity.update_with_affinity_terms(affinity_terms, p, labels, 1)
                anti.update_with_anti_affinity_terms(anti_terms, p, None, labels, 1)
    return affinity, anti


def _count_matching_all(terms: tuple[AffinityTerm, ...], node_info: NodeInfo) -> int:
    return sum(1 for p in node_info.pods if pod_matches_all_affinity_terms(terms, p))


def _count_matching(term: AffinityTerm, node_info: NodeInfo) -> int:
    return sum(1 for p in node_info.pods if term.matches(p, None))


def _add_pair_counts(table: NodeTable, key: str, per_row: IntArray, into: TopologyToMatchedTermCount) -> None:
    codes = table.label_column(key)
    rows = (codes != ABSENT) & (per_row != 0)
    if not rows.any():
        return
    sums = np.bincount(codes[rows], weights=per_row[rows])
    values = table.label_values(key)
    for code in np.flatnonzero(sums).tolist():
        pair = (key, values[code])
        into[pair] = into.get(pair, 0) + int(sums[code])
