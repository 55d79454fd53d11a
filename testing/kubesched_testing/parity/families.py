"""Seeded random clusters, one generator per family of scheduling features.

A Case holds the objects that exist before the scheduler starts (bound pods
included), the pods to schedule one at a time, and the scheduler configuration.
Every value is drawn from a `random.Random(seed)`, so a (family, seed) pair names
the same cluster on every machine.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from kubesched.api.object import Obj

ZONES = ("zone-a", "zone-b", "zone-c")
NAMESPACES = ("default", "team-a", "team-b")
APPS = ("web", "db", "cache", "batch")
IMAGES = (
    ("registry.example/web:1.0", 150 * 1024**2),
    ("registry.example/db:2.1", 600 * 1024**2),
    ("registry.example/cache", 40 * 1024**2),
    ("registry.example/batch:3", 900 * 1024**2),
    ("registry.example/tiny:1", 5 * 1024**2),
)
EXTENDED = "example.com/foo"


@dataclass
class Case:
    family: str
    seed: int
    objects: list[Obj] = field(default_factory=list)  # created before the scheduler starts, in order
    pending: list[Obj] = field(default_factory=list)  # created one at a time, each scheduled before the next
    namespace_labels: dict[str, dict[str, str]] = field(default_factory=dict)
    config: Obj = field(default_factory=dict)  # KubeSchedulerConfiguration fields (no clientConnection)

    @property
    def nodes(self) -> list[Obj]:
        return [o for o in self.objects if o["kind"] == "Node"]


def _node(
    name: str,
    cpu: str,
    memory: str,
    pods: str,
    labels: dict[str, str],
    *,
    taints: list[Obj] | None = None,
    unschedulable: bool = False,
    images: list[tuple[str, int]] | None = None,
    extended: dict[str, str] | None = None,
) -> Obj:
    alloc = {"cpu": cpu, "memory": memory, "pods": pods, "ephemeral-storage": "100Gi", **(extended or {})}
    spec: Obj = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    status: Obj = {"capacity": dict(alloc), "allocatable": dict(alloc)}
    if images:
        status["images"] = [{"names": [n], "sizeBytes": s} for n, s in images]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", **labels}},
        "spec": spec,
        "status": status,
    }


def _pod(name: str, namespace: str, labels: dict[str, str], spec: Obj) -> Obj:
    spec = {"terminationGracePeriodSeconds": 0, **spec}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": spec,
    }


class _Gen:
    """Draws the pieces every family shares: nodes, containers, affinity, spreading."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.zones: tuple[str, ...] = ZONES

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def nodes(self, count: int, *, taint_p: float = 0.15, small: bool = False) -> list[Obj]:
        rng = self.rng
        out = []
        for i in range(count):
            name = f"node-{i:03d}"
            labels: dict[str, str] = {}
            if not self.chance(0.05):
                labels["topology.kubernetes.io/zone"] = rng.choice(self.zones)
            if self.chance(0.4):
                labels["disktype"] = rng.choice(("ssd", "hdd"))
            if self.chance(0.3):
                labels["tier"] = rng.choice(("gold", "silver", "bronze"))
            taints = []
            if self.chance(taint_p):
                taints.append(
                    {
                        "key": "dedicated",
                        "value": rng.choice(("infra", "gpu")),
                        "effect": rng.choice(("NoSchedule", "PreferNoSchedule", "PreferNoSchedule", "NoExecute")),
                    }
                )
            if self.chance(taint_p / 2):
                taints.append({"key": "spot", "effect": "PreferNoSchedule"})
            cpu = rng.choice(("1", "2", "4") if small else ("2", "4", "8", "16"))
            memory = rng.choice(("2Gi", "4Gi", "8Gi") if small else ("4Gi", "8Gi", "16Gi", "32Gi"))
            pods = rng.choice(("4", "8", "110") if small else ("10", "20", "110", "110"))
            images = [im for im in IMAGES if self.chance(0.35)]
            extended = {EXTENDED: rng.choice(("1", "2", "4"))} if self.chance(0.2) else None
            out.append(
                _node(
                    name,
                    cpu,
                    memory,
                    pods,
                    labels,
                    taints=taints,
                    unschedulable=self.chance(0.04),
                    images=images,
                    extended=extended,
                )
            )
        return out

    def container(self, name: str, *, heavy: bool = False) -> Obj:
        rng = self.rng
        image = rng.choice(IMAGES)[0]
        cpu = rng.choice(("0", "100m", "250m", "500m", "1", "2") if heavy else ("0", "50m", "100m", "250m", "500m"))
        mem = rng.choice(("0", "64Mi", "256Mi", "1Gi", "2Gi") if heavy else ("0", "32Mi", "128Mi", "256Mi", "512Mi"))
        res: Obj = {}
        reqs = {k: v for k, v in (("cpu", cpu), ("memory", mem)) if v != "0"}
        if reqs:
            if self.chance(0.2):
                res["limits"] = reqs  # the API server copies limits into requests
            else:
                res["requests"] = reqs
                if self.chance(0.3):
                    res["limits"] = {k: v for k, v in reqs.items()}
        c: Obj = {"name": name, "image": image, "resources": res}
        return c

    def pod_spec(self, *, heavy: bool = False) -> Obj:
        rng = self.rng
        containers = [self.container(f"c{i}", heavy=heavy) for i in range(rng.choice((1, 1, 1, 2, 3)))]
        spec: Obj = {"containers": containers}
        if self.chance(0.15):
            init = self.container("init", heavy=heavy)
            if self.chance(0.4):
                init["restartPolicy"] = "Always"  # a sidecar
            spec["initContainers"] = [init]
        if self.chance(0.08):
            ext = rng.choice(("1", "2"))
            containers[0]["resources"].setdefault("requests", {})[EXTENDED] = ext
            containers[0]["resources"].setdefault("limits", {})[EXTENDED] = ext
        return spec

    def pod_level_resources(self, spec: Obj) -> None:
        """spec.resources (PodLevelResources, beta on in v1.36), at least the containers' sum."""
        spec["resources"] = {
            "requests": {"cpu": self.rng.choice(("500m", "1", "2")), "memory": self.rng.choice(("512Mi", "1Gi", "2Gi"))}
        }
        for c in spec["containers"]:
            c["resources"] = {}
        spec.pop("initContainers", None)

    def node_affinity(self, spec: Obj) -> None:
        rng = self.rng
        aff: Obj = {}
        if self.chance(0.5):
            expr = rng.choice(
                (
                    {"key": "disktype", "operator": "In", "values": ["ssd"]},
                    {"key": "tier", "operator": "NotIn", "values": ["bronze"]},
                    {"key": "topology.kubernetes.io/zone", "operator": "In", "values": list(self.zones[:2])},
                    {"key": "disktype", "operator": "Exists"},
                    {"key": "tier", "operator": "DoesNotExist"},
                )
            )
            aff["requiredDuringSchedulingIgnoredDuringExecution"] = {
                "nodeSelectorTerms": [{"matchExpressions": [expr]}]
            }
        if self.chance(0.7):
            aff["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {
                    "weight": rng.randint(1, 100),
                    "preference": {
                        "matchExpressions": [
                            {"key": rng.choice(("disktype", "tier")), "operator": "In", "values": ["ssd", "gold"]}
                        ]
                    },
                }
                for _ in range(rng.randint(1, 2))
            ]
        if aff:
            spec.setdefault("affinity", {})["nodeAffinity"] = aff

    def tolerations(self, spec: Obj) -> None:
        rng = self.rng
        tols = []
        for _ in range(rng.randint(1, 2)):
            t: Obj = {"key": rng.choice(("dedicated", "spot")), "operator": rng.choice(("Exists", "Equal"))}
            if t["operator"] == "Equal":
                t["value"] = rng.choice(("infra", "gpu"))
            eff = rng.choice(("", "NoSchedule", "PreferNoSchedule", "NoExecute"))
            if eff:
                t["effect"] = eff
            tols.append(t)
        spec["tolerations"] = tols

    def pod_affinity(self, spec: Obj, labels: dict[str, str], namespaces: tuple[str, ...]) -> None:
        rng = self.rng
        key = rng.choice(("kubernetes.io/hostname", "topology.kubernetes.io/zone"))

        def term() -> Obj:
            t: Obj = {
                "labelSelector": {"matchLabels": {"app": rng.choice(APPS)}},
                "topologyKey": rng.choice(("kubernetes.io/hostname", "topology.kubernetes.io/zone")),
            }
            if self.chance(0.2):
                t["namespaces"] = list(rng.sample(namespaces, 2))
            elif self.chance(0.1):
                t["namespaceSelector"] = {"matchLabels": {"team": "a"}}
            if self.chance(0.15) and "app" in labels:
                t["matchLabelKeys"] = ["tier"] if "tier" in labels else []
                if not t["matchLabelKeys"]:
                    del t["matchLabelKeys"]
            return t

        aff: Obj = {}
        if self.chance(0.35):
            aff.setdefault("podAntiAffinity", {})["requiredDuringSchedulingIgnoredDuringExecution"] = [
                {"labelSelector": {"matchLabels": {"app": labels.get("app", "web")}}, "topologyKey": key}
            ]
        if self.chance(0.2):
            aff.setdefault("podAffinity", {})["requiredDuringSchedulingIgnoredDuringExecution"] = [term()]
        if self.chance(0.4):
            aff.setdefault("podAffinity", {})["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": rng.randint(1, 100), "podAffinityTerm": term()}
            ]
        if self.chance(0.4):
            aff.setdefault("podAntiAffinity", {})["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": rng.randint(1, 100), "podAffinityTerm": term()}
            ]
        if aff:
            spec.setdefault("affinity", {}).update(aff)

    def spread(self, spec: Obj, labels: dict[str, str]) -> None:
        rng = self.rng
        out = []
        for key in rng.sample(("topology.kubernetes.io/zone", "kubernetes.io/hostname"), rng.randint(1, 2)):
            c: Obj = {
                "maxSkew": rng.choice((1, 1, 2, 3)),
                "topologyKey": key,
                "whenUnsatisfiable": rng.choice(("DoNotSchedule", "ScheduleAnyway")),
                "labelSelector": {"matchLabels": {"app": labels.get("app", "web")}},
            }
            if c["whenUnsatisfiable"] == "DoNotSchedule" and self.chance(0.2):
                c["minDomains"] = rng.randint(1, 4)
            if self.chance(0.2):
                c["nodeAffinityPolicy"] = rng.choice(("Honor", "Ignore"))
            if self.chance(0.2):
                c["nodeTaintsPolicy"] = rng.choice(("Honor", "Ignore"))
            if self.chance(0.15) and "tier" in labels:
                c["matchLabelKeys"] = ["tier"]
            out.append(c)
        spec["topologySpreadConstraints"] = out

    def labels(self) -> dict[str, str]:
        labels = {"app": self.rng.choice(APPS)}
        if self.chance(0.5):
            labels["tier"] = self.rng.choice(("front", "back"))
        return labels

    def decorate(self, spec: Obj, labels: dict[str, str], *, affinity_p: float = 1.0) -> None:
        """The constraints a pending pod may carry, each with its own chance."""
        rng = self.rng
        if self.chance(0.2):
            spec["nodeSelector"] = {rng.choice(("disktype", "tier")): rng.choice(("ssd", "gold", "silver"))}
        if self.chance(0.4):
            self.node_affinity(spec)
        if self.chance(0.35):
            self.tolerations(spec)
        if self.chance(0.15):
            spec["containers"][0]["ports"] = [
                {"containerPort": 8080, "hostPort": rng.choice((8080, 9090)), "protocol": rng.choice(("TCP", "UDP"))}
            ]
        if self.chance(0.45 * affinity_p):
            self.pod_affinity(spec, labels, NAMESPACES)
        if self.chance(0.35 * affinity_p):
            self.spread(spec, labels)
        if self.chance(0.1):
            self.pod_level_resources(spec)

    def services(self) -> list[Obj]:
        out = []
        for app in self.rng.sample(APPS, self.rng.randint(0, 3)):
            out.append(
                {
                    "apiVersion": "v1",
                    "kind": "Service",
                    "metadata": {"name": f"svc-{app}", "namespace": "default"},
                    "spec": {"clusterIP": "None", "selector": {"app": app}, "ports": [{"port": 80}]},
                }
            )
        return out

    def place(self, pods: list[Obj], nodes: list[Obj]) -> None:
        """Bind existing pods to nodes with room for them (a rough fit; upstream reads whatever is bound)."""
        free = {n["metadata"]["name"]: _alloc(n) for n in nodes}
        for p in pods:
            need = _requests(p["spec"])
            names = list(free)
            self.rng.shuffle(names)
            for name in names:
                f = free[name]
                if f["pods"] >= 1 and all(f.get(k, 0) >= v for k, v in need.items()):
                    for k, v in need.items():
                        f[k] -= v
                    f["pods"] -= 1
                    p["spec"]["nodeName"] = name
                    break
            else:
                p["spec"]["nodeName"] = names[0]


def _milli(q: str) -> int:
    if q.endswith("m"):
        return int(q[:-1])
    return int(float(q) * 1000)


def _bytes(q: str) -> int:
    for suffix, mult in (("Ki", 1024), ("Mi", 1024**2), ("Gi", 1024**3)):
        if q.endswith(suffix):
            return int(q[: -len(suffix)]) * mult
    return int(q)


def _alloc(node: Obj) -> dict[str, int]:
    a = node["status"]["allocatable"]
    return {"cpu": _milli(a["cpu"]), "memory": _bytes(a["memory"]), "pods": int(a["pods"])}


def _requests(spec: Obj) -> dict[str, int]:
    total = {"cpu": 0, "memory": 0}
    if spec.get("resources"):
        r = spec["resources"].get("requests") or {}
        return {"cpu": _milli(r.get("cpu", "0")), "memory": _bytes(r.get("memory", "0"))}
    for c in spec.get("containers") or ():
        res = c.get("resources") or {}
        r = res.get("requests") or res.get("limits") or {}
        total["cpu"] += _milli(r.get("cpu", "0"))
        total["memory"] += _bytes(r.get("memory", "0"))
    return total


def _namespace_labels(g: _Gen) -> dict[str, dict[str, str]]:
    return {"default": {}, "team-a": {"team": "a"}, "team-b": {"team": g.rng.choice(("a", "b"))}}


def plain(seed: int) -> Case:
    """Resources, node affinity and selectors, taints, host ports, images, pod (anti-)affinity, spreading."""
    g = _Gen(seed)
    rng = g.rng
    g.zones = ZONES[: rng.randint(1, 3)]
    case = Case("plain", seed, namespace_labels=_namespace_labels(g))
    nodes = g.nodes(rng.randint(3, 12))
    existing = []
    for i in range(rng.randint(0, 20)):
        labels = g.labels()
        spec = g.pod_spec()
        if g.chance(0.25):
            g.pod_affinity(spec, labels, NAMESPACES)
        existing.append(_pod(f"run-{i:03d}", rng.choice(("default", "default", "team-a")), labels, spec))
    g.place(existing, nodes)
    case.objects = [*nodes, *g.services(), *existing]
    for i in range(rng.randint(6, 12)):
        labels = g.labels()
        spec = g.pod_spec(heavy=g.chance(0.3))
        g.decorate(spec, labels)
        case.pending.append(_pod(f"pod-{i:03d}", rng.choice(("default", "default", "team-a")), labels, spec))
    return case


PRIORITIES = {"low": 10, "mid": 100, "high": 1000, "high-never": 1000}


def preemption(seed: int) -> Case:
    """Priorities, PodDisruptionBudgets, nominated pods, preemptionPolicy, victims that take time to go."""
    g = _Gen(seed)
    rng = g.rng
    g.zones = ZONES[: rng.randint(1, 2)]
    case = Case("preemption", seed, namespace_labels=_namespace_labels(g))
    classes = []
    for name, value in PRIORITIES.items():
        pc: Obj = {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
        }
        if name.endswith("never"):
            pc["preemptionPolicy"] = "Never"
        classes.append(pc)
    nodes = g.nodes(rng.randint(2, 8), taint_p=0.05, small=True)
    existing = []
    for i in range(rng.randint(4, 24)):
        labels = g.labels()
        spec = g.pod_spec(heavy=g.chance(0.4))
        spec["priorityClassName"] = rng.choice(("low", "low", "mid"))
        if g.chance(0.3):
            spec["terminationGracePeriodSeconds"] = 30  # stays Terminating until the harness finishes it
        existing.append(_pod(f"run-{i:03d}", "default", labels, spec))
    g.place(existing, nodes)
    pdbs = []
    for app in rng.sample(APPS, rng.randint(0, 2)):
        pdbs.append(
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": f"pdb-{app}", "namespace": "default"},
                "spec": {"selector": {"matchLabels": {"app": app}}, "minAvailable": rng.randint(0, 2)},
            }
        )
    case.objects = [*classes, *nodes, *pdbs, *existing]
    for i in range(rng.randint(4, 8)):
        labels = g.labels()
        spec = g.pod_spec(heavy=True)
        spec["priorityClassName"] = rng.choice(("high", "high", "mid", "high-never", "low"))
        g.decorate(spec, labels, affinity_p=0.3)
        case.pending.append(_pod(f"pod-{i:03d}", "default", labels, spec))
    return case


CSI_DRIVER = "csi.example.com"
STORAGE_CLASSES = {
    # name: (volumeBindingMode, provisioner, allowed zones or None)
    "immediate": ("Immediate", "kubernetes.io/no-provisioner", None),
    "local-wffc": ("WaitForFirstConsumer", "kubernetes.io/no-provisioner", None),
    "csi-wffc": ("WaitForFirstConsumer", CSI_DRIVER, ("zone-a", "zone-b")),
}


def _storage_class(name: str) -> Obj:
    mode, provisioner, zones = STORAGE_CLASSES[name]
    sc: Obj = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
        "volumeBindingMode": mode,
    }
    if zones:
        sc["allowedTopologies"] = [
            {"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone", "values": list(zones)}]}
        ]
    return sc


def _pv(name: str, size: str, modes: list[str], sc: str, node_affinity: Obj | None, zone: str | None) -> Obj:
    pv: Obj = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {
            "capacity": {"storage": size},
            "accessModes": modes,
            "persistentVolumeReclaimPolicy": "Retain",
            "storageClassName": sc,
            "csi": {"driver": CSI_DRIVER, "volumeHandle": name},
        },
    }
    if zone:
        pv["metadata"]["labels"] = {"topology.kubernetes.io/zone": zone}
    if node_affinity:
        pv["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [node_affinity]}]}}
    return pv


def _pvc(name: str, size: str, modes: list[str], sc: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"accessModes": modes, "storageClassName": sc, "resources": {"requests": {"storage": size}}},
    }


def volumes(seed: int) -> Case:
    """Bound and WaitForFirstConsumer claims, static PVs with node affinity, provisioning, CSINode limits."""
    g = _Gen(seed)
    rng = g.rng
    g.zones = ZONES[: rng.randint(1, 3)]
    case = Case("volumes", seed, namespace_labels=_namespace_labels(g))
    nodes = g.nodes(rng.randint(3, 8), taint_p=0.05)
    classes = [_storage_class(n) for n in STORAGE_CLASSES]
    csinodes = []
    for n in nodes:
        name = n["metadata"]["name"]
        driver: Obj = {"name": CSI_DRIVER, "nodeID": name, "topologyKeys": ["topology.kubernetes.io/zone"]}
        if g.chance(0.7):
            driver["allocatable"] = {"count": rng.randint(1, 4)}
        csinode: Obj = {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": name}}
        csinode["spec"] = {"drivers": [driver]}
        csinodes.append(csinode)
    driver_obj = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIDriver",
        "metadata": {"name": CSI_DRIVER},
        "spec": {"attachRequired": True},
    }
    pvs = []
    for i in range(rng.randint(3, 14)):
        sc = rng.choice(("immediate", "local-wffc", "local-wffc"))
        kind = rng.random()
        zone: str | None = rng.choice(g.zones)
        if kind < 0.4:
            affinity: Obj | None = {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}
        elif kind < 0.8:
            host = rng.choice(nodes)["metadata"]["name"]
            affinity = {"key": "kubernetes.io/hostname", "operator": "In", "values": [host]}
            zone = None
        else:
            affinity = None
        modes = [rng.choice(("ReadWriteOnce", "ReadWriteOnce", "ReadWriteOncePod", "ReadWriteMany"))]
        label_zone = zone if g.chance(0.5) else None
        pvs.append(_pv(f"pv-{i:03d}", rng.choice(("1Gi", "5Gi", "10Gi")), modes, sc, affinity, label_zone))
    claims = []
    for i in range(rng.randint(3, 10)):
        sc = rng.choice(("immediate", "local-wffc", "local-wffc", "csi-wffc"))
        modes = [rng.choice(("ReadWriteOnce", "ReadWriteOnce", "ReadWriteOncePod"))]
        claims.append(_pvc(f"claim-{i:03d}", rng.choice(("1Gi", "2Gi", "5Gi")), modes, sc))
    case.objects = [classes[0], classes[1], classes[2], driver_obj, *csinodes, *nodes, *pvs, *claims]
    used: list[str] = []
    for i in range(rng.randint(5, 10)):
        labels = g.labels()
        spec = g.pod_spec()
        vols = []
        for j in range(rng.choice((0, 1, 1, 1, 2))):
            claim = rng.choice(claims)["metadata"]["name"]
            if claim in used and g.chance(0.6):
                continue
            used.append(claim)
            vols.append({"name": f"v{j}", "persistentVolumeClaim": {"claimName": claim}})
        if g.chance(0.1):
            vols.append({"name": "pd", "gcePersistentDisk": {"pdName": rng.choice(("disk-1", "disk-2"))}})
        if vols:
            spec["volumes"] = vols
        if g.chance(0.3):
            g.node_affinity(spec)
        case.pending.append(_pod(f"pod-{i:03d}", "default", labels, spec))
    return case


def large(seed: int) -> Case:
    """200-1000 nodes: percentageOfNodesToScore and the rotating start index decide which nodes are seen."""
    g = _Gen(seed)
    rng = g.rng
    case = Case("large", seed, namespace_labels=_namespace_labels(g))
    nodes = g.nodes(rng.randint(200, 1000), taint_p=0.05)
    existing = []
    for i in range(len(nodes) // 2):
        labels = g.labels()
        existing.append(_pod(f"run-{i:04d}", "default", labels, g.pod_spec()))
    g.place(existing, nodes)
    case.objects = [*nodes, *g.services(), *existing]
    pct = rng.choice((None, None, 10, 30, 70, 100))
    if pct is not None:
        case.config = {"percentageOfNodesToScore": pct}
    for i in range(rng.randint(15, 30)):
        labels = g.labels()
        spec = g.pod_spec(heavy=g.chance(0.3))
        g.decorate(spec, labels, affinity_p=0.5)
        case.pending.append(_pod(f"pod-{i:03d}", "default", labels, spec))
    return case


GPU_DRIVER = "gpu.example.com"
NIC_DRIVER = "nic.example.com"
FPGA_DRIVER = "fpga.example.com"
ADMIN_NAMESPACE = "dra-admin"
ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access"
DEVICE_TAINT = "example.com/unhealthy"
GPU_MODELS = {"l4": 16, "a100": 40, "h100": 80}  # model -> memory in Gi
GPU_VERSIONS = ("1.4.0", "1.6.2", "2.0.0")


def _attr(value: str | int | bool, kind: str) -> Obj:
    return {kind: value}


def _cel(expression: str) -> Obj:
    return {"cel": {"expression": expression}}


def _gpu_counters(memory_gi: int, compute: int) -> Obj:
    """A GPU's counters, or what one of its partitions consumes of them."""
    return {"memory": {"value": f"{memory_gi}Gi"}, "compute": {"value": str(compute)}}


def _zone_term(zone: str) -> Obj:
    return {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}]}


def _slice(name: str, driver: str, pool: str, count: int, where: Obj, generation: int = 1) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "driver": driver,
            "pool": {"name": pool, "generation": generation, "resourceSliceCount": count},
            **where,
        },
    }


class _DRAGen:
    """Device inventories, DeviceClasses and ResourceClaims for the dra family."""

    def __init__(self, g: _Gen) -> None:
        self.g = g
        self.rng = g.rng

    def _taints(self) -> list[Obj]:
        if not self.g.chance(0.08):
            return []
        taint: Obj = {"key": DEVICE_TAINT, "effect": self.rng.choice(("NoSchedule", "NoExecute", "None"))}
        if self.g.chance(0.5):
            taint["value"] = self.rng.choice(("ecc", "thermal"))
        return [taint]

    def _gpu(self, name: str, model: str, index: int, version: str, memory: int, partition: str) -> Obj:
        dev: Obj = {
            "name": name,
            "attributes": {
                "model": _attr(model, "string"),
                "index": _attr(index, "int"),
                "numa": _attr(index // 2, "int"),
                "driverVersion": _attr(version, "version"),
                "partition": _attr(partition, "string"),
            },
            "capacity": {"memory": {"value": f"{memory}Gi"}},
        }
        if taints := self._taints():
            dev["taints"] = taints
        return dev

    def gpu_slices(self, node: str) -> list[Obj]:
        """A node's GPUs: whole ones, or partitionable ones (halves and quarters sharing counters)."""
        g, rng = self.g, self.rng
        model = rng.choice(tuple(GPU_MODELS))
        version = rng.choice(GPU_VERSIONS)
        partitionable = g.chance(0.3)
        devices: list[Obj] = []
        counter_sets: list[Obj] = []
        for i in range(rng.randint(1, 6)):
            m = model if g.chance(0.85) else rng.choice(tuple(GPU_MODELS))
            mem = GPU_MODELS[m]
            whole = self._gpu(f"gpu-{i}", m, i, version, mem, "whole")
            devices.append(whole)
            if not partitionable:
                continue
            cs = f"gpu-{i}-cs"
            counter_sets.append({"name": cs, "counters": _gpu_counters(mem, 8)})
            whole["consumesCounters"] = [{"counterSet": cs, "counters": _gpu_counters(mem, 8)}]
            for part, n, size in (("half", 2, 2), ("quarter", 4, 4)):
                for j in range(n):
                    dev = self._gpu(f"gpu-{i}-{part[0]}{j}", m, i, version, mem // size, part)
                    dev["consumesCounters"] = [{"counterSet": cs, "counters": _gpu_counters(mem // size, 8 // size)}]
                    devices.append(dev)
        where = {"nodeName": node}
        split = len(devices) > 1 and g.chance(0.2)
        chunks = [devices[: len(devices) // 2], devices[len(devices) // 2 :]] if split else [devices]
        count = len(chunks) + (1 if counter_sets else 0)
        if g.chance(0.04):
            count += 1  # a slice not published yet: the pool is incomplete
        generation = 2 if g.chance(0.08) else 1
        out = []
        for k, chunk in enumerate(chunks):
            s = _slice(f"{node}-gpu-{k}", GPU_DRIVER, node, count, where, generation)
            s["spec"]["devices"] = chunk
            out.append(s)
        if counter_sets:
            s = _slice(f"{node}-gpu-counters", GPU_DRIVER, node, count, where, generation)
            s["spec"]["sharedCounters"] = counter_sets
            out.append(s)
        if generation == 2:
            # An outdated slice of the pool's previous generation: the allocator ignores it.
            old = _slice(f"{node}-gpu-old", GPU_DRIVER, node, 1, where, 1)
            old["spec"]["devices"] = [self._gpu("gpu-old-0", model, 0, "1.0.0", GPU_MODELS[model], "whole")]
            out.append(old)
        return out

    def nic_slices(self, node: str) -> list[Obj]:
        """A node's NICs; some are shared, with bandwidth as consumable capacity."""
        g, rng = self.g, self.rng
        shared = g.chance(0.25)
        devices = []
        for i in range(rng.randint(1, 3)):
            dev: Obj = {
                "name": f"nic-{i}",
                "attributes": {
                    "model": _attr(rng.choice(("cx6", "cx7")), "string"),
                    "numa": _attr(i, "int"),
                    "rdma": _attr(g.chance(0.5), "bool"),
                },
                "capacity": {"bandwidth": {"value": rng.choice(("100G", "200G"))}},
            }
            if shared:
                dev["allowMultipleAllocations"] = True
                dev["capacity"]["bandwidth"]["requestPolicy"] = {
                    "default": "10G",
                    "validRange": {"min": "10G", "step": "10G"},
                }
            if taints := self._taints():
                dev["taints"] = taints
            devices.append(dev)
        s = _slice(f"{node}-nic", NIC_DRIVER, node, 1, {"nodeName": node})
        s["spec"]["devices"] = devices
        return [s]

    def fpga_slices(self, zones: tuple[str, ...], nodes: list[str]) -> list[Obj]:
        """Network-attached FPGAs: a pool per zone (a node selector), one reachable from every node, or a pool
        whose devices say each where they are (perDeviceNodeSelection); some bind to the node allocated on."""
        g, rng = self.g, self.rng
        out = []
        pools: list[tuple[str, Obj]] = []
        if g.chance(0.5):
            pools.append(("fpga-all", {"allNodes": True}))
        for zone in rng.sample(zones, rng.randint(1, len(zones))):
            pools.append((f"fpga-{zone}", {"nodeSelector": {"nodeSelectorTerms": [_zone_term(zone)]}}))
        if g.chance(0.4):
            pools.append(("fpga-mixed", {"perDeviceNodeSelection": True}))
        for pool, where in pools:
            s = _slice(pool, FPGA_DRIVER, pool, 1, where)
            devices = []
            for i in range(rng.randint(1, 3)):
                dev: Obj = {
                    "name": f"fpga-{i}",
                    "attributes": {
                        "family": _attr(rng.choice(("agilex", "versal")), "string"),
                        "firmware": _attr(rng.choice(("0.9.1", "1.2.0")), "version"),
                    },
                }
                if "perDeviceNodeSelection" in where:
                    place = rng.random()
                    if place < 0.4:
                        dev["nodeName"] = rng.choice(nodes)
                    elif place < 0.8:
                        dev["nodeSelector"] = {"nodeSelectorTerms": [_zone_term(rng.choice(zones))]}
                    else:
                        dev["allNodes"] = True
                if "nodeName" not in dev and g.chance(0.3):
                    dev["bindsToNode"] = True
                devices.append(dev)
            s["spec"]["devices"] = devices
            out.append(s)
        return out

    def classes(self, drivers: set[str]) -> list[Obj]:
        g = self.g

        def cls(name: str, *expressions: str, config: bool = False) -> Obj:
            spec: Obj = {"selectors": [_cel(e) for e in expressions]}
            if config:
                spec["config"] = [{"opaque": {"driver": GPU_DRIVER, "parameters": {"sharing": "timeSlicing"}}}]
            return {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceClass",
                "metadata": {"name": name},
                "spec": spec,
            }

        gpu = f'device.driver == "{GPU_DRIVER}"'
        out = [cls("gpu", gpu, config=g.chance(0.3))]
        if g.chance(0.5):
            large = f'device.capacity["{GPU_DRIVER}"].memory.compareTo(quantity("40Gi")) >= 0'
            out.append(cls("gpu-large", f"{gpu} && {large}"))
        if g.chance(0.4):
            out.append(
                cls("gpu-v2", gpu, f'device.attributes["{GPU_DRIVER}"].driverVersion.isGreaterThan(semver("1.5.0"))')
            )
        if NIC_DRIVER in drivers:
            out.append(cls("nic", f'device.driver == "{NIC_DRIVER}"'))
        if FPGA_DRIVER in drivers:
            out.append(cls("fpga", f'device.driver == "{FPGA_DRIVER}"'))
        return out

    def _selector(self, cls: str) -> list[Obj]:
        g, rng = self.g, self.rng
        if not g.chance(0.4):
            return []
        if g.chance(0.05):
            # An attribute of another driver: a CEL runtime error (no such key) on every device of the class.
            other = NIC_DRIVER if cls.startswith("gpu") else GPU_DRIVER
            return [_cel(f'device.attributes["{other}"].model == "cx7"')]
        choices: tuple[str, ...]
        if cls.startswith("gpu"):
            a = f'device.attributes["{GPU_DRIVER}"]'
            choices = (
                f'{a}.model == "{rng.choice(tuple(GPU_MODELS))}"',
                f"{a}.index < {rng.randint(1, 3)}",
                f'{a}.partition == "{rng.choice(("whole", "half", "quarter"))}"',
                f'{a}.partition != "whole"',
                f'device.capacity["{GPU_DRIVER}"].memory.isGreaterThan(quantity("{rng.choice(("10Gi", "20Gi"))}"))',
                f"{a}.driverVersion.major() >= 2",
            )
        elif cls == "nic":
            a = f'device.attributes["{NIC_DRIVER}"]'
            choices = (f'{a}.model == "cx7"', f"{a}.rdma", f"{a}.numa == 0")
        elif cls == "fpga":
            a = f'device.attributes["{FPGA_DRIVER}"]'
            choices = (
                f'{a}.family == "agilex"',
                f'{a}.firmware.isLessThan(semver("1.0.0"))',
                f'"firmware" in {a} && {a}.firmware.major() == 1',
            )
        else:
            return []
        return [_cel(rng.choice(choices))]

    def _class(self, classes: list[str]) -> str:
        """GPU classes most often, a class that does not exist now and then."""
        g, rng = self.g, self.rng
        if g.chance(0.02):
            return "no-such-class"
        gpus = [c for c in classes if c.startswith("gpu")]
        return rng.choice(gpus) if g.chance(0.65) else rng.choice(classes)

    def _exact(self, cls: str, admin: bool) -> Obj:
        g, rng = self.g, self.rng
        req: Obj = {"deviceClassName": cls}
        if sel := self._selector(cls):
            req["selectors"] = sel
        if g.chance(0.07):
            req["allocationMode"] = "All"
        else:
            req["allocationMode"] = "ExactCount"
            req["count"] = rng.choice((1, 1, 1, 2, 3) if cls.startswith("gpu") else (1, 1, 1, 2))
        if g.chance(0.12):
            tol: Obj = {"key": DEVICE_TAINT, "operator": rng.choice(("Exists", "Equal"))}
            if tol["operator"] == "Equal":
                tol["value"] = rng.choice(("ecc", "thermal"))
            if g.chance(0.5):
                tol["effect"] = rng.choice(("NoSchedule", "NoExecute"))
            req["tolerations"] = [tol]
        if cls == "nic" and g.chance(0.4):
            req["capacity"] = {"requests": {"bandwidth": rng.choice(("10G", "25G", "50G"))}}
        if admin and g.chance(0.6):
            req["adminAccess"] = True
        return req

    def allocated(self, slices: list[Obj]) -> tuple[list[Obj], list[Obj], list[Obj]]:
        """Whole GPUs already in use: claims allocated and reserved for running pods, and a few claims
        allocated but reserved for no pod (their pod went away before it started), which pending pods
        may name: where such a pod cannot run on the claim's node, PostFilter deallocates the claim.

        Returns the running pods' claims, the pods (bound), and the unreserved claims.
        """
        g, rng = self.g, self.rng
        whole = [
            (s["spec"]["pool"]["name"], d["name"])
            for s in slices
            if s["spec"]["driver"] == GPU_DRIVER and not s["metadata"]["name"].endswith("-gpu-old")
            for d in s["spec"].get("devices") or ()
            if d["attributes"]["partition"]["string"] == "whole"
        ]
        picked = rng.sample(whole, min(len(whole), rng.randint(0, 5)))
        claims, pods, idle = [], [], []
        for i, (node, device) in enumerate(picked):
            reserved = i == 0 or g.chance(0.5)
            name = f"run-claim-{i:03d}" if reserved else f"idle-claim-{i:03d}"
            status: Obj = {
                "allocation": {
                    "devices": {"results": [{"request": "gpu", "driver": GPU_DRIVER, "pool": node, "device": device}]},
                    "nodeSelector": {
                        "nodeSelectorTerms": [
                            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                        ]
                    },
                    # As v1.36 writes every allocation. Without it, reserving the claim for another pod
                    # fails upstream: PreBind stamps the time into the allocation, which the API server
                    # refuses ("status.allocation: ... field is immutable").
                    "allocationTimestamp": "2026-01-01T00:00:00Z",
                }
            }
            claim: Obj = {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": name, "namespace": "default"},
                "spec": {
                    "devices": {
                        "requests": [
                            {
                                "name": "gpu",
                                "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1},
                            }
                        ]
                    }
                },
                "status": status,
            }
            if not reserved:
                idle.append(claim)
                continue
            pod_name = f"run-gpu-{i:03d}"
            status["reservedFor"] = [{"resource": "pods", "name": pod_name}]  # the harness fills in the uid
            spec = self.g.pod_spec()
            spec["nodeName"] = node
            spec["resourceClaims"] = [{"name": "gpu", "resourceClaimName": name}]
            claims.append(claim)
            pods.append(_pod(pod_name, "default", self.g.labels(), spec))
        return claims, pods, idle

    def template(self, name: str, namespace: str, classes: list[str]) -> Obj:
        claim = self.claim(name, namespace, classes)
        spec: Obj = {"spec": claim["spec"]}
        if self.g.chance(0.5):
            spec["metadata"] = {"labels": {"made-from": name}}
        return {**claim, "kind": "ResourceClaimTemplate", "spec": spec}

    def claim(self, name: str, namespace: str, classes: list[str]) -> Obj:
        g, rng = self.g, self.rng
        admin = namespace == ADMIN_NAMESPACE
        requests: list[Obj] = []
        first_class = ""
        for r in range(rng.choice((1, 1, 1, 2))):
            if g.chance(0.25):
                subs = [
                    {"name": f"alt-{i}", **self._exact(self._class(classes), False)} for i in range(rng.randint(2, 3))
                ]
                requests.append({"name": f"req-{r}", "firstAvailable": subs})
                first_class = first_class or subs[0]["deviceClassName"]
            else:
                cls = self._class(classes)
                requests.append({"name": f"req-{r}", "exactly": self._exact(cls, admin)})
                first_class = first_class or cls
        devices: Obj = {"requests": requests}
        if g.chance(0.25):
            # On an attribute of the first request's driver (now and then of another one).
            driver = NIC_DRIVER if first_class == "nic" else GPU_DRIVER
            if g.chance(0.1):
                driver = FPGA_DRIVER
            attribute = f"{driver}/{rng.choice(('model', 'numa', 'family', 'index'))}"
            constraint: Obj = {"distinctAttribute" if g.chance(0.3) else "matchAttribute": attribute}
            if len(requests) > 1 and g.chance(0.5):
                constraint["requests"] = [r["name"] for r in requests]
            devices["constraints"] = [constraint]
        if g.chance(0.15):
            config: Obj = {"opaque": {"driver": GPU_DRIVER, "parameters": {"mode": rng.choice(("mps", "exclusive"))}}}
            if g.chance(0.5):
                config["requests"] = [requests[0]["name"]]
            devices["config"] = [config]
        return {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"devices": devices},
        }


def dra(seed: int) -> Case:
    """Devices: per-node and network-attached slices, partitionable GPUs, shared NICs, claims shared by pods."""
    g = _Gen(seed)
    rng = g.rng
    g.zones = ZONES[: rng.randint(1, 3)]
    labels = _namespace_labels(g)
    labels[ADMIN_NAMESPACE] = {ADMIN_ACCESS_LABEL: "true"}
    case = Case("dra", seed, namespace_labels=labels)
    d = _DRAGen(g)
    nodes = g.nodes(rng.randint(4, 12), taint_p=0.05)
    slices: list[Obj] = []
    drivers = {GPU_DRIVER}
    for n in nodes:
        name = n["metadata"]["name"]
        if g.chance(0.75):
            slices.extend(d.gpu_slices(name))
        if g.chance(0.45):
            slices.extend(d.nic_slices(name))
            drivers.add(NIC_DRIVER)
    if g.chance(0.3):
        slices.extend(d.fpga_slices(g.zones, [n["metadata"]["name"] for n in nodes]))
        drivers.add(FPGA_DRIVER)
    classes = d.classes(drivers)
    class_names = [c["metadata"]["name"] for c in classes]
    # Which pods name claims, and how many: then about as many claims, so that most pods get fresh ones and
    # some share a claim another pod already uses.
    plans = []
    for i in range(rng.randint(10, 30)):
        ns = rng.choice(("default", "default", "default", "team-a", ADMIN_NAMESPACE))
        plans.append((f"pod-{i:03d}", ns, rng.choice((1, 1, 1, 2)) if g.chance(0.7) else 0))
    claims: dict[str, list[Obj]] = {}
    templates: dict[str, list[Obj]] = {}
    for ns in ("default", "team-a", ADMIN_NAMESPACE):
        wanted = sum(n for _, pod_ns, n in plans if pod_ns == ns)
        count = max(1, round(wanted * rng.uniform(0.6, 1.0))) if wanted else 0
        claims[ns] = [d.claim(f"claim-{i:03d}", ns, class_names) for i in range(count)]
        templates[ns] = [
            d.template(f"tmpl-{i:03d}", ns, class_names) for i in range(rng.randint(0, 2) if wanted else 0)
        ]
    in_use, running, idle = d.allocated(slices)
    if claims["default"]:
        claims["default"].extend(idle)
    idle_nodes = {c["metadata"]["name"]: c["status"]["allocation"]["devices"]["results"][0]["pool"] for c in idle}
    existing = []
    for i in range(rng.randint(0, 8)):
        existing.append(_pod(f"run-{i:03d}", "default", g.labels(), g.pod_spec()))
    g.place(existing, nodes)
    made = [*(c for cs in claims.values() for c in cs), *(t for ts in templates.values() for t in ts)]
    case.objects = [*classes, *slices, *in_use, *made, *nodes, *running, *existing]
    used: set[tuple[str, str]] = set()
    for name, ns, n_claims in plans:
        pod_labels = g.labels()
        spec = g.pod_spec()
        if g.chance(0.3):
            g.decorate(spec, pod_labels, affinity_p=0.3)
        entries: list[Obj] = []
        for _ in range(n_claims):
            if templates[ns] and g.chance(0.3):
                # The harness plays the resourceclaim controller: one claim per pod, made from the template.
                template = rng.choice(templates[ns])["metadata"]["name"]
                entries.append({"name": f"rc-{len(entries)}", "resourceClaimTemplateName": template})
                continue
            fresh = [c for c in claims[ns] if (ns, c["metadata"]["name"]) not in used]
            fresh_idle = [c for c in fresh if c["metadata"]["name"] in idle_nodes]
            if fresh_idle and g.chance(0.3):
                fresh = fresh_idle
            pick = rng.choice(fresh if fresh and g.chance(0.8) else claims[ns])["metadata"]["name"]
            if any(e.get("resourceClaimName") == pick for e in entries):
                continue
            used.add((ns, pick))
            entries.append({"name": f"rc-{len(entries)}", "resourceClaimName": pick})
            node_of = idle_nodes.get(pick)
            if node_of and "affinity" not in spec and g.chance(0.6):
                # Kept off the node of its claim's allocation: PostFilter deallocates the claim.
                term = {
                    "matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "NotIn", "values": [node_of]}]
                }
                spec["affinity"] = {
                    "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
                }
        if entries:
            spec["resourceClaims"] = entries
            if g.chance(0.5):
                spec["containers"][0]["resources"]["claims"] = [{"name": e["name"]} for e in entries]
        case.pending.append(_pod(name, ns, pod_labels, spec))
    return case


ALT_SCHEDULER = "alt-scheduler"
# Plugins of the default profile that the configs family moves, re-weights or turns off.
FILTER_PLUGINS = (
    "NodeUnschedulable",
    "NodeName",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "PodTopologySpread",
    "InterPodAffinity",
)
SCORE_WEIGHTS = {  # v1.36's default weights
    "TaintToleration": 3,
    "NodeAffinity": 2,
    "NodeResourcesFit": 1,
    "PodTopologySpread": 2,
    "InterPodAffinity": 2,
    "NodeResourcesBalancedAllocation": 1,
    "ImageLocality": 1,
}


def _shape(rng: random.Random) -> list[Obj]:
    """A RequestedToCapacityRatio shape: utilizations strictly rising from 0 to 100, scores 0-10."""
    inner = sorted(rng.sample(range(5, 96, 5), rng.randint(0, 2)))
    return [{"utilization": u, "score": rng.randint(0, 10)} for u in (0, *inner, 100)]


def _profile(rng: random.Random, name: str) -> Obj:
    """A random valid profile: scoring strategy, weights, order and disabled plugins, spreading defaults."""
    resources = [{"name": "cpu", "weight": rng.randint(1, 5)}, {"name": "memory", "weight": rng.randint(1, 5)}]
    if rng.random() < 0.3:
        resources.append({"name": EXTENDED, "weight": rng.randint(1, 5)})
    strategy: Obj = {"type": rng.choice(("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"))}
    strategy["resources"] = resources
    if strategy["type"] == "RequestedToCapacityRatio":
        strategy["requestedToCapacityRatio"] = {"shape": _shape(rng)}
    fit_args: Obj = {"scoringStrategy": strategy}
    if rng.random() < 0.15:
        fit_args[rng.choice(("ignoredResources", "ignoredResourceGroups"))] = [
            EXTENDED if rng.random() < 0.5 else EXTENDED.split("/")[0]
        ]
        if "ignoredResourceGroups" in fit_args:
            fit_args["ignoredResourceGroups"] = [EXTENDED.split("/")[0]]
    plugin_config: list[Obj] = [{"name": "NodeResourcesFit", "args": fit_args}]
    if rng.random() < 0.3:
        balanced = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
        plugin_config.append({"name": "NodeResourcesBalancedAllocation", "args": {"resources": balanced}})
    spread = rng.random()
    if spread < 0.45:  # no default constraints: where OpportunisticBatching applies
        plugin_config.append({"name": "PodTopologySpread", "args": {"defaultingType": "List"}})
    elif spread < 0.8:
        constraints = [
            {
                "maxSkew": rng.randint(1, 3),
                "topologyKey": key,
                "whenUnsatisfiable": rng.choice(("ScheduleAnyway", "DoNotSchedule")),
            }
            for key in rng.sample(("topology.kubernetes.io/zone", "kubernetes.io/hostname"), rng.randint(1, 2))
        ]
        spread_args: Obj = {"defaultingType": "List", "defaultConstraints": constraints}
        plugin_config.append({"name": "PodTopologySpread", "args": spread_args})
    if rng.random() < 0.3:
        affinity_args: Obj = {
            "hardPodAffinityWeight": rng.randint(0, 100),
            "ignorePreferredTermsOfExistingPods": rng.random() < 0.5,
        }
        plugin_config.append({"name": "InterPodAffinity", "args": affinity_args})
    if rng.random() < 0.15:
        preferred = [
            {"weight": rng.randint(1, 100), "preference": {"matchExpressions": [{"key": "tier", "operator": "Exists"}]}}
        ]
        plugin_config.append(
            {
                "name": "NodeAffinity",
                "args": {"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": preferred}},
            }
        )
    plugins: Obj = {}
    scored = [n for n in SCORE_WEIGHTS if rng.random() < 0.4]
    disabled = [n for n in SCORE_WEIGHTS if n not in scored and rng.random() < 0.15]
    if scored or disabled:
        rng.shuffle(scored)
        plugins["score"] = {"enabled": [{"name": n, "weight": rng.randint(1, 10)} for n in scored]}
        if disabled:
            plugins["score"]["disabled"] = [{"name": n} for n in disabled]
    if rng.random() < 0.5:
        moved = rng.sample(FILTER_PLUGINS, rng.randint(1, 3))
        plugins["filter"] = {"enabled": [{"name": n} for n in moved]}
        if rng.random() < 0.2:
            off = rng.choice([n for n in ("NodePorts", "TaintToleration") if n not in moved] or ["NodePorts"])
            plugins["filter"]["disabled"] = [{"name": off}]
    if rng.random() < 0.3:
        pre = ("NodeAffinity", "NodePorts", "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity")
        plugins["preFilter"] = {"enabled": [{"name": n} for n in rng.sample(pre, rng.randint(1, 3))]}
    multi = rng.random()
    if multi < 0.15:  # off at every point it has
        everywhere = ("ImageLocality", "TaintToleration", "NodePorts", "NodeResourcesFit", "InterPodAffinity")
        plugins["multiPoint"] = {"disabled": [{"name": rng.choice(everywhere)}]}
    elif multi < 0.3:  # a weight given through multiPoint, which a score entry for the plugin overrides
        plugins["multiPoint"] = {"enabled": [{"name": rng.choice(tuple(SCORE_WEIGHTS)), "weight": rng.randint(1, 10)}]}
    profile: Obj = {"schedulerName": name, "plugins": plugins, "pluginConfig": plugin_config}
    if rng.random() < 0.2:
        profile["percentageOfNodesToScore"] = rng.choice((0, 10, 50, 100))
    return profile


def _one_per_node(pod: Obj, port: int) -> Obj:
    """The pod signable (no pod affinity, no spreading of its own) and one to a node (a host port)."""
    out = copy.deepcopy(pod)
    spec = out["spec"]
    spec.pop("topologySpreadConstraints", None)
    affinity = spec.get("affinity") or {}
    for kind in ("podAffinity", "podAntiAffinity"):
        affinity.pop(kind, None)
    if not affinity:
        spec.pop("affinity", None)
    spec["containers"][0]["ports"] = [{"containerPort": port, "hostPort": port, "protocol": "TCP"}]
    return out


def configs(seed: int) -> Case:
    """The plain and preemption clusters (odd and even seeds) under random valid configurations.

    Scoring strategies with their resources and shapes, plugin weights, moved and disabled
    plugins, spreading defaults (List with and without constraints, or System),
    percentageOfNodesToScore, and often a second profile that some pods name. A few pending
    pods come in runs of identical copies, the pods OpportunisticBatching is for.
    """
    base = plain(seed) if seed % 2 else preemption(seed)
    rng = random.Random(f"configs-{seed}")
    config: Obj = {"profiles": [_profile(rng, "default-scheduler")]}
    two = rng.random() < 0.5
    if two:
        config["profiles"].append(_profile(rng, ALT_SCHEDULER))
    if rng.random() < 0.3:
        config["percentageOfNodesToScore"] = rng.choice((0, 5, 30, 100))
    pending: list[Obj] = []
    for i, pod in enumerate(base.pending):
        copies = rng.choice((1, 1, 1, 2, 3))
        scheduler = ALT_SCHEDULER if two and rng.random() < 0.4 else None
        if copies > 1 and rng.random() < 0.6:
            pod = _one_per_node(pod, 7000 + i)
        for k in range(copies):
            p = copy.deepcopy(pod)
            if k:
                p["metadata"]["name"] = f"{pod['metadata']['name']}-{k}"
            if scheduler:
                p["spec"]["schedulerName"] = scheduler
            pending.append(p)
    return Case(
        "configs", seed, objects=base.objects, pending=pending, namespace_labels=base.namespace_labels, config=config
    )


FAMILIES: dict[str, Callable[[int], Case]] = {
    "plain": plain,
    "preemption": preemption,
    "volumes": volumes,
    "large": large,
    "dra": dra,
    "configs": configs,
}


def generate(family: str, seed: int) -> Case:
    try:
        gen = FAMILIES[family]
    except KeyError:
        raise ValueError(f"unknown family {family!r} (known: {', '.join(FAMILIES)})") from None
    return gen(seed)
