"""EBSLimits and friends: cases after upstream's TestEBSLimits / TestNonCSILimits."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.plugins.nodevolumelimits import non_csi
from kubesched.framework.plugins.nodevolumelimits.csi import ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED
from kubesched.framework.status import Code, Status
from kubesched_testing.framework import build_snapshot, filter_statuses, lister_with, new_plugin
from kubesched_testing.volumes import make_csi_node, make_pv, make_pvc, make_storage_class
from kubesched_testing.wrappers import make_node, make_pod

EXCEEDED = Status(Code.UNSCHEDULABLE, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
OBJECTS = [
    make_pv("ebs-pv", source={"awsElasticBlockStore": {"volumeID": "ebsVol"}}),
    make_pv("gce-pv", source={"gcePersistentDisk": {"pdName": "gceVol"}}),
    make_pvc("ebs-claim", volume_name="ebs-pv", bound=True),
    make_pvc("gce-claim", volume_name="gce-pv", bound=True),
    make_pvc("unbound-ebs", storage_class="ebs-class"),
    make_pvc("unbound-other", storage_class="other-class"),
    make_pvc("missing-pv", volume_name="no-such-pv", bound=True, storage_class="ebs-class"),
    make_storage_class("ebs-class", provisioner="kubernetes.io/aws-ebs"),
    make_storage_class("other-class", provisioner="example.com/other"),
]


def pod(*volumes: str, node: str = "", claims: tuple[str, ...] = ()) -> dict[str, Any]:
    w = make_pod("p")
    for v in volumes:
        w = w.volume({"name": v, "awsElasticBlockStore": {"volumeID": v}})
    for c in claims:
        w = w.pvc(c)
    if node:
        w = w.node(node)
    return w.obj()


CASES: list[tuple[str, dict[str, Any], list[dict[str, Any]], int | None, Status | None]] = [
    ("fits when the limit is 4", pod("a"), [pod("b", "c", node="n"), pod("d", node="n")], 4, None),
    ("doesn't fit when the limit is 2", pod("a"), [pod("b", "c", node="n"), pod("d", node="n")], 2, EXCEEDED),
    ("a new pod with two volumes over the limit", pod("a", "b"), [pod("c", node="n")], 2, EXCEEDED),
    ("volumes already on the node count once", pod("b", "c"), [pod("b", "c", node="n")], 2, None),
    ("a pod without this disk type always fits", pod(claims=("gce-claim",)), [pod("b", "c", node="n")], 2, None),
    ("a bound claim counts its disk", pod(claims=("ebs-claim",)), [pod("b", "c", node="n")], 2, EXCEEDED),
    ("a bound claim to a disk already attached", pod(claims=("ebs-claim",)), [pod("ebsVol", "c", node="n")], 2, None),
    ("an unbound claim of an EBS class counts", pod(claims=("unbound-ebs",)), [pod("b", "c", node="n")], 2, EXCEEDED),
    ("an unbound claim of another class does not", pod(claims=("unbound-other",)), [pod("b", "c", node="n")], 2, None),
    (
        "a claim whose PV is missing counts by class",
        pod(claims=("missing-pv",)),
        [pod("b", "c", node="n")],
        2,
        EXCEEDED,
    ),
    ("the default EBS limit is 39", pod("x"), [pod(*[f"v{i}" for i in range(39)], node="n")], None, EXCEEDED),
]


@pytest.mark.parametrize(("name", "new_pod", "existing", "limit", "want"), CASES, ids=[c[0] for c in CASES])
def test_ebs_limits(
    name: str, new_pod: dict[str, Any], existing: list[dict[str, Any]], limit: int | None, want: Status | None
) -> None:
    node = make_node("n").capacity({"cpu": "1", **({"attachable-volumes-aws-ebs": str(limit)} if limit else {})})
    snap = build_snapshot([node.obj()], existing)
    plugin = new_plugin(non_csi.new_ebs, None, snap, lister_with(OBJECTS))
    assert filter_statuses(plugin, new_pod, snap, batch=False) == [want]


def test_missing_claim_of_the_new_pod_is_an_error() -> None:
    snap = build_snapshot([make_node("n").obj()])
    plugin = new_plugin(non_csi.new_ebs, None, snap, lister_with(OBJECTS))
    [status] = filter_statuses(plugin, pod(claims=("nope",)), snap, batch=False)
    assert status is not None and status.code == Code.ERROR
    assert status.message() == 'looking up PVC default/nope: persistentvolumeclaim "nope" not found'


def test_migrated_node_defers_to_node_volume_limits() -> None:
    node = make_node("n").capacity({"attachable-volumes-aws-ebs": "1"}).obj()
    snap = build_snapshot([node], [pod("b", node="n")])
    objects = [*OBJECTS, make_csi_node("n", {"ebs.csi.aws.com": None}, migrated=("kubernetes.io/aws-ebs",))]
    plugin = new_plugin(non_csi.new_ebs, None, snap, lister_with(objects))
    assert filter_statuses(plugin, pod("a"), snap, batch=False) == [None]


def test_nitro_instances_default_to_25_and_env_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    labels = {"node.kubernetes.io/instance-type": "m5.large"}
    assert non_csi.default_limit(non_csi.EBS, labels) == 25
    assert non_csi.default_limit(non_csi.EBS, {"node.kubernetes.io/instance-type": "m4.large"}) == 39
    assert non_csi.default_limit(non_csi.GCE_PD, labels) == 16
    monkeypatch.setenv(non_csi.KUBE_MAX_PD_VOLS, "7")
    assert non_csi.default_limit(non_csi.AZURE_DISK, {}) == 7


def test_each_disk_type_counts_only_its_own() -> None:
    gce = make_pod("p").volume({"name": "g", "gcePersistentDisk": {"pdName": "g1"}}).obj()
    on_node = make_pod("q").node("n").volume({"name": "g", "gcePersistentDisk": {"pdName": "g2"}}).obj()
    node = make_node("n").capacity({"attachable-volumes-gce-pd": "1", "attachable-volumes-aws-ebs": "1"}).obj()
    snap = build_snapshot([node], [on_node])
    lister = lister_with(OBJECTS)
    assert filter_statuses(new_plugin(non_csi.new_gce_pd, None, snap, lister), gce, snap, batch=False) == [EXCEEDED]
    assert filter_statuses(new_plugin(non_csi.new_ebs, None, snap, lister), gce, snap, batch=False) == [None]
