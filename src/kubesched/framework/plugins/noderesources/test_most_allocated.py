"""most_allocated_test.go (v1.36, unchanged from v1.34): NodeResourcesFit's MostAllocated strategy.

"Resources not set, pods scheduled with error" is not ported: config defaulting here always
fills scoringStrategy.resources.
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


def requestless() -> Any:
    """st.MakePod().Container("container"): one container with no requests."""
    return make_pod().container("container")


CASES = [
    pytest.param(
        make_pod().obj(),
        [capacity_node("node1", cap("4000", "10000")), capacity_node("node2", cap("4000", "10000"))],
        [],
        [0, 0],
        DEFAULT_RESOURCES,
        id="nothing scheduled, nothing requested",
    ),
    pytest.param(
        two_containers().obj(),
        [capacity_node("node1", cap("4000", "10000")), capacity_node("node2", cap("6000", "10000"))],
        [],
        [62, 50],
        DEFAULT_RESOURCES,
        id="nothing scheduled, resources requested, differently sized nodes",
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
        [30, 42],
        DEFAULT_RESOURCES,
        id="no resources requested, pods scheduled with resources",
    ),
    pytest.param(
        two_containers().obj(),
        [capacity_node("node1", cap("10000", "20000")), capacity_node("node2", cap("10000", "20000"))],
        [make_pod().node("node1").req(cap("3000", "0")).obj(), make_pod().node("node2").req(cap("3000", "5000")).obj()],
        [42, 55],
        DEFAULT_RESOURCES,
        id="resources requested, pods scheduled with resources",
    ),
    pytest.param(
        make_pod().req(cap("2000", "4000")).req(cap("3000", "5000")).obj(),
        [capacity_node("node1", cap("5000", "10000")), capacity_node("node2", cap("10000", "9000"))],
        [],
        [95, 75],
        DEFAULT_RESOURCES,
        id="resources requested equal node capacity",
    ),
    pytest.param(
        two_containers().obj(),
        [capacity_node("node1", cap("4000", "10000")), capacity_node("node2", cap("6000", "10000"))],
        [],
        [58, 50],
        [ResourceSpec(name="memory", weight=2), ResourceSpec(name="cpu", weight=1)],
        id="nothing scheduled, resources requested with different weight on CPU and memory, differently sized nodes",
    ),
    pytest.param(
        requestless().obj(),
        [capacity_node("node1", cap("250m", "1000Mi")), capacity_node("node2", cap("250m", "1000Mi"))],
        [requestless().node("node1").obj(), requestless().node("node1").obj()],
        [80, 30],
        DEFAULT_RESOURCES,
        id="no resources requested, pods scheduled, nonzero request for resource",
    ),
    pytest.param(
        two_containers().obj(),
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
        [50, 40],
        EXTENDED_RESOURCE_SET,
        id="honor extended resource if the pod request",
    ),
    pytest.param(
        make_pod().node("node1").req(cap("3000", "4000")).obj(),
        [
            capacity_node("node1", cap("6000", "10000")),
            capacity_node("node2", cap("6000", "10000", **{EXTENDED_RES: "4"})),
        ],
        [],
        [45, 45],
        [
            ResourceSpec(name=EXTENDED_RES, weight=2),
            ResourceSpec(name="cpu", weight=1),
            ResourceSpec(name="memory", weight=1),
        ],
        id="if the node doesn't have a resource",
    ),
]


@pytest.mark.parametrize(("pod", "nodes", "existing", "expected", "resources"), CASES)
def test_most_allocated_scoring_strategy(
    pod: dict[str, Any], nodes: list[Any], existing: list[Any], expected: list[int], resources: Any, batch: bool
) -> None:
    snap = build_snapshot(nodes, existing)
    plugin = new_plugin(new, fit_args("MostAllocated", resources), snap)
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
            [ResourceSpec(name="memory", weight=101)],
            "scoringStrategy.resources[0].weight",
            id="resource weight larger than MaxNodeScore",
        ),
    ],
)
def test_most_allocated_invalid_weights(resources: list[ResourceSpec], field: str) -> None:
    args = NodeResourcesFitArgs(scoringStrategy=ScoringStrategy(type="MostAllocated", resources=resources))
    errs = validate_args("NodeResourcesFit", args, "args")
    assert [e.path for e in errs] == [f"args.{field}"]
