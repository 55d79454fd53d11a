"""NodePreferAvoidPods: honour a node's preferAvoidPods annotation (legacy, removed in 1.24).

The annotation names ReplicationControllers and ReplicaSets whose pods should stay off
the node; such a pod scores 0 there and 100 elsewhere. Default weight 10000 made it
all but a filter.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any, Final

from kubesched.config import names
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import MAX_NODE_SCORE, Handle, ScorePlugin
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.status import Status
from kubesched.framework.types import PodInfo

NAME: Final = names.NODE_PREFER_AVOID_PODS
PREFER_AVOID_PODS_ANNOTATION: Final = "scheduler.alpha.kubernetes.io/preferAvoidPods"
_AVOIDABLE_KINDS: Final = ("ReplicationController", "ReplicaSet")


def controller_ref(pod: PodInfo) -> Mapping[str, Any] | None:
    """metav1.GetControllerOf: the owner reference marked controller."""
    for ref in (pod.obj.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller"):
            return ref
    return None


def avoided_controllers(node_info: NodeInfo) -> frozenset[tuple[str, str]]:
    """(kind, uid) of every podController in the annotation; unreadable annotations avoid nothing."""
    node = node_info.node
    raw = (
        ((node.obj.get("metadata") or {}).get("annotations") or {}).get(PREFER_AVOID_PODS_ANNOTATION) if node else None
    )
    return _parse_avoids(raw) if raw else frozenset()


@functools.lru_cache(maxsize=1024)
def _parse_avoids(raw: str) -> frozenset[tuple[str, str]]:
    """Parsed once per annotation text, not once per pod and node."""
    try:
        doc = json.loads(raw)
        return frozenset(
            (str(ctl.get("kind", "")), str(ctl.get("uid", "")))
            for entry in doc.get("preferAvoidPods") or ()
            for ctl in [(entry.get("podSignature") or {}).get("podController") or {}]
        )
    except (ValueError, AttributeError, TypeError):
        return frozenset()


class NodePreferAvoidPods(ScorePlugin):
    NAME = NAME

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        ref = controller_ref(pod)
        if ref is None or ref.get("kind") not in _AVOIDABLE_KINDS:
            return MAX_NODE_SCORE, None
        if (str(ref.get("kind")), str(ref.get("uid", ""))) in avoided_controllers(node_info):
            return 0, None
        return MAX_NODE_SCORE, None


def new(args: Any, handle: Handle) -> NodePreferAvoidPods:
    return NodePreferAvoidPods()
