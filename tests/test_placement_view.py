"""A pod group's placement narrows the snapshot to some of its rows; it must decide as a cluster of just those nodes.

Upstream's AssumePlacement narrows only the nodes a cycle filters and scores. kubesched
marks the placement's rows of the full snapshot and NodeTable (the fast path) instead of
building a snapshot of the placement's nodes (the plain twin, here: a cluster holding only
them). For pods whose plugins look at one node at a time the two must agree on everything:
the node chosen, how many nodes were evaluated and feasible, the FitError with its counts,
every node's per-plugin record, and where the next cycle starts. Both ways of filtering
(node by node and vectorised, runtime.NARROWED_NODES) are run. The last tests show the
comparison notices a view that admits a node outside the placement or drops one inside it.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.cache.snapshot import PlacementError, Snapshot
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.runtime import framework as runtime
from kubesched.framework.types import AttemptRecord, FitError, NoNodesAvailable, new_pod_info
from kubesched.schedule_one import schedule_pod
from kubesched_testing.cluster import new_test_cluster
from kubesched_testing.wrappers import make_node, make_pod

Obj = dict[str, Any]
RACK = "example.com/rack"
NODES = 20
Case = tuple[list[Obj], Obj, list[str], int]


@st.composite
def cases(draw: st.DrawFn) -> Case:
    """Nodes in one zone (so the snapshot keeps their order), a pending pod, a placement and a start index."""
    nodes = []
    for i in range(draw(st.integers(1, NODES))):
        n = make_node(f"n{i:02d}").label(RACK, f"r{i % 3}").label("disk", draw(st.sampled_from(["ssd", "hdd"])))
        n = n.capacity({"cpu": draw(st.sampled_from(["1", "2", "4"])), "memory": "4Gi", "pods": "8"})
        if draw(st.integers(0, 4)) == 0:
            n = n.taint("dedicated", "x", draw(st.sampled_from(["NoSchedule", "PreferNoSchedule"])))
        if draw(st.integers(0, 9)) == 0:
            n = n.unschedulable()
        nodes.append(n.obj())
    names = [n["metadata"]["name"] for n in nodes]
    p = make_pod("p").req({"cpu": draw(st.sampled_from(["500m", "1", "2", "3"]))})
    if draw(st.booleans()):
        p = p.toleration("dedicated", "x", "NoSchedule")
    if draw(st.integers(0, 3)) == 0:
        p = p.node_selector({"disk": "ssd"})
    if draw(st.integers(0, 3)) == 0:
        p = p.preferred_node_term(draw(st.integers(1, 100)), {"matchExpressions": [_in("disk", "hdd")]})
    if draw(st.integers(0, 4)) == 0:  # a PreFilterResult: a few nodes by name, some outside the placement
        pinned = draw(st.lists(st.sampled_from([*names, "absent"]), min_size=1, max_size=4, unique=True))
        p = p.required_node_terms(
            [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [n]}]} for n in pinned]
        )
    pod = p.obj()
    if draw(st.integers(0, 3)) == 0:  # a nominated node, maybe outside the placement
        pod["status"] = {"nominatedNodeName": draw(st.sampled_from(names))}
    placement = draw(st.lists(st.sampled_from(names), max_size=len(names), unique=True).map(sorted))
    return nodes, pod, placement, draw(st.integers(0, 40))


def _in(key: str, value: str) -> Obj:
    return {"key": key, "operator": "In", "values": [value]}


def decide(nodes: list[Obj], pod: Obj, placement: list[str] | None, start: int) -> tuple[Any, ...]:
    """schedule_pod once on a fresh cluster of `nodes`, narrowed to `placement` (None: not narrowed)."""
    tc = new_test_cluster(nodes, seed=7)
    c = tc.sched.cycles
    c.cache.update_snapshot(c.snapshot)
    c.next_start_node_index = start
    if placement is not None:
        c.snapshot.assume_placement(placement)
    record = AttemptRecord()
    fwk = c.profiles["default-scheduler"]
    try:
        r = schedule_pod(c, fwk, CycleState(), new_pod_info(pod), record)
        out: tuple[Any, ...] = ("fits", r.suggested_host, r.evaluated_nodes, r.feasible_nodes)
    except FitError as err:
        out = ("unschedulable", str(err), err.num_all_nodes)
    except NoNodesAvailable as err:
        out = ("no nodes", str(err))
    return (*out, c.next_start_node_index, record.filter, record.score)


def disagreement(nodes: list[Obj], pod: Obj, placement: list[str], start: int) -> str | None:
    """How the placement view differs from a cluster of only the placement's nodes (None: it does not)."""
    viewed = decide(nodes, pod, placement, start)
    only = decide([n for n in nodes if n["metadata"]["name"] in placement], pod, None, start)
    return None if viewed == only else f"view {viewed[:5]} != plain {only[:5]}"


@pytest.mark.parametrize("narrowed", [0, 1000], ids=["vectorised", "node-by-node"])
@settings(max_examples=60, deadline=None)
@given(case=cases())
def test_placement_view_equals_a_cluster_of_its_nodes(case: Case, narrowed: int) -> None:
    nodes, pod, placement, start = case
    with pytest.MonkeyPatch.context() as m:
        m.setattr(runtime, "NARROWED_NODES", narrowed)
        assert disagreement(nodes, pod, placement, start) is None


def test_placement_rows_are_its_nodes_in_its_order() -> None:
    tc = new_test_cluster([make_node(f"n{i}").obj() for i in range(5)])
    snap = tc.sched.cycles.snapshot
    tc.sched.cycles.cache.update_snapshot(snap)
    snap.assume_placement(["n3", "n1"])
    rows = snap.placement_rows
    assert rows is not None and [snap.node_info_list[int(i)].name for i in rows] == ["n3", "n1"]
    assert [ni.name for ni in snap.nodes_in_placement()] == ["n3", "n1"]
    assert snap.num_nodes_in_placement() == 2
    snap.assume_placement([f"n{i}" for i in range(5)])  # every node: no narrowing at all
    assert snap.placement_rows is None and snap.num_nodes_in_placement() == 5
    with pytest.raises(PlacementError, match="node gone in placement is not present in snapshot"):
        snap.assume_placement(["n1", "gone"])
    snap.forget_placement()
    assert len(snap.nodes_in_placement()) == 5


# The comparison notices a wrong view: a pod that fits only outside the placement, or only on a node it drops.

SMALL = [make_node(n).capacity({"cpu": cpu, "memory": "4Gi", "pods": "8"}).obj() for n, cpu in [("a", "1"), ("b", "4")]]
BIG_POD = make_pod("p").req({"cpu": "2"}).obj()


def test_a_view_that_admits_a_node_outside_the_placement_is_noticed(monkeypatch: pytest.MonkeyPatch) -> None:
    assert disagreement(SMALL, BIG_POD, ["a"], 0) is None
    monkeypatch.setattr(Snapshot, "placement_rows", property(lambda s: None))
    assert disagreement(SMALL, BIG_POD, ["a"], 0) is not None


def test_a_view_that_drops_a_node_of_the_placement_is_noticed(monkeypatch: pytest.MonkeyPatch) -> None:
    three = [*SMALL, make_node("c").capacity({"cpu": "1", "memory": "4Gi", "pods": "8"}).obj()]
    assert disagreement(three, BIG_POD, ["a", "b"], 0) is None
    real = Snapshot.placement_rows.fget  # type: ignore[attr-defined]

    def dropping(s: Snapshot) -> Any:
        rows = real(s)
        return rows if rows is None else rows[rows != s.position["b"]]

    monkeypatch.setattr(Snapshot, "placement_rows", property(dropping))
    assert disagreement(three, BIG_POD, ["a", "b"], 0) is not None
