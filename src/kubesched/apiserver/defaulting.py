"""The API server's defaulting, for the fields the scheduler reads, on decoded manifests.

kube-apiserver fills these in before any scheduler sees an object, so a simulation
without them schedules something no cluster would hold: a container with only
`limits` would request nothing (two `nvidia.com/gpu: 1` pods sharing one GPU). Each
function changes the object in place, as v1.36's SetDefaults_* and the default
admission plugins do on create:

- Pod: requests from limits for containers and init containers, then pod-level
  hugepage limits and requests (PodLevelResources); schedulerName; container port
  protocol; host ports for hostNetwork pods; DefaultTolerationSeconds' not-ready and
  unreachable tolerations. Priority and preemptionPolicy need the PriorityClasses and
  are set by the loader (admission.py).
- Node: allocatable from capacity. Namespace: the kubernetes.io/metadata.name label.
- PersistentVolume: reclaim policy and volume mode; PersistentVolumeClaim: volume mode.
- StorageClass: reclaim policy and binding mode. PriorityClass: preemption policy.
- Workloads, for the fields their controllers read: replicas (Deployment, ReplicaSet,
  ReplicationController, StatefulSet), a ReplicationController's selector and labels
  from its template, the update strategies, a StatefulSet's pod management and claim
  retention policies, a Job's parallelism, completions, completion mode, suspend and
  manualSelector, a CronJob's concurrency policy and suspend.
- resource.k8s.io kinds: resource_defaulting.py.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from kubesched.api.object import Obj
from kubesched.api.resources import CPU, HUGEPAGES_PREFIX, MEMORY, is_supported_pod_level_resource, pod_requests
from kubesched.apiserver import resource_defaulting, workload_api

DEFAULT_SCHEDULER_NAME = "default-scheduler"
NOT_READY_TAINT = "node.kubernetes.io/not-ready"
UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
DEFAULT_TOLERATION_SECONDS = 300
LABEL_METADATA_NAME = "kubernetes.io/metadata.name"


def _dict(parent: Obj, key: str) -> Obj:
    value = parent.get(key)
    if not isinstance(value, dict):
        value = parent[key] = {}
    return value


def _containers(spec: Obj, group: str) -> list[Obj]:
    return [c for c in spec.get(group) or () if isinstance(c, dict)]


def default_pod(pod: Obj) -> None:
    spec = _dict(pod, "spec")
    for group in ("containers", "initContainers"):
        for c in _containers(spec, group):
            res = c.get("resources")
            if not isinstance(res, dict) or not res.get("limits"):
                continue
            requests = _dict(res, "requests")
            for name, limit in res["limits"].items():
                requests.setdefault(name, limit)
        for c in _containers(spec, group):
            for port in c.get("ports") or ():
                if isinstance(port, dict):
                    port.setdefault("protocol", "TCP")
    if isinstance(spec.get("resources"), dict):
        _default_hugepage_pod_limits(pod)
        _default_pod_requests(pod)
    if spec.get("hostNetwork") is True:
        for group in ("containers", "initContainers"):
            for c in _containers(spec, group):
                for port in c.get("ports") or ():
                    if isinstance(port, dict) and not port.get("hostPort") and port.get("containerPort"):
                        port["hostPort"] = port["containerPort"]
    if not spec.get("schedulerName"):
        spec["schedulerName"] = DEFAULT_SCHEDULER_NAME


def _aggregate(pod: Obj, which: str) -> dict[str, int]:
    """AggregateContainerRequests/Limits: the containers' effective amounts, without pod level and overhead."""
    view = copy.deepcopy(pod)
    spec = view["spec"]
    spec.pop("overhead", None)
    if which == "limits":
        for group in ("containers", "initContainers"):
            for c in _containers(spec, group):
                res = c.get("resources") or {}
                c["resources"] = {"requests": dict(res.get("limits") or {})}
    return pod_requests(view, use_status_resources=False, skip_pod_level_resources=True)


def _amount(name: str, amount: int) -> str:
    return f"{amount}m" if name == CPU else str(amount)


def _default_hugepage_pod_limits(pod: Obj) -> None:
    """Pod-level hugepage limits default to the containers' when the pod level sets some resources."""
    res = pod["spec"]["resources"]
    if not res.get("limits") and not res.get("requests"):
        return
    limits = dict(res.get("limits") or {})
    requests = res.get("requests") or {}
    for name, amount in _aggregate(pod, "limits").items():
        if name.startswith(HUGEPAGES_PREFIX) and name not in requests and name not in limits:
            limits[name] = _amount(name, amount)
    if limits:
        res["limits"] = limits


def _default_pod_requests(pod: Obj) -> None:
    """With pod-level limits: requests default to the containers' (cpu, memory), else to the limits."""
    res = pod["spec"]["resources"]
    if not res.get("limits"):
        return
    requests = dict(res.get("requests") or {})
    for name, amount in _aggregate(pod, "requests").items():
        if name in (CPU, MEMORY) and name not in requests:
            requests[name] = _amount(name, amount)
    for name, limit in res["limits"].items():
        if name not in requests and is_supported_pod_level_resource(name):
            requests[name] = limit
    if requests:
        res["requests"] = requests


def default_tolerations(pod: Obj) -> None:
    """DefaultTolerationSeconds admission: tolerate not-ready and unreachable nodes for 300s unless told otherwise."""
    spec = _dict(pod, "spec")
    tolerations = [t for t in spec.get("tolerations") or () if isinstance(t, dict)]
    missing = []
    for key in (NOT_READY_TAINT, UNREACHABLE_TAINT):
        covered = any(t.get("key", "") in (key, "") and t.get("effect", "") in ("NoExecute", "") for t in tolerations)
        if not covered:
            missing.append(
                {
                    "key": key,
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": DEFAULT_TOLERATION_SECONDS,
                }
            )
    if missing:
        spec["tolerations"] = [*(spec.get("tolerations") or ()), *missing]


def default_node(node: Obj) -> None:
    status = node.get("status")
    if isinstance(status, dict) and status.get("allocatable") is None and status.get("capacity") is not None:
        status["allocatable"] = dict(status["capacity"])


def default_namespace(ns: Obj) -> None:
    meta = _dict(ns, "metadata")
    if meta.get("name"):
        _dict(meta, "labels")[LABEL_METADATA_NAME] = meta["name"]


def default_persistent_volume(pv: Obj) -> None:
    spec = _dict(pv, "spec")
    spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
    spec.setdefault("volumeMode", "Filesystem")


def default_persistent_volume_claim(pvc: Obj) -> None:
    _dict(pvc, "spec").setdefault("volumeMode", "Filesystem")


def default_storage_class(sc: Obj) -> None:
    sc.setdefault("reclaimPolicy", "Delete")
    sc.setdefault("volumeBindingMode", "Immediate")


def default_priority_class(pc: Obj) -> None:
    pc.setdefault("preemptionPolicy", "PreemptLowerPriority")


def _replicas(obj: Obj) -> Obj:
    spec = _dict(obj, "spec")
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    return spec


def default_deployment(d: Obj) -> None:
    spec = _replicas(d)
    strategy = _dict(spec, "strategy")
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = _dict(strategy, "rollingUpdate")
        rolling.setdefault("maxUnavailable", "25%")
        rolling.setdefault("maxSurge", "25%")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)


def default_replica_set(rs: Obj) -> None:
    _replicas(rs)


def default_replication_controller(rc: Obj) -> None:
    spec = _replicas(rc)
    template = spec.get("template")
    labels = ((template.get("metadata") or {}).get("labels") if isinstance(template, dict) else None) or None
    if labels is not None:
        if not spec.get("selector"):
            spec["selector"] = dict(labels)
        meta = _dict(rc, "metadata")
        if not meta.get("labels"):
            meta["labels"] = dict(labels)


def default_stateful_set(sts: Obj) -> None:
    spec = _replicas(sts)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    strategy = _dict(spec, "updateStrategy")
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
        strategy.setdefault("rollingUpdate", {})
    if strategy["type"] == "RollingUpdate" and isinstance(strategy.get("rollingUpdate"), dict):
        strategy["rollingUpdate"].setdefault("partition", 0)
    retention = _dict(spec, "persistentVolumeClaimRetentionPolicy")
    retention.setdefault("whenDeleted", "Retain")
    retention.setdefault("whenScaled", "Retain")
    spec.setdefault("revisionHistoryLimit", 10)


def default_daemon_set(ds: Obj) -> None:
    spec = _dict(ds, "spec")
    strategy = _dict(spec, "updateStrategy")
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = _dict(strategy, "rollingUpdate")
        rolling.setdefault("maxUnavailable", 1)
        rolling.setdefault("maxSurge", 0)
    spec.setdefault("revisionHistoryLimit", 10)


def default_job(job: Obj) -> None:
    spec = _dict(job, "spec")
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    if spec.get("parallelism") is None:
        spec["parallelism"] = 1
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = 2**31 - 1 if spec.get("backoffLimitPerIndex") is not None else 6
    # The Job's labels default to its template's once the Job strategy completed them (controllers/job.py).
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("podReplacementPolicy", "Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed")
    spec.setdefault("manualSelector", False)


def default_cron_job(cj: Obj) -> None:
    spec = _dict(cj, "spec")
    if not spec.get("concurrencyPolicy"):
        spec["concurrencyPolicy"] = "Allow"
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)


DEFAULTERS: dict[str, Callable[[Obj], None]] = {
    "Pod": default_pod,
    "Node": default_node,
    "Namespace": default_namespace,
    "PersistentVolume": default_persistent_volume,
    "PersistentVolumeClaim": default_persistent_volume_claim,
    "StorageClass": default_storage_class,
    "PriorityClass": default_priority_class,
    "Deployment": default_deployment,
    "ReplicaSet": default_replica_set,
    "ReplicationController": default_replication_controller,
    "StatefulSet": default_stateful_set,
    "DaemonSet": default_daemon_set,
    "Job": default_job,
    "CronJob": default_cron_job,
    **resource_defaulting.DEFAULTERS,
    **workload_api.DEFAULTERS,
}


def set_defaults(obj: Obj) -> None:
    """Apply the defaults of obj's kind (objects of other kinds are left alone)."""
    defaulter = DEFAULTERS.get(str(obj.get("kind")))
    if defaulter is not None:
        defaulter(obj)
