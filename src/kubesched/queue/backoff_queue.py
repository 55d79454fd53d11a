"""backoffQ: pods waiting out their backoff, ordered by expiry; separate because its timing rules stand alone."""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable
from typing import Any

from kubesched.queue.queued_pod_info import PodsByUid, QueuedPodInfo

DEFAULT_POD_INITIAL_BACKOFF = 1.0
DEFAULT_POD_MAX_BACKOFF = 10.0
BACKOFF_WINDOW = 1.0

_Heap = list[tuple[float, Any, int, QueuedPodInfo]]


class BackoffQueue(PodsByUid):
    """podBackoffQ (rejected by a plugin) and podErrorBackoffQ (failed with an error), by expiry then activeQ order.

    Heap entries carry an id; an entry whose id is no longer the pod's current one is stale.
    """

    def __init__(
        self,
        clock: Callable[[], float],
        sort_key: Callable[[QueuedPodInfo], Any],
        pod_initial_backoff: float,
        pod_max_backoff: float,
        pop_from_backoff_q: bool,
    ) -> None:
        self._clock = clock
        self._key = sort_key
        self.pod_initial_backoff = pod_initial_backoff
        self.pod_max_backoff = pod_max_backoff
        self.pop_from_backoff_q = pop_from_backoff_q
        self._entry_ids = itertools.count()
        self._backoff: _Heap = []
        self._error_backoff: _Heap = []
        self.pods: dict[str, QueuedPodInfo] = {}
        self._entry: dict[str, int] = {}

    def backoff_time(self, qpi: QueuedPodInfo) -> float | None:
        """1 s doubling to 10 s, counted by rejections (or consecutive errors), aligned to a 1 s window."""
        if self.pod_max_backoff == 0:
            return None
        count = qpi.consecutive_errors_count or qpi.unschedulable_count
        if count == 0:
            return None
        if qpi.backoff_expiration is None:
            shift = count - 1
            if shift >= 62 or self.pod_initial_backoff * (1 << shift) > self.pod_max_backoff:
                duration = self.pod_max_backoff
            else:
                duration = self.pod_initial_backoff * (1 << shift)
            qpi.backoff_expiration = self.align(qpi.timestamp + duration)
        return qpi.backoff_expiration

    def align(self, t: float) -> float:
        """Start of t's ordering window (PopFromBackoffQ); without it, t itself."""
        return math.floor(t / BACKOFF_WINDOW) * BACKOFF_WINDOW if self.pop_from_backoff_q else t

    def is_pod_backing_off(self, qpi: QueuedPodInfo) -> bool:
        """Backing off until the window after the expiry's window begins, as upstream compares windows."""
        t = self.backoff_time(qpi)
        return t is not None and t >= self.align(self._clock())

    def _ready_at(self, expiry: float) -> float:
        """The first moment a pod with this backoff expiry is no longer backing off."""
        return expiry + BACKOFF_WINDOW if self.pop_from_backoff_q else math.nextafter(expiry, math.inf)

    def add(self, qpi: QueuedPodInfo) -> None:
        expiry = self.backoff_time(qpi)
        heap = self._backoff if (qpi.unschedulable_plugins or qpi.pending_plugins) else self._error_backoff
        entry = next(self._entry_ids)
        self.pods[qpi.pod_info.uid] = qpi
        self._entry[qpi.pod_info.uid] = entry
        heapq.heappush(heap, (expiry or 0.0, self._key(qpi), entry, qpi))

    def pop(self) -> QueuedPodInfo | None:
        """The first pod of podBackoffQ, backing off or not (for Pop when activeQ is empty)."""
        heap = self._backoff
        while heap:
            _, _, entry, qpi = heapq.heappop(heap)
            uid = qpi.pod_info.uid
            if self._entry.get(uid) == entry:
                del self.pods[uid], self._entry[uid]
                return qpi
        return None

    def delete(self, uid: str) -> QueuedPodInfo | None:
        self._entry.pop(uid, None)
        return self.pods.pop(uid, None)

    def pop_all_backoff_completed(self) -> list[QueuedPodInfo]:
        """Take out the pods whose backoff is over, podBackoffQ's first, each heap in its order."""
        now = self.align(self._clock())
        done: list[QueuedPodInfo] = []
        for heap in (self._backoff, self._error_backoff):
            while heap and heap[0][0] < now:
                _, _, entry, qpi = heapq.heappop(heap)
                uid = qpi.pod_info.uid
                if self._entry.get(uid) == entry:
                    del self.pods[uid], self._entry[uid]
                    done.append(qpi)
        return done

    def next_error_backoff(self) -> float | None:
        """When the first pod in error backoff can be retried."""
        heap = self._error_backoff
        while heap and self._entry.get(heap[0][3].pod_info.uid) != heap[0][2]:
            heapq.heappop(heap)
        return self._ready_at(heap[0][0]) if heap else None

    def next_backoff_completed(self) -> float | None:
        """When podBackoffQ's first entry completes, if Pop cannot take pods from it early."""
        if not self.pop_from_backoff_q and self._backoff:
            return self._ready_at(self._backoff[0][0])
        return None
