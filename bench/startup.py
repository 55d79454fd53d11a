"""Where `kubesched run` spends the time between its start and its first binding, on a real v1.36 API server.

    export KUBESCHED_K8S_ASSETS=$(../shared/k8s/install.sh)
    python3 bench/startup.py [--runs 3] [--nodes 12] [--pods 20] [--secure-port] [--upstream]

Each run first compiles kubesched's bytecode, as `pip install` does (the source tree
is otherwise compiled again at every start where PYTHONDONTWRITEBYTECODE is set),
creates pending pods on a cluster with no scheduler, then starts `kubesched run`
through its entry point with a small wrapper that times its phases as their modules
are imported (interpreter start, imports, config load, client and credential setup,
serving, informer lists, cache sync, first scheduling cycle, first binding POST),
reads the process's CPU time at the first binding and polls the API for the first
bound pod, without changing the code it runs; then it stops it. --upstream times
kube-scheduler's first binding (through the API, polled the same way) on the same
cluster. Wall times, on whatever load the machine has. To time another tree, point
PYTHONPATH at its src.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from kubesched.backend.kube.api import KubeAPI, load_configuration

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "testing"))  # kubesched_testing: not in the wheel
from kubesched_testing.controlplane import (  # noqa: E402
    TOKEN,
    ControlPlane,
    ControlPlaneError,
    control_plane,
    reset_cluster,
)
from kubesched_testing.installed import compile_bytecode  # noqa: E402

PODS = "/api/v1/namespaces/default/pods"

# Runs in the child: records when each phase begins and ends, then runs the real command line.
WRAPPER = r"""
import importlib.abc, json, sys, threading, time
T = {"main": time.time()}
def mark(name):
    T.setdefault(name, time.time())
LISTS = {}
def wrap(obj, attr, before, after=None, each=None):
    orig = getattr(obj, attr)
    def wrapped(*a, **k):
        mark(before)
        t0 = time.time()
        try:
            return orig(*a, **k)
        finally:
            if after:
                mark(after)
            if each:
                LISTS[each(a)] = (t0, time.time())
    setattr(obj, attr, wrapped)
# module -> (attribute path, mark before, mark after, per-call key): wrapped as the module is imported, so the
# command imports what it imports when it would.
WRAPS = {
    "kubesched.cli": [("load_config", "config_start", "config_end", None)],
    "kubesched.app": [
        ("SchedulerApp.__init__", "app_init_start", "app_init_end", None),
        ("load_configuration", "credentials_start", "credentials_end", None),
    ],
    "kubesched.serving": [("Endpoints.serve", "serve_start", "serve_end", None)],
    "kubesched.backend.kube.cluster": [
        ("ClusterStore.start", "informers_start", None, None),
        ("ClusterStore.wait_for_cache_sync", "sync_wait_start", "synced", None),
        ("ClusterStore.drain", "first_drain_start", "first_drain_end", None),
        ("KubeClient._bind_until_known", "bind_post_start", "bind_post_end", None),
    ],
    "kubesched.backend.kube.reflector": [("Reflector._list", "first_list_start", None, lambda a: a[0].resource.plural)],
    "kubesched.scheduler": [("Scheduler.schedule_one", "first_cycle_start", "first_cycle_end", None)],
}
class Hook(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name not in WRAPS:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        run = spec.loader.exec_module
        def exec_module(module):
            run(module)
            if name == "kubesched.cli":
                mark("imported")
            if name == "kubesched.app":
                mark("imported_app")
            for attr, before, after, each in WRAPS[name]:
                owner = module
                *outer, last = attr.split(".")
                for part in outer:
                    owner = getattr(owner, part)
                wrap(owner, last, before, after, each)
        spec.loader.exec_module = exec_module
        return spec
import importlib.util
sys.meta_path.insert(0, Hook())
def report():
    while "bind_post_end" not in T:
        time.sleep(0.01)
    T["cpu_s"] = time.process_time()
    print("PHASES " + json.dumps({"marks": T, "lists": LISTS}), file=sys.stderr, flush=True)
threading.Thread(target=report, daemon=True).start()
sys.argv = ["kubesched", *sys.argv[1:]]
from kubesched.__main__ import main
sys.exit(main())
"""

PHASES = (
    ("interpreter start", "spawn", "main"),
    ("import kubesched.cli", "main", "imported"),
    ("import run path (kubesched.app)", "imported", "imported_app"),
    ("argument parsing, logging", "imported_app", "config_start"),
    ("config load", "config_start", "config_end"),
    ("credentials (kubeconfig)", "credentials_start", "credentials_end"),
    ("clients, framework, queue (rest of SchedulerApp())", "credentials_end", "app_init_end"),
    ("secure port: certificate, listen", "serve_start", "serve_end"),
    ("informers start to first list sent", "informers_start", "first_list_start"),
    ("informer lists, all (until synced)", "informers_start", "synced"),
    ("first drain (cache fill, queue)", "first_drain_start", "first_drain_end"),
    ("synced to first cycle", "synced", "first_cycle_start"),
    ("first scheduling cycle", "first_cycle_start", "first_cycle_end"),
    ("first cycle to binding POST", "first_cycle_end", "bind_post_start"),
    ("binding POST", "bind_post_start", "bind_post_end"),
    ("total: spawn to first binding", "spawn", "bind_post_end"),
)


def _pod(name: str) -> dict[str, Any]:
    spec = {"containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "10m"}}}]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def _cluster(api: KubeAPI, nodes: int, pods: int) -> None:
    """Nodes with room, and pods nobody schedules yet."""
    reset_cluster(api)
    alloc = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    for i in range(nodes):
        name = f"node-{i}"
        api.request("POST", "/api/v1/nodes", body={"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})
        api.request(
            "PATCH",
            f"/api/v1/nodes/{name}/status",
            body={"status": {"allocatable": alloc, "capacity": alloc}},
            content_type="application/merge-patch+json",
        )
    for i in range(pods):
        api.request("POST", PODS, body=_pod(f"pod-{i}"))


def _bound(api: KubeAPI) -> int:
    """Whether any pod is bound yet: one at most is listed, so that polling costs the same at any cluster size."""
    return len(api.request("GET", f"{PODS}?fieldSelector=spec.nodeName!%3D&limit=1").get("items") or ())


def _config(cp: ControlPlane, work: Path) -> Path:
    kubeconfig = cp.write_kubeconfig(work / "kubeconfig", TOKEN)
    cfg = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(kubeconfig)},
        "leaderElection": {"leaderElect": False},
    }
    path = work / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


def kubesched_run(config: Path, log: Path, secure: bool, api: KubeAPI, timeout: float = 60.0) -> dict[str, Any]:
    """One start of `kubesched run` through the wrapper: its phase marks, with the spawn time added, and the
    seconds until a bound pod shows through the API, polled as upstream's is."""
    compile_bytecode()
    port = ["--secure-port", "0"] if not secure else ["--secure-port", "10259", "--bind-address", "127.0.0.1"]
    args = [sys.executable, "-c", WRAPPER, "run", "--config", str(config), *port]
    with log.open("wb") as out:
        spawn, t0 = time.time(), time.monotonic()
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=os.environ.copy())
        found: dict[str, Any] | None = None
        polled: float | None = None
        while (found is None or polled is None) and time.monotonic() - t0 < timeout and proc.poll() is None:
            if polled is None and _bound(api):
                polled = time.monotonic() - t0
            for line in log.read_text(errors="replace").splitlines() if found is None else ():
                if line.startswith("PHASES "):
                    found = json.loads(line[len("PHASES ") :])
            time.sleep(0.01)
        _stop(proc)
    if found is None or polled is None:
        raise RuntimeError(f"no binding within {timeout}s; see {log}")
    found["marks"]["spawn"] = spawn
    found["polled"] = polled
    return found


def upstream_run(cp: ControlPlane, api: KubeAPI, timeout: float = 60.0) -> float:
    """Seconds from starting kube-scheduler to the first pod bound (polled through the API)."""
    t0 = time.monotonic()
    proc = cp.start_scheduler({}, verbosity=0)
    try:
        while time.monotonic() - t0 < timeout:
            if _bound(api):
                return time.monotonic() - t0
            time.sleep(0.01)
        raise RuntimeError("upstream bound nothing")
    finally:
        proc.stop()
        cp.schedulers.remove(proc)


def _table(runs: list[dict[str, Any]]) -> str:
    rows = ["| phase | " + " | ".join(f"run {i + 1} (s)" for i in range(len(runs))) + " | median (s) |"]
    rows.append("|---|" + "---|" * (len(runs) + 1))
    for label, a, b in PHASES:
        vals = [r["marks"][b] - r["marks"][a] for r in runs if a in r["marks"] and b in r["marks"]]
        if len(vals) != len(runs):
            continue
        rows.append(f"| {label} | " + " | ".join(f"{v:.3f}" for v in vals) + f" | {statistics.median(vals):.3f} |")
    polled = [r["polled"] for r in runs]
    rows.append(
        "| first binding seen through the API (polled, as upstream's below) | "
        + " | ".join(f"{p:.3f}" for p in polled)
        + f" | {statistics.median(polled):.3f} |"
    )
    cpu = [r["marks"]["cpu_s"] for r in runs]
    rows.append(
        "| process CPU time at first binding | "
        + " | ".join(f"{c:.3f}" for c in cpu)
        + f" | {statistics.median(cpu):.3f} |"
    )
    spans = []
    for r in runs:
        lists = r["lists"].values()
        starts, ends = [s for s, _ in lists], [e for _, e in lists]
        spans.append((len(r["lists"]), max(ends) - min(starts), sum(e - s for s, e in lists)))
    rows.append(
        "\ninformer lists per run (count, first start to last end, sum of their durations): "
        + "; ".join(f"{n}, {w:.3f} s, {s:.3f} s" for n, w, s in spans)
    )
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--nodes", type=int, default=12)
    parser.add_argument("--pods", type=int, default=20)
    parser.add_argument("--secure-port", action="store_true", help="serve 127.0.0.1:10259 (self-signed certificate)")
    parser.add_argument("--upstream", action="store_true", help="time kube-scheduler's first binding too")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kubesched-startup-"))
    runs: list[dict[str, Any]] = []
    upstream: list[float] = []
    try:
        with control_plane(work / "cp") as cp:
            api = KubeAPI(load_configuration(str(cp.kubeconfig_path)), qps=0)
            config = _config(cp, work)
            for i in range(args.runs):
                _cluster(api, args.nodes, args.pods)
                runs.append(kubesched_run(config, work / f"kubesched-{i}.log", args.secure_port, api))
                if args.upstream:
                    _cluster(api, args.nodes, args.pods)
                    upstream.append(upstream_run(cp, api))
    except ControlPlaneError as err:
        print(f"startup: {err}", file=sys.stderr)
        return 2
    print(_table(runs))
    if upstream:
        print(
            "upstream kube-scheduler, start to first binding (polled): "
            + ", ".join(f"{u:.3f} s" for u in upstream)
            + f"; median {statistics.median(upstream):.3f} s"
        )
    print(f"\nlogs under {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
