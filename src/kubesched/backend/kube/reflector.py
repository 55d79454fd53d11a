"""Reflectors: keep a local copy of one resource in step with the API server (client-go's Reflector).

List (paginated), then watch from the list's resourceVersion with bookmarks. A
stream that ends or breaks resumes from the last resourceVersion seen, so nothing
is lost or repeated; 410 Gone means that version was compacted away, so the
reflector lists again and delivers the difference from what it had (deletions
included) as events. Errors back off exponentially with jitter, as upstream's
reflector does (0.8 s doubling to 30 s), and never end the reflector's thread: a
dead reflector would never sync, and the scheduler would wait for it for ever.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from kubesched.api.object import Obj
from kubesched.backend.kube.api import APIError, KubeAPI, describe, failure_kind, forbidden_rule
from kubesched.backend.kube.resources import Resource
from kubesched.backend.store import Listener
from kubesched.klog import Message, V

log = logging.getLogger(__name__)


class Backoff:
    def __init__(self, initial: float = 0.8, cap: float = 30.0, jitter: float = 1.0) -> None:
        self.initial, self.cap, self.jitter = initial, cap, jitter
        self._next = initial

    def step(self) -> float:
        delay = self._next * (1 + random.random() * self.jitter)
        self._next = min(self.cap, self._next * 2)
        return min(delay, self.cap)

    def reset(self) -> None:
        self._next = self.initial


def _name(resource: Resource) -> str:
    """The resource as kubectl and RBAC rules name it: `pods`, `resourceslices.resource.k8s.io`."""
    group = resource.group_version.rpartition("/")[0]
    return resource.plural + (f".{group}" if group else "")


@dataclass
class _Failing:
    """How one informer last failed: the kind of failure, the error, and for a 403 the verb and resource."""

    kind: str
    err: BaseException
    refused: str


class FailureLog:
    """The list/watch failures of every informer of one client, one line per kind of failure per backoff.

    Upstream's reflectors each log "Failed to watch" on every failure: an untrusted
    certificate or a bad token makes eighteen lines a try, all saying the same. Here
    the first informer to fail a new way waits `grace` seconds for the others to
    fail too, then logs one line for every informer failing that way (for 403s,
    every verb and resource refused); that kind of failure is then quiet for the
    logging informer's backoff delay. An informer stops counting once it lists or
    watches again.
    """

    def __init__(self, server: str, *, grace: float = 0.3, clock: Callable[[], float] = time.monotonic) -> None:
        self.server = server
        self.grace = grace
        self.clock = clock
        self.lines = 0
        self._lock = threading.Lock()
        self._failing: dict[str, _Failing] = {}  # by resource name
        self._logging: set[str] = set()  # kinds whose line waits out the grace
        self._quiet_until: dict[str, float] = {}

    def failed(self, resource: Resource, verb: str, err: BaseException, delay: float, stop: threading.Event) -> None:
        """Note a failure; the caller waits `delay` before trying again. Logs (after the grace) unless quiet."""
        kind = failure_kind(err)
        name = _name(resource)
        refused = ""
        if kind == "forbidden":
            rule = forbidden_rule(err) if isinstance(err, APIError) else None
            refused = f"{rule[1]} {rule[2]}" if rule else f"{verb} {name}"
        with self._lock:
            self._failing[name] = _Failing(kind, err, refused)
            if kind in self._logging or self.clock() < self._quiet_until.get(kind, 0.0):
                return
            self._logging.add(kind)
        stopping = stop.wait(self.grace)
        with self._lock:
            self._logging.discard(kind)
            if stopping:  # a failure met while shutting down is no news
                return
            alike = [f for f in self._failing.values() if f.kind == kind]
            self._quiet_until[kind] = self.clock() + delay
            self.lines += 1
        log.error(
            Message(
                "Failed to watch",
                err=describe(alike[-1].err if alike else err, self.server, [f.refused for f in alike if f.refused]),
                informers=len(alike),
                retryIn=f"{delay:.1f}s",
            )
        )

    def recovered(self, resource: Resource) -> None:
        """The informer listed, or its watch delivered: it no longer counts as failing."""
        with self._lock:
            self._failing.pop(_name(resource), None)


class Gone(Exception):
    """The watch's resourceVersion is too old: list again."""


def _key(obj: Obj) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def list_all(
    api: KubeAPI, resource: Resource, page_size: int = 500, retries: int | None = None
) -> tuple[list[Obj], str]:
    """Every object of a resource (its field selector applied), page by page, and the list's resourceVersion."""
    query: dict[str, str] = {"limit": str(page_size)}
    if resource.field_selector:
        query["fieldSelector"] = resource.field_selector
    items: list[Obj] = []
    rv = ""
    while True:
        page = api.request("GET", resource.path(), query=query, retries=retries)
        meta = page.get("metadata") or {}
        rv = rv or str(meta.get("resourceVersion") or "")
        items.extend(page.get("items") or ())
        token = meta.get("continue")
        if not token:
            return items, rv
        query = {"limit": str(page_size), "continue": token}


class Reflector:
    def __init__(
        self,
        api: KubeAPI,
        resource: Resource,
        sink: Listener,
        stop: threading.Event,
        *,
        page_size: int = 500,
        watch_timeout: tuple[float, float] = (300.0, 600.0),
        backoff: Backoff | None = None,
        failures: FailureLog | None = None,
    ) -> None:
        self.api = api
        self.resource = resource
        self.sink = sink
        self.stop = stop
        self.page_size = page_size
        self.watch_timeout = watch_timeout
        self.backoff = backoff or Backoff()
        self.failures = failures or FailureLog(api.host)
        self.verb = "list"  # what the reflector is doing, for the failure it may meet
        self.items: dict[tuple[str, str], Obj] = {}
        self.resource_version = ""
        self.synced = threading.Event()
        self.relists = 0
        self._thread: threading.Thread | None = None

    def start(self) -> Reflector:
        self._thread = threading.Thread(target=self.run, name=f"reflector-{self.resource.plural}", daemon=True)
        self._thread.start()
        return self

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                if not self.resource_version:
                    self._list()
                self._watch()
                self.backoff.reset()
            except Gone:
                log.info(
                    "%s: watch resourceVersion %s expired; listing again", self.resource.plural, self.resource_version
                )
                self.resource_version = ""
            except Exception as err:  # any failure, even a bug, is retried: a dead reflector never syncs
                if self.stop.is_set():
                    return
                delay = self.backoff.step()
                log.log(V(4), "%s: %s failed", self.resource.plural, self.verb, exc_info=True)
                self.failures.failed(self.resource, self.verb, err, delay, self.stop)
                self.stop.wait(delay)

    def _prepare(self, obj: Obj) -> Obj:
        obj["kind"] = self.resource.kind
        obj.setdefault("apiVersion", self.resource.group_version)
        return obj

    def _list(self) -> None:
        self.verb = "list"
        items, rv = list_all(self.api, self.resource, self.page_size, retries=0)
        self.failures.recovered(self.resource)
        self._replace({_key(item): self._prepare(item) for item in items})
        self.resource_version = rv
        self.relists += 1
        self.synced.set()

    def _replace(self, fresh: dict[tuple[str, str], Obj]) -> None:
        """Deliver what changed between the old copy and a new list, deletions last."""
        kind = self.resource.kind
        old_items = self.items
        self.items = fresh
        for key, obj in fresh.items():
            old = old_items.get(key)
            if old is None:
                self.sink(kind, "ADDED", None, obj)
            elif (old.get("metadata") or {}).get("resourceVersion") != (obj.get("metadata") or {}).get(
                "resourceVersion"
            ):
                self.sink(kind, "MODIFIED", old, obj)
        for key, old in old_items.items():
            if key not in fresh:
                self.sink(kind, "DELETED", old, None)

    def _watch(self) -> None:
        self.verb = "watch"
        query = {"resourceVersion": self.resource_version, "allowWatchBookmarks": "true"}
        low, high = self.watch_timeout
        query["timeoutSeconds"] = str(int(random.uniform(low, high)))
        if self.resource.field_selector:
            query["fieldSelector"] = self.resource.field_selector
        kind = self.resource.kind
        delivered = False
        for event in self.api.watch(self.resource.path(), query, timeout=float(query["timeoutSeconds"]) + 30):
            if self.stop.is_set():
                return
            if not delivered:
                delivered = True
                self.failures.recovered(self.resource)
            etype = event.get("type")
            obj = event.get("object") or {}
            if etype == "ERROR":
                if obj.get("code") == 410:
                    raise Gone
                raise APIError(int(obj.get("code") or 0), str(obj.get("reason") or ""), str(obj.get("message") or ""))
            rv = str((obj.get("metadata") or {}).get("resourceVersion") or "")
            if etype == "BOOKMARK":
                self.resource_version = rv or self.resource_version
                continue
            obj = self._prepare(obj)
            key = _key(obj)
            old = self.items.get(key)
            if etype == "DELETED":
                if self.items.pop(key, None) is not None:
                    self.sink(kind, "DELETED", old, None)
            elif etype in ("ADDED", "MODIFIED"):
                self.items[key] = obj
                self.sink(kind, "ADDED" if old is None else "MODIFIED", old, obj)
            self.resource_version = rv or self.resource_version
