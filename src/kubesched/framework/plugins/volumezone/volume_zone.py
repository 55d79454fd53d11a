"""VolumeZone: a pod's bound PVs must be in the node's zone and region (volume_zone.go).

A PV's topology labels (GA and beta zone/region, several zones joined by "__") must
admit the node's value; a node without any topology label fits everything. Unbound
claims of WaitForFirstConsumer classes are left to VolumeBinding.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from kubesched.api import volumes as vol
from kubesched.api.object import ObjView
from kubesched.config import names
from kubesched.framework import events, signers
from kubesched.framework.cycle_state import NOT_FOUND, CycleState, read_state
from kubesched.framework.interface import (
    ClusterEventWithHint,
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    PreFilterPlugin,
    PreFilterResult,
    QueueingHint,
    SignFragment,
)
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.plugins.helper.claims import after_claim_of_pod
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo

NAME: Final = names.VOLUME_ZONE
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
ERR_REASON_CONFLICT: Final = "node(s) had no available volume zone"
BETA_ZONE, BETA_REGION = "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region"
GA_ZONE, GA_REGION = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"
TOPOLOGY_LABELS: Final = (BETA_ZONE, BETA_REGION, GA_ZONE, GA_REGION)
_TO_GA: Final = {BETA_ZONE: GA_ZONE, BETA_REGION: GA_REGION}


@dataclass(frozen=True, slots=True)
class PVTopology:
    pv_name: str
    key: str
    values: frozenset[str]


@dataclass(frozen=True, slots=True)
class _State:
    topologies: tuple[PVTopology, ...]

    def clone(self) -> _State:
        return self


def label_zones_to_set(value: str) -> frozenset[str]:
    """LabelZonesToSet: a multi-zone label value lists zones joined by "__"."""
    return frozenset(z for z in value.split("__") if z)


def pv_topologies(pv: ObjView) -> list[PVTopology]:
    labels = vol.meta(pv).get("labels") or {}
    name = str(vol.meta(pv).get("name") or "")
    return [PVTopology(name, key, label_zones_to_set(str(labels[key]))) for key in TOPOLOGY_LABELS if key in labels]


class VolumeZone(PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    NAME = NAME

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        return [(signers.VOLUMES, signers.volumes(pod))], None

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            events.event(events.STORAGE_CLASS, events.ADD, self._after_storage_class_added),
            events.event(events.NODE, events.ADD | events.UPDATE_NODE_LABEL),
            events.event(events.PERSISTENT_VOLUME_CLAIM, events.ADD | events.UPDATE, after_claim_of_pod),
            events.event(events.PERSISTENT_VOLUME, events.ADD | events.UPDATE, self._after_volume_change),
        ]

    def _after_storage_class_added(self, pod: PodInfo, old: ObjView | None, new: ObjView | None) -> QueueingHint:
        """Only a WaitForFirstConsumer class lets this plugin skip an unbound claim."""
        if new is not None and new.get("volumeBindingMode") == vol.WAIT_FOR_FIRST_CONSUMER:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def _after_volume_change(self, pod: PodInfo, old: ObjView | None, new: ObjView | None) -> QueueingHint:
        if old is None or new is None:
            return QueueingHint.QUEUE
        before = {k: v for k, v in (vol.meta(old).get("labels") or {}).items() if k in TOPOLOGY_LABELS}
        after = {k: v for k, v in (vol.meta(new).get("labels") or {}).items() if k in TOPOLOGY_LABELS}
        return QueueingHint.QUEUE if before != after else QueueingHint.QUEUE_SKIP

    def _pod_topologies(self, pod: PodInfo) -> tuple[list[PVTopology], Status | None]:
        """getPVbyPod: the topologies of the pod's bound PVs, or why they cannot be read."""
        out: list[PVTopology] = []
        for name, _ in vol.pod_claim_names(pod.obj):
            if not name:
                return [], Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "PersistentVolumeClaim had no name")
            pvc = self.handle.listers().get("PersistentVolumeClaim", pod.namespace, name)
            if pvc is None:
                return [], Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f'persistentvolumeclaim "{name}" not found')
            pv_name = vol.spec(pvc).get("volumeName")
            if not pv_name:
                cls = vol.claim_class(pvc)
                if not cls:
                    return [], Status(
                        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                        "PersistentVolumeClaim had no pv name and storageClass name",
                    )
                sc = self.handle.listers().get("StorageClass", "", cls)
                if sc is None:
                    return [], Status(
                        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f'storageclass.storage.k8s.io "{cls}" not found'
                    )
                if sc.get("volumeBindingMode") == vol.WAIT_FOR_FIRST_CONSUMER:
                    continue
                return [], Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "PersistentVolume had no name")
            pv = self.handle.listers().get("PersistentVolume", "", pv_name)
            if pv is None:
                return [], Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f'persistentvolume "{pv_name}" not found')
            out.extend(pv_topologies(pv))
        return out, None

    def pre_filter(self, state: CycleState, pod: PodInfo, nodes: Any) -> tuple[PreFilterResult | None, Status | None]:
        topologies, status = self._pod_topologies(pod)
        if status is not None:
            return None, status
        if not topologies:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, _State(tuple(topologies)))
        return None, None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        if not vol.pod_volumes(pod.obj):
            return None
        topologies = read_state(state, PRE_FILTER_STATE_KEY, _State, NOT_FOUND).topologies
        labels = node_info.labels
        if not any(k in labels for k in TOPOLOGY_LABELS):
            return None  # a node without topology labels has no zone constraint
        for t in topologies:
            value = labels.get(t.key)
            if value is None:
                value = labels.get(_TO_GA.get(t.key, t.key))
            if value is None or value not in t.values:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)
        return None


def new(args: Any, handle: Handle) -> VolumeZone:
    return VolumeZone(handle)
