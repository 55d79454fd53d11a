"""scores_in_range, the joined check over every plugin's normalized scores, agrees with checking each plugin."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import MAX_NODE_SCORE, MIN_NODE_SCORE, ScorePlugin
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.runtime.framework import scores_in_range
from kubesched.framework.runtime.registry import Registry
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo, new_pod_info
from kubesched_testing.cluster import new_test_cluster
from kubesched_testing.wrappers import make_node, make_pod

_SCORE = st.integers(MIN_NODE_SCORE, MAX_NODE_SCORE) | st.integers(MIN_NODE_SCORE - 3, MAX_NODE_SCORE + 3)


def _plain(columns: list[np.ndarray]) -> bool:
    return all(not (len(c) and (c.min() < MIN_NODE_SCORE or c.max() > MAX_NODE_SCORE)) for c in columns)


@settings(max_examples=300, deadline=None)
@given(n=st.integers(0, 6), data=st.data())
def test_the_joined_check_equals_the_check_per_plugin(n: int, data: st.DataObject) -> None:
    plugins = data.draw(st.integers(0, 4))
    columns = [np.array(data.draw(st.lists(_SCORE, min_size=n, max_size=n)), dtype=np.int64) for _ in range(plugins)]
    assert scores_in_range(columns) == _plain(columns)


def test_nan_is_left_to_the_check_per_plugin() -> None:
    """A NaN fails the joined check, so the per-plugin check (which lets it through, as before) decides."""
    columns = [np.array([1.0, np.nan])]
    assert not scores_in_range(columns) and _plain(columns)


class _Loud(ScorePlugin):
    """An out-of-tree scorer with no NormalizeScore that scores node n1 above the maximum."""

    NAME = "Loud"

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        return (MAX_NODE_SCORE + 50 if node_info.name == "n1" else 7), None


def test_a_score_out_of_range_fails_the_cycle_naming_the_plugin() -> None:
    registry = Registry()
    registry.register(_Loud.NAME, lambda args, handle: _Loud())
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {"plugins": {"score": {"disabled": [{"name": "*"}], "enabled": [{"name": _Loud.NAME, "weight": 1}]}}}
        ],
    }
    nodes = [make_node(f"n{i}").capacity({"cpu": "4", "pods": "110"}).obj() for i in range(3)]
    sched = new_test_cluster(nodes, [], config=config, registry=registry).sched
    sched.cache.update_snapshot(sched.snapshot)
    fwk = sched.profiles["default-scheduler"]
    pod = new_pod_info(make_pod("p").req({"cpu": "1"}).obj())
    all_nodes = sched.snapshot.node_info_list
    _, _, status = fwk.run_score_plugins(CycleState(), pod, all_nodes)
    assert status is not None and status.code == Code.ERROR
    assert status.message() == (
        'plugin "Loud" returns an invalid score 150, it should in the range of [0, 100] after normalizing'
    )
    _, totals, status = fwk.run_score_plugins(CycleState(), pod, [ni for ni in all_nodes if ni.name != "n1"])
    assert status is None and len(totals) == 2
