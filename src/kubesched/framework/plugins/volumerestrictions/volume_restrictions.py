"""VolumeRestrictions: disks that cannot be shared, and ReadWriteOncePod claims (volume_restrictions.go)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from kubesched.api import volumes as vol
from kubesched.api.object import ObjView
from kubesched.config import names
from kubesched.framework import events, signers
from kubesched.framework.cycle_state import CANNOT_READ, CycleState, read_state
from kubesched.framework.interface import (
    ClusterEventWithHint,
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    QueueingHint,
    SignFragment,
)
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo

NAME: Final = names.VOLUME_RESTRICTIONS
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
ERR_REASON_DISK_CONFLICT: Final = "node(s) had no available disk"
ERR_REASON_RWOP_CONFLICT: Final = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
)
_CONFLICT_SOURCES: Final = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")


@dataclass(slots=True)
class _PreFilterState:
    rwop_claims: frozenset[str]  # claim names of the pod with the ReadWriteOncePod access mode
    conflicting_ref_count: int  # scheduled pods using one of them

    def clone(self) -> _PreFilterState:
        return _PreFilterState(self.rwop_claims, self.conflicting_ref_count)

    def update_with_pod(self, pod: PodInfo, sign: int) -> None:
        for v in vol.pod_volumes(pod.obj):
            claim = v.get("persistentVolumeClaim")
            if claim is not None and claim.get("claimName") in self.rwop_claims:
                self.conflicting_ref_count += sign


def _same_unless_both_read_only(a: ObjView | None, b: ObjView | None, key: str) -> bool:
    """GCE PD and ISCSI: the same disk conflicts unless every mount is read-only."""
    return bool(a and b and a.get(key) == b.get(key) and not (a.get("readOnly") and b.get("readOnly")))


def is_volume_conflict(volume: ObjView, pod: ObjView) -> bool:
    """Whether `volume` conflicts with one of the pod's volumes, by each disk type's sharing rule."""
    for existing in vol.pod_volumes(pod):
        if _same_unless_both_read_only(volume.get("gcePersistentDisk"), existing.get("gcePersistentDisk"), "pdName"):
            return True
        if _same_unless_both_read_only(volume.get("iscsi"), existing.get("iscsi"), "iqn"):
            return True
        ebs, eebs = volume.get("awsElasticBlockStore"), existing.get("awsElasticBlockStore")
        if ebs and eebs and ebs.get("volumeID") == eebs.get("volumeID"):
            return True  # EBS forbids any sharing, read-only or not
        rbd, erbd = volume.get("rbd"), existing.get("rbd")
        if (
            rbd
            and erbd
            and set(rbd.get("monitors") or ()) & set(erbd.get("monitors") or ())
            and (rbd.get("pool") or "rbd") == (erbd.get("pool") or "rbd")
            and rbd.get("image") == erbd.get("image")
            and not (rbd.get("readOnly") and erbd.get("readOnly"))
        ):
            return True
    return False


def _needs_check(volume: ObjView) -> bool:
    return any(volume.get(s) is not None for s in _CONFLICT_SOURCES)


def satisfy_volume_conflicts(pod: ObjView, pods: list[PodInfo]) -> bool:
    for v in vol.pod_volumes(pod):
        if _needs_check(v) and any(is_volume_conflict(v, other.obj) for other in pods):
            return False
    return True


class VolumeRestrictions(PreFilterPlugin, FilterPlugin, PreFilterExtensions, EnqueueExtensions):
    NAME = NAME

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        return [(signers.VOLUMES, signers.volumes(pod))], None

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            events.event(events.POD, events.DELETE, self._after_pod_deleted),
            events.event(events.NODE, events.ADD),
            events.event(events.PERSISTENT_VOLUME_CLAIM, events.ADD, self._after_claim_added),
        ]

    def _after_claim_added(self, pod: PodInfo, old: ObjView | None, new: ObjView | None) -> QueueingHint:
        if new is None or (vol.meta(new).get("namespace") or "default") != pod.namespace:
            return QueueingHint.QUEUE_SKIP
        for v in vol.pod_volumes(pod.obj):
            if (v.get("persistentVolumeClaim") or {}).get("claimName") == vol.meta(new).get("name"):
                return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def _after_pod_deleted(self, pod: PodInfo, old: PodInfo | None, new: PodInfo | None) -> QueueingHint:
        if old is None or old.namespace != pod.namespace:
            return QueueingHint.QUEUE_SKIP
        if not satisfy_volume_conflicts(pod.obj, [old]):
            return QueueingHint.QUEUE
        theirs = {(v.get("persistentVolumeClaim") or {}).get("claimName") for v in vol.pod_volumes(old.obj)}
        theirs.discard(None)
        for v in vol.pod_volumes(pod.obj):
            if (v.get("persistentVolumeClaim") or {}).get("claimName") in theirs:
                return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def pre_filter(self, state: CycleState, pod: PodInfo, nodes: Any) -> tuple[PreFilterResult | None, Status | None]:
        volumes = vol.pod_volumes(pod.obj)
        needs_check = any(_needs_check(v) for v in volumes)
        rwop: set[str] = set()
        for v in volumes:
            claim = v.get("persistentVolumeClaim")
            if claim is None:
                continue
            name = str(claim.get("claimName") or "")
            pvc = self.handle.listers().get("PersistentVolumeClaim", pod.namespace, name)
            if pvc is None:
                return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f'persistentvolumeclaim "{name}" not found')
            if vol.READ_WRITE_ONCE_POD in (vol.spec(pvc).get("accessModes") or ()):
                rwop.add(name)
        snapshot = self.handle.shared_lister()
        conflicts = sum(1 for name in rwop if snapshot.is_pvc_used_by_pods(f"{pod.namespace}/{name}"))
        if not needs_check and conflicts == 0:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(frozenset(rwop), conflicts))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions:
        return self

    def add_pod(self, state: CycleState, pod: PodInfo, to_add: PodInfo, node_info: NodeInfo) -> Status | None:
        read_state(state, PRE_FILTER_STATE_KEY, _PreFilterState, CANNOT_READ).update_with_pod(to_add, 1)
        return None

    def remove_pod(self, state: CycleState, pod: PodInfo, to_remove: PodInfo, node_info: NodeInfo) -> Status | None:
        read_state(state, PRE_FILTER_STATE_KEY, _PreFilterState, CANNOT_READ).update_with_pod(to_remove, -1)
        return None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        if not satisfy_volume_conflicts(pod.obj, node_info.pods):
            return Status(Code.UNSCHEDULABLE, ERR_REASON_DISK_CONFLICT)
        s = read_state(state, PRE_FILTER_STATE_KEY, _PreFilterState, CANNOT_READ)
        if s.conflicting_ref_count > 0:
            return Status(Code.UNSCHEDULABLE, ERR_REASON_RWOP_CONFLICT)
        return None


def new(args: Any, handle: Handle) -> VolumeRestrictions:
    return VolumeRestrictions(handle)
