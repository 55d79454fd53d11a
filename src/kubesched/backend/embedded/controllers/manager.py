"""kube-controller-manager's workload controllers and garbage collector, running on the embedded cluster.

The manager watches the cluster as the controllers' informers would and keeps a queue
of workloads to sync, like their work queues. Each sync claims the workload's pods
(adopting matching orphans, releasing pods that stopped matching), asks the pure sync
function of its kind what to do, and does it through the cluster, so every change
reaches the scheduler as watch events. Writes are synchronous and the cache is the
store itself, so no expectations are needed.

Before `start`, objects only fill the indexes: the controllers start once the
simulation's initial objects exist, as kube-controller-manager starts against a
populated API server, and so count the pods listed with their owners. A workload
without a pod template is left alone (it makes no pods and adopts none): manifests that
list a ReplicaSet only for spreading keep working as before.

Every object created here gets what the API server gives it (a name from
generateName, a uid, creationTimestamp) and passes `admit`, the same defaulting,
admission and validation the simulator's input gets; a refusal becomes one warning
per workload, as upstream's controllers record FailedCreate and retry.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

from kubesched.api.kinds import KINDS, NAMESPACED, WORKLOAD_KINDS
from kubesched.api.object import Obj, ObjView
from kubesched.api.selectors import LabelSelector
from kubesched.backend.embedded.cluster import EPOCH, ConflictError, EmbeddedCluster
from kubesched.backend.embedded.controllers import (
    cron_job,
    daemon_set,
    deployment,
    job,
    job_workload,
    replica_set,
    stateful_set,
)
from kubesched.backend.embedded.controllers.controller_utils import (
    Key,
    NameGenerator,
    Plan,
    WorkQueue,
    adopted,
    claim,
    controller_of,
    is_pod_active,
    is_running_and_ready,
    label_selector,
    labels_of,
    meta,
    name_of,
    namespace_of,
    refers_to,
    released,
    spec,
    template_of,
)

_POD_OWNERS = ("ReplicaSet", "ReplicationController", "StatefulSet", "DaemonSet", "Job")
_MAX_OWNER_DEPTH = 8


def _key(obj: ObjView) -> Key:
    kind = str(obj.get("kind"))
    return kind, namespace_of(obj) if kind in NAMESPACED else "", name_of(obj)


def _ref_key(ref: Mapping[str, Any], namespace: str) -> Key:
    kind = str(ref.get("kind") or "")
    return kind, namespace if kind in NAMESPACED else "", str(ref.get("name") or "")


class WorkloadControllers:
    """The workload controllers; register with `EmbeddedCluster.add_controller` (done here), then `start`."""

    def __init__(
        self,
        cluster: EmbeddedCluster,
        names: NameGenerator,
        *,
        admit: Callable[[Obj], str],
        on_created: Callable[[Obj], None] | None = None,
        on_deleted: Callable[[ObjView], None] | None = None,
        warn: Callable[[str], None] | None = None,
        workload_with_job: bool = False,
    ) -> None:
        self.cluster = cluster
        self.workload_with_job = workload_with_job  # the WorkloadWithJob gate: Indexed Jobs become gangs
        self.names = names
        self.admit = admit
        self.on_created = on_created
        self.on_deleted = on_deleted
        self.warn = warn
        self.started = False
        self._work = WorkQueue(cluster, self._sync)
        # Indexes hold keys, not objects: a controller ahead in the cluster's list may change an object before this
        # one hears it was added, so events can arrive out of order. Every use reads the object from the store.
        self._dependents: dict[Key, set[Key]] = {}  # owner -> objects naming it in ownerReferences
        self._orphans: dict[tuple[str, str], set[str]] = {}  # (kind, namespace) -> pods/ReplicaSets without controller
        self._workloads: dict[str, set[Key]] = {}  # namespace -> workloads there
        self._selectors: dict[Key, tuple[str, LabelSelector | None]] = {}  # by resourceVersion
        self._warned: set[Key] = set()  # one warning per workload, however many pods it fails to create
        cluster.add_controller(self)

    # Watching.

    def __call__(self, kind: str, event: str, old: Obj | None, new: Obj | None) -> None:
        if old is None or new is None or meta(old).get("ownerReferences") != meta(new).get("ownerReferences"):
            if old is not None:
                self._unindex(kind, old)
            if new is not None:
                self._index(kind, new)
        if not self.started:
            return
        if kind in WORKLOAD_KINDS:
            self._workload_changed(kind, event, old, new)
        elif kind == "Pod":
            self._pod_changed(old, new)
        elif kind == "Node":
            self._node_changed(old, new)
        self._work.drain()

    def _index(self, kind: str, obj: ObjView) -> None:
        key = _key(obj)
        for ref in meta(obj).get("ownerReferences") or ():
            if isinstance(ref, Mapping):
                self._dependents.setdefault(_ref_key(ref, key[1]), set()).add(key)
        if kind in ("Pod", "ReplicaSet") and controller_of(obj) is None:
            self._orphans.setdefault((kind, key[1]), set()).add(key[2])
        if kind in WORKLOAD_KINDS:
            self._workloads.setdefault(key[1], set()).add(key)

    def _unindex(self, kind: str, obj: ObjView) -> None:
        key = _key(obj)
        for ref in meta(obj).get("ownerReferences") or ():
            if isinstance(ref, Mapping):
                self._dependents.get(_ref_key(ref, key[1]), set()).discard(key)
        if kind in ("Pod", "ReplicaSet"):
            self._orphans.get((kind, key[1]), set()).discard(key[2])
        if kind in WORKLOAD_KINDS:
            self._workloads.get(key[1], set()).discard(key)

    def _objects(self, keys: set[Key], kind: str) -> list[ObjView]:
        """The objects of `kind` under `keys` that the store still holds, in name order."""
        out: list[ObjView] = []
        for key in sorted(k for k in keys if k[0] == kind):
            obj = self.cluster.get(*key)
            if obj is not None:
                out.append(obj)
        return out

    def _enqueue_controller(self, obj: ObjView) -> None:
        ref = controller_of(obj)
        if ref is not None and ref.get("kind") in WORKLOAD_KINDS:
            self._work.add(_ref_key(ref, namespace_of(obj)))

    def _enqueue_matching(self, kind: str, obj: ObjView) -> None:
        """An orphan may be adopted: queue the workloads in its namespace whose selector matches it."""
        owners = _POD_OWNERS if kind == "Pod" else ("Deployment",)
        labels = labels_of(obj)
        for key in sorted(self._workloads.get(namespace_of(obj), set())):
            workload = self.cluster.get(*key) if key[0] in owners else None
            if workload is not None and template_of(workload) is not None:
                selector = self._selector(workload)
                if selector is not None and selector.matches(labels):
                    self._work.add(key)

    def _workload_changed(self, kind: str, event: str, old: Obj | None, new: Obj | None) -> None:
        obj = new if new is not None else old
        assert obj is not None
        self._enqueue_controller(obj)
        if new is None:
            self._collect_garbage(_key(obj))
            return
        self._work.add(_key(new), first=event == "ADDED")
        if event == "ADDED" and kind == "ReplicaSet" and controller_of(new) is None:
            self._enqueue_matching(kind, new)

    def _pod_changed(self, old: Obj | None, new: Obj | None) -> None:
        if new is None:
            assert old is not None
            self._enqueue_controller(old)
            return
        ref_new = controller_of(new)
        if old is None or ref_new != controller_of(old):
            if old is not None:
                self._enqueue_controller(old)
            if ref_new is not None:
                self._enqueue_controller(new)
            else:
                self._enqueue_matching("Pod", new)
            return
        labels_changed = meta(old).get("labels") != meta(new).get("labels")
        if labels_changed and ref_new is None:
            self._enqueue_matching("Pod", new)
            return
        if ref_new is None or ref_new.get("kind") not in WORKLOAD_KINDS:
            return
        owner_key = _ref_key(ref_new, namespace_of(new))
        changed = (
            is_pod_active(old) != is_pod_active(new)
            or (owner_key[0] == "StatefulSet" and is_running_and_ready(old) != is_running_and_ready(new))
            or (owner_key[0] == "DaemonSet" and daemon_set.target_node(old) != daemon_set.target_node(new))
        )
        if not changed and labels_changed:
            owner = self.cluster.get(*owner_key)
            selector = self._selector(owner) if owner is not None else None
            changed = selector is not None and not selector.matches(labels_of(new))
        if changed:
            self._work.add(owner_key)

    def _node_changed(self, old: Obj | None, new: Obj | None) -> None:
        if old is not None and new is not None and labels_of(old) == labels_of(new) and spec(old) == spec(new):
            return
        for workloads in self._workloads.values():
            for key in sorted(workloads):
                if key[0] == "DaemonSet":
                    self._work.add(key)

    def _selector(self, workload: ObjView) -> LabelSelector | None:
        key = _key(workload)
        version = str(meta(workload).get("resourceVersion") or "")
        cached = self._selectors.get(key)
        if cached is None or cached[0] != version or not version:
            cached = (version, label_selector(workload))
            self._selectors[key] = cached
        return cached[1]

    # The garbage collector.

    def _owner_exists(self, ref: Mapping[str, Any], namespace: str) -> bool:
        kind, ns, name = _ref_key(ref, namespace)
        if kind not in KINDS:
            return True  # an owner the embedded cluster cannot hold: assume it is there
        owner = self.cluster.get(kind, ns, name)
        return owner is not None and refers_to(ref, owner)

    def _collect_garbage(self, owner: Key) -> None:
        """Background cascading deletion: dependents left with no owner are deleted (their own dependents follow)."""
        for key in sorted(self._dependents.pop(owner, set())):
            current = self.cluster.get(*key)
            if current is None:
                continue
            refs = [r for r in meta(current).get("ownerReferences") or () if isinstance(r, Mapping)]
            if not any(_ref_key(r, key[1]) == owner for r in refs):
                continue  # no longer a dependent of that owner
            if not any(self._owner_exists(r, key[1]) for r in refs):
                self._delete(current)

    # Syncing.

    def start(self, workloads: list[ObjView]) -> None:
        """Sync the given workloads in order (the input's document order), then react to every change."""
        self.started = True
        for obj in workloads:
            if obj.get("kind") in WORKLOAD_KINDS:
                self._work.add(_key(obj))
        self._work.drain()

    def now(self) -> datetime:
        return EPOCH + timedelta(seconds=self.cluster.clock())

    def _sync(self, obj: ObjView) -> None:
        kind = str(obj.get("kind"))
        if template_of(obj) is None and kind != "CronJob":
            return
        if kind == "CronJob":
            self._sync_cron_job(obj)
            return
        if kind == "Deployment":
            rss = self._claim(obj, "ReplicaSet")
            ns = namespace_of(obj)
            self._apply(obj, deployment.sync(obj, rss, lambda n: self.cluster.get("ReplicaSet", ns, n) is not None))
            return
        pods = self._claim(obj, "Pod")
        if kind in ("ReplicaSet", "ReplicationController"):
            self._apply(obj, replica_set.sync(obj, pods, self._related_pods(obj, pods), self.now()))
        elif kind == "StatefulSet":
            ns = namespace_of(obj)
            revision = stateful_set.revision_name(obj)
            plan, claims = stateful_set.sync(
                obj, pods, lambda n: self.cluster.get("PersistentVolumeClaim", ns, n) is not None, revision
            )
            self._apply(obj, plan)
            for name in claims:
                pvc = self.cluster.get("PersistentVolumeClaim", ns, name)
                if pvc is not None:
                    self._delete(pvc)
        elif kind == "DaemonSet":
            plan = daemon_set.sync(obj, list(self.cluster.list("Node")), pods, daemon_set.revision_hash(obj))
            self._apply(obj, plan)
        elif kind == "Job":
            group = self._job_pod_group(obj, pods) if self.workload_with_job else None
            plan = job.sync(obj, pods)
            self._apply(obj, job_workload.stamp(plan, group) if group is not None else plan)

    def _job_pod_group(self, job_obj: ObjView, pods: list[ObjView]) -> ObjView | None:
        """WorkloadWithJob: the Job's PodGroup (and Workload), made before its pods (job_workload.py)."""
        ns = namespace_of(job_obj)
        workloads = [
            w
            for w in self.cluster.list("Workload")
            if namespace_of(w) == ns
            and ((w.get("spec") or {}).get("controllerRef") or {}).get("kind") == "Job"
            and ((w.get("spec") or {}).get("controllerRef") or {}).get("name") == name_of(job_obj)
        ]

        def create(obj: Obj) -> ObjView | None:
            self._create(job_obj, obj)
            return self.cluster.get(obj["kind"], ns, obj["metadata"]["name"])

        return job_workload.ensure(job_obj, pods, workloads, self.cluster.get, create)

    def _sync_cron_job(self, cj: ObjView) -> None:
        jobs = self._objects(self._dependents.get(_key(cj), set()), "Job")
        owned = [j for j in jobs if (ref := controller_of(j)) is not None and refers_to(ref, cj)]
        plan = cron_job.sync(cj, owned, self.now())
        if plan.create and self.cluster.get("Job", namespace_of(cj), name_of(plan.create[0])) is not None:
            return  # the tick's Job exists already (not ours): AlreadyExists, as upstream sees it
        self._apply(cj, plan)

    def _claim(self, owner: ObjView, kind: str) -> list[ObjView]:
        """The owner's pods (or ReplicaSets), after adopting matching orphans and releasing what no longer matches."""
        key = _key(owner)
        selector = self._selector(owner)
        deps = self._objects(self._dependents.get(key, set()), kind)
        if selector is None:
            return [d for d in deps if (ref := controller_of(d)) is not None and refers_to(ref, owner)]
        candidates = {name_of(d): d for d in deps}
        for name in sorted(self._orphans.get((kind, key[1]), set())):
            orphan = self.cluster.get(kind, key[1], name)
            if orphan is not None:
                candidates.setdefault(name, orphan)
        result = claim(owner, selector, candidates.values())
        for obj in result.adopt:
            self._update(adopted(obj, owner))
        for obj in result.release:
            self._update(released(obj, owner))
        if not result.adopt:
            return result.owned
        return [self.cluster.get(kind, key[1], name_of(o)) or o for o in result.owned]

    def _related_pods(self, rs: ObjView, pods: list[ObjView]) -> list[ObjView]:
        """getIndirectlyRelatedPods: the pods of every ReplicaSet of the same Deployment."""
        ref = controller_of(rs)
        if ref is None or ref.get("kind") != "Deployment":
            return pods
        ns = namespace_of(rs)
        out: list[ObjView] = []
        for sibling in self._objects(self._dependents.get(_ref_key(ref, ns), set()), "ReplicaSet"):
            out += self._objects(self._dependents.get(_key(sibling), set()), "Pod")
        return out

    # Writing.

    def _apply(self, owner: ObjView, plan: Plan) -> None:
        for obj in plan.create:
            self._create(owner, obj)
        for changed in plan.update:
            self._update(changed)
        for gone in plan.delete:
            self._delete(gone)

    def _create(self, owner: ObjView, obj: Obj) -> None:
        obj_meta = obj["metadata"]
        kind = obj["kind"]
        if not obj_meta.get("name"):
            prefix = obj_meta.pop("generateName")
            obj_meta["name"] = self.names.generate(prefix)
            while self.cluster.get(kind, obj_meta["namespace"], obj_meta["name"]) is not None:
                obj_meta["name"] = self.names.generate(prefix)
        obj_meta["uid"] = self.names.uid()
        obj_meta["creationTimestamp"] = self.cluster.timestamp()
        if kind == "Job":
            job.prepare_for_create(obj)
        problem = self.admit(obj)
        if problem:
            self._warn_once(owner, f"cannot create {kind} {obj_meta['namespace']}/{obj_meta['name']}: {problem}")
            return
        try:
            self.cluster.create(obj)
        except ConflictError as err:
            self._warn_once(owner, str(err))
            return
        if kind == "Pod" and self.on_created is not None:
            self.on_created(obj)

    def _update(self, obj: Obj) -> None:
        try:
            self.cluster.update(copy.copy(obj))
        except ConflictError:
            pass  # deleted meanwhile: the next sync sees it gone

    def _delete(self, obj: ObjView) -> None:
        kind, ns, name = _key(obj)
        try:
            self.cluster.delete(kind, ns, name)
        except ConflictError:
            return
        if kind == "Pod" and self.on_deleted is not None:
            self.on_deleted(obj)

    def _warn_once(self, owner: ObjView, message: str) -> None:
        key = _key(owner)
        if self.warn is not None and key not in self._warned:
            self._warned.add(key)
            kind, ns, name = key
            self.warn(f"{kind} {ns}/{name}: {message}")

    # Reading.

    def controllers_of(self, pod: ObjView) -> list[str]:
        """The pod's controller chain as `Kind/name`, its own controller first (a Deployment's pod: its
        ReplicaSet, then the Deployment); it ends with the first controller the cluster does not hold."""
        ref = controller_of(pod)
        ns = namespace_of(pod)
        chain: list[str] = []
        for _ in range(_MAX_OWNER_DEPTH):
            if ref is None:
                break
            chain.append(f"{ref.get('kind')}/{ref.get('name')}")
            kind, _, name = _ref_key(ref, ns)
            owner = self.cluster.get(kind, ns, name) if kind in KINDS else None
            if owner is None or not refers_to(ref, owner):
                break
            ref = controller_of(owner)
        return chain
