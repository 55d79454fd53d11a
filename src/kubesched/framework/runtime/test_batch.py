"""OpportunisticBatch alone: upstream's TestBatchBasic table (batch_test.go), and its flush reasons and age limit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.runtime.batch import (
    ATTEMPT_HINT_USED,
    ATTEMPT_NO_HINT,
    FLUSH_EXPIRED,
    FLUSH_NODE_MISSING,
    FLUSH_NODE_NOT_FULL,
    FLUSH_POD_INCOMPATIBLE,
    FLUSH_POD_NOT_BATCHABLE,
    FLUSH_POD_SKIPPED,
    MAX_BATCH_AGE,
    OpportunisticBatch,
    SortedScoredNodes,
)
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo, new_pod_info

BLOCKING = "b"  # a node holds one pod whose uid starts with this, as upstream's test plugin has it


def _pod(uid: str) -> PodInfo:
    return new_pod_info({"metadata": {"name": uid, "namespace": "default", "uid": uid}, "spec": {"containers": []}})


@dataclass
class _World:
    """The last chosen node holds the first pod; the test filter rejects a second blocking pod there."""

    first_uid: str = ""
    node_name: str = ""
    now: float = 0.0

    def run_filters(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        if pod.uid.startswith(BLOCKING) and self.first_uid.startswith(BLOCKING):
            return Status(Code.UNSCHEDULABLE, "unsched")
        return None

    def node(self, name: str) -> NodeInfo | None:
        return NodeInfo() if name == self.node_name else None

    def batch(self) -> OpportunisticBatch:
        return OpportunisticBatch("default-scheduler", lambda: self.now, self.run_filters, self.node)


def _nodes(names: list[str] | None) -> SortedScoredNodes | None:
    return None if names is None else SortedScoredNodes.of(names)


@pytest.mark.parametrize(
    (
        "first_uid",
        "first_sig",
        "first_ok",
        "first_node",
        "first_others",
        "skip",
        "second_uid",
        "second_sig",
        "second_node",
        "hint",
        "left",
    ),  # fmt: skip
    [
        pytest.param(
            "b-1",
            "sig",
            True,
            "n3",
            ["n1"],
            False,
            "b-2",
            "sig",
            "n1",
            "n1",
            None,
            id="a second pod with the same signature gets a hint",
        ),  # fmt: skip
        pytest.param(
            "a-1",
            "sig",
            True,
            "n3",
            ["n1"],
            False,
            "a-2",
            "sig2",
            "n1",
            "",
            None,
            id="a second pod with a different signature doesn't get a hint",
        ),  # fmt: skip
        pytest.param(
            "a-1",
            "sig",
            True,
            "n3",
            ["n1"],
            False,
            "a-2",
            "sig",
            "n1",
            "",
            None,
            id="a second pod doesn't get a hint if it's not 1-pod-per-node",
        ),  # fmt: skip
        pytest.param(
            "b-1",
            "sig",
            False,
            "n3",
            ["n1"],
            False,
            "b-2",
            "sig",
            "n1",
            "",
            None,
            id="pod doesn't get hint if previous pod didn't scheduled",
        ),  # fmt: skip
        pytest.param("b-1", "sig", True, "n3", [], False, "b-2", "sig", "n4", "", None, id="empty list"),
        pytest.param("b-1", "sig", True, "n3", None, False, "b-2", "sig", "n4", "", None, id="nil list"),
        pytest.param(
            "b-1",
            "sig",
            True,
            "n3",
            ["n1"],
            True,
            "b-2",
            "sig",
            "n1",
            "",
            None,
            id="pod doesn't get hint because the previous pod is to a different profile",
        ),  # fmt: skip
        pytest.param(
            "b-1",
            "sig",
            True,
            "n3",
            ["n1", "n2"],
            False,
            "b-2",
            "sig",
            "n1",
            "n1",
            ["n2"],
            id="pod uses batch from preceding pod and leaves remaining batch to next pod",
        ),  # fmt: skip
    ],
)
def test_batch_basic(
    first_uid: str,
    first_sig: str,
    first_ok: bool,
    first_node: str,
    first_others: list[str] | None,
    skip: bool,
    second_uid: str,
    second_sig: str,
    second_node: str,
    hint: str,
    left: list[str] | None,
) -> None:
    world = _World(first_uid=first_uid, node_name=first_node)
    batch = world.batch()
    state = CycleState()
    assert batch.get_node_hint(state, _pod(first_uid), first_sig, 1) == ""
    if first_ok:
        batch.store_schedule_results(first_sig, "", first_node, _nodes(first_others), 1)
    cycle = 3 if skip else 2
    got = batch.get_node_hint(state, _pod(second_uid), second_sig, cycle)
    assert got == hint
    batch.store_schedule_results(second_sig, got, second_node, None, cycle)
    if left is None:
        assert batch.state is None or not len(batch.state.sorted_nodes)
    else:
        assert batch.state is not None and batch.state.signature == "sig"
        assert [batch.state.sorted_nodes.pop() for _ in range(len(batch.state.sorted_nodes))] == left


def _stored(world: _World, others: list[str] | None = None) -> OpportunisticBatch:
    batch = world.batch()
    batch.store_schedule_results("sig", "", world.node_name, SortedScoredNodes.of(others or ["n1", "n2"]), 1)
    return batch


def test_each_reason_to_give_no_hint_is_counted_and_the_cache_kept() -> None:
    """Upstream only logs and counts an unusable cache; it is replaced when the next pod is stored."""
    world = _World(first_uid="b-1", node_name="n3")
    cases: list[tuple[str, dict[str, Any]]] = [
        (FLUSH_POD_SKIPPED, dict(cycle=5)),
        (FLUSH_POD_INCOMPATIBLE, dict(sig="other")),
        (FLUSH_POD_INCOMPATIBLE, dict(sig=None)),
        (FLUSH_EXPIRED, dict(later=MAX_BATCH_AGE + 0.001)),
        (FLUSH_NODE_MISSING, dict(node="gone")),
        (FLUSH_NODE_NOT_FULL, dict(uid="a-2")),
    ]
    for reason, how in cases:
        world.now, world.node_name = 0.0, "n3"
        batch = _stored(world)
        world.now = float(how.get("later", 0.0))
        if "node" in how:
            world.node_name = str(how["node"])
        sig = how.get("sig", "sig")
        got = batch.get_node_hint(CycleState(), _pod(str(how.get("uid", "b-2"))), sig, int(how.get("cycle", 2)))
        assert got == ""
        assert batch.stats == {f"flushed:{reason}": 1, ATTEMPT_NO_HINT: 1}, reason
        assert batch.state is not None and len(batch.state.sorted_nodes) == 2


def test_within_the_age_limit_the_hint_is_given_and_a_used_hint_keeps_the_rest() -> None:
    world = _World(first_uid="b-1", node_name="n3")
    batch = _stored(world)
    world.now = MAX_BATCH_AGE  # not after the limit
    assert batch.get_node_hint(CycleState(), _pod("b-2"), "sig", 2) == "n1"
    world.node_name = "n1"
    batch.store_schedule_results("sig", "n1", "n1", SortedScoredNodes.of(["x"]), 2)
    assert batch.batched_pods == 1 and batch.stats[ATTEMPT_HINT_USED] == 1
    assert batch.state is not None and batch.state.sorted_nodes.pop() == "n2"  # the new list was not stored


def test_an_unsignable_pod_drops_the_cache() -> None:
    world = _World(first_uid="b-1", node_name="n3")
    batch = _stored(world)
    batch.store_schedule_results(None, "", "n9", SortedScoredNodes.of(["n1"]), 2)
    assert batch.state is None and batch.stats == {f"flushed:{FLUSH_POD_NOT_BATCHABLE}": 1}
