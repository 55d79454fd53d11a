"""Cache and snapshot cases ported from upstream's backend/cache/cache_test.go (same inputs, same outcomes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kubesched.api.resources import DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST
from kubesched.cache.cache import Cache, CacheError
from kubesched.cache.snapshot import Snapshot
from kubesched.framework.node_info import NodeInfo, parse_node
from kubesched.framework.types import PodInfo, new_pod_info
from kubesched_testing.wrappers import make_node, make_pod

NODE = "node"


def base_pod(
    node: str, name: str, cpu: str = "", mem: str = "", extended: str = "", port: int = 0, ip: str = "127.0.0.1"
) -> PodInfo:
    """makeBasePod: one container with the given requests and, optionally, a host port."""
    obj = make_pod(name, "node_info_cache_test").uid(name).node(node).obj()
    container: dict[str, Any] = {"name": "container", "image": "pause"}
    if cpu:
        req = {"cpu": cpu, "memory": mem}
        if extended:
            k, v = extended.split(":")
            req[k] = v
        container["resources"] = {"requests": req}
    if port:
        container["ports"] = [{"hostIP": ip, "hostPort": port, "protocol": "TCP"}]
    obj["spec"]["containers"] = [container]
    return new_pod_info(obj)


def requested(ni: NodeInfo) -> dict[str, int]:
    return {k: v for k, v in ni.requested.items() if v}


def ports(ni: NodeInfo) -> set[tuple[str, str, int]]:
    return {(p.protocol, p.ip, p.port) for p in ni.used_ports}


def tcp(*ps: int, ip: str = "127.0.0.1") -> set[tuple[str, str, int]]:
    return {("TCP", ip, p) for p in ps}


TEST_PODS = [
    base_pod(NODE, "test-resource-request-and-port-0", "100m", "500", port=80),
    base_pod(NODE, "test-resource-request-and-port-1", "100m", "500", port=80),
    base_pod(NODE, "test-resource-request-and-port-2", "200m", "1Ki", port=8080),
    base_pod(NODE, "test-nonzero-request", port=80),
    base_pod(NODE, "test-extended-resource-1", "100m", "500", "example.com/foo:3", port=80),
    base_pod(NODE, "test-extended-resource-2", "200m", "1Ki", "example.com/foo:5", port=8080),
    base_pod(NODE, "test-extended-key", "100m", "500", "random-invalid-extended-key:100"),
]


@pytest.mark.parametrize(
    ("pods", "want_req", "want_nonzero", "want_ports"),
    [
        ([0], {"cpu": 100, "memory": 500}, (100, 500), tcp(80)),
        ([1, 2], {"cpu": 300, "memory": 1524}, (300, 1524), tcp(80, 8080)),
        ([3], {}, (DEFAULT_MILLI_CPU_REQUEST, DEFAULT_MEMORY_REQUEST), tcp(80)),
        ([4], {"cpu": 100, "memory": 500, "example.com/foo": 3}, (100, 500), tcp(80)),
        ([4, 5], {"cpu": 300, "memory": 1524, "example.com/foo": 8}, (300, 1524), tcp(80, 8080)),
        ([6], {"cpu": 100, "memory": 500}, (100, 500), set()),
    ],
    ids=[
        "one pod with request and port",
        "requests and ports add up",
        "pod without request counts the non-zero defaults",
        "extended resource",
        "two pods with extended resources",
        "invalid extended resource key is ignored",
    ],
)
def test_assume_pod_scheduled(
    pods: list[int], want_req: dict[str, int], want_nonzero: tuple[int, int], want_ports: set[Any]
) -> None:
    cache = Cache()
    for i in pods:
        cache.assume_pod(TEST_PODS[i])
        with pytest.raises(CacheError, match="can't be assumed"):
            cache.assume_pod(TEST_PODS[i])
    ni = cache.nodes[NODE]
    assert requested(ni) == want_req
    assert (ni.non_zero_cpu, ni.non_zero_mem) == want_nonzero
    assert [p.uid for p in ni.pods] == [TEST_PODS[i].uid for i in pods]
    assert ports(ni) == want_ports
    for i in pods:
        cache.forget_pod(TEST_PODS[i])
        assert not cache.is_assumed_pod(TEST_PODS[i])
        assert cache.get_pod(TEST_PODS[i].uid) is None


def test_add_pod_will_confirm() -> None:
    p0, p1 = base_pod(NODE, "test-1", "100m", "500", port=80), base_pod(NODE, "test-2", "200m", "1Ki", port=8080)
    cache = Cache()
    cache.assume_pod(p0)
    cache.assume_pod(p1)
    cache.add_pod(p0)
    with pytest.raises(CacheError, match="already in added state"):
        cache.add_pod(p0)
    for p in (p0, p1):
        if cache.is_assumed_pod(p):
            cache.forget_pod(p)
    ni = cache.nodes[NODE]
    assert requested(ni) == {"cpu": 100, "memory": 500}
    assert [p.uid for p in ni.pods] == ["test-1"]
    assert ports(ni) == tcp(80)


def test_add_pod_always_updates_pod_info_in_node_info() -> None:
    p1 = base_pod("node1", "test-1", "100m", "500", port=80, ip="")
    obj = {**p1.obj, "status": {"conditions": [{"type": "PodScheduled", "status": "True"}]}}
    cache = Cache()
    cache.assume_pod(p1)
    cache.add_pod(new_pod_info(obj))
    ni = cache.nodes["node1"]
    assert [p.obj for p in ni.pods] == [obj]
    assert requested(ni) == {"cpu": 100, "memory": 500}
    assert (ni.non_zero_cpu, ni.non_zero_mem) == (100, 500)
    assert ports(ni) == tcp(80, ip="0.0.0.0")


def test_add_pod_will_replace_assumed() -> None:
    assumed = base_pod("assumed-node-1", "test-1", "100m", "500", port=80, ip="")
    added = base_pod("actual-node", "test-1", "100m", "500", port=80, ip="")
    updated = base_pod("actual-node", "test-1", "200m", "500", port=90, ip="")
    cache = Cache()
    cache.assume_pod(assumed)
    assert cache.add_pod(added) is assumed  # moved off the node it was assumed on: the caller frees that room
    cache.update_pod(added, updated)
    assert "assumed-node-1" not in cache.nodes
    ni = cache.nodes["actual-node"]
    assert requested(ni) == {"cpu": 200, "memory": 500}
    assert (ni.non_zero_cpu, ni.non_zero_mem) == (200, 500)
    assert [p.obj for p in ni.pods] == [updated.obj]
    assert ports(ni) == tcp(90, ip="0.0.0.0")


def test_confirming_an_assumed_pod_where_it_was_assumed_reports_no_move() -> None:
    pod = base_pod(NODE, "p", "100m", "500")
    cache = Cache()
    cache.assume_pod(pod)
    assert cache.add_pod(base_pod(NODE, "p", "100m", "500")) is None
    assert cache.add_pod(base_pod(NODE, "q", "100m", "500")) is None  # not assumed at all


def test_confirmation_with_changed_requests_reaggregates() -> None:
    """Not upstream's table, its rule: AddPod of an assumed pod is an update, so a resized pod counts anew."""
    cache = Cache()
    cache.assume_pod(base_pod(NODE, "p", "100m", "500"))
    cache.add_pod(base_pod(NODE, "p", "300m", "500"))
    assert requested(cache.nodes[NODE]) == {"cpu": 300, "memory": 500}


def test_update_pod() -> None:
    v0, v1 = base_pod(NODE, "test", "100m", "500", port=80), base_pod(NODE, "test", "200m", "1Ki", port=8080)
    cache = Cache()
    cache.add_pod(v0)
    want = [({"cpu": 200, "memory": 1024}, tcp(8080), v1), ({"cpu": 100, "memory": 500}, tcp(80), v0)]
    for (old, new), (req, used, pod) in zip([(v0, v1), (v1, v0)], want, strict=True):
        cache.update_pod(old, new)
        ni = cache.nodes[NODE]
        assert requested(ni) == req
        assert ports(ni) == used
        assert [p.obj for p in ni.pods] == [pod.obj]


@pytest.mark.parametrize("assume", [True, False], ids=["assumed", "added"])
def test_update_pod_and_get(assume: bool) -> None:
    v0, v1 = base_pod(NODE, "test", "100m", "500", port=80), base_pod(NODE, "test", "200m", "1Ki", port=8080)
    cache = Cache()
    assert cache.get_pod(v1.uid) is None
    with pytest.raises(CacheError, match="not added"):
        cache.update_pod(v0, v1)
    if assume:
        cache.assume_pod(v0)
        want = v0
    else:
        cache.add_pod(v0)
        cache.update_pod(v0, v1)
        want = v1
    got = cache.get_pod(v0.uid)
    assert got is not None and got.obj == want.obj


def test_ephemeral_storage_resource() -> None:
    w = make_pod("pod-with-ephemeral-storage", "default-namespace").uid("pod-with-ephemeral-storage").node(NODE)
    pod = new_pod_info(w.req({"ephemeral-storage": "500"}).obj())
    cache = Cache()
    cache.add_pod(pod)
    ni = cache.nodes[NODE]
    assert requested(ni) == {"ephemeral-storage": 500}
    assert (ni.non_zero_cpu, ni.non_zero_mem) == (DEFAULT_MILLI_CPU_REQUEST, DEFAULT_MEMORY_REQUEST)
    cache.remove_pod(pod)
    assert cache.get_pod(pod.uid) is None


@pytest.mark.parametrize("assume", [False, True], ids=["bound", "assumed"])
def test_remove_pod(assume: bool) -> None:
    pod = base_pod("node-1", "test", "100m", "500", port=80)
    cache = Cache()
    (cache.assume_pod if assume else cache.add_pod)(pod)  # works before the node is known
    ni = cache.nodes["node-1"]
    assert requested(ni) == {"cpu": 100, "memory": 500} and ports(ni) == tcp(80)
    for name in ("node-1", "node-2"):
        cache.add_node(parse_node(make_node(name).obj()))
    cache.remove_pod(pod)
    assert cache.get_pod(pod.uid) is None
    with pytest.raises(CacheError, match="not found in scheduler cache"):
        cache.remove_pod(pod)
    assert list(cache.nodes)[-1] == "node-1"  # the pod's node is at the head of the recency list


def test_forget_pod() -> None:
    pod = base_pod(NODE, "test", "100m", "500", port=80)
    cache = Cache()
    cache.assume_pod(pod)
    assert cache.is_assumed_pod(pod)
    got = cache.get_pod(pod.uid)
    assert got is not None and (got.namespace, got.name) == (pod.namespace, pod.name)
    cache.forget_pod(pod)
    assert not cache.is_assumed_pod(pod) and cache.get_pod(pod.uid) is None
    with pytest.raises(CacheError, match="wasn't assumed"):  # 1.34; later releases return nil here
        cache.forget_pod(pod)


MB = 1024 * 1024


@pytest.mark.parametrize("npods", [1, 2], ids=["one pod", "two pods"])
def test_node_operators(npods: int) -> None:
    res1 = {"cpu": "1000m", "memory": "100m", "example.com/foo": "1"}
    res2 = {"cpu": "500m", "memory": "50m", "example.com/foo": "2"}
    img1 = {
        "gcr.io/80:latest": 80 * MB,
        "gcr.io/80:v1": 80 * MB,
        "gcr.io/300:latest": 300 * MB,
        "gcr.io/300:v1": 300 * MB,
    }
    img2 = {"gcr.io/600:latest": 600 * MB, "gcr.io/80:latest": 80 * MB, "gcr.io/900:latest": 900 * MB}

    def node(i: int, res: dict[str, str], img: dict[str, int]) -> dict[str, Any]:
        return (
            make_node(f"test-node-{i}")
            .capacity(res)
            .taint("test-key", "test-value", "PreferNoSchedule")
            .images(img)
            .obj()
        )

    nodes = [node(1, res1, img1), node(2, res2, img2), node(3, res1, img1)]
    if npods == 1:
        nodes.append(node(4, res2, img2))
    pods = [
        new_pod_info(make_pod(f"pod{i}").uid(f"pod{i}").node("test-node-1").req({"cpu": "500m", "memory": "50m"}).obj())
        for i in range(1, npods + 1)
    ]
    cache = Cache()
    for n in nodes:
        cache.add_node(parse_node(n))
    for p in pods:
        cache.add_pod(p)
    ni = cache.nodes["test-node-1"]
    assert cache.node_tree.num_nodes == len(nodes) == len(cache.node_tree.list())
    assert ni.allocatable == {"cpu": 1000, "memory": 1, "example.com/foo": 1, "pods": 32}  # "100m" bytes: 1
    assert requested(ni) == {"cpu": 500 * npods, "memory": npods}

    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    assert len(snapshot.node_info_map) == len(nodes)
    clone = snapshot.node_info_map["test-node-1"]
    assert [p.uid for p in clone.pods] == [p.uid for p in pods] and requested(clone) == requested(ni)
    n80 = clone.image_states["gcr.io/80:latest"]
    assert (n80.size, n80.num_nodes) == (80 * MB, len(nodes))
    assert snapshot.node_info_map["test-node-2"].image_states["gcr.io/80:latest"] == n80

    updated = node(1, res1, img1)
    updated["status"]["allocatable"]["memory"] = "50m"
    gen = ni.generation
    cache.update_node(parse_node(nodes[0]), parse_node(updated))
    assert ni.generation > gen
    assert cache.nodes["test-node-1"].allocatable["memory"] == 1

    cache.remove_node("test-node-1")
    assert cache.nodes["test-node-1"].node is None  # a ghost entry while pods remain
    with pytest.raises(CacheError, match="not found"):
        cache.remove_node("test-node-1")
    assert cache.node_tree.num_nodes == len(nodes) - 1 == len(cache.node_tree.list())
    for p in pods:
        assert cache.get_pod(p.uid) is not None
    for p in pods:
        cache.remove_pod(p)
        assert cache.get_pod(p.uid) is None
    assert "test-node-1" not in cache.nodes


# TestSchedulerCache_UpdateSnapshot

NODES = [make_node(f"test-node{i}").capacity({"cpu": "1000m", "memory": "100m"}).obj() for i in range(10)]
UPDATED_NODES = [make_node(f"test-node{i}").capacity({"cpu": "2000m", "memory": "500m"}).obj() for i in range(10)]


def _pod(name: str, uid: str, node: str, **extra: Any) -> dict[str, Any]:
    w = make_pod(name, "test-ns").uid(uid).node(node)
    if "affinity" in extra:
        w.pod_affinity_exists("foo", "")
    if "pvc" in extra:
        w.pvc(extra["pvc"])
    return w.obj()


PODS = [_pod(f"test-pod{i}", f"test-puid{i}", f"test-node{i % 10}") for i in range(20)]
UPDATED_PODS = [{**p, "spec": {**p["spec"], "priority": 1000}} for p in PODS]
AFFINITY_PODS = [_pod(f"p-affinity-{i}", f"puid-affinity-{i}", f"test-node{i}", affinity=True) for i in range(2)]
PVC_PODS = [_pod(f"p-pvc-{i}", f"puid-pvc-{i}", f"test-node{i % 2}", pvc=f"test-pvc{i % 4}") for i in range(8)]

Op = Callable[[Cache, Snapshot], object]


def add_node(i: int) -> Op:
    return lambda c, s: c.add_node(parse_node(NODES[i]))


def remove_node(i: int) -> Op:
    return lambda c, s: c.remove_node(NODES[i]["metadata"]["name"])


def update_node(i: int) -> Op:
    return lambda c, s: c.update_node(parse_node(NODES[i]), parse_node(UPDATED_NODES[i]))


def add_pod(i: int, pods: list[dict[str, Any]] = PODS) -> Op:
    return lambda c, s: c.add_pod(new_pod_info(pods[i]))


def remove_pod(i: int, pods: list[dict[str, Any]] = PODS) -> Op:
    return lambda c, s: c.remove_pod(new_pod_info(pods[i]))


def assume_pod(i: int) -> Op:
    return lambda c, s: c.assume_pod(new_pod_info(PODS[i]))


def forget_pod(i: int) -> Op:
    return lambda c, s: c.forget_pod(new_pod_info(PODS[i]))


def update_pod(i: int) -> Op:
    return lambda c, s: c.update_pod(new_pod_info(PODS[i]), new_pod_info(UPDATED_PODS[i]))


def update_snapshot() -> Op:
    def op(c: Cache, s: Snapshot) -> None:
        c.update_snapshot(s)
        compare_cache_with_snapshot(c, s)

    return op


def compare_cache_with_snapshot(cache: Cache, snapshot: Snapshot) -> None:
    """compareCacheWithNodeInfoSnapshot: same nodes, same contents, lists in node-tree order."""
    assert len(snapshot.node_info_map) == cache.node_tree.num_nodes
    for name, ni in cache.nodes.items():
        got = snapshot.node_info_map.get(name)
        if ni.node is None:
            assert got is None
            continue
        assert got is not None and got.node is ni.node
        assert [p.uid for p in got.pods] == [p.uid for p in ni.pods]
        assert got.requested == ni.requested and got.pvc_ref_counts == ni.pvc_ref_counts
        assert got.generation == ni.generation
    order = cache.node_tree.list()
    assert [ni.name for ni in snapshot.node_info_list] == order
    assert snapshot.have_pods_with_affinity_list == [ni for ni in snapshot.node_info_list if ni.pods_with_affinity]
    for i, ni in enumerate(snapshot.node_info_list):
        assert snapshot.position[ni.name] == i
        assert snapshot.table.names[i] == ni.name


UPDATE_SNAPSHOT_CASES: list[tuple[str, list[Op], list[int], int, set[str]]] = [
    ("Empty cache", [], [], 0, set()),
    ("Single node", [add_node(1)], [1], 0, set()),
    ("Add node, remove it, add it again", [add_node(1), update_snapshot(), remove_node(1), add_node(1)], [1], 0, set()),
    (
        "Add node and remove it in the same cycle, add it again",
        [add_node(1), update_snapshot(), add_node(2), remove_node(1)],
        [2],
        0,
        set(),
    ),
    (
        "Add a few nodes, and snapshot in the middle",
        [add_node(0), update_snapshot(), add_node(1), update_snapshot(), add_node(2), update_snapshot(), add_node(3)],
        [3, 2, 1, 0],
        0,
        set(),
    ),
    (
        "Add a few nodes, and snapshot in the end",
        [add_node(0), add_node(2), add_node(5), add_node(6)],
        [6, 5, 2, 0],
        0,
        set(),
    ),
    (
        "Update some nodes",
        [add_node(0), add_node(1), add_node(5), update_snapshot(), update_node(1)],
        [1, 5, 0],
        0,
        set(),
    ),
    (
        "Add a few nodes, and remove all of them",
        [add_node(0), add_node(2), add_node(5), add_node(6), update_snapshot()]
        + [remove_node(0), remove_node(2), remove_node(5), remove_node(6)],
        [],
        0,
        set(),
    ),
    (
        "Add a few nodes, and remove some of them",
        [add_node(0), add_node(2), add_node(5), add_node(6), update_snapshot(), remove_node(0), remove_node(6)],
        [5, 2],
        0,
        set(),
    ),
    (
        "Add a few nodes, remove all of them, and add more",
        [add_node(2), add_node(5), add_node(6), update_snapshot()]
        + [remove_node(2), remove_node(5), remove_node(6), update_snapshot(), add_node(7), add_node(9)],
        [9, 7],
        0,
        set(),
    ),
    (
        "Update nodes in particular order",
        [add_node(8), update_node(2), update_node(8), update_snapshot(), add_node(1)],
        [1, 8, 2],
        0,
        set(),
    ),
    (
        "Add some nodes and some pods",
        [add_node(0), add_node(2), add_node(8), update_snapshot(), add_pod(8), add_pod(2)],
        [2, 8, 0],
        0,
        set(),
    ),
    (
        "Updating a pod moves its node to the head",
        [add_node(0), add_pod(0), add_node(2), add_node(4), update_pod(0)],
        [0, 4, 2],
        0,
        set(),
    ),
    ("Add pod before its node", [add_node(0), add_pod(1), update_pod(1), add_node(1)], [1, 0], 0, set()),
    (
        "Remove node before its pods",
        [add_node(0), add_node(1), add_pod(1), add_pod(11), update_snapshot(), remove_node(1), update_snapshot()]
        + [update_pod(1), update_pod(11), remove_pod(1, UPDATED_PODS), remove_pod(11, UPDATED_PODS)],
        [0],
        0,
        set(),
    ),
    (
        "Add Pods with affinity",
        [add_node(0), add_pod(0, AFFINITY_PODS), update_snapshot(), add_node(1)],
        [1, 0],
        1,
        set(),
    ),
    (
        "Add Pods with PVC",
        [add_node(0), add_pod(0, PVC_PODS), update_snapshot(), add_node(1)],
        [1, 0],
        0,
        {"test-ns/test-pvc0"},
    ),
    (
        "Add multiple nodes with pods with affinity",
        [add_node(0), add_pod(0, AFFINITY_PODS), update_snapshot(), add_node(1), add_pod(1, AFFINITY_PODS)]
        + [update_snapshot()],
        [1, 0],
        2,
        set(),
    ),
    (
        "Add multiple nodes with pods with PVC",
        [add_node(0), add_pod(0, PVC_PODS), update_snapshot(), add_node(1), add_pod(1, PVC_PODS), update_snapshot()],
        [1, 0],
        0,
        {"test-ns/test-pvc0", "test-ns/test-pvc1"},
    ),
    (
        "Add then Remove pods with affinity",
        [add_node(0), add_node(1), add_pod(0, AFFINITY_PODS), update_snapshot()]
        + [remove_pod(0, AFFINITY_PODS), update_snapshot()],
        [0, 1],
        0,
        set(),
    ),
    (
        "Add then Remove pod with PVC",
        [add_node(0), add_pod(0, PVC_PODS), update_snapshot(), remove_pod(0, PVC_PODS), add_pod(2, PVC_PODS)]
        + [update_snapshot()],
        [0],
        0,
        {"test-ns/test-pvc2"},
    ),
    (
        "Add then Remove pod with PVC and add same pod again",
        [add_node(0), add_pod(0, PVC_PODS), update_snapshot(), remove_pod(0, PVC_PODS), add_pod(0, PVC_PODS)]
        + [update_snapshot()],
        [0],
        0,
        {"test-ns/test-pvc0"},
    ),
    (
        "Add and Remove multiple pods with PVC with same ref count length different content",
        [add_node(0), add_node(1), add_pod(0, PVC_PODS), add_pod(1, PVC_PODS), update_snapshot()]
        + [remove_pod(0, PVC_PODS), remove_pod(1, PVC_PODS), add_pod(2, PVC_PODS), add_pod(3, PVC_PODS)]
        + [update_snapshot()],
        [1, 0],
        0,
        {"test-ns/test-pvc2", "test-ns/test-pvc3"},
    ),
    (
        "Add and Remove multiple pods with PVC",
        [add_node(0), add_node(1), add_pod(0, PVC_PODS), add_pod(1, PVC_PODS), add_pod(2, PVC_PODS)]
        + [update_snapshot(), remove_pod(0, PVC_PODS), remove_pod(1, PVC_PODS), update_snapshot()]
        + [add_pod(0, PVC_PODS), update_snapshot(), add_pod(3, PVC_PODS), add_pod(4, PVC_PODS)]
        + [add_pod(5, PVC_PODS), update_snapshot(), remove_pod(0, PVC_PODS), remove_pod(3, PVC_PODS)]
        + [remove_pod(4, PVC_PODS), update_snapshot()],
        [0, 1],
        0,
        {"test-ns/test-pvc1", "test-ns/test-pvc2"},
    ),
    (
        "Assume and forget in cache",
        [add_node(0), add_node(2), add_node(4), add_node(8), update_snapshot()]
        + [assume_pod(8), assume_pod(0), forget_pod(0), update_snapshot()],
        [0, 8, 4, 2],
        0,
        set(),
    ),
]


@pytest.mark.parametrize(
    ("ops", "expected", "with_affinity", "used_pvcs"),
    [c[1:] for c in UPDATE_SNAPSHOT_CASES],
    ids=[c[0] for c in UPDATE_SNAPSHOT_CASES],
)
def test_update_snapshot(ops: list[Op], expected: list[int], with_affinity: int, used_pvcs: set[str]) -> None:
    cache, snapshot = Cache(), Snapshot()
    for op in ops:
        op(cache, snapshot)
    # The recency list, most recent first; upstream's head-to-tail walk.
    assert [n for n in reversed(cache.nodes) if cache.nodes[n].node is not None] == [f"test-node{i}" for i in expected]
    assert len(cache.nodes) == len(expected)
    assert len(snapshot.have_pods_with_affinity_list) == with_affinity
    assert {k for ni in snapshot.node_info_list for k in ni.pvc_ref_counts} == used_pvcs
    cache.update_snapshot(snapshot)
    compare_cache_with_snapshot(cache, snapshot)
    assert len(snapshot.have_pods_with_affinity_list) == with_affinity
    assert {k for ni in snapshot.node_info_list for k in ni.pvc_ref_counts} == used_pvcs


# TestSchedulerCache_updateNodeInfoSnapshotList: the zone round-robin order of the node list (bug 91601).

ZONED = [
    make_node(f"node-{i}")
    .label("topology.kubernetes.io/region", f"region-{zone}")
    .label("topology.kubernetes.io/zone", f"zone-{zone}")
    .obj()
    for i, zone in enumerate([0, 0, 1, 1, 1, 1, 1, 1])
]


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        ([], []),
        ([0], [0]),
        ([0, "snap", 1], [0, 1]),
        ([2, 3, "snap", 4, 0], [2, 0, 3, 4]),
        ([2, 3, 4, 5, "snap", 6, 0], [2, 0, 3, 4, 5, 6]),
        ([2, "snap", 3, 4, "snap", 5, 6, 0, 1], [2, 0, 3, 1, 4, 5, 6]),
        ([2, 1, "snap", 3, 4, "snap", 5, 6, 0], [2, 1, 3, 0, 4, 5, 6]),
    ],
    ids=[
        "empty cache",
        "single node",
        "two nodes",
        "bug 91601, two nodes, snapshot, two more in different zones",
        "bug 91601, 6 nodes, one in a different zone",
        "bug 91601, 7 nodes, two in a different zone",
        "bug 91601, 7 nodes, two in a different zone, different zone order",
    ],
)
def test_node_list_follows_zone_round_robin(steps: list[int | str], expected: list[int]) -> None:
    cache, snapshot = Cache(), Snapshot()
    for step in steps:
        if step == "snap":
            cache.update_snapshot(snapshot)
            compare_cache_with_snapshot(cache, snapshot)
        else:
            cache.add_node(parse_node(ZONED[int(step)]))
    cache.update_snapshot(snapshot)
    compare_cache_with_snapshot(cache, snapshot)
    assert [ni.name for ni in snapshot.node_info_list] == [f"node-{i}" for i in expected]


def test_snapshot_clone_is_isolated_from_later_cache_changes() -> None:
    """Copy-on-write pod lists: neither side sees the other's changes after a clone."""
    cache = Cache()
    cache.add_node(parse_node(make_node("n").capacity({"cpu": "4", "pods": "110"}).obj()))
    first = [base_pod("n", f"p{i}", "100m", "1Mi") for i in range(3)]
    for p in first:
        cache.add_pod(p)
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    before = snapshot.node_info_map["n"]
    cache.remove_pod(first[0])
    cache.assume_pod(base_pod("n", "late", "100m", "1Mi"))
    assert [p.name for p in before.pods] == ["p0", "p1", "p2"]
    assert requested(before) == {"cpu": 300, "memory": 3 * MB}
    scratch = before.clone()
    scratch.remove_pod(first[1])
    assert [p.name for p in before.pods] == ["p0", "p1", "p2"]
    assert [p.name for p in scratch.pods] == ["p0", "p2"]
    cache.update_snapshot(snapshot)
    after = snapshot.node_info_map["n"]
    assert sorted(p.name for p in after.pods) == ["late", "p1", "p2"]
    assert requested(after) == {"cpu": 300, "memory": 3 * MB}
    assert sorted(p.name for p in cache.nodes["n"].pods) == ["late", "p1", "p2"]
