"""The embedded cluster's stand-in for kube-controller-manager's PV controller and a provisioner.

Without it a simulated claim would never become Bound: the scheduler only pre-binds
a PV (claimRef) or asks for provisioning (the selected-node annotation), and waits
for a controller to finish. This one finishes at once, the way the real controller
does on a healthy cluster:

- a claim pre-bound by a PV's claimRef (the scheduler's static binding) is bound;
- an Immediate claim is bound to the smallest matching PV, or provisioned if its
  class has a provisioner;
- a WaitForFirstConsumer claim is provisioned once it carries the selected-node
  annotation. Provisioned PVs follow the class's allowedTopologies, narrowed to
  the selected node's values, and are CSI volumes of the provisioner's driver.
"""

from __future__ import annotations

import copy
from typing import Any

from kubesched.api import volumes as vol
from kubesched.backend.errors import ConflictError

Obj = dict[str, Any]


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
        if not ref:
            # A free volume may serve a claim that found none before (the real controller resyncs claims).
            for pvc in self.cluster.list("PersistentVolumeClaim"):
                if not vol.spec(pvc).get("volumeName") and not vol.is_claim_fully_bound(pvc):
                    self._sync_claim(pvc)
            return
        pvc = self.cluster.get("PersistentVolumeClaim", ref.get("namespace") or "default", ref.get("name") or "")
        if pvc is None or vol.is_claim_fully_bound(pvc) or not vol.is_volume_bound_to_claim(pv, pvc):
            return
        self._bind(pv, pvc)

    def _sync_claim(self, pvc: Obj) -> None:
        if vol.is_claim_fully_bound(pvc) or (pvc.get("status") or {}).get("phase") == "Lost":
            return
        name = vol.spec(pvc).get("volumeName")
        if name:
            pv = self.cluster.get("PersistentVolume", "", name)
            if pv is not None and (not vol.spec(pv).get("claimRef") or vol.is_volume_bound_to_claim(pv, pvc)):
                self._bind(pv, pvc)
            return
        delayed = vol.is_delay_binding(pvc, self.cluster)
        selected = vol.annotations(pvc).get(vol.ANN_SELECTED_NODE)
        if delayed and not selected:
            return  # the scheduler decides
        match = vol.find_matching_volume(pvc, self.cluster.list("PersistentVolume"), None, {}, delayed)
        if match is not None:
            self._bind(dict(match), pvc)
            return
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
        new_pv["spec"]["claimRef"] = dict(vol.spec(pv).get("claimRef") or {}, **ref)
        new_pv.setdefault("status", {})["phase"] = "Bound"
        new_pvc = copy.deepcopy(pvc)
        new_pvc.setdefault("spec", {})["volumeName"] = vol.meta(pv).get("name")
        ann = new_pvc.setdefault("metadata", {}).setdefault("annotations", {})
        ann[vol.ANN_BIND_COMPLETED] = "yes"
        ann.setdefault(vol.ANN_BOUND_BY_CONTROLLER, "yes")
        status = new_pvc.setdefault("status", {})
        status["phase"] = "Bound"
        status["accessModes"] = list(vol.spec(pv).get("accessModes") or ())
        status["capacity"] = dict(vol.spec(pv).get("capacity") or {})
        try:
            if vol.spec(pv) != new_pv["spec"] or (pv.get("status") or {}).get("phase") != "Bound":
                self.cluster.update(new_pv)
            self.cluster.update(new_pvc)
        except ConflictError:
            return  # deleted meanwhile: nothing to bind

    def _provision(self, pvc: Obj, sc: Obj, selected_node: str | None) -> None:
        m = vol.meta(pvc)
        name = f"pvc-{m.get('uid') or (m.get('namespace') or 'default') + '-' + str(m.get('name'))}"
        if self.cluster.get("PersistentVolume", "", name) is not None:
            return
        pv_spec: Obj = {
            "capacity": {"storage": ((vol.spec(pvc).get("resources") or {}).get("requests") or {}).get("storage", "0")},
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
            for e in t.get("matchLabelExpressions") or ():
                values = list(e.get("values") or ())
                if e.get("key") in labels:
                    values = [labels[e["key"]]] if labels[e["key"]] in values else values
                exprs.append({"key": e.get("key"), "operator": "In", "values": values})
            out.append({"matchExpressions": exprs})
        return out
