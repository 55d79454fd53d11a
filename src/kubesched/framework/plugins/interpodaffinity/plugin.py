"""InterPodAffinity: mirrors framework/plugins/interpodaffinity/{plugin,filtering,scoring}.go.

Filter enforces the incoming pod's required (anti-)affinity and existing pods' required
anti-affinity (symmetry); Score sums preferred terms both ways plus existing pods'
required affinity weighted by hardPodAffinityWeight.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from kubesched.api.selectors import NOTHING, LabelSelector
from kubesched.config import names
from kubesched.config.types import InterPodAffinityArgs
from kubesched.framework import events, signers
from kubesched.framework.cycle_state import ERROR_READING, CycleState, read_state
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
from kubesched.framework.node_table import (
    ABSENT,
    PREFERRED_AFFINITY,
    PREFERRED_ANTI_AFFINITY,
    REQUIRED_AFFINITY,
    REQUIRED_ANTI_AFFINITY,
    CodeSums,
    NodeTable,
    sum_by_code,
)
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


Codes = npt.NDArray[np.integer[Any]]  # value codes as a label column holds them (int32) or sums keep them (int64)


def _lookup(sums: CodeSums, codes: Codes) -> IntArray:
    """The counts at `codes` (0 where a code has none, and at ABSENT): a binary search per code."""
    known, counts = sums
    out = np.zeros(len(codes), dtype=np.int64)
    if not len(known):
        return out
    at = np.searchsorted(known, codes)
    np.minimum(at, len(known) - 1, out=at)
    hit = known[at] == codes
    out[hit] = counts[at[hit]]
    return out


def _lookup_plain(sums: CodeSums, codes: Codes, value_count: int) -> IntArray:
    """_lookup through a dense array over every code of the key (its plain twin)."""
    dense = np.zeros(value_count + 1, dtype=np.int64)  # the trailing 0 is what ABSENT, -1, indexes
    dense[sums[0]] = sums[1]
    return dense[codes]


class DomainCounts:
    """Counts per topology pair, held per topology key as the NodeTable's value codes that have one (sorted)
    with their counts.

    Sparse, because a key such as the hostname has a value per node: reading the counts costs the
    rows a cycle examines, building them the pods that matched. The per-node paths read `pairs`,
    built on first use; AddPod/RemovePod edit the pairs, from which the arrays are rebuilt when asked for.
    """

    __slots__ = ("_table", "_by_key", "_pairs")

    def __init__(self, table: NodeTable, by_key: dict[str, CodeSums]) -> None:
        self._table = table
        self._by_key: dict[str, CodeSums] | None = by_key
        self._pairs: TopologyToMatchedTermCount | None = None

    @property
    def pairs(self) -> TopologyToMatchedTermCount:
        if self._pairs is None:
            pairs = self._pairs = TopologyToMatchedTermCount()
            table = self._table
            for key, (codes, counts) in (self._by_key or {}).items():
                for code, n in zip(codes.tolist(), counts.tolist(), strict=True):
                    if n:
                        pairs[(key, table.label_values(key)[code])] = n
        return self._pairs

    def edit(self) -> TopologyToMatchedTermCount:
        """The pairs, to be changed in place; the arrays are dropped."""
        pairs = self.pairs
        self._by_key = None
        return pairs

    def keys(self) -> set[str]:
        return set(self._by_key) if self._by_key is not None else {k for k, _ in self.pairs}

    def sums(self, key: str) -> CodeSums:
        """The codes of `key` with a count, and the counts."""
        if self._by_key is None:
            self._by_key = self._from_pairs()
        return self._by_key.get(key) or _NO_SUMS

    def at(self, key: str, codes: Codes) -> IntArray:
        """The counts of `key`'s domains at `codes` (a slice of its label column)."""
        return _lookup(self.sums(key), codes)

    def _from_pairs(self) -> dict[str, CodeSums]:
        """The arrays again from the pairs, as AddPod/RemovePod left them: one entry per pair, not per value."""
        grouped: dict[str, dict[int, int]] = {}
        table = self._table
        for (key, value), n in (self._pairs or {}).items():
            code = table.value_code(key, value)
            if code >= 0:
                grouped.setdefault(key, {})[code] = n
        return {
            key: (np.array(sorted(by_code), dtype=np.int64), np.array([by_code[c] for c in sorted(by_code)], np.int64))
            for key, by_code in grouped.items()
        }

    def __bool__(self) -> bool:
        if self._by_key is not None:
            return any(counts.any() for _, counts in self._by_key.values())
        return bool(self._pairs)

    def clone(self) -> DomainCounts:
        c = DomainCounts(self._table, {})
        c._by_key = self._by_key  # never changed in place
        c._pairs = TopologyToMatchedTermCount(self._pairs) if self._pairs is not None else None
        return c


_NO_SUMS: Final[CodeSums] = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))


def pod_matches_all_affinity_terms(terms: tuple[AffinityTerm, ...], pod: PodInfo) -> bool:
    if not terms:
        return False
    return all(t.matches(pod, None) for t in terms)


@dataclass(slots=True)
class _PreFilterState:
    existing_anti_affinity_counts: DomainCounts
    affinity_counts: DomainCounts
    anti_affinity_counts: DomainCounts
    pod: PodInfo
    required_affinity_terms: tuple[AffinityTerm, ...]
    required_anti_affinity_terms: tuple[AffinityTerm, ...]
    namespace_labels: Mapping[str, str] | None

    def clone(self) -> _PreFilterState:
        return _PreFilterState(
            self.existing_anti_affinity_counts.clone(),
            self.affinity_counts.clone(),
            self.anti_affinity_counts.clone(),
            self.pod,
            self.required_affinity_terms,
            self.required_anti_affinity_terms,
            self.namespace_labels,
        )

    def update_with_pod(self, p: PodInfo, node_info: NodeInfo, multiplier: int) -> None:
        labels = node_info.labels
        self.existing_anti_affinity_counts.edit().update_with_anti_affinity_terms(
            p.required_anti_affinity_terms, self.pod, self.namespace_labels, labels, multiplier
        )
        self.affinity_counts.edit().update_with_affinity_terms(self.required_affinity_terms, p, labels, multiplier)
        self.anti_affinity_counts.edit().update_with_anti_affinity_terms(
            self.required_anti_affinity_terms, p, None, labels, multiplier
        )


@dataclass(slots=True)
class _PreScoreState:
    topology_score: DomainCounts

    def clone(self) -> _PreScoreState:
        return self


class InterPodAffinity(
    PreFilterPlugin, PreFilterExtensions, FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions
):
    NAME = NAME

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """A pod with (anti-)affinity is never batched; others sign with their labels, which existing pods'
        terms may match, unless those terms are ignored for pods without terms of their own."""
        affinity = (pod.obj.get("spec") or {}).get("affinity") or {}
        if affinity.get("podAffinity") is not None or affinity.get("podAntiAffinity") is not None:
            return [], Status(Code.UNSCHEDULABLE, "pods with InterPodAffinity are not signable")
        if self.ignore_preferred_terms_of_existing_pods:
            return [], None
        return [(signers.LABELS, signers.labels(pod))], None

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
        existing = existing_anti_affinity_counts(pod, ns_labels, snapshot.table)
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
        read_state(state, PRE_FILTER_STATE_KEY, _PreFilterState, ERROR_READING).update_with_pod(to_add, node_info, 1)
        return None

    def remove_pod(self, state: CycleState, pod: PodInfo, to_remove: PodInfo, node_info: NodeInfo) -> Status | None:
        read_state(state, PRE_FILTER_STATE_KEY, _PreFilterState, ERROR_READING).update_with_pod(
            to_remove, node_info, -1
        )
        return None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        s = read_state(state, PRE_FILTER_STATE_KEY, _PreFilterState, ERROR_READING)
        labels = node_info.labels
        if not _satisfy_pod_affinity(s, labels):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH)
        if not _satisfy_pod_anti_affinity(s, labels):
            return Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
        if not _satisfy_existing_pods_anti_affinity(s, labels):
            return Status(Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
        return None

    def filter_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: slice) -> BoolArray:
        """`filter` for each row: the affinity terms' domains hold matching pods, no anti-affinity domain does."""
        s = read_state(state, PRE_FILTER_STATE_KEY, _PreFilterState, ERROR_READING)
        count = rows.stop - rows.start
        mask = np.ones(count, dtype=bool)
        if s.required_affinity_terms:
            has_keys = np.ones(count, dtype=bool)
            pods_exist = np.ones(count, dtype=bool)
            for t in s.required_affinity_terms:
                codes = table.label_column(t.topology_key)[rows]
                has_keys &= codes != ABSENT
                pods_exist &= s.affinity_counts.at(t.topology_key, codes) > 0
            if not s.affinity_counts and pod_matches_all_affinity_terms(s.required_affinity_terms, s.pod):
                pods_exist[:] = True
            mask &= has_keys & pods_exist
        for t in s.required_anti_affinity_terms:
            mask &= s.anti_affinity_counts.at(t.topology_key, table.label_column(t.topology_key)[rows]) <= 0
        existing = s.existing_anti_affinity_counts
        for key in existing.keys():
            mask &= existing.at(key, table.label_column(key)[rows]) <= 0
        return mask

    # PreScore / Score

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        if not nodes:
            return None
        has_constraints = bool(pod.preferred_affinity_terms or pod.preferred_anti_affinity_terms)
        if self.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return Status(Code.SKIP)
        pref = tuple(
            WeightedAffinityTerm(self._merge_namespaces(w.term), w.weight) for w in pod.preferred_affinity_terms
        )
        pref_anti = tuple(
            WeightedAffinityTerm(self._merge_namespaces(w.term), w.weight) for w in pod.preferred_anti_affinity_terms
        )
        scores = topology_scores(
            pod,
            pref,
            pref_anti,
            self._namespace_labels(pod.namespace),
            self._handle.shared_lister().table,
            self.hard_pod_affinity_weight,
        )
        if not scores.keys():
            return Status(Code.SKIP)
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(scores))
        return None

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = read_state(state, PRE_SCORE_STATE_KEY, _PreScoreState)
        labels = node_info.labels
        pairs = s.topology_score.pairs
        total = 0
        for key in s.topology_score.keys():
            v = labels.get(key)
            if v is not None:
                total += pairs.get((key, v), 0)
        return total, None

    def score_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, positions: IntArray) -> IntArray:
        """`score` for the rows at `positions`: each topology key's domain score, summed."""
        s = read_state(state, PRE_SCORE_STATE_KEY, _PreScoreState)
        total = np.zeros(len(positions), dtype=np.int64)
        scores = s.topology_score
        for key in scores.keys():
            total += scores.at(key, table.label_column(key)[positions])
        return total

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: NodeScoreList) -> Status | None:
        """(score - min) / (max - min), scaled to MAX_NODE_SCORE and truncated, as float64 in upstream."""
        s = read_state(state, PRE_SCORE_STATE_KEY, _PreScoreState)
        vals = scores.scores
        if not s.topology_score.keys() or not len(vals):
            return None
        lo, hi = int(vals.min()), int(vals.max())
        if hi == lo:
            vals[:] = 0
        else:
            vals[:] = (MAX_NODE_SCORE * ((vals - lo) / (hi - lo))).astype(np.int64)
        return None


def _satisfy_existing_pods_anti_affinity(s: _PreFilterState, labels: Mapping[str, str]) -> bool:
    counts = s.existing_anti_affinity_counts.pairs
    if counts:
        for pair in labels.items():
            if counts.get(pair, 0) > 0:
                return False
    return True


def _satisfy_pod_anti_affinity(s: _PreFilterState, labels: Mapping[str, str]) -> bool:
    counts = s.anti_affinity_counts.pairs
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
        if s.affinity_counts.pairs.get((t.topology_key, v), 0) <= 0:
            pods_exist = False
    if not pods_exist:
        # The first pod of a group with affinity to itself may go anywhere that has the topology labels.
        return not s.affinity_counts and pod_matches_all_affinity_terms(s.required_affinity_terms, s.pod)
    return True


def new(args: InterPodAffinityArgs, handle: Handle) -> InterPodAffinity:
    return InterPodAffinity(args, handle)


def existing_anti_affinity_counts(pod: PodInfo, ns_labels: Mapping[str, str] | None, table: NodeTable) -> DomainCounts:
    """Topology pairs where existing pods' required anti-affinity terms select `pod`.

    The NodeTable indexes the distinct terms with the rows holding them, so each is matched
    once and counted by domain with array operations.
    """
    parts: _Parts = {}
    for entry in table.existing_terms.selecting_namespace(REQUIRED_ANTI_AFFINITY, pod.namespace):
        if entry.term.matches(pod, ns_labels):
            _add_domain_sums(table, entry.term.topology_key, *entry.row_counts(), 1, parts)
    return DomainCounts(table, _collapse(parts))


def existing_anti_affinity_counts_plain(
    pod: PodInfo, ns_labels: Mapping[str, str] | None, nodes: Iterable[NodeInfo]
) -> TopologyToMatchedTermCount:
    """existing_anti_affinity_counts, pod by pod over the nodes with such pods (its plain twin)."""
    counts = TopologyToMatchedTermCount()
    for ni in nodes:
        labels = ni.labels
        for p in ni.pods_with_required_anti_affinity:
            counts.update_with_anti_affinity_terms(p.required_anti_affinity_terms, pod, ns_labels, labels, 1)
    return counts


def incoming_counts(
    affinity_terms: tuple[AffinityTerm, ...], anti_terms: tuple[AffinityTerm, ...], table: NodeTable
) -> tuple[DomainCounts, DomainCounts]:
    """Topology pairs holding pods the incoming pod's required (anti-)affinity terms select.

    Per node, the matching pods are a column the NodeTable keeps as the cache rewrites rows,
    so a cycle costs a few array operations instead of a walk over every pod.
    """
    affinity: _Parts = {}
    anti: _Parts = {}
    if affinity_terms:
        column = ("InterPodAffinity/affinity", affinity_terms)
        matches = functools.partial(pod_matches_all_affinity_terms, affinity_terms)
        for t in affinity_terms:
            _add_column_sums(table, column, matches, affinity_terms[0].selector, t.topology_key, 1, affinity)
    for t in anti_terms:
        _add_matching_sums(table, t, 1, anti)
    return DomainCounts(table, _collapse(affinity)), DomainCounts(table, _collapse(anti))


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


def _term_matches(term: AffinityTerm, pod: PodInfo) -> bool:
    return term.matches(pod, None)


def _add_matching_sums(table: NodeTable, term: AffinityTerm, weight: int, into: _Parts) -> None:
    """Queue weight * the pods `term` selects (namespaces already merged) by domain of its topology key."""
    column = ("InterPodAffinity/match", term)
    _add_column_sums(
        table, column, functools.partial(_term_matches, term), term.selector, term.topology_key, weight, into
    )


def _add_column_sums(
    table: NodeTable,
    column: Hashable,
    matches: Callable[[PodInfo], bool],
    selector: LabelSelector | None,
    key: str,
    weight: int,
    into: _Parts,
) -> None:
    """Queue weight * a NodeTable derived column's sums by domain of `key` (kept by the NodeTable between pods).

    into[key] appears once some row with the key holds a matching pod, as in _add_domain_sums.
    """
    codes, counts = table.derived_domain_sums(column, matches, selector, key)
    if len(codes):
        into.setdefault(key, []).append((codes, counts * weight if weight != 1 else counts))


_Parts = dict[str, list[CodeSums]]  # per key, weighted sums by value code still to be added up


def _add_domain_sums(table: NodeTable, key: str, rows: IntArray, per_row: IntArray, weight: int, into: _Parts) -> None:
    """Queue weight * per_row at the value codes of `key` on `rows`, for _collapse to sum by code.

    into[key] appears once some counted row (per_row > 0) has the key, even where the weighted
    sums cancel out: upstream's score map gains the key on the first match.
    """
    codes = table.label_column(key)[rows]
    hit = (codes != ABSENT) & (per_row > 0)
    if not hit.any():
        return
    into.setdefault(key, []).append(sum_by_code(codes[hit].astype(np.int64), per_row[hit] * weight))


def _collapse(parts: _Parts) -> dict[str, CodeSums]:
    """Each key's queued sums added up by value code, codes ascending (integer sums: no float round trip)."""
    out: dict[str, CodeSums] = {}
    for key, chunks in parts.items():
        if len(chunks) == 1:
            out[key] = chunks[0]
        else:
            out[key] = sum_by_code(np.concatenate([c for c, _ in chunks]), np.concatenate([n for _, n in chunks]))
    return out


def topology_scores(
    pod: PodInfo,
    pref: tuple[WeightedAffinityTerm, ...],
    pref_anti: tuple[WeightedAffinityTerm, ...],
    ns_labels: Mapping[str, str] | None,
    table: NodeTable,
    hard_weight: int,
) -> DomainCounts:
    """PreScore's topology scores: the incoming pod's preferred terms over existing pods, and existing pods'
    terms over the incoming pod (symmetry), weighted and summed by domain.

    The first half reads per-row counts of matching pods the NodeTable keeps; the second half
    matches each distinct existing term once (the NodeTable's index). A key is present once a
    term matched a pod on a node with that key, as in the pod walk (topology_scores_plain).
    """
    by_key: _Parts = {}
    for sign, terms in ((1, pref), (-1, pref_anti)):
        for w in terms:
            _add_matching_sums(table, w.term, sign * w.weight, by_key)
    # Existing pods' preferred terms count even with ignorePreferredTermsOfExistingPods: that flag only
    # skips PreScore for a pod without preferred terms of its own.
    kinds: list[tuple[int, int]] = [(PREFERRED_AFFINITY, 1), (PREFERRED_ANTI_AFFINITY, -1)]
    if hard_weight > 0:
        kinds.insert(0, (REQUIRED_AFFINITY, 1))
    for kind, sign in kinds:
        for entry in table.existing_terms.selecting_namespace(kind, pod.namespace):
            if entry.term.matches(pod, ns_labels):
                weight = hard_weight if kind == REQUIRED_AFFINITY else entry.weight
                _add_domain_sums(table, entry.term.topology_key, *entry.row_counts(), sign * weight, by_key)
    return DomainCounts(table, _collapse(by_key))


def topology_scores_plain(
    pod: PodInfo,
    pref: tuple[WeightedAffinityTerm, ...],
    pref_anti: tuple[WeightedAffinityTerm, ...],
    ns_labels: Mapping[str, str] | None,
    nodes: Sequence[NodeInfo],
    hard_weight: int,
) -> dict[str, dict[str, int]]:
    """topology_scores, pod by pod over every node as upstream's PreScore walks them (its plain twin)."""
    scores: dict[str, dict[str, int]] = {}

    def process_term(term: AffinityTerm, weight: int, target: PodInfo, nsl: Any, labels: Mapping[str, str]) -> None:
        if term.matches(target, nsl):
            tv = labels.get(term.topology_key)
            if tv is not None:
                by_value = scores.setdefault(term.topology_key, {})
                by_value[tv] = by_value.get(tv, 0) + weight

    for ni in nodes:
        labels = ni.labels
        for existing in ni.pods if pref or pref_anti else ni.pods_with_affinity:
            for w in pref:
                process_term(w.term, w.weight, existing, None, labels)
            for w in pref_anti:
                process_term(w.term, -w.weight, existing, None, labels)
            if hard_weight > 0:
                for t in existing.required_affinity_terms:
                    process_term(t, hard_weight, pod, ns_labels, labels)
            for w in existing.preferred_affinity_terms:
                process_term(w.term, w.weight, pod, ns_labels, labels)
            for w in existing.preferred_anti_affinity_terms:
                process_term(w.term, -w.weight, pod, ns_labels, labels)
    return scores
