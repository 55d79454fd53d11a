"""Helpers shared by this package's tests, after upstream's util_test.go."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.config.defaults import default_args
from kubesched.config.types import NodeResourcesFitArgs, ResourceSpec, ScoringStrategy
from kubesched_testing.wrappers import make_node, make_pod

DEFAULT_RESOURCES = [ResourceSpec(name="cpu", weight=1), ResourceSpec(name="memory", weight=1)]
EXTENDED_RES = "abc.com/xyz"
EXTENDED_RESOURCE_SET = [*DEFAULT_RESOURCES, ResourceSpec(name=EXTENDED_RES, weight=1)]


def make_node_res(name: str, milli_cpu: int, memory: int, extended: dict[str, int] | None = None) -> dict[str, Any]:
    """makeNode: capacity = allocatable, cpu in millicores."""
    res = {"cpu": f"{milli_cpu}m", "memory": str(memory), **{k: str(v) for k, v in (extended or {}).items()}}
    return make_node(name).capacity(res).obj()


def capacity_node(name: str, capacity: dict[str, str] | None = None) -> dict[str, Any]:
    """st.MakeNode().Name(name).Capacity(capacity)."""
    w = make_node(name)
    if capacity is not None:
        w.capacity(capacity)
    return w.obj()


def fit_args(
    strategy: str = "LeastAllocated",
    resources: list[ResourceSpec] | None = None,
    shape: list[dict[str, int]] | None = None,
    **kw: Any,
) -> NodeResourcesFitArgs:
    rtcr = {"shape": shape} if shape is not None else None
    st = ScoringStrategy.model_validate(
        {
            "type": strategy,
            "resources": [r.model_dump() for r in (resources or DEFAULT_RESOURCES)],
            "requestedToCapacityRatio": rtcr,
        }
    )
    args = default_args("NodeResourcesFit", NodeResourcesFitArgs(scoringStrategy=st, **kw))
    assert isinstance(args, NodeResourcesFitArgs)
    return args


GI = 1024**3
N4 = make_node_res("n1", 4000, 8 * GI)
N8 = make_node_res("n2", 8000, 8 * GI)


def ctr(name: str, requests: dict[str, str] | None = None, **extra: Any) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "image": "pause", **extra}
    if requests is not None:
        c["resources"] = {"requests": requests}
    return c


def pod(
    name: str,
    containers: list[dict[str, Any]],
    *,
    init: list[dict[str, Any]] | None = None,
    node_name: str = "",
    pod_level: dict[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    obj = make_pod(name).node(node_name).obj()
    obj["spec"].update(containers=containers, **spec)
    if init:
        obj["spec"]["initContainers"] = init
    if pod_level:
        obj["spec"]["resources"] = {"requests": pod_level}
    return obj


def running(name: str, requests: dict[str, str] | None = None, allocated: dict[str, str] | None = None) -> Any:
    cs: dict[str, Any] = {"name": name}
    if requests is not None:
        cs["resources"] = {"requests": requests}
    if allocated is not None:
        cs["allocatedResources"] = allocated
    return cs


INFEASIBLE = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]


def with_status(obj: dict[str, Any], **status: Any) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    obj["status"] = {"phase": "Running", **status}
    return obj


CPU1_MEM1 = pod("p", [ctr("c", {"cpu": "1", "memory": "1Gi"})])
POD_LEVEL_EXISTING = [
    pod("e1", [ctr("a", {"cpu": "500m"}), ctr("b")], node_name="n1", pod_level={"memory": "2Gi"}),
    pod("e2", [ctr("a"), ctr("b")], node_name="n2", pod_level={"cpu": "1"}),
]
RESIZING = pod("e1", [ctr("a", {"cpu": "1", "memory": "1Gi"})], node_name="n1")
POD_LEVEL_RESIZING = pod("e1", [ctr("a", {"cpu": "1"})], node_name="n1", pod_level={"cpu": "1", "memory": "1Gi"})
OVERHEAD = {"cpu": "250m", "memory": "120Mi"}

# (pod, nodes, existing pods, BalancedAllocation scores, NodeResourcesFit scores); test_fit.py reuses the Fit column.
CHECKED_AGAINST_V136 = [
    pytest.param(CPU1_MEM1, [N4, N8], [], [71, 75], [81, 87], id="cpu 1/4 and memory 1/8 of an empty node: 71"),
    pytest.param(
        pod("p", [ctr("a"), ctr("b")], pod_level={"cpu": "1", "memory": "2Gi"}),
        [N4, N8],
        [],
        [75, 71],
        [95, 96],
        id="pod-level requests, requestless containers",
    ),
    pytest.param(
        pod("p", [ctr("a", {"cpu": "500m"}), ctr("b")], pod_level={"memory": "2Gi"}),
        [N4, N8],
        [],
        [71, 70],
        [90, 93],
        id="pod-level memory, one container asks cpu",
    ),
    pytest.param(
        pod("p", [ctr("a"), ctr("b")], pod_level={"cpu": "1500m"}),
        [N4, N8],
        [],
        [65, 70],
        [95, 96],
        id="pod-level cpu, requestless containers",
    ),
    pytest.param(CPU1_MEM1, [N4, N8], POD_LEVEL_EXISTING, [78, 75], [62, 78], id="nodes with pod-level pods"),
    pytest.param(
        pod(
            "p",
            [ctr("c", {"cpu": "1", "memory": "1Gi"})],
            init=[ctr("i", {"cpu": "2"}), ctr("s", {"memory": "3Gi"}, restartPolicy="Always")],
        ),
        [N4, N8],
        [],
        [75, 68],
        [50, 62],
        id="init container and sidecar",
    ),
    pytest.param(
        pod("p", [ctr("c"), ctr("d", {"cpu": "300m"})], init=[ctr("i"), ctr("s", restartPolicy="Always")]),
        [N4, N8],
        [],
        [73, 74],
        [89, 92],
        id="requestless init container and sidecar",
    ),
    pytest.param(
        pod("p", [ctr("c", {"cpu": "1", "memory": "1Gi"})], overhead=OVERHEAD),
        [N4, N8],
        [pod("e1", [ctr("a", {"cpu": "1"})], node_name="n1", overhead=OVERHEAD)],
        [70, 74],
        [59, 85],
        id="overhead on the pod and on the node's pod",
    ),
    pytest.param(
        pod("p", [ctr("c")], overhead=OVERHEAD),
        [N4, N8],
        [pod("e1", [ctr("a", {"cpu": "1"})], node_name="n1", overhead=OVERHEAD)],
        [73, 74],
        [76, 95],
        id="overhead makes a requestless pod count",
    ),
    pytest.param(
        CPU1_MEM1,
        [N4, N8],
        [
            with_status(
                RESIZING,
                containerStatuses=[running("a", {"cpu": "2", "memory": "1Gi"}, {"cpu": "3", "memory": "512Mi"})],
            )
        ],
        [72, 75],
        [37, 87],
        id="a resizing pod counts at max(spec, actuated, allocated)",
    ),
    pytest.param(
        CPU1_MEM1,
        [N4, N8],
        [
            with_status(
                RESIZING,
                conditions=INFEASIBLE,
                containerStatuses=[running("a", {"cpu": "2", "memory": "1Gi"}, {"cpu": "500m", "memory": "512Mi"})],
            )
        ],
        [72, 75],
        [50, 87],
        id="an infeasible resize counts at max(actuated, allocated)",
    ),
    pytest.param(
        CPU1_MEM1,
        [N4, N8],
        [
            with_status(
                POD_LEVEL_RESIZING,
                resources={"requests": {"cpu": "3", "memory": "3Gi"}},
                allocatedResources={"cpu": "2"},
                containerStatuses=[running("a")],
            )
        ],
        [72, 75],
        [25, 87],
        id="pod-level resize",
    ),
    pytest.param(
        CPU1_MEM1,
        [N4, N8],
        [
            with_status(
                POD_LEVEL_RESIZING,
                conditions=INFEASIBLE,
                resources={"requests": {"cpu": "3"}},
                containerStatuses=[running("a")],
            )
        ],
        [72, 75],
        [43, 87],
        id="infeasible pod-level resize: memory not actuated counts 0",
    ),
]
