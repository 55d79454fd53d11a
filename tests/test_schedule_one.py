"""schedule_one: numFeasibleNodesToFind, the rotating start index, FitError text (schedule_one_test.go)."""

import pytest

from kubesched.framework.status import Code, Status
from kubesched.schedule_one import Diagnosis, FitError, num_feasible_nodes_to_find
from kubesched.testing.cluster import new_test_cluster
from kubesched.testing.wrappers import make_node, make_pod


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
    msg = str(FitError(make_pod("p").obj(), 13, d))
    assert msg == (
        "0/13 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated taint(s), 2 Insufficient cpu."
    )


def test_fit_error_prefilter_message_and_absent_nodes():
    d = Diagnosis(pre_filter_msg="pod affinity terms conflict")
    assert str(FitError(make_pod("p").obj(), 3, d)) == "0/3 nodes are available: pod affinity terms conflict."
    absent = Diagnosis(
        absent_nodes_status=Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't satisfy plugin(s) [NodeAffinity]"
        ),
        node_to_status={"n1": Status(Code.UNSCHEDULABLE, "Insufficient cpu")},
    )
    assert str(FitError(make_pod("p").obj(), 4, absent)) == (
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
    assert sched.next_start_node_index == 100
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
