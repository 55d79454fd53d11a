"""PreFilter's matching pods per topology domain: the NodeTable path equals the per-node loop, order included.

Random clusters through the real cache, checked when first built and again after pods
come and go (the rows, and the matching-pod columns derived from them, are rewritten in place).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.cache.cache import Cache
from kubesched.cache.snapshot import Snapshot
from kubesched.framework.node_info import parse_node
from kubesched.framework.plugins.podtopologyspread.common import filter_constraints
from kubesched.framework.plugins.podtopologyspread.plugin import match_num_per_domain, match_num_per_domain_plain
from kubesched.framework.types import new_pod_info
from kubesched.testing.wrappers import make_node, make_pod

ZONE, RACK = "topology.kubernetes.io/zone", "rack"


@st.composite
def nodes(draw: st.DrawFn) -> list[dict[str, Any]]:
    out = []
    for i in range(draw(st.integers(1, 14))):
        n = make_node(f"n{i}").label("disk", draw(st.sampled_from(["ssd", "hdd"])))
        zone = draw(st.sampled_from(["z1", "z2", "z3", None]))
        if zone is not None:
            n = n.label(ZONE, zone)
        if draw(st.booleans()):
            n = n.label(RACK, draw(st.sampled_from(["r1", "r2"])))
        if draw(st.integers(0, 3)) == 0:
            n = n.taint("dedicated", "x", "NoSchedule")
        out.append(n.obj())
    return out


@st.composite
def pods(draw: st.DrawFn, node_names: list[str], prefix: str) -> list[dict[str, Any]]:
    out = []
    for j in range(draw(st.integers(0, 20))):
        p = make_pod(f"{prefix}{j}", draw(st.sampled_from(["default", "other"])))
        p = p.label("app", draw(st.sampled_from(["web", "db"]))).node(draw(st.sampled_from(node_names)))
        if draw(st.integers(0, 5)) == 0:
            p = p.terminating()
        out.append(p.obj())
    return out


@st.composite
def pending(draw: st.DrawFn) -> dict[str, Any]:
    p = make_pod("incoming").label("app", "web")
    for key in draw(st.lists(st.sampled_from([ZONE, RACK]), min_size=1, max_size=2, unique=True)):
        p = p.spread_constraint(
            1,
            key,
            "DoNotSchedule",
            {"matchLabels": {"app": draw(st.sampled_from(["web", "db"]))}},
            node_affinity_policy=draw(st.sampled_from([None, "Honor", "Ignore"])),
            node_taints_policy=draw(st.sampled_from([None, "Honor", "Ignore"])),
        )
    if draw(st.booleans()):
        p = p.node_selector({"disk": "ssd"})
    if draw(st.booleans()):
        p = p.toleration("dedicated", "x", "NoSchedule")
    return p.obj()


def _both(snap: Snapshot, pod_obj: dict[str, Any]) -> tuple[list[list[tuple[str, int]]], list[list[tuple[str, int]]]]:
    pod = new_pod_info(pod_obj)
    constraints = filter_constraints(pod.topology_spread_constraints, "DoNotSchedule")
    fast = match_num_per_domain(pod, constraints, snap.table)
    plain = match_num_per_domain_plain(pod, constraints, snap.node_info_list)
    return [list(d.items()) for d in fast], [list(d.items()) for d in plain]


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_table_path_equals_the_node_loop_before_and_after_changes(data: st.DataObject) -> None:
    node_objs = data.draw(nodes())
    names = [n["metadata"]["name"] for n in node_objs]
    first, later = data.draw(pods(names, "a")), data.draw(pods(names, "b"))
    incoming = data.draw(pending())
    cache = Cache()
    for n in node_objs:
        cache.add_node(parse_node(n))
    for p in first:
        cache.add_pod(new_pod_info(p))
    snap = Snapshot()
    cache.update_snapshot(snap)
    fast, plain = _both(snap, incoming)
    assert fast == plain
    for p in later:
        cache.add_pod(new_pod_info(p))
    for p in first[: len(first) // 2]:
        cache.remove_pod(new_pod_info(p))
    cache.update_snapshot(snap)
    fast, plain = _both(snap, incoming)
    assert fast == plain
