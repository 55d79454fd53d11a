"""Time for the scheduler: a virtual clock with timers, so whole cluster lives play without sleeping.

Everything that upstream does on a goroutine after a delay (backoff expiry, the
periodic queue flushes, Permit timeouts, binding that takes time, asynchronous
preemption) is a timer here. The simulator advances the clock from timer to timer
whenever the scheduler has nothing to pop, so an hour of scenario costs only the
scheduling work in it.
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

# Virtual time 0 as a date: the embedded cluster's timestamps and the API server stand-in's defaults share it.
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass(order=True, slots=True)
class Timer:
    when: float
    seq: int
    fn: Callable[[], None] = field(compare=False)
    cancelled: bool = field(default=False, compare=False)

    def cancel(self) -> None:
        self.cancelled = True


class VirtualClock:
    """Seconds since the simulation started; timers fire in (time, creation) order."""

    def __init__(self, start: float = 0.0) -> None:
        self.now = start
        self._timers: list[Timer] = []
        self._seq = itertools.count()

    def __call__(self) -> float:
        return self.now

    def call_at(self, when: float, fn: Callable[[], None]) -> Timer:
        timer = Timer(max(when, self.now), next(self._seq), fn)
        heapq.heappush(self._timers, timer)
        return timer

    def call_later(self, delay: float, fn: Callable[[], None]) -> Timer:
        return self.call_at(self.now + delay, fn)

    def next_timer(self) -> float | None:
        while self._timers and self._timers[0].cancelled:
            heapq.heappop(self._timers)
        return self._timers[0].when if self._timers else None

    def run_due(self) -> bool:
        """Fire every timer due at the current time (including ones they add); True if any fired."""
        fired = False
        while (when := self.next_timer()) is not None and when <= self.now:
            timer = heapq.heappop(self._timers)
            timer.fn()
            fired = True
        return fired

    def advance_to(self, when: float) -> None:
        self.now = max(self.now, when)

    def pending(self) -> int:
        return sum(1 for t in self._timers if not t.cancelled)


class WallClock(VirtualClock):
    """Real seconds (monotonic) for `kubesched run`: the same timers, but time moves by itself."""

    def __init__(self) -> None:
        self._origin = time.monotonic()
        self._timers = []
        self._seq = itertools.count()

    @property
    def now(self) -> float:  # type: ignore[override]  # read-only here: time moves by itself
        return time.monotonic() - self._origin

    def advance_to(self, when: float) -> None:
        """Nothing to do: a real clock is not pushed forward."""
