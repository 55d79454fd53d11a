"""Upstream kube-scheduler v1.36 and `kubesched run` side by side through one real kube-apiserver.

    export KUBESCHED_K8S_ASSETS=/root/.cache/kubesched-k8s/v1.36
    python3 bench/live_side_by_side.py
    python3 bench/live_side_by_side.py --workload SchedulingBasic --nodes 5000 --init-pods 1000 --pods 3000

One etcd and kube-apiserver (kubesched_testing.controlplane) serve every round. For each
workload the nodes are created once; then each scheduler in turn (never both at once:
they would share the two cores) starts as its own process (the kube-scheduler binary, or
`python -m kubesched run` from this tree), the init pods are created and waited for until
bound (setup, untimed), then the measured pods are created by 30 concurrent workers, as
scheduler_perf's createPods op does, while a watch on the measured namespace counts the
pods that got a node. Afterwards the scheduler is stopped, the placement checked (every
pod bound, no node over its pods, CPU or memory, no two green anti-affinity pods on one
host, zone skew within maxSkew) and the round's pods and events deleted.

Both schedulers get the same configuration file: default profile, no leader election,
clientConnection qps 5000 / burst 5000 (scheduler_perf raises its client to these; the
kube-scheduler default is 50 / 100, which would throttle both).

Throughput as scheduler_perf's collector computes it: every second the number of
scheduled measured pods is read; the first tick that sees one is the baseline, each
later tick records new pods / seconds since the last recorded tick (a tick with none
is merged into the next); the figure is the mean of those samples. Also printed:
bound / seconds from the first measured pod's creation to the last binding seen. CPU
seconds (utime + stime from /proc) of the scheduler and of kube-apiserver + etcd cover
the same span. CPU s / 1,000 pods counts the scheduler's CPU until its Scheduled events
for the measured pods are written as well (or none came for 5 s): both schedulers send
events asynchronously, and a scheduler that falls behind on them would otherwise look
cheaper. Run by hand, not in CI.

--precreated creates every pod before the scheduler starts (as after a restart, or
an outage of the scheduler) and counts its CPU from its start; --scheduler baseline
--baseline-src OTHER/src runs `kubesched run` from another tree in the same rounds,
for a before/after under the same load. Each tree runs from a byte-compiled copy, as an installed
wheel would (--from-checkout: from the trees as they are).
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import multiprocessing as mp
import os
import shutil
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "testing"))  # kubesched_testing: not in the wheel

import urllib3  # noqa: E402
import yaml  # noqa: E402
from scheduler_perf import Nodes, Pods, Spec, _make, node_objects  # noqa: E402

from kubesched.api.object import Obj  # noqa: E402
from kubesched.api.quantity import milli_value, value  # noqa: E402
from kubesched_testing.controlplane import (  # noqa: E402
    TOKEN,
    ControlPlane,
    ControlPlaneError,
    Process,
    control_plane,
)

SCHEDULERS = ("upstream", "kubesched", "baseline")  # baseline: kubesched from --baseline-src
CREATE_WORKERS = 30  # scheduler_perf creates each op's pods with 30 parallel workers
QPS = 5000
ZONES = ("moon-1", "moon-2", "moon-3")


def _node_list(n: int, zones: tuple[str, ...] = ()) -> list[Obj]:
    """n nodes from scheduler_perf's node-default template, zones round-robin where given."""
    return node_objects(Spec("live", None, (Nodes(n, zones=zones),), (), Pods(0, "pod-default", "live")))


NODES, INIT_PODS, PODS = 5000, 1000, 2000  # upstream's 5000 nodes; fewer pods than its runs, to last minutes
STALL_SECONDS = 60.0  # no new binding for this long ends a round as failed


@dataclass
class Workload:
    """One upstream scheduler_perf workload: node and pod generators from bench/scheduler_perf.py."""

    name: str
    nodes: Callable[[int], list[Obj]]
    init_pod: Callable[[int], Obj]
    measured_pod: Callable[[int], Obj]

    @property
    def namespaces(self) -> tuple[str, str]:
        return self.init_pod(0)["metadata"]["namespace"], self.measured_pod(0)["metadata"]["namespace"]


WORKLOADS = {
    "SchedulingBasic": Workload(
        "SchedulingBasic",
        lambda n: _node_list(n),
        lambda i: _make("pod-default", "namespace-1", i),
        lambda i: _make("pod-default", "namespace-2", i),
    ),
    "SchedulingPodAntiAffinity": Workload(
        "SchedulingPodAntiAffinity",
        lambda n: _node_list(n),
        lambda i: _make("pod-with-pod-anti-affinity", "sched-0", i),
        lambda i: _make("pod-with-pod-anti-affinity", "sched-1", i),
    ),
    "TopologySpreading": Workload(
        "TopologySpreading",
        lambda n: _node_list(n, ZONES),
        lambda i: _make("pod-default", "namespace-1", i),
        lambda i: _make("pod-with-topology-spreading", "namespace-2", i),
    ),
}


class Client:
    """Raw HTTPS to the API server, one keep-alive connection per thread: creating pods must cost little here."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.ctx = ssl.create_default_context()
        self.ctx.check_hostname = False
        self.ctx.verify_mode = ssl.CERT_NONE
        self.local = threading.local()
        self.headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
        urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)  # a loopback test server
        self.pool = urllib3.PoolManager(cert_reqs="CERT_NONE")  # for watches

    def connect(self, timeout: float | None = 60.0) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection("127.0.0.1", self.port, context=self.ctx, timeout=timeout)

    def call(self, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
        conn: http.client.HTTPSConnection | None = getattr(self.local, "conn", None)
        for attempt in range(2):
            if conn is None:
                conn = self.local.conn = self.connect()
            try:
                conn.request(method, path, body=body, headers=self.headers)
                resp = conn.getresponse()
                return resp.status, resp.read()
            except (OSError, http.client.HTTPException):
                conn.close()
                conn = self.local.conn = None
                if attempt == 1:
                    raise
        raise AssertionError("unreachable")

    def json(self, method: str, path: str, body: Obj | None = None) -> Obj:
        status, data = self.call(method, path, None if body is None else json.dumps(body).encode())
        if not 200 <= status < 300:
            raise RuntimeError(f"{method} {path}: {status} {data[:300]!r}")
        out: Obj = json.loads(data) if data else {}
        return out

    def create_all(self, path_and_bodies: list[tuple[str, bytes]], workers: int = CREATE_WORKERS) -> None:
        """POST every body with `workers` threads; any answer but 201 is an error."""

        def post(item: tuple[str, bytes]) -> None:
            status, data = self.call("POST", *item)
            if status != 201:
                raise RuntimeError(f"POST {item[0]}: {status} {data[:300]!r}")

        with ThreadPoolExecutor(workers) as ex:
            for _ in ex.map(post, path_and_bodies):
                pass

    def list_items(self, path: str) -> list[Obj]:
        items: list[Obj] = self.json("GET", path).get("items") or []
        return items


class BoundCounter:
    """Counts pods of one namespace as they get a node, from a watch (scheduler_perf counts from an informer).

    The field selector spec.nodeName!= makes the API server send each pod once, as ADDED, when it is bound.
    A watcher that reads too slowly is closed by the API server's watch cache: then, as a reflector does,
    the bound pods are listed again and the watch resumes from the list (`relists` counts these).
    """

    def __init__(self, client: Client, namespace: str) -> None:
        self.client, self.namespace = client, namespace
        self.path = f"/api/v1/namespaces/{namespace}/pods?fieldSelector=spec.nodeName%21%3D"
        self.bound: set[str] = set()
        self.last_bound_at = 0.0
        self.relists = 0
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.error = ""
        self.resp = self._watch(self._list())
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _list(self) -> str:
        """Note every pod bound so far; returns the list's resourceVersion."""
        listed = self.client.json("GET", self.path)
        for pod in listed.get("items") or ():
            self._saw(pod)
        rv: str = listed["metadata"]["resourceVersion"]
        return rv

    def _watch(self, rv: str) -> urllib3.BaseHTTPResponse:
        resp = self.client.pool.request(
            "GET",
            f"https://127.0.0.1:{self.client.port}{self.path}&watch=true&resourceVersion={rv}",
            headers=self.client.headers,
            preload_content=False,
            timeout=urllib3.Timeout(connect=10, read=None),
            retries=False,
        )
        if resp.status != 200:
            raise RuntimeError(f"watch {self.namespace}: {resp.status} {resp.read()[:300]!r}")
        self.sock: socket.socket | None = getattr(resp.connection, "sock", None)
        return resp

    def _run(self) -> None:
        while not self.stopped.is_set():
            with contextlib.suppress(OSError, urllib3.exceptions.HTTPError):
                self._read()
            if self.stopped.is_set():
                return
            try:
                self.relists += 1
                self.resp = self._watch(self._list())
            except (OSError, RuntimeError, urllib3.exceptions.HTTPError) as err:
                self.error = f"the watch of {self.namespace} could not resume: {err}"
                return

    def _read(self) -> None:
        buf = b""
        for chunk in self.resp.stream(65536):
            *lines, buf = (buf + chunk).split(b"\n")
            for line in lines:
                if line.strip():
                    event = json.loads(line)
                    if event["type"] in ("ADDED", "MODIFIED"):
                        self._saw(event["object"])

    def _saw(self, pod: Obj) -> None:
        if (pod.get("spec") or {}).get("nodeName"):
            with self.lock:
                if pod["metadata"]["name"] not in self.bound:
                    self.bound.add(pod["metadata"]["name"])
                    self.last_bound_at = time.perf_counter()

    @property
    def count(self) -> int:
        with self.lock:
            return len(self.bound)

    def wait(self, want: int, what: str) -> None:
        """Until `want` pods are bound; raises when none more was bound for STALL_SECONDS or the watch failed."""
        last, since = -1, time.monotonic()
        while (n := self.count) < want:
            if n != last:
                last, since = n, time.monotonic()
            if not self.thread.is_alive():
                raise RuntimeError(f"{what}: {n}/{want} bound, then {self.error}")
            if time.monotonic() - since > STALL_SECONDS:
                raise RuntimeError(f"{what}: {n}/{want} bound, none more for {STALL_SECONDS:.0f}s")
            time.sleep(0.02)

    def close(self) -> None:
        """Ends the watch: its socket is shut down under the reader, which then returns."""
        self.stopped.set()
        if self.sock is not None:
            with contextlib.suppress(OSError):
                self.sock.shutdown(socket.SHUT_RDWR)
        self.thread.join(5)
        self.resp.close()


class Creator:
    """Creates pods from a process of its own, so that its 30 threads do not starve the watch reader of the GIL."""

    def __init__(self, port: int, bodies: list[tuple[str, bytes]]) -> None:
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_creator_main, args=(port, bodies, child), daemon=True)
        self.proc.start()
        while not self.conn.poll(0.2):  # until it says ready: imported and connected
            if not self.proc.is_alive():
                raise RuntimeError(f"the pod creating process exited at start ({self.proc.exitcode})")
        self.conn.recv()

    def start(self) -> None:
        self.conn.send("go")

    def join(self) -> None:
        """Until every pod is created; raises when one was refused."""
        deadline = time.monotonic() + 600
        while not self.conn.poll(0.2):
            if not self.proc.is_alive() or time.monotonic() > deadline:
                self.proc.kill()
                raise RuntimeError("the pod creating process died or did not finish in 600 s")
        error = self.conn.recv()
        self.proc.join(10)
        if error:
            raise RuntimeError(error)


def _creator_main(port: int, bodies: list[tuple[str, bytes]], conn: Connection) -> None:
    client = Client(port)
    conn.send("ready")
    conn.recv()
    try:
        client.create_all(bodies)
        conn.send("")
    except (OSError, RuntimeError, http.client.HTTPException) as err:
        conn.send(str(err))


class ThroughputSampler:
    """scheduler_perf's throughputCollector: per-second samples of newly scheduled pods, zero ticks merged."""

    def __init__(self, count: Callable[[], int], interval: float = 1.0) -> None:
        self.count, self.interval = count, interval
        self.samples: list[float] = []
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        started = False
        last_count, last_time, skipped = 0, 0.0, 0
        next_tick = time.perf_counter() + self.interval
        while not self.stopped.wait(max(0.0, next_tick - time.perf_counter())):
            next_tick += self.interval
            now, scheduled = time.perf_counter(), self.count()
            if scheduled == 0:
                continue
            if not started:
                started, last_count, last_time = True, scheduled, now
                continue
            new = scheduled - last_count
            if new == 0:
                skipped += 1
                continue
            rate = new / (now - last_time)
            self.samples.extend([rate] * (skipped + 1))
            last_count, last_time, skipped = scheduled, now, 0

    def stop(self) -> float | None:
        """The mean of the samples; None when the run was too short for two ticks with progress."""
        self.stopped.set()
        self.thread.join(5)
        return sum(self.samples) / len(self.samples) if self.samples else None


class PySpy:
    """py-spy sampling whichever thread of a process holds the GIL (its Python CPU time), written on stop.

    py-spy pauses the process for each sample: that about doubles its CPU seconds, so a profiled round's
    figures do not compare with others. Without pausing (--nonblocking) samples land in threads that
    wait on sockets and locks, without the GIL.
    """

    def __init__(self, binary: str, pid: int, out: Path) -> None:
        self.out = out
        self.proc = subprocess.Popen(
            [binary, "record", "--pid", str(pid), "--format", "raw", "--gil", "-o", str(out)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        time.sleep(0.5)  # attached before the clock starts

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()


ACTIVITIES = (  # (what, a frame every sample of it passes through), first match wins
    ("scheduling cycles", "ScheduleOne.scheduling_cycle"),
    ("binding cycles (binding POSTs)", "SchedulerApp._binding_cycle"),
    ("API dispatcher (status patches, events)", "APIDispatcher._work"),
    ("informers: watch stream read and JSON decode", "Reflector.run"),
    ("informer events into the cache and queue", "ClusterStore.drain"),
)
ENTRY_FRAMES = ("kubesched/__main__.py", "kubesched/cli.py", "SchedulerApp.run ", "SchedulerApp._loop ")


def profile_summary(path: Path, top: int = 20) -> str:
    """Samples by activity, then the kubesched functions most samples sat in (self) or passed through."""
    activity: Counter[str] = Counter()
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        if not stack or not n.isdigit():
            continue
        frames = stack.split(";")
        count = int(n)
        total += count
        activity[next((what for what, frame in ACTIVITIES if frame in stack), "other")] += count
        own[frames[-1]] += count
        for f in set(frames):
            if "kubesched/" in f and not any(e in f for e in ENTRY_FRAMES):
                inclusive[f] += count
    if not total:
        return f"{path}: no samples"
    out = [f"{path}: {total} samples of the thread holding the GIL, 100 a second", "by activity:"]
    out += [f"  {100 * c / total:5.1f}%  {what}" for what, c in activity.most_common()]
    out.append("self:")
    out += [f"  {100 * c / total:5.1f}%  {f}" for f, c in own.most_common(top)]
    out.append("inclusive (kubesched frames):")
    out += [f"  {100 * c / total:5.1f}%  {f}" for f, c in inclusive.most_common(top)]
    return "\n".join(out)


def cpu_seconds(pid: int) -> float:
    """utime + stime of one process, from /proc/<pid>/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def count_events(client: Client, namespace: str) -> int:
    """Events in a namespace, from one list of one item and the server's count of the rest."""
    listed = client.json("GET", f"/apis/events.k8s.io/v1/namespaces/{namespace}/events?limit=1")
    return len(listed.get("items") or ()) + int((listed.get("metadata") or {}).get("remainingItemCount") or 0)


def wait_for_events(client: Client, namespace: str, want: int, quiet: float = 5.0) -> int:
    """Until `want` events exist in the namespace, or none came for `quiet` seconds; how many there are."""
    last, since = -1, time.monotonic()
    while (n := count_events(client, namespace)) < want and time.monotonic() - since < quiet:
        if n != last:
            last, since = n, time.monotonic()
        time.sleep(0.2)
    return n


def scheduler_config(kubeconfig: Path) -> Obj:
    """What both schedulers read: default profile, no leader election, client QPS high enough not to throttle."""
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(kubeconfig), "qps": QPS, "burst": QPS},
        "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": "default-scheduler"}],
    }


def installed_copy(src: Path, into: Path) -> Path:
    """A copy of the tree `src` (holding the kubesched package) with its bytecode compiled, as installing the
    wheel compiles it: started from a checkout under PYTHONDONTWRITEBYTECODE (or one whose bytecode is stale),
    every start compiles each module anew, about 0.15 CPU s that a deployed scheduler never pays. Copied so
    that the checkout itself is not written to."""
    shutil.copytree(src / "kubesched", into / "kubesched", ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(into)], check=True, stdout=subprocess.DEVNULL)
    return into


def start_scheduler(cp: ControlPlane, which: str, config: Path, src: Path) -> Process:
    """kube-scheduler from the assets, or `kubesched run` from the tree `src` as its own process."""
    n = cp.started_schedulers
    cp.started_schedulers += 1
    if which == "upstream":
        args = [str(cp.assets / "kube-scheduler"), f"--config={config}", "--secure-port=0"]
    else:
        args = [sys.executable, "-m", "kubesched", "run", f"--config={config}", "--secure-port=0"]
    env_path = os.environ.get("PYTHONPATH", "")
    os.environ["PYTHONPATH"] = str(src) + (os.pathsep + env_path if env_path else "")
    try:
        proc = Process(which, args, cp.workdir / f"{which}-{n}.log").start()
    finally:
        os.environ["PYTHONPATH"] = env_path
    cp.schedulers.append(proc)
    return proc


def ensure_namespaces(client: Client, names: tuple[str, ...]) -> None:
    """Created on first use, as scheduler_perf does; namespaces stay (no controller would finalise them)."""
    for ns in names:
        status, data = client.call("POST", "/api/v1/namespaces", json.dumps({"metadata": {"name": ns}}).encode())
        if status not in (201, 409):
            raise RuntimeError(f"namespace {ns}: {status} {data[:300]!r}")


def pod_bodies(make: Callable[[int], Obj], n: int) -> list[tuple[str, bytes]]:
    """POST paths and JSON bodies, serialised ahead of the clock; the API server assigns the uids."""
    out = []
    for i in range(n):
        pod = make(i)
        pod["metadata"].pop("uid", None)
        out.append((f"/api/v1/namespaces/{pod['metadata']['namespace']}/pods", json.dumps(pod).encode()))
    return out


def delete_pods(client: Client, namespaces: tuple[str, ...], timeout: float = 300.0) -> None:
    """Delete a round's pods (at once: no kubelet) and events; returns when no pod is left."""
    for ns in namespaces:
        client.json("DELETE", f"/api/v1/namespaces/{ns}/pods?gracePeriodSeconds=0")
        client.json("DELETE", f"/api/v1/namespaces/{ns}/events")  # events.k8s.io/v1 events too: one resource
    _wait_empty(client, [f"/api/v1/namespaces/{ns}/pods?limit=1" for ns in namespaces], timeout)


def create_nodes(client: Client, w: Workload, n: int) -> None:
    client.create_all([("/api/v1/nodes", json.dumps(node).encode()) for node in w.nodes(n)])


def delete_nodes(client: Client, timeout: float = 300.0) -> None:
    client.json("DELETE", "/api/v1/nodes")
    _wait_empty(client, ["/api/v1/nodes?limit=1"], timeout)


def _wait_empty(client: Client, paths: list[str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while any(client.list_items(path) for path in paths):
        if time.monotonic() > deadline:
            raise RuntimeError(f"still not deleted after {timeout:.0f}s: {paths}")
        time.sleep(0.2)


def check_placement(client: Client, w: Workload, init: int, measured: int) -> list[str]:
    """What is wrong with the round's final placement; empty when every pod is bound within every rule."""
    problems: list[str] = []
    nodes = {n["metadata"]["name"]: n for n in client.list_items("/api/v1/nodes")}
    pods = [p for ns in w.namespaces for p in client.list_items(f"/api/v1/namespaces/{ns}/pods")]
    init_ns, measured_ns = w.namespaces
    for ns, want in ((init_ns, init), (measured_ns, measured)):
        got = [p for p in pods if p["metadata"]["namespace"] == ns]
        unbound = [p["metadata"]["name"] for p in got if not p["spec"].get("nodeName")]
        if len(got) != want or unbound:
            problems.append(f"{ns}: {len(got)} pods of {want}, unbound {unbound[:5]}")
    used: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for p in pods:
        node = p["spec"].get("nodeName")
        if not node:
            continue
        if node not in nodes:
            problems.append(f"{p['metadata']['name']} bound to missing node {node}")
            continue
        u = used[node]
        u[0] += 1
        for c in p["spec"]["containers"]:
            req = (c.get("resources") or {}).get("requests") or {}
            u[1] += milli_value(req.get("cpu", "0"))
            u[2] += value(req.get("memory", "0"))
    for name, (count, cpu, mem) in used.items():
        status = nodes[name]["status"]
        alloc = status.get("allocatable") or status["capacity"]  # the API server defaults one to the other
        if count > value(alloc["pods"]) or cpu > milli_value(alloc["cpu"]) or mem > value(alloc["memory"]):
            problems.append(f"node {name} over capacity: {count} pods, {cpu}m CPU, {mem} B memory")
    if w.name == "SchedulingPodAntiAffinity":
        hosts = Counter(p["spec"].get("nodeName") for p in pods if (p["metadata"].get("labels") or {}).get("color"))
        crowded = {h: c for h, c in hosts.items() if h and c > 1}
        if crowded:
            problems.append(f"green pods share hosts: {dict(list(crowded.items())[:5])}")
    if w.name == "TopologySpreading":
        per_zone = Counter({z: 0 for z in ZONES})
        for p in pods:
            if p["metadata"]["namespace"] == measured_ns and p["spec"].get("nodeName") in nodes:
                per_zone[nodes[p["spec"]["nodeName"]]["metadata"]["labels"]["topology.kubernetes.io/zone"]] += 1
        if max(per_zone.values()) - min(per_zone.values()) > 5:
            problems.append(f"zone skew over 5: {dict(per_zone)}")
    return problems


@dataclass
class Round:
    workload: str
    scheduler: str
    nodes: int
    init_pods: int
    measured_pods: int
    bound: int = 0
    pods_per_second: float | None = None  # scheduler_perf's Average
    bound_per_elapsed: float | None = None
    seconds: float = 0.0
    scheduler_cpu_s: float = 0.0
    apiserver_etcd_cpu_s: float = 0.0
    setup_seconds: dict[str, float] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    exit_code: int | None = None
    events: dict[str, int] = field(default_factory=dict)  # the measured namespace's events by reason
    repeat: int = 0
    watch_relists: int = 0  # times the bench's own watch of the measured pods fell behind and listed again
    precreated: bool = False  # the measured pods existed before the scheduler started
    # Scheduler CPU until its events for the measured pods were written too (both send them asynchronously), and
    # how many it had written by then.
    scheduler_cpu_with_events_s: float = 0.0
    events_written: int = 0

    @property
    def cpu_per_1000(self) -> float | None:
        """Scheduler CPU seconds per 1,000 measured pods bound, its events written (with --precreated: its start
        included)."""
        return round(1000 * self.scheduler_cpu_with_events_s / self.bound, 2) if self.bound else None


def run_round(
    cp: ControlPlane,
    client: Client,
    w: Workload,
    which: str,
    sizes: tuple[int, int, int],
    py_spy: str = "",
    profile_out: Path | None = None,
    precreated: bool = False,
    src: Path = ROOT / "src",
) -> Round:
    """One scheduler on one workload whose nodes exist: setup, measurement, placement check, pods deleted.

    `precreated`: every pod is created before the scheduler starts, and its CPU counts from its start.
    """
    nodes, init, measured = sizes
    r = Round(w.name, which, nodes, init, measured)
    init_ns, measured_ns = w.namespaces
    config = cp.workdir / "scheduler-config.yaml"
    config.write_text(yaml.safe_dump(scheduler_config(cp.kubeconfig_path)))
    r.precreated = precreated
    servers = [p.proc.pid for p in (cp.apiserver, cp.etcd) if p is not None and p.proc is not None]
    if precreated:
        # Every pod exists before the scheduler starts: it lists them all at once, as after a restart.
        t = time.perf_counter()
        for make, n in ((w.init_pod, init), (w.measured_pod, measured)):
            creator = Creator(client.port, pod_bodies(make, n))
            creator.start()
            creator.join()
        r.setup_seconds["create pods"] = round(time.perf_counter() - t, 1)
    t = time.perf_counter()
    server0 = sum(cpu_seconds(p) for p in servers)
    proc = start_scheduler(cp, which, config, src)
    try:
        assert proc.proc is not None
        if precreated:
            counter = BoundCounter(client, measured_ns)
            sampler = ThroughputSampler(lambda: counter.count)
            spy = PySpy(py_spy, proc.proc.pid, profile_out) if py_spy and profile_out is not None else None
            cpu0, start = 0.0, t  # the whole process, its start and list included
            during: Creator | None = None
        else:
            counter = BoundCounter(client, init_ns)
            init_creator = Creator(client.port, pod_bodies(w.init_pod, init))
            init_creator.start()
            init_creator.join()
            counter.wait(init, f"{which} init pods")
            counter.close()
            r.setup_seconds["start+init pods"] = round(time.perf_counter() - t, 1)
            during = Creator(client.port, pod_bodies(w.measured_pod, measured))
            counter = BoundCounter(client, measured_ns)
            sampler = ThroughputSampler(lambda: counter.count)
            spy = PySpy(py_spy, proc.proc.pid, profile_out) if py_spy and profile_out is not None else None
            cpu0, server0 = cpu_seconds(proc.proc.pid), sum(cpu_seconds(p) for p in servers)
            start = time.perf_counter()
            during.start()
        try:
            counter.wait(measured, f"{which} measured pods")
        finally:
            r.pods_per_second = sampler.stop()
            r.scheduler_cpu_s = round(cpu_seconds(proc.proc.pid) - cpu0, 2)
            r.apiserver_etcd_cpu_s = round(sum(cpu_seconds(p) for p in servers) - server0, 2)
            r.bound = counter.count
            if spy is not None:
                spy.stop()
            counter.close()
            r.watch_relists = counter.relists
            if during is not None:
                during.join()
        r.events_written = wait_for_events(client, measured_ns, r.bound)
        r.scheduler_cpu_with_events_s = round(cpu_seconds(proc.proc.pid) - cpu0, 2)
        r.seconds = round(counter.last_bound_at - start, 2)
        r.bound_per_elapsed = round(r.bound / r.seconds, 1) if r.seconds > 0 else None
        if r.pods_per_second is not None:
            r.pods_per_second = round(r.pods_per_second, 1)
    finally:
        proc.signal(signal.SIGTERM)
        with contextlib.suppress(Exception):
            r.exit_code = proc.proc.wait(30) if proc.proc is not None else None
        proc.stop()
        cp.schedulers.remove(proc)
    r.problems = check_placement(client, w, init, measured)
    r.events = dict(
        Counter(
            e.get("reason", "") for e in client.list_items(f"/apis/events.k8s.io/v1/namespaces/{measured_ns}/events")
        )
    )
    t = time.perf_counter()
    delete_pods(client, w.namespaces)
    r.setup_seconds["delete pods"] = round(time.perf_counter() - t, 1)
    return r


def started_control_plane(workdir: Path | None) -> contextlib.AbstractContextManager[ControlPlane]:
    """One control plane for every round; deleting a round's pods goes faster with more than the one
    worker deletecollection has by default."""
    return control_plane(workdir, extra_apiserver_args=["--delete-collection-workers=8"])


def table(rounds: list[Round]) -> str:
    """One row per workload and repetition, both schedulers side by side."""
    lines = [
        "| workload | nodes | init pods | measured pods | upstream pods/s | kubesched pods/s | ratio "
        "| upstream CPU s | kubesched CPU s | CPU s / 1,000 pods (upstream / kubesched) "
        "| apiserver+etcd CPU s (upstream / kubesched) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    rows: dict[tuple[str, int], dict[str, Round]] = {}
    for r in rounds:
        rows.setdefault((r.workload, r.repeat), {})[r.scheduler] = r

    def rate(r: Round | None) -> str:
        if r is None:
            return "-"
        avg = "-" if r.pods_per_second is None else f"{r.pods_per_second:.0f}"
        return f"{avg} ({r.bound_per_elapsed or 0:.0f})"

    def cpu(r: Round | None, attr: str) -> str:
        return "-" if r is None or getattr(r, attr) is None else f"{getattr(r, attr):.2f}"

    for pair in rows.values():
        up, ks = pair.get("upstream"), pair.get("kubesched")
        any_r = up or ks
        assert any_r is not None
        ratio = "-"
        if up and ks and up.pods_per_second and ks.pods_per_second:
            ratio = f"{ks.pods_per_second / up.pods_per_second:.2f}"
        lines.append(
            f"| {any_r.workload} | {any_r.nodes} | {any_r.init_pods} | {any_r.measured_pods} | {rate(up)} "
            f"| {rate(ks)} | {ratio} | {cpu(up, 'scheduler_cpu_s')} | {cpu(ks, 'scheduler_cpu_s')} "
            f"| {cpu(up, 'cpu_per_1000')} / {cpu(ks, 'cpu_per_1000')} "
            f"| {cpu(up, 'apiserver_etcd_cpu_s')} / {cpu(ks, 'apiserver_etcd_cpu_s')} |"
        )
    return "\n".join(lines)


def cpu_summary(rounds: list[Round]) -> str:
    """Scheduler CPU seconds per 1,000 bound pods, each round's and the median, per workload and scheduler."""
    by: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in rounds:
        if r.cpu_per_1000 is not None:
            by[(r.workload, r.scheduler)].append(r.cpu_per_1000)
    lines = ["CPU s / 1,000 pods (scheduler process, utime + stime, until its events for them were written):"]
    for (workload, which), values in by.items():
        runs = ", ".join(f"{v:.2f}" for v in values)
        lines.append(f"  {workload} {which}: median {statistics.median(values):.2f} ({runs})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", nargs="+", choices=list(WORKLOADS), default=list(WORKLOADS))
    ap.add_argument("--scheduler", nargs="+", choices=SCHEDULERS, default=["upstream", "kubesched"])
    ap.add_argument(
        "--baseline-src",
        type=Path,
        default=None,
        help="another tree's src for `--scheduler baseline` (before/after rounds under the same load)",
    )
    ap.add_argument("--nodes", type=int, default=NODES)
    ap.add_argument("--init-pods", type=int, default=INIT_PODS, help="pods bound before the measurement")
    ap.add_argument("--pods", type=int, default=PODS, help="measured pods")
    ap.add_argument("--repeat", type=int, default=1, help="rounds per workload and scheduler, the order alternating")
    ap.add_argument("--workdir", type=Path, default=None, help="keep the control plane's data and logs here")
    ap.add_argument(
        "--profile",
        type=Path,
        default=None,
        metavar="DIR",
        help="sample kubesched with py-spy during each measurement, writing DIR/<workload>-<n>.txt (collapsed stacks)",
    )
    ap.add_argument("--py-spy", default=shutil.which("py-spy") or "", help="the py-spy binary (default: on PATH)")
    ap.add_argument(
        "--precreated",
        action="store_true",
        help="create every pod before the scheduler starts; its CPU then counts from its start",
    )
    ap.add_argument("--json", action="store_true", help="print one JSON line per round only")
    ap.add_argument(
        "--from-checkout",
        action="store_true",
        help="start kubesched from the trees as they are, not from byte-compiled copies (see installed_copy)",
    )
    args = ap.parse_args(argv)
    if min(args.nodes, args.pods, args.repeat) < 1 or args.init_pods < 0:
        ap.error("--nodes, --pods and --repeat must be at least 1, --init-pods at least 0")
    if "SchedulingPodAntiAffinity" in args.workload and args.init_pods + args.pods > args.nodes:
        ap.error("SchedulingPodAntiAffinity puts one pod per node: --init-pods + --pods must not exceed --nodes")
    if "baseline" in args.scheduler and args.baseline_src is None:
        ap.error("--scheduler baseline needs --baseline-src")
    if args.profile is not None:
        if not args.py_spy:
            ap.error("--profile needs py-spy (pip install py-spy, or --py-spy PATH)")
        args.profile.mkdir(parents=True, exist_ok=True)
    rounds: list[Round] = []
    profiles: list[Path] = []
    # `timeout` and Ctrl-C end the run through the finally blocks, which stop the schedulers and control plane.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    try:
        with started_control_plane(args.workdir) as cp:
            client = Client(cp.apiserver_port)
            trees = {"kubesched": ROOT / "src"}
            if args.baseline_src is not None:
                trees["baseline"] = args.baseline_src
            if not args.from_checkout:
                trees = {which: installed_copy(src, cp.workdir / "trees" / which) for which, src in trees.items()}
            for name in args.workload:
                # The nodes serve both schedulers' rounds: a scheduler writes pods, never nodes.
                ensure_namespaces(client, WORKLOADS[name].namespaces)
                t = time.perf_counter()
                create_nodes(client, WORKLOADS[name], args.nodes)
                print(f"{name}: {args.nodes} nodes created in {time.perf_counter() - t:.1f}s", file=sys.stderr)
                for rep in range(args.repeat):
                    for which in args.scheduler if rep % 2 == 0 else reversed(args.scheduler):
                        prof = None
                        if args.profile is not None and which != "upstream":
                            prof = args.profile / f"{name}-{which}-{rep}.txt"
                            profiles.append(prof)
                        sizes = (args.nodes, args.init_pods, args.pods)
                        r = run_round(
                            cp,
                            client,
                            WORKLOADS[name],
                            which,
                            sizes,
                            args.py_spy,
                            prof,
                            args.precreated,
                            trees.get(which, ROOT / "src"),
                        )
                        r.repeat = rep
                        rounds.append(r)
                        print(json.dumps({**r.__dict__, "cpu_per_1000": r.cpu_per_1000}), flush=True)
                delete_nodes(client)
    except (ControlPlaneError, RuntimeError) as err:
        print(f"live_side_by_side: {err}", file=sys.stderr)
        return 1
    if not args.json:
        print()
        print("pods/s: scheduler_perf's Average of 1 s samples (in brackets: bound / seconds from first create)")
        print(table(rounds))
        print()
        print(cpu_summary(rounds))
        for prof in profiles:
            if prof.exists():
                print()
                print(profile_summary(prof))
    return 1 if any(r.problems for r in rounds) else 0


if __name__ == "__main__":
    sys.exit(main())
