"""The async API dispatcher: one call per object in flight, and a binding outranks status patches."""

from __future__ import annotations

import threading
import time
from typing import Any

from kubesched.backend.kube.dispatcher import DELETE, EVENT, STATUS_PATCH, APICall, APIDispatcher


class Gate:
    """A call that blocks until opened, noting when it ran."""

    def __init__(self) -> None:
        self.opened = threading.Event()
        self.started = threading.Event()
        self.ran: list[str] = []

    def call(self, name: str) -> Any:
        def run(payload: dict[str, Any]) -> None:
            self.started.set()
            self.opened.wait(5)
            self.ran.append(name)

        return run


def record(log: list[str], name: str) -> Any:
    return lambda payload: log.append(name)


def test_hold_drops_the_queued_status_patch() -> None:
    d = APIDispatcher(workers=1)
    gate, ran = Gate(), list[str]()
    d.add(APICall(EVENT, "busy", gate.call("busy")))
    assert gate.started.wait(5)
    d.add(APICall(STATUS_PATCH, "pod-a", record(ran, "unschedulable"), {"conditions": []}))
    d.hold("pod-a")
    d.release("pod-a", bound=True)
    gate.opened.set()
    assert d.flush(5)
    assert ran == []


def test_patches_after_a_successful_binding_are_dropped_and_after_a_failed_one_kept() -> None:
    d = APIDispatcher(workers=2)
    ran: list[str] = []
    d.hold("bound")
    d.release("bound", bound=True)
    d.add(APICall(STATUS_PATCH, "bound", record(ran, "late"), {"nominatedNodeName": "n1"}))
    d.hold("failed")
    d.release("failed", bound=False)
    d.add(APICall(STATUS_PATCH, "failed", record(ran, "after failure"), {"conditions": []}))
    assert d.flush(5)
    assert ran == ["after failure"]


def test_hold_waits_for_the_call_in_flight() -> None:
    d = APIDispatcher(workers=2)
    gate = Gate()
    d.add(APICall(STATUS_PATCH, "pod-a", gate.call("patch"), {}))
    assert gate.started.wait(5)
    order: list[str] = []

    def bind() -> None:
        d.hold("pod-a")
        order.append("binding")

    holder = threading.Thread(target=bind)
    holder.start()
    time.sleep(0.2)
    assert order == []  # the binding may not start while the patch is on the wire
    gate.opened.set()
    holder.join(5)
    order.insert(0, *gate.ran)
    assert order == ["patch", "binding"]


def test_calls_queued_during_a_binding_wait_for_its_end() -> None:
    d = APIDispatcher(workers=2)
    ran: list[str] = []
    d.hold("pod-a")
    d.add(APICall(DELETE, "pod-a", record(ran, "delete")))
    d.add(APICall(EVENT, "other", record(ran, "other")))
    assert not d.flush(0.3)
    assert ran == ["other"]
    d.release("pod-a", bound=False)
    assert d.flush(5)
    assert ran == ["other", "delete"]


def test_one_call_in_flight_per_object() -> None:
    d = APIDispatcher(workers=4)
    active: dict[str, int] = {}
    overlap: list[str] = []
    lock = threading.Lock()

    def run_for(key: str) -> Any:
        def run(payload: dict[str, Any]) -> None:
            with lock:
                active[key] = active.get(key, 0) + 1
                if active[key] > 1:
                    overlap.append(key)
            time.sleep(0.01)
            with lock:
                active[key] -= 1

        return run

    for i in range(30):
        key = f"pod-{i % 3}"
        d.add(APICall(STATUS_PATCH if i % 2 else DELETE, key, run_for(key), {}))
        d.add(APICall(EVENT, key, run_for(key), {}))
    assert d.flush(10)
    assert overlap == []
