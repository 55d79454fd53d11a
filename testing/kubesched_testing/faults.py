"""The fault suite: kubesched or kube-scheduler on a real API server while things go wrong.

Each scenario builds one cluster (nodes with room for 8 pods each, more pods than
fit), starts the scheduler as its own process, injects one fault half-way through
the pods' creation, waits for things to settle and then checks, through the API:
no node holds more pods than it allows, every bound pod has `PodScheduled=True`,
every pod that fits is bound, and the log has no traceback. The same scenario runs
against upstream kube-scheduler, so each figure stands beside upstream's. "kill" and
"leader" wait for the scheduler to bind something first, then SIGKILL it ("leader":
the replica holding the lease) and time the next binding: a restart's start-up, or
the standby's takeover once the lease runs out.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kubesched.backend.kube.api import APIError, KubeAPI
from kubesched_testing.controlplane import TOKEN, ControlPlane, Process, reset_cluster
from kubesched_testing.faultproxy import FaultProxy
from kubesched_testing.installed import kubesched_command

SCENARIOS = ("restart", "compaction", "dropped", "rival", "kill", "leader")
SCHEDULERS = ("kubesched", "upstream")
PODS_PER_NODE = 8
PODS = "/api/v1/namespaces/default/pods"
RESTART_TIMEOUT_S = 60.0
IN_FLIGHT_S = 0.1  # after a SIGKILL, the victim's last requests may still be applied for this long
SETTLE_S = 6.0  # no binding for this long (and nothing left that fits) counts as settled
DEADLINE_S = 180.0


@dataclass
class Figures:
    scheduler: str
    scenario: str
    pods: int = 0
    fit: int = 0
    bound: int = 0
    overcommitted_nodes: int = 0
    wrong_conditions: int = 0
    first_binding_after_restart_s: float | None = None
    log_lines: int = 0
    tracebacks: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return (
            self.overcommitted_nodes == 0
            and self.wrong_conditions == 0
            and self.tracebacks == 0
            and self.bound == self.fit
        )


def _node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}}


def _pod(name: str) -> dict[str, Any]:
    spec = {
        "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "10m"}}}],
        "terminationGracePeriodSeconds": 0,
    }
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


class Scheduler:
    """One scheduler process (or two, for leader election), started and restarted by the scenario."""

    def __init__(self, which: str, cp: ControlPlane, kubeconfig: Path, workdir: Path, replicas: int = 1) -> None:
        self.which, self.cp, self.kubeconfig, self.workdir = which, cp, kubeconfig, workdir
        self.replicas = replicas
        self.procs: list[Process] = []
        self.logs: list[Path] = []

    def _config(self) -> Path:
        cfg: dict[str, Any] = {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "clientConnection": {"kubeconfig": str(self.kubeconfig)},
            "leaderElection": {"leaderElect": False},
        }
        if self.replicas > 1:
            cfg["leaderElection"] = {
                "leaderElect": True,
                "leaseDuration": "4s",
                "renewDeadline": "3s",
                "retryPeriod": "1s",
                "resourceName": f"faults-{self.which}",
                "resourceNamespace": "default",
            }
        path = self.workdir / f"{self.which}-config.yaml"
        path.write_text(yaml.safe_dump(cfg))
        return path

    def start(self) -> Process:
        n = len(self.procs)
        log = self.workdir / f"{self.which}-{n}.log"
        if self.which == "upstream":
            args = [str(self.cp.assets / "kube-scheduler"), f"--config={self._config()}", "--secure-port=0", "--v=2"]
        else:
            args = kubesched_command("run", "--config", str(self._config()), "--secure-port", "0")
        proc = Process(f"{self.which}-{n}", args, log).start()
        self.procs.append(proc)
        self.logs.append(log)
        return proc

    def running(self) -> list[Process]:
        return [p for p in self.procs if p.running]

    def leader(self, timeout: float) -> Process:
        """The running replica whose log says it won the lease (both schedulers log upstream's words)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for proc in self.running():
                if "Successfully acquired lease" in proc.log_path.read_text(errors="replace"):
                    return proc
            time.sleep(0.05)
        raise TimeoutError(f"no {self.which} replica acquired the lease within {timeout:.0f}s")

    def stop(self) -> None:
        for p in self.procs:
            p.stop()

    def log_lines(self) -> tuple[int, int]:
        lines = tracebacks = 0
        for log in self.logs:
            text = log.read_text(errors="replace") if log.exists() else ""
            lines += text.count("\n")
            tracebacks += text.count("Traceback (most recent call last)") + text.count("panic:")
        return lines, tracebacks


def _bound_count(api: KubeAPI) -> int:
    return sum(1 for p in _pods(api) if (p.get("spec") or {}).get("nodeName"))


def _pods(api: KubeAPI) -> list[dict[str, Any]]:
    while True:
        try:
            return list(api.request("GET", PODS).get("items") or ())
        except APIError:  # the API server is coming back
            time.sleep(0.5)


def _rival(api: KubeAPI, nodes: list[str], stop: threading.Event, rng: random.Random) -> None:
    """Bind pending pods straight through the API, as another scheduler would, to its own nodes with room.

    Its nodes are tainted so the scheduler under test never uses them: the two race for pods, not for
    room, so a node over its limit is the scheduler's doing, never the rival's.
    """
    while not stop.is_set():
        pods = _pods(api)
        load: dict[str, int] = {}
        for p in pods:
            n = (p.get("spec") or {}).get("nodeName")
            if n:
                load[n] = load.get(n, 0) + 1
        pending = [p for p in pods if not (p.get("spec") or {}).get("nodeName")]
        if pending:
            p = rng.choice(pending)
            room = [n for n in nodes if load.get(n, 0) < PODS_PER_NODE]
            if room:
                body = {
                    "apiVersion": "v1",
                    "kind": "Binding",
                    "metadata": {"name": p["metadata"]["name"], "uid": p["metadata"]["uid"]},
                    "target": {"kind": "Node", "name": rng.choice(room)},
                }
                try:
                    api.request("POST", f"{PODS}/{p['metadata']['name']}/binding", body=body, retries=0)
                except APIError:
                    pass
        stop.wait(0.05)


def run_scenario(
    cp: ControlPlane, api: KubeAPI, which: str, scenario: str, workdir: Path, *, nodes: int = 12, seed: int = 1
) -> Figures:
    """One scenario against one scheduler; the cluster is reset first."""
    fig = Figures(which, scenario)
    rng = random.Random(seed)
    reset_cluster(api)
    workdir.mkdir(parents=True, exist_ok=True)
    names = [f"node-{i}" for i in range(nodes)]
    alloc = {"cpu": "4", "memory": "8Gi", "pods": str(PODS_PER_NODE)}
    for n in names:
        api.request("POST", "/api/v1/nodes", body=_node(n))
        api.request(
            "PATCH",
            f"/api/v1/nodes/{n}/status",
            body={"status": {"allocatable": alloc, "capacity": alloc}},
            content_type="application/merge-patch+json",
        )
    fig.pods = nodes * PODS_PER_NODE + 12
    fig.fit = nodes * PODS_PER_NODE
    proxy = FaultProxy(cp.url, TOKEN).start() if scenario == "dropped" else None
    kubeconfig = workdir / f"{which}-kubeconfig"
    kubeconfig.write_text(proxy.kubeconfig(TOKEN) if proxy is not None else cp.kubeconfig(TOKEN))
    sched = Scheduler(which, cp, kubeconfig, workdir, replicas=2 if scenario == "leader" else 1)
    for _ in range(sched.replicas):
        sched.start()
    if proxy is not None:  # every third binding's answer is lost after the server applied it
        for i in range(0, fig.pods, 3):
            proxy.add("POST", rf"/pods/pod-{i}/binding$", "drop_response")
    stop_rival = threading.Event()
    rival: threading.Thread | None = None
    start = time.monotonic()
    half = fig.pods // 2
    after_restart: threading.Thread | None = None
    for i in range(fig.pods):
        api.request("POST", PODS, body=_pod(f"pod-{i}"))
        if i == half:
            wait = _fault(cp, api, sched, scenario)
            if wait is not None:  # timed while the other half keeps coming: the new scheduler has work to find
                after_restart = threading.Thread(
                    target=lambda w=wait: setattr(fig, "first_binding_after_restart_s", w()), daemon=True
                )
                after_restart.start()
            if scenario == "rival":
                theirs = _rival_nodes(api, alloc)
                rival = threading.Thread(target=_rival, args=(api, theirs, stop_rival, rng), daemon=True)
                rival.start()
    _settle(api, fig.fit)
    if after_restart is not None:
        after_restart.join(RESTART_TIMEOUT_S + 10)
    stop_rival.set()
    if rival is not None:
        rival.join(10)
        taken = sum(1 for p in _pods(api) if ((p.get("spec") or {}).get("nodeName") or "").startswith("rival-"))
        fig.fit = min(fig.pods, fig.fit + taken)
        _settle(api, fig.fit)
    time.sleep(1.0)  # queued status patches go out
    fig.seconds = round(time.monotonic() - start, 1)
    _check(api, fig)
    sched.stop()
    if proxy is not None:
        proxy.stop()
    fig.log_lines, fig.tracebacks = sched.log_lines()
    return fig


def _rival_nodes(api: KubeAPI, alloc: dict[str, str]) -> list[str]:
    names = ["rival-0", "rival-1"]
    for n in names:
        node = _node(n)
        node["spec"] = {"taints": [{"key": "rival", "effect": "NoSchedule"}]}
        api.request("POST", "/api/v1/nodes", body=node)
        api.request(
            "PATCH",
            f"/api/v1/nodes/{n}/status",
            body={"status": {"allocatable": alloc, "capacity": alloc}},
            content_type="application/merge-patch+json",
        )
    return names


def _fault(cp: ControlPlane, api: KubeAPI, sched: Scheduler, scenario: str) -> Callable[[], float | None] | None:
    """Inject the scenario's fault; for a restart of the scheduler, a wait that gives the seconds from the kill
    to the first binding after it."""
    if scenario == "restart":
        cp.restart_apiserver(down_for=10.0)
    elif scenario == "compaction":
        cp.compact()
        cp.restart_apiserver(down_for=0.0)  # the watches come back from compacted versions: 410, relist
    elif scenario in ("kill", "leader"):
        # A scheduler at work, not one still starting: something bound, and for "leader" the lease holder known.
        _until(lambda: _bound_count(api) > 0, 60.0, time.monotonic())
        victim = sched.running()[0] if scenario == "kill" else sched.leader(timeout=60.0)
        t0 = time.monotonic()
        victim.kill()
        if scenario == "kill":
            sched.start()
        # Bindings the victim sent just before it died still land for a few milliseconds: they are not the next
        # scheduler's. Neither a new process nor a standby can bind this soon.
        time.sleep(IN_FLIGHT_S)
        before = _bound_count(api)
        return lambda: _until(lambda: _bound_count(api) > before, RESTART_TIMEOUT_S, t0)
    return None


def _until(cond: Callable[[], bool], timeout: float, t0: float) -> float | None:
    while time.monotonic() - t0 < timeout:
        if cond():
            return round(time.monotonic() - t0, 2)
        time.sleep(0.02)
    return None


def _settle(api: KubeAPI, fit: int) -> None:
    deadline = time.monotonic() + DEADLINE_S
    last, since = -1, time.monotonic()
    while time.monotonic() < deadline:
        bound = _bound_count(api)
        if bound != last:
            last, since = bound, time.monotonic()
        elif time.monotonic() - since > SETTLE_S and bound >= fit:
            return
        elif time.monotonic() - since > SETTLE_S * 5:
            return
        time.sleep(0.3)


def _check(api: KubeAPI, fig: Figures) -> None:
    per_node: dict[str, int] = {}
    for p in _pods(api):
        node = (p.get("spec") or {}).get("nodeName")
        cond = next(
            (c for c in (p.get("status") or {}).get("conditions") or () if c.get("type") == "PodScheduled"), None
        )
        if node:
            fig.bound += 1
            per_node[node] = per_node.get(node, 0) + 1
            if cond is None or cond.get("status") != "True":
                fig.wrong_conditions += 1
                fig.notes.append(f"{p['metadata']['name']} bound to {node} with PodScheduled {cond}")
        elif cond is None or cond.get("status") != "False":
            fig.wrong_conditions += 1
            fig.notes.append(f"{p['metadata']['name']} pending with PodScheduled {cond}")
    over = {n: c for n, c in per_node.items() if c > PODS_PER_NODE}
    fig.overcommitted_nodes = len(over)
    if over:
        fig.notes.append(f"over their {PODS_PER_NODE} pods: {json.dumps(over)}")


def table(figures: list[Figures]) -> str:
    head = (
        "| scenario | scheduler | bound/fit | overcommitted nodes | wrong conditions | "
        "first binding after the kill (s) | log lines | tracebacks | seconds |"
    )
    rows = [head, "|" + "---|" * 9]
    for f in figures:
        restart = "" if f.first_binding_after_restart_s is None else f"{f.first_binding_after_restart_s:.2f}"
        rows.append(
            f"| {f.scenario} | {f.scheduler} | {f.bound}/{f.fit} | {f.overcommitted_nodes} | {f.wrong_conditions} | "
            f"{restart} | {f.log_lines} | {f.tracebacks} | {f.seconds} |"
        )
    return "\n".join(rows)
