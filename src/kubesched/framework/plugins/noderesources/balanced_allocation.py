"""NodeResourcesBalancedAllocation: favours nodes whose resource fractions the pod evens out.

Mirrors framework/plugins/noderesources/balanced_allocation.go (v1.36). The balance of a
node is (1 - std of its usage fractions) * 100 over plain requests, fractions capped at
1. Since v1.36 the score is the change the pod makes to it, 50 + (50 + after - before) / 2:
75 for a pod that leaves the balance as it was, towards 100 for one that evens the node
out, towards 50 for one that skews it. Up to v1.35 the score was the balance after the pod
alone (`Release.balanced_allocation_scores_change` picks). Best-effort pods skip scoring
(PreScore Skip, or 0 when Score runs without PreScore).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from kubesched.config import names
from kubesched.config.types import NodeResourcesBalancedAllocationArgs, ResourceSpec
from kubesched.framework.cycle_state import READING, CycleState, read_state
from kubesched.framework.interface import Handle, IntArray, PreScorePlugin, ScorePlugin, SignFragment
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.node_table import NodeTable
from kubesched.framework.plugins.noderesources import resource_allocation as ra
from kubesched.framework.plugins.noderesources.fit import Resolver, sign_requests
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo

NAME: Final = names.NODE_RESOURCES_BALANCED_ALLOCATION
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    pod_requests: list[int]

    def clone(self) -> _PreScoreState:
        return self


class BalancedAllocation(PreScorePlugin, ScorePlugin):
    NAME = NAME

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        return sign_requests(pod, self.resolver)

    def __init__(
        self, args: NodeResourcesBalancedAllocationArgs, scores_change: bool = True, resolver: Resolver | None = None
    ) -> None:
        self.resources: list[ResourceSpec] = list(args.resources)
        self.scores_change = scores_change  # v1.36's formula; v1.34 and v1.35 score the balance after the pod
        self.resolver = resolver  # which extended resources DRA serves: such pods are not signed

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Any) -> Status | None:
        reqs = ra.pod_request_list(pod, self.resources, use_requested=True)
        if not any(reqs):
            return Status(Code.SKIP)
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(reqs))
        return None

    def _pod_requests(self, state: CycleState, pod: PodInfo) -> list[int]:
        try:
            return read_state(state, PRE_SCORE_STATE_KEY, _PreScoreState, READING).pod_requests
        except RuntimeError:
            return ra.pod_request_list(pod, self.resources, use_requested=True)

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        reqs = self._pod_requests(state, pod)
        if not any(reqs):
            return 0, None
        requested, allocated, allocatable = ra.node_allocatable_request(
            node_info, self.resources, reqs, use_requested=True
        )
        if not self.scores_change:
            return ra.balanced_resource_score(requested, allocatable), None
        return ra.balanced_resource_scorer(requested, allocated, allocatable), None

    def score_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, positions: IntArray) -> IntArray:
        reqs = self._pod_requests(state, pod)
        if not any(reqs):
            return np.zeros(len(positions), dtype=np.int64)
        allocatable, allocated, requested = [], [], []
        for r, want in zip(self.resources, reqs, strict=True):
            a, used = ra.table_columns(table, positions, r.name, want, use_requested=True)
            allocatable.append(a)
            allocated.append(used)
            requested.append(used + want)
        with_pod = ra.balanced_resource_scores(requested, allocatable)
        if not self.scores_change:
            return np.asarray(with_pod, dtype=np.int64)
        without_pod = ra.balanced_resource_scores(allocated, allocatable)
        return np.asarray(ra.balance_change_score(with_pod, without_pod), dtype=np.int64)


def new(args: NodeResourcesBalancedAllocationArgs, handle: Handle) -> BalancedAllocation:
    manager = handle.dra_manager
    resolver = None if manager is None else manager.device_class_for
    return BalancedAllocation(args, handle.release.balanced_allocation_scores_change, resolver)
