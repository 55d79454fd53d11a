"""Event series, as client-go's events.k8s.io broadcaster keeps them.

A pod that fails the same way on every retry would otherwise leave one Event
object per attempt. Events that agree on type, reason, action, reporter and the
object they regard (its resourceVersion included) are one series: the first is
created, the second patches `series` onto it, later ones only count in memory.
A series quiet for six minutes gets its final count written and is forgotten;
a live series has its count written every thirty minutes. The note is the first
occurrence's, as upstream's.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubesched.api.object import Obj

FINISH_AFTER = 6 * 60.0  # seconds without a repeat that end a series (finishTime)
REFRESH_EVERY = 30 * 60.0  # seconds between writes of a live series' count (refreshTime)


@dataclass
class _Entry:
    event: Obj
    first_seen: float
    last_seen: float
    last_written: float


def series_key(event: Obj) -> tuple[Any, ...]:
    regarding = event.get("regarding") or {}
    return (
        event.get("type"),
        event.get("action"),
        event.get("reason"),
        event.get("reportingController"),
        event.get("reportingInstance"),
        tuple(sorted(regarding.items())),
    )


class EventSeries:
    """Decides, per recorded event, what goes to the API server: a create, a series patch, or nothing."""

    def __init__(self, now: Callable[[], float], micro_time: Callable[[], str]) -> None:
        self._now = now
        self._micro_time = micro_time
        self._lock = threading.Lock()
        self._cache: dict[tuple[Any, ...], _Entry] = {}

    def record(self, event: Obj) -> tuple[str, Obj] | None:
        """("create", event) for a new event, ("series", event) for the first repeat, None for later repeats."""
        now = self._now()
        key = series_key(event)
        with self._lock:
            entry = self._cache.get(key)
            if entry is None:
                # A shallow copy: the series only ever adds its own `series` field to the cached event, so the
                # nested fields can be shared with the create that goes out (a deep copy cost more than the rest).
                self._cache[key] = _Entry(dict(event), now, now, now)
                return "create", event
            entry.last_seen = now
            series = entry.event.get("series")
            if series is not None:
                series["count"] += 1
                series["lastObservedTime"] = self._micro_time()
                return None
            entry.event["series"] = {"count": 2, "lastObservedTime": self._micro_time()}
            entry.last_written = now
            return "series", copy.deepcopy(entry.event)

    def sweep(self) -> list[Obj]:
        """Series to write now (ended ones, with their final count; live ones due a refresh); forgets ended ones."""
        now = self._now()
        due = []
        with self._lock:
            for key, entry in list(self._cache.items()):
                series = entry.event.get("series")
                if now - entry.last_seen >= FINISH_AFTER:
                    del self._cache[key]
                    if series is not None:
                        due.append(copy.deepcopy(entry.event))
                elif series is not None and now - entry.last_written >= REFRESH_EVERY:
                    entry.last_written = now
                    due.append(copy.deepcopy(entry.event))
        return due
