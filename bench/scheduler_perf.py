"""Replay upstream scheduler_perf workloads on the embedded cluster and report throughput.

    python3 bench/scheduler_perf.py SchedulingBasic --nodes 500 1000 5000

Objects come from upstream's templates (../shared/reference/scheduler-perf/templates,
copied shapes: node-default and pod-default). Setup ops (nodes, init pods) are not
measured; the measured op's pods are scheduled with `--record none` semantics and
timed one by one. Run by hand, not in CI.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import string
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from kubesched.backend.embedded import EmbeddedCluster  # noqa: E402
from kubesched.config.load import load_config  # noqa: E402
from kubesched.event_handlers import EventHandlers  # noqa: E402
from kubesched.scheduler import Outcome, Scheduler, SchedulerEvent  # noqa: E402
from kubesched.simulator.run import _Bridge  # noqa: E402

# Upstream thresholds (pods/s) from ../shared/reference/scheduler-perf/workloads.yaml.
THRESHOLDS = {("SchedulingBasic", 5000): 680}


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


class _Timer:
    def __init__(self) -> None:
        self.scheduled = 0
        self.failed = 0

    def on_event(self, event: SchedulerEvent) -> None:
        pass

    def on_outcome(self, outcome: Outcome) -> None:
        if outcome.result == "Scheduled":
            self.scheduled += 1
        else:
            self.failed += 1


def run_workload(
    make_nodes: Callable[[random.Random], list[dict[str, Any]]],
    init_pods: list[dict[str, Any]],
    measure_pods: list[dict[str, Any]],
    *,
    seed: int = 1,
) -> dict[str, Any]:
    rng = random.Random(seed)
    cluster = EmbeddedCluster()
    timer = _Timer()
    sched = Scheduler(load_config(None), lister=cluster, client=cluster, seed=seed, record=False, observer=timer)
    cluster.subscribe(_Bridge(EventHandlers(sched)))
    for n in make_nodes(rng):
        cluster.create(n)
    for p in init_pods:
        cluster.create(p)
    sched.run()
    for p in measure_pods:
        cluster.create(p)
    timer.scheduled = timer.failed = 0
    durations: list[float] = []
    start = time.perf_counter()
    while True:
        t0 = time.perf_counter()
        qpi = sched.queue.pop()
        if qpi is None:
            break
        sched.schedule_one(qpi)
        sched.clock.run_due()  # the binding cycle
        durations.append(time.perf_counter() - t0)
    elapsed = time.perf_counter() - start
    durations.sort()
    return {
        "scheduled": timer.scheduled,
        "failed": timer.failed,
        "seconds": round(elapsed, 3),
        "pods_per_second": round(timer.scheduled / elapsed, 1) if elapsed else 0.0,
        "p50_ms": round(durations[len(durations) // 2] * 1000, 3) if durations else 0.0,
        "p99_ms": round(durations[int(len(durations) * 0.99)] * 1000, 3) if durations else 0.0,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def scheduling_basic(nodes: int, init: int, measure: int) -> dict[str, Any]:
    return run_workload(
        lambda rng: [node_default(rng) for _ in range(nodes)],
        [pod_default("namespace-1", i) for i in range(init)],
        [pod_default("namespace-2", i) for i in range(measure)],
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("workload", choices=["SchedulingBasic"])
    ap.add_argument("--nodes", type=int, nargs="+", default=[500, 1000, 5000])
    ap.add_argument("--init-pods", type=int, default=1000)
    ap.add_argument("--measure-pods", type=int, default=10000)
    args = ap.parse_args()
    rows = []
    for n in args.nodes:
        r = scheduling_basic(n, args.init_pods, args.measure_pods)
        r.update(workload=args.workload, nodes=n, threshold=THRESHOLDS.get((args.workload, n)))
        rows.append(r)
        print(json.dumps(r), flush=True)
    print()
    print("| workload | nodes | pods/s | upstream threshold | p50 ms | p99 ms | peak RSS MB |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['workload']} | {r['nodes']} | {r['pods_per_second']} | {r['threshold'] or '-'} | "
            f"{r['p50_ms']} | {r['p99_ms']} | {r['peak_rss_mb']} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
