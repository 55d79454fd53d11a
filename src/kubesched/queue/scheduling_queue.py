"""The scheduling queue (backend/queue/scheduling_queue.go), first cut.

activeQ is a heap in the profile's QueueSort order; pods that PreEnqueue rejects
are parked as gated; pods that fail a cycle wait in unschedulablePods until an
event that one of their rejecting plugins cares about moves them back. Backoff,
the periodic flushes and queueing hints come with the full queue; callers use only
the `SchedulingQueue` interface below, which that queue implements too.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cmp_to_key
from typing import Any, Protocol

from kubesched.framework.status import Status
from kubesched.framework.types import PodInfo


@dataclass(slots=True, eq=False)
class QueuedPodInfo:
    pod_info: PodInfo
    timestamp: float
    seq: int
    attempts: int = 0
    initial_attempt_timestamp: float | None = None
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    gated: bool = False
    gating_plugin: str = ""

    @property
    def key(self) -> str:
        return self.pod_info.key

    def __repr__(self) -> str:
        return f"QueuedPodInfo(pod={self.key!r}, attempts={self.attempts}, gated={self.gated})"


class SchedulingQueue(Protocol):
    def add(self, pod: PodInfo) -> None: ...
    def pop(self) -> QueuedPodInfo | None: ...
    def add_unschedulable_if_not_present(self, qpi: QueuedPodInfo) -> None: ...
    def update(self, old: PodInfo, new: PodInfo) -> None: ...
    def delete(self, pod: PodInfo) -> None: ...
    def done(self, uid: str) -> None: ...
    def move_all_to_active_queue(self, event: str, plugins_interested: Callable[[set[str]], bool]) -> None: ...
    def pending_pods(self) -> dict[str, list[QueuedPodInfo]]: ...


Lesser = Callable[[Any, Any], bool]


class PriorityQueue:
    def __init__(
        self,
        less: Lesser,
        pre_enqueue: Callable[[PodInfo], Status | None],
        *,
        clock: Callable[[], float],
        sort_key: Callable[[QueuedPodInfo], Any] | None = None,
    ) -> None:
        self._clock = clock
        self._pre_enqueue = pre_enqueue
        if sort_key is None:
            wrap = cmp_to_key(lambda a, b: -1 if less(a, b) else (1 if less(b, a) else 0))
            sort_key = wrap  # type: ignore[assignment]
        self._key = sort_key
        self._active: list[tuple[Any, int, QueuedPodInfo]] = []
        self._in_active: dict[str, QueuedPodInfo] = {}
        self.unschedulable_pods: dict[str, QueuedPodInfo] = {}
        self._in_flight: dict[str, QueuedPodInfo] = {}
        self._seq = itertools.count()
        self.scheduling_cycle = 0

    def _new_qpi(self, pod: PodInfo) -> QueuedPodInfo:
        return QueuedPodInfo(pod, self._clock(), next(self._seq))

    def _move_to_active(self, qpi: QueuedPodInfo) -> bool:
        """runPreEnqueuePlugins then push; a rejected pod is parked as gated."""
        s = self._pre_enqueue(qpi.pod_info)
        if s is not None and not s.is_success():
            qpi.gated = True
            qpi.gating_plugin = s.plugin
            qpi.unschedulable_plugins = {s.plugin} if s.plugin else set()
            self.unschedulable_pods[qpi.pod_info.uid] = qpi
            return False
        qpi.gated = False
        qpi.gating_plugin = ""
        if qpi.initial_attempt_timestamp is None:
            qpi.initial_attempt_timestamp = self._clock()
        self.unschedulable_pods.pop(qpi.pod_info.uid, None)
        self._in_active[qpi.pod_info.uid] = qpi
        heapq.heappush(self._active, (self._key(qpi), qpi.seq, qpi))
        return True

    def add(self, pod: PodInfo) -> None:
        self._move_to_active(self._new_qpi(pod))

    def pop(self) -> QueuedPodInfo | None:
        while self._active:
            _, _, qpi = heapq.heappop(self._active)
            if self._in_active.get(qpi.pod_info.uid) is not qpi:
                continue  # superseded by an update or deleted
            del self._in_active[qpi.pod_info.uid]
            qpi.attempts += 1
            self.scheduling_cycle += 1
            self._in_flight[qpi.pod_info.uid] = qpi
            return qpi
        return None

    def add_unschedulable_if_not_present(self, qpi: QueuedPodInfo) -> None:
        uid = qpi.pod_info.uid
        if uid in self._in_active or uid in self.unschedulable_pods:
            return
        qpi.timestamp = self._clock()
        self.unschedulable_pods[uid] = qpi

    def update(self, old: PodInfo, new: PodInfo) -> None:
        uid = new.uid
        qpi = self._in_active.get(uid) or self.unschedulable_pods.get(uid)
        if qpi is None:
            if uid not in self._in_flight:
                self.add(new)
            return
        qpi.pod_info = new
        if uid in self._in_active:
            del self._in_active[uid]
            self._move_to_active(qpi)
        elif qpi.gated:
            # A gated pod re-runs PreEnqueue on every update (e.g. a gate removed).
            del self.unschedulable_pods[uid]
            self._move_to_active(qpi)

    def delete(self, pod: PodInfo) -> None:
        self._in_active.pop(pod.uid, None)
        self.unschedulable_pods.pop(pod.uid, None)

    def done(self, uid: str) -> None:
        self._in_flight.pop(uid, None)

    def activate(self, uids: list[str]) -> None:
        for uid in uids:
            qpi = self.unschedulable_pods.get(uid)
            if qpi is not None and not qpi.gated:
                del self.unschedulable_pods[uid]
                self._move_to_active(qpi)

    def move_all_to_active_queue(self, event: str, plugins_interested: Callable[[set[str]], bool]) -> None:
        """Move unschedulable (not gated) pods whose rejecting plugins care about `event`."""
        for uid, qpi in list(self.unschedulable_pods.items()):
            if qpi.gated:
                continue
            if not qpi.unschedulable_plugins or plugins_interested(qpi.unschedulable_plugins | qpi.pending_plugins):
                del self.unschedulable_pods[uid]
                self._move_to_active(qpi)

    def pending_pods(self) -> dict[str, list[QueuedPodInfo]]:
        gated = [q for q in self.unschedulable_pods.values() if q.gated]
        unsched = [q for q in self.unschedulable_pods.values() if not q.gated]
        return {"active": list(self._in_active.values()), "backoff": [], "unschedulable": unsched, "gated": gated}

    def __len__(self) -> int:
        return len(self._in_active)
