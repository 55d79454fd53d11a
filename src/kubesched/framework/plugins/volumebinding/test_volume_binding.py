"""VolumeBinding: upstream's TestVolumeBinding table (PreFilter and Filter columns) and whole cycles."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api import volumes as vol
from kubesched.framework.cycle_state import NOT_FOUND, CycleState, read_state
from kubesched.framework.plugins.volumebinding import volume_binding
from kubesched.framework.plugins.volumebinding.binder import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_NOT_ENOUGH_SPACE,
    ERR_REASON_PV_NOT_EXIST,
)
from kubesched.framework.status import Code, Status
from kubesched.framework.types import new_pod_info
from kubesched_testing.cluster import new_test_cluster
from kubesched_testing.framework import build_snapshot, lister_with, new_plugin
from kubesched_testing.volumes import (
    make_capacity,
    make_csi_driver,
    make_csi_node,
    make_pv,
    make_pvc,
    make_storage_class,
)
from kubesched_testing.wrappers import make_node, make_pod

WAIT = make_storage_class("wait-sc")
WAIT_HDD = make_storage_class("wait-hdd-sc")
IMMEDIATE = make_storage_class("immediate-sc", wait_for_first_consumer=False)
HOST = "kubernetes.io/hostname"
ZONE, REGION = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"
UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def bound_pvc(name: str, pv: str, cls: str = "wait-sc", **kw: Any) -> dict[str, Any]:
    return make_pvc(name, storage_class=cls, volume_name=pv, bound=True, **kw)


def node(name: str) -> dict[str, Any]:
    return make_node(name).capacity({"cpu": "4", "memory": "8Gi"}).label(HOST, name).obj()


def zonal_node(name: str, zone: str) -> dict[str, Any]:
    return make_node(name).capacity({"cpu": "4"}).label(REGION, "region-" + zone[-1]).label(ZONE, zone).obj()


CASES = [
    ("pod has not pvcs", make_pod("pod-a"), [node("node-a")], [], [], Status(Code.SKIP), [None]),
    (
        "all bound",
        make_pod("pod-a").pvc("pvc-a"),
        [node("node-a")],
        [bound_pvc("pvc-a", "pv-a")],
        [make_pv("pv-a", storage_class="wait-sc")],
        None,
        [None],
    ),
    (
        "PVC does not exist",
        make_pod("pod-a").pvc("pvc-a"),
        [node("node-a")],
        [],
        [],
        Status(UU, 'persistentvolumeclaim "pvc-a" not found'),
        None,
    ),
    (
        "Part of PVCs do not exist",
        make_pod("pod-a").pvc("pvc-a").pvc("pvc-b"),
        [node("node-a")],
        [bound_pvc("pvc-a", "pv-a")],
        [],
        Status(UU, 'persistentvolumeclaim "pvc-b" not found'),
        None,
    ),
    (
        "immediate claims not bound",
        make_pod("pod-a").pvc("pvc-a"),
        [node("node-a")],
        [make_pvc("pvc-a", storage_class="immediate-sc")],
        [],
        Status(UU, "pod has unbound immediate PersistentVolumeClaims"),
        None,
    ),
    (
        "unbound claims no matches",
        make_pod("pod-a").pvc("pvc-a"),
        [node("node-a")],
        [make_pvc("pvc-a", storage_class="wait-sc")],
        [],
        None,
        [Status(UU, ERR_REASON_BIND_CONFLICT)],
    ),
    (
        "bound and unbound unsatisfied",
        make_pod("pod-a").pvc("pvc-a").pvc("pvc-b"),
        [make_node("node-a").label("foo", "barbar").obj()],
        [bound_pvc("pvc-a", "pv-a"), make_pvc("pvc-b", storage_class="wait-sc")],
        [make_pv("pv-a", storage_class="wait-sc", node_affinity={"foo": ["bar"]})],
        None,
        [Status(UU, ERR_REASON_NODE_CONFLICT, ERR_REASON_BIND_CONFLICT)],
    ),
    (
        "pvc not found",
        make_pod("pod-a").pvc("pvc-a"),
        [node("node-a")],
        [],
        [],
        Status(UU, 'persistentvolumeclaim "pvc-a" not found'),
        None,
    ),
    (
        "pv not found",
        make_pod("pod-a").pvc("pvc-a"),
        [node("node-a")],
        [bound_pvc("pvc-a", "pv-a")],
        [],
        None,
        [Status(UU, ERR_REASON_PV_NOT_EXIST)],
    ),
    (
        "pv not found claim lost",
        make_pod("pod-a").pvc("pvc-a"),
        [node("node-a")],
        [bound_pvc("pvc-a", "pv-a", phase="Lost")],
        [],
        Status(UU, 'persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"'),
        None,
    ),
    (
        "local volumes with close capacity are preferred",
        make_pod("pod-a").pvc("pvc-a"),
        [node(n) for n in ("node-a", "node-b", "node-c")],
        [make_pvc("pvc-a", storage_class="wait-sc", request="50Gi")],
        [
            make_pv(f"pv-{n}-{i}", storage_class="wait-sc", capacity=cap, node_affinity={HOST: [f"node-{n}"]})
            for n, cap in (("a", "200Gi"), ("b", "100Gi"))
            for i in (0, 1)
        ],
        None,
        [None, None, Status(UU, ERR_REASON_BIND_CONFLICT)],
    ),
    (
        "local volumes with close capacity are preferred (multiple pvcs)",
        make_pod("pod-a").pvc("pvc-0").pvc("pvc-1"),
        [node(n) for n in ("node-a", "node-b", "node-c")],
        [
            make_pvc("pvc-0", storage_class="wait-sc", request="50Gi"),
            make_pvc("pvc-1", storage_class="wait-hdd-sc", request="100Gi"),
        ],
        [
            make_pv(f"pv-{n}-{i}", storage_class=cls, capacity=cap, node_affinity={HOST: [f"node-{n}"]})
            for n, cap in (("a", "200Gi"), ("b", "100Gi"))
            for i, cls in ((0, "wait-sc"), (1, "wait-sc"), (2, "wait-hdd-sc"), (3, "wait-hdd-sc"))
        ],
        None,
        [None, None, Status(UU, ERR_REASON_BIND_CONFLICT)],
    ),
    (
        "zonal volumes with close capacity are preferred",
        make_pod("pod-a").pvc("pvc-a"),
        [zonal_node(f"zone-{z}-node-{n}", f"zone-{z}") for z in "abc" for n in "ab"],
        [make_pvc("pvc-a", storage_class="wait-sc", request="50Gi")],
        [
            make_pv(
                f"pv-{z}-{i}",
                storage_class="wait-sc",
                capacity=cap,
                node_affinity={REGION: [f"region-{z}"], ZONE: [f"zone-{z}"]},
            )
            for z, cap in (("a", "200Gi"), ("b", "100Gi"))
            for i in (0, 1)
        ],
        None,
        [None, None, None, None, Status(UU, ERR_REASON_BIND_CONFLICT), Status(UU, ERR_REASON_BIND_CONFLICT)],
    ),
]


@pytest.mark.parametrize(
    ("pod", "nodes", "pvcs", "pvs", "want_pre_filter", "want_filter"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_volume_binding(pod, nodes, pvcs, pvs, want_pre_filter, want_filter):
    lister = lister_with([WAIT, WAIT_HDD, IMMEDIATE, *pvs, *pvcs, *nodes])
    snapshot = build_snapshot(nodes)
    pl = new_plugin(volume_binding.new, None, snapshot, lister)
    state = CycleState()
    info = new_pod_info(pod.obj())
    _, s = pl.pre_filter(state, info, snapshot.node_info_list)
    assert s == want_pre_filter
    if want_filter is not None and (s is None or s.is_success()):
        # The snapshot interleaves zones; the table lists nodes as given.
        got = {ni.name: pl.filter(state, info, ni) for ni in snapshot.node_info_list}
        assert [got[n["metadata"]["name"]] for n in nodes] == want_filter


def test_static_binding_prefers_the_smallest_fitting_volume_and_binds_it():
    pvs = [
        make_pv("big", storage_class="wait-sc", capacity="200Gi", node_affinity={HOST: ["node-a"]}),
        make_pv("small", storage_class="wait-sc", capacity="60Gi", node_affinity={HOST: ["node-a"]}),
        make_pv("too-small", storage_class="wait-sc", capacity="10Gi", node_affinity={HOST: ["node-a"]}),
    ]
    tc = new_test_cluster([node("node-a")], [WAIT, *pvs])
    tc.create(make_pvc("data", storage_class="wait-sc", request="50Gi"), make_pod("p").pvc("data").obj())
    tc.sched.run()
    assert tc.get("Pod", "default", "p")["spec"]["nodeName"] == "node-a"
    pvc = tc.get("PersistentVolumeClaim", "default", "data")
    assert pvc["spec"]["volumeName"] == "small" and vol.is_claim_fully_bound(pvc)
    assert tc.get("PersistentVolume", "", "small")["spec"]["claimRef"]["name"] == "data"
    assert "claimRef" not in tc.get("PersistentVolume", "", "big")["spec"]


def test_two_pods_do_not_take_the_same_volume():
    """The first pod's PV is assumed in Reserve; the second must find another one or none."""
    pvs = [make_pv(f"pv-{n}", storage_class="wait-sc", node_affinity={HOST: [n]}) for n in ("node-a", "node-b")]
    nodes = [node(n) for n in ("node-a", "node-b")]
    tc = new_test_cluster(nodes, [WAIT, *pvs])
    for i in range(3):
        tc.create(make_pvc(f"c{i}", storage_class="wait-sc"), make_pod(f"p{i}").pvc(f"c{i}").obj())
    tc.sched.run()
    placed = sorted(tc.get("Pod", "default", f"p{i}")["spec"].get("nodeName", "") for i in range(3))
    assert placed == ["", "node-a", "node-b"]
    failed = [o for o in tc.recorder.outcomes if o.result == "Unschedulable"]
    assert failed and failed[-1].message.startswith(f"0/2 nodes are available: 2 {ERR_REASON_BIND_CONFLICT}.")


def test_dynamic_provisioning_follows_allowed_topologies():
    sc = make_storage_class("fast", provisioner="csi.example.com", allowed_topologies={ZONE: ["zone-b"]})
    nodes = [zonal_node("a", "zone-a"), zonal_node("b", "zone-b")]
    tc = new_test_cluster(nodes, [sc])
    tc.create(make_pvc("data", storage_class="fast"), make_pod("p").pvc("data").obj())
    tc.sched.run()
    assert tc.get("Pod", "default", "p")["spec"]["nodeName"] == "b"
    pvc = tc.get("PersistentVolumeClaim", "default", "data")
    assert pvc["metadata"]["annotations"][vol.ANN_SELECTED_NODE] == "b" and vol.is_claim_fully_bound(pvc)
    pv = tc.get("PersistentVolume", "", pvc["spec"]["volumeName"])
    assert pv["spec"]["csi"]["driver"] == "csi.example.com"
    assert vol.check_node_affinity(pv, {ZONE: "zone-b"}) and not vol.check_node_affinity(pv, {ZONE: "zone-a"})


def test_storage_capacity_is_checked_when_the_driver_asks():
    sc = make_storage_class("fast", provisioner="csi.example.com")
    caps = [
        make_capacity("cap-a", "fast", "10Gi", {ZONE: "zone-a"}),
        make_capacity("cap-b", "fast", "100Gi", {ZONE: "zone-b"}, max_size="20Gi"),
    ]
    nodes = [zonal_node("a", "zone-a"), zonal_node("b", "zone-b")]
    tc = new_test_cluster(nodes, [sc, make_csi_driver("csi.example.com", storage_capacity=True), *caps])
    tc.create(make_pvc("big", storage_class="fast", request="50Gi"), make_pod("big").pvc("big").obj())
    tc.create(make_pvc("mid", storage_class="fast", request="15Gi"), make_pod("mid").pvc("mid").obj())
    tc.sched.run()
    assert "nodeName" not in tc.get("Pod", "default", "big")["spec"]
    assert tc.get("Pod", "default", "mid")["spec"]["nodeName"] == "b"
    msg = next(o.message for o in tc.recorder.outcomes if o.pod.name == "big")
    assert msg.startswith(f"0/2 nodes are available: 2 {ERR_REASON_NOT_ENOUGH_SPACE}.")


def test_immediate_claims_are_bound_by_the_pv_controller_before_scheduling():
    tc = new_test_cluster([node("n")], [IMMEDIATE, make_pv("pv", storage_class="immediate-sc")])
    tc.create(make_pvc("ok", storage_class="immediate-sc"), make_pod("ok").pvc("ok").obj())
    tc.create(make_pvc("none", storage_class="immediate-sc"), make_pod("none").pvc("none").obj())
    tc.sched.run()
    assert tc.get("Pod", "default", "ok")["spec"]["nodeName"] == "n"
    msg = next(o.message for o in tc.recorder.outcomes if o.pod.name == "none")
    # v1.36: DynamicResources' PostFilter finds no state of its own (its PreFilter never ran) and says so.
    assert msg == "0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims. not found"
    # A matching PV appearing later binds the claim and brings the pod back.
    tc.create(make_pv("late", storage_class="immediate-sc"))
    tc.sched.run()
    assert tc.get("Pod", "default", "none")["spec"]["nodeName"] == "n"


def test_unreserve_releases_the_assumed_volume():
    pv = make_pv("only", storage_class="wait-sc")
    tc = new_test_cluster([node("n")], [WAIT, pv])
    tc.create(make_pvc("c", storage_class="wait-sc"), make_pod("p").pvc("c").obj())
    fwk = tc.sched.profiles["default-scheduler"]
    pl = fwk.plugins_map["VolumeBinding"]
    assert isinstance(pl, volume_binding.VolumeBinding)
    qpi = tc.sched.queue.pop()
    assert qpi is not None
    state = CycleState()
    info = qpi.pod_info
    tc.sched.cache.update_snapshot(tc.sched.snapshot)
    pl.pre_filter(state, info, tc.sched.snapshot.node_info_list)
    assert pl.filter(state, info, tc.sched.snapshot.node_info_list[0]) is None
    assert pl.reserve(state, info, "n") is None
    assumed = pl.binder.pv_cache.get("only")
    assert assumed is not None and assumed["spec"]["claimRef"]["name"] == "c"
    assert "claimRef" not in tc.get("PersistentVolume", "", "only")["spec"]
    pl.unreserve(state, info, "n")
    released = pl.binder.pv_cache.get("only")
    assert released is not None and "claimRef" not in released["spec"]


# The bound claims' check with each PV translated and parsed once per cycle for each migrated-plugins
# annotation, against check_bound_claims_plain, which translates on every node.

EBS_ZONE, GCE_ZONE = "topology.ebs.csi.aws.com/zone", "topology.gke.io/zone"
BOUND_SOURCES = {
    "ebs": {"awsElasticBlockStore": {"volumeID": "aws://zone-a/vol-1"}},
    "gce": {"gcePersistentDisk": {"pdName": "disk-1"}},
    "csi": {"csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-2"}},
}
MIGRATIONS = [
    (),
    ("kubernetes.io/aws-ebs",),
    ("kubernetes.io/gce-pd",),
    ("kubernetes.io/aws-ebs", "kubernetes.io/gce-pd"),
]


@st.composite
def bound_volume_clusters(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """Bound claims on in-tree and CSI volumes (zonal or not, some missing), nodes with zone labels under the
    in-tree or the CSI key, and CSINodes that migrate different plugins."""
    objects: list[dict[str, Any]] = [WAIT]
    nodes = []
    for i in range(draw(st.integers(1, 5))):
        w = make_node(f"n{i}")
        for key in draw(st.lists(st.sampled_from([ZONE, EBS_ZONE, GCE_ZONE]), max_size=3, unique=True)):
            w.label(key, draw(st.sampled_from(["zone-a", "zone-b"])))
        nodes.append(w.obj())
        if draw(st.booleans()):
            objects.append(make_csi_node(f"n{i}", {}, draw(st.sampled_from(MIGRATIONS))))
    p = make_pod("p")
    for j in range(draw(st.integers(1, 3))):
        p.pvc(f"c{j}")
        objects.append(bound_pvc(f"c{j}", f"pv{j}"))
        if draw(st.integers(0, 5)) == 0:
            continue  # bound to a volume that does not exist
        zones = draw(st.none() | st.lists(st.sampled_from(["zone-a", "zone-b"]), min_size=1, unique=True))
        key = draw(st.sampled_from([ZONE, EBS_ZONE]))
        affinity = None if zones is None else {key: zones}
        source = BOUND_SOURCES[draw(st.sampled_from(sorted(BOUND_SOURCES)))]
        objects.append(make_pv(f"pv{j}", storage_class="wait-sc", node_affinity=affinity, source=source))
    return nodes, objects, p.obj()


@given(bound_volume_clusters())
@settings(max_examples=80, deadline=None)
def test_bound_claims_check_agrees_with_its_plain_twin_on_every_node(cluster: Any) -> None:
    nodes, objects, pod = cluster
    pl = new_plugin(volume_binding.new, None, build_snapshot(nodes), lister_with(objects))
    claims = pl.binder.get_pod_volume_claims(pod)
    for n in nodes:
        name, labels = n["metadata"]["name"], n["metadata"].get("labels") or {}
        fast = pl.binder._check_bound_claims(claims, name, labels)
        assert fast == pl.binder.check_bound_claims_plain(claims.bound_volumes, name, labels), name


def test_bound_claims_check_translates_per_migration():
    """The same in-tree PV fits a node by its in-tree zone label until the node's CSINode migrates EBS: then the
    PV's zone is read under the CSI driver's topology key, which the node lacks."""
    pv = make_pv("pv0", storage_class="wait-sc", node_affinity={ZONE: ["zone-a"]}, source=BOUND_SOURCES["ebs"])
    nodes = [make_node(n).label(ZONE, "zone-a").obj() for n in ("plain", "migrated")]
    objects = [WAIT, pv, bound_pvc("c0", "pv0"), make_csi_node("migrated", {}, ("kubernetes.io/aws-ebs",))]
    pl = new_plugin(volume_binding.new, None, build_snapshot(nodes), lister_with(objects))
    claims = pl.binder.get_pod_volume_claims(make_pod("p").pvc("c0").obj())
    got = [pl.binder._check_bound_claims(claims, n["metadata"]["name"], n["metadata"]["labels"]) for n in nodes]
    assert got == [(True, True), (False, True)]


@given(bound_volume_clusters())
@settings(max_examples=80, deadline=None)
def test_filter_agrees_with_find_pod_volumes_on_every_node(cluster: Any) -> None:
    """Filter's shortcut for claims that fit every node against the plain answer, find_pod_volumes, node by node:
    the same verdict, and nothing to bind either way."""
    nodes, objects, pod = cluster
    snapshot = build_snapshot(nodes)
    pl = new_plugin(volume_binding.new, None, snapshot, lister_with(objects))
    info = new_pod_info(pod)
    state = CycleState()
    pl.pre_filter(state, info, snapshot.node_info_list)
    claims = pl.binder.get_pod_volume_claims(pod)
    for ni in snapshot.node_info_list:
        got = pl.filter(state, info, ni)
        want, reasons = pl.binder.find_pod_volumes(pod, claims, ni.name, ni.labels)
        assert (got is None) == (not reasons), ni.name
        assert got is None or list(got.reasons) == reasons
        if got is None:
            kept = read_state(state, volume_binding.STATE_KEY, object, NOT_FOUND).by_node[ni.name]
            assert (kept.static_bindings, kept.dynamic_provisions) == (want.static_bindings, want.dynamic_provisions)


def test_claims_fit_every_node_only_without_node_affinity_or_a_missing_volume():
    plain = make_pv("pv0", storage_class="wait-sc", source=BOUND_SOURCES["ebs"])
    zonal = make_pv("pv1", storage_class="wait-sc", node_affinity={ZONE: ["zone-a"]}, source=BOUND_SOURCES["ebs"])
    objects = [WAIT, plain, zonal, bound_pvc("c0", "pv0"), bound_pvc("c1", "pv1"), bound_pvc("c2", "gone")]
    pl = new_plugin(volume_binding.new, None, build_snapshot([node("n")]), lister_with(objects))
    pods = [make_pod("p").pvc("c0"), make_pod("p").pvc("c0").pvc("c1"), make_pod("p").pvc("c0").pvc("c2")]
    assert [pl.binder.get_pod_volume_claims(p.obj()).fits_every_node for p in pods] == [True, False, False]
