"""Cases from podtopologyspread/filtering_test.go (TestSingleConstraint) and scoring_test.go."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.config.defaults import default_args
from kubesched.config.types import PodTopologySpreadArgs
from kubesched.framework.plugins.podtopologyspread.plugin import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    domain_sums,
    new,
)
from kubesched.framework.status import Code, Status
from kubesched_testing.framework import build_snapshot, filter_statuses, lister_with, new_plugin, score_nodes
from kubesched_testing.wrappers import make_node, make_pod

FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
SKEW = Status(Code.UNSCHEDULABLE, ERR_REASON_CONSTRAINTS_NOT_MATCH)
NO_LABEL = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NODE_LABEL_NOT_MATCH)


def zone_nodes():
    return [
        make_node("node-a").label("zone", "zone1").label("node", "node-a").obj(),
        make_node("node-b").label("zone", "zone1").label("node", "node-b").obj(),
        make_node("node-x").label("zone", "zone2").label("node", "node-x").obj(),
        make_node("node-y").label("zone", "zone2").label("node", "node-y").obj(),
    ]


def pods_on(spec):
    out = []
    for node, n in spec:
        for i in range(n):
            out.append(make_pod(f"p-{node}{i}").node(node).label("foo", "").obj())
    return out


CASES = [
    pytest.param(
        make_pod("p").label("foo", "").spread_constraint(1, "zone", "DoNotSchedule", FOO).obj(),
        zone_nodes(),
        [],
        [None, None, None, None],
        id="no existing pods",
    ),
    pytest.param(
        make_pod("p").label("foo", "").spread_constraint(1, "zone", "DoNotSchedule", FOO).obj(),
        zone_nodes(),
        [
            make_pod("p-a1", "ns1").node("node-a").label("foo", "").obj(),
            make_pod("p-b1", "ns2").node("node-b").label("foo", "").obj(),
        ],
        [None, None, None, None],
        id="existing pods in a different namespace do not count",
    ),
    pytest.param(
        make_pod("p").label("foo", "").spread_constraint(1, "zone", "DoNotSchedule", FOO).obj(),
        zone_nodes(),
        pods_on([("node-a", 2), ("node-b", 1), ("node-x", 1), ("node-y", 2)]),
        [None, None, None, None],
        id="pods spread across zones as 3/3, all nodes fit",
    ),
    pytest.param(
        make_pod("p").label("foo", "").spread_constraint(1, "zone", "DoNotSchedule", FOO).obj(),
        [
            make_node("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node("node-b").label("zon", "zone1").label("node", "node-b").obj(),
            make_node("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        pods_on([("node-a", 1), ("node-b", 1), ("node-x", 1), ("node-y", 1)]),
        [None, NO_LABEL, SKEW, SKEW],
        id="pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
    ),
    pytest.param(
        make_pod("p").label("foo", "").spread_constraint(1, "rack", "DoNotSchedule", FOO).obj(),
        zone_nodes(),
        [],
        [NO_LABEL] * 4,
        id="pod cannot be scheduled as all nodes don't have label 'rack'",
    ),
    pytest.param(
        make_pod("p").label("foo", "").spread_constraint(1, "node", "DoNotSchedule", FOO).obj(),
        zone_nodes(),
        pods_on([("node-a", 2), ("node-b", 1), ("node-y", 3)]),
        [SKEW, SKEW, None, SKEW],
        id="pods spread across nodes as 2/1/0/3, only node-x fits",
    ),
    pytest.param(
        make_pod("p").label("foo", "").spread_constraint(2, "node", "DoNotSchedule", FOO).obj(),
        zone_nodes(),
        pods_on([("node-a", 2), ("node-b", 1), ("node-y", 3)]),
        [SKEW, None, None, SKEW],
        id="pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
    ),
    pytest.param(
        make_pod("p").label("bar", "").spread_constraint(1, "node", "DoNotSchedule", FOO).obj(),
        zone_nodes(),
        pods_on([("node-a", 2), ("node-b", 1), ("node-y", 3)]),
        [SKEW, None, None, SKEW],
        id="pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
    ),
    pytest.param(
        make_pod("p").label("foo", "").spread_constraint(1, "zone", "DoNotSchedule", FOO, min_domains=3).obj(),
        zone_nodes(),
        pods_on([("node-a", 1), ("node-x", 1)]),
        [SKEW, SKEW, SKEW, SKEW],
        id="kubesched: fewer domains than minDomains make the global minimum 0",
    ),
]


@pytest.mark.parametrize(("pod", "nodes", "existing", "want"), CASES)
def test_single_constraint(pod, nodes, existing, want):
    snap = build_snapshot(nodes, existing)
    plugin = new_plugin(new, default_args("PodTopologySpread", PodTopologySpreadArgs()), snap, lister_with())
    assert filter_statuses(plugin, pod, snap, batch=False) == want


def test_score_prefers_emptier_host():
    """Hostname constraint: weight ln(2+2), raw a=round(2*1.386)=3, b=0; normalised (max+min-s)*100/max."""
    nodes = [
        make_node("node-a").label("kubernetes.io/hostname", "node-a").obj(),
        make_node("node-b").label("kubernetes.io/hostname", "node-b").obj(),
    ]
    existing = [make_pod(f"e{i}").node("node-a").label("foo", "").obj() for i in range(2)]
    pod = make_pod("p").label("foo", "").spread_constraint(1, "kubernetes.io/hostname", "ScheduleAnyway", FOO).obj()
    snap = build_snapshot(nodes, existing)
    plugin = new_plugin(new, default_args("PodTopologySpread", PodTopologySpreadArgs()), snap, lister_with())
    assert score_nodes(plugin, pod, snap) == ([0, 100], None)


def test_system_default_constraints_use_service_selector():
    nodes = [
        make_node("node-a").label("kubernetes.io/hostname", "node-a").obj(),
        make_node("node-b").label("kubernetes.io/hostname", "node-b").obj(),
    ]
    existing = [make_pod(f"e{i}").node("node-a").label("app", "web").obj() for i in range(3)]
    svc = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": {"app": "web"}},
    }
    snap = build_snapshot(nodes, existing)
    plugin = new_plugin(new, default_args("PodTopologySpread", PodTopologySpreadArgs()), snap, lister_with([svc]))
    scores, status = score_nodes(plugin, make_pod("p").label("app", "web").obj(), snap)
    assert status is None and scores[1] == 100 and scores[0] < 100
    no_service = new_plugin(new, default_args("PodTopologySpread", PodTopologySpreadArgs()), snap, lister_with())
    _, skipped = score_nodes(no_service, make_pod("p").label("app", "web").obj(), snap)
    assert skipped is not None and skipped.code == Code.SKIP


@settings(max_examples=300, deadline=None)
@given(data=st.data(), values=st.integers(1, 40))
def test_domain_sums_equal_the_sorting_form(data: st.DataObject, values: int) -> None:
    """Counting gives what np.unique did: codes in first-seen order, matching pods summed by code."""
    codes = np.asarray(data.draw(st.lists(st.integers(0, values - 1), min_size=1, max_size=60)), dtype=np.int32)
    matching = np.asarray(data.draw(st.lists(st.integers(0, 9), min_size=len(codes), max_size=len(codes))))
    present, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    sums = np.bincount(inverse, weights=matching, minlength=len(present)).astype(np.int64)
    order = np.argsort(first, kind="stable")
    got_codes, got_sums = domain_sums(codes, matching.astype(np.int64), values)
    assert got_codes.dtype == present.dtype and got_sums.dtype == sums.dtype
    assert got_codes.tolist() == present[order].tolist() and got_sums.tolist() == sums[order].tolist()
