"""SchedulingBasic end to end: `kubesched run` against the stand-in API server on loopback.

    python3 bench/cluster_e2e.py --nodes 1000 --init 1000 --measure 2000

The API server runs in its own process (so it does not share the scheduler's
GIL); nodes and pods are put into it directly, as scheduler_perf creates them
through a real apiserver, untimed for nodes and init pods. Timed: from creating
the measured pods until the last one is bound, as the informer sees it.
pods/s = measured pods / seconds. The same workload through `simulate`'s
embedded cluster is printed beside it, and the API round-trips are broken out:
binding POSTs (count, mean latency, share of the run) and all other requests.
Run by hand, not in CI.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
import tempfile
import threading
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "testing"))  # kubesched_testing: not in the wheel

from scheduler_perf import Nodes, Pods, Spec, node_objects, run_inprocess, run_setup  # noqa: E402

from kubesched.app import RunOptions, SchedulerApp  # noqa: E402
from kubesched.config.load import load_config  # noqa: E402
from kubesched_testing.apiserver import FakeAPIServer  # noqa: E402


def workload(nodes: int, init: int, measure: int) -> Spec:
    """SchedulingBasic at the given size, as scheduler_perf.py builds it: node-default nodes, pod-default
    init pods in namespace-1, measured pods in namespace-2; off upstream's size, so no threshold."""
    return Spec(
        f"SchedulingBasic/{nodes}Nodes/{init}Init/{measure}Pods",
        None,
        (Nodes(nodes),),
        (Pods(init, "pod-default", "namespace-1"),),
        Pods(measure, "pod-default", "namespace-2"),
        upstream_size=False,
    )


def _serve(conn: Connection) -> None:
    """The API server's process: answers HTTP, and commands from the bench on a pipe."""
    server = FakeAPIServer(bookmark_interval=5.0).start()
    conn.send(server.kubeconfig())
    while True:
        cmd, arg = conn.recv()
        if cmd == "create":
            for obj in arg:
                server.create(obj)
            conn.send(len(arg))
        elif cmd == "bound":
            with server._cond:
                conn.send(sum(1 for key, _, _ in server.bindings if key.startswith(arg + "/")))
        elif cmd == "stop":
            server.stop()
            conn.send(True)
            return


def _wait_bound(conn: Connection, namespace: str, want: int, timeout: float) -> float:
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        conn.send(("bound", namespace))
        if conn.recv() >= want:
            return time.perf_counter() - start
        time.sleep(0.01)
    raise SystemExit(f"timed out: fewer than {want} pods of {namespace} bound after {timeout}s")


def run(spec: Spec, qps: float) -> dict[str, Any]:
    """`kubesched run` against the stand-in API server: untimed nodes and init pods, then the measured pods timed."""
    (init,), measure = spec.setup, spec.measure.total()
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_serve, args=(child,), daemon=True)
    proc.start()
    kubeconfig = tempfile.NamedTemporaryFile("w", suffix=".kubeconfig", delete=False)
    kubeconfig.write(parent.recv())
    kubeconfig.close()
    parent.send(("create", node_objects(spec)))
    parent.recv()
    parent.send(("create", list(init.objects())))
    parent.recv()
    opts = RunOptions(kubeconfig=kubeconfig.name, secure_port=-1, leader_elect=False, qps=qps, burst=int(qps) or 1)
    app = SchedulerApp(load_config(None), opts)
    threading.Thread(target=app.run, daemon=True).start()
    _wait_bound(parent, init.namespace, init.total(), 600)
    requests_before, seconds_before = app.api.request_count, app.api.request_seconds
    binds_before, bind_seconds_before = app.client.binds, app.client.bind_seconds
    parent.send(("create", list(spec.measure.objects())))
    parent.recv()
    elapsed = _wait_bound(parent, spec.measure.namespace, measure, 600)
    binds = app.client.binds - binds_before
    bind_seconds = app.client.bind_seconds - bind_seconds_before
    other_requests = app.api.request_count - requests_before - binds
    other_seconds = app.api.request_seconds - seconds_before - bind_seconds
    app.stop.set()
    app.store.wake.set()
    parent.send(("stop", None))
    parent.recv()
    proc.join(5)
    Path(kubeconfig.name).unlink()
    return {
        "workload": f"{spec.name} (kubesched run, stand-in API server)",
        "measured": measure,
        "seconds": round(elapsed, 3),
        "pods_per_second": round(measure / elapsed, 1),
        "binding_posts": binds,
        "mean_binding_ms": round(1000 * bind_seconds / binds, 2) if binds else None,
        "binding_seconds_summed_over_threads": round(bind_seconds, 2),
        "other_requests": other_requests,
        "other_requests_seconds_summed": round(other_seconds, 2),
        "informer_events_applied": app.store.events_applied,
    }


def simulate(spec: Spec) -> dict[str, Any]:
    """The same workload on `simulate`'s embedded cluster, one scheduling cycle at a time (scheduler_perf.py's
    in-process mode)."""
    row = {"workload": f"{spec.name} (simulate, embedded cluster)", "measured": spec.measure.total()}
    return {**row, **run_inprocess(spec, run_setup(spec)), "threshold": spec.target()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--init", type=int, default=1000)
    ap.add_argument("--measure", type=int, default=2000)
    ap.add_argument("--qps", type=float, default=0, help="client-side QPS (0: unlimited)")
    args = ap.parse_args()
    spec = workload(args.nodes, args.init, args.measure)
    e2e = run(spec, args.qps)
    print(json.dumps(e2e))
    simulated = simulate(spec)
    print(json.dumps(simulated))
    return 0


if __name__ == "__main__":
    sys.exit(main())
