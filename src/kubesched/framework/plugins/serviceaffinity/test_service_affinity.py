"""ServiceAffinity: upstream's TestServiceAffinity and TestServiceAffinityScore tables.

Pods and Services without a namespace upstream live in "default" here; where
upstream relies on its fake lister returning every namespace, the Service sits
in the pod's namespace, which gives the same matches.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config.types import ServiceAffinityArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.plugins.serviceaffinity import service_affinity
from kubesched.framework.status import Code
from kubesched.framework.types import new_pod_info
from kubesched_testing.framework import build_snapshot, lister_with, new_plugin, score_nodes
from kubesched_testing.wrappers import make_node, make_pod

SEL = {"foo": "bar"}
NODE_LABELS = {
    "machine1": {"region": "r1", "zone": "z11"},
    "machine2": {"region": "r1", "zone": "z12"},
    "machine3": {"region": "r2", "zone": "z21"},
    "machine4": {"region": "r2", "zone": "z22"},
    "machine5": {"region": "r2", "zone": "z22"},
}


def node(name: str, labels: dict[str, str]) -> dict[str, Any]:
    w = make_node(name)
    for k, v in labels.items():
        w = w.label(k, v)
    return w.obj()


def pod(node_name: str = "", labels: dict[str, str] | None = None, ns: str = "default", **extra: Any) -> dict[str, Any]:
    w = make_pod("p", ns).labels(labels or {})
    if node_name:
        w = w.node(node_name)
    if "node_selector" in extra:
        w = w.node_selector(extra["node_selector"])
    return w.obj()


def svc(selector: dict[str, str], ns: str = "default") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s", "namespace": ns},
        "spec": {"selector": selector},
    }


U, OK = Code.UNSCHEDULABLE, None
FILTER_CASES = [
    ("nothing scheduled", pod(), [], [], "machine1", ["region"], OK),
    ("pod with region label match", pod(node_selector={"region": "r1"}), [], [], "machine1", ["region"], OK),
    ("pod with region label mismatch", pod(node_selector={"region": "r2"}), [], [], "machine1", ["region"], U),
    ("service pod on same node", pod(labels=SEL), [pod("machine1", SEL)], [svc(SEL)], "machine1", ["region"], OK),
    (
        "service pod on different node, region match",
        pod(labels=SEL),
        [pod("machine2", SEL)],
        [svc(SEL)],
        "machine1",
        ["region"],
        OK,
    ),
    (
        "service pod on different node, region mismatch",
        pod(labels=SEL),
        [pod("machine3", SEL)],
        [svc(SEL)],
        "machine1",
        ["region"],
        U,
    ),
    (
        "service in different namespace, region mismatch",
        pod(labels=SEL, ns="ns1"),
        [pod("machine3", SEL, "ns1")],
        [svc(SEL, "ns2")],
        "machine1",
        ["region"],
        OK,
    ),
    (
        "pod in different namespace, region mismatch",
        pod(labels=SEL, ns="ns1"),
        [pod("machine3", SEL, "ns2")],
        [svc(SEL, "ns1")],
        "machine1",
        ["region"],
        OK,
    ),
    (
        "service and pod in same namespace, region mismatch",
        pod(labels=SEL, ns="ns1"),
        [pod("machine3", SEL, "ns1")],
        [svc(SEL, "ns1")],
        "machine1",
        ["region"],
        U,
    ),
    (
        "service pod on different node, multiple labels, not all match",
        pod(labels=SEL),
        [pod("machine2", SEL)],
        [svc(SEL)],
        "machine1",
        ["region", "zone"],
        U,
    ),
    (
        "service pod on different node, multiple labels, all match",
        pod(labels=SEL),
        [pod("machine5", SEL)],
        [svc(SEL)],
        "machine4",
        ["region", "zone"],
        OK,
    ),
]


@pytest.mark.parametrize(
    ("name", "pod_obj", "pods", "services", "node_name", "labels", "want"),
    FILTER_CASES,
    ids=[c[0] for c in FILTER_CASES],
)
def test_service_affinity(
    name: str,
    pod_obj: dict[str, Any],
    pods: list[dict[str, Any]],
    services: list[dict[str, Any]],
    node_name: str,
    labels: list[str],
    want: Code | None,
) -> None:
    snap = build_snapshot([node(n, ls) for n, ls in NODE_LABELS.items()], pods)
    plugin = new_plugin(service_affinity.new, ServiceAffinityArgs(affinityLabels=labels), snap, lister_with(services))
    state, p = CycleState(), new_pod_info(pod_obj)
    assert plugin.pre_filter(state, p, snap.node_info_list) == (None, None)
    status = plugin.filter(state, p, snap.get(node_name))
    assert (status.code if status is not None else None) == want


L1 = {"foo": "bar", "baz": "blah"}
L2 = {"bar": "foo", "baz": "blah"}
ZONED = {
    "machine01": {"name": "value"},
    "machine02": {"name": "value"},
    "machine11": {"zone": "zone1"},
    "machine12": {"zone": "zone1"},
    "machine21": {"zone": "zone2"},
    "machine22": {"zone": "zone2"},
}
RACKED = {
    "machine01": {"name": "value"},
    "machine02": {"name": "value"},
    "machine11": {"zone": "zone1", "rack": "rack1"},
    "machine12": {"zone": "zone1", "rack": "rack2"},
    "machine21": {"zone": "zone2", "rack": "rack1"},
    "machine22": {"zone": "zone2", "rack": "rack1"},
}
ORDER = ["machine11", "machine12", "machine21", "machine22", "machine01", "machine02"]

SCORE_CASES = [
    ("nothing scheduled", pod(), [], ZONED, [], ["zone"], [100, 100, 100, 100, 0, 0]),
    ("no services", pod(labels=L1), [pod("machine11")], ZONED, [], ["zone"], [100, 100, 100, 100, 0, 0]),
    (
        "different services",
        pod(labels=L1),
        [pod("machine11", L2)],
        ZONED,
        [svc({"key": "value"})],
        ["zone"],
        [100, 100, 100, 100, 0, 0],
    ),
    (
        "three pods, one service pod",
        pod(labels=L1),
        [pod("machine01", L2), pod("machine11", L2), pod("machine21", L1)],
        ZONED,
        [svc(L1)],
        ["zone"],
        [100, 100, 0, 0, 0, 0],
    ),
    (
        "three pods, two service pods on different machines",
        pod(labels=L1),
        [pod("machine11", L2), pod("machine11", L1), pod("machine21", L1)],
        ZONED,
        [svc(L1)],
        ["zone"],
        [50, 50, 50, 50, 0, 0],
    ),
    (
        "three service label match pods in different namespaces",
        pod(labels=L1),
        [pod("machine11", L1, "nons"), pod("machine11", L1), pod("machine21", L1, "nons"), pod("machine21", L1, "ns1")],
        ZONED,
        [svc(L1)],
        ["zone"],
        [0, 0, 100, 100, 0, 0],
    ),
    (
        "four pods, three service pods",
        pod(labels=L1),
        [pod("machine11", L2), pod("machine11", L1), pod("machine21", L1), pod("machine21", L1)],
        ZONED,
        [svc(L1)],
        ["zone"],
        [66, 66, 33, 33, 0, 0],
    ),
    (
        "service with partial pod label matches",
        pod(labels=L1),
        [pod("machine11", L2), pod("machine11", L1), pod("machine21", L1)],
        ZONED,
        [svc({"baz": "blah"})],
        ["zone"],
        [33, 33, 66, 66, 0, 0],
    ),
    (
        "service pod on non-zoned node",
        pod(labels=L1),
        [pod("machine01", L1), pod("machine11", L1), pod("machine21", L1), pod("machine21", L1)],
        ZONED,
        [svc(L1)],
        ["zone"],
        [75, 75, 50, 50, 0, 0],
    ),
    (
        "three pods, two service pods, with rack label",
        pod(labels=L1),
        [pod("machine01", L2), pod("machine11", L1), pod("machine21", L1)],
        RACKED,
        [svc(L1)],
        ["zone", "rack"],
        [25, 75, 25, 25, 0, 0],
    ),
]


@pytest.mark.parametrize(
    ("name", "pod_obj", "pods", "nodes", "services", "labels", "want"), SCORE_CASES, ids=[c[0] for c in SCORE_CASES]
)
def test_service_affinity_score(
    name: str,
    pod_obj: dict[str, Any],
    pods: list[dict[str, Any]],
    nodes: dict[str, dict[str, str]],
    services: list[dict[str, Any]],
    labels: list[str],
    want: list[int],
) -> None:
    snap = build_snapshot([node(n, ls) for n, ls in nodes.items()], pods)
    args = ServiceAffinityArgs(antiAffinityLabelsPreference=labels)
    plugin = new_plugin(service_affinity.new, args, snap, lister_with(services))
    scores, status = score_nodes(plugin, pod_obj, snap, nodes=ORDER)
    assert status is None
    assert scores == want


def test_dry_run_removal_frees_the_service_constraint() -> None:
    """RemovePod (preemption's dry run) forgets a victim, so its node no longer pins the region."""
    pods = [pod("machine3", SEL)]
    snap = build_snapshot([node(n, ls) for n, ls in NODE_LABELS.items()], pods)
    plugin = new_plugin(
        service_affinity.new, ServiceAffinityArgs(affinityLabels=["region"]), snap, lister_with([svc(SEL)])
    )
    state, p = CycleState(), new_pod_info(pod(labels=SEL))
    plugin.pre_filter(state, p, snap.node_info_list)
    machine1 = snap.get("machine1")
    status = plugin.filter(state, p, machine1)
    assert status is not None and status.reasons == (service_affinity.ERR_REASON,)
    machine3 = snap.get("machine3")
    assert machine3 is not None
    victim = machine3.pods[0]
    plugin.remove_pod(state, p, victim, machine3)
    assert plugin.filter(state, p, machine1) is None
    plugin.add_pod(state, p, victim, snap.get("machine3"))
    assert plugin.filter(state, p, machine1) is not None
