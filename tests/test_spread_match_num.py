"""PreFilter's matching pods per topology domain and PreScore's state: the NodeTable paths equal the per-node
loops (PreFilter's in order too).

Random clusters through the real cache, checked when first built and again after pods
come and go (the rows, and the matching-pod columns derived from them, are rewritten in place).
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.cache.cache import Cache
from kubesched.cache.snapshot import Snapshot
from kubesched.framework.node_info import parse_node
from kubesched.framework.plugins.podtopologyspread.common import filter_constraints
from kubesched.framework.plugins.podtopologyspread.plugin import (
    LABEL_HOSTNAME,
    CriticalPaths,
    _PreFilterState,
    domains_per_constraint,
    match_num_per_domain,
    match_num_per_domain_plain,
    pre_score_state,
    pre_score_state_plain,
)
from kubesched.framework.types import new_pod_info
from kubesched_testing.wrappers import make_node, make_pod

ZONE, RACK = "topology.kubernetes.io/zone", "rack"


@st.composite
def nodes(draw: st.DrawFn) -> list[dict[str, Any]]:
    out = []
    for i in range(draw(st.integers(1, 14))):
        n = make_node(f"n{i}").label("disk", draw(st.sampled_from(["ssd", "hdd"])))
        zone = draw(st.sampled_from(["z1", "z2", "z3", "", None]))  # "" and no label are one domain to Go
        if draw(st.integers(0, 4)):
            n = n.label(LABEL_HOSTNAME, f"n{i}")
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
    for key in draw(st.lists(st.sampled_from([ZONE, RACK, LABEL_HOSTNAME]), min_size=1, max_size=3, unique=True)):
        p = p.spread_constraint(
            draw(st.sampled_from([1, 3])),
            key,
            draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"])),
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
    state = _PreFilterState(constraints, snap.table, domains_per_constraint(pod, constraints, snap.table))
    for i, counts in enumerate(plain):
        paths = CriticalPaths()
        for v, n in counts.items():
            paths.update(v, n)
        for min_domains in (1, 2, 3):
            want = 0 if len(counts) < min_domains else paths.paths[0][1]
            assert state.min_match_num(i, min_domains) == want  # from the arrays, before any dict is built
    return [list(d.items()) for d in fast], [list(d.items()) for d in plain]


def _check_pre_score(snap: Snapshot, pod_obj: dict[str, Any], data: st.DataObject) -> None:
    """PreScore over a random subset of the nodes (the feasible ones), with and without requireAllTopologies."""
    pod = new_pod_info(pod_obj)
    constraints = filter_constraints(pod.topology_spread_constraints, "ScheduleAnyway")
    if not constraints or not len(snap):
        return
    positions = data.draw(st.lists(st.sampled_from(range(len(snap))), min_size=1, unique=True), label="scored")
    require_all = data.draw(st.booleans(), label="require all topologies")
    fast = pre_score_state(pod, constraints, np.array(positions, dtype=np.int64), snap.table, require_all)
    nodes = [snap.node_info_list[p] for p in positions]
    plain = pre_score_state_plain(pod, constraints, nodes, snap.node_info_list, require_all)
    assert fast.ignored_nodes == plain.ignored_nodes
    assert fast.topology_value_to_pod_counts == plain.topology_value_to_pod_counts
    assert fast.topology_normalizing_weight == plain.topology_normalizing_weight
    if fast.ignored_rows is not None:
        assert {snap.table.names[p] for p in positions if fast.ignored_rows[p]} == fast.ignored_nodes
    else:
        assert not fast.ignored_nodes


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_table_path_equals_the_node_loop_before_and_after_changes(data: st.DataObject) -> None:
    node_objs = data.draw(nodes())
    names = [n["metadata"]["name"] for n in node_objs]
    first, later = data.draw(pods(names, "a")), data.draw(pods(names, "b"))
    incoming = data.draw(pending())
    cache = Cache()
    parsed = [parse_node(n) for n in node_objs]
    for node in parsed:
        cache.add_node(node)
    for p in first:
        cache.add_pod(new_pod_info(p))
    snap = Snapshot()
    cache.update_snapshot(snap)
    fast, plain = _both(snap, incoming)
    assert fast == plain
    _check_pre_score(snap, incoming, data)
    _check_pre_score(snap, incoming, data)
    for p in later:
        cache.add_pod(new_pod_info(p))
    for p in first[: len(first) // 2]:
        cache.remove_pod(new_pod_info(p))
    # A new version of a node (a taint toggled, the zone changed or not): what the table keeps of nodes follows.
    i = data.draw(st.integers(0, len(parsed) - 1), label="node changed")
    changed = copy.deepcopy(node_objs[i])
    taints = changed["spec"].get("taints") or []
    changed["spec"]["taints"] = [] if taints else [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
    zone = data.draw(st.sampled_from([None, "z1", "z4"]), label="new zone")
    if zone is not None:
        changed["metadata"].setdefault("labels", {})[ZONE] = zone
    cache.update_node(parsed[i], parse_node(changed))
    cache.update_snapshot(snap)
    fast, plain = _both(snap, incoming)
    assert fast == plain
    _check_pre_score(snap, incoming, data)
