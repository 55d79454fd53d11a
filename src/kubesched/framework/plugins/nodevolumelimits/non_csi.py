"""EBSLimits, GCEPDLimits, AzureDiskLimits and CinderLimits (legacy, removed in 1.27).

Per cloud disk type, the unique disks of a node's pods plus the new pod's must stay
within the node's limit: allocatable `attachable-volumes-<type>`, else KUBE_MAX_PD_VOLS,
else the type's default. Once a node's CSINode lists the plugin as migrated, its disks
are NodeVolumeLimits' business and these filters step aside, as upstream's did.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from kubesched.api import volumes as vol
from kubesched.api.object import ObjView
from kubesched.config import names
from kubesched.framework import events
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import ClusterEventWithHint, EnqueueExtensions, FilterPlugin, Handle
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.plugins.nodevolumelimits.csi import ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo

KUBE_MAX_PD_VOLS: Final = "KUBE_MAX_PD_VOLS"
EBS_NITRO_LIMIT_REGEX: Final = re.compile(r"^[cmr]5.*|t3|z1d")
INSTANCE_TYPE_LABELS: Final = ("beta.kubernetes.io/instance-type", "node.kubernetes.io/instance-type")


@dataclass(frozen=True, slots=True)
class DiskType:
    name: str  # the plugin's name
    source: str  # the volume source field in a pod volume or PV spec
    id_field: str  # the field naming the disk
    plugin: str  # the in-tree volume plugin (StorageClass provisioner)
    limit_key: str
    default_limit: int


EBS: Final = DiskType(
    names.EBS_LIMITS, "awsElasticBlockStore", "volumeID", "kubernetes.io/aws-ebs", "attachable-volumes-aws-ebs", 39
)
GCE_PD: Final = DiskType(
    names.GCE_PD_LIMITS, "gcePersistentDisk", "pdName", "kubernetes.io/gce-pd", "attachable-volumes-gce-pd", 16
)
AZURE_DISK: Final = DiskType(
    names.AZURE_DISK_LIMITS, "azureDisk", "diskName", "kubernetes.io/azure-disk", "attachable-volumes-azure-disk", 16
)
CINDER: Final = DiskType(
    names.CINDER_LIMITS, "cinder", "volumeID", "kubernetes.io/cinder", "attachable-volumes-cinder", 256
)
EBS_NITRO_LIMIT: Final = 25


def max_volumes_from_env() -> int | None:
    raw = os.environ.get(KUBE_MAX_PD_VOLS, "")
    try:
        value = int(raw)
    except ValueError:
        return None
    return value if value > 0 else None


def default_limit(disk: DiskType, node_labels: Mapping[str, str]) -> int:
    env = max_volumes_from_env()
    if env is not None:
        return env
    if disk is EBS:
        instance_type = next((node_labels[k] for k in INSTANCE_TYPE_LABELS if k in node_labels), "")
        if EBS_NITRO_LIMIT_REGEX.search(instance_type):
            return EBS_NITRO_LIMIT
    return disk.default_limit


class ClaimLookupError(LookupError):
    pass


class NonCSILimits(FilterPlugin, EnqueueExtensions):
    def __init__(self, disk: DiskType, handle: Handle) -> None:
        self.NAME = disk.name
        self.disk = disk
        self.handle = handle
        self.random_prefix = uuid.uuid4().hex

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [events.event(events.NODE, events.ADD), events.event(events.POD, events.DELETE)]

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        if not vol.pod_volumes(pod.obj):
            return None
        new_volumes: set[str] = set()
        try:
            self._disks(pod, True, new_volumes)
        except ClaimLookupError as err:
            return Status(Code.ERROR, str(err))
        if not new_volumes:
            return None
        if node_info.node is None:
            return Status(Code.ERROR, "node not found")
        if vol.is_migration_on(self.handle.listers().get("CSINode", "", node_info.name), self.disk.plugin):
            return None
        existing: set[str] = set()
        for p in node_info.pods:
            self._disks(p, False, existing)
        limit = node_info.allocatable.get(self.disk.limit_key)
        if limit is None:
            limit = default_limit(self.disk, node_info.labels)
        if len(existing) + len(new_volumes - existing) > limit:
            return Status(Code.UNSCHEDULABLE, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
        return None

    def _disk_id(self, source_owner: ObjView) -> str | None:
        source = source_owner.get(self.disk.source)
        return None if source is None else str(source.get(self.disk.id_field) or "")

    def _disks(self, pod: PodInfo, new_pod: bool, out: set[str]) -> None:
        """IDs of this disk type the pod uses, inline or through claims."""
        for v in vol.pod_volumes(pod.obj):
            disk = self._disk_id(v)
            if disk is not None:
                out.add(disk)
                continue
            claim = vol.claim_name(pod.obj, v)
            if claim is None:
                continue
            name, ephemeral = claim
            if not name:
                raise ClaimLookupError("PersistentVolumeClaim had no name")
            placeholder = f"{self.random_prefix}-{pod.namespace}/{name}"
            pvc = self.handle.listers().get("PersistentVolumeClaim", pod.namespace, name)
            if pvc is None:
                if new_pod:
                    raise ClaimLookupError(
                        f'looking up PVC {pod.namespace}/{name}: persistentvolumeclaim "{name}" not found'
                    )
                continue
            if ephemeral:
                reason = vol.ephemeral_owner_error(pod.obj, pvc)
                if reason:
                    raise ClaimLookupError(reason)
            pv_name = vol.spec(pvc).get("volumeName")
            pv = self.handle.listers().get("PersistentVolume", "", pv_name) if pv_name else None
            if pv is None:
                # Unbound, or bound to a PV we cannot see: counts if its class provisions this disk type.
                if self._class_provisions_this(pvc):
                    out.add(placeholder)
                continue
            disk = self._disk_id(vol.spec(pv))
            if disk is not None:
                out.add(disk)

    def _class_provisions_this(self, pvc: ObjView) -> bool:
        cls = vol.spec(pvc).get("storageClassName")
        if cls is None:
            return False
        sc = self.handle.listers().get("StorageClass", "", cls)
        return sc is not None and sc.get("provisioner") == self.disk.plugin


def new_ebs(args: Any, handle: Handle) -> NonCSILimits:
    return NonCSILimits(EBS, handle)


def new_gce_pd(args: Any, handle: Handle) -> NonCSILimits:
    return NonCSILimits(GCE_PD, handle)


def new_azure_disk(args: Any, handle: Handle) -> NonCSILimits:
    return NonCSILimits(AZURE_DISK, handle)


def new_cinder(args: Any, handle: Handle) -> NonCSILimits:
    return NonCSILimits(CINDER, handle)
