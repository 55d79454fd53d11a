"""NodeResourcesBalancedAllocation: favours nodes whose resource fractions stay even.

Mirrors framework/plugins/noderesources/balanced_allocation.go (v1.34): plain requests,
fractions capped at 1, score = (1 - std) * 100; best-effort pods skip scoring.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from kubesched.config.types import NodeResourcesBalancedAllocationArgs, ResourceSpec
from kubesched.framework.cycle_state import CycleState, read_state
from kubesched.framework.interface import MAX_NODE_SCORE, Handle, IntArray, PreScorePlugin, ScorePlugin
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.node_table import NodeTable
from kubesched.framework.plugins import names
from kubesched.framework.plugins.noderesources import resource_allocation as ra
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

    def __init__(self, args: NodeResourcesBalancedAllocationArgs) -> None:
        self.resources: list[ResourceSpec] = list(args.resources)

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Any) -> Status | None:
        reqs = ra.pod_request_list(pod, self.resources, use_requested=True)
        if not any(reqs):
            return Status(Code.SKIP)
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(reqs))
        return None

    def _pod_requests(self, state: CycleState, pod: PodInfo) -> list[int]:
        try:
            return read_state(state, PRE_SCORE_STATE_KEY, _PreScoreState).pod_requests
        except RuntimeError:
            return ra.pod_request_list(pod, self.resources, use_requested=True)

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        reqs = self._pod_requests(state, pod)
        requested, allocatable = ra.requested_and_allocatable(node_info, self.resources, reqs, use_requested=True)
        return ra.balanced_resource_scorer(requested, allocatable), None

    def score_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, positions: IntArray) -> IntArray:
        reqs = self._pod_requests(state, pod)
        cols = [
            ra.table_columns(table, positions, r.name, w, use_requested=True)
            for r, w in zip(self.resources, reqs, strict=True)
        ]
        valid = [a > 0 for a, _ in cols]
        if len(cols) == 2 and valid[0].all() and valid[1].all():
            f0 = np.minimum(cols[0][1] / cols[0][0], 1.0)
            f1 = np.minimum(cols[1][1] / cols[1][0], 1.0)
            std = np.abs((f0 - f1) / 2)
            return ((1 - std) * MAX_NODE_SCORE).astype(np.int64)
        # Nodes differ in which resources count: score them one by one, exactly.
        return np.fromiter(
            (
                ra.balanced_resource_scorer([int(q[i]) if a[i] else 0 for a, q in cols], [int(a[i]) for a, _ in cols])
                for i in range(len(positions))
            ),
            dtype=np.int64,
            count=len(positions),
        )


def new(args: NodeResourcesBalancedAllocationArgs, handle: Handle) -> BalancedAllocation:
    return BalancedAllocation(args)
