"""Cases from balanced_allocation_test.go (v1.34: best-effort pods skip scoring)."""

import pytest

from kubesched.config.defaults import default_args
from kubesched.framework.plugins.noderesources.balanced_allocation import new
from kubesched.framework.status import Code
from kubesched.testing.framework import build_snapshot, new_plugin, score_nodes
from kubesched.testing.wrappers import make_node, make_pod

CASES = [
    pytest.param(
        make_pod().req({"cpu": "3000", "memory": "5000"}).obj(),
        [
            make_node("node1").capacity({"cpu": "4000", "memory": "10000"}).obj(),
            make_node("node2").capacity({"cpu": "6000", "memory": "10000"}).obj(),
        ],
        [],
        [87, 100],
        id="nothing scheduled, resources requested, differently sized nodes",
    ),
    pytest.param(
        make_pod().req({"cpu": "3000", "memory": "5000"}).obj(),
        [
            make_node("node1").capacity({"cpu": "10000", "memory": "20000"}).obj(),
            make_node("node2").capacity({"cpu": "10000", "memory": "20000"}).obj(),
        ],
        [
            make_pod("e1").node("node1").req({"cpu": "3000", "memory": "0"}).obj(),
            make_pod("e2").node("node2").req({"cpu": "3000", "memory": "5000"}).obj(),
        ],
        [82, 95],
        id="resources requested, pods scheduled with resources",
    ),
    pytest.param(
        make_pod().req({"cpu": "3000", "memory": "5000"}).obj(),
        [
            make_node("node1").capacity({"cpu": "10000", "memory": "20000"}).obj(),
            make_node("node2").capacity({"cpu": "10000", "memory": "50000"}).obj(),
        ],
        [
            make_pod("e1").node("node1").req({"cpu": "3000", "memory": "0"}).obj(),
            make_pod("e2").node("node2").req({"cpu": "3000", "memory": "5000"}).obj(),
        ],
        [82, 80],
        id="resources requested, pods scheduled with resources, differently sized nodes",
    ),
    pytest.param(
        make_pod().req({"cpu": "3000", "memory": "5000"}).obj(),
        [
            make_node("node1").capacity({"cpu": "4000", "memory": "10000"}).obj(),
            make_node("node2").capacity({"cpu": "4000", "memory": "10000"}).obj(),
        ],
        [
            make_pod("e1").node("node1").req({"cpu": "3000", "memory": "0"}).obj(),
            make_pod("e2").node("node2").req({"cpu": "3000", "memory": "5000"}).obj(),
        ],
        [75, 100],
        id="requested resources at node capacity",
    ),
    pytest.param(
        make_pod().req({"cpu": "3000", "memory": "5000"}).obj(),
        [make_node("node1").obj(), make_node("node2").obj()],
        [],
        [100, 100],
        id="zero node resources, pods scheduled with resources",
    ),
]


@pytest.mark.parametrize(("pod", "nodes", "existing", "expected"), CASES)
def test_node_resources_balanced_allocation(pod, nodes, existing, expected, batch):
    snap = build_snapshot(nodes, existing)
    plugin = new_plugin(new, default_args("NodeResourcesBalancedAllocation", None), snap)
    assert score_nodes(plugin, pod, snap, batch=batch) == (expected, None)


def test_best_effort_pod_skips_pre_score():
    snap = build_snapshot([make_node("node1").capacity({"cpu": "4000", "memory": "10000"}).obj()])
    plugin = new_plugin(new, default_args("NodeResourcesBalancedAllocation", None), snap)
    _, status = score_nodes(plugin, make_pod().obj(), snap)
    assert status is not None and status.code == Code.SKIP
