"""Queueing hints: whether an event may make a waiting pod schedulable; pure policy, apart from where pods wait."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from kubesched.framework import events
from kubesched.framework.extender import EXTENDER_NAME
from kubesched.framework.interface import ClusterEvent, QueueingHint, QueueingHintFn
from kubesched.queue.queued_pod_info import QueuedPodInfo


class QueueingStrategy(IntEnum):
    SKIP = 0
    AFTER_BACKOFF = 1
    IMMEDIATELY = 2


@dataclass(frozen=True, slots=True)
class HintEntry:
    plugin: str
    event: ClusterEvent
    fn: QueueingHintFn | None


# Per profile (schedulerName), the events each rejecting plugin registered.
QueueingHintMap = dict[str, list[HintEntry]]


class QueueingHints:
    """The hint map of every profile, and which plugins registered for each kind of event (cached)."""

    def __init__(self, hint_map: QueueingHintMap) -> None:
        self.hint_map = hint_map
        self._interest_cache: dict[tuple[str, int], frozenset[str]] = {}

    def plugins_interested_in(self, event: ClusterEvent) -> frozenset[str]:
        key = (event.resource, event.action_type)
        hit = self._interest_cache.get(key)
        if hit is None:
            hit = frozenset(
                e.plugin
                for entries in self.hint_map.values()
                for e in entries
                if events.matches(e.event, event.resource, event.action_type)
            )
            self._interest_cache[key] = hit
        return hit

    def is_event_of_interest(self, event: ClusterEvent) -> bool:
        return event.resource == events.WILDCARD or bool(self.plugins_interested_in(event))

    def worth_requeuing(self, qpi: QueuedPodInfo, event: ClusterEvent, old: Any, new: Any) -> QueueingStrategy:
        """isPodWorthRequeuing: ask the hints of the plugins that rejected (or gate) the pod.

        A gated pod moves only on an event its gating plugin registered; then, as upstream adds the
        gating plugin to the pod's rejectors, the plugins that rejected it in its last attempt have
        their say too: DefaultPreemption holds a preemptor back on pod deletions but leaves
        NodeResourcesFit to tell whether a deletion may make room.
        """
        entries = self.hint_map.get(qpi.pod_info.scheduler_name, ())
        rejectors = qpi.unschedulable_plugins | qpi.pending_plugins
        gating = qpi.gating_plugin if qpi.gated else ""
        if gating:
            if event.resource != events.WILDCARD and not any(
                e.plugin == gating and events.matches(e.event, event.resource, event.action_type) for e in entries
            ):
                return QueueingStrategy.SKIP
            rejectors = rejectors | {gating}
        if not rejectors or event.resource == events.WILDCARD or EXTENDER_NAME in rejectors:
            return QueueingStrategy.AFTER_BACKOFF  # nothing says what an extender waits for: any event may help
        strategy = QueueingStrategy.SKIP
        for entry in entries:
            if entry.plugin not in rejectors or not events.matches(entry.event, event.resource, event.action_type):
                continue
            if entry.fn is None:
                hint = QueueingHint.QUEUE
            else:
                try:
                    hint = entry.fn(qpi.pod_info, old, new)
                except Exception:  # a failing hint must not strand the pod: treat it as Queue
                    hint = QueueingHint.QUEUE
            if hint == QueueingHint.QUEUE_SKIP:
                continue
            if entry.plugin in qpi.pending_plugins:
                return QueueingStrategy.IMMEDIATELY
            strategy = QueueingStrategy.AFTER_BACKOFF
        return strategy

    def strategy_for_missed_events(
        self, qpi: QueuedPodInfo, missed: Iterable[tuple[ClusterEvent, Any, Any]]
    ) -> QueueingStrategy:
        """Replay the events a pod missed while in flight; stop at the first that settles where it goes."""
        strategy = QueueingStrategy.SKIP
        for event, old, new in missed:
            s = self.worth_requeuing(qpi, event, old, new)
            if s == QueueingStrategy.IMMEDIATELY:
                return s
            if s == QueueingStrategy.AFTER_BACKOFF:
                strategy = s
                if not qpi.pending_plugins:
                    return strategy
        return strategy
