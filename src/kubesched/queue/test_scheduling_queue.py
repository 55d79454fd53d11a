"""The scheduling queue: backoff, sub-queues, queueing hints and in-flight events (scheduling_queue_test.go)."""

import pytest

from kubesched.clock import VirtualClock
from kubesched.framework import events
from kubesched.framework.interface import ClusterEvent, QueueingHint
from kubesched.framework.plugins.queuesort.priority_sort import PrioritySort
from kubesched.framework.status import Code, Status
from kubesched.framework.types import new_pod_info
from kubesched.queue.scheduling_queue import HintEntry, PriorityQueue, QueuedPodInfo
from kubesched_testing.wrappers import make_pod

NODE_ADD = ClusterEvent(events.NODE, events.ADD)
ASSIGNED_POD_DELETE = ClusterEvent(events.ASSIGNED_POD, events.DELETE)


def _queue(clock, hints=None, held=(), **kw):
    """`held`: names of pods a "Preempting" PreEnqueue plugin holds back (the set may change later)."""
    ps = PrioritySort()

    def pre_enqueue(pod):
        if pod.scheduling_gates:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "gated").with_plugin("SchedulingGates")
        if pod.name in held:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting").with_plugin("Preempting")
        return None

    hint_map = {"default-scheduler": hints or []}
    return PriorityQueue(ps.less, pre_enqueue, clock=clock, sort_key=ps.sort_key, hint_map=hint_map, **kw)


def _pod(name, priority=0, gates=()):
    w = make_pod(name).priority(priority)
    if gates:
        w = w.scheduling_gates(list(gates))
    return new_pod_info(w.obj())


def _fail(q, qpi, *plugins):
    qpi.unschedulable_plugins = set(plugins)
    q.add_unschedulable_if_not_present(qpi)


@pytest.mark.parametrize(
    ("unschedulable", "errors", "want"),
    [(1, 0, 1.0), (2, 0, 2.0), (3, 0, 4.0), (4, 0, 8.0), (5, 0, 10.0), (9, 0, 10.0), (5, 1, 1.0), (0, 2, 2.0)],
)
def test_backoff_counts_rejections_or_consecutive_errors(unschedulable, errors, want):
    q = _queue(VirtualClock())
    qpi = QueuedPodInfo(_pod("p"), 0.0, 0, unschedulable_count=unschedulable, consecutive_errors_count=errors)
    assert q.backoff_time(qpi) == want


def test_backoff_expiry_is_truncated_to_the_one_second_window():
    q = _queue(VirtualClock())
    qpi = QueuedPodInfo(_pod("p"), 10.7, 0, unschedulable_count=1)
    assert q.backoff_time(qpi) == 11.0


def test_no_backoff_without_attempts_or_with_max_zero():
    assert _queue(VirtualClock()).backoff_time(QueuedPodInfo(_pod("p"), 0.0, 0)) is None
    q = _queue(VirtualClock(), pod_max_backoff=0)
    assert q.backoff_time(QueuedPodInfo(_pod("p"), 0.0, 0, unschedulable_count=3)) is None


def test_pop_orders_by_priority_then_arrival():
    clock = VirtualClock()
    q = _queue(clock)
    for name, prio in (("low", 0), ("high", 10), ("low2", 0)):
        q.add(_pod(name, prio))
    assert [q.pop().pod_info.name for _ in range(3)] == ["high", "low", "low2"]
    assert q.pop() is None


def test_rejected_pod_waits_until_a_hint_says_queue():
    clock = VirtualClock()
    answers: list[QueueingHint] = []
    hints = [HintEntry("Fit", NODE_ADD, lambda pod, old, new: answers.pop(0))]
    q = _queue(clock, hints)
    q.add(_pod("p"))
    qpi = q.pop()
    _fail(q, qpi, "Fit")
    assert list(q.unschedulable_pods) == [qpi.pod_info.uid]
    answers.append(QueueingHint.QUEUE_SKIP)
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, object())
    assert list(q.unschedulable_pods) == [qpi.pod_info.uid]
    answers.append(QueueingHint.QUEUE)
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, object())
    assert q.pending_pods()["backoff"] == [qpi]  # still backing off at t=0 (expires at 1 s)
    assert q.pop() is qpi  # activeQ is empty: popped from backoffQ (SchedulerPopFromBackoffQ)


def test_events_of_plugins_that_did_not_reject_are_ignored():
    clock = VirtualClock()
    called: list[int] = []

    def other(pod: object, old: object, new: object) -> QueueingHint:
        called.append(1)
        return QueueingHint.QUEUE

    hints = [HintEntry("Other", NODE_ADD, other)]
    q = _queue(clock, hints)
    q.add(_pod("p"))
    _fail(q, q.pop(), "Fit")
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, object())
    assert not called and len(q.unschedulable_pods) == 1


def test_event_while_in_flight_requeues_the_pod_when_it_fails():
    clock = VirtualClock()
    hints = [HintEntry("Fit", NODE_ADD, None)]
    q = _queue(clock, hints)
    q.add(_pod("p"))
    qpi = q.pop()
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, object())  # arrives during the attempt
    _fail(q, qpi, "Fit")
    assert not q.unschedulable_pods
    assert q.pending_pods()["backoff"] == [qpi]


def test_pending_plugin_hint_queues_immediately():
    clock = VirtualClock()
    hints = [HintEntry("Fit", NODE_ADD, None)]
    q = _queue(clock, hints)
    q.add(_pod("p"))
    qpi = q.pop()
    qpi.pending_plugins = {"Fit"}
    q.add_unschedulable_if_not_present(qpi)
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, object())
    assert q.pending_pods()["active"] == [qpi]


def test_error_goes_to_error_backoff_and_is_not_popped_early():
    clock = VirtualClock()
    q = _queue(clock)
    q.add(_pod("p"))
    qpi = q.pop()
    q.add_unschedulable_if_not_present(qpi)  # no rejecting plugin: an error
    assert q.pop() is None
    # Expiry 1.0 lies in window [1, 2): upstream keeps the pod backing off until that window is over.
    assert q.next_error_backoff() == 2.0
    clock.advance_to(1.5)
    assert q.pop() is None
    clock.advance_to(2.0)
    assert q.pop() is qpi


def test_unschedulable_leftover_flush_after_five_minutes():
    clock = VirtualClock()
    q = _queue(clock, [HintEntry("Fit", NODE_ADD, None)])
    q.add(_pod("p"))
    _fail(q, q.pop(), "Fit")
    clock.advance_to(300.0)
    assert q.pop() is None  # 300 s is not over 5 minutes
    assert q.next_wakeup() == 330.0
    clock.advance_to(330.0)
    assert q.pop().pod_info.name == "p"


def test_gated_pod_enters_activeq_when_its_gates_are_removed():
    clock = VirtualClock()
    gates_hint = HintEntry(
        "SchedulingGates",
        ClusterEvent(events.UNSCHEDULED_POD, events.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
        lambda pod, old, new: QueueingHint.QUEUE,
    )
    q = _queue(clock, [gates_hint])
    gated = _pod("g", gates=("example.com/wait",))
    q.add(gated)
    assert q.pop() is None and len(q.gated_pods) == 1
    q.update(gated, _pod("g"))
    assert q.pop().pod_info.name == "g"


def test_delete_removes_the_pod_everywhere():
    clock = VirtualClock()
    q = _queue(clock)
    p = _pod("p")
    q.add(p)
    q.delete(p)
    assert q.pop() is None


def test_a_pod_on_its_way_to_backoffq_passes_pre_enqueue_first():
    """Pop takes pods out of backoffQ when activeQ is empty, so PreEnqueue runs on the way in (moveToBackoffQ).

    A gated pod moves on its gating plugin's events only, and then the plugins that rejected it
    in its last attempt decide, as upstream adds the gating plugin to the pod's rejectors.
    """
    held: set[str] = set()
    hints = [
        HintEntry("Fit", ClusterEvent(events.POD, events.DELETE), lambda pod, old, new: QueueingHint.QUEUE),
        HintEntry("Fit", NODE_ADD, lambda pod, old, new: QueueingHint.QUEUE),
        HintEntry("Preempting", ClusterEvent(events.POD, events.DELETE), lambda pod, old, new: QueueingHint.QUEUE_SKIP),
    ]
    q = _queue(VirtualClock(), hints, held)
    q.add(_pod("p"))
    qpi = q.pop()
    held.add("p")  # its PostFilter started evicting victims
    _fail(q, qpi, "Fit")
    q.move_all_to_active_or_backoff_queue(ASSIGNED_POD_DELETE, _pod("elsewhere"), None)
    assert q.pop() is None
    assert q.pending_pods()["gated"] == [qpi]
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, None)  # not an event the gating plugin waits for
    held.discard("p")
    assert q.pending_pods()["gated"] == [qpi]
    q.move_all_to_active_or_backoff_queue(ASSIGNED_POD_DELETE, _pod("victim"), None)
    assert q.pending_pods()["backoff"] == [qpi]
    assert q.pop() is qpi
