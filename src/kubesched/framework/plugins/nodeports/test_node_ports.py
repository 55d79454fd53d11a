"""Cases from node_ports_test.go (v1.36); case names unchanged."""

import pytest

from kubesched.api.taints import container_host_ports, host_ports_conflict
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.plugins.nodeports.node_ports import ERR_REASON, new
from kubesched.framework.status import Code, Status
from kubesched.framework.types import new_pod_info
from kubesched_testing.framework import build_snapshot, filter_statuses, new_plugin
from kubesched_testing.wrappers import make_node, make_pod

CONFLICT = Status(Code.UNSCHEDULABLE, ERR_REASON)


def new_pod(node, *port_infos, name="p"):
    """upstream's newPod: one container port per "PROTOCOL/IP/PORT"."""
    ports = []
    for info in port_infos:
        protocol, ip, port = info.split("/")
        ports.append({"hostIP": ip, "hostPort": int(port), "protocol": protocol})
    obj = make_pod(name).node(node).obj()
    obj["spec"]["containers"] = [{"name": "c", "image": "pause", "ports": ports}]
    return obj


def init_port_pod(*, sidecar):
    obj = make_pod().obj()
    init = {"name": "i", "image": "pause", "ports": [{"containerPort": 8001, "hostPort": 8001, "protocol": "TCP"}]}
    if sidecar:
        init["restartPolicy"] = "Always"
    obj["spec"]["initContainers"] = [init]
    return obj


@pytest.mark.parametrize(
    ("pod", "existing", "want"),
    [
        pytest.param(new_pod("m1", "UDP/127.0.0.1/8080"), ["UDP/127.0.0.1/9090"], None, id="other port"),
        pytest.param(new_pod("m1", "UDP/127.0.0.1/8080"), ["UDP/127.0.0.1/8080"], CONFLICT, id="same udp port"),
        pytest.param(new_pod("m1", "TCP/127.0.0.1/8080"), ["TCP/127.0.0.1/8080"], CONFLICT, id="same tcp port"),
        pytest.param(new_pod("m1", "TCP/127.0.0.1/8080"), ["TCP/127.0.0.2/8080"], None, id="different host ip"),
        pytest.param(new_pod("m1", "UDP/127.0.0.1/8080"), ["TCP/127.0.0.1/8080"], None, id="different protocol"),
        pytest.param(
            new_pod("m1", "UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
            ["UDP/127.0.0.1/8080"],
            CONFLICT,
            id="second udp port conflict",
        ),
        pytest.param(
            new_pod("m1", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
            ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"],
            CONFLICT,
            id="first tcp port conflict",
        ),
        pytest.param(
            new_pod("m1", "TCP/0.0.0.0/8001"),
            ["TCP/127.0.0.1/8001"],
            CONFLICT,
            id="first tcp port conflict due to 0.0.0.0 hostIP",
        ),
        pytest.param(
            new_pod("m1", "TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
            ["TCP/127.0.0.1/8001"],
            CONFLICT,
            id="TCP hostPort conflict due to 0.0.0.0 hostIP",
        ),
        pytest.param(
            new_pod("m1", "TCP/127.0.0.1/8001"),
            ["TCP/0.0.0.0/8001"],
            CONFLICT,
            id="second tcp port conflict to 0.0.0.0 hostIP",
        ),
        pytest.param(new_pod("m1", "UDP/127.0.0.1/8001"), ["TCP/0.0.0.0/8001"], None, id="second different protocol"),
        pytest.param(
            new_pod("m1", "UDP/127.0.0.1/8001"),
            ["TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"],
            CONFLICT,
            id="UDP hostPort conflict due to 0.0.0.0 hostIP",
        ),
        pytest.param(
            init_port_pod(sidecar=True),
            ["TCP/0.0.0.0/8001"],
            CONFLICT,
            id="TCP hostPort conflict from sidecar initContainer",
        ),
    ],
)
def test_node_ports(pod, existing, want, batch):
    snap = build_snapshot([make_node("m1").obj()], [new_pod("m1", *existing, name="e")])
    plugin = new_plugin(new, None, snap)
    assert filter_statuses(plugin, pod, snap, batch=batch) == [want]


@pytest.mark.parametrize(
    "pod",
    [
        pytest.param(make_pod().obj(), id="skip filter"),
        pytest.param(init_port_pod(sidecar=False), id="non-sidecar initContainer using hostPort"),
    ],
)
def test_pre_filter_skips(pod):
    plugin = new_plugin(new, None, build_snapshot([]))
    result, status = plugin.pre_filter(CycleState(), new_pod_info(pod), [])
    assert result is None and status == Status(Code.SKIP)


def test_pre_filter_disabled():
    """Filter without PreFilter's state is an error."""
    snap = build_snapshot([make_node("n").obj()])
    plugin = new_plugin(new, None, snap)
    with pytest.raises(RuntimeError, match="PreFilterNodePorts"):
        plugin.filter(CycleState(), new_pod_info(make_pod().obj()), snap.node_info_list[0])


@pytest.mark.parametrize(
    ("pod", "existing", "expect"),
    [
        pytest.param(new_pod("p", "TCP/127.0.0.1/80"), ["TCP/127.0.0.1/9090"], True, id="non-conflicting ports"),
        pytest.param(
            new_pod("p", "TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"),
            ["TCP/127.0.0.1/9090", "TCP/127.0.0.1/9191", "TCP/127.0.1.1/8080"],
            True,
            id="multiple non-conflicting ports",
        ),
        pytest.param(
            new_pod("m1", "TCP/127.0.0.1/80"), ["UDP/127.0.0.1/80"], True, id="same ports on different protocols"
        ),
        pytest.param(new_pod("m1", "TCP/127.0.0.1/80"), ["TCP/127.0.0.1/80"], False, id="conflicting ports"),
        pytest.param(
            new_pod("p", "TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"),
            ["TCP/127.0.0.1/9090", "TCP/127.0.1.1/90", "TCP/127.0.1.1/8080"],
            False,
            id="multiple ports, some conflicting",
        ),
    ],
)
def test_fits(pod, existing, expect):
    """TestFits: the ports check the Filter and the pod-deleted hint share."""
    used = container_host_ports(new_pod("p1", *existing)["spec"])
    assert (not host_ports_conflict(used, container_host_ports(pod["spec"]))) is expect
