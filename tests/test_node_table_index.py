"""The NodeTable's indexes stay equal to a fresh computation as rows are rewritten.

Random nodes whose pods come, go and change labels, through the real cache: the pod label
index, columns first built from it, and the existing-terms index filed by namespace must
equal what a walk over the snapshot's pods gives, after every update.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.selectors import parse_label_selector
from kubesched.cache.cache import Cache
from kubesched.cache.snapshot import Snapshot
from kubesched.framework.node_info import NodeInfo, parse_node
from kubesched.framework.node_table import (
    PREFERRED_AFFINITY,
    PREFERRED_ANTI_AFFINITY,
    REQUIRED_AFFINITY,
    REQUIRED_ANTI_AFFINITY,
    NodeTable,
    domain_sums_plain,
)
from kubesched.framework.plugins.podtopologyspread.common import count_pods_match_selector, pod_matches_selector
from kubesched.framework.plugins.podtopologyspread.plugin import _appearance_order
from kubesched.framework.types import PodInfo, new_pod_info
from kubesched_testing.wrappers import make_node, make_pod

APPS = ["web", "db", "cache"]
NAMESPACES = ["default", "other", "third"]
KINDS = (REQUIRED_AFFINITY, REQUIRED_ANTI_AFFINITY, PREFERRED_AFFINITY, PREFERRED_ANTI_AFFINITY)


@st.composite
def pod_objs(draw: st.DrawFn, uid: str, node: str) -> dict[str, Any]:
    p = make_pod(uid, draw(st.sampled_from(NAMESPACES))).node(node)
    if draw(st.integers(0, 4)):
        p = p.label("app", draw(st.sampled_from(APPS)))
    if draw(st.booleans()):
        p = p.label("tier", draw(st.sampled_from(["a", "b"])))
    for _ in range(draw(st.integers(0, 2))):
        extra: dict[str, Any] = draw(
            st.sampled_from([{}, {"namespaces": ["other", "third"]}, {"namespaceSelector": {}}])
        )
        kind = draw(st.sampled_from(["affinity", "anti", "preferred", "preferred-anti"]))
        app = draw(st.sampled_from(APPS))
        if kind == "affinity":
            p = p.pod_affinity_in("app", "zone", [app], **extra)
        elif kind == "anti":
            p = p.pod_anti_affinity_in("app", "kubernetes.io/hostname", [app], **extra)
        elif kind == "preferred":
            p = p.preferred_pod_affinity_in(draw(st.sampled_from([1, 9])), "app", "zone", [app])
        else:
            p = p.preferred_pod_anti_affinity_in(draw(st.sampled_from([1, 9])), "app", "zone", [app])
    obj = p.obj()
    obj["metadata"]["uid"] = uid
    return obj


def _label_rows(nodes: list[NodeInfo], key: str, values: list[str]) -> list[int]:
    return [i for i, ni in enumerate(nodes) if any(p.labels.get(key) in values for p in ni.pods)]


def _selects(selector: Any, namespace: str, p: PodInfo) -> bool:
    return p.namespace == namespace and selector.matches(p.labels)


def _terms(nodes: list[NodeInfo], kind: int) -> dict[tuple[int, int], dict[int, int]]:
    """(id of term, weight) -> {row: pods holding it}, by walking every pod."""
    out: dict[tuple[int, int], dict[int, int]] = {}
    for i, ni in enumerate(nodes):
        for p in ni.pods:
            for k, term, weight in _pod_terms(p):
                if k == kind:
                    rows = out.setdefault((id(term), weight), {})
                    rows[i] = rows.get(i, 0) + 1
    return out


def _pod_terms(p: PodInfo) -> list[tuple[int, Any, int]]:
    return [
        *((REQUIRED_AFFINITY, t, 0) for t in p.required_affinity_terms),
        *((REQUIRED_ANTI_AFFINITY, t, 0) for t in p.required_anti_affinity_terms),
        *((PREFERRED_AFFINITY, w.term, w.weight) for w in p.preferred_affinity_terms),
        *((PREFERRED_ANTI_AFFINITY, w.term, w.weight) for w in p.preferred_anti_affinity_terms),
    ]


def _check(table: NodeTable, selector: Any) -> None:
    nodes = table.node_infos
    for values in (["web"], ["db", "cache"], ["none"]):
        assert table.rows_with_pod_label("app", values) == _label_rows(nodes, "app", values)
    for ns in NAMESPACES:
        # Columns kept by the pods that came and went, against a count over each node's pods (both ways
        # of first building them: from the pod label index, and over every row without a selector).
        matches = functools.partial(_selects, selector, ns)
        column = table.derived_column(("test", ns), matches, selector)
        assert column.tolist() == [sum(1 for p in ni.pods if _selects(selector, ns, p)) for ni in nodes]
        unindexed = table.derived_column(("test, unindexed", ns), matches)
        assert unindexed.tolist() == column.tolist()
        spread = table.derived_column(("spread", ns), functools.partial(pod_matches_selector, selector, ns), selector)
        assert spread.tolist() == [count_pods_match_selector(ni.pods, selector, ns) for ni in nodes]
        for key in (("test", ns), ("test, unindexed", ns)):
            # The rows kept with a column as pods come and go, against a scan of the column.
            rows, counts = table.derived_rows(key, matches, selector)
            assert rows.tolist() == np.flatnonzero(column).tolist() and counts.tolist() == column[rows].tolist()
            for label_key in ("zone", "kubernetes.io/hostname"):
                # Sums by domain, kept between rewrites, against a sum over every row of the column.
                codes, sums = table.derived_domain_sums(key, matches, selector, label_key)
                dense = np.zeros(table.value_count(label_key) + 1, dtype=np.int64)
                np.add.at(dense, table.label_column(label_key), column)
                want = np.flatnonzero(dense[:-1])
                assert codes.tolist() == want.tolist() and sums.tolist() == dense[want].tolist()
    for kind in KINDS:
        assert {(id(e.term), e.weight): e.rows for e in table.existing_terms.of_kind(kind)} == _terms(nodes, kind)
        for ns in NAMESPACES:
            filed = {id(e) for e in table.existing_terms.selecting_namespace(kind, ns)}
            may_select = {
                id(e)
                for e in table.existing_terms.of_kind(kind)
                if ns in e.term.namespaces or not e.term.namespace_selector.is_nothing
            }
            assert filed == may_select


def _check_node_columns(kept: NodeTable, fresh: NodeTable) -> None:
    """A table whose rows were rewritten one by one against one built afresh from the same nodes."""
    for name in ("allocatable", "requested", "non_zero_requested", "unschedulable"):
        assert np.array_equal(getattr(kept, name), getattr(fresh, name)), name
    assert [kept.taint_groups[g] for g in kept.taint_group] == [fresh.taint_groups[g] for g in fresh.taint_group]
    assert kept.image_nodes == fresh.image_nodes
    for key in ("zone", "kubernetes.io/hostname"):
        assert [kept.value_code(key, v) for v in kept.label_values(key)] == list(range(kept.value_count(key)))
        assert kept.label_values(key) and [kept.label_values(key)[c] for c in kept.label_column(key)] == [
            fresh.label_values(key)[c] for c in fresh.label_column(key)
        ]


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_indexes_follow_the_cache(data: st.DataObject) -> None:
    names = [f"n{i}" for i in range(data.draw(st.integers(1, 5)))]
    cache = Cache()
    parsed = {n: parse_node(make_node(n).label("zone", "z1").label("kubernetes.io/hostname", n).obj()) for n in names}
    for n in names:
        cache.add_node(parsed[n])
    pods: dict[str, PodInfo] = {}
    selector = parse_label_selector(
        {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["b"]}]}
    )
    snap = Snapshot()
    created = 0
    for _ in range(data.draw(st.integers(1, 6))):
        for _ in range(data.draw(st.integers(0, 6))):
            action = data.draw(st.sampled_from(["add", "assume", "remove", "relabel", "node"]))
            if action == "node":
                # A new version of a node (labels, taints, allocatable, cordoned): its row's node columns follow.
                name = data.draw(st.sampled_from(names))
                node = make_node(name).label("kubernetes.io/hostname", name)
                node = node.label("zone", data.draw(st.sampled_from(["z1", "z1", "z2"])))  # z2: a relisting
                node = node.capacity({"cpu": data.draw(st.sampled_from(["4", "8"])), "memory": "8Gi", "pods": "110"})
                if data.draw(st.booleans()):
                    node = node.taint("dedicated", "x", "NoSchedule")
                if data.draw(st.booleans()):
                    node = node.unschedulable()
                old_node, parsed[name] = parsed[name], parse_node(node.obj())
                cache.update_node(old_node, parsed[name])
            elif action == "assume":
                # The scheduler's way: assumed, then confirmed by the informer's newer version of the pod.
                uid = f"p{created}"
                created += 1
                obj = data.draw(pod_objs(uid, data.draw(st.sampled_from(names))))
                cache.assume_pod(new_pod_info(obj))
                bound = new_pod_info({**obj, "metadata": {**obj["metadata"], "resourceVersion": "2"}})
                cache.add_pod(bound)
                pods[uid] = bound
            elif action == "add" or not pods:
                uid = f"p{created}"
                created += 1
                info = new_pod_info(data.draw(pod_objs(uid, data.draw(st.sampled_from(names)))))
                cache.add_pod(info)
                pods[uid] = info
            elif action == "remove":
                uid = data.draw(st.sampled_from(sorted(pods)))
                cache.remove_pod(pods.pop(uid))
            else:
                uid = data.draw(st.sampled_from(sorted(pods)))
                old = pods[uid]
                obj = dict(old.obj)
                app = data.draw(st.sampled_from([a for a in APPS if a != old.labels.get("app")]))
                obj["metadata"] = {**old.obj["metadata"], "labels": {"app": app}}
                new = new_pod_info(obj)
                cache.update_pod(old, new)
                pods[uid] = new
        cache.update_snapshot(snap)
        _check(snap.table, selector)
        _check_node_columns(snap.table, NodeTable(snap.node_info_list))
        # nodes_at's gather against its plain twin, indexing the snapshot's list.
        picked = data.draw(st.lists(st.integers(0, len(names) - 1), max_size=8))
        gathered = snap.table.nodes_at(np.array(picked, dtype=np.int64))
        plain = [snap.node_info_list[p] for p in picked]
        assert len(gathered) == len(plain) and all(a is b for a, b in zip(gathered, plain, strict=True))


def _order(codes: Any) -> Any:
    """First-appearance order, written plainly: each code where a row first shows it."""
    seen: list[int] = []
    for c in codes.tolist():
        if c not in seen:
            seen.append(c)
    return np.array(seen, dtype=np.int32)


@settings(max_examples=60, deadline=None)
@given(zones=st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=8), data=st.data())
def test_first_appearance_follows_rewritten_rows(zones: list[str], data: st.DataObject) -> None:
    """What the table keeps of a label column (distinct codes, their order) is recomputed once a row's node
    changes, here without the rebuild the cache would do: against the plain order of the column as it is."""

    def node(i: int, zone: str) -> NodeInfo:
        return NodeInfo(parse_node(make_node(f"n{i}").label("zone", zone).label("host", f"n{i}").obj()))

    table = NodeTable([node(i, z) for i, z in enumerate(zones)])
    handed_out: list[tuple[Any, list[int]]] = []  # domains states of earlier cycles hold: never changed after
    for _ in range(data.draw(st.integers(1, 4))):
        for key in ("zone", "host"):
            distinct, present = table.first_appearance(key, _appearance_order)
            want = _order(table.label_column(key))
            assert present.tolist() == want.tolist() and distinct == (len(want) == table.n)
            handed_out.append((present, present.tolist()))
        assert all(array.tolist() == then for array, then in handed_out)
        i = data.draw(st.integers(0, len(zones) - 1))
        table.update_row(i, node(i, data.draw(st.sampled_from(["a", "b", "c", "d"]))))


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_the_lazy_view_of_nodes_is_the_gather(data: st.DataObject) -> None:
    """NodesAt (gathered only when walked) gives what nodes_at gives: its length, each item by index (negative
    ones too), slices and a walk, whether read item by item before or after a walk; a rewritten row shows."""
    n = data.draw(st.integers(1, 30), label="nodes")
    table = NodeTable([NodeInfo(parse_node(make_node(f"n{i}").obj())) for i in range(n)])
    positions = np.array(data.draw(st.lists(st.integers(0, n - 1), max_size=40), label="positions"), dtype=np.int64)
    if data.draw(st.booleans(), label="rewrite a row first"):
        row = data.draw(st.integers(0, n - 1))
        table.update_row(row, NodeInfo(parse_node(make_node(f"n{row}").label("zone", "z").obj())))
    view = table.nodes_view(positions)
    plain = table.nodes_at(positions)
    assert len(view) == len(plain) and bool(view) == bool(plain)
    walk_first = data.draw(st.booleans(), label="walk first")
    if walk_first:
        assert list(view) == plain
    for i in data.draw(st.lists(st.integers(-len(plain), len(plain) - 1), max_size=10)) if plain else []:
        assert view[i] is plain[i]
    lo, hi = data.draw(st.integers(0, len(plain))), data.draw(st.integers(0, len(plain)))
    assert view[lo:hi] == plain[lo:hi]
    assert [ni.name for ni in view] == [table.names[p] for p in positions.tolist()]


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_domain_sums_follow_rewritten_rows(data: st.DataObject) -> None:
    """The derived columns' sums by label code that the table keeps (adjusted as a row's pods or labels change,
    new label values included) equal domain_sums_plain over the columns
    as they are, each time they are read."""
    zone_values = st.sampled_from(["a", "b", "c", "d", "", None])

    def node(i: int, zone: str | None, rack: str | None, pods: list[dict[str, Any]]) -> NodeInfo:
        n = make_node(f"n{i}")
        if zone is not None:
            n = n.label("zone", zone)
        if rack is not None:
            n = n.label("rack", rack)
        ni = NodeInfo(parse_node(n.obj()))
        for p in pods:
            ni.add_pod(new_pod_info(p))
        return ni

    count = data.draw(st.integers(1, 8), label="nodes")
    pods: list[list[dict[str, Any]]] = [[] for _ in range(count)]
    labels = [(data.draw(zone_values), data.draw(st.sampled_from(["r1", "r2", None]))) for _ in range(count)]
    table = NodeTable([node(i, *labels[i], pods[i]) for i in range(count)])
    selectors = {app: parse_label_selector({"matchLabels": {"app": app}}) for app in APPS}
    for step in range(data.draw(st.integers(1, 6), label="steps")):
        for app in data.draw(st.lists(st.sampled_from(APPS), min_size=1, max_size=3), label="read"):
            key = ("spread", app)
            values = table.derived_column(key, functools.partial(pod_matches_selector, selectors[app], "default"))
            for label in ("zone", "rack"):
                kept = table.domain_sums(key, label)
                want = domain_sums_plain(table.label_column(label), values, table.value_count(label))
                assert kept.sums.tolist() == want.sums.tolist() and kept.absent == want.absent
        i = data.draw(st.integers(0, count - 1), label="row rewritten")
        if data.draw(st.booleans(), label="relabel"):
            labels[i] = (data.draw(zone_values), data.draw(st.sampled_from(["r1", "r2", "r3", None])))
        leaves: bool = data.draw(st.booleans(), label="a pod leaves")
        if leaves and pods[i]:
            pods[i] = pods[i][1:]
        for j in range(data.draw(st.integers(0, 2), label="pods come")):
            obj = make_pod(f"p{step}-{i}-{j}").node(f"n{i}").label("app", data.draw(st.sampled_from(APPS))).obj()
            pods[i] = [*pods[i], obj]
        table.update_row(i, node(i, *labels[i], pods[i]))
