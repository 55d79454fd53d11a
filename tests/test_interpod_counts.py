"""InterPodAffinity's PreFilter counts and PreScore scores: the NodeTable's columns and term index equal the
pod-by-pod walk.

Random clusters through the real cache, before and after pods come and go (rows, the
matching-pod columns derived from them and the index of existing pods' terms are rewritten
in place).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.cache.cache import Cache
from kubesched.cache.snapshot import Snapshot
from kubesched.framework.node_info import parse_node
from kubesched.framework.plugins.interpodaffinity.plugin import (
    DomainCounts,
    TopologyToMatchedTermCount,
    _lookup,
    _lookup_plain,
    existing_anti_affinity_counts,
    existing_anti_affinity_counts_plain,
    incoming_counts,
    incoming_counts_plain,
    topology_scores,
    topology_scores_plain,
)
from kubesched.framework.types import PodInfo, new_pod_info
from kubesched_testing.wrappers import make_node, make_pod

KEYS = ["kubernetes.io/hostname", "zone"]
COLORS = ["green", "blue"]


@st.composite
def nodes(draw: st.DrawFn) -> list[dict[str, Any]]:
    out = []
    for i in range(draw(st.integers(1, 10))):
        n = make_node(f"n{i}")
        if draw(st.integers(0, 4)):
            n = n.label("kubernetes.io/hostname", f"n{i}")
        if draw(st.booleans()):
            n = n.label("zone", draw(st.sampled_from(["z1", "z2"])))
        out.append(n.obj())
    return out


def _with_terms(p: Any, draw: Callable[[st.SearchStrategy[Any]], Any]) -> Any:
    """Required and preferred terms; weights repeat so equal weighted terms share an index entry."""
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["affinity", "anti", "preferred", "preferred-anti"]))
        key, color = draw(st.sampled_from(KEYS)), draw(st.sampled_from(COLORS))
        extra: dict[str, Any] = draw(
            st.sampled_from([{}, {"namespaces": ["default", "other"]}, {"namespaceSelector": {}}])
        )
        if kind == "anti":
            p = p.pod_anti_affinity_in("color", key, [color], **extra)
        elif kind == "affinity":
            p = p.pod_affinity_in("color", key, [color], **extra)
        elif kind == "preferred":
            p = p.preferred_pod_affinity_in(draw(st.sampled_from([1, 5])), "color", key, [color])
        else:
            p = p.preferred_pod_anti_affinity_in(draw(st.sampled_from([1, 5])), "color", key, [color])
    return p


@st.composite
def bound(draw: st.DrawFn, node_names: list[str], prefix: str) -> list[dict[str, Any]]:
    out = []
    for j in range(draw(st.integers(0, 16))):
        p = make_pod(f"{prefix}{j}", draw(st.sampled_from(["default", "other"])))
        p = p.label("color", draw(st.sampled_from(COLORS))).node(draw(st.sampled_from(node_names)))
        out.append(_with_terms(p, draw).obj())
    return out


def _existing_plain(pod: PodInfo, snap: Snapshot) -> TopologyToMatchedTermCount:
    counts = TopologyToMatchedTermCount()
    for ni in snap.have_pods_with_required_anti_affinity_list:
        for p in ni.pods_with_required_anti_affinity:
            counts.update_with_anti_affinity_terms(p.required_anti_affinity_terms, pod, None, ni.labels, 1)
    return counts


def _check_reads(counts: DomainCounts, snap: Snapshot) -> None:
    """Each node's count read from the arrays equals the pairs' count, before and after a round trip through
    the pairs (as AddPod/RemovePod leave them)."""
    table = snap.table
    edited = counts.clone()
    edited.edit()
    for key in {*counts.keys(), *KEYS}:
        codes = table.label_column(key)
        want = [counts.pairs.get((key, ni.labels[key]), 0) if key in ni.labels else 0 for ni in snap.node_info_list]
        assert counts.at(key, codes).tolist() == want
        assert edited.at(key, codes).tolist() == want


def _check(snap: Snapshot, pod: PodInfo, hard_weight: int) -> None:
    aff, anti = pod.required_affinity_terms, pod.required_anti_affinity_terms
    fast_aff, fast_anti = incoming_counts(aff, anti, snap.table)
    assert (fast_aff.pairs, fast_anti.pairs) == incoming_counts_plain(aff, anti, snap.node_info_list)
    walked = _existing_plain(pod, snap)
    existing = existing_anti_affinity_counts(pod, None, snap.table)
    assert existing.pairs == walked
    for counts in (fast_aff, fast_anti, existing):
        _check_reads(counts, snap)
    assert existing_anti_affinity_counts_plain(pod, None, snap.have_pods_with_required_anti_affinity_list) == walked
    pref, pref_anti = pod.preferred_affinity_terms, pod.preferred_anti_affinity_terms
    fast = topology_scores(pod, pref, pref_anti, None, snap.table, hard_weight)
    plain = topology_scores_plain(pod, pref, pref_anti, None, snap.node_info_list, hard_weight)
    assert fast.keys() == set(plain)  # a key whose scores cancel out still counts: PreScore does not skip
    assert fast.pairs == {(k, v): n for k, by_value in plain.items() for v, n in by_value.items() if n}
    _check_reads(fast, snap)


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_columns_and_memo_equal_the_pod_walk(data: st.DataObject) -> None:
    node_objs = data.draw(nodes())
    names = [n["metadata"]["name"] for n in node_objs]
    first, later = data.draw(bound(names, "a")), data.draw(bound(names, "b"))
    incoming = new_pod_info(
        _with_terms(make_pod("incoming").label("color", data.draw(st.sampled_from(COLORS))), data.draw).obj()
    )
    cache = Cache()
    for n in node_objs:
        cache.add_node(parse_node(n))
    for p in first:
        cache.add_pod(new_pod_info(p))
    snap = Snapshot()
    cache.update_snapshot(snap)
    hard_weight = data.draw(st.sampled_from([0, 1, 7]))
    _check(snap, incoming, hard_weight)
    for p in later:
        cache.add_pod(new_pod_info(p))
    for p in first[: len(first) // 2]:
        cache.remove_pod(new_pod_info(p))
    cache.update_snapshot(snap)
    _check(snap, incoming, hard_weight)


@settings(max_examples=200, deadline=None)
@given(
    counts=st.dictionaries(st.integers(0, 40), st.integers(-5, 5), max_size=12),
    codes=st.lists(st.integers(-1, 40), max_size=30),
)
def test_sparse_lookup_equals_the_dense_array(counts: dict[int, int], codes: list[int]) -> None:
    """The binary search over a key's codes with counts reads what a dense array over every code reads."""
    known = sorted(counts)
    sums = (np.array(known, dtype=np.int64), np.array([counts[c] for c in known], dtype=np.int64))
    at = np.array(codes, dtype=np.int32)
    assert _lookup(sums, at).tolist() == _lookup_plain(sums, at, 41).tolist()
    assert _lookup(sums, at).tolist() == [counts.get(c, 0) if c >= 0 else 0 for c in codes]
