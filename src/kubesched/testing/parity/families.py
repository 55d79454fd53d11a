"""Seeded random clusters, one generator per family of scheduling features.

A Case holds the objects that exist before the scheduler starts (bound pods
included), the pods to schedule one at a time, and the scheduler configuration.
Every value is drawn from a `random.Random(seed)`, so a (family, seed) pair names
the same cluster on every machine.
"""

from __future__ import annotations

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


FAMILIES: dict[str, Callable[[int], Case]] = {
    "plain": plain,
    "preemption": preemption,
    "volumes": volumes,
    "large": large,
}


def generate(family: str, seed: int) -> Case:
    try:
        gen = FAMILIES[family]
    except KeyError:
        raise ValueError(f"unknown family {family!r} (known: {', '.join(FAMILIES)})") from None
    return gen(seed)
