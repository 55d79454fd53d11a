"""Shared queueing-hint shapes: most node-side hints ask "does the node pass now, when it did not before?"."""

from __future__ import annotations

from collections.abc import Callable

from kubesched.framework.interface import QueueingHint
from kubesched.framework.node_info import ParsedNode
from kubesched.framework.types import PodInfo


def node_now_passes(
    passes: Callable[[ParsedNode], bool], old: ParsedNode | None, new: ParsedNode | None
) -> QueueingHint:
    """Queue when an added node passes, or an updated node passes and did not before."""
    if new is None or not passes(new):
        return QueueingHint.QUEUE_SKIP
    if old is None or not passes(old):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def same_pod(pod: PodInfo, new: PodInfo | None) -> bool:
    """Hints for unscheduled-pod updates only care about the rejected pod itself."""
    return new is not None and new.uid == pod.uid
