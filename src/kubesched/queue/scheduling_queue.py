"""The scheduling queue (backend/queue/scheduling_queue.go, v1.34 with queueing hints on).

Three places a pending pod can wait:
- activeQ: a heap in the profile's QueueSort order; Pop takes from here, and from
  podBackoffQ when activeQ is empty (SchedulerPopFromBackoffQ, on since 1.33);
- backoffQ: podBackoffQ for pods a plugin rejected and podErrorBackoffQ for pods
  that hit an error, each ordered by backoff expiry (whole-second windows) and then
  activeQ order;
- unschedulablePods: pods whose rejecting plugins said no event has helped yet,
  plus gated pods that a PreEnqueue plugin keeps out of activeQ.

Cluster events are offered to the queueing-hint functions of the plugins that
rejected each unschedulable pod; events that arrive while a pod is being scheduled
are kept and replayed when the pod comes back, so none is lost to the race.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import IntEnum
from functools import cmp_to_key
from typing import Any, Protocol

from kubesched.extender import EXTENDER_NAME
from kubesched.framework import events
from kubesched.framework.interface import ClusterEvent, NominatingInfo, QueueingHint, QueueingHintFn
from kubesched.framework.plugins import names
from kubesched.framework.status import Status
from kubesched.framework.types import PodInfo

DEFAULT_POD_INITIAL_BACKOFF = 1.0
DEFAULT_POD_MAX_BACKOFF = 10.0
DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION = 300.0
UNSCHEDULABLE_FLUSH_PERIOD = 30.0
BACKOFF_WINDOW = 1.0


@dataclass(slots=True, eq=False)
class QueuedPodInfo:
    pod_info: PodInfo
    timestamp: float
    seq: int
    attempts: int = 0
    unschedulable_count: int = 0
    consecutive_errors_count: int = 0
    initial_attempt_timestamp: float | None = None
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    gated: bool = False
    gating_plugin: str = ""
    backoff_expiration: float | None = None
    cycle_start: float = 0.0  # perf_counter() when its latest scheduling cycle began, for attempt metrics

    @property
    def key(self) -> str:
        return self.pod_info.key

    def __repr__(self) -> str:
        return f"QueuedPodInfo(pod={self.key!r}, attempts={self.attempts}, gated={self.gated})"


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


class SchedulingQueue(Protocol):
    def add(self, pod: PodInfo) -> None: ...
    def pop(self) -> QueuedPodInfo | None: ...
    def add_unschedulable_if_not_present(self, qpi: QueuedPodInfo) -> None: ...
    def update(self, old: PodInfo, new: PodInfo) -> None: ...
    def delete(self, pod: PodInfo) -> None: ...
    def done(self, uid: str) -> None: ...
    def activate(self, pods: Iterable[PodInfo]) -> None: ...
    def move_all_to_active_or_backoff_queue(self, event: ClusterEvent, old: Any, new: Any) -> None: ...
    def pending_pods(self) -> dict[str, list[QueuedPodInfo]]: ...


class Nominator:
    """Pods nominated to nodes by preemption (or by status.nominatedNodeName), for the two-pass filter."""

    def __init__(self) -> None:
        self.nominated_pods: dict[str, list[PodInfo]] = {}
        self.pod_to_node: dict[str, str] = {}

    def add_nominated_pod(self, pod: PodInfo, nominating_info: NominatingInfo | None = None) -> None:
        self.delete_nominated_pod_if_exists(pod)
        if nominating_info is not None and nominating_info.mode == "Override":
            node = nominating_info.nominated_node_name
        else:
            node = pod.nominated_node_name
        if not node or pod.node_name:
            return
        self.pod_to_node[pod.uid] = node
        self.nominated_pods.setdefault(node, []).append(pod)

    def delete_nominated_pod_if_exists(self, pod: PodInfo) -> None:
        node = self.pod_to_node.pop(pod.uid, None)
        if node is None:
            return
        left = [p for p in self.nominated_pods.get(node, ()) if p.uid != pod.uid]
        if left:
            self.nominated_pods[node] = left
        else:
            self.nominated_pods.pop(node, None)

    def update_nominated_pod(self, old: PodInfo, new: PodInfo) -> None:
        """Keep a nomination the update does not carry yet (status may lag behind our own nomination)."""
        info = None
        if not new.nominated_node_name and old.nominated_node_name == new.nominated_node_name:
            node = self.pod_to_node.get(old.uid)
            if node:
                info = NominatingInfo(node, "Override")
        self.add_nominated_pod(new, info)

    def nominated_pods_for_node(self, node: str) -> list[PodInfo]:
        return list(self.nominated_pods.get(node, ()))


Lesser = Callable[[Any, Any], bool]


class PriorityQueue:
    def __init__(
        self,
        less: Lesser,
        pre_enqueue: Callable[[PodInfo], Status | None],
        *,
        clock: Callable[[], float],
        sort_key: Callable[[QueuedPodInfo], Any] | None = None,
        hint_map: QueueingHintMap | None = None,
        pod_initial_backoff: float = DEFAULT_POD_INITIAL_BACKOFF,
        pod_max_backoff: float = DEFAULT_POD_MAX_BACKOFF,
        pod_max_in_unschedulable_pods_duration: float = DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
        pop_from_backoff_q: bool = True,
    ) -> None:
        self._clock = clock
        self._pre_enqueue = pre_enqueue
        if sort_key is None:
            sort_key = cmp_to_key(lambda a, b: -1 if less(a, b) else (1 if less(b, a) else 0))  # type: ignore[assignment]
        self._key = sort_key
        self.hint_map: QueueingHintMap = hint_map or {}
        self._interest_cache: dict[tuple[str, int], frozenset[str]] = {}
        self._gating_seen: set[str] = set()  # PreEnqueue plugins that have gated some pod
        self.pod_initial_backoff = pod_initial_backoff
        self.pod_max_backoff = pod_max_backoff
        self.pod_max_in_unschedulable_pods_duration = pod_max_in_unschedulable_pods_duration
        self.pop_from_backoff_q = pop_from_backoff_q
        # Heap entries carry an id; an entry whose id is no longer the pod's current one is stale.
        self._entry_ids = itertools.count()
        self._active: list[tuple[Any, int, QueuedPodInfo]] = []
        self._in_active: dict[str, QueuedPodInfo] = {}
        self._active_entry: dict[str, int] = {}
        self._backoff: list[tuple[float, Any, int, QueuedPodInfo]] = []
        self._error_backoff: list[tuple[float, Any, int, QueuedPodInfo]] = []
        self._in_backoff: dict[str, QueuedPodInfo] = {}
        self._backoff_entry: dict[str, int] = {}
        self.unschedulable_pods: dict[str, QueuedPodInfo] = {}  # in order of arrival, hence of timestamp
        self.gated_pods: dict[str, QueuedPodInfo] = {}
        self._in_flight: dict[str, int] = {}  # uid -> index of the first event it has not seen
        self._in_flight_events: list[tuple[int, ClusterEvent, Any, Any]] = []
        self._event_seq = itertools.count()
        self._seq = itertools.count()
        self._last_leftover_flush = 0.0
        self.scheduling_cycle = 0
        self.nominator = Nominator()

    def _plugins_interested_in(self, event: ClusterEvent) -> frozenset[str]:
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
        return event.resource == events.WILDCARD or bool(self._plugins_interested_in(event))

    # Adding and popping

    def _new_qpi(self, pod: PodInfo) -> QueuedPodInfo:
        return QueuedPodInfo(pod, self._clock(), next(self._seq))

    def _move_to_active(self, qpi: QueuedPodInfo) -> bool:
        """runPreEnqueuePlugins, then activeQ; a rejected pod is parked with the gated pods."""
        uid = qpi.pod_info.uid
        s = self._pre_enqueue(qpi.pod_info)
        self.unschedulable_pods.pop(uid, None)
        if s is not None and not s.is_success():
            qpi.gated = True
            qpi.gating_plugin = s.plugin
            self._gating_seen.add(s.plugin)
            self.gated_pods[uid] = qpi
            return False
        self.gated_pods.pop(uid, None)
        qpi.gated = False
        qpi.gating_plugin = ""
        if qpi.initial_attempt_timestamp is None:
            qpi.initial_attempt_timestamp = self._clock()
        self._push_active(qpi)
        self.nominator.add_nominated_pod(qpi.pod_info)
        return True

    def _push_active(self, qpi: QueuedPodInfo) -> None:
        uid = qpi.pod_info.uid
        entry = next(self._entry_ids)
        self._in_active[uid] = qpi
        self._active_entry[uid] = entry
        heapq.heappush(self._active, (self._key(qpi), entry, qpi))

    def add(self, pod: PodInfo) -> None:
        self._move_to_active(self._new_qpi(pod))

    def pop(self) -> QueuedPodInfo | None:
        """The next pod to schedule, or None when activeQ (and podBackoffQ) is empty."""
        self.flush_backoff_q_completed()
        self.flush_unschedulable_pods_leftover()
        qpi = self._pop_active()
        if qpi is None and self.pop_from_backoff_q:
            qpi = self._pop_heap(self._backoff)
        if qpi is None:
            return None
        qpi.attempts += 1
        qpi.backoff_expiration = None
        self.scheduling_cycle += 1
        self._in_flight[qpi.pod_info.uid] = next(self._event_seq)
        return qpi

    def _pop_active(self) -> QueuedPodInfo | None:
        while self._active:
            _, entry, qpi = heapq.heappop(self._active)
            uid = qpi.pod_info.uid
            if self._active_entry.get(uid) == entry:
                del self._in_active[uid], self._active_entry[uid]
                return qpi
        return None

    def _pop_heap(self, heap: list[tuple[float, Any, int, QueuedPodInfo]]) -> QueuedPodInfo | None:
        while heap:
            _, _, entry, qpi = heapq.heappop(heap)
            uid = qpi.pod_info.uid
            if self._backoff_entry.get(uid) == entry:
                del self._in_backoff[uid], self._backoff_entry[uid]
                return qpi
        return None

    def done(self, uid: str) -> None:
        """The pod's scheduling attempt is over: forget the events kept for it."""
        if self._in_flight.pop(uid, None) is None:
            return
        if not self._in_flight:
            self._in_flight_events.clear()
            return
        oldest = min(self._in_flight.values())
        drop = 0
        while drop < len(self._in_flight_events) and self._in_flight_events[drop][0] < oldest:
            drop += 1
        if drop:
            del self._in_flight_events[:drop]

    # Backoff

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
            qpi.backoff_expiration = self._align(qpi.timestamp + duration)
        return qpi.backoff_expiration

    def _align(self, t: float) -> float:
        """Start of t's ordering window (PopFromBackoffQ); without it, t itself."""
        return math.floor(t / BACKOFF_WINDOW) * BACKOFF_WINDOW if self.pop_from_backoff_q else t

    def is_pod_backing_off(self, qpi: QueuedPodInfo) -> bool:
        """Backing off until the window after the expiry's window begins, as upstream compares windows."""
        t = self.backoff_time(qpi)
        return t is not None and t >= self._align(self._clock())

    def _ready_at(self, expiry: float) -> float:
        """The first moment a pod with this backoff expiry is no longer backing off."""
        return expiry + BACKOFF_WINDOW if self.pop_from_backoff_q else math.nextafter(expiry, math.inf)

    def _add_to_backoff(self, qpi: QueuedPodInfo) -> None:
        expiry = self.backoff_time(qpi)
        heap = self._backoff if (qpi.unschedulable_plugins or qpi.pending_plugins) else self._error_backoff
        entry = next(self._entry_ids)
        self._in_backoff[qpi.pod_info.uid] = qpi
        self._backoff_entry[qpi.pod_info.uid] = entry
        heapq.heappush(heap, (expiry or 0.0, self._key(qpi), entry, qpi))

    def flush_backoff_q_completed(self) -> None:
        now = self._align(self._clock())
        for heap in (self._backoff, self._error_backoff):
            while heap and heap[0][0] < now:
                _, _, entry, qpi = heapq.heappop(heap)
                uid = qpi.pod_info.uid
                if self._backoff_entry.get(uid) == entry:
                    del self._in_backoff[uid], self._backoff_entry[uid]
                    self._move_to_active(qpi)

    def flush_unschedulable_pods_leftover(self) -> None:
        """The 30 s ticker: pods unschedulable for over 5 minutes go back with UnschedulableTimeout."""
        now = self._clock()
        tick = math.floor(now / UNSCHEDULABLE_FLUSH_PERIOD) * UNSCHEDULABLE_FLUSH_PERIOD
        if tick <= self._last_leftover_flush:
            return
        self._last_leftover_flush = tick
        stale = []
        for qpi in self.unschedulable_pods.values():
            if tick - qpi.timestamp <= self.pod_max_in_unschedulable_pods_duration:
                break
            stale.append(qpi)
        for qpi in stale:
            del self.unschedulable_pods[qpi.pod_info.uid]
            self._requeue(qpi, QueueingStrategy.AFTER_BACKOFF)

    def next_error_backoff(self) -> float | None:
        """When the first pod in error backoff can be retried."""
        while (
            self._error_backoff
            and self._backoff_entry.get(self._error_backoff[0][3].pod_info.uid) != (self._error_backoff[0][2])
        ):
            heapq.heappop(self._error_backoff)
        return self._ready_at(self._error_backoff[0][0]) if self._error_backoff else None

    def next_wakeup(self) -> float | None:
        """When the queue changes by itself: an error backoff ending, or the leftover flush."""
        times: list[float] = []
        retry = self.next_error_backoff()
        if retry is not None:
            times.append(retry)
        if not self.pop_from_backoff_q and self._backoff:
            times.append(self._ready_at(self._backoff[0][0]))
        first = next(iter(self.unschedulable_pods.values()), None)
        if first is not None:
            due = first.timestamp + self.pod_max_in_unschedulable_pods_duration
            times.append((math.floor(due / UNSCHEDULABLE_FLUSH_PERIOD) + 1) * UNSCHEDULABLE_FLUSH_PERIOD)
        return min(times) if times else None

    # Failed attempts

    def add_unschedulable_if_not_present(self, qpi: QueuedPodInfo) -> None:
        """Back from a failed attempt: replay the events it missed to pick where it waits."""
        uid = qpi.pod_info.uid
        try:
            if uid in self._in_active or uid in self._in_backoff or uid in self.unschedulable_pods:
                return
            if qpi.unschedulable_plugins or qpi.pending_plugins:
                qpi.unschedulable_count += 1
                qpi.consecutive_errors_count = 0
            else:
                qpi.consecutive_errors_count += 1
            qpi.timestamp = self._clock()
            qpi.backoff_expiration = None
            self._requeue(qpi, self._hint_for_in_flight_pod(qpi))
        finally:
            self.done(uid)

    def _hint_for_in_flight_pod(self, qpi: QueuedPodInfo) -> QueueingStrategy:
        if not qpi.unschedulable_plugins and not qpi.pending_plugins:
            return QueueingStrategy.AFTER_BACKOFF
        start = self._in_flight.get(qpi.pod_info.uid)
        if start is None:
            return QueueingStrategy.SKIP
        strategy = QueueingStrategy.SKIP
        for seq, event, old, new in self._in_flight_events:
            if seq < start:
                continue
            s = self._worth_requeuing(qpi, event, old, new)
            if s == QueueingStrategy.IMMEDIATELY:
                return s
            if s == QueueingStrategy.AFTER_BACKOFF:
                strategy = s
                if not qpi.pending_plugins:
                    return strategy
        return strategy

    def _requeue(self, qpi: QueuedPodInfo, strategy: QueueingStrategy) -> str:
        uid = qpi.pod_info.uid
        if strategy == QueueingStrategy.SKIP:
            if qpi.gated:
                self.gated_pods[uid] = qpi
                return "gated"
            self.unschedulable_pods[uid] = qpi
            return "unschedulable"
        if strategy == QueueingStrategy.AFTER_BACKOFF and self.is_pod_backing_off(qpi):
            self._add_to_backoff(qpi)
            return "backoff"
        return "active" if self._move_to_active(qpi) else "gated"

    def _worth_requeuing(self, qpi: QueuedPodInfo, event: ClusterEvent, old: Any, new: Any) -> QueueingStrategy:
        """isPodWorthRequeuing: ask the hints of the plugins that rejected (or gate) the pod."""
        if qpi.gated:
            rejectors = {qpi.gating_plugin} if qpi.gating_plugin else set()
        else:
            rejectors = qpi.unschedulable_plugins | qpi.pending_plugins
        if not rejectors or event.resource == events.WILDCARD or EXTENDER_NAME in rejectors:
            return QueueingStrategy.AFTER_BACKOFF  # nothing says what an extender waits for: any event may help
        strategy = QueueingStrategy.SKIP
        for entry in self.hint_map.get(qpi.pod_info.scheduler_name, ()):
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

    # Cluster events

    def move_all_to_active_or_backoff_queue(
        self, event: ClusterEvent, old: Any = None, new: Any = None, pods: Iterable[QueuedPodInfo] | None = None
    ) -> None:
        """Offer an event to the unschedulable (and gated) pods; keep it for pods being scheduled now."""
        if not self.is_event_of_interest(event):
            return
        if self._in_flight:
            self._in_flight_events.append((next(self._event_seq), event, old, new))
        if pods is not None:
            candidates = list(pods)
        elif event.resource == events.WILDCARD:
            candidates = [*self.unschedulable_pods.values(), *self.gated_pods.values()]
        else:
            # Only pods that a plugin registered for this event rejected (or gates) can move.
            interested = self._plugins_interested_in(event)
            candidates = [
                q
                for q in self.unschedulable_pods.values()
                if not (q.unschedulable_plugins or q.pending_plugins)
                or not interested.isdisjoint(q.unschedulable_plugins)
                or not interested.isdisjoint(q.pending_plugins)
            ]
            if not interested.isdisjoint(self._gating_seen):
                candidates.extend(q for q in self.gated_pods.values() if q.gating_plugin in interested)
        for qpi in candidates:
            strategy = self._worth_requeuing(qpi, event, old, new)
            if strategy == QueueingStrategy.SKIP:
                continue
            uid = qpi.pod_info.uid
            if qpi.gated:
                if self.gated_pods.get(uid) is not qpi:
                    continue
                del self.gated_pods[uid]
            else:
                if self.unschedulable_pods.get(uid) is not qpi:
                    continue
                del self.unschedulable_pods[uid]
            self._requeue(qpi, strategy)

    def assigned_pod_added(self, pod: PodInfo) -> None:
        self.move_all_to_active_or_backoff_queue(ClusterEvent(events.ASSIGNED_POD, events.ADD), None, pod)

    def assigned_pod_updated(self, old: PodInfo, new: PodInfo, action: int) -> None:
        """A scale-down may help any pod; other updates only pods with terms that reach across nodes."""
        event = ClusterEvent(events.ASSIGNED_POD, action)
        if action & events.UPDATE_POD_SCALE_DOWN:
            self.move_all_to_active_or_backoff_queue(event, old, new)
        else:
            self.move_all_to_active_or_backoff_queue(event, old, new, self._with_cross_topology_term(new))

    def _with_cross_topology_term(self, pod: PodInfo) -> list[QueuedPodInfo]:
        out = []
        for qpi in self.unschedulable_pods.values():
            pi = qpi.pod_info
            if names.POD_TOPOLOGY_SPREAD in qpi.unschedulable_plugins and pi.namespace == pod.namespace:
                out.append(qpi)
            elif any(t.matches(pod, None) for t in pi.required_affinity_terms):
                out.append(qpi)
        return out

    # Updates of pending pods

    def update(self, old: PodInfo, new: PodInfo) -> None:
        uid = new.uid
        changes = events.split_pod_update(events.pod_update_action(old, new))
        if uid in self._in_flight:
            for action in changes:
                self._in_flight_events.append(
                    (next(self._event_seq), ClusterEvent(events.UNSCHEDULED_POD, action), old, new)
                )
            return
        qpi = self._in_active.get(uid)
        if qpi is not None:
            qpi.pod_info = new
            self._push_active(qpi)
            self.nominator.update_nominated_pod(old, new)
            return
        qpi = self._in_backoff.get(uid)
        if qpi is not None:
            qpi.pod_info = new
            self.nominator.update_nominated_pod(old, new)
            return
        qpi = self.unschedulable_pods.get(uid) or self.gated_pods.get(uid)
        if qpi is not None:
            qpi.pod_info = new
            self.nominator.update_nominated_pod(old, new)
            for action in changes:
                strategy = self._worth_requeuing(qpi, ClusterEvent(events.UNSCHEDULED_POD, action), old, new)
                if strategy != QueueingStrategy.SKIP:
                    (self.gated_pods if qpi.gated else self.unschedulable_pods).pop(uid, None)
                    self._requeue(qpi, strategy)
                    return
            return
        self.add(new)

    def delete(self, pod: PodInfo) -> None:
        uid = pod.uid
        self._in_active.pop(uid, None)
        self._active_entry.pop(uid, None)
        self._in_backoff.pop(uid, None)
        self._backoff_entry.pop(uid, None)
        self.unschedulable_pods.pop(uid, None)
        self.gated_pods.pop(uid, None)
        self.nominator.delete_nominated_pod_if_exists(pod)

    def activate(self, pods: Iterable[PodInfo]) -> None:
        """PodsToActivate: straight to activeQ from wherever the pod waits (gates still apply)."""
        for pod in pods:
            uid = pod.uid
            qpi = self.unschedulable_pods.pop(uid, None) or self._in_backoff.pop(uid, None)
            self._backoff_entry.pop(uid, None)
            if qpi is None:
                qpi = self.gated_pods.pop(uid, None)
            if qpi is not None:
                self._move_to_active(qpi)

    # Introspection

    def pending_pods(self) -> dict[str, list[QueuedPodInfo]]:
        backoff = list(self._in_backoff.values())
        return {
            "active": list(self._in_active.values()),
            "backoff": backoff,
            "unschedulable": list(self.unschedulable_pods.values()),
            "gated": list(self.gated_pods.values()),
        }

    def sizes(self) -> dict[str, int]:
        """How many pods each sub-queue holds, by upstream's queue label (the pending_pods gauge)."""
        return {
            "active": len(self._in_active),
            "backoff": len(self._in_backoff),
            "unschedulable": len(self.unschedulable_pods),
            "gated": len(self.gated_pods),
        }

    def has_active_or_backoff(self) -> bool:
        return bool(self._in_active or self._in_backoff)
