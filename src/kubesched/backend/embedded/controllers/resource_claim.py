"""kube-controller-manager's resourceclaim controller (pkg/controller/resourceclaim, v1.36) on the embedded cluster.

- A pod entry `resourceClaims[].resourceClaimTemplateName` becomes a ResourceClaim made
  from the template: generateName `<pod>-<entry>-` (both cut in proportion when longer
  than 57 characters), the template's labels and annotations plus
  `resource.kubernetes.io/pod-claim-name: <entry>`, the pod as controlling owner, the
  template's spec. The pod's `status.resourceClaimStatuses` records the name. A claim
  the pod already owns for that entry (an orphan) is taken instead of making another.
- A pod on a node gets its allocated, unreserved claims reserved for it.
- Reservations of pods that are gone, replaced (another uid) or done are removed; a
  claim left unreserved is deallocated (status.allocation cleared, then the scheduler's
  `resource.kubernetes.io/delete-protection` finalizer removed), as upstream does only for
  claims carrying that finalizer. A generated claim whose pod is done, replaced or
  deleted is deleted (upstream's controller and the garbage collector).

With DRAWorkloadResourceClaims (alpha): a PodGroup's `spec.resourceClaims` template entry
becomes one claim owned by the PodGroup (generateName `<podgroup>-<entry>-`, the same
annotation), recorded in the group's `status.resourceClaimStatuses`; a member's entry equal
to the group's records that claim in the pod's status instead of getting its own (and
waits while it is not made); a claim reserved for the pod's PodGroup is not reserved for
the pod too (one to reserve is reserved for the PodGroup); nothing is done for a pod whose
PodGroup does not exist yet; a PodGroup that is gone or replaced loses its reservations and its claims.

Writes go through the cluster, so the scheduler sees them as watch events; a claim the
API server would refuse (the template's spec no longer valid) is one warning per pod,
as upstream records FailedResourceClaimCreation and retries.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from kubesched.api.object import Obj, ObjView
from kubesched.backend.embedded.cluster import ConflictError, EmbeddedCluster
from kubesched.backend.embedded.controllers.controller_utils import (
    Key,
    NameGenerator,
    PodObjectController,
    meta,
    name_of,
    namespace_of,
    spec,
)
from kubesched.dra.claims import claim_name, claim_status_name

POD_CLAIM_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
FINALIZER = "resource.kubernetes.io/delete-protection"
MAX_BASE_LENGTH = 57  # leaves room for five random characters in a 63-character name
API_VERSION = "resource.k8s.io/v1"
SCHEDULING_GROUP = "scheduling.k8s.io"
POD_GROUP_API_VERSION = "scheduling.k8s.io/v1alpha2"


def uid_of(obj: ObjView) -> str:
    """An object's uid; a pod or PodGroup listed without one has the scheduler's stand-in, `namespace/name`."""
    uid = str(meta(obj).get("uid") or "")
    if not uid and obj.get("kind") in ("Pod", "PodGroup"):
        return f"{namespace_of(obj)}/{name_of(obj)}"
    return uid


def generate_name(pod_name: str, entry: str) -> str:
    """The generateName upstream's controller uses for a pod's claim."""
    base = f"{pod_name}-{entry}-"
    if len(base) <= MAX_BASE_LENGTH:
        return base
    full = len(base)
    return pod_name[: len(pod_name) * MAX_BASE_LENGTH // full] + "-" + entry[: len(entry) * MAX_BASE_LENGTH // full]


def is_pod_done(pod: ObjView) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    deleted_unscheduled = bool(meta(pod).get("deletionTimestamp") and not spec(pod).get("nodeName"))
    return phase in ("Succeeded", "Failed") or deleted_unscheduled


def owning_pod(claim: ObjView) -> tuple[str, str] | None:
    """(name, uid) of the pod that controls a generated claim."""
    for ref in meta(claim).get("ownerReferences") or ():
        if not isinstance(ref, Mapping) or not ref.get("controller"):
            continue
        if ref.get("apiVersion") == "v1" and ref.get("kind") == "Pod":
            return str(ref.get("name") or ""), str(ref.get("uid") or "")
    return None


def _reserved_for_pod(claim: ObjView, pod: ObjView) -> bool:
    return any(
        isinstance(r, Mapping) and r.get("resource") == "pods" and not r.get("apiGroup") and r.get("uid") == uid_of(pod)
        for r in (claim.get("status") or {}).get("reservedFor") or ()
    )


def _pod_group_name(pod: ObjView) -> str | None:
    group = spec(pod).get("schedulingGroup")
    name = group.get("podGroupName") if isinstance(group, Mapping) else None
    return name if isinstance(name, str) and name else None


def _names_group(claim: ObjView, group: ObjView) -> bool:
    """The claim is controlled by or reserved for the PodGroup (by name)."""
    name = name_of(group)
    reserved = (claim.get("status") or {}).get("reservedFor") or ()
    return _controller_pod_group(claim) == name or any(
        isinstance(r, Mapping) and r.get("resource") == "podgroups" and r.get("name") == name for r in reserved
    )


def _controller_uid(claim: ObjView) -> str | None:
    for ref in meta(claim).get("ownerReferences") or ():
        if isinstance(ref, Mapping) and ref.get("controller"):
            return str(ref.get("uid") or "")
    return None


def _controller_pod_group(claim: ObjView) -> str | None:
    """The name of the PodGroup that controls a claim (its API group checked, not its version)."""
    for ref in meta(claim).get("ownerReferences") or ():
        if isinstance(ref, Mapping) and ref.get("controller"):
            version = str(ref.get("apiVersion") or "")
            if ref.get("kind") == "PodGroup" and version.startswith(SCHEDULING_GROUP + "/"):
                return str(ref.get("name") or "")
            return None
    return None


class ResourceClaimController(PodObjectController):
    """Register with the cluster (done here), then `start` once the initial objects exist."""

    def __init__(
        self,
        cluster: EmbeddedCluster,
        names: NameGenerator,
        *,
        admit: Callable[[Obj], str],
        warn: Callable[[str], None] | None = None,
        workload_claims: bool = False,
    ) -> None:
        super().__init__(cluster, names, admit=admit, warn=warn)
        # DRAWorkloadResourceClaims: a claim owned by or reserved for the pod's PodGroup serves the pod as its own.
        self.workload_claims = workload_claims
        self._deleted_pods: set[str] = set()  # uids of pods seen deleted (upstream's deletedObjects)
        # Claims by the uids of the pods that own them or that they are reserved for (upstream's claim
        # indexer), so that a pod's event does not walk every claim.
        self._by_pod: dict[str, set[Key]] = {}
        self._pods_of: dict[Key, set[str]] = {}
        for claim in cluster.list("ResourceClaim"):
            self._index(claim)
        cluster.add_controller(self)

    def _index(self, claim: ObjView) -> None:
        key = ("ResourceClaim", namespace_of(claim), name_of(claim))
        owner = owning_pod(claim)
        uids = {
            str(r.get("uid")) for r in (claim.get("status") or {}).get("reservedFor") or () if isinstance(r, Mapping)
        }
        if owner is not None:
            uids.add(owner[1])
        self._unindex(key)
        self._pods_of[key] = uids
        for uid in uids:
            self._by_pod.setdefault(uid, set()).add(key)

    def _unindex(self, key: Key) -> None:
        for uid in self._pods_of.pop(key, ()):
            keys = self._by_pod.get(uid)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._by_pod[uid]

    def _claims_of_pod(self, uid: str) -> list[ObjView]:
        """The claims the pod owns or is reserved in, in name order."""
        found = (self.cluster.get(*key) for key in sorted(self._by_pod.get(uid, ())))
        return [c for c in found if c is not None]

    def __call__(self, kind: str, event: str, old: Obj | None, new: Obj | None) -> None:
        if kind == "Pod" and event == "DELETED" and old is not None:
            self._deleted_pods.add(uid_of(old))
        if kind == "ResourceClaim":
            if new is not None:
                self._index(new)
            elif old is not None:
                self._unindex(("ResourceClaim", namespace_of(old), name_of(old)))
        if not self.started:
            return
        if kind == "PodGroup" and new is not None and self.workload_claims:
            self._work.add(("PodGroup", namespace_of(new), name_of(new)))
            for pod in self._members(new):  # its status may now name the claims its members wait for
                self._work.add(("Pod", namespace_of(pod), name_of(pod)))
        elif kind == "PodGroup" and old is not None and self.workload_claims:
            for claim in self.cluster.list("ResourceClaim"):  # its claims and reservations go with it
                if namespace_of(claim) == namespace_of(old) and _names_group(claim, old):
                    self._work.add(("ResourceClaim", namespace_of(claim), name_of(claim)))
        if kind == "Pod":
            obj = new if new is not None else old
            assert obj is not None
            if not spec(obj).get("resourceClaims") and uid_of(obj) not in self._by_pod:
                return  # it names no claim and none is reserved for or owned by it: nothing to sync
            if new is not None:
                self._work.add(("Pod", namespace_of(new), name_of(new)))
            self._enqueue_claims_of(obj)
        elif kind == "ResourceClaim" and new is not None:
            self._work.add(("ResourceClaim", namespace_of(new), name_of(new)))
        self._work.drain()

    def start(self) -> None:
        """Sync every pod and claim the cluster holds, then follow changes."""
        self.started = True
        for pod in self.cluster.list("Pod"):
            self._work.add(("Pod", namespace_of(pod), name_of(pod)))
        for claim in self.cluster.list("ResourceClaim"):
            self._work.add(("ResourceClaim", namespace_of(claim), name_of(claim)))
        if self.workload_claims:
            for group in self.cluster.list("PodGroup"):
                self._work.add(("PodGroup", namespace_of(group), name_of(group)), first=True)
        self._work.drain()

    def _enqueue_claims_of(self, pod: ObjView) -> None:
        """Claims that name the pod (its entries) or are reserved for or owned by it."""
        ns, uid = namespace_of(pod), uid_of(pod)
        for entry in spec(pod).get("resourceClaims") or ():
            if isinstance(entry, Mapping):
                name = claim_name(pod, entry)
                if name:
                    self._work.add(("ResourceClaim", ns, name))
        for claim in self._claims_of_pod(uid):
            if namespace_of(claim) == ns:
                self._work.add(("ResourceClaim", ns, name_of(claim)))

    def _sync(self, obj: Obj) -> None:
        if obj.get("kind") == "Pod":
            self._sync_pod(obj)
        elif obj.get("kind") == "ResourceClaim":
            self._sync_claim(obj)
        elif obj.get("kind") == "PodGroup":
            self._sync_pod_group(obj)

    # PodGroups (DRAWorkloadResourceClaims).

    def _members(self, group: ObjView) -> list[ObjView]:
        ns, name = namespace_of(group), name_of(group)
        return [p for p in self.cluster.list("Pod") if namespace_of(p) == ns and _pod_group_name(p) == name]

    def _sync_pod_group(self, group: Obj) -> None:
        """syncPodGroup: a claim made from the template of each template entry, recorded in the group's status."""
        if meta(group).get("deletionTimestamp"):
            return
        made: dict[str, str] = {}
        for entry in spec(group).get("resourceClaims") or ():
            if not isinstance(entry, Mapping):
                continue
            name = self._handle_group_entry(group, entry)
            if name:
                made[str(entry.get("name") or "")] = name
        if not made:
            return
        status = dict(group.get("status") or {})
        kept = [s for s in status.get("resourceClaimStatuses") or () if s.get("name") not in made]
        status["resourceClaimStatuses"] = kept + [{"name": n, "resourceClaimName": c} for n, c in made.items()]
        self._update({**group, "metadata": dict(meta(group)), "status": status})

    def _handle_group_entry(self, group: ObjView, entry: Mapping[str, Any]) -> str:
        """handlePodGroupClaim: the name of the claim made (or found) for a template entry the status lacks."""
        template_name = entry.get("resourceClaimTemplateName")
        entry_name = str(entry.get("name") or "")
        ns = namespace_of(group)
        recorded = claim_status_name(group, entry_name)
        if recorded is not None:
            if not recorded:
                return ""
            existing = self.cluster.get("ResourceClaim", ns, recorded)
            if existing is not None and _controller_uid(existing) == uid_of(group):
                return ""
        if not template_name:
            return ""
        found = self._group_claim(group, entry_name)
        if found is not None:
            return name_of(found)
        template = self.cluster.get("ResourceClaimTemplate", ns, str(template_name))
        if template is None:
            self._warn_group(
                group,
                f"PodGroupResourceClaim {entry_name}: resource claim template {str(template_name)!r}: "
                f'resourceclaimtemplates.resource.k8s.io "{template_name}" not found',
            )
            return ""
        owner = {
            "apiVersion": POD_GROUP_API_VERSION,
            "kind": "PodGroup",
            "name": name_of(group),
            "uid": uid_of(group),
            "controller": True,
        }
        claim = _claim_from_template(template, ns, owner, entry_name)
        return self._create(group, claim, generate_name(name_of(group), entry_name))

    def _group_claim(self, group: ObjView, entry_name: str) -> ObjView | None:
        """findPodGroupResourceClaim: a claim the group controls that was made for this entry."""
        ns, uid = namespace_of(group), uid_of(group)
        for claim in self.cluster.list("ResourceClaim"):
            if (
                namespace_of(claim) == ns
                and _controller_uid(claim) == uid
                and (meta(claim).get("annotations") or {}).get(POD_CLAIM_ANNOTATION) == entry_name
            ):
                return claim
        return None

    def _warn_group(self, group: ObjView, message: str) -> None:
        key = ("PodGroup", namespace_of(group), name_of(group))
        if self.warn is not None and key not in self._warned:
            self._warned.add(key)
            self.warn(f"podgroup {key[1]}/{key[2]}: {message}")

    def _shared_with_group(self, pod: ObjView, entry: Mapping[str, Any]) -> ObjView | None:
        """The pod's PodGroup when the entry equals one of its claims (resourceclaim.BindTo to the PodGroup)."""
        name = _pod_group_name(pod) if self.workload_claims else None
        group = self.cluster.get("PodGroup", namespace_of(pod), name) if name else None
        if group is None:
            return None
        for claim in spec(group).get("resourceClaims") or ():
            if isinstance(claim, Mapping) and all(
                claim.get(k) == entry.get(k) for k in ("name", "resourceClaimName", "resourceClaimTemplateName")
            ):
                return group
        return None

    # Pods.

    def _sync_pod(self, pod: Obj) -> None:
        if meta(pod).get("deletionTimestamp") or is_pod_done(pod):
            return
        group_name = _pod_group_name(pod) if self.workload_claims else None
        if group_name is not None and self.cluster.get("PodGroup", namespace_of(pod), group_name) is None:
            return  # upstream's syncPod fails until the PodGroup exists; its creation brings the pod back
        new_statuses: dict[str, str] = {}
        for entry in spec(pod).get("resourceClaims") or ():
            if isinstance(entry, Mapping):
                made = self._handle_entry(pod, entry)
                if made:
                    new_statuses[str(entry.get("name") or "")] = made
        if new_statuses:
            pod = self._record_statuses(pod, new_statuses)
        if not spec(pod).get("nodeName"):
            return  # the scheduler reserves
        for entry in spec(pod).get("resourceClaims") or ():
            if not isinstance(entry, Mapping):
                continue
            name = claim_name(pod, entry)
            claim = self.cluster.get("ResourceClaim", namespace_of(pod), name) if name else None
            if claim is None or not self._is_for_pod(pod, entry, claim):
                continue
            status = claim.get("status") or {}
            if status.get("allocation") is not None and not self._reserved_for(claim, pod):
                updated = copy.copy(claim)
                group = self._shared_with_group(pod, entry)  # resourceclaim.BindTo: the PodGroup or the pod
                consumer = (
                    {
                        "apiGroup": SCHEDULING_GROUP,
                        "resource": "podgroups",
                        "name": name_of(group),
                        "uid": uid_of(group),
                    }
                    if group is not None
                    else {"resource": "pods", "name": name_of(pod), "uid": uid_of(pod)}
                )
                updated["status"] = {**status, "reservedFor": [*(status.get("reservedFor") or ()), consumer]}
                self._update(updated)

    def _is_for_pod(self, pod: ObjView, entry: Mapping[str, Any], claim: ObjView) -> bool:
        if entry.get("resourceClaimName"):
            return True
        owner = owning_pod(claim)
        if owner is not None and owner[1] == uid_of(pod):
            return True
        group = _pod_group_name(pod)
        return self.workload_claims and group is not None and _controller_pod_group(claim) == group

    def _reserved_for(self, claim: ObjView, pod: ObjView) -> bool:
        """IsReservedForPod: the pod, or with the gate its PodGroup (by name), is a consumer of the claim."""
        if _reserved_for_pod(claim, pod):
            return True
        group = _pod_group_name(pod) if self.workload_claims else None
        return group is not None and any(
            isinstance(r, Mapping)
            and r.get("apiGroup") == SCHEDULING_GROUP
            and r.get("resource") == "podgroups"
            and r.get("name") == group
            for r in (claim.get("status") or {}).get("reservedFor") or ()
        )

    def _handle_entry(self, pod: Obj, entry: Mapping[str, Any]) -> str:
        """The name of a claim made (or found) for a template entry that the pod's status lacks; '' otherwise."""
        template_name = entry.get("resourceClaimTemplateName")
        entry_name = str(entry.get("name") or "")
        ns = namespace_of(pod)
        recorded = claim_status_name(pod, entry_name)
        if recorded is not None:
            if not recorded:
                return ""  # the claim is not needed
            existing = self.cluster.get("ResourceClaim", ns, recorded)
            if existing is not None and self._is_for_pod(pod, entry, existing):
                return ""
        if not template_name:
            return ""
        group = self._shared_with_group(pod, entry)
        if group is not None:  # the PodGroup's claim, once made; the pod waits for it meanwhile
            shared = self._group_claim(group, entry_name)
            return "" if shared is None else name_of(shared)
        found = self._orphan(pod, entry_name)
        if found is not None:
            return name_of(found)
        template = self.cluster.get("ResourceClaimTemplate", ns, str(template_name))
        if template is None:
            self._warn_once(
                pod,
                f"PodResourceClaim {entry_name}: resource claim template {str(template_name)!r}: "
                f'resourceclaimtemplates.resource.k8s.io "{template_name}" not found',
            )
            return ""
        owner = {"apiVersion": "v1", "kind": "Pod", "name": name_of(pod), "uid": uid_of(pod), "controller": True}
        claim = _claim_from_template(template, ns, owner, entry_name)
        return self._create(pod, claim, generate_name(name_of(pod), entry_name))

    def _orphan(self, pod: ObjView, entry_name: str) -> ObjView | None:
        for claim in self._claims_of_pod(uid_of(pod)):
            owner = owning_pod(claim)
            if (
                namespace_of(claim) == namespace_of(pod)
                and owner is not None
                and owner[1] == uid_of(pod)
                and (meta(claim).get("annotations") or {}).get(POD_CLAIM_ANNOTATION) == entry_name
            ):
                return claim
        return None

    def _create(self, owner: ObjView, claim: Obj, base: str) -> str:
        claim_meta = claim["metadata"]
        ns = claim_meta["namespace"]
        claim_meta["name"] = self.names.generate(base)
        while self.cluster.get("ResourceClaim", ns, claim_meta["name"]) is not None:
            claim_meta["name"] = self.names.generate(base)
        claim_meta["uid"] = self.names.uid()
        claim_meta["creationTimestamp"] = self.cluster.timestamp()
        warn = self._warn_group if owner.get("kind") == "PodGroup" else self._warn_once
        problem = self.admit(claim)
        if problem:
            warn(owner, f"cannot create ResourceClaim {ns}/{claim_meta['name']}: {problem}")
            return ""
        try:
            self.cluster.create(claim)
        except ConflictError as err:
            warn(owner, str(err))
            return ""
        return str(claim_meta["name"])

    def _record_statuses(self, pod: Obj, made: dict[str, str]) -> Obj:
        """Apply the new entries to status.resourceClaimStatuses (merged by name, as the controller's apply is)."""
        status = dict(pod.get("status") or {})
        kept = [s for s in status.get("resourceClaimStatuses") or () if s.get("name") not in made]
        order = [str(e.get("name") or "") for e in spec(pod).get("resourceClaims") or () if isinstance(e, Mapping)]
        added = [{"name": n, "resourceClaimName": made[n]} for n in order if n in made]
        status["resourceClaimStatuses"] = kept + added
        updated = {**pod, "metadata": dict(meta(pod)), "status": status}
        return self._update(updated) or pod

    # Claims.

    def _pod_gone(self, ns: str, ref: Mapping[str, Any]) -> bool:
        uid = str(ref.get("uid") or "")
        if uid in self._deleted_pods:
            return True
        pod = self.cluster.get("Pod", ns, str(ref.get("name") or ""))
        return pod is None or uid_of(pod) != uid or is_pod_done(pod)

    def _consumer_gone(self, ns: str, ref: Mapping[str, Any]) -> bool:
        """A reservation to drop: its pod is gone, replaced or done, or (with the gate) its PodGroup is gone or
        replaced."""
        if not ref.get("apiGroup") and ref.get("resource") == "pods":
            return self._pod_gone(ns, ref)
        if self.workload_claims and ref.get("apiGroup") == SCHEDULING_GROUP and ref.get("resource") == "podgroups":
            group = self.cluster.get("PodGroup", ns, str(ref.get("name") or ""))
            return group is None or uid_of(group) != str(ref.get("uid") or "")
        return False

    def _sync_claim(self, claim: Obj) -> None:
        ns = namespace_of(claim)
        status = claim.get("status") or {}
        reserved = [r for r in status.get("reservedFor") or () if isinstance(r, Mapping)]
        remaining = [r for r in reserved if not self._consumer_gone(ns, r)]
        finalizers = list(meta(claim).get("finalizers") or ())
        if len(remaining) < len(reserved):
            new_status = {**status, "reservedFor": remaining}
            if not remaining:
                new_status.pop("reservedFor")
                if FINALIZER in finalizers:
                    new_status.pop("allocation", None)
            updated = {**claim, "status": new_status}
            if FINALIZER in finalizers and "allocation" not in new_status:
                updated["metadata"] = {**meta(claim), "finalizers": [f for f in finalizers if f != FINALIZER]}
            if not self._update(updated):
                return
            claim = updated
        if remaining:
            return
        if self.workload_claims and _controller_pod_group(claim) is not None:
            group = self.cluster.get("PodGroup", ns, str(_controller_pod_group(claim)))
            if group is None or uid_of(group) != _controller_uid(claim):
                self._delete(claim)  # the garbage collector: its PodGroup is gone
            return
        owner = owning_pod(claim)
        if owner is None:
            return
        pod = self.cluster.get("Pod", ns, owner[0])
        if owner[1] in self._deleted_pods and (pod is None or uid_of(pod) != owner[1]):
            self._delete(claim)  # the garbage collector: its owner is gone
        elif pod is not None and (uid_of(pod) != owner[1] or is_pod_done(pod)):
            self._delete(claim)

    # Writing.

    def _update(self, obj: Obj) -> Obj | None:
        try:
            return self.cluster.update(obj)
        except ConflictError:
            return None

    def _delete(self, obj: ObjView) -> None:
        try:
            self.cluster.delete("ResourceClaim", namespace_of(obj), name_of(obj))
        except ConflictError:
            pass


def _claim_from_template(template: ObjView, ns: str, owner: Obj, entry_name: str) -> Obj:
    """A claim as the controller makes it from a template for its owner (a pod or a PodGroup), before naming."""
    tmeta = (template.get("spec") or {}).get("metadata") or {}
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceClaim",
        "metadata": {
            "namespace": ns,
            "ownerReferences": [owner],
            "annotations": {**(tmeta.get("annotations") or {}), POD_CLAIM_ANNOTATION: entry_name},
            **({"labels": dict(tmeta["labels"])} if tmeta.get("labels") else {}),
        },
        "spec": copy.deepcopy((template.get("spec") or {}).get("spec") or {}),
    }
