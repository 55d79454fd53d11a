"""The volume binder: which claims a pod has, whether a node can serve them, and binding them (binder.go).

PreFilter sorts the pod's claims into bound, unbound-immediate and unbound-delayed;
Filter asks, per node, whether bound PVs' node affinity fits, whether each delayed
claim finds a static PV (smallest fit) or can be provisioned there (class topology,
CSIStorageCapacity); Reserve assumes the answer; PreBind writes it and checks that
the PV controller finished.
"""

from __future__ import annotations

import copy
import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from kubesched.api import volumes as vol
from kubesched.api.object import Obj
from kubesched.api.selectors import NodeSelector, SelectorError, parse_label_selector
from kubesched.framework.plugins.volumebinding.assume_cache import AssumeCache


class _Absent(enum.Enum):
    PV = "a bound claim's PV that does not exist"


ERR_REASON_BIND_CONFLICT: Final = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT: Final = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE: Final = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST: Final = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"


class BindingError(RuntimeError):
    pass


@dataclass(slots=True)
class BindingInfo:
    pvc: Obj
    pv: Obj


@dataclass(slots=True)
class PodVolumes:
    static_bindings: list[BindingInfo] = field(default_factory=list)
    dynamic_provisions: list[Obj] = field(default_factory=list)


@dataclass(slots=True)
class PodVolumeClaims:
    bound_claims: list[Obj] = field(default_factory=list)
    unbound_claims_delay_binding: list[Obj] = field(default_factory=list)
    unbound_claims_immediate: list[Obj] = field(default_factory=list)
    unbound_volumes_delay_binding: dict[str, list[Obj]] = field(default_factory=dict)  # class -> PVs
    bound_volumes: list[Obj | None] = field(default_factory=list)  # PV of each bound claim (None: missing)
    in_tree_bound: bool = False  # a bound PV is in-tree: what the node sees depends on its CSINode's migration
    # Only bound claims, each PV there and none with node affinity (nor gaining one by CSI translation):
    # every node fits, whatever its labels and CSINode
    fits_every_node: bool = False
    # Each bound PV's required node affinity as CSI migration shows it (_Absent.PV: no such PV), per
    # migrated-plugins annotation of the node's CSINode
    affinities: dict[str, list[NodeSelector | None | _Absent]] = field(default_factory=dict)


class VolumeBinder:
    def __init__(self, lister: Any, client: Any) -> None:
        self.lister = lister
        self.client = client
        self.pv_cache = AssumeCache(lister, "PersistentVolume")
        self.pvc_cache = AssumeCache(lister, "PersistentVolumeClaim")

    def _csi_node(self, node_name: str) -> Obj | None:
        return self.lister.get("CSINode", "", node_name)

    def get_pod_volume_claims(self, pod: Obj) -> PodVolumeClaims:
        out = PodVolumeClaims()
        ns = vol.meta(pod).get("namespace") or "default"
        for name, _ in vol.pod_claim_names(pod):
            pvc = self.pvc_cache.get(f"{ns}/{name}")
            if pvc is None:
                raise BindingError(f'error getting PVC "{ns}/{name}": could not find v1.PersistentVolumeClaim')
            if vol.is_claim_fully_bound(pvc):
                out.bound_claims.append(pvc)
            elif vol.is_delay_binding(pvc, self.lister) and not vol.spec(pvc).get("volumeName"):
                out.unbound_claims_delay_binding.append(pvc)
            else:
                out.unbound_claims_immediate.append(pvc)  # pre-bound claims wait for the PV controller too
        # Read once per cycle, not once per node: nothing changes them between Filter calls.
        out.bound_volumes = [self.pv_cache.get(str(vol.spec(pvc).get("volumeName"))) for pvc in out.bound_claims]
        out.in_tree_bound = any(pv is not None and vol.in_tree_plugin_of(vol.spec(pv)) for pv in out.bound_volumes)
        out.fits_every_node = not (out.unbound_claims_delay_binding or out.unbound_claims_immediate) and all(
            pv is not None and not vol.spec(pv).get("nodeAffinity") for pv in out.bound_volumes
        )
        # A volume bound to a claim other than the pod's can match none of them (FindMatchingVolume skips it on
        # every node): leaving those out here, once per cycle, spares every Filter call a walk over all of a
        # class's provisioned volumes, which grow with each pod of an ephemeral volume or a StatefulSet.
        for pvc in out.unbound_claims_delay_binding:
            cls = vol.claim_class(pvc)
            if cls not in out.unbound_volumes_delay_binding:
                mine = [c for c in out.unbound_claims_delay_binding if vol.claim_class(c) == cls]
                out.unbound_volumes_delay_binding[cls] = [
                    pv
                    for pv in self.pv_cache.list_by_class(cls)
                    if not vol.spec(pv).get("claimRef") or any(vol.is_volume_bound_to_claim(pv, c) for c in mine)
                ]
        return out

    def find_pod_volumes(
        self, pod: Obj, claims: PodVolumeClaims, node_name: str, labels: Mapping[str, str]
    ) -> tuple[PodVolumes, list[str]]:
        """FindPodVolumes: the bindings and provisions for this node, or the reasons it cannot serve the pod."""
        pv = PodVolumes()
        bound_ok = unbound_ok = storage_ok = pvs_found = True
        if claims.bound_claims:
            bound_ok, pvs_found = self._check_bound_claims(claims, node_name, labels)
        if claims.unbound_claims_delay_binding:
            to_match: list[Obj] = []
            to_provision: list[Obj] = []
            for c in claims.unbound_claims_delay_binding:
                selected = vol.object_annotations(c).get(vol.ANN_SELECTED_NODE)
                if selected is not None:
                    if selected != node_name:
                        unbound_ok = False  # fast path: provisioning already targets another node
                        break
                    to_provision.append(c)
                else:
                    to_match.append(c)
            else:
                if to_match:
                    unbound_ok, pv.static_bindings, rest = self._find_matching_volumes(
                        to_match, claims.unbound_volumes_delay_binding, labels
                    )
                    to_provision.extend(rest)
                if to_provision:
                    unbound_ok, storage_ok, pv.dynamic_provisions = self._check_volume_provisions(
                        to_provision, node_name, labels
                    )
        reasons = []
        if not bound_ok:
            reasons.append(ERR_REASON_NODE_CONFLICT)
        if not unbound_ok:
            reasons.append(ERR_REASON_BIND_CONFLICT)
        if not storage_ok:
            reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
        if not pvs_found:
            reasons.append(ERR_REASON_PV_NOT_EXIST)
        return pv, reasons

    def _check_bound_claims(
        self, claims: PodVolumeClaims, node_name: str, labels: Mapping[str, str]
    ) -> tuple[bool, bool]:
        """check_bound_claims_plain with the bound PVs translated, and their node affinity parsed, once per cycle
        for each migrated-plugins annotation, not once per node: the CSINode enters only through that annotation."""
        csi_node = self._csi_node(node_name) if claims.in_tree_bound else None
        key = "" if csi_node is None else vol.object_annotations(csi_node).get(vol.ANN_MIGRATED_PLUGINS) or ""
        affinities = claims.affinities.get(key)
        if affinities is None:
            affinities = claims.affinities[key] = [
                _Absent.PV if pv is None else vol.node_affinity(vol.translate_pv_to_csi(pv, csi_node))
                for pv in claims.bound_volumes
            ]
        for sel in affinities:
            if sel is _Absent.PV:
                return True, False
            if sel is not None and not sel.matches(labels, ""):
                return False, True
        return True, True

    def check_bound_claims_plain(
        self, volumes: list[Obj | None], node_name: str, labels: Mapping[str, str]
    ) -> tuple[bool, bool]:
        """(bound PVs' node affinity fits, every bound PV exists); the CSINode is read only for in-tree PVs."""
        csi_node: Obj | None = None
        for pv in volumes:
            if pv is None:
                return True, False
            if vol.in_tree_plugin_of(vol.spec(pv)) is not None:
                csi_node = csi_node or self._csi_node(node_name)
                pv = vol.translate_pv_to_csi(pv, csi_node)
            if not vol.check_node_affinity(pv, labels):
                return False, True
        return True, True

    def _find_matching_volumes(
        self, claims: list[Obj], pvs_by_class: dict[str, list[Obj]], labels: Mapping[str, str]
    ) -> tuple[bool, list[BindingInfo], list[Obj]]:
        """Smallest claims first, each taking the smallest fitting PV not already chosen."""
        chosen: dict[str, Obj] = {}
        bindings: list[BindingInfo] = []
        unbound: list[Obj] = []
        found = True
        for pvc in sorted(claims, key=vol.requested_storage):
            pv = vol.find_matching_volume(pvc, pvs_by_class.get(vol.claim_class(pvc), ()), labels, chosen, True)
            if pv is None:
                unbound.append(pvc)
                found = False
                continue
            chosen[str(vol.meta(pv).get("name"))] = pv
            bindings.append(BindingInfo(pvc, pv))
        return found, bindings, unbound

    def _check_volume_provisions(
        self, claims: list[Obj], node_name: str, labels: Mapping[str, str]
    ) -> tuple[bool, bool, list[Obj]]:
        """checkVolumeProvisions: (provisioning possible, enough storage, claims to provision)."""
        out = []
        for pvc in claims:
            cls = vol.claim_class(pvc)
            if not cls:
                raise BindingError(f'no class for claim "{vol.key_of(pvc)}"')
            sc = self.lister.get("StorageClass", "", cls)
            if sc is None:
                raise BindingError(f'failed to find storage class "{cls}"')
            provisioner = str(sc.get("provisioner") or "")
            if not provisioner or provisioner == vol.NOT_SUPPORTED_PROVISIONER:
                return False, True, []
            if not vol.match_topology_selector_terms(sc.get("allowedTopologies"), labels):
                return False, True, []
            if not self._has_enough_capacity(provisioner, pvc, cls, labels):
                return True, False, []
            out.append(pvc)
        return True, True, out

    def _has_enough_capacity(self, provisioner: str, pvc: Obj, class_name: str, labels: Mapping[str, str]) -> bool:
        """Only CSI drivers that ask for it (spec.storageCapacity) are checked against CSIStorageCapacity."""
        if not vol.has_storage_request(pvc):
            return True
        driver = self.lister.get("CSIDriver", "", provisioner)
        if driver is None or not vol.spec(driver).get("storageCapacity"):
            return True
        size = vol.requested_storage(pvc)
        for cap in self.lister.list("CSIStorageCapacity"):
            if cap.get("storageClassName") != class_name:
                continue
            limit = vol.capacity_volume_limit(cap)
            if limit is None or limit < size:
                continue
            topology = cap.get("nodeTopology")
            if topology is None:
                continue
            try:
                if parse_label_selector(topology).matches(labels):
                    return True
            except SelectorError:
                continue
        return False

    # Reserve, Unreserve, PreBind

    def assume_pod_volumes(self, pod: Obj, node_name: str, pod_volumes: PodVolumes) -> bool:
        """AssumePodVolumes: returns whether every claim is already bound (nothing for PreBind to do)."""
        if self._all_bound(pod):
            return True
        new_bindings: list[BindingInfo] = []
        for b in pod_volumes.static_bindings:
            new_pv = _bind_volume_to_claim(b.pv, b.pvc)
            try:
                if new_pv is not b.pv:
                    self.pv_cache.assume(new_pv)
            except Exception:
                self._revert(new_bindings, [])
                raise
            new_bindings.append(BindingInfo(b.pvc, new_pv))
        provisioned: list[Obj] = []
        for claim in pod_volumes.dynamic_provisions:
            clone = copy.deepcopy(claim)
            clone.setdefault("metadata", {}).setdefault("annotations", {})[vol.ANN_SELECTED_NODE] = node_name
            try:
                self.pvc_cache.assume(clone)
            except Exception:
                self._revert(new_bindings, provisioned)
                raise
            provisioned.append(clone)
        pod_volumes.static_bindings = new_bindings
        pod_volumes.dynamic_provisions = provisioned
        return False

    def revert_assumed_pod_volumes(self, pod_volumes: PodVolumes) -> None:
        self._revert(pod_volumes.static_bindings, pod_volumes.dynamic_provisions)

    def _revert(self, bindings: list[BindingInfo], claims: list[Obj]) -> None:
        for b in bindings:
            self.pv_cache.restore(str(vol.meta(b.pv).get("name")))
        for c in claims:
            self.pvc_cache.restore(vol.key_of(c))

    def _all_bound(self, pod: Obj) -> bool:
        ns = vol.meta(pod).get("namespace") or "default"
        for name, _ in vol.pod_claim_names(pod):
            pvc = self.pvc_cache.get(f"{ns}/{name}")
            if pvc is None or not vol.is_claim_fully_bound(pvc):
                return False
        return True

    def bind_pod_volumes(self, pod: Obj, node_name: str, pod_volumes: PodVolumes) -> None:
        """Write the PV claimRefs and selected-node annotations, then check the PV controller finished."""
        done_bindings = done_claims = 0
        try:
            for b in pod_volumes.static_bindings:
                self.client.update(copy.deepcopy(b.pv))
                done_bindings += 1
            for c in pod_volumes.dynamic_provisions:
                self.client.update(copy.deepcopy(c))
                done_claims += 1
        finally:
            self._revert(pod_volumes.static_bindings[done_bindings:], pod_volumes.dynamic_provisions[done_claims:])
        problem = self._check_bindings(pod, node_name, pod_volumes)
        if problem:
            raise BindingError(f"binding volumes: {problem}")

    def _check_bindings(self, pod: Obj, node_name: str, pod_volumes: PodVolumes) -> str:
        """checkBindings on API objects: '' when all claims are bound, else why binding must be retried."""
        node = self.lister.get("Node", "", node_name)
        if node is None:
            return f'failed to get node "{node_name}"'
        labels = vol.meta(node).get("labels") or {}
        csi_node = self._csi_node(node_name)
        if self.lister.get("Pod", vol.meta(pod).get("namespace") or "default", vol.meta(pod).get("name", "")) is None:
            return "pod does not exist any more"
        for b in pod_volumes.static_bindings:
            pv = self.pv_cache.get_api(str(vol.meta(b.pv).get("name")))
            pvc = self.pvc_cache.get_api(vol.key_of(b.pvc))
            if pv is None or pvc is None:
                return "failed to check binding: object not found"
            pv = vol.translate_pv_to_csi(pv, csi_node)
            if not vol.check_node_affinity(pv, labels):
                return f'pv "{vol.meta(pv).get("name")}" node affinity doesn\'t match node "{node_name}"'
            ref = vol.spec(pv).get("claimRef") or {}
            if not ref or (vol.meta(pvc).get("uid") and not ref.get("uid")):
                return f'ClaimRef got reset for pv "{vol.meta(pv).get("name")}"'
            if not vol.is_claim_fully_bound(pvc):
                return "timed out waiting for the condition"
        for c in pod_volumes.dynamic_provisions:
            pvc = self.pvc_cache.get_api(vol.key_of(c))
            if pvc is None:
                return f'failed to check provisioning pvc: PVC "{vol.key_of(c)}" not found'
            if vol.object_annotations(pvc).get(vol.ANN_SELECTED_NODE) != node_name:
                return f'provisioning failed for PVC "{vol.meta(pvc).get("name")}"'
            name = vol.spec(pvc).get("volumeName")
            if name:
                pv = self.pv_cache.get_api(str(name))
                if pv is not None and not vol.check_node_affinity(vol.translate_pv_to_csi(pv, csi_node), labels):
                    return f'pv "{name}" node affinity doesn\'t match node "{node_name}"'
            if not vol.is_claim_fully_bound(pvc):
                return "timed out waiting for the condition"
        return ""


def _bind_volume_to_claim(pv: Obj, pvc: Obj) -> Obj:
    """GetBindVolumeToClaim: the PV with claimRef (and bound-by-controller) set; the same object if nothing changes."""
    m = vol.meta(pvc)
    ref = vol.spec(pv).get("claimRef") or {}
    dirty = not (
        ref.get("name") == m.get("name")
        and (ref.get("namespace") or "default") == (m.get("namespace") or "default")
        and ref.get("uid") == m.get("uid")
    )
    bound_to_claim = vol.is_volume_bound_to_claim(pv, pvc)
    set_controller = not bound_to_claim and vol.ANN_BOUND_BY_CONTROLLER not in vol.object_annotations(pv)
    if not dirty and not set_controller:
        return pv
    new = copy.deepcopy(pv)
    if dirty:
        new_ref: Obj = {
            "kind": "PersistentVolumeClaim",
            "apiVersion": "v1",
            "namespace": m.get("namespace") or "default",
            "name": m.get("name"),
        }
        if m.get("uid"):
            new_ref["uid"] = m["uid"]
        if m.get("resourceVersion"):
            new_ref["resourceVersion"] = m["resourceVersion"]
        new.setdefault("spec", {})["claimRef"] = new_ref
    if set_controller:
        new.setdefault("metadata", {}).setdefault("annotations", {})[vol.ANN_BOUND_BY_CONTROLLER] = "yes"
    return new
