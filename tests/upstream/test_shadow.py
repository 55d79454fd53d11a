"""`kubesched shadow` against a real v1.36 cluster whose own kube-scheduler (upstream's binary) binds the pods.

The shadow runs as the ServiceAccount of deploy/optional/shadow.yaml (get, list and
watch only). Under upstream's default configuration, the one the cluster's scheduler
runs, it agrees on every decision but random tie-breaks; under another configuration
it differs where that configuration would have placed pods elsewhere. The API
server's audit log, which records every request of the shadow's user, shows reads
and not one write.
"""

from __future__ import annotations

import collections
import contextlib
import io
import json
import os
import re
import signal
import ssl
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.upstream.test_live import wait_for
from tests.upstream.test_rbac import apply, by_kind, manifests

from kubesched.backend.kube.api import KubeAPI, load_configuration
from kubesched.cli import main
from kubesched.config.load import load_config
from kubesched.shadow.app import Shadow, ShadowOptions
from kubesched.shadow.record import Recorder
from kubesched.simulator.api import simulate
from kubesched_testing.controlplane import ControlPlane, assets_dir, missing_assets_reason, reset_cluster

pytestmark = pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")
ROOT = Path(__file__).resolve().parents[2]
SHADOW_RBAC = ROOT / "deploy" / "optional" / "shadow.yaml"
USER = "system:serviceaccount:kube-system:kubesched-shadow"
PODS = "/api/v1/namespaces/{ns}/pods"
READS = {"get", "list", "watch"}
# Another configuration: pack pods instead of spreading them.
PACKING = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {"scoringStrategy": {"type": "MostAllocated"}},
                }
            ],
        }
    ],
}


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    """A control plane of its own whose audit log holds every request of the shadow's user."""
    assets = assets_dir()
    if assets is None:
        pytest.skip(missing_assets_reason())
    work = tmp_path_factory.mktemp("shadow-cp")
    policy = work / "shadow-audit.yaml"
    policy.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "audit.k8s.io/v1",
                "kind": "Policy",
                "omitStages": ["RequestReceived"],
                "rules": [{"level": "Metadata", "users": [USER]}, {"level": "None"}],
            }
        )
    )
    cp = ControlPlane(assets, work, extra_apiserver_args=[f"--audit-policy-file={policy}"])
    try:
        yield cp.start()
    finally:
        cp.stop()


@pytest.fixture(scope="module")
def admin(audited: ControlPlane) -> KubeAPI:
    return KubeAPI(load_configuration(str(audited.kubeconfig_path)), qps=0)


@pytest.fixture(scope="module")
def viewer_kubeconfig(audited: ControlPlane, admin: KubeAPI, tmp_path_factory: pytest.TempPathFactory) -> str:
    """deploy/optional/shadow.yaml applied; a kubeconfig with a token of its ServiceAccount."""
    docs = manifests(SHADOW_RBAC)
    apply(admin, docs)
    sa = by_kind(docs, "ServiceAccount")["metadata"]
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 3600}}
    token = admin.request(
        "POST", f"/api/v1/namespaces/{sa['namespace']}/serviceaccounts/{sa['name']}/token", body=request
    )["status"]["token"]
    return str(audited.write_kubeconfig(tmp_path_factory.mktemp("viewer") / "kubeconfig", token))


def node(api: KubeAPI, name: str, cpu: str, memory: str, zone: str) -> None:
    alloc = {"cpu": cpu, "memory": memory, "pods": "110"}
    labels = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}
    api.request(
        "POST", "/api/v1/nodes", body={"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}
    )
    api.request(
        "PATCH",
        f"/api/v1/nodes/{name}/status",
        body={"status": {"allocatable": alloc, "capacity": alloc}},
        content_type="application/merge-patch+json",
    )


def pod(api: KubeAPI, name: str, cpu: str, memory: str, app: str, ns: str = "default", **spec: Any) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": {"app": app}},
        "spec": {
            "containers": [
                {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu, "memory": memory}}}
            ],
            "terminationGracePeriodSeconds": 0,
            **spec,
        },
    }
    api.request("POST", PODS.format(ns=ns), body=body)


def spread(app: str) -> dict[str, Any]:
    return {
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": {"app": app}},
            }
        ]
    }


def churn(api: KubeAPI) -> int:
    """Nodes of unequal sizes, then pods of several shapes (some too big for any node): the pods created."""
    for i in range(6):
        node(api, f"n{i}", cpu=str(4 + 2 * i), memory=f"{8 + 3 * i}Gi", zone=f"z{i % 3}")
    with contextlib.suppress(Exception):
        api.request(
            "POST", "/api/v1/namespaces", body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "batch"}}
        )
    n = 0
    for i in range(12):
        pod(api, f"web-{i}", "500m", "512Mi", "web", **spread("web"))
        pod(api, f"job-{i}", "1", "2Gi", "job", ns="batch")
        n += 2
    for i in range(3):
        pod(api, f"huge-{i}", "64", "1Gi", "huge")
        n += 1
    return n


class Running:
    """A Shadow in a thread, its jsonl collected."""

    def __init__(self, shadow: Shadow) -> None:
        self.shadow, self.out = shadow, io.StringIO()
        shadow.out = self.out
        self.thread = threading.Thread(target=shadow.run, daemon=True)
        self.thread.start()

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.out.getvalue().splitlines() if line]

    def finish(self) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        self.shadow.stop.set()
        self.shadow.store.wake.set()
        self.thread.join(30)
        *decisions, summary = self.lines()
        return decisions, summary


def audit_entries(cp: ControlPlane) -> list[dict[str, Any]]:
    return [json.loads(line) for line in cp.audit_log_path.read_text().splitlines() if line.strip()]


def test_shadow_agrees_with_upstream_under_the_same_config_and_never_writes(
    audited: ControlPlane, admin: KubeAPI, viewer_kubeconfig: str
) -> None:
    reset_cluster(admin)
    same = Shadow(load_config(None), ShadowOptions(kubeconfig=viewer_kubeconfig))
    other = Shadow(load_config(PACKING), ShadowOptions(kubeconfig=viewer_kubeconfig))
    assert "kube-scheduler v1.36" in same.assumption()
    runs = [Running(same), Running(other)]
    for s in (same, other):
        assert s.store.wait_for_cache_sync(s.stop, 30)
    upstream = audited.start_scheduler({})
    try:
        # Upstream at work before the churn, as on a live cluster (at its start, it takes the pods created so
        # far in its informer's list order, not in the order they came).
        node(admin, "warm", cpu="1", memory="1Gi", zone="z9")
        pod(admin, "warm-up", "10m", "10Mi", "warm")
        wait_for(lambda: bound(admin) == 1, "upstream's first binding", 30)
        created = 1 + churn(admin)
        wait_for(lambda: all(len(r.lines()) >= created for r in runs), "every decision observed by both shadows", 60)
    finally:
        upstream.stop()
    decisions, summary = runs[0].finish()
    other_decisions, other_summary = runs[1].finish()
    table = {o: summary["outcomes"][o] for o in ("agree", "tie", "sampled", "differ")}
    print("same config:", table, "| packing:", other_summary["outcomes"])
    assert summary["observed"] == created == len(decisions)
    assert summary["outcomes"]["differ"] == 0, json.dumps([d for d in decisions if d["outcome"] == "differ"])
    assert summary["agree"] + summary["ties"] == created
    assert summary["byReason"]["Unschedulable"]["observed"] == 3
    assert all(d["tie"] for d in decisions if not d["agree"])
    # Packing onto the fullest node is another answer: the shadow says where, and why.
    assert other_summary["outcomes"]["differ"] > 0
    differing = [d for d in other_decisions if d["outcome"] == "differ" and d["actual"] and d["shadow"]]
    assert any("NodeResourcesFit" in d.get("scores", {}) for d in differing)
    entries = audit_entries(audited)
    requests = collections.Counter(e["verb"] for e in entries if e["user"]["username"] == USER)
    print("audit log, the shadow's user:", dict(requests))
    verbs = set(requests)
    assert {"list", "watch"} <= verbs
    assert verbs <= READS, sorted(verbs - READS)
    reset_cluster(admin)


def test_the_shadow_dry_runs_preemption_and_agrees_with_upstreams(
    audited: ControlPlane, admin: KubeAPI, viewer_kubeconfig: str
) -> None:
    """A full cluster, a high-priority pod: upstream nominates a node and evicts its victim. The shadow, which
    writes nothing, picks the same node and victim in its dry run, then agrees on the binding that follows."""
    reset_cluster(admin)
    for name, value in (("low", 10), ("mid", 20), ("high", 1000)):
        admin.request(
            "POST",
            "/apis/scheduling.k8s.io/v1/priorityclasses",
            body={
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": name},
                "value": value,
            },
        )
    for i in range(3):
        node(admin, f"n{i}", cpu="2", memory="4Gi", zone=f"z{i}")
    # Every node full, the lowest priority on n1 only: preemption's choice is not a tie.
    for i, pc in enumerate(("mid", "low", "mid")):
        pod(admin, f"{pc}-{i}", "1500m", "1Gi", pc, nodeName=f"n{i}", priorityClassName=pc)
    shadow = Running(Shadow(load_config(None), ShadowOptions(kubeconfig=viewer_kubeconfig)))
    assert shadow.shadow.store.wait_for_cache_sync(shadow.shadow.stop, 30)
    upstream = audited.start_scheduler({})
    try:
        pod(admin, "urgent", "1", "1Gi", "urgent", priorityClassName="high")
        wait_for(lambda: len(shadow.lines()) >= 2, "the preemption and the binding after it, observed", 60)
    finally:
        upstream.stop()
    decisions, summary = shadow.finish()
    assert [p["spec"].get("nodeName") for p in pods(admin) if p["metadata"]["name"] == "urgent"] == ["n1"]
    preempting, bound_after = decisions
    print("preemption:", preempting.get("preemption"))
    assert preempting["reason"] == "Unschedulable" and preempting["agree"]
    assert preempting["preemption"] == {
        "actual": {"node": "n1", "victims": ["default/low-1"]},
        "shadow": {"node": "n1", "victims": ["default/low-1"]},
        "agree": True,
    }
    assert (bound_after["actual"], bound_after["outcome"]) == ("n1", "agree")
    assert summary["preemption"] == {"observed": 1, "agree": 1}
    verbs = {e["verb"] for e in audit_entries(audited) if e["user"]["username"] == USER}
    assert verbs <= READS, sorted(verbs - READS)
    reset_cluster(admin)


def test_a_recorded_trace_replays_to_upstreams_placements(
    audited: ControlPlane, admin: KubeAPI, viewer_kubeconfig: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Upstream binds a churn of pods while nodes come, go and are cordoned; the trace, replayed by
    `simulate` under the same (default) configuration, places every pod where upstream did."""
    reset_cluster(admin)
    # Sizes chosen so that no two nodes score alike: few random tie-breaks.
    for i, (cpu, memory) in enumerate((("4300m", "8Gi"), ("7100m", "13Gi"), ("10700m", "19Gi"), ("13900m", "23Gi"))):
        node(admin, f"n{i}", cpu=cpu, memory=memory, zone=f"z{i % 2}")
    pod(admin, "early", "1", "1Gi", "web")  # pending at the start: the trace holds it unbound
    recorder = Recorder(viewer_kubeconfig)
    thread = threading.Thread(target=recorder.run, args=(None,), daemon=True)
    thread.start()
    shadow = Running(Shadow(load_config(None), ShadowOptions(kubeconfig=viewer_kubeconfig)))  # to tell the ties
    wait_for(lambda: recorder.trace.began, "the recorder's informers to sync", 30)
    assert shadow.shadow.store.wait_for_cache_sync(shadow.shadow.stop, 30)
    upstream = audited.start_scheduler({})
    try:
        # Upstream at work before the churn, as on a live cluster (at its start, it would take the pods
        # created so far in its informer's order, not in the order they came).
        wait_for(lambda: bound(admin) == 1, "upstream's first binding", 30)
        for i in range(8):
            pod(admin, f"a-{i}", "700m", "1Gi", "web", **spread("web"))
        wait_for(lambda: bound(admin) >= 9, "the first wave bound", 30)
        admin.request(
            "PATCH",
            "/api/v1/nodes/n3",
            body={"spec": {"unschedulable": True}},
            content_type="application/merge-patch+json",
        )
        node(admin, "n9", cpu="9500m", memory="21Gi", zone="z1")
        for i in range(0, 8, 3):
            admin.request("DELETE", f"{PODS.format(ns='default')}/a-{i}", query={"gracePeriodSeconds": "0"})
        for i in range(8):
            pod(admin, f"b-{i}", "1200m", "2Gi", "db")
        pod(admin, "too-big", "100", "1Gi", "huge")
        wait_for(lambda: bound(admin) >= 14, "the second wave bound", 30)
        time.sleep(1.0)  # the last watch events reach the recorder
    finally:
        upstream.stop()
        recorder.stop.set()
        thread.join(30)
        decisions, _ = shadow.finish()
    actual = {f"default/{p['metadata']['name']}": p["spec"].get("nodeName") for p in pods(admin)}
    trace = tmp_path / "trace.yaml"
    with trace.open("w") as f:
        recorder.trace.write(f)
    counts = recorder.trace.counts()
    assert counts["create"] >= 18 and counts["delete"] == 3 and counts["update"] >= 1, counts
    placed = simulate(trace).placements()
    # Up to the first random tie-break (the shadow marks them), the replay must place every pod as upstream did;
    # after one, the two clusters may rightly part.
    order = [d["pod"] for d in decisions if d["actual"]]
    first_tie = next((i for i, d in enumerate(decisions) if d["tie"]), len(decisions))
    before = [key for key in order[:first_tie] if key in actual]
    print(f"replay: {len(order)} bindings, first tie at {first_tie}, compared {len(before)}")
    assert len(before) >= 10
    assert {k: placed.get(k) for k in before} == {k: actual[k] for k in before}
    if first_tie == len(decisions):
        assert {k: v for k, v in placed.items() if k in actual} == actual
    # The trace is an input like any other: under another configuration, side by side with the default.
    packing = tmp_path / "packing.yaml"
    packing.write_text(yaml.safe_dump(PACKING))
    capsys.readouterr()
    assert (
        main(["whatif", "compare", str(trace), "--config", "default", "--config", str(packing), "--output", "json"])
        == 0
    )
    assert json.loads(capsys.readouterr().out)
    verbs = {e["verb"] for e in audit_entries(audited) if e["user"]["username"] == USER}
    assert verbs <= READS, sorted(verbs - READS)
    reset_cluster(admin)


def test_a_trace_records_changes_of_other_objects_and_the_replay_applies_them(
    audited: ControlPlane, admin: KubeAPI, viewer_kubeconfig: str, tmp_path: Path
) -> None:
    """On a real API server (nothing else running): a ReplicaSet scaled, a PriorityClass redescribed, a Service
    relabelled and a gated pod ungated become exactly those merge patches, none of the server's bookkeeping
    (resource versions, managed fields, generations); simulate applies them all, and places the pod."""
    reset_cluster(admin)
    node(admin, "n0", cpu="4", memory="8Gi", zone="z0")
    admin.request(
        "POST",
        "/apis/scheduling.k8s.io/v1/priorityclasses",
        body={"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "batch"}, "value": 5},
    )
    template = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    rs = {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": template}
    admin.request(
        "POST",
        "/apis/apps/v1/namespaces/default/replicasets",
        body={"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web"}, "spec": rs},
    )
    service = {"selector": {"app": "web"}, "ports": [{"port": 80}]}
    admin.request(
        "POST",
        "/api/v1/namespaces/default/services",
        body={"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}, "spec": service},
    )
    pod(admin, "gated", "1", "1Gi", "gated", schedulingGates=[{"name": "example.com/wait"}])
    recorder = Recorder(viewer_kubeconfig)
    thread = threading.Thread(target=recorder.run, args=(None,), daemon=True)
    thread.start()
    try:
        wait_for(lambda: recorder.trace.began, "the recorder's informers to sync", 30)
        merge = "application/merge-patch+json"
        admin.request(
            "PATCH",
            "/apis/apps/v1/namespaces/default/replicasets/web",
            body={"spec": {"replicas": 3}},
            content_type=merge,
        )
        admin.request(
            "PATCH",
            "/apis/scheduling.k8s.io/v1/priorityclasses/batch",
            body={"description": "for the night"},
            content_type=merge,
        )
        admin.request(
            "PATCH",
            "/api/v1/namespaces/default/services/web",
            body={"metadata": {"labels": {"tier": "front"}}},
            content_type=merge,
        )
        admin.request(
            "PATCH",
            f"{PODS.format(ns='default')}/gated",
            body={"metadata": {"labels": {"app": "gated", "ready": "yes"}}, "spec": {"schedulingGates": None}},
            content_type=merge,
        )
        time.sleep(1.0)  # the last watch events reach the recorder
    finally:
        recorder.stop.set()
        thread.join(30)
    updates = sorted(
        (u["kind"], u["name"], json.dumps(u["patch"], sort_keys=True))
        for step in recorder.trace.steps
        for u in step.get("update", ())
    )
    assert updates == sorted(
        [
            ("ReplicaSet", "web", json.dumps({"spec": {"replicas": 3}})),
            ("PriorityClass", "batch", json.dumps({"description": "for the night"})),
            ("Service", "web", json.dumps({"metadata": {"labels": {"tier": "front"}}})),
            (
                "Pod",
                "gated",
                json.dumps(
                    {"metadata": {"labels": {"app": "gated", "ready": "yes"}}, "spec": {"schedulingGates": None}},
                    sort_keys=True,
                ),
            ),
        ]
    ), updates
    trace = tmp_path / "trace.yaml"
    with trace.open("w") as f:
        recorder.trace.write(f)
    result = simulate(trace)
    assert result.warnings == ()
    assert result.placements() == {"default/gated": "n0"}
    reset_cluster(admin)


def pods(api: KubeAPI) -> list[dict[str, Any]]:
    return list(api.request("GET", PODS.format(ns="default")).get("items") or ())


def bound(api: KubeAPI) -> int:
    return sum(1 for p in pods(api) if p["spec"].get("nodeName"))


def test_the_command_prints_a_summary_on_sigterm_and_serves_its_counters(
    audited: ControlPlane, admin: KubeAPI, viewer_kubeconfig: str, tmp_path: Path
) -> None:
    """`kubesched shadow` as a user runs it: the assumption and the sync said once on stderr, a line per
    decision, /metrics counting them behind the secure port, the Summary last on SIGTERM, status 0."""
    reset_cluster(admin)
    node(admin, "n0", cpu="4", memory="8Gi", zone="z0")
    node(admin, "n1", cpu="8", memory="16Gi", zone="z1")
    err_path = tmp_path / "stderr"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    with err_path.open("w") as err:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kubesched",
                "shadow",
                "--kubeconfig",
                viewer_kubeconfig,
                "--metrics-address",
                "127.0.0.1:0",
                "--authorization-always-allow-paths",
                "/healthz,/metrics",
                "--report",
                str(tmp_path / "report.html"),
            ],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            env=env,
        )
    upstream = audited.start_scheduler({})
    try:
        wait_for(lambda: "watching 2 nodes" in err_path.read_text(), "the shadow's informers to sync", 60)
        served = re.search(r"serving metrics securely on 127\.0\.0\.1:(\d+)", err_path.read_text())
        assert served is not None, err_path.read_text()
        port = int(served.group(1))
        for i in range(4):
            pod(admin, f"p-{i}", "500m", "512Mi", "web")
        pod(admin, "too-big", "64", "1Gi", "huge")

        def metrics() -> str:
            ctx = ssl.create_default_context()
            ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
            with urllib.request.urlopen(f"https://127.0.0.1:{port}/metrics", context=ctx, timeout=10) as resp:
                return resp.read().decode()

        wait_for(lambda: 'decisions_observed_total{reason="Scheduled"} 4.0' in metrics(), "four bindings counted", 60)
        assert 'kubesched_shadow_decisions_observed_total{reason="Unschedulable"} 1.0' in metrics()
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    finally:
        upstream.stop()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0
    *lines, last = [json.loads(line) for line in out.splitlines()]
    assert len(lines) == 5 and all(line["agree"] or line["tie"] for line in lines)
    assert last["kind"] == "Summary" and last["observed"] == 5 and last["outcomes"]["differ"] == 0
    stderr = err_path.read_text()
    assert stderr.count("assuming the cluster's scheduler is kube-scheduler v1.36") == 1
    assert "Traceback" not in stderr
    assert "<h1>kubesched shadow</h1>" in (tmp_path / "report.html").read_text()
    reset_cluster(admin)


def test_the_record_command_writes_a_trace_simulate_reads(
    audited: ControlPlane, admin: KubeAPI, viewer_kubeconfig: str, tmp_path: Path
) -> None:
    """`kubesched record --duration`, as the viewer: the trace holds the start and what came after, and
    `kubesched simulate` takes it."""
    reset_cluster(admin)
    node(admin, "n0", cpu="4", memory="8Gi", zone="z0")
    trace = tmp_path / "trace.yaml"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubesched", "record", "--kubeconfig", viewer_kubeconfig, "-o", str(trace)]
        + ["--duration", "3s"],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stderr is not None
    first = ""
    while "recording from" not in first:  # the informers have listed: what comes now is churn
        first = proc.stderr.readline()
        assert first, "record ended before it started recording"
    pod(admin, "late", "1", "1Gi", "web")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert re.search(r"kubesched: record: .*trace\.yaml: \d+ objects at the start, then 1 created", err), err
    docs = list(yaml.safe_load_all(trace.read_text()))
    scenario = docs[-1]
    assert scenario["kind"] == "Scenario" and any(d["kind"] == "Node" for d in docs[:-1])
    assert [c["metadata"]["name"] for s in scenario["steps"] for c in s.get("create", ())] == ["late"]
    assert simulate(trace).placements() == {"default/late": "n0"}
    reset_cluster(admin)
