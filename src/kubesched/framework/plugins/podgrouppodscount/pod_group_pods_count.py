"""PodGroupPodsCount (podgrouppodscount/podgroup_pods_count.go, v1.36): a PlacementScore plugin.

A placement scores the group's pods already placed plus those it would place, normalized
against the best placement; minCount is left out so that near-equal counts score near-equal.
"""

from __future__ import annotations

from typing import Any, Final

from kubesched.config import names
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    Handle,
    PlacementScorePlugin,
    PodGroupAssignments,
)
from kubesched.framework.status import Code, Status

NAME: Final = names.POD_GROUP_PODS_COUNT


class PodGroupPodsCount(PlacementScorePlugin):
    NAME = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def score_placement(
        self, state: CycleState, namespace: str, group: str, assignments: PodGroupAssignments
    ) -> tuple[int, Status | None]:
        states = self.handle.pod_groups
        members = states.get(namespace, group) if states is not None else None
        if members is None:
            return 0, Status(Code.ERROR, f"pod group state not found for pod group {namespace}/{group}")
        return members.scheduled_count() + len(assignments.proposed), None

    def normalize_placement_scores(
        self, state: CycleState, namespace: str, group: str, scores: list[int]
    ) -> Status | None:
        top = max(scores, default=0)
        if top <= 0:
            return Status(Code.ERROR, "no pods from pod group are assigned to any of the candidate placements")
        for i, score in enumerate(scores):
            scores[i] = MIN_NODE_SCORE + score * (MAX_NODE_SCORE - MIN_NODE_SCORE) // top
        return None


def new(args: Any, handle: Handle) -> PodGroupPodsCount:
    return PodGroupPodsCount(handle)
