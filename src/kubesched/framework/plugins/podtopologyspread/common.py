"""Constraint selection and counting shared by PodTopologySpread's filter and score (common.go)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kubesched.api.selectors import LabelSelector
from kubesched.api.taints import NO_EXECUTE, NO_SCHEDULE, find_matching_untolerated_taint
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.plugins.nodeaffinity.node_affinity import required_node_affinity_matches
from kubesched.framework.types import PodInfo, TopologySpreadConstraint

DO_NOT_SCHEDULE = frozenset([NO_SCHEDULE, NO_EXECUTE])


@dataclass(frozen=True, slots=True)
class Constraint:
    max_skew: int
    topology_key: str
    selector: LabelSelector
    min_domains: int
    node_affinity_policy: str
    node_taints_policy: str

    def match_node_inclusion_policies(self, pod: PodInfo, node_info: NodeInfo) -> bool:
        if self.node_affinity_policy == "Honor" and not required_node_affinity_matches(pod, node_info):
            return False
        if self.node_taints_policy == "Honor":
            taints = node_info.node.taints if node_info.node is not None else ()
            if find_matching_untolerated_taint(taints, pod.tolerations, DO_NOT_SCHEDULE) is not None:
                return False
        return True


def filter_constraints(constraints: Iterable[TopologySpreadConstraint], action: str) -> list[Constraint]:
    return [
        Constraint(c.max_skew, c.topology_key, c.selector, c.min_domains, c.node_affinity_policy, c.node_taints_policy)
        for c in constraints
        if c.when_unsatisfiable == action
    ]


def node_labels_match_spread_constraints(labels: Mapping[str, str], constraints: Iterable[Constraint]) -> bool:
    return all(c.topology_key in labels for c in constraints)


def pod_matches_selector(selector: LabelSelector, namespace: str, pod: PodInfo) -> bool:
    """Whether count_pods_match_selector counts `pod`: the NodeTable keeps per-node counts by this test."""
    return (
        not selector.is_everything and not pod.deleting and pod.namespace == namespace and selector.matches(pod.labels)
    )


def count_pods_match_selector(pods: Iterable[PodInfo], selector: LabelSelector, namespace: str) -> int:
    """Matching pods in `namespace`, terminating pods left out (#87621); empty selectors count nothing."""
    if selector.is_everything:
        return 0
    n = 0
    for p in pods:
        if p.deleting or p.namespace != namespace:
            continue
        if selector.matches(p.labels):
            n += 1
    return n
