"""NodeVolumeLimits: CSI volumes attached to a node must stay within the driver's limit (nodevolumelimits/csi.go).

Limits come from the CSINode's drivers[].allocatable.count and from node allocatable
`attachable-volumes-*` entries. A volume counts once per node however many pods use
it. In-tree volumes count against their CSI driver once the node's CSINode lists the
plugin as migrated; claims not bound yet count by their StorageClass's provisioner.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Final

from kubesched.api import volumes as vol
from kubesched.api.object import ObjView
from kubesched.config import names
from kubesched.framework import events, signers
from kubesched.framework.cycle_state import CycleState, StateNotFound
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

NAME: Final = names.NODE_VOLUME_LIMITS
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED: Final = "node(s) exceed max volume count"
ATTACHABLE_PREFIX: Final = "attachable-volumes-"
_READS: Final = ("PersistentVolumeClaim", "PersistentVolume", "StorageClass", "CSINode")
MAX_CACHED_NODES: Final = 100_000  # entries outlive removed nodes; start over past this many
MEMO_KEY: Final = NAME + "/new-volumes"


class ClaimNotFound(LookupError):
    pass


@dataclass(slots=True)
class _Cycle:
    """What Filter keeps for one pod's cycle: the objects it reads do not change while nodes are filtered."""

    has_volumes: bool
    versions: tuple[int, ...]  # the store's versions of the kinds read (_READS)
    new_volumes: dict[str, dict[str, str] | Status] = field(default_factory=dict)  # per migrated-plugins annotation


class CSILimits(PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    NAME = NAME

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        return [(signers.VOLUMES, signers.volumes(pod))], None

    def __init__(self, handle: Handle) -> None:
        self.handle = handle
        # Unbound claims get a handle no real volume has, as upstream's random prefix ensures
        # (not drawn from the scheduler's seeded source: that would shift its tie-breaks).
        self.random_prefix = uuid.uuid4().hex
        # Node name -> (what the entry was computed from, the node's attached volumes, their count per
        # limit key, its limits).
        self._per_node: dict[str, tuple[tuple[int, ...], dict[str, str], dict[str, int], dict[str, int]]] = {}

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            events.event(events.CSI_NODE, events.ADD),
            events.event(events.POD, events.DELETE, self._after_pod_deleted),
            events.event(events.PERSISTENT_VOLUME_CLAIM, events.ADD, after_claim_of_pod),
        ]

    def _after_pod_deleted(self, pod: PodInfo, old: PodInfo | None, new: PodInfo | None) -> QueueingHint:
        if old is None or not old.node_name:
            return QueueingHint.QUEUE_SKIP
        for v in vol.pod_volumes(old.obj):
            if v.get("persistentVolumeClaim") is not None or v.get("ephemeral") is not None:
                return QueueingHint.QUEUE
            if vol.in_tree_plugin_of(v) is not None:
                return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def pre_filter(self, state: CycleState, pod: PodInfo, nodes: Any) -> tuple[PreFilterResult | None, Status | None]:
        for v in vol.pod_volumes(pod.obj):
            if v.get("persistentVolumeClaim") is not None or v.get("ephemeral") is not None:
                return None, None
            if vol.in_tree_plugin_of(v) is not None:
                return None, None
        return None, Status(Code.SKIP)

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        try:
            cycle: _Cycle = state.read(MEMO_KEY)
        except StateNotFound:
            cycle = self._start_cycle(state, pod)
        if not cycle.has_volumes:
            return None
        csi_node = self.handle.listers().get("CSINode", "", node_info.name)
        new_volumes = self._new_volumes(cycle, pod, csi_node)
        if isinstance(new_volumes, Status):
            return new_volumes
        if not new_volumes:
            return None
        return _fits(new_volumes, *self._node_volumes(node_info, csi_node, cycle.versions))

    def _start_cycle(self, state: CycleState, pod: PodInfo) -> _Cycle:
        """The cycle's memo, made at the first node Filter sees."""
        listers = self.handle.listers()
        cycle = _Cycle(bool(vol.spec(pod.obj).get("volumes")), tuple(map(listers.kind_version, _READS)))
        state.write(MEMO_KEY, cycle)
        return cycle

    def filter_plain(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        """`filter` with nothing kept: the pod's volumes and the node's worked out again on every call."""
        if not vol.pod_volumes(pod.obj):
            return None
        csi_node = self.handle.listers().get("CSINode", "", node_info.name)
        new_volumes = self.new_volumes_plain(pod, csi_node)
        if isinstance(new_volumes, Status):
            return new_volumes
        if not new_volumes:
            return None
        return _fits(new_volumes, *self.node_volumes_plain(node_info, csi_node))

    def new_volumes_plain(self, pod: PodInfo, csi_node: ObjView | None) -> dict[str, str] | Status:
        """The volumes the pod would attach on a node with this CSINode, or why its claims rule every node out."""
        out: dict[str, str] = {}
        try:
            self._attachable_volumes(pod, csi_node, True, out)
        except ClaimNotFound as err:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(err))
        return out

    def _new_volumes(self, cycle: _Cycle, pod: PodInfo, csi_node: ObjView | None) -> dict[str, str] | Status:
        """new_volumes_plain, once per cycle for each migrated-plugins annotation: the CSINode enters the answer
        only through which in-tree plugins it has migrated, and thousands of nodes share a handful of those."""
        memo = cycle.new_volumes
        key = "" if csi_node is None else vol.object_annotations(csi_node).get(vol.ANN_MIGRATED_PLUGINS) or ""
        hit = memo.get(key)
        if hit is None:
            hit = memo[key] = self.new_volumes_plain(pod, csi_node)
        return hit

    def _node_volumes(
        self, node_info: NodeInfo, csi_node: ObjView | None, versions: tuple[int, ...]
    ) -> tuple[dict[str, str], dict[str, int], dict[str, int]]:
        """node_volumes_plain, kept until the node's pods or the objects read change.

        A NodeInfo's generation changes with any change to its node or pods; the store's kind
        `versions` with any change to claims, volumes, classes or CSINodes.
        """
        key = (node_info.generation, *versions)
        hit = self._per_node.get(node_info.name)
        if hit is not None and hit[0] == key:
            return hit[1], hit[2], hit[3]
        attached, counts, limits = self.node_volumes_plain(node_info, csi_node)
        if len(self._per_node) >= MAX_CACHED_NODES:
            self._per_node.clear()
        self._per_node[node_info.name] = (key, attached, counts, limits)
        return attached, counts, limits

    def node_volumes_plain(
        self, node_info: NodeInfo, csi_node: ObjView | None
    ) -> tuple[dict[str, str], dict[str, int], dict[str, int]]:
        """The volumes the node's pods attach, how many count against each limit key, and the node's limits."""
        attached: dict[str, str] = {}
        for existing in node_info.pods:
            self._attachable_volumes(existing, csi_node, False, attached)
        counts: dict[str, int] = {}
        for limit_key in attached.values():
            counts[limit_key] = counts.get(limit_key, 0) + 1
        return attached, counts, volume_limits(node_info, csi_node)

    def _attachable_volumes(
        self, pod: PodInfo, csi_node: ObjView | None, new_pod: bool, result: dict[str, str]
    ) -> None:
        """Unique volume name ("driver/handle") -> the limit key it counts against."""
        for v in vol.pod_volumes(pod.obj):
            claim = vol.claim_name(pod.obj, v)
            if claim is None:
                self._inline_volume(v, csi_node, result)
                continue
            name, ephemeral = claim
            pvc = self.handle.listers().get("PersistentVolumeClaim", pod.namespace, name)
            if pvc is None:
                if new_pod:
                    raise ClaimNotFound(
                        f'looking up PVC {pod.namespace}/{name}: persistentvolumeclaim "{name}" not found'
                    )
                continue
            if ephemeral and vol.ephemeral_owner_error(pod.obj, pvc):
                continue
            driver, handle = self._csi_driver_info(csi_node, pvc)
            if driver and handle:
                result[f"{driver}/{handle}"] = vol.csi_attach_limit_key(driver)

    def _inline_volume(self, v: ObjView, csi_node: ObjView | None, result: dict[str, str]) -> None:
        plugin = vol.in_tree_plugin_of(v)
        if plugin is None or not vol.is_migration_on(csi_node, plugin.plugin):
            return
        handle = vol.translated_volume_handle(plugin, v, {})
        result[f"{plugin.driver}/{handle}"] = vol.csi_attach_limit_key(plugin.driver)

    def _csi_driver_info(self, csi_node: ObjView | None, pvc: ObjView) -> tuple[str, str]:
        pv_name = vol.spec(pvc).get("volumeName")
        pv = self.handle.listers().get("PersistentVolume", "", pv_name) if pv_name else None
        if pv is None:
            return self._csi_driver_info_from_class(csi_node, pvc)
        csi = vol.spec(pv).get("csi")
        if csi is None:
            plugin = vol.in_tree_plugin_of(vol.spec(pv))
            if plugin is None or not vol.is_migration_on(csi_node, plugin.plugin):
                return "", ""
            csi = vol.spec(vol.translate_pv_to_csi(dict(pv), csi_node)).get("csi") or {}
        return str(csi.get("driver") or ""), str(csi.get("volumeHandle") or "")

    def _csi_driver_info_from_class(self, csi_node: ObjView | None, pvc: ObjView) -> tuple[str, str]:
        cls = vol.claim_class(pvc)
        if not cls:
            return "", ""  # no class: an Immediate claim, bound before scheduling
        sc = self.handle.listers().get("StorageClass", "", cls)
        if sc is None:
            return "", ""
        handle = f"{self.random_prefix}-{vol.key_of(pvc)}"
        provisioner = str(sc.get("provisioner") or "")
        plugin = vol.in_tree_plugin_named(provisioner)
        if plugin is not None:
            if not vol.is_migration_on(csi_node, provisioner):
                return "", ""
            return plugin.driver, handle
        return provisioner, handle


def _fits(
    new_volumes: dict[str, str], attached: dict[str, str], attached_count: dict[str, int], limits: dict[str, int]
) -> Status | None:
    """Whether the pod's volumes not attached to the node yet stay within its limits."""
    if not limits:
        return None
    new_count: dict[str, int] = {}
    for unique, key in new_volumes.items():
        if unique not in attached:  # a volume already attached costs nothing more
            new_count[key] = new_count.get(key, 0) + 1
    for key, count in new_count.items():
        limit = limits.get(key)
        if limit is not None and attached_count.get(key, 0) + count > limit:
            return Status(Code.UNSCHEDULABLE, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
    return None


def volume_limits(node_info: NodeInfo, csi_node: ObjView | None) -> dict[str, int]:
    """getVolumeLimits: node allocatable attachable-volumes-* entries, overridden by the CSINode's counts."""
    limits = {k: v for k, v in node_info.allocatable.items() if k.startswith(ATTACHABLE_PREFIX)}
    for d in vol.spec(csi_node).get("drivers") or () if csi_node is not None else ():
        count = (d.get("allocatable") or {}).get("count")
        if count is not None:
            limits[vol.csi_attach_limit_key(str(d.get("name") or ""))] = int(count)
    return limits


def new(args: Any, handle: Handle) -> CSILimits:
    return CSILimits(handle)
