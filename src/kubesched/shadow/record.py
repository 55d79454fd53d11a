"""`kubesched record`: a real cluster's starting state and what then happened to it, as a replayable trace.

The trace is one YAML file: the objects the scheduler reads as they stood once every
informer had listed (what `kubesched snapshot` writes), then a Scenario whose steps are
what the watches showed afterwards, at the seconds they showed it:

- pods created (unbound, as the cluster's scheduler found them; a pod created with a
  node keeps it) and deleted (finished pods leave the informers' view, so they count
  as deleted too);
- nodes added, removed, and changed where scheduling reads them: cordoned or
  uncordoned, tainted, relabelled, resized;
- pods relabelled or ungated;
- any other object the scheduler reads, created, changed (as a merge patch of its
  trace form: a claim bound, a volume's phase, a workload scaled, a budget's status)
  or deleted.

What the cluster's scheduler did is left out on purpose: bindings, conditions,
nominations, claims' allocations, and volume bindings it started (claims with a
selected node) are for the replay to work out. Workloads (ReplicaSets, StatefulSets,
ReplicationControllers) are kept without their pod template: spreading still sees
their selectors, and the simulator's controllers leave them alone, since every pod
they made is in the trace already.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TextIO

import yaml

from kubesched.api.object import Obj
from kubesched.api.volumes import ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER, ANN_SELECTED_NODE
from kubesched.backend.kube.api import load_configuration
from kubesched.backend.kube.reflector import FailureLog, Reflector
from kubesched.backend.kube.resources import SNAPSHOT, Resource
from kubesched.backend.kube.snapshot import clean
from kubesched.shadow.readonly import ReadOnlyAPI

log = logging.getLogger(__name__)

SCENARIO_API_VERSION = "kubesched.io/v1alpha1"  # simulator/scenario.py's
WORKLOADS = ("ReplicaSet", "StatefulSet", "ReplicationController")
# Node fields scheduling reads, as merge-patch paths.
NODE_FIELDS = (("metadata", "labels"), ("spec", "unschedulable"), ("spec", "taints"), ("status", "allocatable"))
IDLE_WAIT = 0.2


def _get(obj: Obj | None, path: tuple[str, str]) -> Any:
    return ((obj or {}).get(path[0]) or {}).get(path[1])


def node_patch(old: Obj, new: Obj) -> Obj:
    """A merge patch carrying the node fields scheduling reads that changed ({} when none did). Maps (labels,
    allocatable) name their removed keys with null, as a merge patch must to remove them."""
    patch: Obj = {}
    for path in NODE_FIELDS:
        before, after = _get(old, path), _get(new, path)
        if (before or None) != (after or None):
            patch.setdefault(path[0], {})[path[1]] = _map_patch(before, after) if after else None
    if "allocatable" in patch.get("status", {}):
        patch["status"]["capacity"] = _map_patch(_get(old, ("status", "capacity")), _get(new, ("status", "capacity")))
    return patch


def merge_diff(before: Any, after: Any) -> Any:
    """The JSON merge patch (RFC 7386) that turns `before` into `after`: maps key by key, a removed key null,
    anything else whole. Exact for documents without nulls, which is what the API server sends."""
    if not isinstance(before, dict) or not isinstance(after, dict):
        return after
    patch: Obj = {k: None for k in before if k not in after}
    for k, v in after.items():
        if k not in before:
            patch[k] = v
        elif before[k] != v:
            patch[k] = merge_diff(before[k], v)
    return patch


# What the cluster's scheduler writes, or sets off, on other kinds: the replay's own scheduler does it again.
_POD_FIELDS = (("metadata", "labels"), ("spec", "schedulingGates"))
_CLAIM_BINDING_ANNOTATIONS = (ANN_SELECTED_NODE, ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER)


def _scheduler_selected(claim: Obj | None) -> bool:
    return ANN_SELECTED_NODE in (((claim or {}).get("metadata") or {}).get("annotations") or {})


def _without_binding(claim: Obj) -> Obj:
    """A claim in trace form without what binding it writes (for a binding the scheduler started)."""
    meta = dict(claim.get("metadata") or {})
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in _CLAIM_BINDING_ANNOTATIONS}
    meta["annotations"] = annotations
    spec = {k: v for k, v in (claim.get("spec") or {}).items() if k != "volumeName"}
    return {**claim, "metadata": meta, "spec": spec, "status": {}}


def update_patch(resource: Resource, old: Obj, new: Obj, claims: Callable[[str, str], Obj | None]) -> Obj:
    """The merge patch a trace records for a change of `old` into `new` ({} when nothing the replay should
    repeat changed); `claims(namespace, name)` finds a claim as it stands, for a volume's binding."""
    kind = resource.kind
    if kind == "Node":
        return node_patch(old, new)
    if kind == "Pod":
        patch: Obj = {}
        for path in _POD_FIELDS:
            before, after = _get(old, path), _get(new, path)
            if (before or None) != (after or None):
                patch.setdefault(path[0], {})[path[1]] = _map_patch(before, after) if after else None
        return patch
    before, after = for_trace(old, resource), for_trace(new, resource)
    if kind == "ResourceClaim":
        before.pop("status", None)
        after.pop("status", None)
    elif kind == "PersistentVolumeClaim" and (_scheduler_selected(old) or _scheduler_selected(new)):
        before, after = _without_binding(before), _without_binding(after)
    elif kind == "PersistentVolume":
        ref = _get(new, ("spec", "claimRef")) or _get(old, ("spec", "claimRef")) or {}
        if _scheduler_selected(claims(str(ref.get("namespace") or ""), str(ref.get("name") or ""))):
            for pv in (before, after):
                pv["spec"] = {k: v for k, v in (pv.get("spec") or {}).items() if k != "claimRef"}
                pv.pop("status", None)
    patch = merge_diff(before, after)
    return patch if isinstance(patch, dict) else {}


def _map_patch(before: Any, after: Any) -> Any:
    """`after`, with null for each key of the map `before` it lacks (anything but two maps: `after` itself)."""
    if not isinstance(before, dict) or not isinstance(after, dict):
        return after
    return {**dict.fromkeys((k for k in before if k not in after), None), **after}


def for_trace(obj: Obj, resource: Resource, *, created: bool = False) -> Obj:
    """An object as the trace holds it: cleaned as a snapshot is, workloads without templates; a pod created
    during the recording as it was created (no status: its scheduling is the replay's to do)."""
    out = clean(obj, resource)
    if resource.kind in WORKLOADS:
        spec = dict(out.get("spec") or {})
        spec.pop("template", None)
        spec.pop("volumeClaimTemplates", None)
        out["spec"] = spec
    if resource.kind == "Pod" and created:
        out.pop("status", None)
    return out


def _ref(obj: Obj, resource: Resource) -> Obj:
    meta = obj.get("metadata") or {}
    ref: Obj = {"kind": resource.kind, "name": meta.get("name")}
    if resource.namespaced:
        ref["namespace"] = meta.get("namespace") or "default"
    return ref


@dataclass
class Trace:
    """The starting objects and the steps after them; `seconds` is how long the recording ran."""

    start: list[Obj] = field(default_factory=list)
    steps: list[Obj] = field(default_factory=list)
    server: str = ""
    began: str = ""
    seconds: float = 0.0

    def add(self, at: float, op: str, item: Obj) -> None:
        text = f"{at:.3f}s"
        if not self.steps or self.steps[-1]["at"] != text:
            self.steps.append({"at": text})
        self.steps[-1].setdefault(op, []).append(item)

    def documents(self) -> list[Obj]:
        scenario = {
            "apiVersion": SCENARIO_API_VERSION,
            "kind": "Scenario",
            "metadata": {
                "name": "recorded",
                "annotations": {
                    "kubesched.io/recorded-from": self.server,
                    "kubesched.io/recorded-at": self.began,
                    "kubesched.io/recorded-for": f"{self.seconds:.3f}s",
                },
            },
            "steps": self.steps,
        }
        return [*self.start, scenario]

    def write(self, out: TextIO) -> None:
        dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
        yaml.dump_all(self.documents(), out, Dumper=dumper, sort_keys=False, default_flow_style=False)

    def counts(self) -> dict[str, int]:
        ops = {"create": 0, "update": 0, "delete": 0}
        for step in self.steps:
            for op in ops:
                ops[op] += len(step.get(op) or ())
        return {"objects": len(self.start), "steps": len(self.steps), **ops}


Event = tuple[Resource, str, Obj | None, Obj | None, float]


class Recorder:
    """Reflectors over every kind a snapshot holds, through a client that can only GET."""

    def __init__(
        self,
        kubeconfig: str = "",
        master: str = "",
        *,
        resources: Iterable[Resource] = SNAPSHOT.values(),
        qps: float = 50.0,
        burst: int = 100,
    ) -> None:
        cfg = load_configuration(kubeconfig, master, kubectl_defaults=True)
        self.api = ReadOnlyAPI(cfg, qps=qps, burst=burst, user_agent="kubesched-record")
        self.stop = threading.Event()
        self.wake = threading.Event()
        self.events: queue.SimpleQueue[Event] = queue.SimpleQueue()
        failures = FailureLog(self.api.host)
        self.reflectors = [
            Reflector(self.api, r, self._sink(r), self.stop, failures=failures)
            for r in sorted(resources, key=lambda r: (r.kind == "Pod", r.kind == "Node", r.namespaced))
        ]
        self.state: dict[str, dict[tuple[str, str], Obj]] = {r.kind: {} for r in self.reflectors_resources()}
        self.trace = Trace(server=self.api.host)
        self._t0 = 0.0

    def reflectors_resources(self) -> list[Resource]:
        return [r.resource for r in self.reflectors]

    def _sink(self, resource: Resource) -> Any:
        def put(kind: str, event: str, old: Obj | None, new: Obj | None) -> None:
            self.events.put((resource, event, old, new, time.monotonic()))
            self.wake.set()

        return put

    def _synced(self) -> bool:
        return all(r.synced.is_set() for r in self.reflectors)

    def run(
        self, duration: float | None, sync_timeout: float | None = 60.0, on_start: Callable[[int], None] | None = None
    ) -> bool:
        """Record until stopped or `duration` after the start (`on_start` hears the objects at the start); False
        when the informers never synced."""
        for r in self.reflectors:
            r.start()
        deadline = None if sync_timeout is None else time.monotonic() + sync_timeout
        while not self._synced():
            if self.stop.is_set() or (deadline is not None and time.monotonic() > deadline):
                self.stop.set()
                return False
            self._drain(recording=False)
            self.wake.wait(IDLE_WAIT)
            self.wake.clear()
        self._drain(recording=False)
        self._t0 = time.monotonic()
        self.trace.began = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        self.trace.start = [
            for_trace(obj, r) for r in self.reflectors_resources() for obj in self.state[r.kind].values()
        ]
        if on_start is not None:
            on_start(len(self.trace.start))
        end = None if duration is None else self._t0 + duration
        while not self.stop.is_set() and (end is None or time.monotonic() < end):
            self._drain(recording=True)
            self.wake.wait(IDLE_WAIT if end is None else max(0.0, min(IDLE_WAIT, end - time.monotonic())))
            self.wake.clear()
        self._drain(recording=True, until=end)
        self.trace.seconds = (time.monotonic() if end is None else min(end, time.monotonic())) - self._t0
        self.stop.set()
        return True

    def _drain(self, *, recording: bool, until: float | None = None) -> None:
        while True:
            try:
                resource, event, old, new, at = self.events.get_nowait()
            except queue.Empty:
                return
            if until is not None and at > until:
                continue
            obj = new if new is not None else old
            assert obj is not None
            meta = obj.get("metadata") or {}
            key = (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
            if event == "DELETED":
                self.state[resource.kind].pop(key, None)
            else:
                self.state[resource.kind][key] = obj
            if recording:
                self._step(resource, event, old, new, max(0.0, at - self._t0))

    def _step(self, resource: Resource, event: str, old: Obj | None, new: Obj | None, at: float) -> None:
        if event == "ADDED" and new is not None:
            self.trace.add(at, "create", for_trace(new, resource, created=True))
        elif event == "DELETED" and old is not None:
            self.trace.add(at, "delete", _ref(old, resource))
        elif event == "MODIFIED" and old is not None and new is not None:
            patch = update_patch(resource, old, new, self._claim)
            if patch:
                self.trace.add(at, "update", {**_ref(new, resource), "patch": patch})

    def _claim(self, namespace: str, name: str) -> Obj | None:
        return self.state.get("PersistentVolumeClaim", {}).get((namespace, name))
