"""PersistentVolume / PersistentVolumeClaim helpers (component-helpers storage/volume, csi-translation-lib).

The volume plugins and the embedded PV controller read PVs, PVCs, StorageClasses and
CSINodes as raw API objects; these helpers give them upstream's meaning: the class of
a claim, whether a PV fits a claim and a node, and how an in-tree volume is counted
once its plugin has been migrated to CSI.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from kubesched.api.object import Obj
from kubesched.api.quantity import QuantityError, value
from kubesched.api.selectors import NodeSelector, SelectorError, parse_label_selector, parse_node_selector

ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
ANN_MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
READ_WRITE_ONCE_POD = "ReadWriteOncePod"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
CSI_ATTACH_LIMIT_PREFIX = "attachable-volumes-csi-"
RESOURCE_NAME_LENGTH_LIMIT = 63
ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
REGION_LABELS = ("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region")

PV = TypeVar("PV", bound=Mapping[str, Any])  # a PersistentVolume, returned as it was given


def meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("spec") or {}


def object_annotations(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return meta(obj).get("annotations") or {}


def claim_name(pod: Mapping[str, Any], volume: Mapping[str, Any]) -> tuple[str, bool] | None:
    """The PVC a pod volume uses and whether it is a generic ephemeral one (named <pod>-<volume>)."""
    pvc = volume.get("persistentVolumeClaim")
    if pvc is not None:
        return str(pvc.get("claimName") or ""), False
    if volume.get("ephemeral") is not None:
        return f"{meta(pod).get('name', '')}-{volume.get('name', '')}", True
    return None


def pod_volumes(pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list(spec(pod).get("volumes") or ())


def pod_claim_names(pod: Mapping[str, Any]) -> list[tuple[str, bool]]:
    out = []
    for v in spec(pod).get("volumes") or ():
        c = claim_name(pod, v)
        if c is not None:
            out.append(c)
    return out


def ephemeral_owner_error(pod: Mapping[str, Any], pvc: Mapping[str, Any]) -> str:
    """ephemeral.VolumeIsForPod: the claim of a generic ephemeral volume must be in the pod's namespace and
    controlled by it (its first controller reference has the pod's uid: `namespace/name` for a pod without one,
    as the scheduler and the simulator's controllers stand in)."""
    uid = str(meta(pod).get("uid") or key_of(pod))
    controller = next(
        (r for r in meta(pvc).get("ownerReferences") or () if isinstance(r, Mapping) and r.get("controller") is True),
        None,
    )
    same_namespace = (meta(pvc).get("namespace") or "default") == (meta(pod).get("namespace") or "default")
    if same_namespace and controller is not None and str(controller.get("uid") or "") == uid:
        return ""
    return f"PVC {key_of(pvc)} was not created for pod {key_of(pod)} (pod is not owner)"


def claim_class(pvc: Mapping[str, Any]) -> str:
    """GetPersistentVolumeClaimClass: the beta annotation wins over spec.storageClassName."""
    ann = object_annotations(pvc)
    if ANN_BETA_STORAGE_CLASS in ann:
        return str(ann[ANN_BETA_STORAGE_CLASS])
    return str(spec(pvc).get("storageClassName") or "")


def volume_class(pv: Mapping[str, Any]) -> str:
    ann = object_annotations(pv)
    if ANN_BETA_STORAGE_CLASS in ann:
        return str(ann[ANN_BETA_STORAGE_CLASS])
    return str(spec(pv).get("storageClassName") or "")


def _storage(raw: Mapping[str, Any] | None) -> int:
    q = (raw or {}).get("storage")
    if q is None:
        return 0
    try:
        return value(q)
    except QuantityError:
        return 0


def requested_storage(pvc: Mapping[str, Any]) -> int:
    return _storage((spec(pvc).get("resources") or {}).get("requests"))


def has_storage_request(pvc: Mapping[str, Any]) -> bool:
    return "storage" in ((spec(pvc).get("resources") or {}).get("requests") or {})


def volume_capacity(pv: Mapping[str, Any]) -> int:
    return _storage(spec(pv).get("capacity"))


def key_of(obj: Mapping[str, Any]) -> str:
    m = meta(obj)
    return f"{m.get('namespace') or 'default'}/{m.get('name', '')}"


def is_volume_bound_to_claim(pv: Mapping[str, Any], pvc: Mapping[str, Any]) -> bool:
    ref = spec(pv).get("claimRef")
    if not ref:
        return False
    m = meta(pvc)
    if ref.get("name") != m.get("name") or (ref.get("namespace") or "default") != (m.get("namespace") or "default"):
        return False
    return not ref.get("uid") or ref.get("uid") == m.get("uid")


def is_claim_fully_bound(pvc: Mapping[str, Any]) -> bool:
    return bool(spec(pvc).get("volumeName")) and ANN_BIND_COMPLETED in object_annotations(pvc)


def is_delay_binding(pvc: Mapping[str, Any], lister: Any) -> bool:
    """IsDelayBindingMode: the claim's StorageClass exists and waits for the first consumer."""
    name = claim_class(pvc)
    if not name:
        return False
    sc = lister.get("StorageClass", "", name)
    if sc is None:
        return False
    return sc.get("volumeBindingMode") == WAIT_FOR_FIRST_CONSUMER


def access_modes_fit(pvc: Mapping[str, Any], pv: Mapping[str, Any]) -> bool:
    have = set(spec(pv).get("accessModes") or ())
    return all(m in have for m in spec(pvc).get("accessModes") or ())


def volume_mode_mismatch(pvc: Mapping[str, Any], pv: Mapping[str, Any]) -> bool:
    return (spec(pvc).get("volumeMode") or "Filesystem") != (spec(pv).get("volumeMode") or "Filesystem")


_affinity_cache: dict[int, tuple[Any, NodeSelector]] = {}


def node_affinity(pv: Mapping[str, Any]) -> NodeSelector | None:
    """The PV's required node affinity, parsed once per object: the cache holds the raw term so its id stays unique."""
    raw = (spec(pv).get("nodeAffinity") or {}).get("required")
    if raw is None:
        return None
    hit = _affinity_cache.get(id(raw))
    if hit is not None and hit[0] is raw:
        return hit[1]
    if len(_affinity_cache) > 100_000:
        _affinity_cache.clear()
    parsed = parse_node_selector(raw)
    _affinity_cache[id(raw)] = (raw, parsed)
    return parsed


def check_node_affinity(pv: Mapping[str, Any], node_labels: Mapping[str, str]) -> bool:
    """CheckNodeAffinity: a PV without required node affinity fits every node (the node's name is not known here)."""
    sel = node_affinity(pv)
    return sel is None or sel.matches(node_labels, "")


def find_matching_volume(
    pvc: Mapping[str, Any],
    volumes: Iterable[PV],
    node_labels: Mapping[str, str] | None,
    excluded: Mapping[str, Any],
    delay_binding: bool,
) -> PV | None:
    """FindMatchingVolume: a PV pre-bound to the claim, else the smallest available one that fits.

    With `node_labels` (the scheduler's path) the PV's node affinity and access modes
    must fit too; without (the PV controller's path) delayed claims only take pre-bound PVs.
    """
    requested = requested_storage(pvc)
    wanted_class = claim_class(pvc)
    raw_sel = spec(pvc).get("selector")
    try:
        selector = parse_label_selector(raw_sel) if raw_sel is not None else None
    except SelectorError as err:
        raise ValueError(f"error creating internal label selector for claim: {key_of(pvc)}: {err}") from err
    best: PV | None = None
    best_size = 0
    for pv in volumes:
        name = meta(pv).get("name")
        if name in excluded:
            continue
        bound_here = is_volume_bound_to_claim(pv, pvc)
        if spec(pv).get("claimRef") and not bound_here:
            continue
        size = volume_capacity(pv)
        if size < requested or volume_mode_mismatch(pvc, pv) or meta(pv).get("deletionTimestamp"):
            continue
        affinity_ok = node_labels is None or check_node_affinity(pv, node_labels)
        if bound_here:
            return pv if affinity_ok else None
        if node_labels is None and delay_binding:
            continue
        if (pv.get("status") or {}).get("phase", "Available") != "Available":
            continue
        if selector is not None and not selector.matches(meta(pv).get("labels") or {}):
            continue
        if volume_class(pv) != wanted_class or not affinity_ok:
            continue
        if node_labels is not None and not access_modes_fit(pvc, pv):
            continue
        if best is None or best_size > size:
            best, best_size = pv, size
    return best


def match_topology_selector_terms(terms: list[Mapping[str, Any]] | None, labels: Mapping[str, str]) -> bool:
    """MatchTopologySelectorTerms: no terms match everything; else one term whose every key has a listed value."""
    if not terms:
        return True
    return any(
        all(
            e.get("key") in labels and labels[e["key"]] in (e.get("values") or ())
            for e in t.get("matchLabelExpressions") or ()
        )
        for t in terms
    )


def capacity_volume_limit(cap: Mapping[str, Any]) -> int | None:
    """The largest volume a CSIStorageCapacity admits: maximumVolumeSize, else capacity (None if unknown)."""
    raw = cap.get("maximumVolumeSize", cap.get("capacity"))
    if raw is None:
        return None
    try:
        return value(raw)
    except QuantityError:
        return None


def csi_attach_limit_key(driver: str) -> str:
    """GetCSIAttachLimitKey: long driver names are shortened with a hash to fit a resource name."""
    if len(CSI_ATTACH_LIMIT_PREFIX) + len(driver) >= RESOURCE_NAME_LENGTH_LIMIT:
        digest = hashlib.sha1(driver.encode(), usedforsecurity=False).hexdigest()[:16]
        return CSI_ATTACH_LIMIT_PREFIX + driver[:23] + digest
    return CSI_ATTACH_LIMIT_PREFIX + driver


# In-tree volume sources that CSI migration translates: source field -> plugin, driver, topology key.


@dataclass(frozen=True, slots=True)
class InTreePlugin:
    source: str
    plugin: str
    driver: str
    topology_key: str


IN_TREE_PLUGINS: tuple[InTreePlugin, ...] = (
    InTreePlugin("awsElasticBlockStore", "kubernetes.io/aws-ebs", "ebs.csi.aws.com", "topology.ebs.csi.aws.com/zone"),
    InTreePlugin("gcePersistentDisk", "kubernetes.io/gce-pd", "pd.csi.storage.gke.io", "topology.gke.io/zone"),
    InTreePlugin("azureDisk", "kubernetes.io/azure-disk", "disk.csi.azure.com", "topology.disk.csi.azure.com/zone"),
    InTreePlugin(
        "cinder", "kubernetes.io/cinder", "cinder.csi.openstack.org", "topology.cinder.csi.openstack.org/zone"
    ),
    InTreePlugin("portworxVolume", "kubernetes.io/portworx-volume", "pxd.portworx.com", ""),
)
_BY_SOURCE = {p.source: p for p in IN_TREE_PLUGINS}
_BY_PLUGIN = {p.plugin: p for p in IN_TREE_PLUGINS}


def in_tree_plugin_of(source: Mapping[str, Any]) -> InTreePlugin | None:
    """The migratable in-tree plugin of a pod volume or PV spec, if any."""
    for field, plugin in _BY_SOURCE.items():
        if source.get(field) is not None:
            return plugin
    return None


def in_tree_plugin_named(name: str) -> InTreePlugin | None:
    return _BY_PLUGIN.get(name)


def migrated_plugins(csi_node: Mapping[str, Any] | None) -> frozenset[str]:
    if csi_node is None:
        return frozenset()
    return _split_plugins(object_annotations(csi_node).get(ANN_MIGRATED_PLUGINS) or "")


@functools.lru_cache(maxsize=256)
def _split_plugins(raw: str) -> frozenset[str]:
    """The annotation parsed once per distinct value: every node of a cluster tends to carry the same one."""
    return frozenset(p for p in raw.split(",") if p)


def is_migration_on(csi_node: Mapping[str, Any] | None, plugin: str) -> bool:
    """isCSIMigrationOn: migration is per node, announced in the CSINode's migrated-plugins annotation."""
    return bool(plugin) and plugin in migrated_plugins(csi_node)


def translated_volume_handle(plugin: InTreePlugin, source: Mapping[str, Any], labels: Mapping[str, str]) -> str:
    """The CSI volume handle csi-translation-lib derives for an in-tree source."""
    src = source.get(plugin.source) or {}
    if plugin.source == "awsElasticBlockStore":
        vid = str(src.get("volumeID") or "")
        return vid.rstrip("/").rsplit("/", 1)[-1] if vid.startswith("aws://") else vid
    if plugin.source == "gcePersistentDisk":
        zone = next((labels[k] for k in ZONE_LABELS if k in labels), "UNSPECIFIED")
        return f"projects/UNSPECIFIED/zones/{zone}/disks/{src.get('pdName', '')}"
    if plugin.source == "azureDisk":
        return str(src.get("diskURI") or "")
    return str(src.get("volumeID") or "")


def translate_pv_to_csi(pv: Obj, csi_node: Mapping[str, Any] | None) -> Obj:
    """tryTranslatePVToCSI: a migrated in-tree PV seen as its CSI twin (driver, handle, zone topology key)."""
    plugin = in_tree_plugin_of(spec(pv))
    if plugin is None or not is_migration_on(csi_node, plugin.plugin):
        return pv
    new_spec = {k: v for k, v in spec(pv).items() if k != plugin.source}
    new_spec["csi"] = {
        "driver": plugin.driver,
        "volumeHandle": translated_volume_handle(plugin, spec(pv), meta(pv).get("labels") or {}),
    }
    affinity = spec(pv).get("nodeAffinity")
    if affinity and plugin.topology_key:
        terms = []
        for t in (affinity.get("required") or {}).get("nodeSelectorTerms") or ():
            exprs = [
                dict(e, key=plugin.topology_key) if e.get("key") in ZONE_LABELS else e
                for e in t.get("matchExpressions") or ()
            ]
            terms.append(dict(t, matchExpressions=exprs))
        new_spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": terms}}
    return dict(pv, spec=new_spec)
