"""The embedded cluster: an in-memory object store that emits watch-style events.

It plays the API server's part for `kubesched simulate`: objects are created,
updated and deleted here, every change reaches subscribers as add/update/delete,
and binding a pod sets `spec.nodeName` as the pods/binding subresource would. It
also answers the listers plugins use (namespaces, services, controllers).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from datetime import timedelta

from kubesched.api.kinds import NAMESPACED
from kubesched.backend.embedded.pv_controller import PVController
from kubesched.backend.errors import ConflictError
from kubesched.backend.pod_status import apply_status_patch, generation, status_patch
from kubesched.backend.store import Listener, Obj, ObjectStore, object_key
from kubesched.clock import EPOCH
from kubesched.framework.types import PodInfo

NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # utilrand.String's: no vowels, no look-alikes
# PodTopologyLabels admission (beta, on in v1.36) copies these from the node onto a pod
# bound to it, at binding and at creation with spec.nodeName.
TOPOLOGY_LABELS = ("topology.kubernetes.io/zone", "topology.kubernetes.io/region")


__all__ = ["ConflictError", "EmbeddedCluster", "object_key"]


class EmbeddedCluster(ObjectStore):
    """The in-memory cluster of `simulate`: the store the informers would fill, and the API the scheduler writes to."""

    DELETES_REPORT_DONE = False  # preemption's deletions need no waiting here: they are done when the call returns

    def __init__(self, clock: Callable[[], float] = lambda: 0.0, *, pv_controller: bool = True) -> None:
        super().__init__()
        self._controllers: list[Listener] = []  # run after the listeners, like controllers watching the API
        self._rv = 0
        self.clock = clock
        self.events: list[Obj] = []
        self._stamp_time = -1.0
        self._stamp = ""  # core/v1 Events the scheduler recorded, oldest first
        self._names = random.Random(0)  # suffixes of generated names: the same run after run
        if pv_controller:
            PVController(self)

    def timestamp(self) -> str:
        now = self.clock()
        if now != self._stamp_time:
            self._stamp_time = now
            self._stamp = (EPOCH + timedelta(seconds=now)).strftime("%Y-%m-%dT%H:%M:%SZ")
        return self._stamp

    def add_controller(self, controller: Listener) -> None:
        self._controllers.append(controller)

    def _emit(self, kind: str, event: str, old: Obj | None, new: Obj | None) -> None:
        self._notify(kind, event, old, new)
        for controller in self._controllers:
            controller(kind, event, old, new)

    def _bump(self, obj: Obj) -> None:
        self._rv += 1
        obj.setdefault("metadata", {})["resourceVersion"] = str(self._rv)

    def create(self, obj: Obj) -> Obj:
        kind = obj["kind"]
        meta = obj.setdefault("metadata", {})
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = self._generated_name(kind, str(meta.get("namespace") or "default"), meta["generateName"])
        key = object_key(obj)
        if key in self.objects[kind]:
            raise ConflictError(f'{kind} "{"/".join(p for p in key if p)}" already exists')
        if kind == "Pod" and (obj.get("spec") or {}).get("nodeName"):
            self._copy_topology_labels(obj, obj["spec"]["nodeName"])
        if kind == "Pod" and not generation(obj):
            obj.setdefault("metadata", {})["generation"] = 1  # as the API server gives every new pod
        self._bump(obj)
        self.objects[kind][key] = obj
        self._emit(kind, "ADDED", None, obj)
        return obj

    def update(self, obj: Obj) -> Obj:
        kind = obj["kind"]
        key = object_key(obj)
        old = self.objects[kind].get(key)
        if old is None:
            raise ConflictError(f'{kind} "{"/".join(p for p in key if p)}" not found')
        if kind == "ResourceClaim":
            self._check_version(old, obj)
        self._bump(obj)
        self.objects[kind][key] = obj
        self._emit(kind, "MODIFIED", old, obj)
        return obj

    @staticmethod
    def _check_version(old: Obj, obj: Obj) -> None:
        """Optimistic concurrency for ResourceClaims, whose writers (DRA's PreBind, the resourceclaim controller)
        race as in a cluster: a write based on an older version is refused with the API server's 409."""
        given = (obj.get("metadata") or {}).get("resourceVersion")
        current = (old.get("metadata") or {}).get("resourceVersion")
        if given and current and given != current:
            name = (obj.get("metadata") or {}).get("name")
            raise ConflictError(
                f'Operation cannot be fulfilled on resourceclaims.resource.k8s.io "{name}": the object has been '
                "modified; please apply your changes to the latest version and try again"
            )

    def _generated_name(self, kind: str, namespace: str, base: str) -> str:
        """generateName as the API server completes it: five characters of its alphabet, unused so far."""
        while True:
            name = base + "".join(self._names.choice(NAME_ALPHABET) for _ in range(5))
            if self.get(kind, namespace, name) is None:
                return name

    def merge_status(self, kind: str, namespace: str, name: str, fields: Obj) -> Obj:
        """A merge patch of status fields (a pod's extendedResourceClaimStatus, written by DRA's PreBind)."""
        current = self.get(kind, namespace, name)
        if current is None:
            raise ConflictError(f'{kind} "{name}" not found')
        return self.update({**current, "status": {**(current.get("status") or {}), **fields}})

    def update_status(self, obj: Obj) -> Obj:
        """The status subresource: the store keeps whole objects, so this is `update`, with the API
        server's one status rule a scheduler can trip: a ResourceClaim's allocation, once set, is immutable."""
        if obj.get("kind") == "ResourceClaim":
            old = self.objects["ResourceClaim"].get(object_key(obj))
            before = ((old or {}).get("status") or {}).get("allocation")
            after = (obj.get("status") or {}).get("allocation")
            if before is not None and after is not None and after != before:
                name = (obj.get("metadata") or {}).get("name")
                raise ValueError(
                    f'ResourceClaim.resource.k8s.io "{name}" is invalid: status.allocation: field is immutable'
                )
        return self.update(obj)

    def delete(self, kind: str, namespace: str, name: str) -> Obj:
        old = self.objects[kind].pop((namespace if kind in NAMESPACED else "", name), None)
        if old is None:
            raise ConflictError(f'{kind} "{name}" not found')
        self._emit(kind, "DELETED", old, None)
        return old

    # Client: what DefaultBinder calls.

    def _copy_topology_labels(self, pod: Obj, node_name: str) -> None:
        node = self.objects["Node"].get(("", node_name))
        node_labels = ((node or {}).get("metadata") or {}).get("labels") or {}
        found = {k: node_labels[k] for k in TOPOLOGY_LABELS if k in node_labels}
        if found:
            meta = pod.setdefault("metadata", {})
            meta["labels"] = {**(meta.get("labels") or {}), **found}

    def bind(self, pod: PodInfo, node_name: str) -> None:
        """The pods/binding subresource as v1.36 serves it: checks, then nodeName, topology labels,
        PodScheduled=True and the nomination cleared (ClearingNominatedNodeNameAfterBinding)."""
        current = self.objects["Pod"].get((pod.namespace, pod.name))
        if current is None:
            raise ConflictError(f'pods "{pod.name}" not found')
        meta, spec = current.get("metadata") or {}, current.get("spec") or {}
        if meta.get("deletionTimestamp"):
            raise ConflictError(f"pod {pod.name} is being deleted, cannot be assigned to a host")
        if spec.get("nodeName"):
            raise ConflictError(f'pod {pod.name} is already assigned to node "{spec["nodeName"]}"')
        if spec.get("schedulingGates"):
            raise ConflictError(f"pod {pod.name} has non-empty .spec.schedulingGates")
        bound = copy.copy(current)
        bound["metadata"] = dict(meta)
        bound["spec"] = dict(spec, nodeName=node_name)
        self._copy_topology_labels(bound, node_name)
        now = self.timestamp()
        status = current.get("status") or {}
        status = apply_status_patch(status, status_patch(status, {"type": "PodScheduled", "status": "True"}, "", now))
        # Nobody runs kubelets here: a bound pod counts as started at once.
        bound["status"] = dict(status, startTime=now, phase="Running")
        self.update(bound)

    def apply_extender_binding(self, pod: PodInfo, node_name: str) -> None:
        """A binder extender answered success: do the pods/binding write it would have done."""
        self.bind(pod, node_name)

    def patch_pod_status(self, pod: PodInfo, condition: Obj | None, nominated_node_name: str | None) -> None:
        """Set a pod condition (and status.nominatedNodeName); an unchanged status is not written."""
        current = self.objects["Pod"].get((pod.namespace, pod.name))
        if current is None:
            raise ConflictError(f'pods "{pod.name}" not found')
        status = current.get("status") or {}
        patch = status_patch(status, condition, nominated_node_name, self.timestamp(), generation(current))
        if patch:
            patched = copy.copy(current)
            patched["status"] = apply_status_patch(status, patch)
            self.update(patched)

    def record_event(self, pod: PodInfo, kind: str, reason: str, action: str, note: str) -> None:
        self.events.append(
            {
                "type": kind,
                "reason": reason,
                "action": action,
                "note": note,
                "regarding": {"kind": "Pod", "namespace": pod.namespace, "name": pod.name, "uid": pod.uid},
                "reportingController": "default-scheduler",
                "eventTime": self.timestamp(),
            }
        )

    def delete_pod(
        self, pod: PodInfo, condition: Obj | None = None, done: Callable[[bool], None] | None = None
    ) -> None:
        """Delete a pod, first marking it with a condition (DisruptionTarget for preemption victims).

        The deletion is complete on return, so `done` (if given) hears of it at once.
        """
        if condition is not None:
            self.patch_pod_status(pod, condition, None)
        self.delete("Pod", pod.namespace, pod.name)
        if done is not None:
            done(True)
