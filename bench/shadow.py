"""How far behind `kubesched shadow` runs on a generated cluster taking pods at a given rate, in-process.

    python3 bench/shadow.py [--nodes 5000] [--rate 100] [--seconds 10] [--settle 0.25] [--out-of-order]

The shadow is built as the command builds it, but its informers never start: a
feeder thread plays the watch instead, putting events into the shadow's store as
the reflector threads would. It adds --nodes nodes (four shapes, three zones), then
for --seconds creates --rate pods a second (a third of them in a spread workload)
and binds each to a node at once, as a cluster scheduler that keeps up would (with
--out-of-order, one binding in four finishes just after the next pod's, so that pod's
decision must wait for it); the shadow decides each binding on its own thread. Printed: decisions observed, the lag
(watch event to the shadow's answer, any settle wait included) p50/p99/max, the time
one decision takes p50/p99, the backlog left when the feeder stopped, the process's
CPU seconds over the run and the load average at its end. Lag under a second with no
backlog means the shadow keeps up. Run it under `taskset -c 0` for one core.

The API server's side (JSON decoding of watch events, TLS) is not in the numbers:
the events arrive as dicts.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "testing"))  # kubesched_testing: not in the wheel

from kubesched.config.load import load_config  # noqa: E402
from kubesched.shadow.app import Shadow, ShadowOptions  # noqa: E402
from kubesched.shadow.tally import Decision  # noqa: E402
from kubesched_testing.controlplane import kubeconfig_text  # noqa: E402

SHAPES = (("4", "16Gi"), ("8", "32Gi"), ("16", "64Gi"), ("32", "128Gi"))


def node(i: int) -> dict[str, Any]:
    cpu, memory = SHAPES[i % len(SHAPES)]
    alloc = {"cpu": cpu, "memory": memory, "pods": "110"}
    name = f"node-{i}"
    labels = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": f"zone-{i % 3}"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "uid": f"n-{i}", "labels": labels},
        "status": {"allocatable": alloc, "capacity": alloc},
    }


def pod(i: int) -> dict[str, Any]:
    app = "web" if i % 3 == 0 else f"batch-{i % 7}"
    spec: dict[str, Any] = {
        "schedulerName": "default-scheduler",
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}],
    }
    if app == "web":
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": {"app": "web"}},
            }
        ]
    meta = {"name": f"p-{i}", "namespace": "default", "uid": f"p-{i}", "labels": {"app": app}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": {"phase": "Pending"}}


def _kubeconfig(folder: str) -> str:
    """Credentials for a server that is never reached: the benchmark feeds the watch itself."""
    path = Path(folder) / "kubeconfig"
    path.write_text(kubeconfig_text("https://127.0.0.1:1", "t"))
    return str(path)


def run(nodes: int, rate: float, seconds: float, settle: float, out_of_order: bool = False) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        shadow = Shadow(load_config(None), ShadowOptions(kubeconfig=_kubeconfig(folder), settle=settle), io.StringIO())
    store = shadow.store
    for r in store.reflectors:
        r.synced.set()
    for i in range(nodes):
        store._enqueue("Node", "ADDED", None, node(i))
    store.drain()
    decisions: list[Decision] = []
    shadow.listeners.append(decisions.append)
    follower = threading.Thread(target=shadow.follow, daemon=True)
    follower.start()
    backlog = [0]

    def feed() -> None:
        start = time.monotonic()
        n = int(rate * seconds)
        late: list[tuple[dict[str, Any], dict[str, Any]]] = []
        for i in range(n):
            due = start + i / rate
            time.sleep(max(0.0, due - time.monotonic()))
            created = pod(i)
            bound = {**created, "spec": {**created["spec"], "nodeName": f"node-{(i * 7919) % nodes}"}}
            store._enqueue("Pod", "ADDED", None, created)
            if out_of_order and i % 4 == 0 and i + 1 < n:
                late.append((created, bound))  # finishes after the next pod's binding
                continue
            store._enqueue("Pod", "MODIFIED", created, bound)
            for first, first_bound in late:
                store._enqueue("Pod", "MODIFIED", first, first_bound)
            late.clear()
        backlog[0] = store.arrivals.qsize() + len(store.waiting)

    feeder = threading.Thread(target=feed, daemon=True)
    cpu_began = time.process_time()
    began = time.monotonic()
    feeder.start()
    feeder.join()
    fed_for = time.monotonic() - began
    deadline = time.monotonic() + 120
    while len(decisions) < int(rate * seconds) and time.monotonic() < deadline:
        time.sleep(0.05)
    shadow.stop.set()
    store.wake.set()
    follower.join(30)
    cpu = time.process_time() - cpu_began
    lags = sorted(d.lag for d in decisions)
    took = sorted(d.verdict.seconds for d in decisions)

    def pct(xs: list[float], q: float) -> float:
        return round(xs[min(len(xs) - 1, int(q * len(xs)))] * 1000, 1) if xs else 0.0

    return {
        "nodes": nodes,
        "rate": rate,
        "out_of_order": out_of_order,
        "fed_seconds": round(fed_for, 2),
        "observed": len(decisions),
        "lag_ms": {"p50": pct(lags, 0.5), "p99": pct(lags, 0.99), "max": pct(lags, 1.0)},
        "decide_ms": {"p50": pct(took, 0.5), "p99": pct(took, 0.99), "mean": round(statistics.fmean(took) * 1000, 1)}
        if took
        else {},
        "backlog_when_feeding_stopped": backlog[0],
        "cpu_seconds": round(cpu, 2),  # the whole process (feeder and shadow) from the first pod to the last answer
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="shadow.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--nodes", type=int, default=5000)
    p.add_argument("--rate", type=float, default=100.0, help="pods created and bound a second")
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--settle", type=float, default=0.25)
    p.add_argument(
        "--out-of-order", action="store_true", help="one binding in four finishes after the next pod's binding"
    )
    args = p.parse_args(argv)
    result = run(args.nodes, args.rate, args.seconds, args.settle, args.out_of_order)
    yaml.safe_dump(result, sys.stdout, sort_keys=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
