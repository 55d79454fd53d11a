"""balanced_allocation_test.go (v1.36): the score is the change in balance the pod makes.

Upstream's table first (case names unchanged; the DRA-backed cases need DeviceClasses and
ResourceSlices, which this scheduler does not read), then cases whose scores were read
from kube-scheduler v1.36.3 at --v=10 ("Plugin scored node for pod").
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.config.defaults import default_args
from kubesched.config.types import NodeResourcesBalancedAllocationArgs, ResourceSpec
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.plugins.noderesources import resource_allocation as ra
from kubesched.framework.plugins.noderesources.balanced_allocation import new
from kubesched.framework.plugins.noderesources.util_test import CHECKED_AGAINST_V136, DEFAULT_RESOURCES, make_node_res
from kubesched.framework.status import Code
from kubesched.framework.types import new_pod_info
from kubesched_testing.framework import build_snapshot, new_plugin, score_nodes
from kubesched_testing.wrappers import make_pod

GPU = "nvidia.com/gpu"
DEFAULT = DEFAULT_RESOURCES
WITH_GPU = [*DEFAULT, ResourceSpec(name=GPU, weight=1)]


def cpu_and_memory(cpu: str, memory: str) -> dict[str, str]:
    return {"cpu": cpu, "memory": memory}


def args(resources: list[ResourceSpec]) -> NodeResourcesBalancedAllocationArgs:
    defaulted = default_args(
        "NodeResourcesBalancedAllocation", NodeResourcesBalancedAllocationArgs(resources=resources)
    )
    assert isinstance(defaulted, NodeResourcesBalancedAllocationArgs)
    return defaulted


def two_containers() -> Any:
    return make_pod().req(cpu_and_memory("1000m", "2000")).req(cpu_and_memory("2000m", "3000"))


UPSTREAM = [
    pytest.param(
        two_containers().obj(),
        [make_node_res("node1", 4000, 10000), make_node_res("node2", 6000, 10000)],
        [],
        [68, 75],
        DEFAULT,
        id="nothing scheduled, resources requested, differently sized nodes",
    ),
    pytest.param(
        two_containers().obj(),
        [make_node_res("node1", 10000, 20000), make_node_res("node2", 10000, 20000)],
        [
            make_pod().node("node1").req({"cpu": "1000m"}).req({"cpu": "2000m"}).obj(),
            two_containers().node("node2").obj(),
        ],
        [73, 74],
        DEFAULT,
        id="resources requested, pods scheduled with resources",
    ),
    pytest.param(
        two_containers().obj(),
        [make_node_res("node1", 10000, 20000), make_node_res("node2", 10000, 50000)],
        [
            make_pod().node("node1").req({"cpu": "1000m"}).req({"cpu": "2000m"}).obj(),
            two_containers().node("node2").obj(),
        ],
        [73, 70],
        DEFAULT,
        id="resources requested, pods scheduled with resources, differently sized nodes",
    ),
    pytest.param(
        make_pod().req({"memory": "2000"}).req({"memory": "3000"}).obj(),
        [make_node_res("node1", 3000, 5000), make_node_res("node2", 3000, 5000)],
        [make_pod().node("node1").req({"cpu": "1000m"}).req({"cpu": "2000m"}).obj()],
        [100, 50],
        DEFAULT,
        id="resources requested, pods scheduled with resources, nodes to reach min/max score",
    ),
    pytest.param(
        make_pod().req({"cpu": "1000m"}).req({"cpu": "2000m"}).obj(),
        [make_node_res("node1", 6000, 10000), make_node_res("node2", 6000, 10000)],
        [
            make_pod().node("node1").req({"cpu": "1000m"}).req({"cpu": "2000m"}).obj(),
            two_containers().node("node2").obj(),
        ],
        [62, 62],
        DEFAULT,
        id="requested resources at node capacity",
    ),
    pytest.param(
        make_pod().req({"cpu": "0", "memory": "0", GPU: "1"}).obj(),
        [make_node_res("node1", 3500, 40000, {GPU: 8}), make_node_res("node2", 3500, 40000, {GPU: 8})],
        [
            make_pod()
            .node("node1")
            .req(cpu_and_memory("1000m", "2000"))
            .req({"cpu": "2000m", "memory": "3000", GPU: "3"})
            .obj(),
            two_containers().node("node2").obj(),
        ],
        [75, 76],
        WITH_GPU,
        id="scalar resource is included in the score computation if pod requests the scalar resource",
    ),
    pytest.param(
        two_containers().obj(),
        [make_node_res("node1", 3500, 40000, {GPU: 8}), make_node_res("node2", 3500, 40000)],
        [],
        [56, 56],
        WITH_GPU,
        id="scalar resource is not included in the score computation if pod doesn't request the scalar resource",
    ),
]


@pytest.mark.parametrize(("pod", "nodes", "existing", "expected", "resources"), UPSTREAM)
def test_node_resources_balanced_allocation(
    pod: dict[str, Any], nodes: list[Any], existing: list[Any], expected: list[int], resources: Any, batch: bool
) -> None:
    snap = build_snapshot(nodes, existing)
    plugin = new_plugin(new, args(resources), snap)
    assert score_nodes(plugin, pod, snap, batch=batch) == (expected, None)


def test_nothing_requested_skips_in_pre_score() -> None:
    """nothing scheduled, nothing requested, skip in PreScore."""
    snap = build_snapshot([make_node_res("node1", 4000, 10000), make_node_res("node2", 4000, 10000)])
    plugin = new_plugin(new, args(DEFAULT), snap)
    _, status = score_nodes(plugin, make_pod().obj(), snap)
    assert status is not None and status.code == Code.SKIP


@pytest.mark.parametrize(
    ("pod", "expected"),
    [
        pytest.param(
            two_containers().obj(),
            [73, 74],
            id="resources requested, pods scheduled with resources if PreScore not called",
        ),
        pytest.param(make_pod().obj(), [0, 0], id="kubesched: a best-effort pod scores 0 without PreScore"),
    ],
)
def test_score_without_pre_score(pod: dict[str, Any], expected: list[int]) -> None:
    snap = build_snapshot(
        [make_node_res("node1", 10000, 20000), make_node_res("node2", 10000, 20000)],
        [
            make_pod().node("node1").req({"cpu": "1000m"}).req({"cpu": "2000m"}).obj(),
            two_containers().node("node2").obj(),
        ],
    )
    plugin = new_plugin(new, args(DEFAULT), snap)
    info = new_pod_info(pod)
    positions = np.arange(2, dtype=np.int64)
    assert [plugin.score(CycleState(), info, ni)[0] for ni in snap.node_info_list] == expected
    assert plugin.score_batch(CycleState(), info, snap.table, positions).tolist() == expected


@pytest.mark.parametrize(("pod_obj", "nodes", "existing", "expected", "fit"), CHECKED_AGAINST_V136)
def test_scores_read_from_kube_scheduler_v136(
    pod_obj: dict[str, Any], nodes: list[Any], existing: list[Any], expected: list[int], fit: list[int], batch: bool
) -> None:
    snap = build_snapshot(nodes, existing)
    plugin = new_plugin(new, default_args("NodeResourcesBalancedAllocation", None), snap)
    assert score_nodes(plugin, pod_obj, snap, batch=batch) == (expected, None)


@pytest.mark.parametrize(
    ("requested", "allocated", "allocatable", "want"),
    [
        pytest.param([1, 1], [0, 0], [4, 8], 71, id="empty node, uneven pod"),
        pytest.param([2, 4], [1, 2], [4, 8], 75, id="no change in balance"),
        pytest.param([4, 0], [0, 0], [4, 8], 50, id="worst change"),
        pytest.param([4, 8], [4, 0], [4, 8], 100, id="best change"),
        pytest.param([0, 0, 0], [0, 0, 0], [0, 0, 0], 75, id="no resource counts"),
        pytest.param([3, 5, 1], [2, 1, 0], [4, 10, 2], 80, id="three resources: 88 after, 78 before"),
    ],
)
def test_balanced_resource_scorer(
    requested: list[int], allocated: list[int], allocatable: list[int], want: int
) -> None:
    assert ra.balanced_resource_scorer(requested, allocated, allocatable) == want


def test_vectorised_balance_agrees_with_per_node_on_mixed_resources() -> None:
    """Nodes counting 1, 2 or 3 resources, fractions above 1 included: the column path matches float for float."""
    rng = np.random.default_rng(7)
    cols = 3
    alloc = [rng.integers(0, 5, 400) * rng.integers(1, 10**6, 400) for _ in range(cols)]
    used = [rng.integers(0, 2 * 10**6, 400) for _ in range(cols)]
    got = ra.balanced_resource_scores(used, alloc)
    want = [ra.balanced_resource_score([int(u[i]) for u in used], [int(a[i]) for a in alloc]) for i in range(400)]
    assert got.tolist() == want


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 2**40), st.integers(0, 2**40), st.integers(0, 2**40), st.integers(0, 2**40)),
        min_size=1,
        max_size=40,
    ),
    st.booleans(),
)
def test_two_resource_scores_equal_the_per_node_score(rows: list[tuple[int, int, int, int]], all_allocatable: bool):
    """balanced_resource_scores' two-resource shortcut (every node has both) and its general path (some node lacks
    one) give each node the per-node score, float for float."""
    if all_allocatable:
        rows = [(u0, max(a0, 1), u1, max(a1, 1)) for u0, a0, u1, a1 in rows]
    used = [np.array([r[0] for r in rows], dtype=np.int64), np.array([r[2] for r in rows], dtype=np.int64)]
    alloc = [np.array([r[1] for r in rows], dtype=np.int64), np.array([r[3] for r in rows], dtype=np.int64)]
    got = ra.balanced_resource_scores(used, alloc).tolist()
    assert got == [ra.balanced_resource_score([u0, u1], [a0, a1]) for u0, a0, u1, a1 in rows]


@given(
    st.integers(1, 4).flatmap(
        lambda cols: st.lists(
            st.tuples(
                st.lists(st.integers(0, 3 * 10**12), min_size=cols, max_size=cols),
                st.lists(st.integers(1, 10**12), min_size=cols, max_size=cols),
            ),
            min_size=1,
            max_size=30,
        )
    )
)
def test_vectorised_balance_agrees_with_per_node_when_every_node_counts_every_resource(
    nodes: list[tuple[list[int], list[int]]],
) -> None:
    """Every allocatable non-zero takes the column path's short cut: it must still match the per-node score."""
    cols = len(nodes[0][0])
    used = [np.array([u[c] for u, _ in nodes], dtype=np.int64) for c in range(cols)]
    alloc = [np.array([a[c] for _, a in nodes], dtype=np.int64) for c in range(cols)]
    got = ra.balanced_resource_scores(used, alloc)
    assert got.tolist() == [ra.balanced_resource_score(u, a) for u, a in nodes]
