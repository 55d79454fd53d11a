"""kube-controller-manager's ephemeral volume controller, and the garbage collection of what it makes.

A pod with a generic ephemeral volume (`volumes[].ephemeral.volumeClaimTemplate`) can
only be scheduled once its claim `<pod>-<volume>` exists and is controlled by the pod;
the scheduler waits for the controller to make it. Without this stand-in such pods
would stay pending in every simulation. As upstream (pkg/controller/volume/ephemeral):

- when a pod that is not being deleted is created, each of its ephemeral volumes
  without a claim gets one: the template's labels, annotations and spec, the pod as
  owner (`controller: true`, `blockOwnerDeletion: true`), admitted as any created
  object (the default StorageClass filled in);
- a claim of that name that the pod does not control is left alone, and the pod
  keeps waiting (the scheduler says why); one warning per pod, where upstream
  records a FailedBinding event;
- a claim deleted while a pod that needs it exists is made again;
- when the pod goes, the claims it owns go too, once no other owner of theirs is
  left (the garbage collector's background propagation).

Pod updates are ignored: a pod's volumes cannot change.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from kubesched.api import volumes as vol
from kubesched.api.kinds import KINDS, NAMESPACED
from kubesched.api.object import Obj, ObjView
from kubesched.backend.embedded.cluster import ConflictError, EmbeddedCluster
from kubesched.backend.embedded.controllers.controller_utils import (
    Key,
    NameGenerator,
    PodObjectController,
    meta,
    name_of,
    namespace_of,
)
from kubesched.backend.embedded.controllers.resource_claim import uid_of

PVC = "PersistentVolumeClaim"


def ephemeral_volumes(pod: ObjView) -> list[Mapping[str, Any]]:
    """The pod's generic ephemeral volumes, in spec order."""
    return [v for v in vol.pod_volumes(pod) if isinstance(v, Mapping) and v.get("ephemeral") is not None]


def claim_for(pod: ObjView, volume: Mapping[str, Any]) -> Obj:
    """The PVC upstream's controller creates for one ephemeral volume of the pod (without uid or timestamp)."""
    template = (volume.get("ephemeral") or {}).get("volumeClaimTemplate") or {}
    tmeta = template.get("metadata") or {}
    claim_meta: dict[str, Any] = {
        "name": f"{name_of(pod)}-{volume.get('name', '')}",
        "namespace": namespace_of(pod),
        "ownerReferences": [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": name_of(pod),
                "uid": uid_of(pod),
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    }
    if tmeta.get("labels"):
        claim_meta["labels"] = dict(tmeta["labels"])
    if tmeta.get("annotations"):
        claim_meta["annotations"] = dict(tmeta["annotations"])
    return {
        "apiVersion": "v1",
        "kind": PVC,
        "metadata": claim_meta,
        "spec": copy.deepcopy(template.get("spec") or {}),
    }


def _controlling_pod_uid(claim: ObjView) -> str | None:
    """The uid in the claim's first controller reference when that reference names a Pod."""
    for ref in meta(claim).get("ownerReferences") or ():
        if isinstance(ref, Mapping) and ref.get("controller") is True:
            return str(ref.get("uid") or "") if ref.get("kind") == "Pod" else None
    return None


class EphemeralVolumeController(PodObjectController):
    """Register with the cluster (done here), then `start` once the initial objects exist."""

    def __init__(
        self,
        cluster: EmbeddedCluster,
        names: NameGenerator,
        *,
        admit: Callable[[Obj], str],
        warn: Callable[[str], None] | None = None,
    ) -> None:
        super().__init__(cluster, names, admit=admit, warn=warn)
        # Upstream's pod index by the claims a pod's ephemeral volumes name, so a deleted claim finds its pods;
        # and the claims each pod uid controls, so a deleted pod finds what to collect.
        self._pods_of_claim: dict[tuple[str, str], set[str]] = {}
        self._claims_of_pod: dict[str, set[Key]] = {}
        for pod in cluster.list("Pod"):
            self._index_pod(pod, add=True)
        for claim in cluster.list(PVC):
            self._index_claim(claim, add=True)
        cluster.add_controller(self)

    def _index_pod(self, pod: ObjView, *, add: bool) -> None:
        ns, name = namespace_of(pod), name_of(pod)
        for volume in ephemeral_volumes(pod):
            key = (ns, f"{name}-{volume.get('name', '')}")
            pods = self._pods_of_claim.setdefault(key, set())
            if add:
                pods.add(name)
            else:
                pods.discard(name)
                if not pods:
                    del self._pods_of_claim[key]

    def _index_claim(self, claim: ObjView, *, add: bool) -> None:
        uid = _controlling_pod_uid(claim)
        if not uid:
            return
        key = (PVC, namespace_of(claim), name_of(claim))
        claims = self._claims_of_pod.setdefault(uid, set())
        if add:
            claims.add(key)
        else:
            claims.discard(key)
            if not claims:
                del self._claims_of_pod[uid]

    def __call__(self, kind: str, event: str, old: Obj | None, new: Obj | None) -> None:
        if kind == "Pod" and event in ("ADDED", "DELETED"):
            obj = new if new is not None else old
            assert obj is not None
            self._index_pod(obj, add=new is not None)
        elif kind == PVC:
            if old is not None:
                self._index_claim(old, add=False)
            if new is not None:
                self._index_claim(new, add=True)
        if not self.started:
            return
        if kind == "Pod" and event == "ADDED" and new is not None:
            self._enqueue(new)
        elif kind == "Pod" and event == "DELETED" and old is not None:
            self._collect_garbage(old)
        elif kind == PVC and event == "DELETED" and old is not None:
            for name in sorted(self._pods_of_claim.get((namespace_of(old), name_of(old)), ())):
                pod = self.cluster.get("Pod", namespace_of(old), name)
                if pod is not None:
                    self._enqueue(pod)
        self._work.drain()

    def start(self) -> None:
        """Make the claims of every pod the cluster holds, then follow changes."""
        self.started = True
        for pod in self.cluster.list("Pod"):
            self._enqueue(pod)
        self._work.drain()

    def _enqueue(self, pod: ObjView) -> None:
        if not meta(pod).get("deletionTimestamp") and ephemeral_volumes(pod):
            self._work.add(("Pod", namespace_of(pod), name_of(pod)))

    def _sync(self, pod: Obj) -> None:
        if meta(pod).get("deletionTimestamp"):
            return
        for volume in ephemeral_volumes(pod):
            claim = claim_for(pod, volume)
            existing = self.cluster.get(PVC, namespace_of(pod), claim["metadata"]["name"])
            if existing is not None:
                problem = vol.ephemeral_owner_error(pod, existing)
                if problem:
                    self._warn_once(pod, f"ephemeral volume {volume.get('name', '')}: {problem}")
                    return  # upstream's sync stops at the first failing volume and retries later
                continue
            if not self._create(pod, volume, claim):
                return

    def _create(self, pod: ObjView, volume: Mapping[str, Any], claim: Obj) -> bool:
        claim_meta = claim["metadata"]
        claim_meta["uid"] = self.names.uid()
        claim_meta["creationTimestamp"] = self.cluster.timestamp()
        where = f"create PVC {claim_meta['name']}"
        problem = self.admit(claim)
        if problem:
            self._warn_once(pod, f"ephemeral volume {volume.get('name', '')}: {where}: {problem}")
            return False
        try:
            self.cluster.create(claim)
        except ConflictError as err:
            self._warn_once(pod, f"ephemeral volume {volume.get('name', '')}: {where}: {err}")
            return False
        return True

    # The garbage collector.

    def _owner_exists(self, ref: Mapping[str, Any], namespace: str) -> bool:
        kind = str(ref.get("kind") or "")
        if kind not in KINDS:
            return True  # an owner the embedded cluster cannot hold: assume it is there
        owner = self.cluster.get(kind, namespace if kind in NAMESPACED else "", str(ref.get("name") or ""))
        if owner is None:
            return False
        uid = str(ref.get("uid") or "")
        return not uid or uid_of(owner) == uid

    def _collect_garbage(self, pod: ObjView) -> None:
        """The deleted pod's claims, unless one of their other owners is still there."""
        for key in sorted(self._claims_of_pod.get(uid_of(pod), set())):
            claim = self.cluster.get(*key)
            if claim is None or _controlling_pod_uid(claim) != uid_of(pod):
                continue
            refs = [r for r in meta(claim).get("ownerReferences") or () if isinstance(r, Mapping)]
            if not any(self._owner_exists(r, key[1]) for r in refs):
                try:
                    self.cluster.delete(*key)
                except ConflictError:
                    pass
