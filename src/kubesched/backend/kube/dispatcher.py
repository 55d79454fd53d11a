"""Asynchronous API calls (SchedulerAsyncAPICalls, on by default in 1.34).

Status patches, events and preemption deletions leave the scheduling cycle at
once and go out from a few worker threads. Calls for the same object are kept
in one slot: a newer status patch merges into a queued one (conditions by type,
the last nominatedNodeName wins), and once a pod's deletion is queued its status
patches are dropped, as upstream's dispatcher skips calls an object no longer
needs. Events are never merged.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubesched.backend.pod_status import merge_conditions

log = logging.getLogger(__name__)

STATUS_PATCH = "pod_status_patch"
DELETE = "pod_deletion"
EVENT = "event"


@dataclass
class APICall:
    call_type: str
    key: str  # the object's uid (unique per event)
    run: Callable[[dict[str, Any]], None]
    payload: dict[str, Any] = field(default_factory=dict)


def merge_status(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Two status patches for one pod as one: conditions merge by type, other fields take the newer."""
    out = {**old, **new}
    if "conditions" in old and "conditions" in new:
        out["conditions"] = merge_conditions(old["conditions"], new["conditions"])
    return out


class APIDispatcher:
    def __init__(self, workers: int = 4, observe: Callable[[str, str, float], None] | None = None) -> None:
        self._cond = threading.Condition()
        self._order: deque[tuple[str, str]] = deque()
        self._pending: dict[tuple[str, str], APICall] = {}
        self._deleting: set[str] = set()
        self._busy = 0
        self._closed = False
        self.observe = observe
        self._threads = [
            threading.Thread(target=self._work, name=f"api-dispatcher-{i}", daemon=True) for i in range(workers)
        ]
        for t in self._threads:
            t.start()

    def pending(self) -> int:
        with self._cond:
            return len(self._pending)

    def add(self, call: APICall) -> None:
        with self._cond:
            slot = (call.key, call.call_type)
            if call.call_type == STATUS_PATCH and call.key in self._deleting:
                return
            if call.call_type == DELETE:
                self._deleting.add(call.key)
                stale = (call.key, STATUS_PATCH)
                if self._pending.pop(stale, None) is not None:
                    self._order.remove(stale)
            queued = self._pending.get(slot)
            if queued is not None and call.call_type == STATUS_PATCH:
                queued.payload = merge_status(queued.payload, call.payload)
                return
            if queued is not None:
                return
            self._pending[slot] = call
            self._order.append(slot)
            self._cond.notify()

    def _work(self) -> None:
        while True:
            with self._cond:
                while not self._order and not self._closed:
                    self._cond.wait()
                if not self._order:
                    return
                slot = self._order.popleft()
                call = self._pending.pop(slot)
                self._busy += 1
            start = time.perf_counter()
            result = "success"
            try:
                call.run(call.payload)
            except Exception as err:  # the object may be gone; nothing else depends on this call
                result = "error"
                log.info("%s for %s failed: %s", call.call_type, call.key, err)
            finally:
                with self._cond:
                    self._busy -= 1
                    if call.call_type == DELETE:
                        self._deleting.discard(call.key)
                    self._cond.notify_all()
                if self.observe is not None:
                    self.observe(call.call_type, result, time.perf_counter() - start)

    def flush(self, timeout: float) -> bool:
        """Wait until every queued call went out; False if some are still queued after `timeout`."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._order or self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def close(self, timeout: float = 5.0) -> None:
        self.flush(timeout)
        with self._cond:
            self._closed = True
            self._cond.notify_all()
