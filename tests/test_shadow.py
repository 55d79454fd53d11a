"""`kubesched shadow` without a cluster: the read-only clients, what counts as a decision, and the comparison.

Watch events are put straight into the shadow's store (its informers never start), so
each test says exactly what the cluster's scheduler did and checks what the shadow
printed about it.
"""

from __future__ import annotations

import copy
import io
import json
import re
import ssl
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kubernetes.client import Configuration

from kubesched.backend.kube.api import APIError
from kubesched.backend.kube.resources import SNAPSHOT
from kubesched.cli import main
from kubesched.config.load import load_config
from kubesched.delegation import DelegationOptions
from kubesched.framework.interface import APIClient
from kubesched.framework.types import new_pod_info
from kubesched.shadow.app import Shadow, ShadowOptions, observed_decision
from kubesched.shadow.decide import gather, gather_each
from kubesched.shadow.readonly import ReadOnlyAPI, ReadOnlyClient, WriteRefused
from kubesched.shadow.report import ReportCollector, render
from kubesched.shadow.serve import AddressError, ServingOptions, ShadowMetrics, parse_address, serve
from kubesched_testing.controlplane import kubeconfig_text

pytestmark = pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")


def unreachable() -> Configuration:
    cfg = Configuration()
    cfg.host = "https://127.0.0.1:1"
    return cfg


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE", "post"])
def test_read_only_api_refuses_writes_before_sending(method: str) -> None:
    api = ReadOnlyAPI(unreachable(), qps=0)
    with pytest.raises(WriteRefused, match=f"{method} /api/v1/pods refused"):
        api.request(method, "/api/v1/pods", body={})
    assert api.request_count == 0  # nothing went out


def test_read_only_api_sends_reads() -> None:
    api = ReadOnlyAPI(unreachable(), qps=0, retries=0)
    with pytest.raises(APIError) as err:
        api.request("GET", "/api/v1/pods")
    assert err.value.status == 0  # it went out, and nobody answered
    assert api.request_count == 1


def _protocol_methods() -> list[str]:
    return sorted(n for n in vars(APIClient) if not n.startswith("_") and callable(getattr(APIClient, n)))


@pytest.mark.parametrize("name", [n for n in _protocol_methods() if n not in ("get", "timestamp")])
def test_read_only_client_refuses_every_write(name: str) -> None:
    pod = new_pod_info({"kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": "u"}, "spec": {}})
    obj = {"kind": "Pod", "metadata": {"name": "p"}}
    args: dict[str, tuple[Any, ...]] = {
        "bind": (pod, "n"),
        "update": (obj,),
        "update_status": (obj,),
        "create": (obj,),
        "delete": ("Pod", "default", "p"),
        "merge_status": ("Pod", "default", "p", {}),
        "delete_pod": (pod,),
        "patch_pod_status": (pod, None, None),
        "record_event": (pod, "Normal", "Scheduled", "Binding", "note"),
        "apply_extender_binding": (pod, "n"),
    }
    with pytest.raises(WriteRefused):
        getattr(ReadOnlyClient(), name)(*args[name])


def _pod(name: str, cpu: str = "1", node: str = "", scheduler: str = "", unschedulable: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
    if node:
        spec["nodeName"] = node
    if scheduler:
        spec["schedulerName"] = scheduler
    status: dict[str, Any] = {"phase": "Pending"}
    if unschedulable:
        status["conditions"] = [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/2 nodes"}
        ]
    meta = {
        "name": name,
        "namespace": "default",
        "uid": f"uid-{name}",
        "ownerReferences": [{"kind": "ReplicaSet", "name": "web-1", "controller": True, "apiVersion": "apps/v1"}],
    }
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def _node(name: str, cpu: str) -> dict[str, Any]:
    alloc = {"cpu": cpu, "memory": "16Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": alloc, "capacity": alloc},
    }


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (_pod("p"), _pod("p", node="n1"), (True, "n1")),
        (_pod("p"), _pod("p", unschedulable=True), (True, None)),
        (_pod("p", unschedulable=True), _pod("p", unschedulable=True), (False, None)),  # no new decision
        (_pod("p", unschedulable=True), _pod("p", node="n1"), (True, "n1")),  # retried, then bound
        (_pod("p", node="n1"), _pod("p", node="n1"), (False, None)),  # a bound pod's update
        (None, _pod("p", node="n1"), (False, None)),  # created bound: nobody decided
        (_pod("p"), _pod("p"), (False, None)),
    ],
)
def test_what_counts_as_a_decision(old: Any, new: Any, expected: tuple[bool, str | None]) -> None:
    assert observed_decision(old, new) == expected


@pytest.fixture
def kubeconfig(tmp_path: Path) -> str:
    """Credentials for a server that is never reached: the tests feed the watch themselves."""
    path = tmp_path / "kubeconfig"
    path.write_text(kubeconfig_text("https://127.0.0.1:1", "t"))
    return str(path)


class Fed:
    """A shadow whose watch events the test writes."""

    def __init__(self, kubeconfig: str, config: dict[str, Any] | None = None, **opts: Any) -> None:
        self.out = io.StringIO()
        self.shadow = Shadow(load_config(config), ShadowOptions(kubeconfig=kubeconfig, **opts), out=self.out)
        for r in self.shadow.store.reflectors:
            r.synced.set()

    def event(self, kind: str, event: str, old: Any, new: Any) -> None:
        self.shadow.store._enqueue(kind, event, copy.deepcopy(old), copy.deepcopy(new))
        self.shadow.store.drain()

    def bind(self, pod: dict[str, Any], node: str) -> None:
        bound = copy.deepcopy(pod)
        bound["spec"]["nodeName"] = node
        self.event("Pod", "MODIFIED", pod, bound)

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.out.getvalue().splitlines()]


def test_the_shadow_compares_each_decision_on_the_state_before_it(kubeconfig: str) -> None:
    fed = Fed(kubeconfig)
    _small_and_big(fed)
    for name, cpu in (("a", "1"), ("b", "1"), ("c", "4"), ("d", "16")):
        fed.event("Pod", "ADDED", None, _pod(name, cpu))
    fed.bind(_pod("a", "1"), "big")  # what the default scores choose: the emptier node
    fed.bind(_pod("b", "1"), "small")  # not what they choose
    fed.bind(_pod("c", "4"), "small")  # does not even fit there: `b` took half of it
    fed.event("Pod", "MODIFIED", _pod("d", "16"), _pod("d", "16", unschedulable=True))
    a, b, c, d = fed.lines()
    assert a["agree"] and a["outcome"] == "agree" and a["shadow"] == "big"
    assert a["workload"] == "ReplicaSet/web-1" and a["reason"] == "Scheduled"
    assert not b["agree"] and b["outcome"] == "differ" and (b["actual"], b["shadow"]) == ("small", "big")
    assert b["totals"]["shadow"] > b["totals"]["actual"]
    assert "NodeResourcesFit" in b["scores"]
    assert b["scores"]["NodeResourcesFit"]["shadow"] > b["scores"]["NodeResourcesFit"]["actual"]
    # The cache follows the cluster, not the shadow: b's cpu counts on `small`, so c no longer fits there.
    assert c["outcome"] == "differ" and "Insufficient cpu" in c["actualRejected"]
    assert d == {**d, "actual": None, "shadow": None, "agree": True, "reason": "Unschedulable"}
    assert {p.name for p in fed.shadow.scheduler.cache.nodes["small"].pods} == {"b", "c"}  # as bound, not as shadowed
    fed.shadow._print_summary()
    change = fed.lines()[-1]["wouldChange"]
    # The chosen node's cpu before each pod: the cluster's 0% (big), 0% and 50% (small); the shadow's 0%, then
    # 12.5% twice (big, holding a). d, unschedulable on both sides, counts on neither.
    assert change["cpuOfChosenNode"] == {"actual": 16.7, "shadow": 8.3}
    assert change["unschedulable"] == {"actual": 1, "shadow": 1}


def test_bindings_that_finish_out_of_order_are_decided_in_the_clusters_queue_order(kubeconfig: str) -> None:
    """The cluster decided a (big) and then b, with a assumed; b's binding finished first. The shadow, given
    both at once, takes a's decision first, and agrees on both; taken as they came, b's would differ."""
    for settle_order, expected in ((True, ["agree", "agree"]), (False, ["differ", "agree"])):
        fed = Fed(kubeconfig)
        _small_and_big(fed)
        a, b = _pod("a", "6"), _pod("b", "1")
        fed.event("Pod", "ADDED", None, a)
        fed.event("Pod", "ADDED", None, b)
        b_bound, a_bound = copy.deepcopy(b), copy.deepcopy(a)
        b_bound["spec"]["nodeName"], a_bound["spec"]["nodeName"] = "small", "big"
        store = fed.shadow.store
        store._enqueue("Pod", "MODIFIED", b, b_bound)
        if not settle_order:
            store.drain()  # b alone: no settling
        store._enqueue("Pod", "MODIFIED", a, a_bound)
        store.drain()
        lines = {line["pod"]: line for line in fed.lines()}
        assert [lines["default/b"]["outcome"], lines["default/a"]["outcome"]] == expected
        if settle_order:
            assert [line["pod"] for line in fed.lines()] == ["default/a", "default/b"]


def test_only_a_decision_with_an_earlier_pod_undecided_waits_to_settle(kubeconfig: str) -> None:
    fed = Fed(kubeconfig, settle=60.0)
    store = fed.shadow.store
    store._enqueue("Node", "ADDED", None, _node("n1", "4"))
    assert store.drain(flush=False) == 1  # not a decision: waiting would not reorder it
    a, b, c = _pod("a", "1"), _pod("b", "1"), _pod("c", "1")
    for p in (a, b, c):
        store._enqueue("Pod", "ADDED", None, p)
    assert store.drain(flush=False) == 3
    store._enqueue("Pod", "MODIFIED", a, _pod("a", "1", node="n1"))
    assert store.drain(flush=False) == 1  # a was first in the queue: nothing can come before it
    store._enqueue("Pod", "MODIFIED", c, _pod("c", "1", node="n1"))
    assert store.drain(flush=False) == 0  # b came before c and is undecided: its binding may be on its way
    store._enqueue("Pod", "MODIFIED", b, _pod("b", "1", node="n1"))
    assert store.drain(flush=False) == 2
    assert [line["pod"] for line in fed.lines()] == ["default/a", "default/b", "default/c"]


def test_pods_the_cluster_will_not_try_now_hold_no_decision(kubeconfig: str) -> None:
    """Unschedulable, gated, other schedulers' and deleted pods are not awaited: a later decision goes at once."""
    fed = Fed(kubeconfig, settle=60.0)
    store = fed.shadow.store
    fed.event("Node", "ADDED", None, _node("n1", "4"))
    big, gated, other, gone = _pod("big", "16"), _pod("gated"), _pod("other", scheduler="else"), _pod("gone")
    gated["spec"]["schedulingGates"] = [{"name": "wait"}]
    for p in (big, gated, other, gone):
        fed.event("Pod", "ADDED", None, p)
    fed.event("Pod", "MODIFIED", big, _pod("big", "16", unschedulable=True))
    fed.event("Pod", "DELETED", gone, None)
    late = _pod("late")
    fed.event("Pod", "ADDED", None, late)
    store._enqueue("Pod", "MODIFIED", late, _pod("late", node="n1"))
    assert store.drain(flush=False) == 1
    assert store.undecided == {}
    assert [line["pod"] for line in fed.lines()] == ["default/big", "default/late"]


def test_equal_nodes_make_ties_not_differences(kubeconfig: str) -> None:
    """Pods bound round-robin over equal nodes always land on one of the emptiest: where the scores tie."""
    fed = Fed(kubeconfig)
    nodes = ("n1", "n2", "n3")
    for name in nodes:
        fed.event("Node", "ADDED", None, _node(name, "4"))
    for i in range(24):
        pod = _pod(f"p{i}", "100m")
        fed.event("Pod", "ADDED", None, pod)
        fed.bind(pod, nodes[i % 3])
    lines = fed.lines()
    assert {line["outcome"] for line in lines} <= {"agree", "tie"}
    ties = [line for line in lines if line["tie"]]
    assert ties  # a random pick among 3, then 2, agrees with the cluster eight times in a row once in 1.7 million
    assert all(t["totals"]["actual"] == t["totals"]["shadow"] and not t["agree"] for t in ties)
    summary = fed.shadow.tally.summary()
    assert (summary["observed"], summary["agree"] + summary["ties"], summary["agreementTiesAside"]) == (24, 24, 1.0)
    assert summary["byWorkload"]["default/ReplicaSet/web-1"]["observed"] == 24


def test_pods_of_other_schedulers_are_not_shadowed(kubeconfig: str) -> None:
    fed = Fed(kubeconfig)
    fed.event("Node", "ADDED", None, _node("n1", "4"))
    pod = _pod("p", scheduler="my-scheduler")
    fed.event("Pod", "ADDED", None, pod)
    fed.bind(pod, "n1")
    assert fed.lines() == []
    named = Fed(kubeconfig, scheduler_name="my-scheduler")
    named.event("Node", "ADDED", None, _node("n1", "4"))
    named.event("Pod", "ADDED", None, pod)
    named.bind(pod, "n1")
    assert [line["pod"] for line in named.lines()] == ["default/p"]


def test_summary_and_table(kubeconfig: str) -> None:
    fed = Fed(kubeconfig, output="table")
    fed.event("Node", "ADDED", None, _node("n1", "4"))
    pod = _pod("p")
    fed.event("Pod", "ADDED", None, pod)
    fed.bind(pod, "n1")
    fed.shadow._print_summary()
    text = fed.out.getvalue()
    assert re.search(r"^= default/p\s+n1\s+n1$", text, re.M)
    assert "observed 1, agree 1, ties 0, sampled 0, differ 0" in text


def test_bad_input_is_one_line_and_status_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["shadow", "--kubeconfig", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such file" in err
    bad = tmp_path / "sched.yaml"
    bad.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nparallelism: -1\n")
    assert main(["shadow", "--kubeconfig", str(tmp_path / "none"), "--config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "parallelism" in err


def _get(port: int, path: str) -> tuple[int, str]:
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    try:
        with urllib.request.urlopen(f"https://127.0.0.1:{port}{path}", context=ctx, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def test_metrics_count_observed_and_agreeing_decisions_behind_the_secure_port(kubeconfig: str) -> None:
    fed = Fed(kubeconfig)
    metrics = ShadowMetrics()
    fed.shadow.listeners.append(metrics)
    _small_and_big(fed)
    _created_and_bound(fed, (("a", "big"), ("b", "small")))
    opened = ServingOptions("127.0.0.1:0", delegation=DelegationOptions(always_allow_paths=("/healthz", "/metrics")))
    endpoints, _, port = serve(metrics, opened, fed.shadow.store.synced)
    try:
        status, text = _get(port, "/metrics")
        assert status == 200
        assert 'kubesched_shadow_decisions_observed_total{reason="Scheduled"} 2.0' in text
        assert 'kubesched_shadow_decisions_agreeing_total{reason="Scheduled"} 1.0' in text
        assert 'kubesched_shadow_decisions_total{outcome="differ"} 1.0' in text
    finally:
        endpoints.stop()
    # Upstream's rules by default: health for all, metrics for whom the API server authorizes (here: nobody).
    endpoints, _, port = serve(metrics, ServingOptions("127.0.0.1:0"), fed.shadow.store.synced)
    try:
        assert _get(port, "/healthz") == (200, "ok")
        assert _get(port, "/metrics")[0] == 403
    finally:
        endpoints.stop()


@pytest.mark.parametrize("address", ["10260", "host:", ":80", "h:99999", "h:x"])
def test_a_bad_metrics_address_is_bad_input(address: str) -> None:
    with pytest.raises(AddressError, match="expected HOST:PORT"):
        parse_address(address)


def test_the_report_lists_what_was_decided_otherwise(kubeconfig: str) -> None:
    fed = Fed(kubeconfig)
    collector = ReportCollector()
    fed.shadow.listeners.append(collector)
    _small_and_big(fed)
    _created_and_bound(fed, (("a", "big"), ("<b>", "small")))
    page = render(fed.shadow.tally, collector, "shadow: assuming ...", "")
    assert [d.pod for d in collector.rows] == ["default/<b>"]
    assert "default/&lt;b&gt;" in page and "default/<b>" not in page
    assert "NodeResourcesFit" in page and "<td class=n>2</td>" in page


def test_the_viewer_role_reads_what_the_informers_read_and_nothing_more() -> None:
    """deploy/optional/shadow.yaml: get, list and watch only, on every resource shadow and record list."""
    docs = list(yaml.safe_load_all((Path(__file__).parents[1] / "deploy" / "optional" / "shadow.yaml").read_text()))
    role = next(d for d in docs if d["kind"] == "ClusterRole")
    granted = {
        (group, resource, verb)
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }
    assert {verb for _, _, verb in granted} == {"get", "list", "watch"}
    for r in SNAPSHOT.values():
        group = r.group_version.rpartition("/")[0]
        assert {(group, r.plural, verb) for verb in ("list", "watch")} <= granted, r.kind


@pytest.mark.parametrize(
    ("image", "says"),
    [
        (
            "registry.k8s.io/kube-scheduler:v1.35.2",
            "kube-scheduler runs registry.k8s.io/kube-scheduler:v1.35.2 (v1.35 may",
        ),
        ("registry.k8s.io/kube-scheduler:v1.36.0", "kube-scheduler runs registry.k8s.io/kube-scheduler:v1.36.0"),
        ("example.com/my-scheduler:latest", "kube-scheduler runs example.com/my-scheduler:latest"),
    ],
)
def test_the_assumption_names_the_clusters_kube_scheduler_image(kubeconfig: str, image: str, says: str) -> None:
    fed = Fed(kubeconfig)
    static = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "kube-scheduler-cp-0",
            "namespace": "kube-system",
            "labels": {"component": "kube-scheduler"},
        },
        "spec": {"nodeName": "cp-0", "containers": [{"name": "kube-scheduler", "image": image}]},
    }
    assert "kube-scheduler runs" not in fed.shadow.assumption()
    fed.event("Pod", "ADDED", None, static)
    text = fed.shadow.assumption()
    assert text.startswith(
        "shadow: assuming the cluster's scheduler is kube-scheduler v1.36 with profile default-scheduler"
    )
    assert says in text
    assert ("may decide differently" in text) == ("v1.35" in image)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(order=st.permutations(range(6)))
def test_decisions_are_taken_in_the_clusters_queue_order_whatever_order_bindings_finish(
    kubeconfig: str, order: list[int]
) -> None:
    fed = Fed(kubeconfig)
    fed.event("Node", "ADDED", None, _node("n1", "64"))
    pods = [_pod(f"p{i}", "100m") for i in range(6)]
    for p in pods:
        fed.event("Pod", "ADDED", None, p)
    for i in order:
        bound = copy.deepcopy(pods[i])
        bound["spec"]["nodeName"] = "n1"
        fed.shadow.store._enqueue("Pod", "MODIFIED", pods[i], bound)
    fed.shadow.store.drain()
    assert [line["pod"] for line in fed.lines()] == [f"default/p{i}" for i in range(6)]
    assert len(fed.shadow.scheduler.cache.nodes["n1"].pods) == 6
    assert fed.shadow.store._queued_at == {}  # bound pods are out of the queue: nothing kept for them


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(order=st.permutations(range(6)), priorities=st.lists(st.sampled_from([0, 0, 10]), min_size=6, max_size=6))
def test_decisions_wait_no_longer_than_their_order_needs(
    kubeconfig: str, order: list[int], priorities: list[int]
) -> None:
    """Bindings arriving one by one with no time passing: each is taken once every pod the queue would pop
    before it has its decision in, so the order is the one waiting out the settle time (flush) gives, and
    nothing is left waiting at the end."""
    fed = Fed(kubeconfig, settle=60.0)
    fed.event("Node", "ADDED", None, _node("n1", "64"))
    pods = [_pod(f"p{i}", "100m") for i in range(6)]
    for p, priority in zip(pods, priorities, strict=True):
        p["spec"]["priority"] = priority
        fed.event("Pod", "ADDED", None, p)
    store = fed.shadow.store
    for i in order:
        bound = copy.deepcopy(pods[i])
        bound["spec"]["nodeName"] = "n1"
        store._enqueue("Pod", "MODIFIED", pods[i], bound)
        store.drain(flush=False)
    assert not store.waiting
    queue_order = sorted(range(6), key=lambda i: (-priorities[i], i))
    assert [line["pod"] for line in fed.lines()] == [f"default/p{i}" for i in queue_order]


def _victim(pod: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(pod)
    out["status"]["conditions"] = [
        {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler", "message": "preempting"}
    ]
    return out


@pytest.mark.parametrize("victims_first", [False, True])
def test_preemption_is_dry_run_and_compared_with_the_nomination_and_victims_the_watch_shows(
    kubeconfig: str, victims_first: bool
) -> None:
    """The cluster nominates `small` for `high` and evicts `low` there; the shadow's dry run picks the same, and
    its cache keeps both pods where the cluster had them. Victims evicted while the preemptor's status is being
    written can show on the watch first (even gone): the shadow still decides on the state before them."""
    fed = Fed(kubeconfig, settle=60.0)
    fed.event("Node", "ADDED", None, _node("small", "2"))
    fed.event("Node", "ADDED", None, _node("big", "4"))
    low, mid = _pod("low", "2", node="small"), _pod("mid", "3", node="big")
    mid["spec"]["priority"] = 50
    for p in (low, mid):
        fed.event("Pod", "ADDED", None, p)
    high = _pod("high", "2")
    high["spec"]["priority"] = 100
    fed.event("Pod", "ADDED", None, high)
    nominated = _pod("high", "2", unschedulable=True)
    nominated["spec"]["priority"] = 100
    nominated["status"]["nominatedNodeName"] = "small"
    store = fed.shadow.store
    decision = ("Pod", "MODIFIED", high, nominated)
    evicted = [("Pod", "MODIFIED", low, _victim(low)), ("Pod", "DELETED", _victim(low), None)]
    for e in [*evicted, decision] if victims_first else [decision, *evicted]:
        store._enqueue(*copy.deepcopy(e))
        store.drain(flush=False)
    assert not store.waiting
    assert fed.lines() == []  # held until its victims had time to show
    fed.shadow.release(every=True)
    (line,) = fed.lines()
    assert line["reason"] == "Unschedulable" and line["agree"]
    assert line["preemption"] == {
        "actual": {"node": "small", "victims": ["default/low"]},
        "shadow": {"node": "small", "victims": ["default/low"]},
        "agree": True,
    }
    assert fed.shadow.tally.summary()["preemption"] == {"observed": 1, "agree": 1}
    assert not fed.shadow.scheduler.cache.nodes["small"].pods  # as the cluster has it: low gone


def test_a_preemption_the_shadow_would_not_make_differs(kubeconfig: str) -> None:
    """The cluster nominated `big` (evicting mid); the shadow's dry run takes the node whose victim has the
    lower priority. The preemptor's binding, later, lets the preemption's line out first. The report lists
    the preemption that differs; the metrics count it."""
    fed = Fed(kubeconfig)
    collector, metrics = ReportCollector(), ShadowMetrics()
    fed.shadow.listeners += [collector, metrics]
    fed.event("Node", "ADDED", None, _node("small", "2"))
    fed.event("Node", "ADDED", None, _node("big", "2"))
    low, mid = _pod("low", "2", node="small"), _pod("mid", "2", node="big")
    mid["spec"]["priority"] = 50
    for p in (low, mid):
        fed.event("Pod", "ADDED", None, p)
    high = _pod("high", "2")
    high["spec"]["priority"] = 100
    fed.event("Pod", "ADDED", None, high)
    nominated = copy.deepcopy(_pod("high", "2", unschedulable=True))
    nominated["spec"]["priority"] = 100
    nominated["status"]["nominatedNodeName"] = "big"
    fed.event("Pod", "MODIFIED", high, nominated)
    fed.event("Pod", "MODIFIED", mid, _victim(mid))
    fed.event("Pod", "DELETED", _victim(mid), None)
    fed.bind(nominated, "big")  # decided again: the held line comes first, its victims in
    line, bound = fed.lines()
    assert (bound["pod"], bound["actual"]) == ("default/high", "big") and "preemption" not in bound
    assert line["preemption"]["agree"] is False
    assert line["preemption"]["shadow"] == {"node": "small", "victims": ["default/low"]}
    assert line["preemption"]["actual"] == {"node": "big", "victims": ["default/mid"]}
    assert [d.pod for d in collector.rows] == ["default/high"]  # the binding after agrees: not listed
    page = render(fed.shadow.tally, collector, "shadow: assuming ...", "")
    assert "cluster nominates big, evicting default/mid; shadow nominates small, evicting default/low" in page
    assert "<th>preemptions (observed / agreeing)</th><td class=n>1 / 0</td>" in page
    assert metrics.registry.get_sample_value("kubesched_shadow_preemptions_total", {"agree": "false"}) == 1.0
    assert metrics.registry.get_sample_value("kubesched_shadow_preemptions_total", {"agree": "true"}) is None


@settings(max_examples=200, deadline=None)
@given(data=st.data(), n=st.integers(0, 12))
def test_gathering_the_feasible_nodes_fast_agrees_with_the_plain_gather(data: st.DataObject, n: int) -> None:
    """Rotations of every node (the fast path), and any other order or subset (the gather), give the same list."""
    nodes = [f"node-{i}" for i in range(n)]
    if n and data.draw(st.booleans()):
        k = data.draw(st.integers(0, n - 1))
        order = [(k + i) % n for i in range(n)]
    else:
        order = data.draw(st.lists(st.integers(0, n - 1), unique=True, max_size=n)) if n else []
    positions = np.array(order, dtype=np.int64)
    fast, plain = gather(nodes, positions), gather_each(nodes, positions)
    assert list(fast) == list(plain) == [nodes[i] for i in order]


def test_a_preemption_only_the_shadow_would_make_is_printed_at_once(kubeconfig: str) -> None:
    """The cluster left `high` unschedulable without a nomination (its PostFilter found nothing, or it has none):
    no victims to wait for, so the line comes at once, with the shadow's preemption beside the cluster's none."""
    fed = Fed(kubeconfig)
    fed.event("Node", "ADDED", None, _node("small", "2"))
    fed.event("Pod", "ADDED", None, _pod("low", "2", node="small"))
    high = _pod("high", "2")
    high["spec"]["priority"] = 100
    fed.event("Pod", "ADDED", None, high)
    refused = _pod("high", "2", unschedulable=True)
    refused["spec"]["priority"] = 100
    fed.event("Pod", "MODIFIED", high, refused)
    (line,) = fed.lines()
    assert line["agree"] and line["preemption"] == {
        "actual": {"node": None, "victims": []},
        "shadow": {"node": "small", "victims": ["default/low"]},
        "agree": False,
    }
    assert fed.shadow.held == []


def test_a_victim_already_being_deleted_is_not_expected_evicted_again(kubeconfig: str) -> None:
    """Both pods on `small` must go; one is already terminating, so upstream evicts only the other and the watch
    shows only that one: the preemptions agree, and the line says which victim was already on its way out."""
    fed = Fed(kubeconfig)
    fed.event("Node", "ADDED", None, _node("small", "2"))
    leaving, staying = _pod("leaving", "1", node="small"), _pod("staying", "1", node="small")
    leaving["metadata"]["deletionTimestamp"] = "2026-11-28T10:00:00Z"
    for p in (leaving, staying):
        fed.event("Pod", "ADDED", None, p)
    high = _pod("high", "2")
    high["spec"]["priority"] = 100
    fed.event("Pod", "ADDED", None, high)
    nominated = _pod("high", "2", unschedulable=True)
    nominated["spec"]["priority"] = 100
    nominated["status"]["nominatedNodeName"] = "small"
    fed.event("Pod", "MODIFIED", high, nominated)
    fed.event("Pod", "MODIFIED", staying, _victim(staying))
    fed.shadow.release(every=True)
    (line,) = fed.lines()
    assert line["preemption"] == {
        "actual": {"node": "small", "victims": ["default/staying"]},
        "shadow": {"node": "small", "victims": ["default/leaving", "default/staying"]},
        "alreadyTerminating": ["default/leaving"],
        "agree": True,
    }


def _small_and_big(fed: Fed) -> None:
    """The two nodes most cases decide between: 2 and 8 CPUs."""
    fed.event("Node", "ADDED", None, _node("small", "2"))
    fed.event("Node", "ADDED", None, _node("big", "8"))


def _created_and_bound(fed: Fed, bindings: tuple[tuple[str, str], ...]) -> None:
    """Each pod created, then bound by the cluster's scheduler to the node given."""
    for name, node in bindings:
        pod = _pod(name)
        fed.event("Pod", "ADDED", None, pod)
        fed.bind(pod, node)
