"""The legacy per-strategy Score plugins: upstream 1.22's score formulas, per node and vectorised."""

from __future__ import annotations

import pytest

from kubesched.config.types import (
    NodeResourcesLeastAllocatedArgs,
    NodeResourcesMostAllocatedArgs,
    RequestedToCapacityRatioArgs,
    ResourceSpec,
    UtilizationShapePoint,
)
from kubesched.framework.plugins.noderesources import legacy_allocated as la
from kubesched_testing.framework import build_snapshot, new_plugin, score_nodes
from kubesched_testing.wrappers import make_node, make_pod

NODES = [
    make_node("node1").capacity({"cpu": "4000m", "memory": "10000"}).obj(),
    make_node("node2").capacity({"cpu": "6000m", "memory": "10000"}).obj(),
]
POD = make_pod("p").req({"cpu": "1000m", "memory": "2000"}).obj()
SHAPE = [UtilizationShapePoint(utilization=0, score=0), UtilizationShapePoint(utilization=50, score=7)]

CASES = [
    # cpu 75/83, memory 80/80 free
    ("least allocated", la.new_least_allocated, NodeResourcesLeastAllocatedArgs(), [77, 81]),
    # cpu 25/16, memory 20/20 used
    ("most allocated", la.new_most_allocated, NodeResourcesMostAllocatedArgs(), [22, 18]),
    (
        "most allocated, cpu weighs 3",
        la.new_most_allocated,
        NodeResourcesMostAllocatedArgs(
            resources=[ResourceSpec(name="cpu", weight=3), ResourceSpec(name="memory", weight=1)]
        ),
        [23, 17],
    ),
    # shape 0->0, 50->70: cpu 25% -> 35, 16% -> 22; memory 20% -> 28; mean rounded half away from zero
    (
        "requested to capacity ratio",
        la.new_requested_to_capacity_ratio,
        RequestedToCapacityRatioArgs(shape=SHAPE),
        [32, 25],
    ),
]


@pytest.mark.parametrize(("name", "factory", "args", "want"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("batch", [False, True])
def test_legacy_strategy_scores(name: str, factory: object, args: object, want: list[int], batch: bool) -> None:
    snap = build_snapshot(NODES)
    plugin = new_plugin(factory, args, snap)  # type: ignore[arg-type]
    scores, status = score_nodes(plugin, POD, snap, batch=batch, nodes=["node1", "node2"])
    assert status is None and scores == want


def test_plugins_are_named_after_their_strategy() -> None:
    snap = build_snapshot(NODES)
    got = [
        new_plugin(la.new_least_allocated, None, snap).name,
        new_plugin(la.new_most_allocated, None, snap).name,
        new_plugin(la.new_requested_to_capacity_ratio, RequestedToCapacityRatioArgs(shape=SHAPE), snap).name,
    ]
    assert got == ["NodeResourcesLeastAllocated", "NodeResourcesMostAllocated", "RequestedToCapacityRatio"]


def test_requested_to_capacity_ratio_needs_a_shape() -> None:
    with pytest.raises(ValueError, match="shape"):
        la.new_requested_to_capacity_ratio(RequestedToCapacityRatioArgs(), None)  # type: ignore[arg-type]
