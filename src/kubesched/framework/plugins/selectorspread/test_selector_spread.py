"""SelectorSpread: upstream's TestSelectorSpreadScore and TestZoneSelectorSpreadPriority tables.

Upstream's fake listers return every namespace's Services for a pod without a
namespace; here such pods and the Services that must match them share the
namespace "nons", which gives the same matches.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.plugins.selectorspread import selector_spread
from kubesched_testing.framework import build_snapshot, lister_with, new_plugin, score_nodes
from kubesched_testing.wrappers import make_node, make_pod

L1 = {"foo": "bar", "baz": "blah"}
L2 = {"bar": "foo", "baz": "blah"}
GA_ZONE = "topology.kubernetes.io/zone"
RC, RS, SS = ("v1", "ReplicationController"), ("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet")


def pod(node: str = "", labels: dict[str, str] | None = None, ns: str = "default", owner: Any = None) -> Any:
    w = make_pod("p", ns).labels(labels or {})
    if node:
        w = w.node(node)
    if owner is not None:
        (api, kind), name = owner
        w = w.owner(kind, name, api)
    return w.obj()


def svc(selector: dict[str, str], ns: str = "default", name: str = "s1") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"selector": selector},
    }


def rc(name: str, selector: dict[str, str]) -> dict[str, Any]:
    meta = {"name": name, "namespace": "default"}
    return {"apiVersion": "v1", "kind": "ReplicationController", "metadata": meta, "spec": {"selector": selector}}


def apps(kind: str, name: str, selector: dict[str, str]) -> dict[str, Any]:
    meta = {"name": name, "namespace": "default"}
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": meta, "spec": {"selector": {"matchLabels": selector}}}


def run(pod_obj: dict[str, Any], pods: list[dict[str, Any]], nodes: list[dict[str, Any]], objs: list[Any]) -> list[int]:
    snap = build_snapshot(nodes, pods)
    plugin = new_plugin(selector_spread.new, None, snap, lister_with(objs))
    scores, status = score_nodes(plugin, pod_obj, snap, nodes=[n["metadata"]["name"] for n in nodes])
    assert status is None
    return scores


SPREAD_CASES = [
    ("nothing scheduled", pod(), [], [], [100, 100]),
    ("no services", pod(labels=L1), [pod("node1")], [], [100, 100]),
    ("different services", pod(labels=L1), [pod("node1", L2)], [svc({"key": "value"})], [100, 100]),
    ("two pods, one service pod", pod(labels=L1), [pod("node1", L2), pod("node2", L1)], [svc(L1)], [100, 0]),
    (
        "five pods, one service pod in no namespace",
        pod(labels=L1, ns="nons"),
        [
            pod("node1", L2, "nons"),
            pod("node1", L1),
            pod("node1", L1, "ns1"),
            pod("node2", L1, "nons"),
            pod("node2", L2, "nons"),
        ],
        [svc(L1, "nons")],
        [100, 0],
    ),
    (
        "four pods, one service pod in default namespace",
        pod(labels=L1),
        [pod("node1", L1, "nons"), pod("node1", L1, "ns1"), pod("node2", L1), pod("node2", L2, "nons")],
        [svc(L1)],
        [100, 0],
    ),
    (
        "five pods, one service pod in specific namespace",
        pod(labels=L1, ns="ns1"),
        [
            pod("node1", L2, "nons"),
            pod("node1", L1),
            pod("node1", L1, "ns2"),
            pod("node2", L1, "ns1"),
            pod("node2", L2, "nons"),
        ],
        [svc(L1, "ns1")],
        [100, 0],
    ),
    (
        "three pods, two service pods on different nodes",
        pod(labels=L1),
        [pod("node1", L2), pod("node1", L1), pod("node2", L1)],
        [svc(L1)],
        [0, 0],
    ),
    (
        "four pods, three service pods",
        pod(labels=L1),
        [pod("node1", L2), pod("node1", L1), pod("node2", L1), pod("node2", L1)],
        [svc(L1)],
        [50, 0],
    ),
    (
        "service with partial pod label matches",
        pod(labels=L1),
        [pod("node1", L2), pod("node1", L1), pod("node2", L1)],
        [svc({"baz": "blah"})],
        [0, 50],
    ),
]

# Service baz=blah plus a controller foo=bar: pod2 and pod3 are siblings, pod1 is not.
for _kind, _objs in (
    (RC, [rc("rc1", {"foo": "bar"}), rc("rc2", {"bar": "foo"})]),
    (RS, [apps("ReplicaSet", "rs1", {"foo": "bar"}), apps("ReplicaSet", "rs2", {"bar": "foo"})]),
    (SS, [apps("StatefulSet", "ss1", {"foo": "bar"}), apps("StatefulSet", "ss2", {"bar": "foo"})]),
):
    _n = {"ReplicationController": "rc", "ReplicaSet": "rs", "StatefulSet": "ss"}[_kind[1]]
    SPREAD_CASES += [
        (
            f"service with partial pod label matches with service and {_kind[1]}",
            pod(labels=L1, owner=(_kind, f"{_n}1")),
            [pod("node1", L2), pod("node1", L1), pod("node2", L1)],
            [svc({"baz": "blah"}), *_objs],
            [0, 0],
        ),
        (
            f"disjoined service and {_kind[1]} matches no pods",
            pod(labels={"foo": "bar", "bar": "foo"}, owner=(_kind, f"{_n}3")),
            [
                pod("node1", L2, owner=(_kind, f"{_n}2")),
                pod("node1", L1, owner=(_kind, f"{_n}1")),
                pod("node2", L1, owner=(_kind, f"{_n}1")),
            ],
            [
                svc({"bar": "foo"}),
                rc("rc3", {"foo": "bar"}) if _n == "rc" else apps(_kind[1], f"{_n}3", {"foo": "bar"}),
            ],
            [100, 100],
        ),
        (
            f"{_kind[1]} with partial pod label matches",
            pod(labels=L1, owner=(_kind, f"{_n}1")),
            [
                pod("node1", L2, owner=(_kind, f"{_n}2")),
                pod("node1", L1, owner=(_kind, f"{_n}1")),
                pod("node2", L1, owner=(_kind, f"{_n}1")),
            ],
            [_objs[0]],
            [0, 0],
        ),
        (
            f"another {_kind[1]} with partial pod label matches",
            pod(labels=L1, owner=(_kind, f"{_n}3")),
            [
                pod("node1", L2, owner=(_kind, f"{_n}2")),
                pod("node1", L1, owner=(_kind, f"{_n}1")),
                pod("node2", L1, owner=(_kind, f"{_n}1")),
            ],
            [rc("rc3", {"baz": "blah"}) if _n == "rc" else apps(_kind[1], f"{_n}3", {"baz": "blah"})],
            [0, 50],
        ),
    ]


@pytest.mark.parametrize(("name", "pod_obj", "pods", "objs", "want"), SPREAD_CASES, ids=[c[0] for c in SPREAD_CASES])
def test_selector_spread_score(
    name: str, pod_obj: dict[str, Any], pods: list[dict[str, Any]], objs: list[Any], want: list[int]
) -> None:
    nodes = [make_node("node1").obj(), make_node("node2").obj()]
    assert run(pod_obj, pods, nodes, objs) == want


def test_pod_with_topology_spread_constraints_scores_zero() -> None:
    """Upstream's 'Another statefulset with TopologySpreadConstraints set in pod'."""
    w = make_pod("p").labels(L1).owner("StatefulSet", "ss1")
    p = w.spread_constraint(1, "foo", "DoNotSchedule", {"foo": "bar"}).obj()
    pods = [
        pod("node1", L2, owner=(SS, "ss2")),
        pod("node1", L1, owner=(SS, "ss1")),
        pod("node2", L1, owner=(SS, "ss1")),
    ]
    nodes = [make_node("node1").label("foo", "a").obj(), make_node("node2").label("foo", "b").obj()]
    assert run(p, pods, nodes, [apps("StatefulSet", "ss1", {"baz": "blah"})]) == [0, 0]


Z = {
    "node1.zone1": "zone1",
    "node1.zone2": "zone2",
    "node2.zone2": "zone2",
    "node1.zone3": "zone3",
    "node2.zone3": "zone3",
    "node3.zone3": "zone3",
}
ZONE_LABELS_1 = {"label1": "l1", "baz": "blah"}
ZONE_LABELS_2 = {"label2": "l2", "baz": "blah"}

ZONE_CASES = [
    ("nothing scheduled", pod(), [], [], [100] * 6),
    ("no services", pod(labels=ZONE_LABELS_1), [pod("node1.zone1")], [], [100] * 6),
    (
        "different services",
        pod(labels=ZONE_LABELS_1),
        [pod("node1.zone1", ZONE_LABELS_2)],
        [svc({"key": "value"})],
        [100] * 6,
    ),
    (
        "two pods, 0 matching",
        pod(labels=ZONE_LABELS_1),
        [pod("node1.zone1", ZONE_LABELS_2), pod("node1.zone2", ZONE_LABELS_2)],
        [svc(ZONE_LABELS_1)],
        [100] * 6,
    ),
    (
        "two pods, 1 matching (in z2)",
        pod(labels=ZONE_LABELS_1),
        [pod("node1.zone1", ZONE_LABELS_2), pod("node1.zone2", ZONE_LABELS_1)],
        [svc(ZONE_LABELS_1)],
        [100, 0, 33, 100, 100, 100],
    ),
    (
        "five pods, 3 matching (z2=2, z3=1)",
        pod(labels=ZONE_LABELS_1),
        [
            pod("node1.zone1", ZONE_LABELS_2),
            pod("node1.zone2", ZONE_LABELS_1),
            pod("node2.zone2", ZONE_LABELS_1),
            pod("node1.zone3", ZONE_LABELS_2),
            pod("node2.zone3", ZONE_LABELS_1),
        ],
        [svc(ZONE_LABELS_1)],
        [100, 0, 0, 66, 33, 66],
    ),
    (
        "four pods, 3 matching (z1=1, z2=1, z3=1)",
        pod(labels=ZONE_LABELS_1),
        [
            pod("node1.zone1", ZONE_LABELS_1),
            pod("node1.zone2", ZONE_LABELS_1),
            pod("node2.zone2", ZONE_LABELS_2),
            pod("node1.zone3", ZONE_LABELS_1),
        ],
        [svc(ZONE_LABELS_1)],
        [0, 0, 33, 0, 33, 33],
    ),
    (
        "five pods, 4 matching (z1=1, z2=2, z3=1)",
        pod(labels=ZONE_LABELS_1),
        [
            pod("node1.zone1", ZONE_LABELS_1),
            pod("node1.zone2", ZONE_LABELS_1),
            pod("node2.zone2", ZONE_LABELS_1),
            pod("node2.zone2", ZONE_LABELS_2),
            pod("node1.zone3", ZONE_LABELS_1),
        ],
        [svc(ZONE_LABELS_1)],
        [33, 0, 0, 33, 66, 66],
    ),
    (
        "Replication controller spreading (z1=0, z2=1, z3=2)",
        pod(labels=ZONE_LABELS_1, owner=(RC, "rc1")),
        [pod("node1.zone3", ZONE_LABELS_1), pod("node1.zone2", ZONE_LABELS_1), pod("node1.zone3", ZONE_LABELS_1)],
        [rc("rc1", ZONE_LABELS_1)],
        [100, 50, 66, 0, 33, 33],
    ),
]


@pytest.mark.parametrize(("name", "pod_obj", "pods", "objs", "want"), ZONE_CASES, ids=[c[0] for c in ZONE_CASES])
def test_zone_selector_spread_priority(
    name: str, pod_obj: dict[str, Any], pods: list[dict[str, Any]], objs: list[Any], want: list[int]
) -> None:
    nodes = [make_node(n).label(GA_ZONE, z).obj() for n, z in Z.items()]
    assert run(pod_obj, pods, nodes, objs) == want
