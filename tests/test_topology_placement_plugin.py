"""Cases from topology_placement_test.go (v1.36), names unchanged: the placements for each group and cluster."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.cache.cache import Cache
from kubesched.cache.pod_groups import PodGroupStates
from kubesched.cache.snapshot import Snapshot
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import Handle, Placement
from kubesched.framework.node_info import NodeInfo, parse_node
from kubesched.framework.plugins.topologyaware.topology_placement import new
from kubesched.framework.status import Code
from kubesched.framework.types import new_pod_info
from kubesched_testing.framework import lister_with
from kubesched_testing.wrappers import make_node, make_pod

INITIAL = "test-placement"


def pod_group(key: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulingPolicy": {"basic": {}}}
    if key is not None:
        spec["schedulingConstraints"] = {"topology": [{"key": key}]}
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "pg1"}, "spec": spec}


def node(name: str, **labels: str) -> dict[str, Any]:
    w = make_node(name)
    for k, v in labels.items():
        w = w.label(k, v)
    return w.obj()


CASES = {
    "without constraint returns placement matching all nodes": (
        None,
        {},
        [node("node1"), node("node2", foo="bar")],
        [node("node3")],
        {INITIAL: ["node1", "node2"]},
        Code.SUCCESS,
    ),
    "with topology key constraint, returns placement for each topology domain": (
        "topology1",
        {},
        [
            node("node0", topology2="d1"),
            node("node1", topology2="d4"),
            node("node2", topology1="d1"),
            node("node3", topology1="d2"),
            node("node4", topology1="d1"),
            node("node5", topology1="d3"),
        ],
        [],
        {"d1": ["node2", "node4"], "d2": ["node3"], "d3": ["node5"]},
        Code.SUCCESS,
    ),
    "without matching topology label, returns empty": (
        "topology3",
        {},
        [node("node0", topology2="d1"), node("node2", topology1="d1")],
        [],
        {},
        Code.SUCCESS,
    ),
    "with pods already scheduled in a single domain, returns that domain": (
        "topology",
        {"pod1": "node2", "pod2": "node3"},
        [node("node0", topology="d2"), node("node1", topology="d1")],
        [node("node2", topology="d1"), node("node3", topology="d1")],
        {"d1": ["node1"]},
        Code.SUCCESS,
    ),
    "with pods already scheduled in a single domain not present in current placement, returns empty": (
        "topology",
        {"pod1": "node2", "pod2": "node3"},
        [node("node0", topology="d2")],
        [node("node2", topology="d1"), node("node3", topology="d1")],
        {},
        Code.SUCCESS,
    ),
    "with pods already scheduled in conflicting domains, returns error": (
        "topology",
        {"pod1": "node2", "pod2": "node3"},
        [node("node0", topology="d2"), node("node1", topology="d1")],
        [node("node2", topology="d0"), node("node3", topology="d1")],
        None,
        Code.ERROR,
    ),
    "with already scheduled pod on node outside of snapshot, returns error": (
        "topology",
        {"pod1": "node2", "pod2": "node4"},
        [node("node0", topology="d2"), node("node1", topology="d1")],
        [node("node2", topology="d1"), node("node3", topology="d1")],
        None,
        Code.ERROR,
    ),
    "with already scheduled pod on node without topology label, returns error": (
        "topology",
        {"pod1": "node2"},
        [node("node1", topology="d2")],
        [node("node2", foo="bar")],
        None,
        Code.ERROR,
    ),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_generate_placements(case: str) -> None:
    key, scheduled, placement_nodes, other_nodes, want, want_code = CASES[case]
    cache = Cache()
    cache.pod_groups = PodGroupStates()
    for n in (*placement_nodes, *other_nodes):
        cache.add_node(parse_node(n))
    cache.pod_groups.add(new_pod_info(make_pod("unscheduled").uid("unscheduled").pod_group("pg1").obj()))
    for name, node_name in scheduled.items():
        cache.add_pod(new_pod_info(make_pod(name).uid(name).node(node_name).pod_group("pg1").obj()))
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    plugin = new(None, Handle(lister=lister_with([pod_group(key)]), snapshot=snapshot, pod_groups=cache.pod_groups))
    nodes = []
    for n in placement_nodes:
        ni = NodeInfo()
        ni.set_node(parse_node(n))
        nodes.append(ni)
    placements, status = plugin.generate_placements(CycleState(), "default", "pg1", Placement(INITIAL, nodes))
    assert (status.code if status is not None else Code.SUCCESS) == want_code, status
    if want_code == Code.SUCCESS:
        assert {p.name: [ni.name for ni in p.nodes] for p in placements} == want
