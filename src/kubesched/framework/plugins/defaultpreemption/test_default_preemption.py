"""DefaultPreemption cases ported from upstream's default_preemption_test.go (same inputs, same outcomes).

TestPostFilter, TestDryRunPreemption (with the filter-call counts) and TestSelectBestCandidate.
Upstream seeds its offset generator with 4; the offsets that seed produces are given here directly.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import FilterPlugin, PreFilterExtensions, PreFilterPlugin
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.plugins.defaultpreemption.default_preemption import DefaultPreemption
from kubesched.framework.preemption.evaluator import Candidate, list_pdbs, pick_one_node_for_preemption
from kubesched.framework.runtime.framework import Framework
from kubesched.framework.runtime.registry import Registry
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeToStatus, PodInfo, new_pod_info
from kubesched_testing.cluster import Harness, new_test_cluster
from kubesched_testing.wrappers import make_node, make_pod

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}
ONE_POD = {"pods": "1"}
NODE_RES = {"cpu": "200m", "memory": "400"}
UU, U = Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.UNSCHEDULABLE
VIOLATING_KEY = "test.kubernetes.io/is-violating-pdb"


def epoch(n: int) -> str:
    return f"1970-01-01T00:00:0{n}Z"


def pod(
    name: str,
    node: str = "",
    prio: int | None = None,
    req: dict[str, str] | None = None,
    start: int | None = None,
    labels: dict[str, str] | None = None,
    anti_affinity: str = "",
) -> dict[str, Any]:
    w = make_pod(name).uid(name)
    if node:
        w.node(node)
    if prio is not None:
        w.priority(prio)
    if req:
        w.req(req)
    if labels:
        w.labels(labels)
    if anti_affinity:
        w.pod_anti_affinity_exists(anti_affinity, "hostname")
    obj = w.obj()
    if start is not None:
        obj["status"] = {"startTime": epoch(start)}
    return obj


def pdb(
    name: str, match: dict[str, str], *, min_available: Any = None, allowed: int | None = None, **status: Any
) -> dict[str, Any]:
    spec: dict[str, Any] = {"selector": {"matchLabels": match}}
    if min_available is not None:
        spec["minAvailable"] = min_available
    obj: dict[str, Any] = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }
    if allowed is not None:
        obj["status"] = {"disruptionsAllowed": allowed, **status}
    return obj


class ErrorOnLabel(PreFilterPlugin, PreFilterExtensions):
    """upstream's TestPlugin: AddPod/RemovePod fail on nodes labelled error=true."""

    NAME = "test-plugin"

    def pre_filter(self, state: CycleState, pod: PodInfo, nodes: Any) -> tuple[None, None]:
        return None, None

    def pre_filter_extensions(self) -> ErrorOnLabel:
        return self

    def add_pod(self, state: CycleState, pod: PodInfo, other: PodInfo, node_info: NodeInfo) -> Status | None:
        return self._check(f"failed to add pod: {pod.name}", node_info)

    def remove_pod(self, state: CycleState, pod: PodInfo, other: PodInfo, node_info: NodeInfo) -> Status | None:
        return self._check(f"failed to remove pod: {pod.name}", node_info)

    @staticmethod
    def _check(msg: str, node_info: NodeInfo) -> Status | None:
        return Status(Code.ERROR, msg) if node_info.labels.get("error") == "true" else None


@dataclass
class FakeFilter(FilterPlugin):
    """Counts calls and answers each node with a fixed code (tf.FakeFilterPlugin)."""

    code: Code = Code.SUCCESS
    calls: int = 0
    NAME = "FakeFilter"

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        self.calls += 1
        return None if self.code == Code.SUCCESS else Status(self.code)


@dataclass
class FixedFilter(FilterPlugin):
    """TrueFilter / FalseFilter / MatchFilter (pod name equals node name)."""

    kind: str
    NAME = "FixedFilter"

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        ok = {"true": True, "false": False, "match": pod.name == node_info.name}[self.kind]
        return None if ok else Status(Code.UNSCHEDULABLE, "filtered")


class FixedOffsets:
    """Stands in for the offset generator: upstream's seed-4 sequence for 5 nodes."""

    def __init__(self, offsets: list[int]) -> None:
        self.offsets = list(offsets)

    def randrange(self, n: int) -> int:
        return self.offsets.pop(0)


@dataclass
class Setup:
    tc: Harness
    fwk: Framework
    plugin: DefaultPreemption
    extra: dict[str, Any] = field(default_factory=dict)

    def pre_filter(self, preemptor: dict[str, Any]) -> tuple[CycleState, PodInfo]:
        sched = self.tc.sched
        sched.cache.update_snapshot(sched.snapshot)
        state, pi = CycleState(), new_pod_info(preemptor)
        _, s, _ = self.fwk.run_pre_filter_plugins(state, pi, sched.snapshot.node_info_list)
        assert s is None or s.is_success()
        return state, pi


def _factory_of(plugin: Any) -> Callable[[Any, Any], Any]:
    """A registry factory that hands out this one plugin object."""
    return lambda args, handle: plugin


def setup(
    nodes: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    *,
    pre_filter: tuple[str, ...] = ("NodeResourcesFit",),
    filters: tuple[str, ...] = ("NodeResourcesFit",),
    extra: dict[str, Any] | None = None,
    args: dict[str, Any] | None = None,
    objects: list[dict[str, Any]] = (),  # type: ignore[assignment]
) -> Setup:
    reg = Registry()
    extra = extra or {}
    for name, plugin in extra.items():
        reg.register(name, _factory_of(plugin))

    def enabled(names: tuple[str, ...]) -> dict[str, Any]:
        return {"enabled": [{"name": n} for n in names]}

    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {
                    "multiPoint": {"disabled": [{"name": "*"}]},
                    "queueSort": enabled(("PrioritySort",)),
                    "preFilter": enabled(pre_filter),
                    "filter": enabled(filters),
                    "postFilter": enabled(("DefaultPreemption",)),
                    "bind": enabled(("DefaultBinder",)),
                },
                "pluginConfig": [{"name": "DefaultPreemption", "args": args or {}}],
            }
        ],
    }
    tc = new_test_cluster(nodes, [*objects, *pods], config=config, registry=reg)
    fwk = tc.sched.profiles["default-scheduler"]
    plugin = fwk.plugins_map["DefaultPreemption"]
    assert isinstance(plugin, DefaultPreemption)
    return Setup(tc, fwk, plugin, extra)


def statuses(codes: dict[str, Code]) -> NodeToStatus:
    return NodeToStatus({n: Status(c) for n, c in codes.items()}, Status(UU))


# TestPostFilter

POST_FILTER_CASES = [
    (
        "pod with higher priority can be made schedulable",
        pod("p", prio=HIGH),
        [pod("p1", "node1")],
        [make_node("node1").capacity(ONE_POD).obj()],
        [],
        {"node1": U},
        "node1",
        None,
    ),
    (
        "pod with tied priority is still unschedulable",
        pod("p"),
        [pod("p1", "node1")],
        [make_node("node1").capacity(ONE_POD).obj()],
        [],
        {"node1": U},
        "",
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
    ),
    (
        "preemption should respect filteredNodesStatuses",
        pod("p", prio=HIGH),
        [pod("p1", "node1")],
        [make_node("node1").capacity(ONE_POD).obj()],
        [],
        {"node1": UU},
        "",
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
    ),
    (
        "preemption should respect absent NodeToStatusReader entry meaning UnschedulableAndUnresolvable",
        pod("p", prio=HIGH),
        [pod("p1", "node1")],
        [make_node("node1").capacity(ONE_POD).obj()],
        [],
        {},
        "",
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
    ),
    (
        "pod can be made schedulable on one node",
        pod("p", prio=MID),
        [pod("p1", "node1", HIGH), pod("p2", "node2", LOW)],
        [make_node("node1").capacity(ONE_POD).obj(), make_node("node2").capacity(ONE_POD).obj()],
        [],
        {"node1": U, "node2": U},
        "node2",
        None,
    ),
    (
        "pod can be made schedulable on minHighestPriority node",
        pod("p", prio=VERY_HIGH),
        [
            pod("p1", "node1", HIGH, labels={VIOLATING_KEY: "non-violating"}),
            pod("p2", "node1", LOW, labels={VIOLATING_KEY: "violating"}),
            pod("p3", "node2", MID, labels={VIOLATING_KEY: "violating"}),
        ],
        [make_node("node1").capacity(ONE_POD).obj(), make_node("node2").capacity(ONE_POD).obj()],
        [
            pdb("violating-pdb", {VIOLATING_KEY: "violating"}, min_available="100%"),
            pdb("non-violating-pdb", {VIOLATING_KEY: "non-violating"}, min_available="0", allowed=2**31 - 1),
        ],
        {"node1": U, "node2": U},
        "node2",
        None,
    ),
    (
        "no candidate nodes found, no enough resource after removing low priority pods",
        pod("p", prio=HIGH, req=LARGE),
        [pod("p1", "node1"), pod("p2", "node2")],
        [make_node("node1").capacity(NODE_RES).obj(), make_node("node2").capacity(NODE_RES).obj()],
        [],
        {"node1": U, "node2": U},
        "",
        "preemption: 0/2 nodes are available: 2 Insufficient cpu.",
    ),
    (
        "no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU resource",
        pod("p", prio=HIGH, req=LARGE),
        [pod("p1", "node1", HIGH), pod("p2", "node2"), pod("p3", "node3", HIGH)],
        [
            make_node("node1").capacity(ONE_POD).obj(),
            make_node("node2").capacity(NODE_RES).obj(),
            make_node("node3").capacity(ONE_POD).obj(),
        ],
        [],
        {"node1": U, "node2": U, "node3": U},
        "",
        "preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims found for incoming pod.",
    ),
    (
        "no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes and 2 nodes don't have "
        "enough CPU resource",
        pod("p", prio=HIGH, req=LARGE),
        [pod("p1", "node1"), pod("p2", "node2")],
        [make_node(f"node{i}").capacity(NODE_RES).obj() for i in range(1, 5)],
        [],
        {"node1": U, "node2": U, "node4": UU},
        "",
        "preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 Preemption is not helpful for scheduling.",
    ),
    (
        "only one node but failed with TestPlugin",
        pod("p", prio=HIGH, req=LARGE),
        [pod("p1", "node1")],
        [make_node("node1").capacity(LARGE).label("error", "true").obj()],
        [],
        {"node1": U},
        None,
        'preemption: running RemovePod on PreFilter plugin "test-plugin": failed to remove pod: p',
    ),
    (
        "one failed with TestPlugin and the other pass",
        pod("p", prio=HIGH, req=LARGE),
        [pod("p1", "node1"), pod("p2", "node2", req=MEDIUM)],
        [make_node("node1").capacity(LARGE).label("error", "true").obj(), make_node("node2").capacity(LARGE).obj()],
        [],
        {"node1": U, "node2": U},
        "node2",
        None,
    ),
]


@pytest.mark.parametrize(
    ("preemptor", "pods", "nodes", "pdbs", "codes", "want_node", "want_message"),
    [c[1:] for c in POST_FILTER_CASES],
    ids=[c[0] for c in POST_FILTER_CASES],
)
def test_post_filter(
    preemptor: dict[str, Any],
    pods: list[dict[str, Any]],
    nodes: list[dict[str, Any]],
    pdbs: list[dict[str, Any]],
    codes: dict[str, Code],
    want_node: str | None,
    want_message: str | None,
) -> None:
    s = setup(
        nodes,
        pods,
        pre_filter=("NodeResourcesFit", "test-plugin"),
        extra={"test-plugin": ErrorOnLabel()},
        objects=pdbs,
    )
    state, pi = s.pre_filter(preemptor)
    result, status = s.plugin.post_filter(state, pi, statuses(codes))
    if want_node is None:
        assert result is None
    else:
        assert result is not None and result.nominating_info is not None
        assert result.nominating_info.nominated_node_name == want_node
    if want_message is None:
        assert status is None or status.is_success()
    else:
        assert status is not None and status.message() == want_message
        assert status.code == (Code.ERROR if "running RemovePod" in want_message else Code.UNSCHEDULABLE)


# TestDryRunPreemption

CandidateWant = dict[str, tuple[list[str], int]]  # node -> (victim names sorted, PDB violations)


def run_dry_run(
    node_names: list[str],
    preemptors: list[dict[str, Any]],
    init_pods: list[dict[str, Any]],
    *,
    filters: tuple[str, ...] = ("NodeResourcesFit",),
    pre_filter: tuple[str, ...] = ("NodeResourcesFit",),
    fake_code: Code = Code.SUCCESS,
    fixed: str = "",
    pdbs: list[dict[str, Any]] = (),  # type: ignore[assignment]
    args: dict[str, Any] | None = None,
    offsets: list[int] | None = None,
) -> tuple[list[CandidateWant], list[int]]:
    nodes = []
    for full in node_names:
        parts = full.split("/")
        w = make_node(parts[0]).capacity(VERY_LARGE)
        for key, value in zip(("hostname", "zone", "region"), parts, strict=False):
            w.label(key, value)
        nodes.append(w.obj())
    fake = FakeFilter(fake_code)
    extra: dict[str, Any] = {"FakeFilter": fake}
    if fixed:
        extra["FixedFilter"] = FixedFilter(fixed)
    s = setup(
        nodes, init_pods, pre_filter=pre_filter, filters=("FakeFilter", *filters), extra=extra, args=args, objects=pdbs
    )
    evaluator = s.plugin.evaluator
    rng = FixedOffsets(offsets or [4] * len(preemptors))
    evaluator.handle = dataclasses.replace(evaluator.handle, rng=rng)  # type: ignore[arg-type]
    pdb_list = list_pdbs(s.tc.cluster)
    got: list[CandidateWant] = []
    calls: list[int] = []
    for preemptor in preemptors:
        before = fake.calls
        state, pi = s.pre_filter(preemptor)
        infos = sorted(s.tc.sched.snapshot.node_info_list, key=lambda ni: ni.name)
        offset, num = s.plugin.evaluator.get_offset_and_num_candidates(len(infos))
        cands, _, _ = s.plugin.evaluator.dry_run_preemption(state, pi, infos, pdb_list, offset, num)
        got.append({c.name: (sorted(v.name for v in c.victims), c.num_pdb_violations) for c in cands})
        calls.append(fake.calls - before)
    return got, calls


def test_dry_run_no_fit_anywhere() -> None:
    init = [pod("p1", "node1", MID), pod("p2", "node2", MID)]
    assert run_dry_run(["node1", "node2"], [pod("p", prio=HIGH)], init, filters=("FixedFilter",), fixed="false")[0] == [
        {}
    ]


@pytest.mark.parametrize("fixed", ["true", "match"], ids=["fits with no preemption", "fits on one node"])
def test_dry_run_fake_filter_rejects(fixed: str) -> None:
    init = [pod("p1", "node1", MID), pod("p2", "node2", MID)]
    got, calls = run_dry_run(
        ["node1", "node2"], [pod("node1", prio=HIGH)], init, filters=("FixedFilter",), fixed=fixed, fake_code=U
    )
    assert got == [{}] and calls == [2]


DRY_RUN_CASES = [
    (
        "a pod that fits on both nodes when lower priority pods are preempted",
        ["node1", "node2"],
        pod("p", prio=HIGH, req=LARGE),
        [pod("p1", "node1", MID, LARGE), pod("p2", "node2", MID, LARGE)],
        [],
        {"node1": (["p1"], 0), "node2": (["p2"], 0)},
        4,
    ),
    (
        "a pod that would fit on the nodes, but other pods running are higher priority, no preemption would happen",
        ["node1", "node2"],
        pod("p", prio=LOW, req=LARGE),
        [pod("p1", "node1", MID, LARGE), pod("p2", "node2", MID, LARGE)],
        [],
        {},
        0,
    ),
    (
        "medium priority pod is preempted, but lower priority one stays as it is small",
        ["node1", "node2"],
        pod("p", prio=HIGH, req=LARGE),
        [pod("p1.1", "node1", LOW, SMALL), pod("p1.2", "node1", MID, LARGE), pod("p2", "node2", MID, LARGE)],
        [],
        {"node1": (["p1.2"], 0), "node2": (["p2"], 0)},
        5,
    ),
    (
        "mixed priority pods are preempted",
        ["node1", "node2"],
        pod("p", prio=HIGH, req=LARGE),
        [
            pod("p1.1", "node1", MID, SMALL),
            pod("p1.2", "node1", LOW, SMALL),
            pod("p1.3", "node1", MID, MEDIUM),
            pod("p1.4", "node1", HIGH, SMALL),
            pod("p2", "node2", HIGH, LARGE),
        ],
        [],
        {"node1": (["p1.2", "p1.3"], 0)},
        4,
    ),
    (
        "mixed priority pods are preempted, pick later StartTime one when priorities are equal",
        ["node1", "node2"],
        pod("p", prio=HIGH, req=LARGE),
        [
            pod("p1.1", "node1", LOW, SMALL, start=5),
            pod("p1.2", "node1", LOW, SMALL, start=4),
            pod("p1.3", "node1", MID, MEDIUM, start=3),
            pod("p1.4", "node1", HIGH, SMALL, start=2),
            pod("p2", "node2", HIGH, LARGE, start=1),
        ],
        [],
        {"node1": (["p1.1", "p1.3"], 0)},
        4,
    ),
    (
        "preemption with violation of same pdb",
        ["node1"],
        pod("p", prio=HIGH, req=VERY_LARGE),
        [
            pod("p1.1", "node1", MID, MEDIUM, labels={"app": "foo"}),
            pod("p1.2", "node1", MID, MEDIUM, labels={"app": "foo"}),
        ],
        [pdb("pdb", {"app": "foo"}, allowed=1)],
        {"node1": (["p1.1", "p1.2"], 1)},
        3,
    ),
    (
        "preemption with violation of the pdb with pod whose eviction was processed, the victim doesn't belong to "
        "DisruptedPods",
        ["node1"],
        pod("p", prio=HIGH, req=VERY_LARGE),
        [
            pod("p1.1", "node1", MID, MEDIUM, labels={"app": "foo"}),
            pod("p1.2", "node1", MID, MEDIUM, labels={"app": "foo"}),
        ],
        [pdb("pdb", {"app": "foo"}, allowed=1, disruptedPods={"p2": epoch(0)})],
        {"node1": (["p1.1", "p1.2"], 1)},
        3,
    ),
    (
        "preemption with violation of the pdb with pod whose eviction was processed, the victim belongs to "
        "DisruptedPods",
        ["node1"],
        pod("p", prio=HIGH, req=VERY_LARGE),
        [
            pod("p1.1", "node1", MID, MEDIUM, labels={"app": "foo"}),
            pod("p1.2", "node1", MID, MEDIUM, labels={"app": "foo"}),
        ],
        [pdb("pdb", {"app": "foo"}, allowed=1, disruptedPods={"p1.2": epoch(0)})],
        {"node1": (["p1.1", "p1.2"], 0)},
        3,
    ),
    (
        "preemption with violation of the pdb with pod whose eviction was processed, the victim which belongs to "
        "DisruptedPods is treated as 'nonViolating'",
        ["node1"],
        pod("p", prio=HIGH, req=VERY_LARGE),
        [pod(f"p1.{i}", "node1", MID, MEDIUM, labels={"app": "foo"}) for i in (1, 2, 3)],
        [pdb("pdb", {"app": "foo"}, allowed=1, disruptedPods={"p1.3": epoch(0)})],
        {"node1": (["p1.1", "p1.2", "p1.3"], 1)},
        4,
    ),
]


@pytest.mark.parametrize(
    ("nodes", "preemptor", "init", "pdbs", "want", "want_calls"),
    [c[1:] for c in DRY_RUN_CASES],
    ids=[c[0] for c in DRY_RUN_CASES],
)
def test_dry_run_preemption(
    nodes: list[str],
    preemptor: dict[str, Any],
    init: list[dict[str, Any]],
    pdbs: list[dict[str, Any]],
    want: CandidateWant,
    want_calls: int,
) -> None:
    got, calls = run_dry_run(nodes, [preemptor], init, pdbs=pdbs)
    assert got == [want]
    assert calls == [want_calls]


def test_dry_run_anti_affinity_victim() -> None:
    init = [
        pod("p1.1", "node1", LOW, SMALL, labels={"foo": ""}, anti_affinity="foo"),
        pod("p1.2", "node1", MID, SMALL),
        pod("p1.3", "node1", HIGH, SMALL),
        pod("p2", "node2", HIGH, SMALL),
    ]
    plugins = ("NodeResourcesFit", "InterPodAffinity")
    got, calls = run_dry_run(
        ["node1", "node2"],
        [pod("p", prio=HIGH, req=SMALL, labels={"foo": ""})],
        init,
        filters=plugins,
        pre_filter=plugins,
    )
    assert got == [{"node1": (["p1.1"], 0)}]
    assert calls == [3]


def test_dry_run_resolves_topology_spread() -> None:
    preemptor = make_pod("p").uid("p").priority(HIGH).label("foo", "")
    for key in ("zone", "hostname"):
        preemptor.spread_constraint(
            1, key, "DoNotSchedule", {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
        )
    init = [
        pod("pod-a1", "node-a", MID, labels={"foo": ""}),
        pod("pod-a2", "node-a", LOW, labels={"foo": ""}),
        pod("pod-b1", "node-b", LOW, labels={"foo": ""}),
        pod("pod-x1", "node-x", HIGH, labels={"foo": ""}),
        pod("pod-x2", "node-x", HIGH, labels={"foo": ""}),
    ]
    got, calls = run_dry_run(
        ["node-a/zone1", "node-b/zone1", "node-x/zone2"],
        [preemptor.obj()],
        init,
        filters=("PodTopologySpread",),
        pre_filter=("PodTopologySpread",),
    )
    assert got == [{"node-a": (["pod-a2"], 0), "node-b": (["pod-b1"], 0)}]
    assert calls == [5]


LIMIT_ARGS = {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1}
FIVE = ["node1", "node2", "node3", "node4", "node5"]


@pytest.mark.parametrize(
    ("prios", "labels", "pdbs", "args", "want", "want_calls"),
    [
        pytest.param(
            [MID] * 5,
            {},
            [],
            LIMIT_ARGS,
            {"node1": (["p1"], 0), "node5": (["p5"], 0)},
            4,
            id="all nodes are possible candidates, but DefaultPreemptionArgs limits to 2",
        ),
        pytest.param(
            [MID, VERY_HIGH, MID, MID, VERY_HIGH],
            {},
            [],
            LIMIT_ARGS,
            {"node1": (["p1"], 0), "node3": (["p3"], 0)},
            4,
            id="some nodes are not possible candidates, DefaultPreemptionArgs limits to 2",
        ),
        pytest.param(
            [MID] * 5,
            {1, 2, 5},
            [pdb("pdb", {"app": "foo"}, allowed=0)],
            {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 2},
            {"node1": (["p1"], 1), "node3": (["p3"], 0), "node5": (["p5"], 1)},
            8,
            id="preemption looks past numCandidates until a non-PDB violating node is found",
        ),
    ],
)
def test_dry_run_candidate_limits(
    prios: list[int],
    labels: set[int],
    pdbs: list[dict[str, Any]],
    args: dict[str, Any],
    want: CandidateWant,
    want_calls: int,
) -> None:
    init = [
        pod(f"p{i}", f"node{i}", prio, LARGE, labels={"app": "foo"} if i in labels else None)
        for i, prio in enumerate(prios, start=1)
    ]
    got, calls = run_dry_run(FIVE, [pod("p", prio=HIGH, req=LARGE)], init, pdbs=pdbs, args=args)
    assert got == [want]
    assert calls == [want_calls]


def test_dry_run_offset_across_cycles_wraps_around() -> None:
    init = [pod(f"p{i}", f"node{i}", MID, LARGE) for i in range(1, 6)]
    preemptors = [pod(f"tp{i}", prio=HIGH, req=LARGE) for i in (1, 2, 3)]
    got, calls = run_dry_run(FIVE, preemptors, init, args=LIMIT_ARGS, offsets=[4, 1, 3])
    assert got == [
        {"node1": (["p1"], 0), "node5": (["p5"], 0)},
        {"node2": (["p2"], 0), "node3": (["p3"], 0)},
        {"node4": (["p4"], 0), "node5": (["p5"], 0)},
    ]
    assert calls == [4, 4, 4]


# TestSelectBestCandidate

E = 0  # epochTime


def victim(name: str, prio: int, req: dict[str, str], start: int) -> dict[str, Any]:
    """A running pod named pN.M (or pN) on nodeN, as upstream's SelectBestCandidate tables name them."""
    return pod(name, "node" + name[1:].split(".")[0], prio, req, start)


SELECT_CASES = [
    (
        "a pod that fits on both nodes when lower priority pods are preempted",
        HIGH,
        LARGE,
        [victim("p1", MID, LARGE, E), victim("p2", MID, LARGE, E)],
        {"node1", "node2"},
    ),
    (
        "node with min highest priority pod is picked",
        HIGH,
        VERY_LARGE,
        [
            victim("p1.1", MID, MEDIUM, E),
            victim("p1.2", MID, LARGE, E),
            victim("p2.1", MID, MEDIUM, E),
            victim("p2.2", LOW, MEDIUM, E),
            victim("p3.1", LOW, MEDIUM, E),
            victim("p3.2", LOW, MEDIUM, E),
        ],
        {"node3"},
    ),
    (
        "when highest priorities are the same, minimum sum of priorities is picked",
        HIGH,
        VERY_LARGE,
        [
            victim("p1.1", MID, MEDIUM, E),
            victim("p1.2", MID, LARGE, E),
            victim("p2.1", MID, LARGE, E),
            victim("p2.2", LOW, MEDIUM, E),
            victim("p3.1", MID, MEDIUM, E),
            victim("p3.2", MID, MEDIUM, E),
        ],
        {"node2"},
    ),
    (
        "when highest priority and sum are the same, minimum number of pods is picked",
        HIGH,
        VERY_LARGE,
        [
            victim("p1.1", MID, SMALL, E),
            victim("p1.2", NEG, SMALL, E),
            victim("p1.3", MID, SMALL, E),
            victim("p1.4", NEG, SMALL, E),
            victim("p2.1", MID, LARGE, E),
            victim("p2.2", NEG, MEDIUM, E),
            victim("p3.1", MID, MEDIUM, E),
            victim("p3.2", NEG, SMALL, E),
            victim("p3.3", LOW, SMALL, E),
        ],
        {"node2"},
    ),
    (
        "sum of adjusted priorities is considered",
        HIGH,
        VERY_LARGE,
        [
            victim("p1.1", MID, SMALL, E),
            victim("p1.2", NEG, SMALL, E),
            victim("p1.3", NEG, SMALL, E),
            victim("p2.1", MID, LARGE, E),
            victim("p2.2", NEG, MEDIUM, E),
            victim("p3.1", MID, MEDIUM, E),
            victim("p3.2", NEG, SMALL, E),
            victim("p3.3", LOW, SMALL, E),
        ],
        {"node2"},
    ),
    (
        "non-overlapping lowest high priority, sum priorities, and number of pods",
        VERY_HIGH,
        VERY_LARGE,
        [
            victim("p1.1", MID, SMALL, E),
            victim("p1.2", LOW, SMALL, E),
            victim("p1.3", LOW, SMALL, E),
            victim("p2.1", HIGH, LARGE, E),
            victim("p3.1", MID, MEDIUM, E),
            victim("p3.2", LOW, SMALL, E),
            victim("p3.3", LOW, SMALL, E),
            victim("p3.4", LOW, MEDIUM, E),
            victim("p4.1", MID, MEDIUM, E),
            victim("p4.2", MID, SMALL, E),
            victim("p4.3", MID, SMALL, E),
            victim("p4.4", NEG, SMALL, E),
        ],
        {"node1"},
    ),
    (
        "same priority, same number of victims, different start time for each node's pod",
        HIGH,
        VERY_LARGE,
        [
            victim("p1.1", MID, MEDIUM, 2),
            victim("p1.2", MID, MEDIUM, 2),
            victim("p2.1", MID, MEDIUM, 3),
            victim("p2.2", MID, MEDIUM, 3),
            victim("p3.1", MID, MEDIUM, 1),
            victim("p3.2", MID, MEDIUM, 1),
        ],
        {"node2"},
    ),
    (
        "same priority, same number of victims, different start time for all pods",
        HIGH,
        VERY_LARGE,
        [
            victim("p1.1", MID, MEDIUM, 4),
            victim("p1.2", MID, MEDIUM, 2),
            victim("p2.1", MID, MEDIUM, 5),
            victim("p2.2", MID, MEDIUM, 1),
            victim("p3.1", MID, MEDIUM, 3),
            victim("p3.2", MID, MEDIUM, 6),
        ],
        {"node3"},
    ),
    (
        "different priority, same number of victims, different start time for all pods",
        HIGH,
        VERY_LARGE,
        [
            victim("p1.1", LOW, MEDIUM, 4),
            victim("p1.2", MID, MEDIUM, 2),
            victim("p2.1", MID, MEDIUM, 6),
            victim("p2.2", LOW, MEDIUM, 1),
            victim("p3.1", LOW, MEDIUM, 3),
            victim("p3.2", MID, MEDIUM, 5),
        ],
        {"node2"},
    ),
]


@pytest.mark.parametrize(
    ("prio", "req", "pods", "expected"), [c[1:] for c in SELECT_CASES], ids=[c[0] for c in SELECT_CASES]
)
def test_select_best_candidate(prio: int, req: dict[str, str], pods: list[dict[str, Any]], expected: set[str]) -> None:
    names = sorted({p["spec"]["nodeName"] for p in pods})
    s = setup([make_node(n).capacity(VERY_LARGE).obj() for n in names], pods)
    state, pi = s.pre_filter(pod("p", prio=prio, req=req))
    infos = s.tc.sched.snapshot.node_info_list
    offset, num = s.plugin.evaluator.get_offset_and_num_candidates(len(infos))
    cands, _, _ = s.plugin.evaluator.dry_run_preemption(state, pi, infos, [], offset, num)
    assert pick_one_node_for_preemption(cands).name in expected
    # Candidate order must not matter: every rotation of the list picks from the same set.
    for k in range(len(cands)):
        rotated: list[Candidate] = cands[k:] + cands[:k]
        assert pick_one_node_for_preemption(rotated).name in expected
