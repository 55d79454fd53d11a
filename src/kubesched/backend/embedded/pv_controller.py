"""The embedded cluster's stand-in for kube-controller-manager's PV controller and a provisioner.

Without it a simulated claim would never become Bound: the scheduler only pre-binds
a PV (claimRef) or asks for provisioning (the selected-node annotation), and waits
for a controller to finish. This one finishes at once, the way the real controller
does on a healthy cluster:

- a free PV becomes Available;
- a claim pre-bound by a PV's claimRef (the scheduler's static binding) is bound;
- an Immediate claim is bound to the smallest matching PV, or provisioned if its
  class has a provisioner;
- a claim that names its volume (spec.volumeName) is bound to it only if the volume
  satisfies it (size, class, volume mode, access modes), else it stays Pending;
- a WaitForFirstConsumer claim is provisioned once it carries the selected-node
  annotation. Provisioned PVs follow the class's allowedTopologies, narrowed to
  the selected node's values, and are CSI volumes of the provisioner's driver.

Matching is the real controller's: volumes are searched by access modes, from the
smallest set of modes that holds all the claim's to the largest, and in each set
FindMatchingVolume picks the volume pre-bound to the claim or the smallest one that
fits (class, selector, size, volume mode, not being deleted, Available). Node affinity
is the scheduler's business, not the controller's. Partial objects (a PV without
`spec`) never make it raise.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from kubesched.api import volumes as vol
from kubesched.api.object import Obj
from kubesched.backend.errors import ConflictError

# Access modes in the order the controller's index writes them (GetAccessModesAsString).
_MODE_ORDER = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")


def _modes(obj: Mapping[str, Any]) -> frozenset[str]:
    return frozenset(str(m) for m in vol.spec(obj).get("accessModes") or ())


def _mode_key(modes: frozenset[str]) -> tuple[int, tuple[int, ...]]:
    """Sets with fewer modes first, as allPossibleMatchingAccessModes sorts them; ties in a fixed order."""
    return len(modes), tuple(sorted(_MODE_ORDER.index(m) if m in _MODE_ORDER else len(_MODE_ORDER) for m in modes))


def find_best_match_for_claim(pvc: Mapping[str, Any], volumes: Iterable[Mapping[str, Any]], delayed: bool) -> Any:
    """findBestMatchForClaim: FindMatchingVolume over each access-mode set that holds all the claim's modes."""
    wanted = _modes(pvc)
    groups: dict[frozenset[str], list[Mapping[str, Any]]] = {}
    for pv in volumes:
        groups.setdefault(_modes(pv), []).append(pv)
    for modes in sorted((m for m in groups if wanted <= m), key=_mode_key):
        try:
            match = vol.find_matching_volume(pvc, groups[modes], None, {}, delayed)
        except ValueError:
            return None  # a selector that cannot be parsed matches nothing
        if match is not None:
            return match
    return None


def volume_satisfies_claim(pv: Mapping[str, Any], pvc: Mapping[str, Any]) -> bool:
    """checkVolumeSatisfyClaim: not being deleted, large enough, same class and volume mode, every access mode."""
    return (
        not vol.meta(pv).get("deletionTimestamp")
        and vol.volume_capacity(pv) >= vol.requested_storage(pvc)
        and vol.volume_class(pv) == vol.claim_class(pvc)
        and not vol.volume_mode_mismatch(pvc, pv)
        and _modes(pvc) <= _modes(pv)
    )


class PVController:
    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster
        cluster.add_controller(self)

    def __call__(self, kind: str, event: str, old: Obj | None, new: Obj | None) -> None:
        if new is None:
            return
        if kind == "PersistentVolume":
            self._sync_volume(new)
        elif kind == "PersistentVolumeClaim":
            self._sync_claim(new)

    def _sync_volume(self, pv: Obj) -> None:
        ref = vol.spec(pv).get("claimRef")
        if not isinstance(ref, dict) or not ref:
            if (pv.get("status") or {}).get("phase") in (None, "", "Pending") and not vol.meta(pv).get(
                "deletionTimestamp"
            ):
                available = copy.deepcopy(pv)
                available["status"] = dict(available.get("status") or {}, phase="Available")
                self._update(available)
                return  # the update comes back here as an Available volume
            # A free volume may serve a claim that found none before (the real controller resyncs claims).
            for pvc in self.cluster.list("PersistentVolumeClaim"):
                if not vol.spec(pvc).get("volumeName") and not vol.is_claim_fully_bound(pvc):
                    self._sync_claim(pvc)
            return
        pvc = self.cluster.get("PersistentVolumeClaim", ref.get("namespace") or "default", ref.get("name") or "")
        if pvc is None or vol.is_claim_fully_bound(pvc) or not vol.is_volume_bound_to_claim(pv, pvc):
            return
        self._sync_claim(pvc)

    def _sync_claim(self, pvc: Obj) -> None:
        if vol.is_claim_fully_bound(pvc) or (pvc.get("status") or {}).get("phase") == "Lost":
            return
        name = vol.spec(pvc).get("volumeName")
        if name:
            pv = self.cluster.get("PersistentVolume", "", name)
            if pv is None:
                return
            if vol.is_volume_bound_to_claim(pv, pvc) or (
                not vol.spec(pv).get("claimRef") and volume_satisfies_claim(pv, pvc)
            ):
                self._bind(pv, pvc)
            return  # bound elsewhere, or a mismatch: the claim stays Pending (event VolumeMismatch upstream)
        delayed = vol.is_delay_binding(pvc, self.cluster)
        selected = vol.object_annotations(pvc).get(vol.ANN_SELECTED_NODE)
        match = find_best_match_for_claim(pvc, self.cluster.list("PersistentVolume"), delayed)
        if match is not None:
            self._bind(dict(match), pvc)
            return
        if delayed and not selected:
            return  # the scheduler decides
        sc = self.cluster.get("StorageClass", "", vol.claim_class(pvc)) if vol.claim_class(pvc) else None
        if sc is None or sc.get("provisioner") in (None, "", vol.NOT_SUPPORTED_PROVISIONER):
            return
        self._provision(pvc, sc, selected)

    def _bind(self, pv: Obj, pvc: Obj) -> None:
        """Bind both ways: claimRef and phase on the PV, volumeName, annotations and phase on the claim."""
        m = vol.meta(pvc)
        ref = {"kind": "PersistentVolumeClaim", "namespace": m.get("namespace") or "default", "name": m.get("name")}
        if m.get("uid"):
            ref["uid"] = m["uid"]
        new_pv = copy.deepcopy(pv)
        if not isinstance(new_pv.get("spec"), dict):
            new_pv["spec"] = {}
        new_pv["spec"]["claimRef"] = dict(vol.spec(pv).get("claimRef") or {}, **ref)
        if not isinstance(new_pv.get("status"), dict):
            new_pv["status"] = {}
        new_pv["status"]["phase"] = "Bound"
        new_pvc = copy.deepcopy(pvc)
        for key in ("spec", "metadata", "status"):
            if not isinstance(new_pvc.get(key), dict):
                new_pvc[key] = {}
        new_pvc["spec"]["volumeName"] = vol.meta(pv).get("name")
        if not isinstance(new_pvc["metadata"].get("annotations"), dict):
            new_pvc["metadata"]["annotations"] = {}
        ann = new_pvc["metadata"]["annotations"]
        ann[vol.ANN_BIND_COMPLETED] = "yes"
        ann.setdefault(vol.ANN_BOUND_BY_CONTROLLER, "yes")
        status = new_pvc["status"]
        status["phase"] = "Bound"
        status["accessModes"] = list(vol.spec(pv).get("accessModes") or ())
        status["capacity"] = dict(vol.spec(pv).get("capacity") or {})
        if vol.spec(pv) != new_pv["spec"] or (pv.get("status") or {}).get("phase") != "Bound":
            if not self._update(new_pv):
                return
        self._update(new_pvc)

    def _update(self, obj: Obj) -> bool:
        try:
            self.cluster.update(obj)
        except ConflictError:
            return False  # deleted meanwhile: nothing to do
        return True

    def _provision(self, pvc: Obj, sc: Obj, selected_node: str | None) -> None:
        m = vol.meta(pvc)
        name = f"pvc-{m.get('uid') or (m.get('namespace') or 'default') + '-' + str(m.get('name'))}"
        if self.cluster.get("PersistentVolume", "", name) is not None:
            return
        pv_spec: Obj = {
            "capacity": {
                "storage": ((vol.spec(pvc).get("resources") or {}).get("requests") or {}).get("storage") or "0"
            },
            "accessModes": list(vol.spec(pvc).get("accessModes") or ()),
            "storageClassName": vol.claim_class(pvc),
            "persistentVolumeReclaimPolicy": sc.get("reclaimPolicy") or "Delete",
            "volumeMode": vol.spec(pvc).get("volumeMode") or "Filesystem",
            "csi": {"driver": sc["provisioner"], "volumeHandle": name},
            "claimRef": {
                "kind": "PersistentVolumeClaim",
                "namespace": m.get("namespace") or "default",
                "name": m.get("name"),
            },
        }
        affinity = self._topology(sc, selected_node)
        if affinity:
            pv_spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": affinity}}
        pv = {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": name, "annotations": {vol.ANN_PROVISIONED_BY: sc["provisioner"]}},
            "spec": pv_spec,
            "status": {"phase": "Available"},
        }
        self.cluster.create(pv)

    def _topology(self, sc: Obj, selected_node: str | None) -> list[Obj]:
        """The provisioned volume is reachable where the class allows, pinned to the selected node's domain."""
        terms = sc.get("allowedTopologies") or []
        node = self.cluster.get("Node", "", selected_node) if selected_node else None
        labels = vol.meta(node).get("labels") or {} if node is not None else {}
        out = []
        for t in terms:
            exprs = []
            for e in (t.get("matchLabelExpressions") or ()) if isinstance(t, dict) else ():
                values = list(e.get("values") or ())
                if e.get("key") in labels:
                    values = [labels[e["key"]]] if labels[e["key"]] in values else values
                exprs.append({"key": e.get("key"), "operator": "In", "values": values})
            out.append({"matchExpressions": exprs})
        return out
