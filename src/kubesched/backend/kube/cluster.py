"""A real cluster as the scheduler's backend: informers fill the listers, writes go to the API server.

Reflector threads put events in an inbox; the scheduling loop drains it under the
scheduler lock, so the store, cache and queue change only between cycles, as
upstream's informer handlers change them under their own locks.
"""

from __future__ import annotations

import logging
import queue
import re
import socket
import threading
import time
from collections.abc import Callable, Iterable

from kubesched.api.object import Obj
from kubesched.backend.errors import ConflictError
from kubesched.backend.kube.api import (
    JSON,
    MERGE_PATCH,
    RETRYABLE,
    STRATEGIC_MERGE_PATCH,
    APIError,
    KubeAPI,
    micro_time,
    rfc3339,
)
from kubesched.backend.kube.dispatcher import (
    DELETE,
    EVENT,
    EVENT_SERIES,
    STATUS_PATCH,
    APICall,
    APIDispatcher,
    Batch,
)
from kubesched.backend.kube.events import EventSeries, EventSink
from kubesched.backend.kube.reflector import Backoff, FailureLog, Reflector
from kubesched.backend.kube.resources import BY_KIND, WATCHED, Resource
from kubesched.backend.pod_status import generation, status_patch
from kubesched.backend.store import ObjectStore, object_key
from kubesched.framework.types import PodInfo
from kubesched.klog import V

log = logging.getLogger(__name__)


# The API server's answer to a second binding of a bound pod names the node it is on.
_ASSIGNED = re.compile(r'is already assigned to node "([^"]*)"')
BINDING_RETRIES = 3  # bindings the server refused with 5xx/429 or that were surely not applied, before giving up
SERIES_SWEEP_EVERY = 30.0  # seconds between looks for event series to finish or refresh
UNKNOWN_BACKOFF = (0.2, 5.0)  # first and longest pause between read-backs of a binding with an unknown outcome


class ClusterStore(ObjectStore):
    """The informers' store: objects as the API server last reported them."""

    def __init__(
        self,
        api: KubeAPI,
        stop: threading.Event,
        *,
        resources: Iterable[Resource] = WATCHED.values(),
        backoff: Callable[[], Backoff] = Backoff,
        page_size: int = 500,
    ) -> None:
        super().__init__()
        self.inbox: queue.SimpleQueue[tuple[str, str, Obj | None, Obj | None]] = queue.SimpleQueue()
        self.wake = threading.Event()
        self.failures = FailureLog(api.host)  # one line for the informers that fail alike, not one each
        self.reflectors = [
            Reflector(api, r, self._enqueue, stop, backoff=backoff(), page_size=page_size, failures=self.failures)
            for r in resources
        ]
        self.events_applied = 0

    def _enqueue(self, kind: str, event: str, old: Obj | None, new: Obj | None) -> None:
        self.inbox.put((kind, event, old, new))
        # Rung only when not rung yet (Event.set takes a lock and notifies): the loop clears the doorbell before it
        # drains, so an event put while it is still set is drained after the clear.
        if not self.wake.is_set():
            self.wake.set()

    def start(self) -> None:
        for r in self.reflectors:
            r.start()

    def wait_for_cache_sync(self, stop: threading.Event, timeout: float | None = None) -> bool:
        """Every reflector has listed once (WaitForCacheSync); False when stopped or timed out first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for r in self.reflectors:
            while not r.synced.wait(0.1):
                if stop.is_set() or (deadline is not None and time.monotonic() > deadline):
                    return False
        return True

    def synced(self) -> bool:
        return all(r.synced.is_set() for r in self.reflectors)

    def drain(self, limit: int = 100_000) -> int:
        """Apply queued events to the store and hand them to the listeners (call under the scheduler lock)."""
        n = 0
        while n < limit:
            try:
                kind, event, old, new = self.inbox.get_nowait()
            except queue.Empty:
                break
            n += 1
            self.apply_event(kind, event, old, new)
        self.events_applied += n
        return n

    def apply_event(self, kind: str, event: str, old: Obj | None, new: Obj | None) -> None:
        """One watch event into the store, then to its listeners."""
        objects = self.objects[kind]
        if event == "DELETED":
            assert old is not None
            objects.pop(object_key(old), None)
        else:
            assert new is not None
            objects[object_key(new)] = new
        self._notify(kind, event, old, new)


class KubeClient:
    """The writes the scheduler and its plugins make, against the API server."""

    DELETES_REPORT_DONE = True  # delete_pod takes `done`: preemption waits for the deletions, as upstream

    def __init__(
        self, api: KubeAPI, dispatcher: APIDispatcher, *, instance: str = "", stop: threading.Event | None = None
    ) -> None:
        self.api = api
        self.dispatcher = dispatcher
        self.instance = instance or socket.gethostname()
        self.stop = stop or threading.Event()
        self.fenced = False  # set when leadership is lost: no more writes that decide placement
        self.bind_seconds = 0.0
        self.binds = 0
        self.event_series = EventSeries(time.monotonic, micro_time)
        self._events = Batch(EventSink(api, self.stop).write)  # queued events go out together
        self.wake: Callable[[], None] = lambda: None  # the scheduling loop's doorbell, after a callback changed state
        self._sweeper: threading.Thread | None = None

    def _pod_path(self, pod: PodInfo, sub: str = "") -> str:
        return BY_KIND["Pod"].path(pod.namespace, pod.name, sub)

    def bind(self, pod: PodInfo, node_name: str) -> None:
        """POST the Binding; its queued status patches give way to it, and a lost answer is read back."""
        if self.fenced:
            raise RuntimeError("not the leader any more: binding refused")
        start = time.perf_counter()
        try:
            # One stretch outside the scheduler lock for the hold, the POST (and any read-back) and the release:
            # every time a binding thread takes the lock back it waits on the scheduling loop, which holds it.
            with self.api.unlocked():
                self.dispatcher.hold(pod.uid)
                bound = False
                try:
                    self._bind_until_known(pod, node_name)
                    bound = True
                finally:
                    self.dispatcher.release(pod.uid, bound=bound)
        finally:  # under the scheduler lock again: binding threads add up one at a time
            self.bind_seconds += time.perf_counter() - start
            self.binds += 1

    def _bind_until_known(self, pod: PodInfo, node_name: str) -> None:
        """Return once the pod is bound to `node_name`; raise once it surely is not.

        A binding whose answer was lost may have been applied: forgetting the pod then
        would free room that is taken. So the pod stays assumed while it is read back;
        when it is still unbound, the binding is sent again (a second one for a pod
        bound to the same node is a 409 naming that node: success).
        """
        body = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
        }
        path = self._pod_path(pod, "binding")
        refused = 0
        uncertain = False  # a binding went out unanswered and no read since says the pod is unbound
        delay, longest = UNKNOWN_BACKOFF
        while True:
            try:
                self.api.request("POST", path, body=body, retries=0)
                return
            except APIError as err:
                if err.status == 409 and _assigned_node(err.message) == node_name:
                    return
                if err.conflict:
                    raise ConflictError(err.message) from err
                if not (err.unknown or err.status in RETRYABLE or err.status == 0):
                    raise
                uncertain = uncertain or err.unknown
                refused += 0 if err.unknown else 1
                if self.fenced or self.stop.is_set() or (not uncertain and refused > BINDING_RETRIES):
                    raise
                log.log(V(4), "binding %s to %s: %s; reading the pod back", pod.key, node_name, err)
            with self.api.unlocked():
                self.stop.wait(delay)
            delay = min(delay * 2, longest)
            where = self._read_back(pod)
            if where == node_name:
                return
            if where:
                raise ConflictError(f'pod {pod.name} is already assigned to node "{where}"')
            if where == "":
                uncertain = False

    def _read_back(self, pod: PodInfo) -> str | None:
        """The node the pod is bound to now ("" when unbound), or None when the server cannot say."""
        try:
            current = self.api.request("GET", self._pod_path(pod), retries=0)
        except APIError as err:
            if err.status == 404:
                raise ConflictError(f"pod {pod.key} is gone") from err
            return None
        if (current.get("metadata") or {}).get("uid") != pod.uid:
            raise ConflictError(f"pod {pod.key} was replaced (uid {pod.uid} is gone)")
        return str((current.get("spec") or {}).get("nodeName") or "")

    def apply_extender_binding(self, pod: PodInfo, node_name: str) -> None:
        """A binder extender wrote the binding to the API server itself; the informer will show it."""

    def patch_pod_status(self, pod: PodInfo, condition: Obj | None, nominated_node_name: str | None) -> None:
        """Queue a status patch with the condition and nomination that differ from what the pod has."""
        patch = status_patch(
            pod.obj.get("status") or {}, condition, nominated_node_name, rfc3339(), generation(pod.obj)
        )
        if not patch:
            return
        path = self._pod_path(pod, "status")
        seen = (pod.obj.get("metadata") or {}).get("resourceVersion")

        def run(payload: Obj) -> None:
            """Written only over the version the scheduler decided on; when the pod changed since, it is read
            first, and a pod bound meanwhile (by another binder) keeps its status."""
            meta = {"resourceVersion": seen} if seen else {}
            try:
                self.api.request(
                    "PATCH", path, body={"metadata": meta, "status": payload}, content_type=STRATEGIC_MERGE_PATCH
                )
                return
            except APIError as err:
                if err.status != 409 or not seen:
                    raise
            current = self.api.request("GET", self._pod_path(pod))
            if (current.get("metadata") or {}).get("uid") != pod.uid or (current.get("spec") or {}).get("nodeName"):
                return
            meta = {"resourceVersion": current["metadata"]["resourceVersion"]}
            self.api.request(
                "PATCH", path, body={"metadata": meta, "status": payload}, content_type=STRATEGIC_MERGE_PATCH
            )

        self.dispatcher.add(APICall(STATUS_PATCH, pod.uid, run, patch))

    def record_event(self, pod: PodInfo, kind: str, reason: str, action: str, note: str) -> None:
        """Send the event, or count it in its series (see events.py)."""
        controller = pod.scheduler_name or "default-scheduler"
        regarding = {"apiVersion": "v1", "kind": "Pod", "namespace": pod.namespace, "name": pod.name, "uid": pod.uid}
        rv = (pod.obj.get("metadata") or {}).get("resourceVersion")
        if rv:
            regarding["resourceVersion"] = rv
        event = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": f"{pod.name}.{time.time_ns():x}", "namespace": pod.namespace},
            "eventTime": micro_time(),
            "reportingController": controller,
            "reportingInstance": f"{controller}-{self.instance}",
            "action": action,
            "reason": reason,
            "type": kind,
            "note": note,
            "regarding": regarding,
        }
        self._start_sweeping()
        decision = self.event_series.record(event)
        if decision is None:
            return
        what, body = decision
        self.dispatcher.add(
            APICall(EVENT if what == "create" else EVENT_SERIES, body["metadata"]["name"], self._events, body)
        )

    def _start_sweeping(self) -> None:
        if self._sweeper is None:
            self._sweeper = threading.Thread(target=self._sweep_loop, name="event-series", daemon=True)
            self._sweeper.start()

    def _sweep_loop(self) -> None:
        while not self.stop.wait(SERIES_SWEEP_EVERY):
            for event in self.event_series.sweep():
                self.dispatcher.add(APICall(EVENT_SERIES, event["metadata"]["name"], self._events, event))

    def delete_pod(
        self, pod: PodInfo, condition: Obj | None = None, done: Callable[[bool], None] | None = None
    ) -> None:
        """Preemption: mark the victim DisruptionTarget, then delete it (only if it is still that pod).

        `done` hears, under the scheduler lock, whether the calls went through (a pod already gone counts).
        """
        pod_path, status_path = self._pod_path(pod), self._pod_path(pod, "status")
        patch = None
        if condition is not None:
            written = dict(condition, lastTransitionTime=rfc3339())
            if generation(pod.obj):
                written["observedGeneration"] = generation(pod.obj)
            patch = {"status": {"conditions": [written]}}

        def run(_: Obj) -> None:
            if patch is not None:
                self.api.request("PATCH", status_path, body=patch, content_type=STRATEGIC_MERGE_PATCH)
            try:
                self.api.request("DELETE", pod_path, body={"preconditions": {"uid": pod.uid}})
            except APIError as err:
                if err.status != 404:
                    raise

        on_done = None
        if done is not None:

            def on_done(ok: bool) -> None:
                lock = self.api.lock
                if lock is None:
                    done(ok)
                else:
                    with lock:
                        done(ok)
                self.wake()

        self.dispatcher.add(APICall(DELETE, pod.uid, run, on_done=on_done))

    def update(self, obj: Obj) -> Obj:
        """PUT a PersistentVolume or claim (volume binding's PreBind)."""
        ns, name = object_key(obj)
        return self._write("PUT", BY_KIND[obj["kind"]].path(ns, name), obj)

    def update_status(self, obj: Obj) -> Obj:
        """PUT an object's status subresource (a ResourceClaim's allocation and reservations)."""
        ns, name = object_key(obj)
        return self._write("PUT", BY_KIND[obj["kind"]].path(ns, name, "status"), obj)

    def get(self, kind: str, namespace: str, name: str) -> Obj | None:
        """GET one object from the API server (None when it is gone), to retry a write after a conflict."""
        try:
            obj: Obj = self.api.request("GET", BY_KIND[kind].path(namespace, name))
        except APIError as err:
            if err.status == 404:
                return None
            raise
        return obj

    def timestamp(self) -> str:
        return rfc3339()

    def create(self, obj: Obj) -> Obj:
        """POST an object (a ResourceClaim for a pod's extended resources)."""
        ns, _ = object_key(obj)
        return self._write("POST", BY_KIND[obj["kind"]].path(ns), obj)

    def delete(self, kind: str, namespace: str, name: str) -> Obj:
        return self._write("DELETE", BY_KIND[kind].path(namespace, name))

    def merge_status(self, kind: str, namespace: str, name: str, fields: Obj) -> Obj:
        """PATCH status fields (a pod's extendedResourceClaimStatus) with a JSON merge patch."""
        return self._write("PATCH", BY_KIND[kind].path(namespace, name, "status"), {"status": fields}, MERGE_PATCH)

    def _write(self, method: str, path: str, body: Obj | None = None, content_type: str = JSON) -> Obj:
        """A write whose 409/404 means the object moved on: the caller gets ConflictError, never a retry."""
        try:
            return self.api.request(method, path, body=body, content_type=content_type)
        except APIError as err:
            if err.conflict:
                raise ConflictError(err.message) from err
            raise


def _assigned_node(message: str) -> str | None:
    m = _ASSIGNED.search(message)
    return m.group(1) if m else None
