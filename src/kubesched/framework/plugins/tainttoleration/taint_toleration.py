"""TaintToleration: mirrors framework/plugins/tainttoleration/taint_toleration.go.

Nodes with identical taints share one verdict, so the vectorised paths evaluate each
distinct taint set once and spread the answer with the table's taint-group column.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from kubesched.api.taints import (
    NO_EXECUTE,
    NO_SCHEDULE,
    PREFER_NO_SCHEDULE,
    Taint,
    Toleration,
    find_matching_untolerated_taint,
    tolerations_tolerate_taint,
)
from kubesched.config import names
from kubesched.framework import events, signers
from kubesched.framework.cycle_state import CycleState, read_state
from kubesched.framework.interface import (
    MAX_NODE_SCORE,
    BoolArray,
    ClusterEventWithHint,
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    IntArray,
    NodeScoreList,
    PreScorePlugin,
    QueueingHint,
    ScorePlugin,
    SignFragment,
)
from kubesched.framework.node_info import NodeInfo, ParsedNode
from kubesched.framework.node_table import NodeTable
from kubesched.framework.plugins.helper.hints import node_now_passes, same_pod
from kubesched.framework.plugins.helper.normalize_score import default_normalize_score
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo

NAME: Final = names.TAINT_TOLERATION
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME
ERR_REASON_NOT_MATCH: Final = "node(s) had untolerated taint(s)"  # wording since v1.34
_DO_NOT_SCHEDULE: Final = frozenset([NO_SCHEDULE, NO_EXECUTE])


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    tolerations_prefer_no_schedule: tuple[Toleration, ...]

    def clone(self) -> _PreScoreState:
        return self


def _count_intolerable_taints_prefer_no_schedule(taints: tuple[Taint, ...], tolerations: tuple[Toleration, ...]) -> int:
    return sum(1 for t in taints if t.effect == PREFER_NO_SCHEDULE and not tolerations_tolerate_taint(tolerations, t))


class TaintToleration(FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions):
    NAME = NAME

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        return [(signers.TOLERATIONS, signers.tolerations(pod))], None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            events.event(events.NODE, events.ADD | events.UPDATE_NODE_TAINT, self._after_node_change),
            events.event(events.POD, events.UPDATE_POD_TOLERATION, self._after_toleration_change),
        ]

    def _after_node_change(self, pod: PodInfo, old: ParsedNode | None, new: ParsedNode | None) -> QueueingHint:
        def tolerated(node: ParsedNode) -> bool:
            return find_matching_untolerated_taint(node.taints, pod.tolerations, _DO_NOT_SCHEDULE) is None

        return node_now_passes(tolerated, old, new)

    def _after_toleration_change(self, pod: PodInfo, old: PodInfo | None, new: PodInfo | None) -> QueueingHint:
        """Only the pod's own update, and only when its number of tolerations changed."""
        if same_pod(pod, new) and old is not None and new is not None and len(old.tolerations) != len(new.tolerations):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        taints = node_info.node.taints if node_info.node is not None else ()
        if find_matching_untolerated_taint(taints, pod.tolerations, _DO_NOT_SCHEDULE) is None:
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NOT_MATCH)

    def filter_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: slice) -> BoolArray:
        groups = table.taint_groups
        if len(groups) == 1 and not groups[0]:
            return np.ones(rows.stop - rows.start, dtype=bool)
        ok = np.fromiter(
            (find_matching_untolerated_taint(g, pod.tolerations, _DO_NOT_SCHEDULE) is None for g in groups),
            dtype=bool,
            count=len(groups),
        )
        return ok[table.taint_group[rows]]

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Any) -> Status | None:
        tolerations = tuple(t for t in pod.tolerations if t.effect in ("", PREFER_NO_SCHEDULE))
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(tolerations))
        return None

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = read_state(state, PRE_SCORE_STATE_KEY, _PreScoreState)
        taints = node_info.node.taints if node_info.node is not None else ()
        return _count_intolerable_taints_prefer_no_schedule(taints, s.tolerations_prefer_no_schedule), None

    def score_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, positions: IntArray) -> IntArray:
        s = read_state(state, PRE_SCORE_STATE_KEY, _PreScoreState)
        counts = np.fromiter(
            (
                _count_intolerable_taints_prefer_no_schedule(g, s.tolerations_prefer_no_schedule)
                for g in table.taint_groups
            ),
            dtype=np.int64,
            count=len(table.taint_groups),
        )
        return counts[table.taint_group[positions]]

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: NodeScoreList) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, True, scores.scores)
        return None


def new(args: Any, handle: Handle) -> TaintToleration:
    return TaintToleration()
