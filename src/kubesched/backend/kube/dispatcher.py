"""Asynchronous API calls (SchedulerAsyncAPICalls, on by default since 1.34).

Status patches, events and preemption deletions leave the scheduling cycle at
once and go out from a few worker threads. Calls for the same object are kept
in one slot: a newer status patch merges into a queued one (conditions by type,
the last nominatedNodeName wins), and once a pod's deletion is queued its status
patches are dropped, as upstream's dispatcher skips calls an object no longer
needs. Events are never merged, but queued ones go out together: a worker takes
up to MAX_BATCH calls that share a `Batch` and sends them in one exchange (one
pipelined write, events.py), one thread hand-over for many writes.

As upstream's dispatcher, one object has at most one call in flight, and a
binding outranks status patches: `hold` (at binding) drops the pod's queued
patches and waits for one in flight, so no `PodScheduled=False` computed before
the binding can land after it; once the binding succeeded, later patches for the
pod are dropped too (its status belongs to the kubelet now).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubesched.backend.pod_status import merge_conditions

log = logging.getLogger(__name__)

STATUS_PATCH = "pod_status_patch"
DELETE = "pod_deletion"
EVENT = "event"
EVENT_SERIES = "event_series"
BOUND_REMEMBERED = 100_000  # pods whose binding went through, remembered to drop late status patches
MAX_BATCH = 32  # calls one worker takes together; more queued wait for the next free worker, on its own connection


@dataclass(frozen=True, eq=False)
class Batch:
    """Calls that may go out together: `send` takes their payloads and says whether each went through."""

    send: Callable[[list[dict[str, Any]]], list[bool]]


@dataclass
class APICall:
    call_type: str
    key: str  # the object's uid (unique per event)
    run: Callable[[dict[str, Any]], None] | Batch  # a call alone (raises when it failed), or one of a batch
    payload: dict[str, Any] = field(default_factory=dict)
    on_done: Callable[[bool], None] | None = None  # told whether the call went through, once it ran or was dropped


def merge_status(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Two status patches for one pod as one: conditions merge by type, other fields take the newer."""
    out = {**old, **new}
    if "conditions" in old and "conditions" in new:
        out["conditions"] = merge_conditions(old["conditions"], new["conditions"])
    return out


class APIDispatcher:
    def __init__(self, workers: int = 4, observe: Callable[[str, str, float], None] | None = None) -> None:
        # One lock, two conditions: idle workers wait for work only, so a call's end wakes none of them (with
        # one condition each end woke every idle worker to find nothing); `hold` and `flush` wait for changes.
        lock = threading.Lock()
        self._ready = threading.Condition(lock)
        self._changed = threading.Condition(lock)
        self._order: deque[tuple[str, str]] = deque()
        self._pending: dict[tuple[str, str], APICall] = {}
        self._deleting: set[str] = set()
        self._in_flight: set[str] = set()
        self._held: set[str] = set()
        self._bound: OrderedDict[str, None] = OrderedDict()
        self._busy = 0
        self._closed = False
        self.observe = observe
        self._threads = [
            threading.Thread(target=self._work, name=f"api-dispatcher-{i}", daemon=True) for i in range(workers)
        ]
        for t in self._threads:
            t.start()

    def pending(self) -> int:
        with self._ready:
            return len(self._pending)

    def add(self, call: APICall) -> None:
        with self._ready:
            slot = (call.key, call.call_type)
            if call.call_type == STATUS_PATCH and (call.key in self._deleting or call.key in self._bound):
                return
            if call.call_type == DELETE:
                self._deleting.add(call.key)
                self._drop(call.key, STATUS_PATCH)
            queued = self._pending.get(slot)
            if queued is not None and call.call_type == STATUS_PATCH:
                queued.payload = merge_status(queued.payload, call.payload)
                return
            if queued is not None:
                if call.on_done is not None:
                    queued.on_done = _both(queued.on_done, call.on_done)
                return
            self._pending[slot] = call
            self._order.append(slot)
            self._ready.notify()

    def hold(self, key: str) -> None:
        """A binding for `key` starts: drop its queued status patch, wait out a call in flight, hold the rest."""
        with self._changed:
            self._held.add(key)
            self._drop(key, STATUS_PATCH)
            while key in self._in_flight:
                self._changed.wait()

    def release(self, key: str, *, bound: bool) -> None:
        """The binding ended; when it went through, status patches for the pod are stale from now on."""
        with self._ready:
            self._held.discard(key)
            if bound:
                self._drop(key, STATUS_PATCH)
                self._bound[key] = None
                if len(self._bound) > BOUND_REMEMBERED:
                    self._bound.popitem(last=False)
            if self._order:
                self._ready.notify()  # a call held back for the pod may go now
            self._changed.notify_all()

    def _drop(self, key: str, call_type: str) -> None:
        slot = (key, call_type)
        if self._pending.pop(slot, None) is not None:
            self._order.remove(slot)

    def _next(self) -> APICall | None:
        """The oldest queued call whose object has no call in flight and no binding under way."""
        for i, slot in enumerate(self._order):
            if slot[0] not in self._in_flight and slot[0] not in self._held:
                del self._order[i]
                return self._pending.pop(slot)
        return None

    def _joining(self, first: APICall) -> list[APICall]:
        """`first` and the queued calls of its batch that may go now, oldest first, up to MAX_BATCH."""
        calls = [first]
        keys = {first.key}
        kept: deque[tuple[str, str]] = deque()
        for slot in self._order:
            queued = self._pending[slot]
            if (
                len(calls) < MAX_BATCH
                and queued.run is first.run
                and slot[0] not in keys
                and slot[0] not in self._in_flight
                and slot[0] not in self._held
            ):
                calls.append(self._pending.pop(slot))
                keys.add(slot[0])
            else:
                kept.append(slot)
        self._order = kept
        return calls

    def _work(self) -> None:
        while True:
            with self._ready:
                call = self._next()
                while call is None:
                    if self._closed and not self._order:
                        return
                    self._ready.wait()
                    call = self._next()
                calls = self._joining(call) if isinstance(call.run, Batch) else [call]
                self._in_flight.update(c.key for c in calls)
                self._busy += 1
            start = time.perf_counter()
            went = [False] * len(calls)
            try:
                went = _run(calls)
            finally:
                elapsed = time.perf_counter() - start
                with self._ready:
                    self._busy -= 1
                    for c in calls:
                        self._in_flight.discard(c.key)
                        if c.call_type == DELETE:
                            self._deleting.discard(c.key)
                    self._changed.notify_all()
                for c, ok in zip(calls, went, strict=True):
                    if self.observe is not None:
                        self.observe(c.call_type, "success" if ok else "error", elapsed)
                    if c.on_done is not None:
                        c.on_done(ok)

    def flush(self, timeout: float) -> bool:
        """Wait until every queued call went out; False if some are still queued after `timeout`."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while self._order or self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left)
        return True

    def close(self, timeout: float = 5.0) -> None:
        self.flush(timeout)
        with self._ready:
            self._closed = True
            self._ready.notify_all()


def _run(calls: list[APICall]) -> list[bool]:
    """Run one call, or send a batch; whether each went through (a failure is logged: nothing depends on it)."""
    first = calls[0]
    try:
        if isinstance(first.run, Batch):
            return first.run.send([c.payload for c in calls])
        first.run(first.payload)
        return [True]
    except Exception as err:  # the object may be gone; nothing else depends on this call
        log.info("%s for %s failed: %s", first.call_type, ", ".join(c.key for c in calls), err)
        return [False] * len(calls)


def _both(first: Callable[[bool], None] | None, second: Callable[[bool], None]) -> Callable[[bool], None]:
    def done(ok: bool) -> None:
        if first is not None:
            first(ok)
        second(ok)

    return done
