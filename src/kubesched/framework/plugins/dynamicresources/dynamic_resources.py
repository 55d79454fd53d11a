"""DynamicResources (dynamicresources/dynamicresources.go), for pods that reference no ResourceClaim.

Upstream runs this plugin in every default v1.36 profile, and it is observable even
for pods without claims: it scores every node 0 (weight 2) and its PostFilter adds
"no new claims to deallocate" to every FitError. This package gives exactly that.
Allocating devices for pods that do reference claims is not built yet: their claims
are ignored (PreFilter skips), and `pods_with_claims` lets the simulator say so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from kubesched.framework import events
from kubesched.framework.cycle_state import CycleState, StateNotFound
from kubesched.framework.interface import (
    ClusterEventWithHint,
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    IntArray,
    NodeScoreList,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    ReservePlugin,
    ScorePlugin,
)
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.node_table import NodeTable
from kubesched.framework.plugins import names
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeToStatus, PodInfo

NAME: Final = names.DYNAMIC_RESOURCES
STATE_KEY: Final = "PreFilter" + NAME
NO_CLAIMS_TO_DEALLOCATE: Final = "no new claims to deallocate"
# What PostFilter answers when this plugin's PreFilter never ran (an earlier PreFilter plugin
# rejected the pod): upstream's state lookup fails, and the error text ends the FitError.
STATE_NOT_FOUND: Final = "not found"


class _StateData:
    """What PreFilter learned about the pod's claims: nothing yet, as no claim is allocated here."""

    def clone(self) -> _StateData:
        return self


def has_claims(pod: PodInfo) -> bool:
    return bool((pod.obj.get("spec") or {}).get("resourceClaims"))


class DynamicResources(
    PreEnqueuePlugin,
    PreFilterPlugin,
    FilterPlugin,
    PostFilterPlugin,
    ScorePlugin,
    ReservePlugin,
    PreBindPlugin,
    EnqueueExtensions,
):
    """Every extension point upstream's plugin has, each doing what upstream does for a claim-less pod."""

    NAME = NAME

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """Upstream's node and pod registrations; the resource.k8s.io kinds are not watched yet."""
        return [
            events.event(events.NODE, events.ADD | events.UPDATE_NODE_LABEL | events.UPDATE_NODE_ALLOCATABLE),
            events.event(events.POD, events.UPDATE_POD_GENERATED_RESOURCE_CLAIM),
        ]

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        return None

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        state.write(STATE_KEY, _StateData())
        return None, Status(Code.SKIP)

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        return None

    def post_filter(
        self, state: CycleState, pod: PodInfo, filtered_node_status_map: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        try:
            state.read(STATE_KEY)
        except StateNotFound:
            return None, Status(Code.ERROR, err=RuntimeError(STATE_NOT_FOUND))
        return None, Status(Code.UNSCHEDULABLE, NO_CLAIMS_TO_DEALLOCATE)

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        return 0, None

    def score_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, positions: IntArray) -> IntArray:
        return np.zeros(len(positions), dtype=np.int64)

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: NodeScoreList) -> Status | None:
        """DefaultNormalizeScore over all-zero scores leaves them zero."""
        return None

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        return None

    def pre_bind_pre_flight(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return Status(Code.SKIP)

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return None


def new(args: Any, handle: Handle) -> DynamicResources:
    return DynamicResources()
