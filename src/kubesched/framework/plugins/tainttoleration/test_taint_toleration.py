"""Cases from taint_toleration_test.go (v1.36); case names unchanged.

TaintTolerationComparisonOperators is alpha and off in v1.36: a Gt or Lt toleration tolerates
nothing, so only upstream's cases that hold with the gate off are ported.
"""

import pytest

from kubesched.framework.plugins.tainttoleration.taint_toleration import ERR_REASON_NOT_MATCH, new
from kubesched.framework.status import Code, Status
from kubesched_testing.framework import build_snapshot, filter_statuses, new_plugin, score_nodes
from kubesched_testing.wrappers import make_node, make_pod


def pod_with_tolerations(*tols):
    w = make_pod("pod1")
    for t in tols:
        w.toleration(**t)
    return w.obj()


def node_with_taints(name, *taints):
    w = make_node(name)
    for t in taints:
        w.taint(*t)
    return w.obj()


UNTOLERATED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NOT_MATCH)

SCORE_CASES = [
    pytest.param(
        pod_with_tolerations(dict(key="foo", value="bar", effect="PreferNoSchedule")),
        [
            node_with_taints("nodeA", ("foo", "bar", "PreferNoSchedule")),
            node_with_taints("nodeB", ("foo", "blah", "PreferNoSchedule")),
        ],
        [100, 0],
        id="node with taints tolerated by the pod, gets a higher score than those node with intolerable taints",
    ),
    pytest.param(
        pod_with_tolerations(
            dict(key="cpu-type", value="arm64", effect="PreferNoSchedule"),
            dict(key="disk-type", value="ssd", effect="PreferNoSchedule"),
        ),
        [
            node_with_taints("nodeA"),
            node_with_taints("nodeB", ("cpu-type", "arm64", "PreferNoSchedule")),
            node_with_taints(
                "nodeC", ("cpu-type", "arm64", "PreferNoSchedule"), ("disk-type", "ssd", "PreferNoSchedule")
            ),
        ],
        [100, 100, 100],
        id="the nodes that all of their taints are tolerated by the pod, get the same score, "
        "no matter how many tolerable taints a node has",
    ),
    pytest.param(
        pod_with_tolerations(dict(key="foo", value="bar", effect="PreferNoSchedule")),
        [
            node_with_taints("nodeA"),
            node_with_taints("nodeB", ("cpu-type", "arm64", "PreferNoSchedule")),
            node_with_taints(
                "nodeC", ("cpu-type", "arm64", "PreferNoSchedule"), ("disk-type", "ssd", "PreferNoSchedule")
            ),
        ],
        [100, 50, 0],
        id="the more intolerable taints a node has, the lower score it gets.",
    ),
    pytest.param(
        pod_with_tolerations(
            dict(key="cpu-type", value="arm64", effect="NoSchedule"),
            dict(key="disk-type", value="ssd", effect="NoSchedule"),
        ),
        [
            node_with_taints("nodeA"),
            node_with_taints("nodeB", ("cpu-type", "arm64", "NoSchedule")),
            node_with_taints(
                "nodeC", ("cpu-type", "arm64", "PreferNoSchedule"), ("disk-type", "ssd", "PreferNoSchedule")
            ),
        ],
        [100, 100, 0],
        id="only taints and tolerations that have effect PreferNoSchedule are checked by taints-tolerations "
        "priority function",
    ),
    pytest.param(
        pod_with_tolerations(),
        [node_with_taints("nodeA"), node_with_taints("nodeB", ("cpu-type", "arm64", "PreferNoSchedule"))],
        [100, 0],
        id="Default behaviour No taints and tolerations, lands on node with no taints",
    ),
]


@pytest.mark.parametrize(("pod", "nodes", "expected"), SCORE_CASES)
def test_taint_toleration_score(pod, nodes, expected, batch):
    snap = build_snapshot(nodes)
    plugin = new_plugin(new, None, snap)
    scores, status = score_nodes(plugin, pod, snap, batch=batch)
    assert status is None
    assert scores == expected


FILTER_CASES = [
    pytest.param(
        pod_with_tolerations(),
        node_with_taints("nodeA", ("dedicated", "user1", "NoSchedule")),
        UNTOLERATED,
        id="A pod having no tolerations can't be scheduled onto a node with nonempty taints",
    ),
    pytest.param(
        pod_with_tolerations(dict(key="dedicated", value="user1", effect="NoSchedule")),
        node_with_taints("nodeA", ("dedicated", "user1", "NoSchedule")),
        None,
        id="A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
    ),
    pytest.param(
        pod_with_tolerations(dict(key="dedicated", operator="Equal", value="user2", effect="NoSchedule")),
        node_with_taints("nodeA", ("dedicated", "user1", "NoSchedule")),
        UNTOLERATED,
        id="A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule",
    ),
    pytest.param(
        pod_with_tolerations(dict(key="foo", operator="Exists", effect="NoSchedule")),
        node_with_taints("nodeA", ("foo", "bar", "NoSchedule")),
        None,
        id="A pod can be scheduled onto the node, with a toleration uses operator Exists that tolerates the taints "
        "on the node",
    ),
    pytest.param(
        pod_with_tolerations(
            dict(key="dedicated", operator="Equal", value="user2", effect="NoSchedule"),
            dict(key="foo", operator="Exists", effect="NoSchedule"),
        ),
        node_with_taints("nodeA", ("dedicated", "user2", "NoSchedule"), ("foo", "bar", "NoSchedule")),
        None,
        id="A pod has multiple tolerations, node has multiple taints, all the taints are tolerated, pod can be "
        "scheduled onto the node",
    ),
    pytest.param(
        pod_with_tolerations(dict(key="foo", operator="Equal", value="bar", effect="PreferNoSchedule")),
        node_with_taints("nodeA", ("foo", "bar", "NoSchedule")),
        UNTOLERATED,
        id="A pod has a toleration that keys and values match the taint on the node, but (non-empty) effect "
        "doesn't match, can't be scheduled onto the node",
    ),
    pytest.param(
        pod_with_tolerations(dict(key="foo", operator="Equal", value="bar")),
        node_with_taints("nodeA", ("foo", "bar", "NoSchedule")),
        None,
        id="The pod has a toleration that keys and values match the taint on the node, the effect of toleration "
        "is empty, and the effect of taint is NoSchedule. Pod can be scheduled onto the node",
    ),
    pytest.param(
        pod_with_tolerations(dict(key="dedicated", operator="Equal", value="user2", effect="NoSchedule")),
        node_with_taints("nodeA", ("dedicated", "user1", "PreferNoSchedule")),
        None,
        id="The pod has a toleration that key and value don't match the taint on the node, but the effect of "
        "taint on node is PreferNoSchedule. Pod can be scheduled onto the node",
    ),
    pytest.param(
        pod_with_tolerations(),
        node_with_taints("nodeA", ("dedicated", "user1", "PreferNoSchedule")),
        None,
        id="The pod has no toleration, but the effect of taint on node is PreferNoSchedule. Pod can be scheduled "
        "onto the node",
    ),
    pytest.param(
        pod_with_tolerations(dict(operator="Exists")),
        node_with_taints("nodeA", ("a", "b", "NoExecute"), ("c", "d", "NoSchedule")),
        None,
        id="kubesched: an empty key with Exists tolerates every taint",
    ),
]


@pytest.mark.parametrize(("pod", "node", "want"), FILTER_CASES)
def test_taint_toleration_filter(pod, node, want, batch):
    snap = build_snapshot([node])
    plugin = new_plugin(new, None, snap)
    assert filter_statuses(plugin, pod, snap, batch=batch) == [want]


SLA = "node.kubernetes.io/sla"

GATE_OFF_FILTER_CASES = [
    pytest.param(
        pod_with_tolerations(dict(key=SLA, operator="Gt", value="950", effect="NoSchedule")),
        node_with_taints("nodeA", (SLA, "high", "NoSchedule")),
        UNTOLERATED,
        id="Pod with Gt toleration cannot be scheduled on node with non-numeric taint value",
    ),
    pytest.param(
        pod_with_tolerations(dict(key=SLA, operator="Gt", value="750", effect="NoSchedule")),
        node_with_taints("nodeA", (SLA, "950", "NoSchedule")),
        UNTOLERATED,
        id="Pod with Gt toleration cannot be scheduled when feature gate is disabled",
    ),
    pytest.param(
        pod_with_tolerations(dict(key=SLA, operator="Lt", value="950", effect="NoSchedule")),
        node_with_taints("nodeA", (SLA, "800", "NoSchedule")),
        UNTOLERATED,
        id="Pod with Lt toleration cannot be scheduled when feature gate is disabled",
    ),
    pytest.param(
        pod_with_tolerations(
            dict(key="dedicated", operator="Equal", value="user1", effect="NoSchedule"),
            dict(key=SLA, operator="Gt", value="750", effect="NoSchedule"),
        ),
        node_with_taints("nodeA", ("dedicated", "user1", "NoSchedule")),
        None,
        id="Pod with mixed tolerations (Equal and Gt) when feature gate is disabled - only Equal is honored",
    ),
    pytest.param(
        pod_with_tolerations(
            dict(key="dedicated", operator="Equal", value="user1", effect="NoSchedule"),
            dict(key=SLA, operator="Gt", value="750", effect="NoSchedule"),
        ),
        node_with_taints("nodeA", ("dedicated", "user1", "NoSchedule"), (SLA, "950", "NoSchedule")),
        UNTOLERATED,
        id="Pod with mixed tolerations, Gt toleration needed but filtered out when feature gate is disabled",
    ),
]


@pytest.mark.parametrize(("pod", "node", "want"), GATE_OFF_FILTER_CASES)
def test_taint_toleration_filter_with_comparison_operators_off(pod, node, want, batch):
    snap = build_snapshot([node])
    plugin = new_plugin(new, None, snap)
    assert filter_statuses(plugin, pod, snap, batch=batch) == [want]


def test_comparison_operator_toleration_does_not_count_for_score(batch):
    """kubesched: with the gate off, upstream's Gt score case leaves both PreferNoSchedule taints untolerated."""
    pod = pod_with_tolerations(dict(key=SLA, operator="Gt", value="950", effect="PreferNoSchedule"))
    nodes = [
        node_with_taints("nodeA", (SLA, "800", "PreferNoSchedule")),
        node_with_taints("nodeB", (SLA, "999", "PreferNoSchedule")),
        node_with_taints("nodeC"),
    ]
    snap = build_snapshot(nodes)
    plugin = new_plugin(new, None, snap)
    assert score_nodes(plugin, pod, snap, batch=batch) == ([0, 0, 100], None)
