"""schedule_one: numFeasibleNodesToFind, the rotating start index, FitError text (schedule_one_test.go)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import BindPlugin, PermitPlugin, PreBindPlugin, ReservePlugin
from kubesched.framework.runtime.registry import Registry
from kubesched.framework.status import Code, Status
from kubesched.framework.types import Diagnosis, FitError, new_pod_info
from kubesched.schedule_one import num_feasible_nodes_to_find, rotation
from kubesched_testing.cluster import new_test_cluster
from kubesched_testing.wrappers import make_node, make_pod


@pytest.mark.parametrize(
    ("pct", "global_pct", "nodes", "want"),
    [
        pytest.param(None, 0, 10, 10, id="not set percentageOfNodesToScore and nodes number not more than 50"),
        pytest.param(40, 0, 10, 10, id="set profile percentageOfNodesToScore and nodes number not more than 50"),
        pytest.param(None, 0, 1000, 420, id="not set percentageOfNodesToScore and nodes number more than 50"),
        pytest.param(40, 0, 1000, 400, id="set profile percentageOfNodesToScore and nodes number more than 50"),
        pytest.param(None, 40, 1000, 400, id="set global percentageOfNodesToScore and nodes number more than 50"),
        pytest.param(
            40, 70, 1000, 400, id="set profile and global percentageOfNodesToScore and nodes number more than 50"
        ),
        pytest.param(None, 0, 6000, 300, id="not set percentageOfNodesToScore and nodes number more than 50*125"),
        pytest.param(None, 0, 5000, 500, id="kubesched: 5000 nodes examine 10%"),
        pytest.param(None, 0, 15000, 750, id="kubesched: 15000 nodes floor at 5%"),
        pytest.param(1, 0, 1000, 100, id="kubesched: at least 100 nodes"),
    ],
)
def test_num_feasible_nodes_to_find(pct, global_pct, nodes, want):
    assert num_feasible_nodes_to_find(pct, global_pct, nodes) == want


def test_fit_error_histogram_is_sorted_as_strings():
    d = Diagnosis(
        node_to_status={
            "n1": Status(Code.UNSCHEDULABLE, "Insufficient cpu", "Insufficient memory"),
            "n2": Status(Code.UNSCHEDULABLE, "Insufficient cpu"),
            "n3": Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) had untolerated taint(s)"),
        }
    )
    msg = str(FitError(new_pod_info(make_pod("p").obj()), 13, d))
    assert msg == (
        "0/13 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated taint(s), 2 Insufficient cpu."
    )


def test_fit_error_prefilter_message_and_absent_nodes():
    d = Diagnosis(pre_filter_msg="pod affinity terms conflict")
    assert (
        str(FitError(new_pod_info(make_pod("p").obj()), 3, d))
        == "0/3 nodes are available: pod affinity terms conflict."
    )
    absent = Diagnosis(
        absent_nodes_status=Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't satisfy plugin(s) [NodeAffinity]"
        ),
        node_to_status={"n1": Status(Code.UNSCHEDULABLE, "Insufficient cpu")},
    )
    assert str(FitError(new_pod_info(make_pod("p").obj()), 4, absent)) == (
        "0/4 nodes are available: 1 Insufficient cpu, 3 node(s) didn't satisfy plugin(s) [NodeAffinity]."
    )


def scheduler_with(nodes, pods, **kw):
    tc = new_test_cluster(nodes, pods, **kw)
    return tc.sched, tc.cluster, tc.recorder


def test_next_start_node_index_rotates_by_examined_nodes():
    nodes = [make_node(f"n{i:03d}").capacity({"cpu": "1", "pods": "110"}).obj() for i in range(200)]
    sched, _, obs = scheduler_with(nodes, [make_pod("p0").req({"cpu": "100m"}).obj()])
    sched.run()
    # 200 nodes -> 100 feasible wanted; all fit, so 100 nodes examined.
    assert sched.cycles.next_start_node_index == 100
    assert len(obs.outcomes[0].record.filter) == 100


def test_no_nodes_available():
    sched, _, obs = scheduler_with([], [make_pod("p").obj()])
    sched.run()
    assert obs.outcomes[0].result == "Unschedulable"
    assert obs.outcomes[0].message == "no nodes available to schedule pods"


def test_cache_confirms_bound_pods_and_snapshot_rows_follow():
    nodes = [make_node("a").capacity({"cpu": "1", "pods": "110"}).obj()]
    sched, cluster, obs = scheduler_with(nodes, [make_pod(f"p{i}").req({"cpu": "300m"}).obj() for i in range(4)])
    sched.run()
    assert [o.result for o in obs.outcomes] == ["Scheduled"] * 3 + ["Unschedulable"]
    assert not sched.cache.assumed_pods
    assert sched.cache.nodes["a"].requested["cpu"] == 900
    row = sched.snapshot.table.requested[sched.snapshot.position["a"]]
    assert row[sched.snapshot.table.resource_index["cpu"]] == 900
    # Deleting a bound pod frees room: the unschedulable pod is retried (Fit registered AssignedPod/Delete).
    cluster.delete("Pod", "default", "p0")
    sched.run()
    assert obs.outcomes[-1].pod.name == "p3" and obs.outcomes[-1].result == "Scheduled"
    assert obs.outcomes[-1].attempts == 2


# TestSchedulerScheduleOne: one pod, one node, a plugin failing at each point of the cycle.


class _Failing(ReservePlugin, PermitPlugin, PreBindPlugin, BindPlugin):
    """Fails at the point named by `at` with an error; records Unreserve calls."""

    NAME = "FakePlugin"

    def __init__(self, at: str) -> None:
        self.at = at
        self.unreserved: list[str] = []

    def _result(self, point: str) -> Status | None:
        return Status(Code.ERROR, f"{point} error") if point == self.at else None

    def reserve(self, state, pod, node_name):
        return self._result("reserve")

    def unreserve(self, state, pod, node_name):
        self.unreserved.append(pod.name)

    def permit(self, state, pod, node_name):
        return self._result("permit"), 0.0

    def pre_bind(self, state, pod, node_name):
        return self._result("prebind")

    def bind(self, state, pod, node_name):
        s = self._result("bind")
        return s if s is not None else Status(Code.SKIP)  # let DefaultBinder bind


def _one_pod_cluster(at: str, pod=None):
    plugin = _Failing(at)
    reg = Registry()
    reg.register("FakePlugin", lambda args, handle: plugin)
    points = {p: {"enabled": [{"name": "FakePlugin"}]} for p in ("reserve", "permit", "preBind")}
    points["bind"] = {"enabled": [{"name": "FakePlugin"}, {"name": "DefaultBinder"}], "disabled": [{"name": "*"}]}
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "plugins": points}],
    }
    node = make_node("node1").capacity({"cpu": "4"}).obj()
    tc = new_test_cluster([node], [pod or make_pod("foo").uid("foo").obj()], config=config, registry=reg)
    tc.sched.run()
    return tc, plugin


@pytest.mark.parametrize(
    ("at", "want_event", "want_note", "unreserved"),
    [
        pytest.param(
            "", "Scheduled", "Successfully assigned default/foo to node1", [], id="bind assumed pod scheduled"
        ),
        pytest.param(
            "reserve",
            "FailedScheduling",
            'running Reserve plugin "FakePlugin": reserve error',
            ["foo"],
            id="error reserve pod",
        ),
        pytest.param(
            "permit",
            "FailedScheduling",
            'running Permit plugin "FakePlugin": permit error',
            ["foo"],
            id="error permit pod",
        ),
        pytest.param(
            "prebind",
            "FailedScheduling",
            'running PreBind plugin "FakePlugin": prebind error',
            ["foo"],
            id="error prebind pod",
        ),
        pytest.param(
            "bind", "FailedScheduling", 'running Bind plugin "FakePlugin": bind error', ["foo"], id="error bind pod"
        ),
    ],
)
def test_schedule_one_failure_points(at, want_event, want_note, unreserved):
    tc, plugin = _one_pod_cluster(at)
    first = tc.cluster.events[0]
    assert (first["reason"], first["note"]) == (want_event, want_note)
    assert plugin.unreserved[:1] == unreserved
    pod = tc.get("Pod", "default", "foo")
    if at:
        # Forgotten by the cache, not bound, and marked with the SchedulerError condition.
        assert tc.sched.cache.get_pod("foo") is None
        assert not pod["spec"].get("nodeName")
        cond = pod["status"]["conditions"][0]
        assert (cond["type"], cond["status"], cond["reason"]) == ("PodScheduled", "False", "SchedulerError")
    else:
        assert pod["spec"]["nodeName"] == "node1"


def test_schedule_one_skips_a_deleting_pod():
    tc, _ = _one_pod_cluster("", make_pod("foo").uid("foo").terminating().obj())
    assert [(e["reason"], e["note"]) for e in tc.cluster.events] == [
        ("FailedScheduling", "skip schedule deleting pod: default/foo")
    ]
    assert not tc.get("Pod", "default", "foo")["spec"].get("nodeName")


def test_a_score_plugin_without_its_pre_score_fails_the_cycle_in_upstreams_words():
    """multiPoint turns TaintToleration off, score turns it back on: it scores without its PreScore state
    (parity configs seed 3); upstream wraps the error as the runtime's Score phase does."""
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {
                    "multiPoint": {"disabled": [{"name": "TaintToleration"}]},
                    "score": {"enabled": [{"name": "TaintToleration", "weight": 7}]},
                },
            }
        ],
    }
    nodes = [make_node(f"n{i}").capacity({"cpu": "1", "pods": "110"}).obj() for i in range(2)]
    sched, _, obs = scheduler_with(nodes, [make_pod("p").obj()], config=config)
    sched.run()
    assert obs.outcomes[0].result == "Error"
    assert obs.outcomes[0].message == (
        'running Score plugins: plugin "TaintToleration" failed with: '
        'failed to read "PreScoreTaintToleration" from cycleState: not found'
    )


@pytest.mark.parametrize(
    ("plugin", "message"),
    [
        ("NodePorts", 'reading "PreFilterNodePorts" from cycleState: not found'),
        ("NodeResourcesFit", 'error reading "PreFilterNodeResourcesFit" from cycleState: not found'),
        ("PodTopologySpread", 'reading "PreFilterPodTopologySpread" from cycleState: not found'),
        ("InterPodAffinity", 'error reading "PreFilterInterPodAffinity" from cycleState: not found'),
        ("VolumeRestrictions", 'cannot read "PreFilterVolumeRestrictions" from cycleState'),
    ],
)
@pytest.mark.parametrize("count", [2, 20])
def test_a_filter_plugin_without_its_pre_filter_fails_the_cycle_in_upstreams_words(plugin, message, count):
    """Off at multiPoint, on again at filter (parity configs seed 20: NodePorts): each plugin says in its own
    words that its PreFilter state is missing, and the runtime names the plugin, as v1.36 does."""
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {
                    "multiPoint": {"disabled": [{"name": plugin}]},
                    "filter": {"enabled": [{"name": plugin}]},
                },
            }
        ],
    }
    nodes = [make_node(f"n{i}").capacity({"cpu": "1", "pods": "110"}).obj() for i in range(count)]
    sched, _, obs = scheduler_with(nodes, [make_pod("p").req({"cpu": "100m"}).obj()], config=config)
    sched.run()
    assert obs.outcomes[0].result == "Error"
    assert obs.outcomes[0].message == f'running "{plugin}" filter plugin: {message}'


@pytest.mark.parametrize("count", [2, 20])
def test_a_filter_plugin_without_its_state_is_never_reached_when_earlier_filters_reject_every_node(count):
    """Upstream runs a node's filters in order up to the first rejection: InterPodAffinity, missing its
    PreFilter state, errs only on a node that gets that far (parity configs seed 29)."""
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {
                    "multiPoint": {"disabled": [{"name": "InterPodAffinity"}]},
                    "filter": {"enabled": [{"name": "InterPodAffinity"}]},
                },
            }
        ],
    }
    nodes = [make_node(f"n{i}").capacity({"cpu": "1", "pods": "110"}).obj() for i in range(count)]
    pod = make_pod("p").req({"cpu": "100m"}).node_selector({"disk": "ssd"}).obj()
    sched, _, obs = scheduler_with(nodes, [pod], config=config)
    sched.run()
    assert obs.outcomes[0].result == "Unschedulable"
    assert obs.outcomes[0].message.startswith(
        f"0/{count} nodes are available: {count} node(s) didn't match Pod's node affinity/selector."
    )


@settings(max_examples=300, deadline=None)
@given(n=st.integers(1, 3000), data=st.data())
def test_rotation_is_the_modular_order(n: int, data: st.DataObject) -> None:
    """The examination order from the rotating start index: the fast form equals (arange + start) % n."""
    start = data.draw(st.integers(0, n - 1))
    expected = (np.arange(n, dtype=np.int64) + start) % n
    got = rotation(n, start)
    assert got.dtype == expected.dtype and got.tolist() == expected.tolist()


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_the_windowed_filter_pass_finds_what_node_by_node_filtering_finds(data: st.DataObject) -> None:
    """Windows of rows from the rotating start (wrapping past the last row) give the feasible nodes, the nodes
    examined and the rejected nodes of filtering every node in order until k fit; a window that rejects a node
    the plain filters accept, or accepts one they reject, changes the feasible list."""
    n = data.draw(st.integers(1, 700), label="nodes")
    kinds = data.draw(st.lists(st.sampled_from(["small", "big", "tainted", "cordoned"]), min_size=n, max_size=n))
    nodes = []
    for i, kind in enumerate(kinds):
        w = make_node(f"n{i:04d}").capacity({"cpu": "1" if kind == "small" else "4", "pods": "110"})
        if kind == "tainted":
            w = w.taint("dedicated", "gpu", "NoSchedule")
        if kind == "cordoned":
            w = w.unschedulable()
        nodes.append(w.obj())
    sched, _, _ = scheduler_with(nodes, [])
    sched.cache.update_snapshot(sched.snapshot)
    snapshot = sched.snapshot
    fwk = next(iter(sched.profiles.values()))
    pod = new_pod_info(make_pod("p").req({"cpu": data.draw(st.sampled_from(["500m", "2"]), label="cpu")}).obj())
    state = CycleState()
    fwk.run_pre_filter_plugins(state, pod, snapshot.node_info_list)
    k = data.draw(st.integers(1, n), label="k")
    start = data.draw(st.integers(0, n - 1), label="start")
    order = rotation(n, start)
    got = fwk.run_filter_plugins_over_nodes(state, pod, snapshot, order, k, start)
    feasible: list[int] = []
    examined = n
    for i, p in enumerate(order.tolist()):
        if fwk.run_filter_plugins(state, pod, snapshot.node_info_list[p]) is None:
            feasible.append(p)
            if len(feasible) == k:
                examined = i + 1
                break
    assert got.feasible.dtype == np.int64 and got.feasible.tolist() == feasible
    assert got.examined == examined
    rejected = sorted([*got.batch_rejected.tolist(), *got.node_rejected])
    assert rejected == sorted(set(order[:examined].tolist()) - set(feasible))
