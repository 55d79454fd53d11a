"""NodeDeclaredFeatures: a pod goes only to nodes that declare the features it needs (v1.36, beta, on).

PreFilter infers the pod's needs from its spec and skips the plugin when there are none,
which is almost always; Filter then checks the node's `status.declaredFeatures`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from kubesched.config import names
from kubesched.framework import events, signers
from kubesched.framework.cycle_state import ERROR_READING_CYCLE_STATE, CycleState, read_state
from kubesched.framework.interface import (
    BoolArray,
    ClusterEventWithHint,
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    PreFilterPlugin,
    PreFilterResult,
    QueueingHint,
    SignFragment,
)
from kubesched.framework.node_info import NodeInfo, ParsedNode
from kubesched.framework.node_table import NodeTable
from kubesched.framework.plugins.helper.hints import same_pod
from kubesched.framework.plugins.nodedeclaredfeatures.features import DEFAULT_REGISTRY, FeatureRegistry, Version
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo

NAME: Final = names.NODE_DECLARED_FEATURES
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
ERR_REASON_UNSATISFIED_REQUIREMENTS: Final = "node(s) didn't match Pod's required features"
# The release kubesched follows; features past their max version are no longer required.
COMPONENT_VERSION: Final[Version] = (1, 36, 3)


@dataclass(frozen=True, slots=True)
class _PreFilterState:
    reqs: frozenset[str]

    def clone(self) -> _PreFilterState:
        return self


def _spec(pod: PodInfo) -> dict[str, Any]:
    return pod.obj.get("spec") or {}


class NodeDeclaredFeatures(PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    NAME = NAME

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        return [(signers.FEATURES, sorted(self.requirements(pod)))], None

    def __init__(self, registry: FeatureRegistry = DEFAULT_REGISTRY, version: Version = COMPONENT_VERSION) -> None:
        self._registry = registry
        self._version = version

    def requirements(self, pod: PodInfo) -> frozenset[str]:
        return self._registry.infer_for_pod_scheduling(_spec(pod), self._version)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            events.event(events.NODE, events.ADD | events.UPDATE_NODE_DECLARED_FEATURE, self._after_node_change),
            events.event(events.POD, events.UPDATE, self._after_pod_update),
        ]

    def _after_node_change(self, pod: PodInfo, old: ParsedNode | None, new: ParsedNode | None) -> QueueingHint:
        """Any added node, or an update that changed the declared list; upstream ignores the pod's needs here."""
        if old is not None and new is not None and old.declared_features == new.declared_features:
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    def _after_pod_update(self, pod: PodInfo, old: PodInfo | None, new: PodInfo | None) -> QueueingHint:
        """The pod's own update, when what it needs changed."""
        if not same_pod(pod, new) or old is None or new is None:
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE_SKIP if self.requirements(old) == self.requirements(new) else QueueingHint.QUEUE

    def pre_filter(self, state: CycleState, pod: PodInfo, nodes: Any) -> tuple[PreFilterResult | None, Status | None]:
        reqs = self.requirements(pod)
        if not reqs:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(reqs))
        return None, None

    def _fits(self, reqs: frozenset[str], node: ParsedNode | None) -> bool:
        return reqs <= self._registry.node_features(node.declared_features if node is not None else ())

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        s = read_state(state, PRE_FILTER_STATE_KEY, _PreFilterState, ERROR_READING_CYCLE_STATE)
        if self._fits(s.reqs, node_info.node):
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSATISFIED_REQUIREMENTS)

    def filter_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: slice) -> BoolArray:
        s = read_state(state, PRE_FILTER_STATE_KEY, _PreFilterState, ERROR_READING_CYCLE_STATE)
        nodes = table.node_infos[rows]
        return np.fromiter((self._fits(s.reqs, ni.node) for ni in nodes), dtype=bool, count=len(nodes))


def new(args: Any, handle: Handle) -> NodeDeclaredFeatures:
    return NodeDeclaredFeatures()
