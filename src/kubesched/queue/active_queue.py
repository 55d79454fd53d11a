"""activeQ and the pods in flight with the events they may miss; separate so PriorityQueue only routes pods."""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable
from typing import Any

from kubesched.framework.interface import ClusterEvent
from kubesched.queue.queued_pod_info import PodsByUid, QueuedPodInfo


class ActiveQueue(PodsByUid):
    """A heap in QueueSort order; entries carry an id, and one that is no longer the pod's current id is stale."""

    def __init__(self, sort_key: Callable[[QueuedPodInfo], Any]) -> None:
        self._key = sort_key
        self._entry_ids = itertools.count()
        self._heap: list[tuple[Any, int, QueuedPodInfo]] = []
        self.pods: dict[str, QueuedPodInfo] = {}
        self._entry: dict[str, int] = {}
        self.in_flight: dict[str, int] = {}  # uid -> index of the first event it has not seen
        self.in_flight_events: list[tuple[int, ClusterEvent, Any, Any]] = []
        self._event_seq = itertools.count()

    def push(self, qpi: QueuedPodInfo) -> None:
        """Add the pod, or re-sort it after an update (its older entry goes stale)."""
        uid = qpi.pod_info.uid
        entry = next(self._entry_ids)
        self.pods[uid] = qpi
        self._entry[uid] = entry
        heapq.heappush(self._heap, (self._key(qpi), entry, qpi))

    def pop(self) -> QueuedPodInfo | None:
        while self._heap:
            _, entry, qpi = heapq.heappop(self._heap)
            uid = qpi.pod_info.uid
            if self._entry.get(uid) == entry:
                del self.pods[uid], self._entry[uid]
                return qpi
        return None

    def delete(self, uid: str) -> None:
        self.pods.pop(uid, None)
        self._entry.pop(uid, None)

    # In-flight pods and the events that arrive while they are being scheduled

    def move_to_in_flight(self, uid: str) -> None:
        self.in_flight[uid] = next(self._event_seq)

    def add_event_if_any_in_flight(self, event: ClusterEvent, old: Any, new: Any) -> None:
        if self.in_flight:
            self.in_flight_events.append((next(self._event_seq), event, old, new))

    def add_events_if_pod_in_flight(self, uid: str, changes: Iterable[ClusterEvent], old: Any, new: Any) -> bool:
        """Keep the updates of a pod being scheduled, to replay when it comes back; False if it is not in flight."""
        if uid not in self.in_flight:
            return False
        for event in changes:
            self.in_flight_events.append((next(self._event_seq), event, old, new))
        return True

    def cluster_events_for_pod(self, uid: str) -> list[tuple[ClusterEvent, Any, Any]] | None:
        """The events that arrived since the pod was popped; None if it is not in flight."""
        start = self.in_flight.get(uid)
        if start is None:
            return None
        return [(event, old, new) for seq, event, old, new in self.in_flight_events if seq >= start]

    def done(self, uid: str) -> None:
        """The pod's scheduling attempt is over: forget the events no pod in flight still needs."""
        if self.in_flight.pop(uid, None) is None:
            return
        if not self.in_flight:
            self.in_flight_events.clear()
            return
        oldest = min(self.in_flight.values())
        drop = 0
        while drop < len(self.in_flight_events) and self.in_flight_events[drop][0] < oldest:
            drop += 1
        if drop:
            del self.in_flight_events[:drop]
