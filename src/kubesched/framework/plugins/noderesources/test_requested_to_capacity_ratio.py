"""requested_to_capacity_ratio_test.go (v1.36, unchanged from v1.34): the RequestedToCapacityRatio strategy.

Existing pods that upstream's tables leave unbound (no node) change nothing and are left out.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config.types import ResourceSpec
from kubesched.framework.plugins.noderesources import resource_allocation as ra
from kubesched.framework.plugins.noderesources.fit import new
from kubesched.framework.plugins.noderesources.util_test import (
    DEFAULT_RESOURCES,
    capacity_node,
    fit_args,
    make_node_res,
)
from kubesched_testing.framework import build_snapshot, new_plugin, score_nodes
from kubesched_testing.wrappers import make_pod

SHAPE = [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
BIN_PACKING = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 1}]


def cap(cpu: str, memory: str) -> dict[str, str]:
    return {"cpu": cpu, "memory": memory}


@pytest.mark.parametrize(
    ("pod", "nodes", "existing", "expected"),
    [
        pytest.param(
            make_pod().obj(),
            [capacity_node("node1", cap("4000", "10000")), capacity_node("node2", cap("4000", "10000"))],
            [make_pod().node("node1").obj(), make_pod().node("node1").obj()],
            [100, 100],
            id="nothing scheduled, nothing requested (default - least requested nodes have priority)",
        ),
        pytest.param(
            make_pod().req(cap("1000", "2000")).req(cap("2000", "3000")).obj(),
            [capacity_node("node1", cap("4000", "10000")), capacity_node("node2", cap("6000", "10000"))],
            [make_pod().node("node1").obj(), make_pod().node("node1").obj()],
            [38, 50],
            id=(
                "nothing scheduled, resources requested, differently sized nodes"
                " (default - least requested nodes have priority)"
            ),
        ),
        pytest.param(
            make_pod().obj(),
            [capacity_node("node1", cap("4000", "10000")), capacity_node("node2", cap("6000", "10000"))],
            [
                make_pod().node("node1").req(cap("3000", "5000")).obj(),
                make_pod().node("node2").req(cap("3000", "5000")).obj(),
            ],
            [38, 50],
            id="no resources requested, pods scheduled with resources (default - least requested nodes have priority)",
        ),
    ],
)
def test_requested_to_capacity_ratio_scoring_strategy(
    pod: dict[str, Any], nodes: list[Any], existing: list[Any], expected: list[int], batch: bool
) -> None:
    snap = build_snapshot(nodes, existing)
    plugin = new_plugin(new, fit_args("RequestedToCapacityRatio", DEFAULT_RESOURCES, SHAPE), snap)
    assert score_nodes(plugin, pod, snap, batch=batch) == (expected, None)


@pytest.mark.parametrize(
    ("points", "assertions"),
    [
        pytest.param(
            [(10, 1), (90, 9)],
            [
                (-10, 1),
                (0, 1),
                (9, 1),
                (10, 1),
                (15, 1),
                (19, 1),
                (20, 2),
                (89, 8),
                (90, 9),
                (99, 9),
                (100, 9),
                (110, 9),
            ],
            id="case_0",
        ),
        pytest.param(
            [(0, 2), (40, 10), (100, 0)],
            [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0), (110, 0)],
            id="case_1",
        ),
        pytest.param(
            [(0, 2), (40, 2), (100, 2)],
            [(-10, 2), (0, 2), (20, 2), (30, 2), (40, 2), (70, 2), (100, 2), (110, 2)],
            id="case_2",
        ),
    ],
)
def test_broken_linear_function(points: list[tuple[int, int]], assertions: list[tuple[int, int]]) -> None:
    f = ra.broken_linear_function(points)
    assert [(p, f(p)) for p, _ in assertions] == assertions


MI = 1024 * 1024
FOO = "intel.com/foo"
BAR = "intel.com/bar"


@pytest.mark.parametrize(
    ("pod", "existing", "expected"),
    [
        pytest.param(make_pod().obj(), [], [0, 0], id="nothing scheduled, nothing requested"),
        pytest.param(
            make_pod().req({FOO: "2"}).obj(), [], [2, 5], id="resources requested, pods scheduled with less resources"
        ),
        pytest.param(
            make_pod().req({FOO: "2"}).obj(),
            [make_pod().req({FOO: "2"}).node("node2").obj()],
            [2, 10],
            id="resources requested, pods scheduled with resources, on node with existing pod running ",
        ),
        pytest.param(
            make_pod().req({FOO: "4"}).obj(), [], [5, 10], id="resources requested, pods scheduled with more resources"
        ),
    ],
)
def test_resource_bin_packing_single_extended(
    pod: dict[str, Any], existing: list[Any], expected: list[int], batch: bool
) -> None:
    nodes = [make_node_res("node1", 4000, 10000 * MI, {FOO: 8}), make_node_res("node2", 4000, 10000 * MI, {FOO: 4})]
    snap = build_snapshot(nodes, existing)
    args = fit_args("RequestedToCapacityRatio", [ResourceSpec(name=FOO, weight=1)], BIN_PACKING)
    plugin = new_plugin(new, args, snap)
    assert score_nodes(plugin, pod, snap, batch=batch) == (expected, None)


@pytest.mark.parametrize(
    ("pod", "existing", "expected"),
    [
        pytest.param(make_pod().obj(), [], [0, 0], id="nothing scheduled, nothing requested"),
        pytest.param(
            make_pod().req({FOO: "2", BAR: "2"}).obj(),
            [],
            [4, 3],
            id="resources requested, pods scheduled with less resources",
        ),
        pytest.param(
            make_pod().req({FOO: "2", BAR: "2"}).obj(),
            [make_pod().req({FOO: "4", BAR: "2"}).node("node2").obj()],
            [4, 7],
            id="resources requested, pods scheduled with resources, on node with existing pod running ",
        ),
        pytest.param(
            make_pod().req({FOO: "4", BAR: "2"}).obj(),
            [],
            [5, 5],
            id="resources requested, pods scheduled with more resources",
        ),
    ],
)
def test_resource_bin_packing_multiple_extended(
    pod: dict[str, Any], existing: list[Any], expected: list[int], batch: bool
) -> None:
    nodes = [
        make_node_res("node1", 4000, 10000 * MI, {FOO: 8, BAR: 4}),
        make_node_res("node2", 4000, 10000 * MI, {FOO: 4, BAR: 8}),
    ]
    snap = build_snapshot(nodes, existing)
    resources = [ResourceSpec(name=FOO, weight=3), ResourceSpec(name=BAR, weight=5)]
    plugin = new_plugin(new, fit_args("RequestedToCapacityRatio", resources, BIN_PACKING), snap)
    assert score_nodes(plugin, pod, snap, batch=batch) == (expected, None)
