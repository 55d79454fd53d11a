"""Cases from fit_test.go, least_allocated_test.go, most_allocated_test.go and
requested_to_capacity_ratio_test.go; case names unchanged, quantities as upstream writes them."""

import pytest

from kubesched.config.defaults import default_args
from kubesched.config.types import NodeResourcesFitArgs, ResourceSpec, ScoringStrategy
from kubesched.config.validation import validate_args
from kubesched.framework.plugins.noderesources.fit import new
from kubesched.framework.status import Code, Status
from kubesched.testing.framework import build_snapshot, filter_statuses, new_plugin, score_nodes
from kubesched.testing.wrappers import make_node, make_pod

DEFAULT = [ResourceSpec(name="cpu", weight=1), ResourceSpec(name="memory", weight=1)]
EXTENDED_RES = "abc.com/xyz"


def fit_args(strategy="LeastAllocated", resources=None, shape=None, **kw):
    rtcr = {"shape": shape} if shape is not None else None
    st = ScoringStrategy.model_validate(
        {
            "type": strategy,
            "resources": [r.model_dump() for r in (resources or DEFAULT)],
            "requestedToCapacityRatio": rtcr,
        }
    )
    return default_args("NodeResourcesFit", NodeResourcesFitArgs(scoringStrategy=st, **kw))


LEAST_CASES = [
    pytest.param(
        make_pod().obj(),
        [
            make_node("node1").capacity({"cpu": "4000", "memory": "10000"}).obj(),
            make_node("node2").capacity({"cpu": "4000", "memory": "10000"}).obj(),
        ],
        [],
        [100, 100],
        DEFAULT,
        id="nothing scheduled, nothing requested",
    ),
    pytest.param(
        make_pod().req({"cpu": "1000", "memory": "2000"}).req({"cpu": "2000", "memory": "3000"}).obj(),
        [
            make_node("node1").capacity({"cpu": "4000", "memory": "10000"}).obj(),
            make_node("node2").capacity({"cpu": "6000", "memory": "10000"}).obj(),
        ],
        [],
        [37, 50],
        DEFAULT,
        id="nothing scheduled, resources requested, differently sized nodes",
    ),
    pytest.param(
        make_pod().obj(),
        [
            make_node("node1").capacity({"cpu": "4000", "memory": "10000"}).obj(),
            make_node("node2").capacity({"cpu": "4000", "memory": "10000"}).obj(),
        ],
        [
            make_pod("e1").node("node1").obj(),
            make_pod("e2").node("node1").obj(),
            make_pod("e3").node("node2").obj(),
            make_pod("e4").node("node2").obj(),
        ],
        [100, 100],
        DEFAULT,
        id="no resources requested, pods scheduled",
    ),
    pytest.param(
        make_pod().obj(),
        [
            make_node("node1").capacity({"cpu": "10000", "memory": "20000"}).obj(),
            make_node("node2").capacity({"cpu": "10000", "memory": "20000"}).obj(),
        ],
        [
            make_pod("e1").node("node1").req({"cpu": "3000", "memory": "0"}).obj(),
            make_pod("e2").node("node1").req({"cpu": "3000", "memory": "0"}).obj(),
            make_pod("e3").node("node2").req({"cpu": "3000", "memory": "0"}).obj(),
            make_pod("e4").node("node2").req({"cpu": "3000", "memory": "5000"}).obj(),
        ],
        [70, 57],
        DEFAULT,
        id="no resources requested, pods scheduled with resources",
    ),
    pytest.param(
        make_pod().req({"cpu": "1000", "memory": "2000"}).req({"cpu": "2000", "memory": "3000"}).obj(),
        [
            make_node("node1").capacity({"cpu": "10000", "memory": "20000"}).obj(),
            make_node("node2").capacity({"cpu": "10000", "memory": "20000"}).obj(),
        ],
        [
            make_pod("e1").node("node1").req({"cpu": "3000", "memory": "0"}).obj(),
            make_pod("e2").node("node2").req({"cpu": "3000", "memory": "5000"}).obj(),
        ],
        [57, 45],
        DEFAULT,
        id="resources requested, pods scheduled with resources",
    ),
    pytest.param(
        make_pod().req({"cpu": "1000", "memory": "2000"}).req({"cpu": "2000", "memory": "3000"}).obj(),
        [
            make_node("node1").capacity({"cpu": "10000", "memory": "20000"}).obj(),
            make_node("node2").capacity({"cpu": "10000", "memory": "50000"}).obj(),
        ],
        [
            make_pod("e1").node("node1").req({"cpu": "3000", "memory": "0"}).obj(),
            make_pod("e2").node("node2").req({"cpu": "3000", "memory": "5000"}).obj(),
        ],
        [57, 60],
        DEFAULT,
        id="resources requested, pods scheduled with resources, differently sized nodes",
    ),
    pytest.param(
        make_pod().req({"cpu": "3000", "memory": "0"}).obj(),
        [
            make_node("node1").capacity({"cpu": "4000", "memory": "10000"}).obj(),
            make_node("node2").capacity({"cpu": "4000", "memory": "10000"}).obj(),
        ],
        [
            make_pod("e1").node("node1").req({"cpu": "3000", "memory": "0"}).obj(),
            make_pod("e2").node("node2").req({"cpu": "3000", "memory": "5000"}).obj(),
        ],
        [50, 25],
        DEFAULT,
        id="requested resources exceed node capacity",
    ),
    pytest.param(
        make_pod().obj(),
        [make_node("node1").obj(), make_node("node2").obj()],
        [
            make_pod("e1").node("node1").req({"cpu": "3000", "memory": "0"}).obj(),
            make_pod("e2").node("node2").req({"cpu": "3000", "memory": "5000"}).obj(),
        ],
        [0, 0],
        DEFAULT,
        id="zero node resources, pods scheduled with resources",
    ),
    pytest.param(
        make_pod().req({"cpu": "1000", "memory": "2000"}).req({"cpu": "2000", "memory": "3000"}).obj(),
        [
            make_node("node1").capacity({"cpu": "4000", "memory": "10000"}).obj(),
            make_node("node2").capacity({"cpu": "6000", "memory": "10000"}).obj(),
        ],
        [],
        [41, 50],
        [ResourceSpec(name="memory", weight=2), ResourceSpec(name="cpu", weight=1)],
        id="nothing scheduled, resources requested with different weight on CPU and memory, differently sized nodes",
    ),
    pytest.param(
        make_pod().req({"cpu": "1000", "memory": "2000"}).req({"cpu": "2000", "memory": "3000"}).obj(),
        [
            make_node("node1").capacity({"cpu": "6000", "memory": "10000"}).obj(),
            make_node("node2").capacity({"cpu": "6000", "memory": "10000", EXTENDED_RES: "4"}).obj(),
        ],
        [],
        [50, 50],
        [*DEFAULT, ResourceSpec(name=EXTENDED_RES, weight=1)],
        id="bypass extended resource if the pod does not request",
    ),
]


@pytest.mark.parametrize(("pod", "nodes", "existing", "expected", "resources"), LEAST_CASES)
def test_least_allocated_scoring_strategy(pod, nodes, existing, expected, resources, batch):
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
            [ResourceSpec(name="memory", weight=1), ResourceSpec(name="cpu", weight=101)],
            "scoringStrategy.resources[1].weight",
            id="resource weight larger than MaxNodeScore",
        ),
    ],
)
def test_least_allocated_invalid_weights(resources, field):
    args = NodeResourcesFitArgs(scoringStrategy=ScoringStrategy(type="LeastAllocated", resources=resources))
    errs = validate_args("NodeResourcesFit", args, "args")
    assert [e.path for e in errs] == [f"args.{field}"]


MOST_CASES = [
    pytest.param(
        make_pod().obj(),
        [
            make_node("node1").capacity({"cpu": "4000", "memory": "10000"}).obj(),
            make_node("node2").capacity({"cpu": "4000", "memory": "10000"}).obj(),
        ],
        [],
        [0, 0],
        id="nothing scheduled, nothing requested",
    ),
    pytest.param(
        make_pod().req({"cpu": "1000", "memory": "2000"}).req({"cpu": "2000", "memory": "3000"}).obj(),
        [
            make_node("node1").capacity({"cpu": "4000", "memory": "10000"}).obj(),
            make_node("node2").capacity({"cpu": "6000", "memory": "10000"}).obj(),
        ],
        [],
        [62, 50],
        id="nothing scheduled, resources requested, differently sized nodes",
    ),
    pytest.param(
        make_pod().req({"cpu": "1000", "memory": "2000"}).req({"cpu": "2000", "memory": "3000"}).obj(),
        [
            make_node("node1").capacity({"cpu": "10000", "memory": "20000"}).obj(),
            make_node("node2").capacity({"cpu": "10000", "memory": "20000"}).obj(),
        ],
        [
            make_pod("e1").node("node1").req({"cpu": "3000", "memory": "0"}).obj(),
            make_pod("e2").node("node2").req({"cpu": "3000", "memory": "5000"}).obj(),
        ],
        [42, 55],
        id="resources requested, pods scheduled with resources",
    ),
]


@pytest.mark.parametrize(("pod", "nodes", "existing", "expected"), MOST_CASES)
def test_most_allocated_scoring_strategy(pod, nodes, existing, expected, batch):
    snap = build_snapshot(nodes, existing)
    plugin = new_plugin(new, fit_args("MostAllocated"), snap)
    assert score_nodes(plugin, pod, snap, batch=batch) == (expected, None)


RTCR_SHAPE = [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]


@pytest.mark.parametrize(
    ("pod", "existing", "expected"),
    [
        pytest.param(
            make_pod().req({"cpu": "0", "memory": "0"}).obj(), [], [100, 100], id="nothing scheduled, nothing requested"
        ),
        pytest.param(
            make_pod().req({"cpu": "3000", "memory": "5000"}).obj(),
            [],
            [38, 50],
            id="nothing scheduled, resources requested, differently sized nodes",
        ),
        pytest.param(
            make_pod().req({"cpu": "0", "memory": "0"}).obj(),
            [
                make_pod("e1").node("node1").req({"cpu": "3000", "memory": "5000"}).obj(),
                make_pod("e2").node("node2").req({"cpu": "3000", "memory": "5000"}).obj(),
            ],
            [38, 50],
            id="no resources requested, pods scheduled with resources",
        ),
    ],
)
def test_requested_to_capacity_ratio_scoring_strategy(pod, existing, expected, batch):
    nodes = [
        make_node("node1").capacity({"cpu": "4000", "memory": "10000"}).obj(),
        make_node("node2").capacity({"cpu": "6000", "memory": "10000"}).obj(),
    ]
    snap = build_snapshot(nodes, existing)
    plugin = new_plugin(new, fit_args("RequestedToCapacityRatio", shape=RTCR_SHAPE), snap)
    assert score_nodes(plugin, pod, snap, batch=batch) == (expected, None)


def node_with(cpu_m, mem, pods="32", used=None, extended="5", eph="5"):
    """makeAllocatableResources(10, 20, 32, 5, 20, 5) and a pod using `used` (milliCPU, memory)."""
    n = (
        make_node("machine1")
        .capacity(
            {
                "cpu": f"{cpu_m}m",
                "memory": str(mem),
                "pods": pods,
                EXTENDED_RES: extended,
                "hugepages-2Mi": "20",
                "ephemeral-storage": eph,
            }
        )
        .obj()
    )
    existing = []
    if used is not None:
        existing.append(make_pod("used").node("machine1").req({"cpu": f"{used[0]}m", "memory": str(used[1])}).obj())
    return n, existing


def insufficient(*names, code=Code.UNSCHEDULABLE):
    return Status(code, *(f"Insufficient {n}" for n in names))


ENOUGH_CASES = [
    pytest.param(make_pod().obj(), (10, 20), None, id="no resources requested always fits"),
    pytest.param(
        make_pod().req({"cpu": "1m", "memory": "1"}).obj(),
        (10, 20),
        insufficient("cpu", "memory"),
        id="too many resources fails",
    ),
    pytest.param(
        make_pod().req({"cpu": "1m", "memory": "1"}).init_req({"cpu": "3m", "memory": "1"}).obj(),
        (8, 19),
        insufficient("cpu"),
        id="too many resources fails due to init container cpu",
    ),
    pytest.param(
        make_pod()
        .req({"cpu": "1m", "memory": "1"})
        .init_req({"cpu": "3m", "memory": "1"})
        .init_req({"cpu": "2m", "memory": "1"})
        .obj(),
        (8, 19),
        insufficient("cpu"),
        id="too many resources fails due to highest init container cpu",
    ),
    pytest.param(
        make_pod().req({"cpu": "1m", "memory": "1"}).init_req({"cpu": "1m", "memory": "3"}).obj(),
        (9, 19),
        insufficient("memory"),
        id="too many resources fails due to init container memory",
    ),
    pytest.param(
        make_pod().req({"cpu": "1m", "memory": "1"}).init_req({"cpu": "1m", "memory": "1"}).obj(),
        (9, 19),
        None,
        id="init container fits because it's the max, not sum, of containers and init containers",
    ),
    pytest.param(make_pod().req({"cpu": "1m", "memory": "1"}).obj(), (5, 5), None, id="both resources fit"),
    pytest.param(
        make_pod().req({"cpu": "2m", "memory": "1"}).obj(), (9, 5), insufficient("cpu"), id="one resource memory fits"
    ),
    pytest.param(
        make_pod().req({"cpu": "1m", "memory": "2"}).obj(), (5, 19), insufficient("memory"), id="one resource cpu fits"
    ),
    pytest.param(make_pod().req({"cpu": "5m", "memory": "1"}).obj(), (5, 19), None, id="equal edge case"),
    pytest.param(
        make_pod().req({"cpu": "4m", "memory": "1"}).init_req({"cpu": "5m", "memory": "1"}).obj(),
        (5, 19),
        None,
        id="equal edge case for init container",
    ),
    pytest.param(make_pod().req({EXTENDED_RES: "1"}).obj(), (0, 0), None, id="extended resource fits"),
    pytest.param(
        make_pod().req({EXTENDED_RES: "6"}).obj(),
        (0, 0),
        Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"Insufficient {EXTENDED_RES}"),
        id="extended resource capacity enforced",
    ),
    pytest.param(
        make_pod().req({"cpu": "11m", "memory": "1"}).obj(),
        (0, 0),
        Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "Insufficient cpu"),
        id="kubesched: a request above allocatable is unresolvable since v1.34",
    ),
    pytest.param(
        make_pod()
        .req({"cpu": "1m", "memory": "1"})
        .req({"cpu": "1m", "memory": "1"})
        .init_req({"cpu": "2m", "memory": "1"}, sidecar=True)
        .obj(),
        (7, 16),
        insufficient("cpu"),
        id="kubesched: a sidecar's requests add to the regular containers",
    ),
]


@pytest.mark.parametrize(("pod", "used", "want"), ENOUGH_CASES)
def test_enough_requests(pod, used, want, batch):
    node, existing = node_with(10, 20, used=used)
    snap = build_snapshot([node], existing)
    plugin = new_plugin(new, fit_args(), snap)
    assert filter_statuses(plugin, pod, snap, batch=batch) == [want]


def test_pods_number_exceeded(batch):
    node, _ = node_with(10, 20, pods="1")
    snap = build_snapshot([node], [make_pod("p").node("machine1").obj()])
    plugin = new_plugin(new, fit_args(), snap)
    got = filter_statuses(plugin, make_pod().req({"cpu": "1m", "memory": "1"}).obj(), snap, batch=batch)
    assert got == [Status(Code.UNSCHEDULABLE, "Too many pods")]


def test_ignored_extended_resources(batch):
    node, _ = node_with(10, 20)
    snap = build_snapshot([node])
    plugin = new_plugin(new, fit_args(ignoredResources=[EXTENDED_RES]), snap)
    assert filter_statuses(plugin, make_pod().req({EXTENDED_RES: "100"}).obj(), snap, batch=batch) == [None]
    grouped = new_plugin(new, fit_args(ignoredResourceGroups=["abc.com"]), snap)
    assert filter_statuses(grouped, make_pod().req({EXTENDED_RES: "100"}).obj(), snap, batch=batch) == [None]
