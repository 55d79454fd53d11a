"""NodeUnschedulable, NodeName, NodePorts, SchedulingGates, ImageLocality: cases from their *_test.go."""

import pytest

from kubesched.framework.plugins.imagelocality import image_locality
from kubesched.framework.plugins.nodename import node_name
from kubesched.framework.plugins.nodeports import node_ports
from kubesched.framework.plugins.nodeunschedulable import node_unschedulable
from kubesched.framework.plugins.schedulinggates import scheduling_gates
from kubesched.framework.status import Code, Status
from kubesched.framework.types import new_pod_info
from kubesched.testing.framework import build_snapshot, filter_statuses, new_plugin, score_nodes
from kubesched.testing.wrappers import make_node, make_pod


@pytest.mark.parametrize(
    ("pod", "unschedulable", "want"),
    [
        pytest.param(
            make_pod().obj(),
            False,
            None,
            id="Does not schedule pod to unschedulable node (node.Spec.Unschedulable==nil)",
        ),
        pytest.param(
            make_pod().obj(),
            True,
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, node_unschedulable.ERR_REASON_UNSCHEDULABLE),
            id="Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)",
        ),
        pytest.param(
            make_pod().toleration("node.kubernetes.io/unschedulable", effect="NoSchedule").obj(),
            True,
            None,
            id="Schedule pod to unschedulable node with tolerations",
        ),
    ],
)
def test_node_unschedulable(pod, unschedulable, want, batch):
    snap = build_snapshot([make_node("n").unschedulable(unschedulable).obj()])
    plugin = new_plugin(node_unschedulable.new, None, snap)
    assert filter_statuses(plugin, pod, snap, batch=batch) == [want]


@pytest.mark.parametrize(
    ("pod", "want"),
    [
        pytest.param(make_pod().obj(), None, id="no host specified"),
        pytest.param(make_pod().node("foo").obj(), None, id="host matches"),
        pytest.param(
            make_pod().node("bar").obj(),
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, node_name.ERR_REASON),
            id="host doesn't match",
        ),
    ],
)
def test_node_name(pod, want, batch):
    snap = build_snapshot([make_node("foo").obj()])
    plugin = new_plugin(node_name.new, None, snap)
    assert filter_statuses(plugin, pod, snap, batch=batch) == [want]


PORTS_CONFLICT = Status(Code.UNSCHEDULABLE, node_ports.ERR_REASON)


@pytest.mark.parametrize(
    ("pod", "existing", "want"),
    [
        pytest.param(make_pod().obj(), [], None, id="nothing running"),
        pytest.param(
            make_pod().host_port(8080, ip="127.0.0.1").obj(),
            [make_pod("e").node("m1").host_port(9090, ip="127.0.0.1").obj()],
            None,
            id="other port",
        ),
        pytest.param(
            make_pod().host_port(8080, ip="127.0.0.1").obj(),
            [make_pod("e").node("m1").host_port(8080, ip="127.0.0.1").obj()],
            PORTS_CONFLICT,
            id="same udp port",
        ),
        pytest.param(
            make_pod().host_port(8080, protocol="UDP", ip="127.0.0.1").obj(),
            [make_pod("e").node("m1").host_port(8080, protocol="TCP", ip="127.0.0.1").obj()],
            None,
            id="same port, different protocol",
        ),
        pytest.param(
            make_pod().host_port(8001, ip="127.0.0.1").obj(),
            [make_pod("e").node("m1").host_port(8001, ip="0.0.0.0").obj()],
            PORTS_CONFLICT,
            id="first tcp port conflict due to 0.0.0.0 hostIP",
        ),
        pytest.param(
            make_pod().host_port(8001, ip="127.0.0.1").obj(),
            [make_pod("e").node("m1").host_port(8001, ip="127.0.0.2").obj()],
            None,
            id="kubesched: same port on two specific IPs does not conflict",
        ),
    ],
)
def test_node_ports(pod, existing, want, batch):
    snap = build_snapshot([make_node("m1").obj()], existing)
    plugin = new_plugin(node_ports.new, None, snap)
    assert filter_statuses(plugin, pod, snap, batch=batch) == [want]


def test_node_ports_prefilter_skips_pods_without_host_ports():
    snap = build_snapshot([make_node("m1").obj()])
    plugin = new_plugin(node_ports.new, None, snap)
    from kubesched.framework.cycle_state import CycleState

    _, status = plugin.pre_filter(CycleState(), new_pod_info(make_pod().obj()), [])
    assert status is not None and status.code == Code.SKIP


@pytest.mark.parametrize(
    ("pod", "want"),
    [
        pytest.param(make_pod().obj(), None, id="pod does not carry scheduling gates"),
        pytest.param(
            make_pod().scheduling_gates(["foo", "bar"]).obj(),
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for scheduling gates: [foo bar]"),
            id="pod carries scheduling gates",
        ),
    ],
)
def test_scheduling_gates_pre_enqueue(pod, want):
    plugin = scheduling_gates.new(None, None)
    assert plugin.pre_enqueue(new_pod_info(pod)) == want


MB = 1024 * 1024


def test_image_locality_scores():
    """imageLocality test "two images spread on two nodes, prefer the larger image one": 40MB vs 300MB."""
    nodes = [
        make_node("node1").images({"gcr.io/40:latest": 40 * MB, "gcr.io/300:latest": 300 * MB}).obj(),
        make_node("node2").images({"gcr.io/250:latest": 250 * MB, "gcr.io/10:v1": 10 * MB}).obj(),
    ]
    pod = make_pod().container("gcr.io/40").container("gcr.io/250").obj()
    snap = build_snapshot(nodes)
    plugin = new_plugin(image_locality.new, None, snap)
    # node1: 40MB*1/2 = 20MB -> below 23MB threshold -> 0; node2: 250MB*1/2 = 125MB -> 100*(125-23)/(2000-23) = 5
    assert score_nodes(plugin, pod, snap) == ([0, 5], None)
    assert score_nodes(plugin, pod, snap, batch=True) == ([0, 5], None)
