"""Pods pinned to a few nodes are filtered node by node (O(candidates)); the outcome must equal the vectorised pass.

Random clusters whose pods name one to three nodes by metadata.name (as DaemonSet pods and
NodeName do) are scheduled twice, narrowing on and off: every pod must get the same node,
the same message and the same per-node, per-plugin record.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework.runtime import framework as runtime
from kubesched_testing.cluster import new_test_cluster
from kubesched_testing.wrappers import make_node, make_pod

NODES = 24


@st.composite
def cluster(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    nodes = []
    for i in range(NODES):
        n = make_node(f"n{i}").capacity(
            {"cpu": draw(st.sampled_from(["1", "2", "4"])), "memory": "4Gi", "pods": draw(st.sampled_from(["2", "8"]))}
        )
        if draw(st.booleans()):
            n = n.taint("dedicated", "x", draw(st.sampled_from(["NoSchedule", "PreferNoSchedule"])))
        nodes.append(n.obj())
    pods = []
    for j in range(draw(st.integers(1, 12))):
        pinned = draw(st.lists(st.integers(0, NODES + 1), min_size=1, max_size=3, unique=True))  # n24, n25 don't exist
        terms = [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [f"n{i}"]}]} for i in pinned]
        p = make_pod(f"p{j}").req({"cpu": draw(st.sampled_from(["500m", "1", "3"]))}).required_node_terms(terms)
        if draw(st.booleans()):
            p = p.toleration("dedicated", "x", "NoSchedule")
        pods.append(p.obj())
    return nodes, pods


def _schedule(nodes: list[dict[str, Any]], pods: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    tc = new_test_cluster(nodes, pods)
    tc.sched.run()
    return [(o.pod.name, o.result, o.node, o.message, o.record) for o in tc.recorder.outcomes]


@settings(max_examples=40, deadline=None)
@given(cluster())
def test_narrowed_pass_equals_the_vectorised_one(c: Any) -> None:
    nodes, pods = c
    narrowed = _schedule(nodes, pods)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(runtime, "NARROWED_NODES", 0)
        vectorised = _schedule(nodes, pods)
    assert len(narrowed) == len(pods)
    assert narrowed == vectorised
