"""ServiceAffinity: keep a Service's pods on nodes that agree on some labels (legacy, removed in 1.23).

The Policy's ServiceAffinity predicate: once one pod of a Service runs on a node with
region=foo, the Service's other pods may only go to nodes with region=foo. And its
ServiceAntiAffinity priority: spread a Service's pods over the values of a label.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from kubesched.config import names
from kubesched.config.types import ServiceAffinityArgs
from kubesched.framework.cycle_state import CycleState, once, read_state
from kubesched.framework.interface import (
    MAX_NODE_SCORE,
    FilterPlugin,
    Handle,
    NodeScoreList,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    ScorePlugin,
)
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo

NAME: Final = names.SERVICE_AFFINITY
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
SCORE_STATE_KEY: Final = "Score" + NAME
ERR_REASON: Final = "node(s) didn't match service affinity"


def _selects(selector: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    """labels.SelectorFromSet semantics: an empty set selects everything."""
    return all(labels.get(k) == v for k, v in selector.items())


def pod_services(lister: Any, pod: PodInfo) -> list[Mapping[str, Any]]:
    """Services in the pod's namespace whose selector matches it (an empty selector matches all)."""
    if lister is None:
        return []
    return [
        s for s in lister.services(pod.namespace) if _selects((s.get("spec") or {}).get("selector") or {}, pod.labels)
    ]


@dataclass(slots=True)
class _PreFilterState:
    matching_pods: list[PodInfo] = field(default_factory=list)
    services: list[Mapping[str, Any]] = field(default_factory=list)

    def clone(self) -> _PreFilterState:
        return _PreFilterState(list(self.matching_pods), list(self.services))


def filter_out_pods(node_info: NodeInfo, pods: Iterable[PodInfo]) -> list[PodInfo]:
    """NodeInfo.FilterOutPods: drop pods said to be on this node that the (dry-run) node no longer holds."""
    held = {p.uid for p in node_info.pods}
    return [p for p in pods if p.node_name != node_info.name or p.uid in held]


class ServiceAffinity(PreFilterPlugin, PreFilterExtensions, FilterPlugin, ScorePlugin):
    NAME = NAME

    def __init__(self, args: ServiceAffinityArgs, handle: Handle) -> None:
        self.args = args
        self._handle = handle

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        matching = [
            p
            for ni in self._handle.shared_lister().node_info_list
            for p in ni.pods
            if p.namespace == pod.namespace and _selects(pod.labels, p.labels)
        ]
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(matching, pod_services(self._handle.lister, pod)))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return self

    def add_pod(self, state: CycleState, pod: PodInfo, to_add: PodInfo, node_info: NodeInfo) -> Status | None:
        s = read_state(state, PRE_FILTER_STATE_KEY, _PreFilterState)
        if to_add.namespace == pod.namespace and _selects(pod.labels, to_add.labels):
            s.matching_pods.append(to_add)
        return None

    def remove_pod(self, state: CycleState, pod: PodInfo, to_remove: PodInfo, node_info: NodeInfo) -> Status | None:
        s = read_state(state, PRE_FILTER_STATE_KEY, _PreFilterState)
        for i, p in enumerate(s.matching_pods):
            if p.name == to_remove.name and p.namespace == to_remove.namespace:
                del s.matching_pods[i]
                break
        return None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        """The node must carry the pod's nodeSelector values for the affinity labels, the rest
        taken from the node of a pod already running for the same Service."""
        labels = self.args.affinityLabels
        if not labels:
            return None
        if node_info.node is None:
            return Status(Code.ERROR, "node not found")
        s = read_state(state, PRE_FILTER_STATE_KEY, _PreFilterState)
        wanted = {k: pod.node_selector[k] for k in labels if k in pod.node_selector}
        if len(labels) > len(wanted) and s.services:
            placed = filter_out_pods(node_info, s.matching_pods)
            if placed:
                other = self._handle.shared_lister().get(placed[0].node_name)
                if other is None:
                    return Status(Code.ERROR, "node not found")
                for k in labels:
                    if k not in wanted and k in other.labels:
                        wanted[k] = other.labels[k]
        if _selects(wanted, node_info.labels):
            return None
        return Status(Code.UNSCHEDULABLE, ERR_REASON)

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        """Pods of the pod's first Service on the node; NormalizeScore turns this into spreading."""
        if node_info.node is None:
            return 0, Status(Code.ERROR, "node not found")
        selector = once(state, SCORE_STATE_KEY, lambda: self._first_service_selector(pod))
        if not node_info.pods or not selector:
            return 0, None
        return sum(
            1
            for p in node_info.pods
            if p.namespace == pod.namespace and not p.deleting and _selects(selector, p.labels)
        ), None

    def _first_service_selector(self, pod: PodInfo) -> Mapping[str, str]:
        services = pod_services(self._handle.lister, pod)
        return ((services[0].get("spec") or {}).get("selector") or {}) if services else {}

    def has_normalize(self) -> bool:
        return True

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: NodeScoreList) -> Status | None:
        """Per anti-affinity label: fewer Service pods under the node's label value scores higher."""
        prefs = self.args.antiAffinityLabelsPreference
        counts = [int(c) for c in scores.scores]
        total = sum(counts)
        result = [0.0] * len(counts)
        node_labels = []
        for name in scores.names:
            ni = self._handle.shared_lister().get(name)
            if ni is None:
                return Status(Code.ERROR, f'node "{name}" not found')
            node_labels.append(ni.labels)
        for label in prefs:
            per_value: dict[str, int] = {}
            for labels, c in zip(node_labels, counts, strict=True):
                if label in labels:
                    per_value[labels[label]] = per_value.get(labels[label], 0) + c
            for i, labels in enumerate(node_labels):
                if label not in labels:
                    continue
                f = float(MAX_NODE_SCORE)
                if total > 0:
                    f = MAX_NODE_SCORE * ((total - per_value[labels[label]]) / total)
                result[i] += f / len(prefs)
        for i, r in enumerate(result):
            scores.scores[i] = int(r)
        return None


def new(args: ServiceAffinityArgs | None, handle: Handle) -> ServiceAffinity:
    return ServiceAffinity(args if args is not None else ServiceAffinityArgs(), handle)
