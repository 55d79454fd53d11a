"""Replay upstream scheduler_perf workloads on the embedded cluster and report throughput.

    python3 bench/scheduler_perf.py SchedulingBasic --nodes 500 1000 5000
    python3 bench/scheduler_perf.py all

Objects follow upstream's templates (../shared/reference/scheduler-perf/templates).
Setup ops (nodes, init pods) run untimed; then the measured pods are created and
scheduled while the timer runs. Churn ops fire on the virtual clock, which during the
measurement follows the wall clock (a churn every 200 ms of real time, as upstream);
when the scheduler has nothing to do, the clock jumps to the next timer instead of
sleeping. pods/s = measured pods bound / wall seconds. Run by hand, not in CI.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import resource
import string
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from kubesched.api.object import Obj
from kubesched.backend.embedded import EmbeddedCluster  # noqa: E402
from kubesched.clock import VirtualClock  # noqa: E402
from kubesched.config.load import load_config  # noqa: E402
from kubesched.schedule_one import Outcome, SchedulerEvent  # noqa: E402
from kubesched.simulator.run import embedded_scheduler  # noqa: E402


def _suffix(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(5))


def node_default(rng: random.Random) -> dict[str, Any]:
    """templates/node-default.yaml: generateName scheduler-perf-, 4 CPU, 32Gi, 110 pods, Ready."""
    name = "scheduler-perf-" + _suffix(rng)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "spec": {},
        "status": {
            "capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"},
            "conditions": [{"status": "True", "type": "Ready"}],
            "phase": "Running",
        },
    }


def pod_default(namespace: str, i: int) -> dict[str, Any]:
    """templates/pod-default.yaml: one pause container, 100m CPU and 500Mi, containerPort 80."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"pod-{i:06d}", "namespace": namespace, "uid": f"{namespace}-{i}"},
        "spec": {
            "containers": [
                {
                    "image": "registry.k8s.io/pause:3.10.1",
                    "name": "pause",
                    "ports": [{"containerPort": 80}],
                    "resources": {
                        "limits": {"cpu": "100m", "memory": "500Mi"},
                        "requests": {"cpu": "100m", "memory": "500Mi"},
                    },
                }
            ]
        },
    }


def pod_low_priority(namespace: str, i: int) -> Obj:
    """templates/pod-low-priority.yaml: 900m CPU, 500Mi (four fill a node)."""
    p = pod_default(namespace, i)
    p["metadata"]["name"] = f"pod-low-{i}"
    p["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "900m", "memory": "500Mi"}}
    return p


def pod_high_priority(namespace: str, i: int, cpu: str = "3000m") -> Obj:
    """templates/pod-high-priority.yaml (3 CPU) and pod-high-priority-large-cpu.yaml (9 CPU): priority 10."""
    p = pod_default(namespace, i)
    p["metadata"]["name"] = f"pod-high-{i}"
    p["spec"]["priority"] = 10
    p["spec"]["containers"][0]["resources"] = {"requests": {"cpu": cpu, "memory": "500Mi"}}
    return p


def light_pod(namespace: str, i: int, gated: bool = False) -> Obj:
    """templates/light-pod.yaml and gated-pod.yaml: no requests; the gated one waits on test.k8s.io/hold."""
    spec: Obj = {"containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10.2"}]}
    if gated:
        spec["schedulingGates"] = [{"name": "test.k8s.io/hold"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"light-{i}", "namespace": namespace}, "spec": spec}


def daemonset_pod(namespace: str, i: int) -> Obj:
    """templates/daemonset-pod.yaml: pinned to scheduler-perf-node by matchFields metadata.name, as the
    DaemonSet controller pins its pods."""
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["scheduler-perf-node"]}]}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"daemonset-{i}", "namespace": namespace},
        "spec": {
            "affinity": {
                "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
            },
            "containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10.2"}],
        },
    }


def pod_with_anti_affinity(namespace: str, i: int) -> Obj:
    """templates/pod-with-pod-anti-affinity.yaml: color=green, one per host among green pods of sched-0/1."""
    pod = pod_default(namespace, i)
    pod["metadata"]["labels"] = {"color": "green"}
    term = {
        "labelSelector": {"matchLabels": {"color": "green"}},
        "topologyKey": "kubernetes.io/hostname",
        "namespaces": ["sched-1", "sched-0"],
    }
    pod["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    return pod


def pod_with_topology_spreading(namespace: str, i: int) -> Obj:
    """templates/pod-with-topology-spreading.yaml: color=blue, maxSkew 5 over zones, DoNotSchedule."""
    pod = pod_default(namespace, i)
    pod["metadata"]["labels"] = {"color": "blue"}
    pod["spec"]["topologySpreadConstraints"] = [
        {
            "maxSkew": 5,
            "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"color": "blue"}},
        }
    ]
    return pod


def _zoned(nodes: Callable[[], list[Obj]], zones: Sequence[str]) -> Callable[[], list[Obj]]:
    """labelNodePrepareStrategy: each node gets one of the zones in turn."""

    def make() -> list[Obj]:
        out = nodes()
        for i, n in enumerate(out):
            n["metadata"]["labels"]["topology.kubernetes.io/zone"] = zones[i % len(zones)]
        return out

    return make


def pod_with_secret(namespace: str, i: int) -> Obj:
    """templates/pod-with-secret-volume.yaml: pod-default plus a secret volume (no plugin reads it)."""
    pod = pod_default(namespace, i)
    pod["spec"]["volumes"] = [{"name": "secret", "secret": {"secretName": "secret"}}]
    return pod


def pods_with_pvs(namespace: str, n: int, csi: bool) -> list[Obj]:
    """createPods with PV/PVC templates: per pod a PV (pv-aws.yaml or pv-csi.yaml) and a claim pre-bound to it."""
    out: list[Obj] = []
    for i in range(n):
        pv_name = f"{namespace}-vol-{i}"
        source = (
            {"csi": {"driver": "ebs.csi.aws.com", "volumeHandle": pv_name}}
            if csi
            else {"awsElasticBlockStore": {"volumeID": pv_name}}
        )
        out.append(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolume",
                "metadata": {"name": pv_name},
                "spec": {
                    "accessModes": ["ReadOnlyMany"],
                    "capacity": {"storage": "1Gi"},
                    "persistentVolumeReclaimPolicy": "Retain",
                    "claimRef": {"namespace": namespace, "name": f"pvc-{i}"},
                    **source,
                },
                "status": {"phase": "Bound"},
            }
        )
        out.append(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {
                    "name": f"pvc-{i}",
                    "namespace": namespace,
                    "annotations": {"pv.kubernetes.io/bind-completed": "true"},
                },
                "spec": {
                    "accessModes": ["ReadOnlyMany"],
                    "resources": {"requests": {"storage": "1Gi"}},
                    "volumeName": pv_name,
                },
                "status": {"phase": "Bound"},
            }
        )
        pod = pod_default(namespace, i)
        pod["spec"]["volumes"] = [{"name": "vol", "persistentVolumeClaim": {"claimName": f"pvc-{i}"}}]
        out.append(pod)
    return out


def _csi_nodes(n: int, migrated: bool = False) -> Callable[[], list[Obj]]:
    """nodeAllocatableStrategy: 39 attachable EBS volumes in node allocatable and in the node's CSINode."""

    def make() -> list[Obj]:
        rng = random.Random(1)
        out = []
        for _ in range(n):
            node = node_default(rng)
            node["status"]["capacity"]["attachable-volumes-csi-ebs.csi.aws.com"] = "39"
            name = node["metadata"]["name"]
            meta: Obj = {"name": name}
            if migrated:
                meta["annotations"] = {"storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/aws-ebs"}
            csinode = {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "CSINode",
                "metadata": meta,
                "spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": name, "allocatable": {"count": 39}}]},
            }
            out += [csinode, node]
        return out

    return make


def node_with_name() -> Obj:
    """templates/node-with-name.yaml: one node, 90000 pods, 4 CPU."""
    n = node_default(random.Random(0))
    n["metadata"] = {"name": "scheduler-perf-node", "labels": {"kubernetes.io/hostname": "scheduler-perf-node"}}
    n["status"]["capacity"]["pods"] = "90000"
    return n


def churn_node(i: int) -> Obj:
    """templates/churn/node-default.yaml: a node that takes no pods."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": f"node-churn-{i}"},
        "status": {"capacity": {"pods": "0"}},
    }


def churn_service(i: int) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": f"service-churn-{i}", "namespace": "namespace-1"},
        "spec": {"selector": {"app": "foo"}, "ports": [{"protocol": "TCP", "port": 8080}]},
    }


@dataclass
class Workload:
    name: str
    nodes: Callable[[], list[Obj]]
    init_pods: list[Obj]
    measure_pods: list[Obj]
    threshold: int | None
    churn_interval: float = 0.0  # seconds between churn rounds; 0: none
    churn: Callable[[EmbeddedCluster, int], None] | None = None
    delete_during: list[tuple[str, str]] = field(default_factory=list)  # pods deleted at delete_rate per second
    delete_rate: float = 0.0


class _Counter:
    def __init__(self, namespace: str) -> None:
        self.namespace = namespace
        self.bound = 0
        self.attempts = 0

    def on_event(self, event: SchedulerEvent) -> None:
        if event.type == "Bound" and event.pod.startswith(self.namespace + "/"):
            self.bound += 1

    def on_outcome(self, outcome: Outcome) -> None:
        self.attempts += 1


def run_workload(w: Workload, seed: int = 1) -> dict[str, Any]:
    clock = VirtualClock()
    cluster = EmbeddedCluster(clock)
    measured = [o for o in w.measure_pods if o["kind"] == "Pod"]
    measure_ns = measured[0]["metadata"]["namespace"]
    counter = _Counter(measure_ns)
    sched = embedded_scheduler(load_config(None), cluster, clock, seed=seed, record=False, observer=counter)
    for n in w.nodes():
        cluster.create(n)
    for p in w.init_pods:
        cluster.create(p)
    sched.run()
    base = clock.now
    if w.churn is not None:
        rounds = itertools.count()

        def churn() -> None:
            w.churn(cluster, next(rounds))  # type: ignore[misc]
            clock.call_later(w.churn_interval, churn)

        clock.call_at(base, churn)
    if w.delete_rate:
        for i, (ns, name) in enumerate(w.delete_during):
            clock.call_at(base + i / w.delete_rate, lambda ns=ns, name=name: cluster.delete("Pod", ns, name))
    for p in w.measure_pods:
        cluster.create(p)
    want = len(measured)
    start = time.perf_counter()
    while counter.bound < want:
        clock.advance_to(base + time.perf_counter() - start)
        clock.run_due()
        qpi = sched.queue.pop()
        if qpi is not None:
            sched.schedule_one(qpi)
            clock.run_due()
            continue
        nxt = clock.next_timer()
        if nxt is None and not sched.queue.has_active_or_backoff():
            break  # stuck: nothing left that could schedule the rest
        clock.advance_to(nxt if nxt is not None else clock.now + 1.0)
    elapsed = time.perf_counter() - start
    return {
        "workload": w.name,
        "bound": counter.bound,
        "measured": want,
        "seconds": round(elapsed, 3),
        "pods_per_second": round(counter.bound / elapsed, 1) if elapsed else 0.0,
        "threshold": w.threshold,
        "attempts": counter.attempts,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def _nodes(n: int) -> Callable[[], list[Obj]]:
    """n default nodes; a generated name already taken is drawn again, as the API server retries generateName."""
    rng = random.Random(1)

    def make() -> list[Obj]:
        out: dict[str, Obj] = {}
        while len(out) < n:
            node = node_default(rng)
            out.setdefault(node["metadata"]["name"], node)
        return list(out.values())

    return make


def _create_high_large_cpu(cluster: EmbeddedCluster, i: int) -> None:
    cluster.create(pod_high_priority("namespace-2", i, cpu="9"))


def _create_high(cluster: EmbeddedCluster, i: int) -> None:
    cluster.create(pod_high_priority("namespace-2", i))


def _recreate_mixed(cluster: EmbeddedCluster, i: int) -> None:
    """churn mode recreate: create a node, a 9-CPU high-priority pod and a service; delete last round's."""
    if i > 0:
        cluster.delete("Node", "", f"node-churn-{i - 1}")
        cluster.delete("Pod", "namespace-1", f"pod-high-{i - 1}")
        cluster.delete("Service", "namespace-1", f"service-churn-{i - 1}")
    cluster.create(churn_node(i))
    cluster.create(pod_high_priority("namespace-1", i, cpu="9"))
    cluster.create(churn_service(i))


def workloads(nodes: int | None) -> dict[str, Callable[[], Workload]]:
    return {
        "SchedulingBasic": lambda: Workload(
            f"SchedulingBasic/{nodes or 5000}Nodes_10000Pods",
            _nodes(nodes or 5000),
            [pod_default("namespace-1", i) for i in range(1000)],
            [pod_default("namespace-2", i) for i in range(10000)],
            680 if (nodes or 5000) == 5000 else None,
        ),
        "SchedulingPodAntiAffinity": lambda: Workload(
            "SchedulingPodAntiAffinity/5000Nodes_2000Pods",
            _nodes(5000),
            [pod_with_anti_affinity("sched-0", i) for i in range(1000)],
            [pod_with_anti_affinity("sched-1", i) for i in range(2000)],
            180,
        ),
        "TopologySpreading": lambda: Workload(
            "TopologySpreading/5000Nodes_5000Pods",
            _zoned(_nodes(5000), ("moon-1", "moon-2", "moon-3")),
            [pod_default("namespace-1", i) for i in range(5000)],
            [pod_with_topology_spreading("namespace-2", i) for i in range(5000)],
            460,
        ),
        "Unschedulable": lambda: Workload(
            "Unschedulable/5kNodes/100Init/10kPods",
            _nodes(5000),
            [pod_default("namespace-1", i) for i in range(100)],
            [pod_default("namespace-3", i) for i in range(10000)],
            590,
            0.2,
            _create_high_large_cpu,
        ),
        "PreemptionBasic": lambda: Workload(
            "PreemptionBasic/500Nodes",
            _nodes(500),
            [pod_low_priority("namespace-1", i) for i in range(2000)],
            [pod_high_priority("namespace-2", i) for i in range(500)],
            18,
        ),
        "PreemptionAsync": lambda: Workload(
            "PreemptionAsync/5000Nodes",
            _nodes(5000),
            [pod_low_priority("namespace-1", i) for i in range(20000)],
            [pod_default("namespace-3", i) for i in range(5000)],
            570,
            0.2,
            _create_high,
        ),
        "SchedulingWithMixedChurn": lambda: Workload(
            "SchedulingWithMixedChurn/5000Nodes_10000Pods",
            _nodes(5000),
            [],
            [pod_default("namespace-2", i) for i in range(10000)],
            710,
            1.0,
            _recreate_mixed,
        ),
        "SchedulingSecrets": lambda: Workload(
            "SchedulingSecrets/5000Nodes_10000Pods",
            _nodes(5000),
            [pod_with_secret("namespace-1", i) for i in range(1000)],
            [pod_with_secret("namespace-2", i) for i in range(10000)],
            790,
        ),
        "SchedulingInTreePVs": lambda: Workload(
            "SchedulingInTreePVs/5000Nodes_2000Pods",
            _nodes(5000),
            pods_with_pvs("namespace-1", 1000, csi=False),
            pods_with_pvs("namespace-2", 2000, csi=False),
            290,
        ),
        "SchedulingMigratedInTreePVs": lambda: Workload(
            "SchedulingMigratedInTreePVs/5000Nodes_5000Pods",
            _csi_nodes(5000, migrated=True),
            pods_with_pvs("namespace-1", 5000, csi=False),
            pods_with_pvs("namespace-2", 5000, csi=False),
            100,
        ),
        "SchedulingCSIPVs": lambda: Workload(
            "SchedulingCSIPVs/5000Nodes_5000Pods",
            _csi_nodes(5000),
            pods_with_pvs("namespace-1", 5000, csi=True),
            pods_with_pvs("namespace-2", 5000, csi=True),
            100,
        ),
        "SchedulingDaemonset": lambda: Workload(
            f"SchedulingDaemonset/{nodes or 15000}Nodes",
            lambda: [node_with_name(), *_nodes(nodes or 15000)()],
            [],
            [daemonset_pod("namespace-2", i) for i in range(2 * (nodes or 15000))],
            1100,
        ),
        "SchedulingWhileGated": lambda: Workload(
            "SchedulingWhileGated/1Node_10000GatedPods",
            lambda: [node_with_name()],
            [light_pod("namespace-1", i, gated=True) for i in range(10000)]
            + [light_pod("namespace-3", i) for i in range(20000)],
            [light_pod("namespace-5", i) for i in range(20000)],
            910,
            delete_during=[("namespace-3", f"light-{i}") for i in range(20000)],
            delete_rate=50.0,
        ),
    }


SIZED = ("SchedulingBasic", "SchedulingDaemonset")  # workloads whose node count --nodes sets


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    names = list(workloads(None))
    ap.add_argument("workload", choices=[*names, "all"])
    ap.add_argument(
        "--nodes",
        type=int,
        nargs="+",
        help="node counts for SchedulingBasic and SchedulingDaemonset (upstream's by default)",
    )
    args = ap.parse_args()
    rows = []
    for name in names if args.workload == "all" else [args.workload]:
        for n in (args.nodes or [None]) if name in SIZED else [None]:
            r = run_workload(workloads(n)[name]())
            rows.append(r)
            print(json.dumps(r), flush=True)
    print()
    print("| workload | pods/s | upstream threshold | measured pods bound | seconds | peak RSS MB |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['workload']} | {r['pods_per_second']} | {r['threshold'] or '-'} | "
            f"{r['bound']}/{r['measured']} | {r['seconds']} | {r['peak_rss_mb']} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
