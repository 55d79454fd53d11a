"""Workloads become their controllers' pods in `kubesched simulate`: names, labels, owners, placement, scenarios.

Each test runs the simulator end to end, through the command line where the output is
the point and through `simulate()` where the pods' objects are (the embedded cluster).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.backend.embedded.controllers import controller_utils
from kubesched.backend.embedded.controllers.controller_utils import ALPHANUMS
from kubesched.cli import main
from kubesched.simulator.load import load_manifests
from kubesched.simulator.report import to_json
from kubesched.simulator.run import build_config, simulate

Obj = dict[str, Any]
SUFFIX = f"[{ALPHANUMS}]{{5}}"
HASH = "[4-9bcdf]{1,10}"  # a decimal number's digits mapped into the alphabet, as SafeEncodeString does


def node(name: str, *, cpu: str = "4", labels: Obj | None = None, **spec: Any) -> Obj:
    out: Obj = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "20"}},
    }
    if spec:
        out["spec"] = spec
    return out


def template(labels: Obj, cpu: str = "100m", **spec: Any) -> Obj:
    return {
        "metadata": {"labels": labels},
        "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}], **spec},
    }


def deployment(name: str, replicas: int | None = 3, **spec: Any) -> Obj:
    body: Obj = {"selector": {"matchLabels": {"app": name}}, "template": template({"app": name}), **spec}
    if replicas is not None:
        body["replicas"] = replicas
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}, "spec": body}


def workload(kind: str, name: str, **spec: Any) -> Obj:
    api = {"Job": "batch/v1", "CronJob": "batch/v1", "ReplicationController": "v1"}.get(kind, "apps/v1")
    return {"apiVersion": api, "kind": kind, "metadata": {"name": name}, "spec": spec}


def job(name: str, **spec: Any) -> Obj:
    body = {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}, **spec}
    return workload("Job", name, **body)


class Run:
    """One simulation: the contract's JSON and the embedded cluster it ended with."""

    def __init__(self, tmp_path: Path, docs: list[Obj], seed: int = 3) -> None:
        f = tmp_path / "in.yaml"
        f.write_text(yaml.safe_dump_all(docs, sort_keys=False))
        loaded = load_manifests([str(f)])
        result = simulate(loaded, build_config(loaded, None, ""), seed=seed)
        assert result.scheduler is not None
        self.doc = to_json(result, record=False)
        self.cluster: Any = result.scheduler.lister

    def objects(self, kind: str) -> list[Obj]:
        return sorted(self.cluster.list(kind), key=lambda o: o["metadata"]["name"])

    def pods(self, owner: str | None = None) -> list[Obj]:
        pods = self.objects("Pod")
        if owner is None:
            return pods
        return [p for p in pods if self.entry(p["metadata"]["name"]).get("owner") == owner]

    def entry(self, name: str) -> Obj:
        return next((p for p in self.doc["pods"] if p["name"] == name), {})


def ref(kind: str, name: str, uid: str, api: str = "apps/v1") -> Obj:
    return {"apiVersion": api, "kind": kind, "name": name, "uid": uid, "controller": True, "blockOwnerDeletion": True}


def cli(tmp_path: Path, capsys: pytest.CaptureFixture[str], docs: list[Obj], *extra: str) -> tuple[int, Obj, str]:
    f = tmp_path / "cli.yaml"
    f.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    code = main(["simulate", str(f), "--output", "json", "--seed", "1", *extra])
    out = capsys.readouterr()
    return code, (json.loads(out.out) if out.out else {}), out.err


# Deployments and ReplicaSets.


def test_deployment_makes_a_replica_set_and_its_pods(tmp_path: Path) -> None:
    run = Run(tmp_path, [node("a"), deployment("web")])
    d = run.cluster.get("Deployment", "default", "web")
    (rs,) = run.objects("ReplicaSet")
    pod_hash = rs["metadata"]["labels"]["pod-template-hash"]
    assert re.fullmatch(HASH, pod_hash)
    assert rs["metadata"]["name"] == f"web-{pod_hash}"
    assert rs["metadata"]["ownerReferences"] == [ref("Deployment", "web", d["metadata"]["uid"])]
    assert rs["spec"]["replicas"] == 3
    assert rs["spec"]["selector"] == {"matchLabels": {"app": "web", "pod-template-hash": pod_hash}}
    assert rs["spec"]["template"]["metadata"]["labels"] == {"app": "web", "pod-template-hash": pod_hash}
    assert rs["metadata"]["annotations"] == {
        "deployment.kubernetes.io/revision": "1",
        "deployment.kubernetes.io/desired-replicas": "3",
        "deployment.kubernetes.io/max-replicas": "4",  # 3 + maxSurge 25% rounded up
    }
    pods = run.pods()
    assert len(pods) == 3
    for pod in pods:
        assert re.fullmatch(f"web-{pod_hash}-{SUFFIX}", pod["metadata"]["name"])
        assert pod["metadata"]["labels"]["app"] == "web"
        assert pod["metadata"]["labels"]["pod-template-hash"] == pod_hash
        assert pod["metadata"]["ownerReferences"] == [ref("ReplicaSet", rs["metadata"]["name"], rs["metadata"]["uid"])]
        assert pod["spec"]["nodeName"] == "a"
        assert run.entry(pod["metadata"]["name"])["owner"] == "Deployment/web"
    assert {p["metadata"]["uid"] for p in pods} != {None} and len({p["metadata"]["uid"] for p in pods}) == 3


def test_names_repeat_with_the_seed(tmp_path: Path) -> None:
    docs = [node("a"), deployment("web"), workload("DaemonSet", "agent", **_daemon_spec())]
    first = [p["metadata"]["name"] for p in Run(tmp_path, docs, seed=7).pods()]
    again = [p["metadata"]["name"] for p in Run(tmp_path, docs, seed=7).pods()]
    other = [p["metadata"]["name"] for p in Run(tmp_path, docs, seed=8).pods()]
    assert first == again
    assert first != other


def test_listed_replica_set_and_pods_are_counted_not_duplicated(tmp_path: Path) -> None:
    """`kubectl get all` output: the Deployment, its ReplicaSet and two of three pods; one pod is missing."""
    d = deployment("web")
    d["metadata"]["uid"] = "d-uid"
    labels = {"app": "web", "pod-template-hash": "5d8f7"}
    rs = workload(
        "ReplicaSet",
        "web-5d8f7",
        replicas=3,
        selector={"matchLabels": labels},
        template=template(labels),
    )
    rs["metadata"].update(uid="rs-uid", labels=labels, ownerReferences=[ref("Deployment", "web", "d-uid")])
    listed = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"web-5d8f7-{s}",
                "labels": labels,
                "ownerReferences": [ref("ReplicaSet", "web-5d8f7", "rs-uid")],
            },
            "spec": {"nodeName": "a", "containers": [{"name": "c", "image": "i"}]},
        }
        for s in ("aaaaa", "bbbbb")
    ]
    run = Run(tmp_path, [node("a"), d, rs, *listed])
    assert [r["metadata"]["name"] for r in run.objects("ReplicaSet")] == ["web-5d8f7"]
    pods = run.pods()
    assert len(pods) == 3
    (new,) = [p for p in pods if p["metadata"]["name"] not in ("web-5d8f7-aaaaa", "web-5d8f7-bbbbb")]
    assert re.fullmatch(f"web-5d8f7-{SUFFIX}", new["metadata"]["name"])
    assert [p["name"] for p in run.doc["pods"]] == [new["metadata"]["name"]]
    assert run.doc["pods"][0]["owner"] == "Deployment/web"


def test_replica_set_adopts_matching_orphans_and_deletes_the_surplus_pending_first(tmp_path: Path) -> None:
    rs = workload(
        "ReplicaSet", "rs", replicas=2, selector={"matchLabels": {"app": "x"}}, template=template({"app": "x"})
    )
    orphans = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "labels": {"app": "x"}},
            "spec": {"containers": [{"name": "c", "image": "i"}], **({"nodeName": "a"} if bound else {})},
        }
        for name, bound in (("p1", True), ("p2", False), ("p3", True))
    ]
    run = Run(tmp_path, [node("a"), rs, *orphans])
    pods = run.pods()
    assert [p["metadata"]["name"] for p in pods] == ["p1", "p3"]  # the unscheduled one goes first
    uid = run.cluster.get("ReplicaSet", "default", "rs")["metadata"]["uid"]
    for pod in pods:
        assert pod["metadata"]["ownerReferences"] == [ref("ReplicaSet", "rs", uid)]
    assert run.doc["pods"] == []  # p2 was deleted before any attempt
    assert [(e["pod"], e["type"]) for e in run.doc["events"]] == [("default/p2", "Deleted")]


def test_replication_controller_defaults_its_selector_from_the_template(tmp_path: Path) -> None:
    rc = workload("ReplicationController", "legacy", replicas=2, template=template({"tier": "old"}))
    run = Run(tmp_path, [node("a"), rc])
    uid = run.cluster.get("ReplicationController", "default", "legacy")["metadata"]["uid"]
    pods = run.pods()
    assert len(pods) == 2
    for pod in pods:
        assert re.fullmatch(f"legacy-{SUFFIX}", pod["metadata"]["name"])
        assert pod["metadata"]["ownerReferences"] == [ref("ReplicationController", "legacy", uid, "v1")]
        assert pod["metadata"]["labels"] == {"tier": "old"}


def test_a_replica_set_without_template_only_selects(tmp_path: Path) -> None:
    """A ReplicaSet listed for spreading (no template) makes no pods and adopts none."""
    rs = workload("ReplicaSet", "rs", replicas=5, selector={"matchLabels": {"app": "x"}})
    orphan = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"app": "x"}},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }
    run = Run(tmp_path, [node("a"), rs, orphan])
    (pod,) = run.pods()
    assert "ownerReferences" not in pod["metadata"]


def test_paused_deployment_makes_nothing(tmp_path: Path) -> None:
    run = Run(tmp_path, [node("a"), deployment("web", paused=True)])
    assert run.objects("ReplicaSet") == [] and run.pods() == []


# StatefulSets.


def _sts(name: str = "db", replicas: int = 3, **spec: Any) -> Obj:
    return workload(
        "StatefulSet",
        name,
        replicas=replicas,
        serviceName=name,
        selector={"matchLabels": {"app": name}},
        template=template({"app": name}),
        **spec,
    )


def test_stateful_set_pods_come_in_order_with_identity_and_claims(tmp_path: Path) -> None:
    sc = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "fast", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
        "provisioner": "csi.example.com",
        "volumeBindingMode": "WaitForFirstConsumer",
    }
    claim = {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    run = Run(tmp_path, [node("a"), sc, _sts(volumeClaimTemplates=[claim])])
    sts = run.cluster.get("StatefulSet", "default", "db")
    pods = run.pods()
    assert [p["metadata"]["name"] for p in pods] == ["db-0", "db-1", "db-2"]
    revision = pods[0]["metadata"]["labels"]["controller-revision-hash"]
    assert re.fullmatch(f"db-{HASH}", revision)
    for i, pod in enumerate(pods):
        assert pod["metadata"]["labels"] == {
            "app": "db",
            "statefulset.kubernetes.io/pod-name": f"db-{i}",
            "apps.kubernetes.io/pod-index": str(i),
            "controller-revision-hash": revision,
        }
        assert pod["metadata"]["ownerReferences"] == [ref("StatefulSet", "db", sts["metadata"]["uid"])]
        assert pod["spec"]["hostname"] == f"db-{i}" and pod["spec"]["subdomain"] == "db"
        assert pod["spec"]["volumes"] == [{"name": "data", "persistentVolumeClaim": {"claimName": f"data-db-{i}"}}]
        assert pod["spec"]["nodeName"] == "a"
    claims = run.objects("PersistentVolumeClaim")
    assert [c["metadata"]["name"] for c in claims] == ["data-db-0", "data-db-1", "data-db-2"]
    for c in claims:
        assert c["metadata"]["labels"] == {"app": "db"}
        assert c["spec"]["storageClassName"] == "fast"  # DefaultStorageClass admission
        assert c["status"]["phase"] == "Bound"  # provisioned for the node the scheduler chose
    # OrderedReady: each pod was created (and bound) after the one before it was bound.
    events = [(e["pod"], e["type"]) for e in run.doc["events"] if e["type"] == "Bound"]
    assert events == [("default/db-0", "Bound"), ("default/db-1", "Bound"), ("default/db-2", "Bound")]


def test_ordered_ready_stops_at_an_unschedulable_pod_parallel_does_not(tmp_path: Path) -> None:
    big = template({"app": "db"}, cpu="8")
    ordered = Run(tmp_path, [node("a"), {**_sts(), "spec": {**_sts()["spec"], "template": big}}])
    assert [p["metadata"]["name"] for p in ordered.pods()] == ["db-0"]
    assert ordered.doc["pods"][0]["result"] == "Unschedulable"
    parallel_spec = {**_sts()["spec"], "template": big, "podManagementPolicy": "Parallel"}
    parallel = Run(tmp_path, [node("a"), {**_sts(), "spec": parallel_spec}])
    assert [p["metadata"]["name"] for p in parallel.pods()] == ["db-0", "db-1", "db-2"]


def test_stateful_set_start_ordinal_and_existing_claims(tmp_path: Path) -> None:
    existing = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data-db-5", "labels": {"mine": "yes"}},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    pv = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "pv"},
        "spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}, "hostPath": {"path": "/x"}},
    }
    claim = {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    run = Run(
        tmp_path, [node("a"), pv, existing, _sts(replicas=1, ordinals={"start": 5}, volumeClaimTemplates=[claim])]
    )
    assert [p["metadata"]["name"] for p in run.pods()] == ["db-5"]
    (pvc,) = run.objects("PersistentVolumeClaim")
    assert pvc["metadata"]["labels"] == {"mine": "yes"}  # the claim there is used, not replaced


# DaemonSets.


def _daemon_spec(**pod_spec: Any) -> Obj:
    return {"selector": {"matchLabels": {"app": "agent"}}, "template": template({"app": "agent"}, **pod_spec)}


DAEMON_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
]


def test_daemon_set_pod_per_eligible_node_pinned_and_tolerating(tmp_path: Path) -> None:
    nodes = [
        node("a", labels={"pool": "general"}),
        node("b", labels={"pool": "general"}, taints=[{"key": "gpu", "value": "x", "effect": "NoSchedule"}]),
        node("c", labels={"pool": "general"}, unschedulable=True),  # cordoned: daemon pods tolerate that
        node("d", labels={"pool": "other"}),
        node(
            "e",
            labels={"pool": "general"},
            taints=[{"key": "node.kubernetes.io/disk-pressure", "effect": "NoSchedule"}],
        ),
    ]
    ds = workload("DaemonSet", "agent", **_daemon_spec(nodeSelector={"pool": "general"}))
    run = Run(tmp_path, [*nodes, ds])
    uid = run.cluster.get("DaemonSet", "default", "agent")["metadata"]["uid"]
    pods = run.pods()
    assert sorted(p["spec"]["nodeName"] for p in pods) == ["a", "c", "e"]
    for pod in pods:
        target = pod["spec"]["nodeName"]
        assert re.fullmatch(f"agent-{SUFFIX}", pod["metadata"]["name"])
        assert pod["metadata"]["ownerReferences"] == [ref("DaemonSet", "agent", uid)]
        assert re.fullmatch(HASH, pod["metadata"]["labels"]["controller-revision-hash"])
        assert pod["metadata"]["labels"]["pod-template-generation"] == "1"
        assert pod["spec"]["affinity"] == {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [target]}]}
                    ]
                }
            }
        }
        assert pod["spec"]["tolerations"] == DAEMON_TOLERATIONS
        assert run.entry(pod["metadata"]["name"])["owner"] == "DaemonSet/agent"


def test_daemon_set_replaces_required_node_affinity_and_tolerates_network_for_host_network(tmp_path: Path) -> None:
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "pool", "operator": "In", "values": ["x"]}]}]
            },
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 1, "preference": {"matchExpressions": [{"key": "k", "operator": "Exists"}]}}
            ],
        }
    }
    ds = workload("DaemonSet", "agent", **_daemon_spec(affinity=affinity, hostNetwork=True))
    run = Run(tmp_path, [node("a", labels={"pool": "x"}), node("b", labels={"pool": "y"}), ds])
    (pod,) = run.pods()
    assert pod["spec"]["nodeName"] == "a"
    node_affinity = pod["spec"]["affinity"]["nodeAffinity"]
    assert node_affinity["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] == [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}]}
    ]
    assert (
        node_affinity["preferredDuringSchedulingIgnoredDuringExecution"]
        == affinity["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    )
    assert pod["spec"]["tolerations"][-1] == {
        "key": "node.kubernetes.io/network-unavailable",
        "operator": "Exists",
        "effect": "NoSchedule",
    }


# Jobs and CronJobs.


def test_job_runs_parallelism_pods_with_the_generated_labels(tmp_path: Path) -> None:
    run = Run(tmp_path, [node("a"), job("batch", parallelism=2, completions=5)])
    uid = run.cluster.get("Job", "default", "batch")["metadata"]["uid"]
    pods = run.pods()
    assert len(pods) == 2
    for pod in pods:
        assert re.fullmatch(f"batch-{SUFFIX}", pod["metadata"]["name"])
        assert pod["metadata"]["labels"] == {
            "job-name": "batch",
            "batch.kubernetes.io/job-name": "batch",
            "controller-uid": uid,
            "batch.kubernetes.io/controller-uid": uid,
        }
        assert pod["metadata"]["finalizers"] == ["batch.kubernetes.io/job-tracking"]
        assert pod["metadata"]["ownerReferences"] == [ref("Job", "batch", uid, "batch/v1")]


@pytest.mark.parametrize(
    ("spec", "status", "expected"),
    [
        pytest.param({}, None, 1, id="defaults: one pod"),
        pytest.param({"parallelism": 4}, None, 4, id="parallelism without completions"),
        pytest.param({"parallelism": 4, "completions": 2}, None, 2, id="no more than completions"),
        pytest.param({"parallelism": 2, "completions": 5}, {"succeeded": 4}, 1, id="completions left"),
        pytest.param({"parallelism": 3, "suspend": True}, None, 0, id="suspended"),
        pytest.param({"parallelism": 3}, {"conditions": [{"type": "Complete", "status": "True"}]}, 0, id="finished"),
        pytest.param({"parallelism": 2, "managedBy": "kueue.x-k8s.io/multikueue"}, None, 0, id="managed elsewhere"),
    ],
)
def test_job_pod_counts(tmp_path: Path, spec: Obj, status: Obj | None, expected: int) -> None:
    j = job("batch", **spec)
    if status is not None:
        j["status"] = status
    assert len(Run(tmp_path, [node("a"), j]).pods()) == expected


def test_indexed_job_pods_take_the_lowest_free_indexes(tmp_path: Path) -> None:
    j = job("idx", parallelism=2, completions=4, completionMode="Indexed")
    j["status"] = {"completedIndexes": "0"}
    pods = Run(tmp_path, [node("a"), j]).pods()
    by_index = {p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]: p for p in pods}
    assert sorted(by_index) == ["1", "2"]
    for index, pod in by_index.items():
        assert re.fullmatch(f"idx-{index}-{SUFFIX}", pod["metadata"]["name"])
        assert pod["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] == index
        assert pod["spec"]["hostname"] == f"idx-{index}"
        assert pod["spec"]["containers"][0]["env"] == [
            {
                "name": "JOB_COMPLETION_INDEX",
                "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['batch.kubernetes.io/job-completion-index']"}},
            }
        ]


def _cron(**spec: Any) -> Obj:
    job_template = {"spec": {"template": {"spec": {"restartPolicy": "OnFailure", "containers": [{"name": "c"}]}}}}
    return workload("CronJob", "nightly", **{"schedule": "0 3 * * *", "jobTemplate": job_template, **spec})


def test_cron_job_starts_the_job_of_its_latest_tick(tmp_path: Path) -> None:
    run = Run(tmp_path, [node("a"), _cron()])
    cj = run.cluster.get("CronJob", "default", "nightly")
    (j,) = run.objects("Job")
    # Virtual time 0 is 2026-01-01T00:00:00Z; the latest 03:00 before it is 2025-12-31T03:00Z, minute 29452500.
    assert j["metadata"]["name"] == "nightly-29452500"
    assert j["metadata"]["annotations"] == {"batch.kubernetes.io/cronjob-scheduled-timestamp": "2025-12-31T03:00:00Z"}
    assert j["metadata"]["ownerReferences"] == [ref("CronJob", "nightly", cj["metadata"]["uid"], "batch/v1")]
    assert cj["status"]["lastScheduleTime"] == "2025-12-31T03:00:00Z"
    (pod,) = run.pods()
    assert re.fullmatch(f"nightly-29452500-{SUFFIX}", pod["metadata"]["name"])
    assert run.entry(pod["metadata"]["name"])["owner"] == "CronJob/nightly"


@pytest.mark.parametrize(
    ("spec", "status", "jobs"),
    [
        pytest.param({"timeZone": "America/New_York"}, None, ["nightly-29452800"], id="time zone: 03:00 EST"),
        pytest.param({"suspend": True}, None, [], id="suspended"),
        pytest.param({}, {"lastScheduleTime": "2025-12-31T03:00:00Z"}, [], id="tick already started"),
        pytest.param({"startingDeadlineSeconds": 3600}, None, [], id="too late to start"),
        pytest.param({"schedule": "*/15 * * * *"}, None, ["nightly-29453760"], id="tick is now"),
    ],
)
def test_cron_job_ticks(tmp_path: Path, spec: Obj, status: Obj | None, jobs: list[str]) -> None:
    cj = _cron(**spec)
    if status is not None:
        cj["status"] = status
    assert [j["metadata"]["name"] for j in Run(tmp_path, [node("a"), cj]).objects("Job")] == jobs


def test_cron_job_forbid_waits_for_its_active_job(tmp_path: Path) -> None:
    cj = _cron(concurrencyPolicy="Forbid")
    cj["metadata"]["uid"] = "cj-uid"
    active = job("nightly-29451060")
    active["metadata"]["ownerReferences"] = [ref("CronJob", "nightly", "cj-uid", "batch/v1")]
    run = Run(tmp_path, [node("a"), cj, active])
    assert [j["metadata"]["name"] for j in run.objects("Job")] == ["nightly-29451060"]


# What the input may hold besides.


def test_kinds_kubesched_does_not_use_are_skipped_with_one_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    skipped: list[Obj] = [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}},
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"k": "v"}},
        {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "i"}, "spec": {}},
        {"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor", "metadata": {"name": "m"}},
    ]
    code, doc, err = cli(tmp_path, capsys, [node("a"), *skipped, deployment("web", replicas=1)])
    assert code == 0
    warning = (
        "skipped 5 object(s) of kinds kubesched does not use: ConfigMap (2), Ingress (1), Secret (1), "
        "ServiceMonitor.monitoring.coreos.com (1)"
    )
    assert doc["warnings"] == [warning]
    assert err.count("skipped") == 1 and warning in err
    assert [p["owner"] for p in doc["pods"]] == ["Deployment/web"]


@pytest.mark.parametrize(
    ("doc", "needles"),
    [
        pytest.param(
            {"apiVersion": "apps/v1", "kind": "Deploymnet", "metadata": {"name": "w"}},
            ['unknown kind "Deploymnet"'],
            id="typo in a built-in group",
        ),
        pytest.param(
            {
                **deployment("web"),
                "spec": {**deployment("web")["spec"], "template": template({"app": "web"}, cpu="1x")},
            },
            ["(Deployment default/web)", "spec.template.spec.containers[0].resources.requests[cpu]"],
            id="bad template",
        ),
    ],
)
def test_workload_mistakes_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], doc: Obj, needles: list[str]
) -> None:
    code, out, err = cli(tmp_path, capsys, [node("a"), doc])
    assert code == 2 and out == {}
    for needle in needles:
        assert needle in err, err


def test_pods_the_api_server_refuses_are_a_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The Deployment is valid; its pods name a missing PriorityClass, so the ReplicaSet cannot create them."""
    d = deployment("web", replicas=2)
    d["spec"]["template"]["spec"]["priorityClassName"] = "missing"
    code, doc, err = cli(tmp_path, capsys, [node("a"), d])
    assert code == 0 and doc["pods"] == []
    (warning,) = doc["warnings"]
    assert warning.startswith("ReplicaSet default/web-") and "no PriorityClass with name missing was found" in warning
    assert warning in err


# Scenarios: workloads created, scaled and deleted over time.


def scenario(*steps: Obj) -> Obj:
    return {"apiVersion": "kubesched.io/v1alpha1", "kind": "Scenario", "metadata": {"name": "s"}, "steps": list(steps)}


def test_scaling_and_deleting_a_deployment(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    steps = scenario(
        {"at": "30s", "update": [{"kind": "Deployment", "name": "web", "patch": {"spec": {"replicas": 4}}}]},
        {"at": "1m", "update": [{"kind": "Deployment", "name": "web", "patch": {"spec": {"replicas": 1}}}]},
        {"at": "2m", "delete": [{"kind": "Deployment", "namespace": "default", "name": "web"}]},
    )
    code, doc, _ = cli(tmp_path, capsys, [node("a"), deployment("web", replicas=2), steps])
    assert code == 0
    bound = [(e["time"], e["pod"]) for e in doc["events"] if e["type"] == "Bound"]
    deleted = [(e["time"], e["pod"]) for e in doc["events"] if e["type"] == "Deleted"]
    assert [t for t, _ in bound] == [0, 0, 30, 30]
    assert [t for t, _ in deleted] == [60, 60, 60, 120]
    assert {p for _, p in deleted} == {p for _, p in bound}
    assert len(doc["pods"]) == 4 and {p["owner"] for p in doc["pods"]} == {"Deployment/web"}


def test_scaled_down_stateful_set_loses_its_highest_ordinals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    steps = scenario(
        {"at": "10s", "update": [{"kind": "StatefulSet", "name": "db", "patch": {"spec": {"replicas": 1}}}]}
    )
    code, doc, _ = cli(tmp_path, capsys, [node("a"), _sts(), steps])
    assert code == 0
    assert [(e["time"], e["pod"]) for e in doc["events"] if e["type"] == "Deleted"] == [
        (10, "default/db-2"),
        (10, "default/db-1"),
    ]


def test_node_joining_gets_a_daemon_pod_and_a_created_deployment_its_pods(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    steps = scenario(
        {"at": "20s", "create": [node("b")]},
        {"at": "40s", "create": [deployment("late", replicas=2)]},
    )
    ds = workload("DaemonSet", "agent", **_daemon_spec())
    code, doc, _ = cli(tmp_path, capsys, [node("a"), ds, steps])
    assert code == 0
    placed = sorted((p["boundAt"], p["node"], p["owner"]) for p in doc["pods"])
    assert placed == [
        (0, "a", "DaemonSet/agent"),
        (20, "b", "DaemonSet/agent"),
        (40, "a", "Deployment/late"),
        (40, "b", "Deployment/late"),
    ]


def test_resuming_a_suspended_job(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    steps = scenario({"at": "5s", "update": [{"kind": "Job", "name": "batch", "patch": {"spec": {"suspend": False}}}]})
    code, doc, _ = cli(tmp_path, capsys, [node("a"), job("batch", parallelism=3, suspend=True), steps])
    assert code == 0
    assert [p["boundAt"] for p in doc["pods"]] == [5, 5, 5]


def test_a_preempted_replica_is_replaced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Preemption deletes a Deployment's pod; its ReplicaSet creates another, which waits for room."""
    urgent = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "urgent"},
        "spec": {"priority": 1000, "containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]},
    }
    d = deployment("web", replicas=2)
    d["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "2"
    steps = scenario({"at": "10s", "create": [urgent]})
    code, doc, _ = cli(tmp_path, capsys, [node("a", cpu="4"), d, steps])
    assert code == 0
    by_name = {p["name"]: p for p in doc["pods"]}
    assert by_name["urgent"]["result"] == "Scheduled" and len(by_name["urgent"]["victims"]) == 1
    replacements = [p for p in doc["pods"] if p["owner"] == "Deployment/web" and p["boundAt"] is None]
    assert len(replacements) == 1 and replacements[0]["result"] == "Unschedulable"
    assert replacements[0]["name"] not in by_name["urgent"]["victims"][0]


def test_a_template_change_rolls_a_deployment_to_a_new_replica_set(tmp_path: Path) -> None:
    patch = {
        "spec": {
            "template": {
                "spec": {"containers": [{"name": "c", "image": "v2", "resources": {"requests": {"cpu": "200m"}}}]}
            }
        }
    }
    steps = scenario({"at": "1m", "update": [{"kind": "Deployment", "name": "web", "patch": patch}]})
    run = Run(tmp_path, [node("a"), deployment("web", replicas=2), steps])
    old, new = sorted(
        run.objects("ReplicaSet"), key=lambda rs: rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"]
    )
    assert (old["spec"]["replicas"], new["spec"]["replicas"]) == (0, 2)
    assert new["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    pods = run.pods()
    assert len(pods) == 2 and all(p["metadata"]["name"].startswith(new["metadata"]["name"] + "-") for p in pods)
    assert all(p["spec"]["containers"][0]["image"] == "v2" for p in pods)
    assert [e["time"] for e in run.doc["events"] if e["type"] == "Deleted"] == [60, 60]


@pytest.mark.parametrize(("policy", "left"), [("Retain", ["data-db-0", "data-db-1"]), ("Delete", [])])
def test_claims_outlive_a_deleted_stateful_set_unless_its_policy_says_delete(
    tmp_path: Path, policy: str, left: list[str]
) -> None:
    claim = {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    pvs = [
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": f"pv{i}"},
            "spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}, "hostPath": {"path": "/x"}},
        }
        for i in range(2)
    ]
    sts = _sts(replicas=2, volumeClaimTemplates=[claim], persistentVolumeClaimRetentionPolicy={"whenDeleted": policy})
    steps = scenario({"at": "10s", "delete": [{"kind": "StatefulSet", "namespace": "default", "name": "db"}]})
    run = Run(tmp_path, [node("a"), *pvs, sts, steps])
    assert run.pods() == []
    assert [c["metadata"]["name"] for c in run.objects("PersistentVolumeClaim")] == left


def test_the_workloads_example(capsys: pytest.CaptureFixture[str]) -> None:
    """examples/workloads, as docs/workloads.md and the README run it."""
    assert main(["simulate", "examples/workloads", "--output", "json", "--seed", "1"]) == 0
    out = capsys.readouterr()
    doc = json.loads(out.out)
    assert doc["warnings"] == ["skipped 1 object(s) of kinds kubesched does not use: ConfigMap (1)"]
    by_owner: dict[str, list[Obj]] = {}
    for p in doc["pods"]:
        by_owner.setdefault(p["owner"], []).append(p)
    assert {k: len(v) for k, v in by_owner.items()} == {
        "Deployment/web": 5,
        "StatefulSet/db": 3,
        "DaemonSet/node-exporter": 3,
        "Job/train": 2,
        "CronJob/nightly-report": 1,
    }
    assert sorted(p["node"] for p in by_owner["DaemonSet/node-exporter"]) == ["node-a", "node-b", "node-c"]
    assert [p["name"] for p in by_owner["StatefulSet/db"]] == ["db-0", "db-1", "db-2"]
    assert {p["node"] for p in by_owner["Job/train"]} == {"node-gpu", None}  # one GPU for two pods
    unscheduled = [p["name"] for p in doc["pods"] if p["result"] != "Scheduled"]
    assert len(unscheduled) == 1 and unscheduled[0].startswith("train-")
    deleted = [e for e in doc["events"] if e["type"] == "Deleted"]
    assert [e["time"] for e in deleted] == [240, 240] and all(e["pod"].startswith("default/train-") for e in deleted)


OBJECT_PARTS = st.one_of(
    st.none(),
    st.integers(),
    st.text(max_size=3),
    st.dictionaries(st.sampled_from(["name", "uid"]), st.text(max_size=3), max_size=2),
)
OWNER_REFS = st.lists(
    st.one_of(
        OBJECT_PARTS,
        st.fixed_dictionaries(
            {
                "kind": st.just("ReplicaSet"),
                "name": st.text(max_size=2),
                "controller": st.sampled_from([True, False, 1]),
            }
        ),
    ),
    max_size=3,
)


@settings(max_examples=200, deadline=None)
@given(OBJECT_PARTS, OBJECT_PARTS, OWNER_REFS)
def test_dicts_and_other_mappings_read_alike(meta: Any, spec: Any, refs: list[Any]) -> None:
    """meta, spec and controller_of take a dict without the Mapping check; any other mapping gives the same."""
    if isinstance(meta, dict):
        meta = {**meta, "ownerReferences": refs}
    obj = {"metadata": meta, "spec": spec}

    def viewed(value: Any) -> Any:
        if isinstance(value, dict):
            return MappingProxyType({k: viewed(v) for k, v in value.items()})
        if isinstance(value, list):
            return [viewed(v) for v in value]
        return value

    view = viewed(obj)
    assert dict(controller_utils.meta(obj)) == dict(controller_utils.meta(view))
    assert dict(controller_utils.spec(obj)) == dict(controller_utils.spec(view))
    found, seen = controller_utils.controller_of(obj), controller_utils.controller_of(view)
    assert (found is None) == (seen is None) and (found is None or dict(found) == dict(seen or {}))
