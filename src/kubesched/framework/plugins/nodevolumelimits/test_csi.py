"""NodeVolumeLimits: cases after upstream's TestCSILimits (limits from CSINode, unique volumes, migration)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.volumes import csi_attach_limit_key
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.plugins.nodevolumelimits import csi
from kubesched.framework.plugins.nodevolumelimits.csi import ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED
from kubesched.framework.status import Code, Status
from kubesched.framework.types import new_pod_info
from kubesched_testing.framework import build_snapshot, filter_statuses, lister_with, new_plugin
from kubesched_testing.volumes import make_csi_node, make_pv, make_pvc, make_storage_class
from kubesched_testing.wrappers import make_node, make_pod

EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
EXCEEDED = Status(Code.UNSCHEDULABLE, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)


def csi_pv(name: str, driver: str = EBS) -> dict[str, Any]:
    return make_pv(name, source={"csi": {"driver": driver, "volumeHandle": name}})


def ebs_pv(name: str) -> dict[str, Any]:
    return make_pv(name, source={"awsElasticBlockStore": {"volumeID": name}})


OBJECTS = [
    *(csi_pv(f"csi-ebs.csi.aws.com-{i}") for i in range(4)),
    csi_pv("csi-gce-0", GCE),
    *(make_pvc(f"csi-ebs.csi.aws.com-{i}", volume_name=f"csi-ebs.csi.aws.com-{i}", bound=True) for i in range(4)),
    make_pvc("csi-gce-0", volume_name="csi-gce-0", bound=True),
    ebs_pv("intree-0"),
    ebs_pv("intree-1"),
    make_pvc("intree-0", volume_name="intree-0", bound=True),
    make_pvc("intree-1", volume_name="intree-1", bound=True),
    make_storage_class("csi-sc", provisioner=EBS),
    make_storage_class("intree-sc", provisioner="kubernetes.io/aws-ebs"),
    make_pvc("unbound-0", storage_class="csi-sc"),
    make_pvc("unbound-intree", storage_class="intree-sc"),
]


def pod(name: str, *claims: str, node: str = "", inline: list[dict[str, Any]] = ()) -> dict[str, Any]:  # type: ignore[assignment]
    w = make_pod(name)
    for c in claims:
        w.pvc(c)
    for i, v in enumerate(inline):
        w.volume({"name": f"inline-{i}", **v})
    if node:
        w.node(node)
    return w.obj()


CASES = [
    (
        "fits when the node has room",
        pod("new", "csi-ebs.csi.aws.com-0"),
        [pod("e", "csi-ebs.csi.aws.com-1", node="n")],
        {EBS: 2},
        (),
        None,
    ),
    (
        "doesn't fit over the limit",
        pod("new", "csi-ebs.csi.aws.com-0"),
        [pod("e", "csi-ebs.csi.aws.com-1", "csi-ebs.csi.aws.com-2", node="n")],
        {EBS: 2},
        (),
        EXCEEDED,
    ),
    (
        "a volume already attached costs nothing",
        pod("new", "csi-ebs.csi.aws.com-1"),
        [pod("e", "csi-ebs.csi.aws.com-1", "csi-ebs.csi.aws.com-2", node="n")],
        {EBS: 2},
        (),
        None,
    ),
    (
        "limits are per driver",
        pod("new", "csi-gce-0"),
        [pod("e", "csi-ebs.csi.aws.com-1", "csi-ebs.csi.aws.com-2", node="n")],
        {EBS: 2, GCE: 1},
        (),
        None,
    ),
    (
        "no limit reported",
        pod("new", "csi-ebs.csi.aws.com-0"),
        [pod("e", "csi-ebs.csi.aws.com-1", node="n")],
        {EBS: None},
        (),
        None,
    ),
    (
        "unbound claim counts by its class's driver",
        pod("new", "unbound-0"),
        [pod("e", "csi-ebs.csi.aws.com-1", node="n")],
        {EBS: 1},
        (),
        EXCEEDED,
    ),
    (
        "in-tree volumes count once migrated",
        pod("new", "intree-0"),
        [pod("e", "intree-1", node="n")],
        {EBS: 1},
        ("kubernetes.io/aws-ebs",),
        EXCEEDED,
    ),
    (
        "in-tree volumes not migrated are not counted",
        pod("new", "intree-0"),
        [pod("e", "intree-1", node="n")],
        {EBS: 1},
        (),
        None,
    ),
    (
        "migrated inline volumes count",
        pod("new", inline=[{"awsElasticBlockStore": {"volumeID": "vol-1"}}]),
        [pod("e", "csi-ebs.csi.aws.com-1", node="n")],
        {EBS: 1},
        ("kubernetes.io/aws-ebs",),
        EXCEEDED,
    ),
    (
        "unbound claim of a migrated in-tree class counts",
        pod("new", "unbound-intree"),
        [pod("e", "csi-ebs.csi.aws.com-1", node="n")],
        {EBS: 1},
        ("kubernetes.io/aws-ebs",),
        EXCEEDED,
    ),
    (
        "missing claim",
        pod("new", "nope"),
        [],
        {EBS: 1},
        (),
        Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'looking up PVC default/nope: persistentvolumeclaim "nope" not found'
        ),
    ),
]


@pytest.mark.parametrize(
    ("new_pod", "existing", "limits", "migrated", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_csi_limits(new_pod, existing, limits, migrated, want):
    snapshot = build_snapshot([make_node("n").obj()], existing)
    lister = lister_with([*OBJECTS, make_csi_node("n", limits, migrated)])
    pl = new_plugin(csi.new, None, snapshot, lister)
    assert filter_statuses(pl, new_pod, snapshot, batch=False) == [want]


def test_node_allocatable_limits_apply_without_csinode():
    node = make_node("n").capacity({"cpu": "1", csi_attach_limit_key(EBS): "1"}).obj()
    snapshot = build_snapshot([node], [pod("e", "csi-ebs.csi.aws.com-1", node="n")])
    pl = new_plugin(csi.new, None, snapshot, lister_with(OBJECTS))
    assert filter_statuses(pl, pod("new", "csi-ebs.csi.aws.com-0"), snapshot, batch=False) == [EXCEEDED]


def test_long_driver_names_are_hashed_into_the_limit_key():
    key = csi_attach_limit_key("a" * 60)
    assert len(key) == len("attachable-volumes-csi-") + 23 + 16 and key.startswith("attachable-volumes-csi-" + "a" * 23)
    assert csi_attach_limit_key(EBS) == "attachable-volumes-csi-ebs.csi.aws.com"


def test_a_kept_count_follows_the_node_and_the_objects_it_read():
    """The per-node volumes kept between cycles are recounted when the node's pods change and when a claim or
    volume changes: the same plugin, as the scheduler keeps it, across snapshots and store changes."""
    cluster = lister_with([*OBJECTS, make_csi_node("n", {EBS: 1}, ())])
    snapshot = build_snapshot([make_node("n").obj()], [pod("e", "csi-ebs.csi.aws.com-1", node="n")])
    pl = new_plugin(csi.new, None, snapshot, cluster)
    new = pod("new", "csi-ebs.csi.aws.com-0")
    assert filter_statuses(pl, new, snapshot, batch=False) == [EXCEEDED]
    # The existing pod's claim now points at the volume the new pod uses: attached already, no extra count.
    claim = cluster.get("PersistentVolumeClaim", "default", "csi-ebs.csi.aws.com-1")
    assert claim is not None
    cluster.update({**claim, "spec": {**claim["spec"], "volumeName": "csi-ebs.csi.aws.com-0"}})
    assert filter_statuses(pl, new, snapshot, batch=False) == [None]
    # A node without the existing pod: nothing attached.
    lone = build_snapshot([make_node("n").obj()], [])
    assert filter_statuses(pl, pod("other", "csi-ebs.csi.aws.com-2"), lone, batch=False) == [None]


# The per-cycle memo of the pod's volumes (one per migrated-plugins annotation) and the per-node memo of the
# node's volumes against `filter_plain`, which works both out again on every node.

CLAIMS = ["csi-ebs.csi.aws.com-0", "csi-ebs.csi.aws.com-1", "csi-gce-0", "intree-0", "intree-1", "unbound-0",
          "unbound-intree", "nope"]  # fmt: skip
MIGRATIONS = [
    (),
    ("kubernetes.io/aws-ebs",),
    ("kubernetes.io/gce-pd",),
    ("kubernetes.io/aws-ebs", "kubernetes.io/gce-pd"),
]
INLINE = [{"awsElasticBlockStore": {"volumeID": "vol-1"}}, {"gcePersistentDisk": {"pdName": "disk-1"}}]


def disagreements(pl: csi.CSILimits, new_pod: dict[str, Any], snapshot: Any) -> list[str]:
    """Nodes where `filter` (one cycle state, memos kept) and `filter_plain` give different statuses."""
    info = new_pod_info(new_pod)
    state = CycleState()
    fast = [pl.filter(state, info, ni) for ni in snapshot.node_info_list]
    plain = [pl.filter_plain(CycleState(), info, ni) for ni in snapshot.node_info_list]
    return [ni.name for ni, f, p in zip(snapshot.node_info_list, fast, plain, strict=True) if f != p]


@st.composite
def volume_clusters(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[Any], dict[str, Any]]:
    """Nodes with CSINodes (or none) that differ in migration and limits, pods on them, and a new pod."""
    nodes, pods, csi_nodes = [], [], []
    for i in range(draw(st.integers(1, 5))):
        name = f"n{i}"
        nodes.append(make_node(name).obj())
        if draw(st.booleans()):
            limits = {d: draw(st.none() | st.integers(0, 3)) for d in (EBS, GCE)}
            csi_nodes.append(make_csi_node(name, limits, draw(st.sampled_from(MIGRATIONS))))
        for j in range(draw(st.integers(0, 2))):
            claims = draw(st.lists(st.sampled_from(CLAIMS[:-1]), max_size=3, unique=True))
            pods.append(pod(f"e-{i}-{j}", *claims, node=name))
    claims = draw(st.lists(st.sampled_from(CLAIMS), max_size=3, unique=True))
    inline = draw(st.lists(st.sampled_from(INLINE), max_size=2))
    return nodes, pods, csi_nodes, pod("new", *claims, inline=inline)


@given(volume_clusters())
@settings(max_examples=80, deadline=None)
def test_filter_agrees_with_its_plain_twin_on_every_node(cluster: Any) -> None:
    nodes, pods, csi_nodes, new_pod = cluster
    snapshot = build_snapshot(nodes, pods)
    pl = new_plugin(csi.new, None, snapshot, lister_with([*OBJECTS, *csi_nodes]))
    assert disagreements(pl, new_pod, snapshot) == []


def test_the_twin_comparison_notices_a_memo_that_ignores_the_csinode():
    """A memo keyed on nothing carries the first node's answer to a node that has not migrated EBS (and so counts
    nothing against its limit of 0)."""

    class OneAnswer(csi.CSILimits):
        def _new_volumes(self, cycle: Any, pod: Any, csi_node: Any) -> Any:
            if "" not in cycle.new_volumes:
                cycle.new_volumes[""] = self.new_volumes_plain(pod, csi_node)
            return cycle.new_volumes[""]

    nodes = [make_node("migrated").obj(), make_node("not-migrated").obj()]
    snapshot = build_snapshot(nodes, [])
    lister = lister_with(
        [
            *OBJECTS,
            make_csi_node("migrated", {EBS: 1}, ("kubernetes.io/aws-ebs",)),
            make_csi_node("not-migrated", {EBS: 0}),
        ]
    )
    new_pod = pod("new", "intree-0")
    assert disagreements(new_plugin(csi.new, None, snapshot, lister), new_pod, snapshot) == []
    assert disagreements(OneAnswer(new_plugin(csi.new, None, snapshot, lister).handle), new_pod, snapshot) == [
        "not-migrated"
    ]
