"""NodeResourcesLeastAllocated, NodeResourcesMostAllocated and RequestedToCapacityRatio (legacy, removed in 1.23).

Before 1.23 each scoring strategy was a Score plugin of its own, so a Policy could weigh
LeastRequestedPriority and MostRequestedPriority side by side. These plugins run one
NodeResourcesFit strategy each, with the same per-node and vectorised scorers.
"""

from __future__ import annotations

from collections.abc import Sequence

from kubesched.config import names
from kubesched.config.defaults import default_resources
from kubesched.config.types import (
    NodeResourcesLeastAllocatedArgs,
    NodeResourcesMostAllocatedArgs,
    RequestedToCapacityRatioArgs,
    ResourceSpec,
    UtilizationShapePoint,
)
from kubesched.framework.cycle_state import CycleState, once
from kubesched.framework.interface import Handle, IntArray, ScorePlugin
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.node_table import NodeTable
from kubesched.framework.plugins.noderesources import resource_allocation as ra
from kubesched.framework.plugins.noderesources.fit import strategy_scores
from kubesched.framework.status import Status
from kubesched.framework.types import PodInfo


class AllocatedScore(ScorePlugin):
    """One scoring strategy as a Score plugin named after it."""

    def __init__(
        self, name: str, strategy: str, resources: Sequence[ResourceSpec], shape: Sequence[UtilizationShapePoint] = ()
    ) -> None:
        self.NAME = name
        self.strategy = strategy
        self.resources = list(resources) or default_resources()
        self.shape = list(shape)
        self.scorer = ra.strategy_scorer(strategy, self.resources, self.shape)
        self._state_key = "Score" + name

    def _requests(self, state: CycleState, pod: PodInfo) -> list[int]:
        """The pod's requests, once per cycle rather than once per node (these plugins have no PreScore)."""
        return once(state, self._state_key, lambda: ra.pod_request_list(pod, self.resources, use_requested=False))

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        reqs = self._requests(state, pod)
        requested, _, allocatable = ra.node_allocatable_request(node_info, self.resources, reqs, use_requested=False)
        return self.scorer(requested, allocatable), None

    def score_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, positions: IntArray) -> IntArray:
        return strategy_scores(self.strategy, self.resources, self.shape, self._requests(state, pod), table, positions)


def new_least_allocated(args: NodeResourcesLeastAllocatedArgs | None, handle: Handle) -> AllocatedScore:
    resources = args.resources if args is not None else []
    return AllocatedScore(names.NODE_RESOURCES_LEAST_ALLOCATED, ra.LEAST_ALLOCATED, resources)


def new_most_allocated(args: NodeResourcesMostAllocatedArgs | None, handle: Handle) -> AllocatedScore:
    resources = args.resources if args is not None else []
    return AllocatedScore(names.NODE_RESOURCES_MOST_ALLOCATED, ra.MOST_ALLOCATED, resources)


def new_requested_to_capacity_ratio(args: RequestedToCapacityRatioArgs | None, handle: Handle) -> AllocatedScore:
    if args is None or not args.shape:
        raise ValueError("RequestedToCapacityRatio needs args with a shape")
    return AllocatedScore(names.REQUESTED_TO_CAPACITY_RATIO, ra.REQUESTED_TO_CAPACITY_RATIO, args.resources, args.shape)
