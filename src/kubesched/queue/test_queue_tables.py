"""Table cases ported from upstream's backoff_queue_test.go and scheduling_queue_test.go (Test_InFlightPods)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from kubesched.clock import VirtualClock
from kubesched.framework import events
from kubesched.framework.interface import ClusterEvent, QueueingHint
from kubesched.framework.plugins.queuesort.priority_sort import PrioritySort
from kubesched.framework.types import new_pod_info
from kubesched.queue.scheduling_queue import HintEntry, PriorityQueue, QueuedPodInfo
from kubesched_testing.wrappers import make_pod

NODE_ADD = ClusterEvent(events.NODE, events.ADD)
PV_ADD = ClusterEvent("PersistentVolume", events.ADD)
PV_UPDATE = ClusterEvent("PersistentVolume", events.UPDATE)
PVC_ADD = ClusterEvent("PersistentVolumeClaim", events.ADD)
CSI_NODE_UPDATE = ClusterEvent("CSINode", events.UPDATE)
ASSIGNED_POD_ADD = ClusterEvent(events.ASSIGNED_POD, events.ADD)
UNSCHEDULABLE_TIMEOUT = ClusterEvent(events.WILDCARD, events.ALL)


def queue_hint(pod: Any, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.QUEUE


def skip_hint(pod: Any, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.QUEUE_SKIP


def new_queue(clock: VirtualClock, hints: list[HintEntry] | None = None, **kw: Any) -> PriorityQueue:
    ps = PrioritySort()
    return PriorityQueue(
        ps.less,
        lambda pod: None,
        clock=clock,
        sort_key=ps.sort_key,
        hint_map={"default-scheduler": hints or []},
        **kw,
    )


def qpi(
    name: str, ts: float, *, prio: int = 0, unschedulable: int = 1, plugins: set[str] | None = None
) -> QueuedPodInfo:
    info = new_pod_info(make_pod(name).uid(name).priority(prio).obj())
    q = QueuedPodInfo(info, ts, 1, unschedulable_count=unschedulable)
    q.unschedulable_plugins = set(plugins or ())
    if not plugins:
        q.consecutive_errors_count, q.unschedulable_count = unschedulable, 0
    return q


# TestBackoffQueue_calculateBackoffDuration (nanoseconds there, seconds here; the doubling is the same).


@pytest.mark.parametrize(
    ("initial", "maximum", "count", "want"),
    [
        pytest.param(1, 32, 0, None, id="no backoff"),
        pytest.param(1, 32, 16, 32, id="normal"),
        pytest.param(1, 2**31 - 1, 32, 2**31 - 1, id="overflow_32bit"),
        pytest.param(1, 2**63 - 1, 64, 2**63 - 1, id="overflow_64bit"),
    ],
)
def test_calculate_backoff_duration(initial: int, maximum: int, count: int, want: int | None) -> None:
    q = new_queue(VirtualClock(), pod_initial_backoff=initial, pod_max_backoff=maximum, pop_from_backoff_q=False)
    got = q.backoff_time(qpi("p", 0.0, unschedulable=count, plugins={"plugin"}))
    assert got == (None if want is None else float(want))  # seconds as floats here


# TestBackoffQueue_popEachBackoffCompleted: pod0/pod1 rejected by a plugin, pod2/pod3 failed with an error.

NOW = 100.0
BACKOFF_PODS = {
    "pod0": (NOW - 2, {"plugin"}),
    "pod1": (NOW + 1, {"plugin"}),
    "pod2": (NOW - 2, None),
    "pod3": (NOW + 1, None),
}


def moved_to_active(q: PriorityQueue) -> list[str]:
    """Run the backoff flush and report which pods it moved, in order."""
    moved: list[str] = []
    original = q._move_to_active

    def record(item: QueuedPodInfo, *, from_backoff: bool = False) -> bool:
        moved.append(item.pod_info.name)
        return original(item, from_backoff=from_backoff)

    q._move_to_active = record  # type: ignore[method-assign,assignment]
    q.flush_backoff_q_completed()
    return moved


@pytest.mark.parametrize("pop_from_backoff_q", [True, False])
@pytest.mark.parametrize(
    ("in_backoff", "want"),
    [
        pytest.param([], [], id="Both queues empty, no pods moved to activeQ"),
        pytest.param(["pod0", "pod1"], ["pod0"], id="Pods only in backoffQ, some pods moved to activeQ"),
        pytest.param(["pod2", "pod3"], ["pod2"], id="Pods only in errorBackoffQ, some pods moved to activeQ"),
        pytest.param(["pod0", "pod1", "pod2", "pod3"], ["pod0", "pod2"], id="Pods in both queues, some moved"),
        pytest.param(["pod0", "pod2"], ["pod0", "pod2"], id="Pods in both queues, all pods moved to activeQ"),
        pytest.param(["pod1", "pod3"], [], id="Pods in both queues, no pods moved to activeQ"),
    ],
)
def test_pop_each_backoff_completed(in_backoff: list[str], want: list[str], pop_from_backoff_q: bool) -> None:
    clock = VirtualClock()
    clock.advance_to(NOW)
    q = new_queue(clock, pop_from_backoff_q=pop_from_backoff_q)
    for name in in_backoff:
        ts, plugins = BACKOFF_PODS[name]
        q._add_to_backoff(qpi(name, ts, plugins=plugins))
    assert moved_to_active(q) == want
    assert len(q.pending_pods()["backoff"]) == len(in_backoff) - len(want)


@pytest.mark.parametrize(
    ("pop_from_backoff_q", "want"),
    [
        pytest.param(True, ["pod5", "pod4", "pod2", "pod3"], id="same window: ordered by priority"),
        pytest.param(False, ["pod5", "pod4", "pod3", "pod2"], id="without PopFromBackoffQ: by expiry only"),
    ],
)
def test_backoff_queue_ordering(pop_from_backoff_q: bool, want: list[str]) -> None:
    clock = VirtualClock()
    clock.advance_to(NOW)  # aligned with the ordering window
    q = new_queue(clock, pop_from_backoff_q=pop_from_backoff_q)
    for name, prio, ts in [
        ("pod0", 1, NOW),
        ("pod1", 1, NOW - 1),
        ("pod2", 2, NOW - 2 + 0.001),
        ("pod3", 1, NOW - 2),
        ("pod4", 2, NOW - 2),
        ("pod5", 1, NOW - 3),
    ]:
        q._add_to_backoff(qpi(name, ts, prio=prio, plugins={"plugin"}))
    assert moved_to_active(q) == want


# Test_InFlightPods


@dataclass
class Action:
    event: ClusterEvent | None = None
    pop: str = ""
    create: str = ""
    enqueue: tuple[str, tuple[str, ...], tuple[str, ...]] | None = None  # (pod, unschedulable, pending)
    check: Callable[[PriorityQueue], None] | None = None


def pop(name: str) -> Action:
    return Action(pop=name)


def ev(e: ClusterEvent) -> Action:
    return Action(event=e)


def enqueue(name: str, *plugins: str, pending: tuple[str, ...] = ()) -> Action:
    return Action(enqueue=(name, plugins, pending))


def hints(*entries: tuple[ClusterEvent, str, Callable[..., QueueingHint]]) -> list[HintEntry]:
    return [HintEntry(plugin, e, fn) for e, plugin, fn in entries]


FOO_EVERYWHERE = hints(
    (PV_ADD, "fooPlugin1", queue_hint),
    (NODE_ADD, "fooPlugin1", queue_hint),
    (PVC_ADD, "fooPlugin1", queue_hint),
    (CSI_NODE_UPDATE, "fooPlugin1", queue_hint),
)

IN_FLIGHT_CASES: list[tuple[str, list[str], list[Action], list[HintEntry], dict[str, Any]]] = [
    (
        "Pod and interested events are registered in inFlightPods/inFlightEvents",
        ["targetpod"],
        [ev(PVC_ADD), pop("targetpod"), ev(PV_ADD), ev(PV_UPDATE)],
        hints((PV_ADD, "fooPlugin1", queue_hint)),
        {"in_flight": ["targetpod"], "events": [PV_ADD]},
    ),
    (
        "Pod, registered in inFlightPods, is enqueued back to backoffQ",
        ["targetpod", "targetpod2"],
        [ev(PVC_ADD), pop("targetpod"), ev(PV_ADD), pop("targetpod2"), ev(NODE_ADD), enqueue("targetpod")],
        FOO_EVERYWHERE[:3],
        {"backoff": ["targetpod"], "in_flight": ["targetpod2"], "events": [NODE_ADD]},
    ),
    (
        "All Pods registered in inFlightPods are enqueued back to activeQ",
        ["targetpod", "targetpod2"],
        [ev(PVC_ADD), pop("targetpod"), ev(PV_ADD), pop("targetpod2"), ev(NODE_ADD), enqueue("targetpod")]
        + [ev(CSI_NODE_UPDATE), enqueue("targetpod2")],
        FOO_EVERYWHERE,
        {"backoff": ["targetpod", "targetpod2"], "in_flight": [], "events": []},
    ),
    (
        "One intermediate Pod registered in inFlightPods is enqueued back to activeQ",
        ["targetpod", "targetpod2", "targetpod3"],
        [ev(PVC_ADD), pop("targetpod"), ev(PV_ADD), pop("targetpod2"), ev(NODE_ADD), pop("targetpod3")]
        + [ev(ASSIGNED_POD_ADD), enqueue("targetpod2")],
        hints(
            (PV_ADD, "fooPlugin1", queue_hint),
            (NODE_ADD, "fooPlugin1", queue_hint),
            (ASSIGNED_POD_ADD, "fooPlugin1", queue_hint),
        ),
        {
            "backoff": ["targetpod2"],
            "in_flight": ["targetpod", "targetpod3"],
            "events": [PV_ADD, NODE_ADD, ASSIGNED_POD_ADD],
        },
    ),
    (
        "events before popping Pod are ignored when Pod is enqueued back to queue",
        ["targetpod"],
        [ev(UNSCHEDULABLE_TIMEOUT), pop("targetpod"), ev(ASSIGNED_POD_ADD), enqueue("targetpod", "fooPlugin1")],
        hints((ASSIGNED_POD_ADD, "fooPlugin1", skip_hint)),
        {"unschedulable": ["targetpod"], "in_flight": [], "events": []},
    ),
    (
        "pod is enqueued to backoff if no failed plugin",
        ["targetpod"],
        [pop("targetpod"), ev(ASSIGNED_POD_ADD), enqueue("targetpod")],
        hints((ASSIGNED_POD_ADD, "fooPlugin1", queue_hint)),
        {"backoff": ["targetpod"], "in_flight": [], "events": []},
    ),
    (
        "pod is enqueued to unschedulable pod pool if no events that can make the pod schedulable",
        ["targetpod"],
        [pop("targetpod"), ev(NODE_ADD), enqueue("targetpod", "fooPlugin1")],
        hints((ASSIGNED_POD_ADD, "fooPlugin1", queue_hint)),
        {"unschedulable": ["targetpod"], "in_flight": [], "events": []},
    ),
    (
        "pod is enqueued to unschedulable pod pool because the failed plugin has a hint fn but it returns Skip",
        ["targetpod"],
        [pop("targetpod"), ev(ASSIGNED_POD_ADD), enqueue("targetpod", "fooPlugin1")],
        hints((ASSIGNED_POD_ADD, "fooPlugin1", skip_hint)),
        {"unschedulable": ["targetpod"], "in_flight": [], "events": []},
    ),
    (
        "pod is enqueued to activeQ because the Pending plugins has a hint fn and it returns Queue",
        ["targetpod"],
        [
            pop("targetpod"),
            ev(ASSIGNED_POD_ADD),
            enqueue("targetpod", "fooPlugin2", "fooPlugin3", pending=("fooPlugin1",)),
        ],
        hints(
            (ASSIGNED_POD_ADD, "fooPlugin3", skip_hint),
            (ASSIGNED_POD_ADD, "fooPlugin2", queue_hint),
            (ASSIGNED_POD_ADD, "fooPlugin1", queue_hint),
        ),
        {"active": ["targetpod"], "in_flight": [], "events": []},
    ),
    (
        "pod is enqueued to backoffQ because the failed plugin has a hint fn and it returns Queue",
        ["targetpod"],
        [pop("targetpod"), ev(ASSIGNED_POD_ADD), enqueue("targetpod", "fooPlugin1", "fooPlugin2")],
        hints((ASSIGNED_POD_ADD, "fooPlugin2", skip_hint), (ASSIGNED_POD_ADD, "fooPlugin1", queue_hint)),
        {"backoff": ["targetpod"], "in_flight": [], "events": []},
    ),
    (
        "pod is enqueued to activeQ because the pending plugin has a hint fn and it returns Queue for a concurrent "
        "event that was received while some other pod was in flight",
        ["targetpod", "targetpod2"],
        [pop("targetpod"), ev(NODE_ADD), pop("targetpod2"), ev(ASSIGNED_POD_ADD), enqueue("targetpod")]
        + [enqueue("targetpod2", "fooPlugin2", "fooPlugin3", pending=("fooPlugin1",))],
        hints(
            (ASSIGNED_POD_ADD, "fooPlugin3", skip_hint),
            (ASSIGNED_POD_ADD, "fooPlugin2", queue_hint),
            (ASSIGNED_POD_ADD, "fooPlugin1", queue_hint),
        ),
        {"active": ["targetpod2"], "backoff": ["targetpod"], "in_flight": [], "events": []},
    ),
    (
        "Pop is made twice for the same Pod, but the cleanup still happen correctly",
        ["targetpod", "targetpod2"],
        [ev(PVC_ADD), pop("targetpod"), ev(PV_ADD), pop("targetpod2"), Action(create="targetpod3")]
        + [pop("targetpod3"), ev(NODE_ADD), enqueue("targetpod"), ev(CSI_NODE_UPDATE), enqueue("targetpod2")]
        + [enqueue("targetpod3")],
        FOO_EVERYWHERE,
        {"backoff": ["targetpod", "targetpod2", "targetpod3"], "in_flight": [], "events": []},
    ),
]


@pytest.mark.parametrize(
    ("initial", "actions", "hint_entries", "want"),
    [c[1:] for c in IN_FLIGHT_CASES],
    ids=[c[0] for c in IN_FLIGHT_CASES],
)
def test_in_flight_pods(
    initial: list[str], actions: list[Action], hint_entries: list[HintEntry], want: dict[str, Any]
) -> None:
    clock = VirtualClock()
    q = new_queue(clock, hint_entries)
    pods = {}
    for name in [*initial, *(a.create for a in actions if a.create)]:
        pods[name] = new_pod_info(make_pod(name).uid(name).obj())
    popped: dict[str, QueuedPodInfo] = {}
    for name in initial:
        q.add(pods[name])
        clock.advance_to(clock.now + 1.0)
    for a in actions:
        if a.event is not None:
            q.move_all_to_active_or_backoff_queue(a.event, None, None)
        elif a.pop:
            got = q.pop()
            assert got is not None and got.pod_info.name == a.pop
            popped[a.pop] = got
        elif a.create:
            q.add(pods[a.create])
        elif a.enqueue is not None:
            name, unschedulable, pending = a.enqueue
            item = popped[name]
            item.unschedulable_plugins, item.pending_plugins = set(unschedulable), set(pending)
            q.add_unschedulable_if_not_present(item)
    in_flight = sorted(p.pod_info.name for p in popped.values() if p.pod_info.uid in q._in_flight)
    assert in_flight == want["in_flight"]
    assert [e for _, e, _, _ in q._in_flight_events] == want["events"]
    by_queue = q.pending_pods()
    for kind in ("active", "backoff", "unschedulable"):
        if kind in want:
            assert sorted(p.pod_info.name for p in by_queue[kind]) == want[kind]
