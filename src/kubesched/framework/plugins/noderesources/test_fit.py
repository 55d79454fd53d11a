"""fit_test.go (v1.36): Filter, Score and the queueing hints of NodeResourcesFit.

Case names are upstream's. The DRA-backed cases (a DeviceClass maps the extended resource)
run with the DRA manager's resolver over a store holding that class. Left out: the
SidecarContainers-disabled cases (the gate is locked on),
SignPod (opportunistic batching) and ScorePlacement (TopologyAwareWorkloadScheduling,
alpha and off). Fit scores read from kube-scheduler v1.36.3 come last.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.config.types import ResourceSpec
from kubesched.framework import events
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import QueueingHint
from kubesched.framework.node_info import NodeInfo, parse_node
from kubesched.framework.plugins.noderesources import resource_allocation as ra
from kubesched.framework.plugins.noderesources.fit import (
    Fit,
    InsufficientResource,
    fits_request,
    have_any_requested_resources_increased,
    new,
)
from kubesched.framework.plugins.noderesources.util_test import (
    CHECKED_AGAINST_V136,
    DEFAULT_RESOURCES,
    capacity_node,
    fit_args,
)
from kubesched.framework.status import Code, Status
from kubesched.framework.types import new_pod_info
from kubesched_testing.framework import build_snapshot, filter_statuses, lister_with, new_plugin, score_nodes
from kubesched_testing.wrappers import make_node, make_pod

EXT_A = "example.com/aaa"
EXT_B = "example.com/bbb"
K8S_IO_A = "kubernetes.io/something"
K8S_IO_B = "subdomain.kubernetes.io/something"
HUGE_A = "hugepages-2Mi"
DRA_EXT = "extended.resource.dra.io/something"

U = Code.UNSCHEDULABLE
UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
QUEUE_HINT, SKIP_HINT = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP


def res(cpu: int = 0, mem: int = 0, eph: int = 0, scalars: dict[str, int] | None = None) -> dict[str, str]:
    """One container's requests as newResourcePod builds them (pods and ephemeral-storage always listed)."""
    out = {"cpu": f"{cpu}m", "memory": str(mem), "pods": "0", "ephemeral-storage": str(eph)}
    out.update({k: str(v) for k, v in (scalars or {}).items()})
    return out


def resource_pod(
    *usage: dict[str, str],
    init: tuple[dict[str, str], ...] = (),
    overhead: dict[str, str] | None = None,
    pod_level: dict[str, str] | None = None,
    node: str = "",
) -> dict[str, Any]:
    """newResourcePod / newResourceInitPod / newResourceOverheadPod / newPodLevelResourcesPod."""
    w = make_pod().node(node)
    for u in usage:
        w.req(u)
    for u in init:
        w.init_req(u)
    obj = w.obj()
    if overhead:
        obj["spec"]["overhead"] = overhead
    if pod_level:
        obj["spec"]["resources"] = {"requests": pod_level}
    return obj


def node_with(alloc: dict[str, str], existing: tuple[dict[str, str], ...]) -> tuple[dict[str, Any], list[Any]]:
    """A node "machine1" with this allocatable and one pod (newResourcePod(existing...)) on it."""
    n = make_node("machine1").obj()
    n["status"] = {"capacity": dict(alloc), "allocatable": dict(alloc)}
    return n, [resource_pod(*existing, node="machine1")]


def allocatable(cpu: int, mem: int, pods: int, ext_a: int, eph: int, huge: int) -> dict[str, str]:
    """makeAllocatableResources."""
    return {
        "cpu": f"{cpu}m",
        "memory": str(mem),
        "pods": str(pods),
        EXT_A: str(ext_a),
        "ephemeral-storage": str(eph),
        HUGE_A: str(huge),
    }


def ir(name: str, requested: int, used: int, capacity: int, unresolvable: bool = False) -> InsufficientResource:
    return InsufficientResource(name, f"Insufficient {name}", requested, used, capacity, unresolvable)


def insufficient(code: Code, *names: str) -> Status:
    return Status(code, *(f"Insufficient {n}" for n in names))


NO_ARGS: dict[str, Any] = {}

ENOUGH_CASES = [
    pytest.param(resource_pod(), (res(10, 20),), NO_ARGS, None, [], id="no resources requested always fits"),
    pytest.param(
        resource_pod(res(1, 1)),
        (res(10, 20),),
        NO_ARGS,
        insufficient(U, "cpu", "memory"),
        [ir("cpu", 1, 10, 10), ir("memory", 1, 20, 20)],
        id="too many resources fails",
    ),
    pytest.param(
        resource_pod(res(1, 1), init=(res(3, 1),)),
        (res(8, 19),),
        NO_ARGS,
        insufficient(U, "cpu"),
        [ir("cpu", 3, 8, 10)],
        id="too many resources fails due to init container cpu",
    ),
    pytest.param(
        resource_pod(res(1, 1), init=(res(3, 1), res(2, 1))),
        (res(8, 19),),
        NO_ARGS,
        insufficient(U, "cpu"),
        [ir("cpu", 3, 8, 10)],
        id="too many resources fails due to highest init container cpu",
    ),
    pytest.param(
        resource_pod(res(1, 1), init=(res(1, 3),)),
        (res(9, 19),),
        NO_ARGS,
        insufficient(U, "memory"),
        [ir("memory", 3, 19, 20)],
        id="too many resources fails due to init container memory",
    ),
    pytest.param(
        resource_pod(res(1, 1), init=(res(1, 3), res(1, 2))),
        (res(9, 19),),
        NO_ARGS,
        insufficient(U, "memory"),
        [ir("memory", 3, 19, 20)],
        id="too many resources fails due to highest init container memory",
    ),
    pytest.param(
        resource_pod(res(1, 1), init=(res(1, 1),)),
        (res(9, 19),),
        NO_ARGS,
        None,
        [],
        id="init container fits because it's the max, not sum, of containers and init containers",
    ),
    pytest.param(
        resource_pod(res(1, 1), init=(res(1, 1), res(1, 1))),
        (res(9, 19),),
        NO_ARGS,
        None,
        [],
        id="multiple init containers fit because it's the max, not sum, of containers and init containers",
    ),
    pytest.param(resource_pod(res(1, 1)), (res(5, 5),), NO_ARGS, None, [], id="both resources fit"),
    pytest.param(
        resource_pod(res(2, 1)),
        (res(9, 5),),
        NO_ARGS,
        insufficient(U, "cpu"),
        [ir("cpu", 2, 9, 10)],
        id="one resource memory fits",
    ),
    pytest.param(
        resource_pod(res(1, 2)),
        (res(5, 19),),
        NO_ARGS,
        insufficient(U, "memory"),
        [ir("memory", 2, 19, 20)],
        id="one resource cpu fits",
    ),
    pytest.param(resource_pod(res(5, 1)), (res(5, 19),), NO_ARGS, None, [], id="equal edge case"),
    pytest.param(
        resource_pod(res(4, 1), init=(res(5, 1),)),
        (res(5, 19),),
        NO_ARGS,
        None,
        [],
        id="equal edge case for init container",
    ),
    pytest.param(resource_pod(res(scalars={EXT_A: 1})), (res(),), NO_ARGS, None, [], id="extended resource fits"),
    pytest.param(
        resource_pod(res(), init=(res(scalars={EXT_A: 1}),)),
        (res(),),
        NO_ARGS,
        None,
        [],
        id="extended resource fits for init container",
    ),
    pytest.param(
        resource_pod(res(1, 1, scalars={EXT_A: 10})),
        (res(0, 0, scalars={EXT_A: 0}),),
        NO_ARGS,
        insufficient(UU, EXT_A),
        [ir(EXT_A, 10, 0, 5, True)],
        id="extended resource capacity enforced",
    ),
    pytest.param(
        resource_pod(res(), init=(res(1, 1, scalars={EXT_A: 10}),)),
        (res(0, 0, scalars={EXT_A: 0}),),
        NO_ARGS,
        insufficient(UU, EXT_A),
        [ir(EXT_A, 10, 0, 5, True)],
        id="extended resource capacity enforced for init container",
    ),
    pytest.param(
        resource_pod(res(1, 1, scalars={EXT_A: 1})),
        (res(0, 0, scalars={EXT_A: 5}),),
        NO_ARGS,
        insufficient(U, EXT_A),
        [ir(EXT_A, 1, 5, 5)],
        id="extended resource allocatable enforced",
    ),
    pytest.param(
        resource_pod(res(), init=(res(1, 1, scalars={EXT_A: 1}),)),
        (res(0, 0, scalars={EXT_A: 5}),),
        NO_ARGS,
        insufficient(U, EXT_A),
        [ir(EXT_A, 1, 5, 5)],
        id="extended resource allocatable enforced for init container",
    ),
    pytest.param(
        resource_pod(res(1, 1, scalars={EXT_A: 3}), res(1, 1, scalars={EXT_A: 3})),
        (res(0, 0, scalars={EXT_A: 2}),),
        NO_ARGS,
        insufficient(UU, EXT_A),
        [ir(EXT_A, 6, 2, 5, True)],
        id="extended resource allocatable enforced for multiple containers",
    ),
    pytest.param(
        resource_pod(res(), init=(res(1, 1, scalars={EXT_A: 3}), res(1, 1, scalars={EXT_A: 3}))),
        (res(0, 0, scalars={EXT_A: 2}),),
        NO_ARGS,
        None,
        [],
        id="extended resource allocatable admits multiple init containers",
    ),
    pytest.param(
        resource_pod(res(), init=(res(1, 1, scalars={EXT_A: 6}), res(1, 1, scalars={EXT_A: 3}))),
        (res(0, 0, scalars={EXT_A: 2}),),
        NO_ARGS,
        insufficient(UU, EXT_A),
        [ir(EXT_A, 6, 2, 5, True)],
        id="extended resource allocatable enforced for multiple init containers",
    ),
    pytest.param(
        resource_pod(res(1, 1, scalars={EXT_B: 1})),
        (res(0, 0),),
        NO_ARGS,
        insufficient(UU, EXT_B),
        [ir(EXT_B, 1, 0, 0, True)],
        id="extended resource allocatable enforced for unknown resource",
    ),
    pytest.param(
        resource_pod(res(), init=(res(1, 1, scalars={EXT_B: 1}),)),
        (res(0, 0),),
        NO_ARGS,
        insufficient(UU, EXT_B),
        [ir(EXT_B, 1, 0, 0, True)],
        id="extended resource allocatable enforced for unknown resource for init container",
    ),
    pytest.param(
        resource_pod(res(1, 1, scalars={K8S_IO_A: 10})),
        (res(0, 0),),
        NO_ARGS,
        insufficient(UU, K8S_IO_A),
        [ir(K8S_IO_A, 10, 0, 0, True)],
        id="kubernetes.io resource capacity enforced",
    ),
    pytest.param(
        resource_pod(res(), init=(res(1, 1, scalars={K8S_IO_B: 10}),)),
        (res(0, 0),),
        NO_ARGS,
        insufficient(UU, K8S_IO_B),
        [ir(K8S_IO_B, 10, 0, 0, True)],
        id="kubernetes.io resource capacity enforced for init container",
    ),
    pytest.param(
        resource_pod(res(1, 1, scalars={HUGE_A: 10})),
        (res(0, 0, scalars={HUGE_A: 0}),),
        NO_ARGS,
        insufficient(UU, HUGE_A),
        [ir(HUGE_A, 10, 0, 5, True)],
        id="hugepages resource capacity enforced",
    ),
    pytest.param(
        resource_pod(res(), init=(res(1, 1, scalars={HUGE_A: 10}),)),
        (res(0, 0, scalars={HUGE_A: 0}),),
        NO_ARGS,
        insufficient(UU, HUGE_A),
        [ir(HUGE_A, 10, 0, 5, True)],
        id="hugepages resource capacity enforced for init container",
    ),
    pytest.param(
        resource_pod(res(1, 1, scalars={HUGE_A: 3}), res(1, 1, scalars={HUGE_A: 3})),
        (res(0, 0, scalars={HUGE_A: 2}),),
        NO_ARGS,
        insufficient(UU, HUGE_A),
        [ir(HUGE_A, 6, 2, 5, True)],
        id="hugepages resource allocatable enforced for multiple containers",
    ),
    pytest.param(
        resource_pod(res(1, 1, scalars={EXT_B: 1})),
        (res(0, 0),),
        {"ignoredResources": [EXT_B]},
        None,
        [],
        id="skip checking ignored extended resource",
    ),
    pytest.param(
        resource_pod(res(1, 1), overhead={"cpu": "3m", "memory": "13"}),
        (res(5, 5),),
        NO_ARGS,
        None,
        [],
        id="resources + pod overhead fits",
    ),
    pytest.param(
        resource_pod(res(1, 1), overhead={"cpu": "1m", "memory": "15"}),
        (res(5, 5),),
        NO_ARGS,
        insufficient(U, "memory"),
        [ir("memory", 16, 5, 20)],
        id="requests + overhead does not fit for memory",
    ),
    pytest.param(
        resource_pod(res(1, 1, scalars={EXT_B: 1, K8S_IO_A: 1})),
        (res(0, 0),),
        {"ignoredResourceGroups": ["example.com"]},
        insufficient(UU, K8S_IO_A),
        [ir(K8S_IO_A, 1, 0, 0, True)],
        id="skip checking ignored extended resource via resource groups",
    ),
    pytest.param(
        resource_pod(res(1, 1, scalars={EXT_A: 0})),
        (res(0, 0, scalars={EXT_A: 6}),),
        NO_ARGS,
        None,
        [],
        id="skip checking extended resource request with quantity zero via resource groups",
    ),
    pytest.param(
        resource_pod(res(scalars={EXT_A: 1})),
        (res(20, 30, scalars={EXT_A: 1}),),
        NO_ARGS,
        None,
        [],
        id="skip checking resource request with quantity zero",
    ),
    pytest.param(
        resource_pod(res(1, 1), pod_level={"cpu": "1m", "memory": "2"}),
        (res(5, 5),),
        NO_ARGS,
        None,
        [],
        id="both pod-level and container-level resources fit",
    ),
    pytest.param(
        resource_pod(res(1, 1), pod_level={"cpu": "7m", "memory": "2"}),
        (res(5, 5),),
        NO_ARGS,
        insufficient(U, "cpu"),
        [ir("cpu", 7, 5, 10)],
        id="pod-level cpu resource not fit",
    ),
    pytest.param(
        resource_pod(res(1, 1), pod_level={"cpu": "3m", "memory": "2"}),
        (res(5, 19),),
        NO_ARGS,
        insufficient(U, "memory"),
        [ir("memory", 2, 19, 20)],
        id="pod-level memory resource not fit",
    ),
    pytest.param(
        resource_pod(pod_level={"cpu": "3m", "memory": "2", HUGE_A: "5"}),
        (),
        NO_ARGS,
        None,
        [],
        id="pod-level hugepages resource fit",
    ),
    pytest.param(
        resource_pod(res(1, 1, scalars={HUGE_A: 3}), pod_level={"cpu": "3m", "memory": "2", HUGE_A: "5"}),
        (),
        NO_ARGS,
        None,
        [],
        id="both pod-level and container-level hugepages resource fit",
    ),
    pytest.param(
        resource_pod(pod_level={"cpu": "3m", "memory": "2", HUGE_A: "10"}),
        (),
        NO_ARGS,
        insufficient(UU, HUGE_A),
        [ir(HUGE_A, 10, 0, 5, True)],
        id="pod-level hugepages resource not fit",
    ),
    pytest.param(
        resource_pod(res(1, 1), init=(res(1, 1),), pod_level={"cpu": "3m", "memory": "2"}),
        (res(5, 19),),
        NO_ARGS,
        insufficient(U, "memory"),
        [ir("memory", 2, 19, 20)],
        id="one pod-level cpu resource fits and all init and non-init containers resources fit",
    ),
    pytest.param(
        resource_pod(res(scalars={EXT_A: 1})),
        (res(),),
        NO_ARGS,
        None,
        [],
        id="extended resource backed by device plugin",
    ),
    pytest.param(
        resource_pod(res(1, 1, scalars={EXT_A: 1})),
        (res(0, 0),),
        NO_ARGS,
        None,
        [],
        id="extended resource backed by DRA, nil draManager",
    ),
    pytest.param(
        resource_pod(res(1, 1, scalars={DRA_EXT: 1})),
        (res(0, 0),),
        NO_ARGS,
        insufficient(UU, DRA_EXT),
        [ir(DRA_EXT, 1, 0, 0, True)],
        id="extended resource backed by DRA not enabled",
    ),
    pytest.param(
        resource_pod(res(1, 1, scalars={EXT_B: 1})),
        (res(0, 0),),
        NO_ARGS,
        insufficient(UU, EXT_B),
        [ir(EXT_B, 1, 0, 0, True)],
        id="extended resource NOT backed by DRA",
    ),
    pytest.param(
        resource_pod(res(scalars={EXT_A: 1})),
        (res(scalars={EXT_A: 0}),),
        NO_ARGS,
        None,
        [],
        id="extended resource was backed by Device Plugin (Allocatable: 0), global cache",
    ),
]


@pytest.mark.parametrize(("pod", "existing", "args", "want_status", "want_insufficient"), ENOUGH_CASES)
def test_enough_requests(
    pod: dict[str, Any],
    existing: tuple[dict[str, str], ...],
    args: dict[str, Any],
    want_status: Status | None,
    want_insufficient: list[InsufficientResource],
    batch: bool,
) -> None:
    node, pods = node_with(allocatable(10, 20, 32, 5, 20, 5), existing)
    snap = build_snapshot([node], pods)
    plugin = new_plugin(new, fit_args(**args), snap)
    assert filter_statuses(plugin, pod, snap, batch=batch) == [want_status]
    got = fits_request(
        new_pod_info(pod).requests, snap.node_info_list[0], plugin.ignored_resources, plugin.ignored_resource_groups
    )
    assert got == want_insufficient


@pytest.mark.parametrize(
    ("pod", "existing"),
    [
        pytest.param(
            resource_pod(),
            (res(10, 20),),
            id="even without specified resources, predicate fails when there's no space for additional pod",
        ),
        pytest.param(
            resource_pod(res(1, 1)),
            (res(5, 5),),
            id="even if both resources fit, predicate fails when there's no space for additional pod",
        ),
        pytest.param(
            resource_pod(res(5, 1)),
            (res(5, 19),),
            id="even for equal edge case, predicate fails when there's no space for additional pod",
        ),
        pytest.param(
            resource_pod(res(5, 1), init=(res(5, 1),)),
            (res(5, 19),),
            id=(
                "even for equal edge case, predicate fails when there's no space for additional pod"
                " due to init container"
            ),
        ),
    ],
)
def test_not_enough_requests(pod: dict[str, Any], existing: tuple[dict[str, str], ...], batch: bool) -> None:
    node, pods = node_with(allocatable(10, 20, 1, 0, 0, 0), existing)
    snap = build_snapshot([node], pods)
    plugin = new_plugin(new, fit_args(), snap)
    assert filter_statuses(plugin, pod, snap, batch=batch) == [Status(U, "Too many pods")]


@pytest.mark.parametrize(
    ("pod", "existing", "want"),
    [
        pytest.param(resource_pod(res(1, 1)), (res(2, 10),), None, id="empty storage requested, and pod fits"),
        pytest.param(
            resource_pod(res(eph=25)),
            (res(2, 2),),
            insufficient(UU, "ephemeral-storage"),
            id="storage ephemeral local storage request exceeds allocatable",
        ),
        pytest.param(resource_pod(res(eph=5)), (res(2, 2, eph=10),), None, id="ephemeral local storage is sufficient"),
        pytest.param(resource_pod(res(eph=10)), (res(2, 2),), None, id="pod fits"),
    ],
)
def test_storage_requests(
    pod: dict[str, Any], existing: tuple[dict[str, str], ...], want: Status | None, batch: bool
) -> None:
    node, pods = node_with(allocatable(10, 20, 32, 5, 20, 5), existing)
    snap = build_snapshot([node], pods)
    plugin = new_plugin(new, fit_args(), snap)
    assert filter_statuses(plugin, pod, snap, batch=batch) == [want]


def sidecar_pod(request: dict[str, str] | None, sidecar_request: dict[str, str] | None) -> dict[str, Any]:
    regular: dict[str, Any] = {"name": "regular"}
    sidecar: dict[str, Any] = {"name": "restartable-init", "restartPolicy": "Always"}
    if request is not None:
        regular["resources"] = {"requests": request}
    if sidecar_request is not None:
        sidecar["resources"] = {"requests": sidecar_request}
    obj = make_pod().obj()
    obj["spec"].update(containers=[regular], initContainers=[sidecar])
    return obj


@pytest.mark.parametrize(
    ("pod", "want"),
    [
        pytest.param(
            {**make_pod().obj(), "spec": {"containers": [{"name": "regular"}]}},
            None,
            id="allow pod without restartable init containers if sidecar containers is enabled",
        ),
        pytest.param(
            sidecar_pod(None, None),
            None,
            id="allow pod with restartable init containers if sidecar containers is enabled",
        ),
        pytest.param(
            sidecar_pod({"cpu": "1m"}, {"cpu": "1m"}),
            None,
            id="allow pod if the total requested resources do not exceed the node's allocatable resources",
        ),
        pytest.param(
            sidecar_pod({"cpu": "1m"}, {"cpu": "2m"}),
            insufficient(UU, "cpu"),
            id="not allow pod if the total requested resources do exceed the node's allocatable resources",
        ),
    ],
)
def test_restartable_init_containers(pod: dict[str, Any], want: Status | None, batch: bool) -> None:
    n = make_node("machine1").obj()
    n["status"] = {"capacity": {}, "allocatable": allocatable(2, 0, 1, 0, 0, 0)}
    snap = build_snapshot([n])
    plugin = new_plugin(new, fit_args(), snap)
    assert filter_statuses(plugin, pod, snap, batch=batch) == [want]


FIT_SCORE_NODES = [
    capacity_node("node1", {"cpu": "4000", "memory": "10000"}),
    capacity_node("node2", {"cpu": "6000", "memory": "10000"}),
]
FIT_SCORE_EXISTING = [
    make_pod().node("node1").req({"cpu": "2000", "memory": "4000"}).obj(),
    make_pod().node("node2").req({"cpu": "1000", "memory": "2000"}).obj(),
]
SIDECAR_NODES = [
    capacity_node("node1", {"cpu": "4000", "memory": "10000"}),
    capacity_node("node2", {"cpu": "4000", "memory": "10000"}),
]
SIDECAR_EXISTING = [
    make_pod()
    .node("node1")
    .req({"cpu": "1000", "memory": "2000"})
    .init_req({"cpu": "1000", "memory": "2000"}, sidecar=True)
    .obj(),
    make_pod().node("node2").req({"cpu": "1000", "memory": "2000"}).obj(),
]
SHAPE_DOWN = [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
SHAPE_UP = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
POD_3000 = make_pod().req({"cpu": "3000", "memory": "5000"}).obj()
POD_1000 = make_pod().req({"cpu": "1000", "memory": "2000"}).obj()

FIT_SCORE_CASES = [
    pytest.param(
        POD_3000,
        FIT_SCORE_NODES,
        FIT_SCORE_EXISTING,
        ("RequestedToCapacityRatio", SHAPE_DOWN),
        [10, 32],
        id="test case for ScoringStrategy RequestedToCapacityRatio case1",
    ),
    pytest.param(
        POD_3000,
        FIT_SCORE_NODES,
        FIT_SCORE_EXISTING,
        ("RequestedToCapacityRatio", SHAPE_UP),
        [95, 68],
        id="test case for ScoringStrategy RequestedToCapacityRatio case2",
    ),
    pytest.param(
        POD_1000,
        FIT_SCORE_NODES,
        FIT_SCORE_EXISTING,
        ("MostAllocated", None),
        [67, 36],
        id="test case for ScoringStrategy MostAllocated",
    ),
    pytest.param(
        POD_1000,
        FIT_SCORE_NODES,
        FIT_SCORE_EXISTING,
        ("LeastAllocated", None),
        [32, 63],
        id="test case for ScoringStrategy LeastAllocated",
    ),
    pytest.param(
        POD_1000,
        SIDECAR_NODES,
        SIDECAR_EXISTING,
        ("MostAllocated", None),
        [67, 45],
        id="test case for ScoringStrategy MostAllocated with sidecar container",
    ),
    pytest.param(
        POD_1000,
        SIDECAR_NODES,
        SIDECAR_EXISTING,
        ("LeastAllocated", None),
        [32, 55],
        id="test case for ScoringStrategy LeastAllocated with sidecar container",
    ),
]


@pytest.mark.parametrize(("pod", "nodes", "existing", "strategy", "expected"), FIT_SCORE_CASES)
@pytest.mark.parametrize("run_pre_score", [True, False], ids=["", "if PreScore is not called"])
def test_fit_score(
    pod: dict[str, Any],
    nodes: list[Any],
    existing: list[Any],
    strategy: tuple[str, Any],
    expected: list[int],
    run_pre_score: bool,
    batch: bool,
) -> None:
    snap = build_snapshot(nodes, existing)
    plugin = new_plugin(new, fit_args(strategy[0], DEFAULT_RESOURCES, strategy[1]), snap)
    if run_pre_score:
        assert score_nodes(plugin, pod, snap, batch=batch) == (expected, None)
        return
    info = new_pod_info(pod)
    if batch:
        got = plugin.score_batch(CycleState(), info, snap.table, np.arange(len(nodes), dtype=np.int64)).tolist()
    else:
        got = [plugin.score(CycleState(), info, ni)[0] for ni in snap.node_info_list]
    assert got == expected


@pytest.mark.parametrize(("pod", "nodes", "existing", "balanced", "expected"), CHECKED_AGAINST_V136)
def test_fit_scores_read_from_kube_scheduler_v136(
    pod: dict[str, Any], nodes: list[Any], existing: list[Any], balanced: list[int], expected: list[int], batch: bool
) -> None:
    """The default LeastAllocated: the Fit scorer sums container requests, ignoring pod-level and resize status."""
    snap = build_snapshot(nodes, existing)
    plugin = new_plugin(new, fit_args(), snap)
    assert score_nodes(plugin, pod, snap, batch=batch) == (expected, None)


def test_events_to_register() -> None:
    """InPlacePodVerticalScaling, queueing hints and DRAExtendedResource on."""
    got = {(e.event.resource, e.event.action_type) for e in Fit(fit_args()).events_to_register()}
    assert got == {
        (events.POD, events.DELETE | events.UPDATE_POD_SCALE_DOWN),
        (events.NODE, events.ADD | events.UPDATE_NODE_ALLOCATABLE),
        (events.DEVICE_CLASS, events.ADD | events.UPDATE),
    }


DRA_CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "device-class-name"},
    "spec": {"extendedResourceName": DRA_EXT},
}


@pytest.mark.parametrize(
    ("pod", "alloc_extra", "want_status", "want_insufficient"),
    [
        pytest.param(resource_pod(res(1, 1, scalars={DRA_EXT: 1})), {}, None, [], id="extended resource backed by DRA"),
        pytest.param(
            resource_pod(res(scalars={DRA_EXT: 1})),
            {DRA_EXT: "0"},
            None,
            [],
            id="extended resource was backed by Device Plugin (Allocatable: 0)",
        ),
        pytest.param(
            resource_pod(res(scalars={DRA_EXT: 3})),
            {DRA_EXT: "2"},
            insufficient(UU, DRA_EXT),
            [ir(DRA_EXT, 3, 0, 2, True)],
            id="a device plugin offers it here: the node's allocatable counts, not DRA",
        ),
        pytest.param(
            resource_pod(res(1, 1, scalars={EXT_B: 1})),
            {},
            insufficient(UU, EXT_B),
            [ir(EXT_B, 1, 0, 0, True)],
            id="extended resource NOT backed by DRA",
        ),
    ],
)
def test_extended_resources_backed_by_dra(
    pod: dict[str, Any],
    alloc_extra: dict[str, str],
    want_status: Status | None,
    want_insufficient: list[InsufficientResource],
    batch: bool,
) -> None:
    node, pods = node_with({**allocatable(10, 20, 32, 5, 20, 5), **alloc_extra}, (res(0, 0),))
    snap = build_snapshot([node], pods)
    plugin = new_plugin(new, fit_args(), snap, lister_with([DRA_CLASS]))
    assert filter_statuses(plugin, pod, snap, batch=batch) == [want_status]
    got = fits_request(new_pod_info(pod).requests, snap.node_info_list[0], frozenset(), frozenset(), plugin.resolver)
    assert got == want_insufficient


def test_batch_delegates_when_no_node_offers_the_resource() -> None:
    """No node lists the resource at all: the vectorised path has no column for it and must still leave it to DRA."""
    pod = resource_pod(res(1, 1, scalars={DRA_EXT: 1}))
    nodes = [capacity_node(f"n{i}", {"cpu": "1", "memory": "1Gi", "pods": "10"}) for i in range(3)]
    snap = build_snapshot(nodes)
    plugin = new_plugin(new, fit_args(), snap, lister_with([DRA_CLASS]))
    assert filter_statuses(plugin, pod, snap, batch=True) == [None, None, None]
    plain = new_plugin(new, fit_args(), snap)
    assert filter_statuses(plain, pod, snap, batch=True) == [insufficient(UU, DRA_EXT)] * 3


def device_class_hint_pod(scalars: dict[str, int]) -> Any:
    return new_pod_info(resource_pod(res(scalars=scalars) if scalars else res(mem=2)))


def device_class(name: str = "", extended: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"metadata": {"name": name}, "spec": {}}
    if extended is not None:
        out["spec"]["extendedResourceName"] = extended
    return out


@pytest.mark.parametrize(
    ("scalars", "old", "new_class", "want"),
    [
        pytest.param(
            {}, device_class(), device_class(), SKIP_HINT, id="skip-queue-on-class-nil-extended-resource-name"
        ),
        pytest.param(
            {},
            device_class(extended="example.com/gpu"),
            device_class(extended="example.com/gpu"),
            SKIP_HINT,
            id="skip-queue-on-class-same-extended-resource-name",
        ),
        pytest.param(
            {"deviceclass.resource.kubernetes.io/gpuclass": 1},
            None,
            device_class("gpuclass", "example.com/gpu"),
            QUEUE_HINT,
            id="queue-on-class-add-with-implicit-extended-resource-name",
        ),
        pytest.param(
            {"deviceclass.resource.kubernetes.io/gpuclass": 1},
            None,
            device_class("myclass", "example.com/gpu"),
            SKIP_HINT,
            id="skip-on-class-add-with-implicit-extended-resource-name-not-matching",
        ),
        pytest.param(
            {"example.com/othergpu": 1},
            None,
            device_class("myclass", "example.com/gpu"),
            SKIP_HINT,
            id="skip-on-class-add-with-explicit-extended-resource-name-not-matching",
        ),
        pytest.param(
            {"deviceclass.resource.kubernetes.io/gpuclass": 1},
            device_class("gpuclass"),
            device_class("gpuclass", "example.com/gpu"),
            SKIP_HINT,
            id="skip-on-class-update-with-implicit-extended-resource-name",
        ),
        pytest.param(
            {"example.com/gpu": 1},
            None,
            device_class(extended="example.com/gpu"),
            QUEUE_HINT,
            id="queue-on-class-add-with-extended-resource-name",
        ),
        pytest.param(
            {"example.com/gpu": 1},
            device_class(extended="example.com/gpu1"),
            device_class(extended="example.com/gpu"),
            QUEUE_HINT,
            id="queue-on-class-update-with-extended-resource-name",
        ),
    ],
)
def test_is_schedulable_after_device_class_change(
    scalars: dict[str, int], old: Any, new_class: Any, want: QueueingHint
) -> None:
    hint = Fit(fit_args())._after_device_class_event
    assert hint(device_class_hint_pod(scalars), old, new_class) == want


def test_device_class_hint_rejects_other_objects() -> None:
    hint = Fit(fit_args())._after_device_class_event
    with pytest.raises(TypeError):
        hint(device_class_hint_pod({}), None, "not-a-class")  # backoff-wrong-new-object
    with pytest.raises(TypeError):
        hint(device_class_hint_pod({}), "not-a-class", device_class())  # backoff-wrong-old-object


def hint_pod(
    name: str, requests: dict[str, str], *, node: str = "", nominated: str = "", pod_level: bool = False
) -> Any:
    w = make_pod(name).uid(name).node(node)
    if requests and not pod_level:
        w.req(requests)
    obj = w.obj()
    if pod_level:
        obj["spec"]["resources"] = {"requests": requests}
    if nominated:
        obj["status"] = {"nominatedNodeName": nominated}
    return new_pod_info(obj)


Q, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP
CPU1 = {"cpu": "1"}


@pytest.mark.parametrize(
    ("pod", "old", "new_pod", "want"),
    [
        pytest.param(
            hint_pod("pod1", CPU1), hint_pod("pod2", CPU1, node="fake"), None, Q, id="queue-on-other-pod-deleted"
        ),
        pytest.param(
            hint_pod("pod1", {}), hint_pod("pod2", {}), None, SKIP, id="skip-queue-on-unscheduled-pod-deleted"
        ),
        pytest.param(
            hint_pod("pod1", CPU1),
            hint_pod("pod2", {"cpu": "2"}, nominated="fake"),
            None,
            Q,
            id="queue-on-nominated-pod-deleted",
        ),
        pytest.param(
            hint_pod("pod1", CPU1),
            hint_pod("pod2", {"cpu": "2"}),
            hint_pod("pod2", CPU1),
            SKIP,
            id="skip-queue-on-other-unscheduled-pod",
        ),
        pytest.param(
            hint_pod("pod1", CPU1),
            hint_pod("pod2", {"memory": "2"}, node="fake"),
            hint_pod("pod2", {"memory": "1"}, node="fake"),
            SKIP,
            id="skip-queue-on-other-pod-unrelated-resource-scaled-down",
        ),
        pytest.param(
            hint_pod("pod1", CPU1, pod_level=True),
            hint_pod("pod2", {"memory": "2"}, node="fake", pod_level=True),
            hint_pod("pod2", {"memory": "1"}, node="fake", pod_level=True),
            SKIP,
            id="skip-queue-on-other-pod-unrelated-pod-level-resource-scaled-down",
        ),
        pytest.param(
            hint_pod("pod1", CPU1),
            hint_pod("pod2", {"cpu": "2"}, node="fake"),
            hint_pod("pod2", CPU1, node="fake"),
            Q,
            id="queue-on-other-pod-some-resource-scale-down",
        ),
        pytest.param(
            hint_pod("pod1", CPU1, pod_level=True),
            hint_pod("pod2", {"cpu": "2"}, node="fake", pod_level=True),
            hint_pod("pod2", CPU1, node="fake", pod_level=True),
            Q,
            id="queue-on-other-pod-some-pod-level-resource-scale-down",
        ),
        pytest.param(
            hint_pod("pod1", CPU1),
            hint_pod("pod1", {"cpu": "2"}),
            hint_pod("pod1", CPU1),
            Q,
            id="queue-on-target-pod-some-resource-scale-down",
        ),
        pytest.param(
            hint_pod("pod1", CPU1, pod_level=True),
            hint_pod("pod1", {"cpu": "2"}, pod_level=True),
            hint_pod("pod1", CPU1, pod_level=True),
            Q,
            id="queue-on-target-pod-some-pod-level-resource-scale-down",
        ),
    ],
)
def test_is_schedulable_after_pod_change(pod: Any, old: Any, new_pod: Any, want: QueueingHint) -> None:
    assert Fit(fit_args())._after_pod_event(pod, old, new_pod) == want


def cap_node(capacity: dict[str, str]) -> Any:
    return parse_node(make_node("n").capacity(capacity).obj())


@pytest.mark.parametrize(
    ("pod", "old", "new_node", "want"),
    [
        pytest.param(
            resource_pod(res(mem=2)),
            None,
            cap_node({"memory": "1"}),
            SKIP,
            id="skip-queue-on-node-add-without-sufficient-resources",
        ),
        pytest.param(
            resource_pod(res(scalars={EXT_A: 1})),
            None,
            cap_node({EXT_B: "1"}),
            SKIP,
            id="skip-queue-on-node-add-without-required-resource-type",
        ),
        pytest.param(
            resource_pod(res(mem=2, scalars={EXT_A: 1})),
            None,
            cap_node({"memory": "4", EXT_A: "2"}),
            Q,
            id="queue-on-node-add-with-sufficient-resources",
        ),
        pytest.param(
            resource_pod(res(mem=2, scalars={EXT_A: 1})),
            cap_node({"memory": "2", EXT_A: "2"}),
            cap_node({"memory": "2", EXT_A: "1", EXT_B: "2"}),
            SKIP,
            id="skip-queue-on-node-unrelated-changes",
        ),
        pytest.param(
            resource_pod(res(mem=2, scalars={EXT_A: 1})),
            cap_node({"memory": "2", EXT_A: "1"}),
            cap_node({"memory": "2", EXT_A: "2"}),
            Q,
            id="queue-on-pod-requested-resources-increase",
        ),
        pytest.param(
            resource_pod(res(mem=2, scalars={EXT_A: 1})),
            cap_node({"memory": "4", EXT_A: "2"}),
            cap_node({"memory": "1", EXT_A: "2"}),
            SKIP,
            id="skip-queue-on-node-changes-from-suitable-to-unsuitable",
        ),
        pytest.param(
            resource_pod(res(mem=2, scalars={EXT_A: 1})),
            cap_node({"memory": "1", EXT_A: "2"}),
            cap_node({"memory": "4", EXT_A: "2"}),
            Q,
            id="queue-on-node-changes-from-unsuitable-to-suitable",
        ),
    ],
)
def test_is_schedulable_after_node_change(pod: dict[str, Any], old: Any, new_node: Any, want: QueueingHint) -> None:
    assert Fit(fit_args())._after_node_change(new_pod_info(pod), old, new_node) == want


@pytest.mark.parametrize(
    ("pod", "capacity", "want"),
    [
        pytest.param(make_pod().req({"cpu": "2"}).obj(), {"cpu": "1"}, False, id="insufficient resource"),
        pytest.param(make_pod().req({"cpu": "1"}).obj(), {"cpu": "2"}, True, id="sufficient resource"),
        pytest.param(resource_pod(pod_level={"cpu": "2"}), {"cpu": "1"}, False, id="insufficient pod-level resource"),
        pytest.param(resource_pod(pod_level={"cpu": "2"}), {"cpu": "2"}, True, id="sufficient pod-level resource"),
        pytest.param(
            resource_pod(pod_level={HUGE_A: "2Mi"}), {HUGE_A: "2Mi"}, True, id="sufficient pod-level resource hugepages"
        ),
        pytest.param(
            resource_pod(pod_level={HUGE_A: "4Mi"}),
            {HUGE_A: "2Mi"},
            False,
            id="insufficient pod-level resource hugepages",
        ),
    ],
)
def test_is_fit(pod: dict[str, Any], capacity: dict[str, str], want: bool) -> None:
    """isFit: the pod against the node with nothing on it, no resource ignored."""
    empty = NodeInfo(parse_node(make_node("n").capacity(capacity).obj()))
    assert (not fits_request(new_pod_info(pod).requests, empty, frozenset(), frozenset())) == want


def plain_node(capacity: dict[str, str]) -> Any:
    """st.MakeNode().Capacity: 32 pods unless listed."""
    return parse_node(make_node("n").capacity(capacity).obj())


BASE = {"cpu": "1", "memory": "2", "ephemeral-storage": "3"}


@pytest.mark.parametrize(
    ("pod", "original", "modified", "want"),
    [
        pytest.param(
            resource_pod(res()),
            {"pods": "1", "cpu": "1", "memory": "1", "ephemeral-storage": "1", EXT_A: "1"},
            {"pods": "1", "cpu": "2", "memory": "2", "ephemeral-storage": "2", EXT_A: "2"},
            False,
            id="no-requested-resources",
        ),
        pytest.param(
            resource_pod(res()),
            {"pods": "1", "cpu": "1", "memory": "1", "ephemeral-storage": "1", EXT_A: "1"},
            {"pods": "2", "cpu": "1", "memory": "1", "ephemeral-storage": "1", EXT_A: "1"},
            True,
            id="no-requested-resources-pods-increased",
        ),
        pytest.param(
            resource_pod(res(2, 2, 2, scalars={EXT_A: 2})),
            BASE,
            {**BASE, "ephemeral-storage": "1"},
            False,
            id="scalar-resources-not-in-node",
        ),
        pytest.param(
            resource_pod(res(2, 2, 2, scalars={EXT_A: 2})),
            {**BASE, EXT_A: "4"},
            {**BASE, "ephemeral-storage": "1", EXT_A: "1"},
            False,
            id="requested-resources-decreased",
        ),
        pytest.param(
            resource_pod(res(2, 2, 2, scalars={EXT_A: 2})),
            {**BASE, EXT_A: "4"},
            {"cpu": "3", "memory": "4", "ephemeral-storage": "3", EXT_A: "4"},
            True,
            id="requested-resources-increased",
        ),
        pytest.param(
            resource_pod(res(2, 2)),
            {**BASE, EXT_A: "4"},
            {**BASE, "ephemeral-storage": "1", EXT_A: "1"},
            False,
            id="non-requested-resources-decreased",
        ),
        pytest.param(
            resource_pod(res(2, 2)),
            {**BASE, EXT_A: "4"},
            {**BASE, "ephemeral-storage": "5", EXT_A: "6"},
            False,
            id="non-requested-resources-increased",
        ),
        pytest.param(
            resource_pod(res(2, 2, 2, scalars={DRA_EXT: 2})),
            {**BASE, DRA_EXT: "4"},
            {**BASE, "ephemeral-storage": "1", DRA_EXT: "1"},
            False,
            id="requested-resources-dra-in-node",
        ),
    ],
)
def test_have_any_requested_resources_increased(
    pod: dict[str, Any], original: dict[str, str], modified: dict[str, str], want: bool
) -> None:
    got = have_any_requested_resources_increased(new_pod_info(pod).requests, plain_node(original), plain_node(modified))
    assert got == want


@pytest.mark.parametrize(
    ("pod", "expected"),
    [
        pytest.param(
            {"spec": {"overhead": {"cpu": "1", "memory": "1Mi"}}}, {"cpu": 1000, "memory": 2**20}, id="overhead only"
        ),
        pytest.param(
            {"spec": {"containers": [{}]}}, {"cpu": 100, "memory": 200 * 2**20}, id="1x requestless container"
        ),
        pytest.param(
            {"spec": {"containers": [{}, {}]}}, {"cpu": 200, "memory": 400 * 2**20}, id="2x requestless container"
        ),
        pytest.param(
            {"spec": {"containers": [{"resources": {"requests": {"cpu": "1", "memory": "1Mi"}}}, {}]}},
            {"cpu": 1100, "memory": 201 * 2**20},
            id="request container + requestless container",
        ),
        pytest.param(
            {
                "spec": {
                    "overhead": {"cpu": "1", "memory": "1Mi"},
                    "containers": [{"resources": {"requests": {"cpu": "1", "memory": "1Mi"}}}, {}],
                }
            },
            {"cpu": 2100, "memory": 202 * 2**20},
            id="container + requestless container + overhead",
        ),
        pytest.param(
            {
                "spec": {
                    "overhead": {"cpu": "1", "memory": "1Mi"},
                    "initContainers": [{"resources": {"requests": {"cpu": "3"}}}],
                    "containers": [{"resources": {"requests": {"cpu": "1", "memory": "1Mi"}}}, {}],
                }
            },
            {"cpu": 4000, "memory": 202 * 2**20},
            id="init container + container + requestless container + overhead",
        ),
        pytest.param(
            {
                "spec": {
                    "initContainers": [{}, {"resources": {"requests": {"cpu": "1m", "memory": "1"}}}],
                    "containers": [{"resources": {"requests": {"cpu": "3m", "memory": "3"}}}],
                }
            },
            {"cpu": 100, "memory": 200 * 2**20},
            id="requestless init container + small init container + small container ",
        ),
        pytest.param(
            {
                "spec": {
                    "initContainers": [{}, {"resources": {"requests": {"cpu": "1m", "memory": "1"}}}],
                    "containers": [{"resources": {"requests": {"cpu": "3m", "memory": "3"}}}, {}],
                }
            },
            {"cpu": 103, "memory": 3 + 200 * 2**20},
            id="requestless init container + small init container + small container + requestless container ",
        ),
    ],
)
def test_resource_allocation_scorer_calculate_requests(pod: dict[str, Any], expected: dict[str, int]) -> None:
    """resource_allocation_test.go's TestResourceAllocationScorerCalculateRequests: the Fit scorer's requests."""
    info = new_pod_info({"metadata": {"name": "p"}, **pod})
    specs = [r for r in DEFAULT_RESOURCES if r.name in expected]
    assert ra.pod_request_list(info, specs, use_requested=False) == [expected[r.name] for r in specs]


def test_filter_reads_spec_not_resize_status(batch: bool) -> None:
    """computePodResourceRequest sets no UseStatusResources: a pending pod counts at its spec in Filter."""
    pod = make_pod("p").req({"cpu": "1m"}).obj()
    pod["status"] = {"containerStatuses": [{"name": "c0", "resources": {"requests": {"cpu": "5m"}}}]}
    node, pods = node_with(allocatable(2, 20, 32, 0, 0, 0), ())
    snap = build_snapshot([node], pods)
    assert filter_statuses(new_plugin(new, fit_args(), snap), pod, snap, batch=batch) == [None]


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(["LeastAllocated", "MostAllocated"]),
    st.tuples(st.integers(0, 5), st.integers(0, 5)),
    st.lists(st.tuples(st.integers(0, 64), st.integers(0, 64), st.integers(0, 40)), min_size=1, max_size=12),
    st.tuples(st.integers(0, 8), st.integers(0, 8)),
    st.booleans(),
)
def test_strategy_scores_equal_the_per_node_score(
    strategy: str,
    weights: tuple[int, int],
    shapes: list[tuple[int, int, int]],
    request: tuple[int, int],
    every_node_has_both: bool,
) -> None:
    """score_batch's shortcut (CPU and memory on every node) and its general path (some node lacks one) give each
    node the per-node score, for either strategy and any weights."""
    nodes, existing = [], []
    for i, (cpu, mem, used) in enumerate(shapes):
        if every_node_has_both:
            cpu, mem = max(cpu, 1), max(mem, 1)
        nodes.append(make_node(f"n{i}").capacity({"cpu": str(cpu), "memory": f"{mem}Gi", "pods": "10"}).obj())
        existing.append(make_pod(f"e{i}").node(f"n{i}").req({"cpu": f"{used * 100}m", "memory": f"{used}Gi"}).obj())
    snap = build_snapshot(nodes, existing)
    resources = [ResourceSpec(name="cpu", weight=weights[0]), ResourceSpec(name="memory", weight=weights[1])]
    plugin = new_plugin(new, fit_args(strategy, resources), snap)
    pod = new_pod_info(make_pod("p").req({"cpu": str(request[0]), "memory": f"{request[1]}Gi"}).obj())
    batch = plugin.score_batch(CycleState(), pod, snap.table, np.arange(len(nodes), dtype=np.int64)).tolist()
    assert batch == [plugin.score(CycleState(), pod, ni)[0] for ni in snap.node_info_list]
