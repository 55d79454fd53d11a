"""The scheduling queue (backend/queue/scheduling_queue.go, v1.34 with queueing hints on).

PriorityQueue routes pending pods between three places, each in its own module:
activeQ (active_queue.py), where Pop takes pods in QueueSort order (and from podBackoffQ
when activeQ is empty); backoffQ (backoff_queue.py), for pods backing off after a
rejection or an error; and the unschedulable pool (unschedulable_pods.py), for pods no
event has helped yet and pods a PreEnqueue plugin gates. Cluster events go to the
queueing hints (hints.py) of the plugins that rejected each pod; events that arrive
while a pod is being scheduled are replayed when it comes back, so none is lost.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable
from functools import cmp_to_key
from typing import Any, Protocol, TypeVar, cast

from kubesched.framework import events
from kubesched.framework.interface import ClusterEvent, MetricsRecorder
from kubesched.framework.status import Status
from kubesched.framework.types import PodInfo
from kubesched.queue.active_queue import ActiveQueue
from kubesched.queue.backoff_queue import DEFAULT_POD_INITIAL_BACKOFF, DEFAULT_POD_MAX_BACKOFF, BackoffQueue
from kubesched.queue.hints import HintEntry, QueueingHintMap, QueueingHints, QueueingStrategy
from kubesched.queue.nominator import Nominator
from kubesched.queue.queued_pod_info import QueuedPodInfo
from kubesched.queue.unschedulable_pods import DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION, UnschedulablePods

__all__ = ["HintEntry", "PriorityQueue", "QueuedPodInfo", "QueueingHintMap", "SchedulingQueue"]


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


Lesser = Callable[[Any, Any], bool]
QUEUE_NAMES = ("active", "backoff", "unschedulable", "gated")  # upstream's queue labels, in size_tuple() order
Op = TypeVar("Op", bound=Callable[..., Any])


def counted(event: str | None) -> Callable[[Op], Op]:
    """Pods that arrive in a sub-queue during this operation count under `event` in the queue's recorder.

    None: the operation's first argument is the ClusterEvent, and its label is used.
    """

    def wrap(op: Op) -> Op:
        @functools.wraps(op)
        def recorded(q: PriorityQueue, *args: Any, **kwargs: Any) -> Any:
            if q.metrics is None:
                return op(q, *args, **kwargs)
            before = q.size_tuple()
            result = op(q, *args, **kwargs)
            after = q.size_tuple()
            if after != before:  # most operations (a bound pod's confirmation) add no pod to any sub-queue
                label = event if event is not None else events.event_label(args[0])
                for name, n, was in zip(QUEUE_NAMES, after, before, strict=True):
                    if n > was:
                        q.metrics.observe_queue_incoming(name, label, n - was)
            return result

        return cast(Op, recorded)

    return wrap


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
        nominator: Nominator | None = None,
        metrics: MetricsRecorder | None = None,
    ) -> None:
        self._clock = clock
        self._pre_enqueue = pre_enqueue
        if sort_key is None:
            sort_key = cmp_to_key(lambda a, b: -1 if less(a, b) else (1 if less(b, a) else 0))
        self._hints = QueueingHints(hint_map or {})
        self._active_q = ActiveQueue(sort_key)
        self._backoff_q = BackoffQueue(clock, sort_key, pod_initial_backoff, pod_max_backoff, pop_from_backoff_q)
        self._unschedulable = UnschedulablePods(pod_max_in_unschedulable_pods_duration)
        self.unschedulable_pods = self._unschedulable.pods
        self.gated_pods = self._unschedulable.gated
        self._seq = itertools.count()
        self.scheduling_cycle = 0
        # Given when the profiles' handles, built before the queue, must hold the same one.
        self.nominator = nominator if nominator is not None else Nominator()
        self.metrics = metrics  # counts pods entering each queue, when someone scrapes the metrics

    @property
    def _in_flight(self) -> dict[str, int]:
        return self._active_q.in_flight

    @property
    def _in_flight_events(self) -> list[tuple[int, ClusterEvent, Any, Any]]:
        return self._active_q.in_flight_events

    def is_event_of_interest(self, event: ClusterEvent) -> bool:
        return self._hints.is_event_of_interest(event)

    # Adding and popping

    def _passes_pre_enqueue(self, qpi: QueuedPodInfo) -> bool:
        """runPreEnqueuePlugins: a rejected pod is parked with the gated pods."""
        s = self._pre_enqueue(qpi.pod_info)
        if s is not None and not s.is_success():
            self._unschedulable.gate(qpi, s.plugin)
            return False
        return True

    def _move_to_active(self, qpi: QueuedPodInfo, *, from_backoff: bool = False) -> bool:
        """activeQ, past PreEnqueue; a pod out of backoffQ passed it on the way in (PopFromBackoffQ)."""
        if not (from_backoff and self._backoff_q.pop_from_backoff_q) and not self._passes_pre_enqueue(qpi):
            return False
        self._unschedulable.release(qpi)
        if qpi.initial_attempt_timestamp is None:
            qpi.initial_attempt_timestamp = self._clock()
        self._active_q.push(qpi)
        self.nominator.add_nominated_pod(qpi.pod_info)
        return True

    @counted("PodAdd")
    def add(self, pod: PodInfo) -> None:
        self._move_to_active(QueuedPodInfo(pod, self._clock(), next(self._seq)))

    def pop(self) -> QueuedPodInfo | None:
        """The next pod to schedule, or None when activeQ (and podBackoffQ) is empty."""
        self.flush_backoff_q_completed()
        self.flush_unschedulable_pods_leftover()
        qpi = self._active_q.pop()
        if qpi is None and self._backoff_q.pop_from_backoff_q:
            qpi = self._backoff_q.pop()
        if qpi is None:
            return None
        qpi.attempts += 1
        qpi.backoff_expiration = None
        self.scheduling_cycle += 1
        self._active_q.move_to_in_flight(qpi.pod_info.uid)
        return qpi

    def pop_specific_pod(self, pod: PodInfo) -> QueuedPodInfo | None:
        """PopSpecificPod: the pod out of wherever it waits, through activeQ, as `pop` takes one (None when the
        queue does not hold it, or PreEnqueue keeps it out): a pod group's members join the popped one's cycle."""
        self._activate_one(pod.uid)
        qpi = self._active_q.pods.get(pod.uid)
        if qpi is None:
            return None
        self._active_q.delete(pod.uid)
        qpi.attempts += 1
        qpi.backoff_expiration = None
        self.scheduling_cycle += 1
        self._active_q.move_to_in_flight(pod.uid)
        return qpi

    def done(self, uid: str) -> None:
        """The pod's scheduling attempt is over: forget the events kept for it."""
        self._active_q.done(uid)

    # Backoff and the periodic flushes

    def backoff_time(self, qpi: QueuedPodInfo) -> float | None:
        return self._backoff_q.backoff_time(qpi)

    def is_pod_backing_off(self, qpi: QueuedPodInfo) -> bool:
        return self._backoff_q.is_pod_backing_off(qpi)

    def _add_to_backoff(self, qpi: QueuedPodInfo) -> bool:
        """moveToBackoffQ. Pop may take a pod straight out of backoffQ (PopFromBackoffQ), so PreEnqueue runs here,
        as upstream's does: a preemptor whose victims are still being evicted must not slip out that way.
        """
        if self._backoff_q.pop_from_backoff_q and not self._passes_pre_enqueue(qpi):
            return False
        self._unschedulable.release(qpi)
        self._backoff_q.add(qpi)
        return True

    @counted("BackoffComplete")
    def flush_backoff_q_completed(self) -> None:
        for qpi in self._backoff_q.pop_all_backoff_completed():
            self._move_to_active(qpi, from_backoff=True)

    @counted("UnschedulableTimeout")
    def flush_unschedulable_pods_leftover(self) -> None:
        """The 30 s ticker: pods unschedulable for over 5 minutes go back with UnschedulableTimeout."""
        for qpi in self._unschedulable.pop_leftover(self._clock()):
            self._requeue(qpi, QueueingStrategy.AFTER_BACKOFF)

    def next_error_backoff(self) -> float | None:
        """When the first pod in error backoff can be retried."""
        return self._backoff_q.next_error_backoff()

    def next_wakeup(self) -> float | None:
        """When the queue changes by itself: an error backoff ending, or the leftover flush."""
        due = (
            self.next_error_backoff(),
            self._backoff_q.next_backoff_completed(),
            self._unschedulable.next_leftover_flush(),
        )
        times = [t for t in due if t is not None]
        return min(times) if times else None

    # Failed attempts

    @counted("ScheduleAttemptFailure")
    def add_unschedulable_if_not_present(self, qpi: QueuedPodInfo) -> None:
        """Back from a failed attempt: replay the events it missed to pick where it waits."""
        uid = qpi.pod_info.uid
        try:
            if uid in self._active_q or uid in self._backoff_q or uid in self.unschedulable_pods:
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
        missed = self._active_q.cluster_events_for_pod(qpi.pod_info.uid)
        if missed is None:
            return QueueingStrategy.SKIP
        return self._hints.strategy_for_missed_events(qpi, missed)

    def _requeue(self, qpi: QueuedPodInfo, strategy: QueueingStrategy) -> str:
        if strategy == QueueingStrategy.SKIP:
            self._unschedulable.add(qpi)
            return "gated" if qpi.gated else "unschedulable"
        if strategy == QueueingStrategy.AFTER_BACKOFF and self.is_pod_backing_off(qpi):
            return "backoff" if self._add_to_backoff(qpi) else "gated"
        return "active" if self._move_to_active(qpi) else "gated"

    # Cluster events

    @counted(None)
    def move_all_to_active_or_backoff_queue(
        self, event: ClusterEvent, old: Any = None, new: Any = None, pods: Iterable[QueuedPodInfo] | None = None
    ) -> None:
        """Offer an event to the unschedulable (and gated) pods; keep it for pods being scheduled now."""
        if not self.is_event_of_interest(event):
            return
        self._active_q.add_event_if_any_in_flight(event, old, new)
        if pods is not None:
            candidates = list(pods)
        elif event.resource == events.WILDCARD:
            candidates = self._unschedulable.candidates(None)
        else:
            # Only pods that a plugin registered for this event rejected (or gates) can move.
            candidates = self._unschedulable.candidates(self._hints.plugins_interested_in(event))
        for qpi in candidates:
            strategy = self._hints.worth_requeuing(qpi, event, old, new)
            if strategy != QueueingStrategy.SKIP and self._unschedulable.remove(qpi):
                self._requeue(qpi, strategy)

    def assigned_pod_added(self, pod: PodInfo) -> None:
        self.move_all_to_active_or_backoff_queue(ClusterEvent(events.ASSIGNED_POD, events.ADD), None, pod)

    def assigned_pod_updated(self, old: PodInfo, new: PodInfo, action: int) -> None:
        """A scale-down may help any pod; other updates only pods with terms that reach across nodes."""
        event = ClusterEvent(events.ASSIGNED_POD, action)
        if action & events.UPDATE_POD_SCALE_DOWN:
            self.move_all_to_active_or_backoff_queue(event, old, new)
        else:
            self.move_all_to_active_or_backoff_queue(event, old, new, self._unschedulable.with_cross_topology_term(new))

    # Updates of pending pods

    @counted("PodUpdate")
    def update(self, old: PodInfo, new: PodInfo) -> None:
        uid = new.uid
        changes = events.split_pod_update(events.pod_update_action(old, new))
        in_flight_events = (ClusterEvent(events.UNSCHEDULED_POD, action) for action in changes)
        if self._active_q.add_events_if_pod_in_flight(uid, in_flight_events, old, new):
            return
        qpi = self._active_q.get(uid)
        if qpi is not None:
            qpi.pod_info = new
            self._active_q.push(qpi)
            self.nominator.update_nominated_pod(old, new)
            return
        qpi = self._backoff_q.get(uid)
        if qpi is not None:
            qpi.pod_info = new
            self.nominator.update_nominated_pod(old, new)
            return
        qpi = self._unschedulable.get(uid)
        if qpi is not None:
            qpi.pod_info = new
            self.nominator.update_nominated_pod(old, new)
            for action in changes:
                strategy = self._hints.worth_requeuing(qpi, ClusterEvent(events.UNSCHEDULED_POD, action), old, new)
                if strategy != QueueingStrategy.SKIP:
                    self._unschedulable.remove(qpi)
                    self._requeue(qpi, strategy)
                    return
            return
        self.add(new)

    def delete(self, pod: PodInfo) -> None:
        uid = pod.uid
        self._active_q.delete(uid)
        self._backoff_q.delete(uid)
        self._unschedulable.delete(uid)
        self.nominator.delete_nominated_pod_if_exists(pod)

    @counted("ForceActivate")
    def activate(self, pods: Iterable[PodInfo]) -> None:
        """PodsToActivate: straight to activeQ from wherever the pod waits (gates still apply, out of backoffQ
        as they did on its way in)."""
        for pod in pods:
            self._activate_one(pod.uid)

    def _activate_one(self, uid: str) -> None:
        qpi = self._unschedulable.take(uid)
        from_backoff = False
        if qpi is None:
            qpi = self._backoff_q.delete(uid)
            from_backoff = qpi is not None
        if qpi is None:
            qpi = self.gated_pods.pop(uid, None)
        if qpi is not None:
            self._move_to_active(qpi, from_backoff=from_backoff)

    # Introspection

    def pending_pods(self) -> dict[str, list[QueuedPodInfo]]:
        return {
            "active": list(self._active_q.pods.values()),
            "backoff": list(self._backoff_q.pods.values()),
            "unschedulable": list(self.unschedulable_pods.values()),
            "gated": list(self.gated_pods.values()),
        }

    def sizes(self) -> dict[str, int]:
        """How many pods each sub-queue holds, by upstream's queue label (the pending_pods gauge)."""
        return dict(zip(QUEUE_NAMES, self.size_tuple(), strict=True))

    def size_tuple(self) -> tuple[int, int, int, int]:
        """sizes() in QUEUE_NAMES order, without a dict: taken twice by every counted operation."""
        return len(self._active_q), len(self._backoff_q), len(self.unschedulable_pods), len(self.gated_pods)

    def has_active_or_backoff(self) -> bool:
        return bool(self._active_q.pods or self._backoff_q.pods)
