"""How far behind `kubesched shadow` runs on a generated cluster taking pods at a given rate, in-process.

    python3 bench/shadow.py [--nodes 5000] [--rate 100] [--seconds 10] [--settle 0.25]

The shadow is built as the command builds it, but its informers never start: a
feeder thread plays the watch instead, putting events into the shadow's store as
the reflector threads would. It adds --nodes nodes (four shapes, three zones), then
for --seconds creates --rate pods a second (a third of them in a spread workload)
and binds each to a node at once, as a cluster scheduler that keeps up would; the
shadow decides each binding on its own thread. Printed: decisions observed, the lag
(watch event to the shadow's answer, settle included) p50/p99/max, the time one
decision takes p50/p99, and the backlog left when the feeder stopped. Lag under a
second with no backlog means the shadow keeps up.

The API server's side (JSON decoding of watch events, TLS) is not in the numbers:
the events arrive as dicts.
"""

from __future__ import annotations

import argparse
import io
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


def run(nodes: int, rate: float, seconds: float, settle: float) -> dict[str, Any]:
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
        for i in range(n):
            due = start + i / rate
            time.sleep(max(0.0, due - time.monotonic()))
            created = pod(i)
            bound = {**created, "spec": {**created["spec"], "nodeName": f"node-{(i * 7919) % nodes}"}}
            store._enqueue("Pod", "ADDED", None, created)
            store._enqueue("Pod", "MODIFIED", created, bound)
        backlog[0] = store.arrivals.qsize() + len(store.waiting)

    feeder = threading.Thread(target=feed, daemon=True)
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
    lags = sorted(d.lag for d in decisions)
    took = sorted(d.verdict.seconds for d in decisions)

    def pct(xs: list[float], q: float) -> float:
        return round(xs[min(len(xs) - 1, int(q * len(xs)))] * 1000, 1) if xs else 0.0

    return {
        "nodes": nodes,
        "rate": rate,
        "fed_seconds": round(fed_for, 2),
        "observed": len(decisions),
        "lag_ms": {"p50": pct(lags, 0.5), "p99": pct(lags, 0.99), "max": pct(lags, 1.0)},
        "decide_ms": {"p50": pct(took, 0.5), "p99": pct(took, 0.99), "mean": round(statistics.fmean(took) * 1000, 1)}
        if took
        else {},
        "backlog_when_feeding_stopped": backlog[0],
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="shadow.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--nodes", type=int, default=5000)
    p.add_argument("--rate", type=float, default=100.0, help="pods created and bound a second")
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--settle", type=float, default=0.25)
    args = p.parse_args(argv)
    result = run(args.nodes, args.rate, args.seconds, args.settle)
    yaml.safe_dump(result, sys.stdout, sort_keys=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
