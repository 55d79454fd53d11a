"""Event series and their writing, as client-go's events.k8s.io broadcaster does both.

A pod that fails the same way on every retry would otherwise leave one Event
object per attempt. Events that agree on type, reason, action, reporter and the
object they regard (its resourceVersion included) are one series: the first is
created, the second patches `series` onto it, later ones only count in memory.
A series quiet for six minutes gets its final count written and is forgotten;
a live series has its count written every thirty minutes. The note is the first
occurrence's, as upstream's.

`EventSink` writes them, many in one pipelined exchange (every scheduled pod has
its Scheduled event: one thread hand-over for a batch, not one per event), with
the broadcaster's verdicts on failures.
"""

from __future__ import annotations

import copy
import logging
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from kubesched.api.object import Obj
from kubesched.backend.kube.api import RETRYABLE, STRATEGIC_MERGE_PATCH, APIError, Call, KubeAPI
from kubesched.backend.kube.resources import EVENT
from kubesched.klog import V

log = logging.getLogger(__name__)

FINISH_AFTER = 6 * 60.0  # seconds without a repeat that end a series (finishTime)
REFRESH_EVERY = 30 * 60.0  # seconds between writes of a live series' count (refreshTime)
MAX_TRIES = 12  # tries of one event before it is given up (maxTriesPerEvent)
RETRY_AFTER = 10.0  # seconds before another try, plus up to a quarter more at random (defaultSleepDuration)


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


class _Write:
    """One event on its way: the request it needs next, and what an answer to it means."""

    __slots__ = ("event", "patching", "tries", "written")

    def __init__(self, event: Obj) -> None:
        self.event = event
        self.patching = "series" in event  # a repeat patches its series onto the first occurrence first
        self.tries = 0
        self.written = False

    def call(self) -> Call:
        meta = self.event["metadata"]
        if self.patching:
            path = EVENT.path(meta["namespace"], meta["name"])
            return Call("PATCH", path, {"series": self.event["series"]}, STRATEGIC_MERGE_PATCH)
        body = self.event
        if "resourceVersion" in meta:  # a create carries none
            body = {**body, "metadata": {k: v for k, v in meta.items() if k != "resourceVersion"}}
        return Call("POST", EVENT.path(meta["namespace"]), body)

    def hear(self, answer: Obj | APIError | ValueError) -> Literal["done", "next", "retry"]:
        """ "done" (written or given up), "next" (another request at once) or "retry" (after a pause)."""
        if isinstance(answer, dict):
            self.written = True
            return "done"
        if isinstance(answer, ValueError):
            log.warning("Unable to construct event %s (will not retry!): %s", self.name, answer)
            return "done"
        if self.patching and answer.status == 404:  # the first occurrence is gone: create it, series and all
            self.patching = False
            return "next"
        if answer.status == 409 and answer.reason == "AlreadyExists":
            if "series" in self.event:  # created meanwhile: patch it on the next try
                self.patching = True
                return "retry"
            self.written = True  # an earlier try whose answer was lost went through
            log.log(V(5), "event %s exists already", self.name)
            return "done"
        if answer.status == 0 or answer.status in RETRYABLE:
            return "retry"
        log.warning("Server rejected event %s (will not retry!): %s", self.name, answer)
        return "done"

    @property
    def name(self) -> str:
        meta = self.event["metadata"]
        return f"{meta.get('namespace')}/{meta.get('name')}"


class EventSink:
    """Writes events as client-go's broadcaster records them, the events of one call in one pipelined exchange.

    A repeat is patched onto its first occurrence, which is created (series and all) when
    it is gone. A write that got no answer or that a busy server turned away (429, 5xx), or
    a series' create that found the event created meanwhile, is tried again after
    RETRY_AFTER, MAX_TRIES tries in all, and given up once `stop` is set (the broadcaster's
    context ended); any other refusal is final: the event is malformed or its namespace is
    gone. An event's name is fixed, so a create that was applied but whose answer was lost
    meets AlreadyExists when tried again: written once.
    """

    def __init__(self, api: KubeAPI, stop: threading.Event, *, retry_after: float = RETRY_AFTER) -> None:
        self.api = api
        self.stop = stop
        self.retry_after = retry_after

    def write(self, events: list[Obj]) -> list[bool]:
        """Write the events; whether each is on the API server now."""
        writes = [_Write(e) for e in events]
        now, later = writes, list[_Write]()
        while now or later:
            if not now:
                log.warning("Unable to write %d events (may retry after sleeping)", len(later))
                if self.stop.wait(self.retry_after * (1 + random.random() * 0.25)):
                    break  # stopping: the rest is given up, as the broadcaster's tries end with its context
                now, later = later, []
            answers = self.api.pipeline([w.call() for w in now])
            follow: list[_Write] = []
            for w, answer in zip(now, answers, strict=True):
                verdict = w.hear(answer)
                if verdict == "next":
                    follow.append(w)
                elif verdict == "retry":
                    w.tries += 1
                    if self.stop.is_set():
                        log.warning("Unable to write event %s (stopping): %s", w.name, answer)
                    elif w.tries < MAX_TRIES:
                        later.append(w)
                    else:
                        log.warning("Unable to write event %s (retry limit exceeded!): %s", w.name, answer)
            now = follow
        return [w.written for w in writes]
