"""SelectorSpread: spread pods of one Service/RC/RS/StatefulSet over nodes and zones (legacy, removed in 1.26).

The Policy's SelectorSpreadPriority. Score counts the pod's siblings on a node;
NormalizeScore turns counts into 0-100 with fewer siblings scoring higher, giving 2/3
of the weight to the zone's count when nodes carry zone labels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from kubesched.api.selectors import LabelSelector
from kubesched.api.topology import get_zone_key
from kubesched.config import names
from kubesched.framework.cycle_state import CycleState, read_state
from kubesched.framework.interface import MAX_NODE_SCORE, Handle, NodeScoreList, PreScorePlugin, ScorePlugin
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.plugins.helper.spread import default_selector
from kubesched.framework.status import Status
from kubesched.framework.types import PodInfo

NAME: Final = names.SELECTOR_SPREAD
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME
ZONE_WEIGHTING: Final = 2.0 / 3.0


@dataclass(slots=True)
class _PreScoreState:
    selector: LabelSelector

    def clone(self) -> _PreScoreState:
        return self


def skip_selector_spread(pod: PodInfo) -> bool:
    """Pods with their own topologySpreadConstraints are spread by PodTopologySpread instead."""
    return bool(pod.topology_spread_constraints)


def count_matching_pods(namespace: str, selector: LabelSelector, node_info: NodeInfo) -> int:
    """Pods in `namespace` matching `selector`, leaving out pods being deleted."""
    if not node_info.pods or selector.is_everything or selector.is_nothing:
        return 0
    return sum(1 for p in node_info.pods if p.namespace == namespace and not p.deleting and selector.matches(p.labels))


class SelectorSpread(PreScorePlugin, ScorePlugin):
    NAME = NAME

    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        if skip_selector_spread(pod):
            return None
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(default_selector(pod, self._handle.lister)))
        return None

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        if skip_selector_spread(pod):
            return 0, None
        s = read_state(state, PRE_SCORE_STATE_KEY, _PreScoreState)
        return count_matching_pods(pod.namespace, s.selector, node_info), None

    def has_normalize(self) -> bool:
        return True

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: NodeScoreList) -> Status | None:
        if skip_selector_spread(pod):
            return None
        snapshot = self._handle.shared_lister()
        zones: list[str] = []
        counts_by_zone: dict[str, int] = {}
        for name, count in zip(scores.names, scores.scores, strict=True):
            ni = snapshot.get(name)
            zone = get_zone_key(ni.labels) if ni is not None else ""
            zones.append(zone)
            if zone:
                counts_by_zone[zone] = counts_by_zone.get(zone, 0) + int(count)
        max_by_node = int(max(scores.scores, default=0))
        max_by_zone = max(counts_by_zone.values(), default=0)
        for i, zone in enumerate(zones):
            f = float(MAX_NODE_SCORE)
            if max_by_node > 0:
                f = MAX_NODE_SCORE * ((max_by_node - int(scores.scores[i])) / max_by_node)
            if counts_by_zone and zone:
                zone_score = float(MAX_NODE_SCORE)
                if max_by_zone > 0:
                    zone_score = MAX_NODE_SCORE * ((max_by_zone - counts_by_zone[zone]) / max_by_zone)
                f = f * (1.0 - ZONE_WEIGHTING) + ZONE_WEIGHTING * zone_score
            scores.scores[i] = int(f)
        return None


def new(args: Any, handle: Handle) -> SelectorSpread:
    return SelectorSpread(handle)
