"""VolumeBinding: a pod's PersistentVolumeClaims must be bound, or bindable, on the node (volume_binding.go).

Scoring by storage capacity needs the StorageCapacityScoring gate (alpha in 1.34, off),
so PreScore skips, as upstream does with the gate off. PreBind checks the claims once
after writing: the embedded cluster's PV controller finishes synchronously, so a claim
unbound then would stay unbound, and waiting bindTimeoutSeconds would change nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from kubesched.api import volumes as vol
from kubesched.api.object import Obj
from kubesched.config import names
from kubesched.framework import events, signers
from kubesched.framework.cycle_state import NOT_FOUND, CycleState, read_state
from kubesched.framework.interface import (
    ClusterEventWithHint,
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    PreBindPlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueingHint,
    ReservePlugin,
    ScorePlugin,
    SignFragment,
)
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.plugins.helper.claims import after_claim_of_pod
from kubesched.framework.plugins.volumebinding.binder import PodVolumeClaims, PodVolumes, VolumeBinder
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo

NAME: Final = names.VOLUME_BINDING
STATE_KEY: Final = NAME
ERR_UNBOUND_IMMEDIATE: Final = "pod has unbound immediate PersistentVolumeClaims"


@dataclass(slots=True)
class _State:
    """Shared by every clone of the cycle state: Filter fills it per node, Reserve and PreBind read it."""

    claims: PodVolumeClaims | None = None
    by_node: dict[str, PodVolumes] = field(default_factory=dict)
    all_bound: bool = False

    def clone(self) -> _State:
        return self


class VolumeBinding(
    PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, ReservePlugin, PreBindPlugin, EnqueueExtensions
):
    NAME = NAME

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        return [(signers.VOLUMES, signers.volumes(pod))], None

    def __init__(self, handle: Handle) -> None:
        self.handle = handle
        self.binder = VolumeBinder(handle.lister, handle.client)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            events.event(events.STORAGE_CLASS, events.ADD | events.UPDATE, self._after_storage_class_change),
            events.event(events.PERSISTENT_VOLUME_CLAIM, events.ADD | events.UPDATE, after_claim_of_pod),
            events.event(events.PERSISTENT_VOLUME, events.ADD | events.UPDATE),
            events.event(events.NODE, events.ADD | events.UPDATE_NODE_LABEL),
            events.event(events.CSI_NODE, events.ADD | events.UPDATE, self._after_csi_node_change),
            events.event(events.CSI_DRIVER, events.UPDATE, self._after_csi_driver_change),
            events.event(events.CSI_STORAGE_CAPACITY, events.ADD | events.UPDATE, self._after_capacity_change),
        ]

    def _after_csi_node_change(self, pod: PodInfo, old: Obj | None, new: Obj | None) -> QueueingHint:
        if old is None or new is None:
            return QueueingHint.QUEUE
        changed = vol.object_annotations(old).get(vol.ANN_MIGRATED_PLUGINS) != vol.object_annotations(new).get(
            vol.ANN_MIGRATED_PLUGINS
        )
        return QueueingHint.QUEUE if changed else QueueingHint.QUEUE_SKIP

    def _after_storage_class_change(self, pod: PodInfo, old: Obj | None, new: Obj | None) -> QueueingHint:
        if old is None or new is None:
            return QueueingHint.QUEUE
        same = old.get("allowedTopologies") == new.get("allowedTopologies")
        return QueueingHint.QUEUE_SKIP if same else QueueingHint.QUEUE

    def _after_capacity_change(self, pod: PodInfo, old: Obj | None, new: Obj | None) -> QueueingHint:
        if old is None or new is None:
            return QueueingHint.QUEUE
        before, after = vol.capacity_volume_limit(old), vol.capacity_volume_limit(new)
        grew = after is not None and (before is None or after > before)
        return QueueingHint.QUEUE if grew else QueueingHint.QUEUE_SKIP

    def _after_csi_driver_change(self, pod: PodInfo, old: Obj | None, new: Obj | None) -> QueueingHint:
        if old is None or new is None:
            return QueueingHint.QUEUE
        name = vol.meta(new).get("name")
        for v in vol.pod_volumes(pod.obj):
            if (v.get("csi") or {}).get("driver") != name:
                continue
            if vol.spec(old).get("storageCapacity") and not vol.spec(new).get("storageCapacity"):
                return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def _claims_problem(self, pod: PodInfo) -> tuple[bool, str]:
        """podHasPVCs: whether the pod uses claims, and what keeps it from being scheduled ('' if nothing)."""
        has = False
        for name, ephemeral in vol.pod_claim_names(pod.obj):
            has = True
            pvc = self.handle.listers().get("PersistentVolumeClaim", pod.namespace, name)
            if pvc is None:
                if ephemeral:
                    return has, f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{name}"'
                return has, f'persistentvolumeclaim "{name}" not found'
            if (pvc.get("status") or {}).get("phase") == "Lost":
                volume = vol.spec(pvc).get("volumeName") or ""
                return has, f'persistentvolumeclaim "{name}" bound to non-existent persistentvolume "{volume}"'
            if vol.meta(pvc).get("deletionTimestamp"):
                return has, f'persistentvolumeclaim "{name}" is being deleted'
            if ephemeral:
                err = vol.ephemeral_owner_error(pod.obj, pvc)
                if err:
                    return has, err
        return has, ""

    def pre_filter(self, state: CycleState, pod: PodInfo, nodes: Any) -> tuple[PreFilterResult | None, Status | None]:
        has, problem = self._claims_problem(pod)
        if problem:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, problem)
        if not has:
            state.write(STATE_KEY, _State(all_bound=True))
            return None, Status(Code.SKIP)
        claims = self.binder.get_pod_volume_claims(pod.obj)
        if claims.unbound_claims_immediate:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_UNBOUND_IMMEDIATE)
        state.write(STATE_KEY, _State(claims=claims))
        return None, None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        s = read_state(state, STATE_KEY, _State, NOT_FOUND)
        assert s.claims is not None
        if s.claims.fits_every_node:  # find_pod_volumes would find nothing to bind and nothing against the node
            s.by_node[node_info.name] = PodVolumes()
            return None
        pod_volumes, reasons = self.binder.find_pod_volumes(pod.obj, s.claims, node_info.name, node_info.labels)
        if reasons:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)
        s.by_node[node_info.name] = pod_volumes
        return None

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Any) -> Status | None:
        return Status(Code.SKIP)

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        """Without the capacity-scoring gate upstream has no scorer and scores 0 (PreScore skips it anyway)."""
        return 0, None

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        s = read_state(state, STATE_KEY, _State, NOT_FOUND)
        pod_volumes = s.by_node.get(node_name)
        if pod_volumes is None:
            s.all_bound = True
            return None
        try:
            s.all_bound = self.binder.assume_pod_volumes(pod.obj, node_name, pod_volumes)
        except Exception as err:
            return Status(Code.ERROR, err=err)
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        try:
            s = read_state(state, STATE_KEY, _State, NOT_FOUND)
        except Exception:
            return
        pod_volumes = s.by_node.get(node_name)
        if pod_volumes is not None:
            self.binder.revert_assumed_pod_volumes(pod_volumes)

    def pre_bind_pre_flight(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        s = read_state(state, STATE_KEY, _State, NOT_FOUND)
        if s.all_bound:
            return Status(Code.SKIP)
        if node_name not in s.by_node:
            return Status(Code.ERROR, f'no pod volumes found for node "{node_name}"')
        return None

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        s = read_state(state, STATE_KEY, _State, NOT_FOUND)
        if s.all_bound:
            return None
        pod_volumes = s.by_node.get(node_name)
        if pod_volumes is None:
            return Status(Code.ERROR, f'no pod volumes found for node "{node_name}"')
        try:
            self.binder.bind_pod_volumes(pod.obj, node_name, pod_volumes)
        except Exception as err:
            return Status(Code.ERROR, err=err)
        return None


def new(args: Any, handle: Handle) -> VolumeBinding:
    return VolumeBinding(handle)
