"""Cases from podgroup_pods_count_test.go (v1.36), names unchanged."""

from __future__ import annotations

import pytest

from kubesched.cache.cache import Cache
from kubesched.cache.pod_groups import PodGroupStates
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import Handle, Placement, PodGroupAssignments
from kubesched.framework.plugins.podgrouppodscount.pod_group_pods_count import new
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo, new_pod_info
from kubesched_testing.wrappers import make_pod


def member(name: str, node: str = "") -> PodInfo:
    w = make_pod(name).uid(name).pod_group("pg1")
    return new_pod_info((w.node(node) if node else w).obj())


PROPOSED = [(member("proposed-pod-1"), "node1"), (member("proposed-pod-2"), "node2")]


@pytest.mark.parametrize(
    ("assigned", "assumed", "want"),
    [
        pytest.param(["p2:node2", "p3:node3"], ["p1:node1"], 5, id="existing assigned and assumed pods"),
        pytest.param(["p1:node1"], [], 3, id="no assumed pods"),
        pytest.param([], ["p1:node1"], 3, id="no assigned pods"),
        pytest.param([], [], 2, id="no assigned pods, no assumed pods"),
    ],
)
def test_score_placement(assigned: list[str], assumed: list[str], want: int) -> None:
    cache = Cache()
    cache.pod_groups = PodGroupStates()
    for spec in assigned:
        name, node = spec.split(":")
        cache.add_pod(member(name, node))
    for spec in assumed:
        name, node = spec.split(":")
        cache.pod_groups.add(member(name))
        cache.assume_pod(member(name, node))
    for pod, _ in PROPOSED:
        cache.pod_groups.add(pod)
    plugin = new(None, Handle(pod_groups=cache.pod_groups))
    score, status = plugin.score_placement(
        CycleState(), "default", "pg1", PodGroupAssignments(Placement("", []), list(PROPOSED))
    )
    assert status is None
    assert score == want


@pytest.mark.parametrize(
    ("scores", "want"),
    [
        pytest.param([10, 50, 110], [9, 45, 100], id="distinct scores"),
        pytest.param([50, 50], [100, 100], id="equal scores"),
        pytest.param([50], [100], id="single score"),
        pytest.param(
            [11, 100, 101, 102],
            [10, 98, 99, 100],
            id="some minimal score that is far from a group of scores located closely",
        ),
        pytest.param(
            [0, 0],
            Status(Code.ERROR, "no pods from pod group are assigned to any of the candidate placements"),
            id="zero scores",
        ),
    ],
)
def test_normalize_placement_score(scores: list[int], want: list[int] | Status) -> None:
    status = new(None, Handle()).normalize_placement_scores(CycleState(), "default", "pg1", scores)
    if isinstance(want, Status):
        assert status is not None and status.code == want.code and status.message() == want.message()
    else:
        assert status is None and scores == want
