"""What the API server does across objects when they are created: admission and the store's rules.

- Priority admission: a pod's priority and preemption policy come from its
  PriorityClass (or the global default); a pod that names a class and gives a
  different value is refused. A pod that names no class, when there is no global
  default, keeps a `priority` it gives itself, as upstream's scheduler test tables
  write pods (the API server would set 0).
- PriorityClass admission: one global default at most.
- DefaultTolerationSeconds and DefaultStorageClass admission.
- ResourceClaims and ResourceClaimTemplates asking for admin access to devices need
  the `resource.kubernetes.io/admin-access: "true"` label on their namespace (a
  namespace not in the input has no labels).
- The store: one object per kind, namespace and name (`pods "web" already exists`);
  uids are the server's, so two pods copied with the same `metadata.uid` stay two pods.
- What kube-scheduler's informers see: not Succeeded or Failed pods.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.kinds import NAMESPACED
from kubesched.api.object import Obj
from kubesched.apiserver.defaulting import default_tolerations
from kubesched.apiserver.resource_validation import admin_access_problems
from kubesched.apiserver.validation import SYSTEM_PRIORITY_CLASSES

DEFAULT_PREEMPTION_POLICY = "PreemptLowerPriority"
ANN_DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
ANN_BETA_DEFAULT_CLASS = "storageclass.beta.kubernetes.io/is-default-class"
ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
RESOURCES = {
    "Pod": "pods",
    "Node": "nodes",
    "Namespace": "namespaces",
    "PersistentVolume": "persistentvolumes",
    "PersistentVolumeClaim": "persistentvolumeclaims",
    "Service": "services",
    "ReplicationController": "replicationcontrollers",
    "ReplicaSet": "replicasets.apps",
    "StatefulSet": "statefulsets.apps",
    "Deployment": "deployments.apps",
    "DaemonSet": "daemonsets.apps",
    "Job": "jobs.batch",
    "CronJob": "cronjobs.batch",
    "PodDisruptionBudget": "poddisruptionbudgets.policy",
    "StorageClass": "storageclasses.storage.k8s.io",
    "CSINode": "csinodes.storage.k8s.io",
    "CSIDriver": "csidrivers.storage.k8s.io",
    "CSIStorageCapacity": "csistoragecapacities.storage.k8s.io",
    "PriorityClass": "priorityclasses.scheduling.k8s.io",
    "DeviceClass": "deviceclasses.resource.k8s.io",
    "ResourceClaim": "resourceclaims.resource.k8s.io",
    "ResourceClaimTemplate": "resourceclaimtemplates.resource.k8s.io",
    "ResourceSlice": "resourceslices.resource.k8s.io",
}
TERMINAL_PHASES = ("Succeeded", "Failed")


class AdmissionError(ValueError):
    """An object the store refuses; `where` says where it was read."""

    def __init__(self, message: str, where: str, kind: str, ident: str, first: str = "") -> None:
        super().__init__(message)
        self.where, self.kind, self.ident = where, kind, ident
        self.first = first  # where the object it collides with was read


def _meta(obj: Obj) -> dict[str, Any]:
    return obj.get("metadata") or {}


def _name(obj: Obj) -> str:
    return str(_meta(obj).get("name") or "")


def _namespace(obj: Obj) -> str:
    return str(_meta(obj).get("namespace") or "default") if obj.get("kind") in NAMESPACED else ""


@dataclass
class Context:
    """The PriorityClasses and StorageClasses every object is admitted against."""

    classes: dict[str, tuple[int, str]] = field(default_factory=dict)  # name -> (value, preemption policy)
    global_default: str = ""
    extra_defaults: set[int] = field(default_factory=set)  # ids of global-default classes after the first
    default_storage_class: str = ""
    namespace_labels: dict[str, dict[str, str]] = field(default_factory=dict)  # of the Namespaces in the input
    global_default_source: str = ""  # where the global default was read: the refusal of a second names both places

    @classmethod
    def of(cls, objects: Iterable[Obj]) -> Context:
        ctx = cls({name: (value, DEFAULT_PREEMPTION_POLICY) for name, value in SYSTEM_PRIORITY_CLASSES.items()})
        defaults: list[Obj] = []
        for obj in objects:
            kind = obj.get("kind")
            if kind == "PriorityClass":
                ctx.classes[_name(obj)] = (
                    int(obj.get("value", 0)),
                    str(obj.get("preemptionPolicy") or DEFAULT_PREEMPTION_POLICY),
                )
                if obj.get("globalDefault") is True:
                    if ctx.global_default:
                        ctx.extra_defaults.add(id(obj))
                    else:
                        ctx.global_default = _name(obj)
            elif kind == "Namespace":
                ctx.namespace_labels[_name(obj)] = dict(_meta(obj).get("labels") or {})
            elif kind == "StorageClass":
                ann = _meta(obj).get("annotations") or {}
                if "true" in (ann.get(ANN_DEFAULT_CLASS), ann.get(ANN_BETA_DEFAULT_CLASS)):
                    defaults.append(obj)
        if defaults:
            # The newest default class wins, then the first by name.
            newest = max(str(_meta(o).get("creationTimestamp") or "") for o in defaults)
            ctx.default_storage_class = min(
                _name(o) for o in defaults if str(_meta(o).get("creationTimestamp") or "") == newest
            )
        return ctx

    def admit(self, obj: Obj) -> list[str]:
        """Mutating admission of one object (pods and claims); the errors of the Priority plugin."""
        kind = obj.get("kind")
        if kind == "Pod":
            default_tolerations(obj)
            return self._admit_priority(obj)
        if kind == "PersistentVolumeClaim":
            spec = obj.setdefault("spec", {})
            ann = _meta(obj).get("annotations") or {}
            if "storageClassName" not in spec and ANN_BETA_STORAGE_CLASS not in ann and self.default_storage_class:
                spec["storageClassName"] = self.default_storage_class
        if kind in ("ResourceClaim", "ResourceClaimTemplate"):
            spec = obj.get("spec") or {}
            if kind == "ResourceClaimTemplate":
                spec = spec.get("spec") or {}
            requests = (spec.get("devices") or {}).get("requests") or []
            # Upstream names the claim's path for templates too.
            return admin_access_problems(requests, "spec.devices.requests", self.namespace_labels.get(_namespace(obj)))
        return []

    def _admit_priority(self, pod: Obj) -> list[str]:
        spec = pod.setdefault("spec", {})
        name = spec.get("priorityClassName") or ""
        forbidden = f'pods "{_name(pod)}" is forbidden: '
        if not name and self.global_default:
            name = spec["priorityClassName"] = self.global_default
        if not name:
            spec.setdefault("priority", 0)
            spec.setdefault("preemptionPolicy", DEFAULT_PREEMPTION_POLICY)
            return []
        if name not in self.classes:
            return [f"spec.priorityClassName: {forbidden}no PriorityClass with name {name} was found"]
        value, policy = self.classes[name]
        errs = []
        if spec.get("priority") is not None and spec["priority"] != value:
            errs.append(
                f"spec.priority: {forbidden}the integer value of priority ({spec['priority']}) must not be provided "
                f"in pod spec; priority admission controller computed {value} from the given PriorityClass name"
            )
        given = spec.get("preemptionPolicy")
        if given is not None and given != policy:
            errs.append(
                f"spec.preemptionPolicy: {forbidden}the string value of PreemptionPolicy ({given}) must not be "
                f"provided in pod spec; priority admission controller computed {policy} from the given "
                "PriorityClass name"
            )
        spec["priority"], spec["preemptionPolicy"] = value, policy
        return errs

    def validate_admission(self, obj: Obj) -> list[str]:
        """Validating admission: a second global-default PriorityClass is refused."""
        if obj.get("kind") == "PriorityClass" and id(obj) in self.extra_defaults:
            first = f" ({self.global_default} in {self.global_default_source})" if self.global_default_source else ""
            return [
                f'{RESOURCES["PriorityClass"]} "{_name(obj)}" is forbidden: PriorityClass {self.global_default} '
                f"is already marked as default. Only one default can exist{first}"
            ]
        return []


def identity(obj: Obj) -> tuple[str, str, str]:
    """What the store keys an object by: kind, namespace ('' when cluster-scoped) and name."""
    return str(obj.get("kind")), _namespace(obj), _name(obj)


def check_unique(objects: Iterable[tuple[Obj, str]]) -> None:
    """One object per kind, namespace and name, as the store keeps them; a second is refused, saying where."""
    seen: dict[tuple[str, str, str], str] = {}
    for obj, where in objects:
        kind = str(obj.get("kind"))
        key = identity(obj)
        if key in seen:
            ident = f"{key[1]}/{key[2]}" if key[1] else key[2]
            hint = "; is the file given twice?" if seen[key] == where else ""
            raise AdmissionError(
                f'{RESOURCES.get(kind, kind)} "{key[2]}" already exists (first in {seen[key]}{hint})',
                where,
                kind,
                ident,
                seen[key],
            )
        seen[key] = where


def distinct_uids(objects: Iterable[Obj]) -> None:
    """The API server gives every object its own uid: a uid seen before is replaced by one derived from the key."""
    seen: set[str] = set()
    for obj in objects:
        meta = obj.get("metadata")
        if not isinstance(meta, dict):
            continue
        key = f"{obj.get('kind')}/{_namespace(obj)}/{_name(obj)}"
        uid = str(meta.get("uid") or (f"{_namespace(obj)}/{_name(obj)}" if obj.get("kind") == "Pod" else ""))
        if uid and uid in seen:
            digest = hashlib.sha256(f"{key}/{uid}".encode()).hexdigest()
            uid = meta["uid"] = f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"
        if uid:
            seen.add(uid)


def informer_view(objects: list[Obj], node_names: set[str]) -> tuple[list[Obj], list[str]]:
    """The objects kube-scheduler's informers see (no terminal pods), and warnings about what looks wrong."""
    kept: list[Obj] = []
    terminal = 0
    warnings: list[str] = []
    for obj in objects:
        if obj.get("kind") == "Pod":
            if (obj.get("status") or {}).get("phase") in TERMINAL_PHASES:
                terminal += 1
                continue
            node = (obj.get("spec") or {}).get("nodeName")
            if node and node not in node_names:
                warnings.append(
                    f'pod {_namespace(obj)}/{_name(obj)} is bound to node "{node}", which is not in the input: '
                    "its requests count on no node"
                )
        kept.append(obj)
    if terminal:
        warnings.append(
            f"{terminal} Succeeded or Failed pod(s) left out: they hold no room and kube-scheduler does not see them"
        )
    return kept, warnings
