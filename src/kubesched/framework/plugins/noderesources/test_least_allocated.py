"""least_allocated_test.go (v1.36, unchanged from v1.34): NodeResourcesFit's LeastAllocated strategy.

"Resources not set, pods scheduled with error" is not ported: config defaulting here always
fills scoringStrategy.resources, so a Fit plugin without resources cannot be built.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config.types import NodeResourcesFitArgs, ResourceSpec, ScoringStrategy
from kubesched.config.validation import validate_args
from kubesched.framework.plugins.noderesources.fit import new
from kubesched.framework.plugins.noderesources.util_test import (
    DEFAULT_RESOURCES,
    EXTENDED_RES,
    EXTENDED_RESOURCE_SET,
    capacity_node,
    fit_args,
)
from kubesched_testing.framework import build_snapshot, new_plugin, score_nodes
from kubesched_testing.wrappers import make_pod


def two_containers() -> Any:
    return make_pod().req({"cpu": "1000", "memory": "2000"}).req({"cpu": "2000", "memory": "3000"})


def cap(cpu: str, memory: str, **extra: str) -> dict[str, str]:
    return {"cpu": cpu, "memory": memory, **extra}


CASES = [
    pytest.param(
        make_pod().obj(),
        [capacity_node("node1", cap("4000", "10000")), capacity_node("node2", cap("4000", "10000"))],
        [],
        [100, 100],
        DEFAULT_RESOURCES,
        id="nothing scheduled, nothing requested",
    ),
    pytest.param(
        two_containers().obj(),
        [capacity_node("node1", cap("4000", "10000")), capacity_node("node2", cap("6000", "10000"))],
        [],
        [37, 50],
        DEFAULT_RESOURCES,
        id="nothing scheduled, resources requested, differently sized nodes",
    ),
    pytest.param(
        make_pod().obj(),
        [capacity_node("node1", cap("4000", "10000")), capacity_node("node2", cap("4000", "10000"))],
        [
            make_pod().node("node1").obj(),
            make_pod().node("node1").obj(),
            make_pod().node("node2").obj(),
            make_pod().node("node2").obj(),
        ],
        [100, 100],
        DEFAULT_RESOURCES,
        id="no resources requested, pods scheduled",
    ),
    pytest.param(
        make_pod().obj(),
        [capacity_node("node1", cap("10000", "20000")), capacity_node("node2", cap("10000", "20000"))],
        [
            make_pod().node("node1").req(cap("3000", "0")).obj(),
            make_pod().node("node1").req(cap("3000", "0")).obj(),
            make_pod().node("node2").req(cap("3000", "0")).obj(),
            make_pod().node("node2").req(cap("3000", "5000")).obj(),
        ],
        [70, 57],
        DEFAULT_RESOURCES,
        id="no resources requested, pods scheduled with resources",
    ),
    pytest.param(
        two_containers().obj(),
        [capacity_node("node1", cap("10000", "20000")), capacity_node("node2", cap("10000", "20000"))],
        [make_pod().node("node1").req(cap("3000", "0")).obj(), make_pod().node("node2").req(cap("3000", "5000")).obj()],
        [57, 45],
        DEFAULT_RESOURCES,
        id="resources requested, pods scheduled with resources",
    ),
    pytest.param(
        two_containers().obj(),
        [capacity_node("node1", cap("10000", "20000")), capacity_node("node2", cap("10000", "50000"))],
        [make_pod().node("node1").req(cap("3000", "0")).obj(), make_pod().node("node2").req(cap("3000", "5000")).obj()],
        [57, 60],
        DEFAULT_RESOURCES,
        id="resources requested, pods scheduled with resources, differently sized nodes",
    ),
    pytest.param(
        make_pod().req(cap("3000", "0")).obj(),
        [capacity_node("node1", cap("4000", "10000")), capacity_node("node2", cap("4000", "10000"))],
        [make_pod().node("node1").req(cap("3000", "0")).obj(), make_pod().node("node2").req(cap("3000", "5000")).obj()],
        [50, 25],
        DEFAULT_RESOURCES,
        id="requested resources exceed node capacity",
    ),
    pytest.param(
        make_pod().obj(),
        [capacity_node("node1"), capacity_node("node2")],
        [make_pod().node("node1").req(cap("3000", "0")).obj(), make_pod().node("node2").req(cap("3000", "5000")).obj()],
        [0, 0],
        DEFAULT_RESOURCES,
        id="zero node resources, pods scheduled with resources",
    ),
    pytest.param(
        two_containers().node("node1").obj(),
        [capacity_node("node1", cap("4000", "10000")), capacity_node("node2", cap("6000", "10000"))],
        [],
        [41, 50],
        [ResourceSpec(name="memory", weight=2), ResourceSpec(name="cpu", weight=1)],
        id="nothing scheduled, resources requested with different weight on CPU and memory, differently sized nodes",
    ),
    pytest.param(
        two_containers().node("node1").obj(),
        [
            capacity_node("node1", cap("6000", "10000")),
            capacity_node("node2", cap("6000", "10000", **{EXTENDED_RES: "4"})),
        ],
        [],
        [50, 50],
        EXTENDED_RESOURCE_SET,
        id="bypass extended resource if the pod does not request",
    ),
    pytest.param(
        make_pod().node("node1").req(cap("3000", "5000", **{EXTENDED_RES: "2"})).obj(),
        [
            capacity_node("node1", cap("6000", "10000", **{EXTENDED_RES: "4"})),
            capacity_node("node2", cap("6000", "10000", **{EXTENDED_RES: "10"})),
        ],
        [],
        [50, 60],
        EXTENDED_RESOURCE_SET,
        id="honor extended resource if the pod requests",
    ),
    pytest.param(
        make_pod().node("node1").req(cap("3000", "4000")).obj(),
        [
            capacity_node("node1", cap("6000", "10000")),
            capacity_node("node2", cap("6000", "10000", **{EXTENDED_RES: "4"})),
        ],
        [],
        [55, 55],
        [
            ResourceSpec(name=EXTENDED_RES, weight=2),
            ResourceSpec(name="cpu", weight=1),
            ResourceSpec(name="memory", weight=1),
        ],
        id="if the node doesn't have a resource",
    ),
]


@pytest.mark.parametrize(("pod", "nodes", "existing", "expected", "resources"), CASES)
def test_least_allocated_scoring_strategy(
    pod: dict[str, Any], nodes: list[Any], existing: list[Any], expected: list[int], resources: Any, batch: bool
) -> None:
    snap = build_snapshot(nodes, existing)
    plugin = new_plugin(new, fit_args("LeastAllocated", resources), snap)
    assert score_nodes(plugin, pod, snap, batch=batch) == (expected, None)


@pytest.mark.parametrize(
    ("resources", "field"),
    [
        pytest.param(
            [ResourceSpec(name="memory", weight=-1), ResourceSpec(name="cpu", weight=1)],
            "scoringStrategy.resources[0].weight",
            id="resource with negative weight",
        ),
        pytest.param(
            [ResourceSpec(name="memory", weight=1), ResourceSpec(name="cpu", weight=0)],
            "scoringStrategy.resources[1].weight",
            id="resource with zero weight",
        ),
        pytest.param(
            [ResourceSpec(name="memory", weight=1), ResourceSpec(name="cpu", weight=101)],
            "scoringStrategy.resources[1].weight",
            id="resource weight larger than MaxNodeScore",
        ),
    ],
)
def test_least_allocated_invalid_weights(resources: list[ResourceSpec], field: str) -> None:
    args = NodeResourcesFitArgs(scoringStrategy=ScoringStrategy(type="LeastAllocated", resources=resources))
    errs = validate_args("NodeResourcesFit", args, "args")
    assert [e.path for e in errs] == [f"args.{field}"]
