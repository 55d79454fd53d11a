"""NodeAffinity: mirrors framework/plugins/nodeaffinity/node_affinity.go.

Required terms (nodeSelector AND requiredDuringScheduling, plus the profile's
addedAffinity) filter; preferred terms score by summed weight.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from kubesched.api.selectors import (
    NodeSelector,
    NodeSelectorTerm,
    parse_node_selector,
    parse_node_selector_term,
)
from kubesched.config import names
from kubesched.config.types import NodeAffinityArgs
from kubesched.framework import events, signers
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import (
    MAX_NODE_SCORE,
    BoolArray,
    ClusterEventWithHint,
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    IntArray,
    NodeScoreList,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueingHint,
    ScorePlugin,
    SignFragment,
)
from kubesched.framework.node_info import NodeInfo, ParsedNode
from kubesched.framework.node_table import NodeTable
from kubesched.framework.plugins.helper.node_selector import labels_mask, selector_mask, term_mask
from kubesched.framework.plugins.helper.normalize_score import default_normalize_score
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo

NAME: Final = names.NODE_AFFINITY
ERR_REASON_POD: Final = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED: Final = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT: Final = "pod affinity terms conflict"

PreferredTerms = tuple[tuple[int, NodeSelectorTerm], ...]


def required_node_affinity_matches(pod: PodInfo, node_info: NodeInfo) -> bool:
    """GetRequiredNodeAffinity(pod).Match(node): nodeSelector and required terms."""
    labels = node_info.labels
    for k, v in pod.node_selector.items():
        if labels.get(k) != v:
            return False
    if pod.required_node_affinity is not None:
        return pod.required_node_affinity.matches(labels, node_info.name)
    return True


def required_node_affinity_mask(pod: PodInfo, table: NodeTable) -> BoolArray:
    mask = labels_mask(table, pod.node_selector) if pod.node_selector else np.ones(table.n, dtype=bool)
    if pod.required_node_affinity is not None:
        mask &= selector_mask(table, pod.required_node_affinity)
    return mask


def _preferred_score(terms: PreferredTerms, node_info: NodeInfo) -> int:
    return sum(w for w, t in terms if w != 0 and t.matches(node_info.labels, node_info.name))


class NodeAffinity(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions):
    NAME = NAME

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        return [
            (signers.NODE_AFFINITY, signers.node_affinity(pod)),
            (signers.NODE_SELECTOR, signers.node_selector(pod)),
        ], None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # No preCheck with queueing hints on, so taint updates are not needed (1.34).
            events.event(events.NODE, events.ADD | events.UPDATE_NODE_LABEL, self._after_node)
        ]

    def _after_node(self, pod: PodInfo, old: ParsedNode | None, new: ParsedNode | None) -> QueueingHint:
        """Queue when the node now matches; for an update, only if the pod's own terms did not match before.

        As upstream, the old node is not checked against addedAffinity.
        """
        if new is None:
            return QueueingHint.QUEUE
        if self.added_node_selector is not None and not self.added_node_selector.matches(new.labels, new.name):
            return QueueingHint.QUEUE_SKIP
        if not required_node_affinity_matches(pod, NodeInfo(new)):
            return QueueingHint.QUEUE_SKIP
        if old is None:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP if required_node_affinity_matches(pod, NodeInfo(old)) else QueueingHint.QUEUE

    def __init__(self, args: NodeAffinityArgs | None) -> None:
        self.added_node_selector: NodeSelector | None = None
        self.added_pref_sched_terms: PreferredTerms = ()
        aff = args.addedAffinity if args is not None else None
        if aff:
            req = aff.get("requiredDuringSchedulingIgnoredDuringExecution")
            if req is not None:
                self.added_node_selector = parse_node_selector(req)
            self.added_pref_sched_terms = tuple(
                (int(p.get("weight") or 0), parse_node_selector_term(p.get("preference") or {}))
                for p in aff.get("preferredDuringSchedulingIgnoredDuringExecution") or ()
            )

    def pre_filter(self, state: CycleState, pod: PodInfo, nodes: Any) -> tuple[PreFilterResult | None, Status | None]:
        raw = (((pod.obj.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        no_node_affinity = raw is None
        if no_node_affinity and self.added_node_selector is None and not pod.node_selector:
            return None, Status(Code.SKIP)
        terms = (raw or {}).get("nodeSelectorTerms") or []
        if no_node_affinity or not terms:
            return None, None
        node_names: set[str] | None = None
        for t in terms:
            term_names: set[str] | None = None
            for r in t.get("matchFields") or ():
                if r.get("key") == "metadata.name" and r.get("operator") == "In":
                    s = {str(v) for v in r.get("values") or ()}
                    term_names = s if term_names is None else term_names & s
            if term_names is None:
                return None, None
            node_names = term_names if node_names is None else node_names | term_names
        if node_names is not None and not node_names:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)
        if node_names:
            return PreFilterResult(node_names), None
        return None, None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        if self.added_node_selector is not None and not self.added_node_selector.matches(
            node_info.labels, node_info.name
        ):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_ENFORCED)
        if not required_node_affinity_matches(pod, node_info):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD)
        return None

    def filter_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: slice) -> BoolArray:
        """The selectors are judged over the whole table (their columns are shared), then the window taken."""
        if not pod.node_selector and pod.required_node_affinity is None and self.added_node_selector is None:
            return np.ones(rows.stop - rows.start, dtype=bool)
        mask = required_node_affinity_mask(pod, table)
        if self.added_node_selector is not None:
            mask &= selector_mask(table, self.added_node_selector)
        return mask[rows]

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Any) -> Status | None:
        if not pod.preferred_node_affinity and not self.added_pref_sched_terms:
            return Status(Code.SKIP)
        return None

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        return _preferred_score(self.added_pref_sched_terms, node_info) + _preferred_score(
            pod.preferred_node_affinity, node_info
        ), None

    def score_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, positions: IntArray) -> IntArray:
        total = np.zeros(table.n, dtype=np.int64)
        for w, t in (*self.added_pref_sched_terms, *pod.preferred_node_affinity):
            if w != 0:
                total += w * term_mask(table, t)
        return total[positions]

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: NodeScoreList) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, False, scores.scores)
        return None


def new(args: NodeAffinityArgs | None, handle: Handle) -> NodeAffinity:
    return NodeAffinity(args)
