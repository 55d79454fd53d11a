"""VolumeZone: upstream's TestSingleZone / TestMultiZone / TestWithBinding tables."""

from __future__ import annotations

import pytest

from kubesched.framework.plugins.volumezone import volume_zone
from kubesched.framework.plugins.volumezone.volume_zone import ERR_REASON_CONFLICT
from kubesched.framework.status import Code, Status
from kubesched_testing.framework import build_snapshot, filter_statuses, lister_with, new_plugin
from kubesched_testing.volumes import make_pv, make_pvc, make_storage_class
from kubesched_testing.wrappers import make_node, make_pod

BETA_ZONE, BETA_REGION = "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region"
GA_ZONE, GA_REGION = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"
CONFLICT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)

PVS = [
    make_pv("Vol_1", labels={BETA_ZONE: "us-west1-a"}),
    make_pv("Vol_2", labels={BETA_REGION: "us-west1", "uselessLabel": "none"}),
    make_pv("Vol_3", labels={BETA_REGION: "us-west1"}),
    make_pv("Vol_Stable_1", labels={GA_ZONE: "us-west1-a"}),
    make_pv("Vol_Stable_2", labels={GA_REGION: "us-west1", "uselessLabel": "none"}),
    make_pv("Vol_Multi", labels={BETA_ZONE: "us-west1-a__us-west1-b"}),
]
PVCS = [
    make_pvc("PVC_1", volume_name="Vol_1", bound=True),
    make_pvc("PVC_2", volume_name="Vol_2", bound=True),
    make_pvc("PVC_3", volume_name="Vol_3", bound=True),
    make_pvc("PVC_4", volume_name="Vol_not_exist", bound=True),
    make_pvc("PVC_Stable_1", volume_name="Vol_Stable_1", bound=True),
    make_pvc("PVC_Stable_2", volume_name="Vol_Stable_2", bound=True),
    make_pvc("PVC_Multi", volume_name="Vol_Multi", bound=True),
    make_pvc("PVC_NoSC"),
    make_pvc("PVC_EmptySC", storage_class=""),
    make_pvc("PVC_FakeSC", storage_class="Class_Fake"),
    make_pvc("PVC_WaitSC", storage_class="Class_Wait"),
    make_pvc("PVC_ImmediateSC", storage_class="Class_Immediate"),
]
CLASSES = [
    make_storage_class("Class_Wait"),
    make_storage_class("Class_Immediate", wait_for_first_consumer=False),
]


def node(**labels: str):
    w = make_node("host1")
    for k, v in labels.items():
        w.label(k, v)
    return w.obj()


CASES = [
    ("pod without volume", make_pod("p").obj(), node(**{BETA_ZONE: "us-west1-a"}), None),
    ("node without labels", make_pod("p").pvc("PVC_1").obj(), node(), None),
    ("beta zone label matched", make_pod("p").pvc("PVC_1").obj(), node(**{BETA_ZONE: "us-west1-a"}), None),
    ("beta region label matched", make_pod("p").pvc("PVC_2").obj(), node(**{BETA_REGION: "us-west1"}), None),
    (
        "beta region label doesn't match",
        make_pod("p").pvc("PVC_2").obj(),
        node(**{BETA_REGION: "no_us-west1"}),
        CONFLICT,
    ),
    ("beta zone label doesn't match", make_pod("p").pvc("PVC_1").obj(), node(**{BETA_ZONE: "no_us-west1-a"}), CONFLICT),
    ("zone label matched", make_pod("p").pvc("PVC_Stable_1").obj(), node(**{GA_ZONE: "us-west1-a"}), None),
    ("zone label doesn't match", make_pod("p").pvc("PVC_Stable_1").obj(), node(**{GA_ZONE: "no_us-west1-a"}), CONFLICT),
    ("region label matched", make_pod("p").pvc("PVC_Stable_2").obj(), node(**{GA_REGION: "us-west1"}), None),
    (
        "region label doesn't match",
        make_pod("p").pvc("PVC_Stable_2").obj(),
        node(**{GA_REGION: "no_us-west1"}),
        CONFLICT,
    ),
    (
        "pv with beta label, node with ga label, matched",
        make_pod("p").pvc("PVC_1").obj(),
        node(**{GA_ZONE: "us-west1-a"}),
        None,
    ),
    (
        "pv with beta label, node with ga label, don't match",
        make_pod("p").pvc("PVC_1").obj(),
        node(**{GA_ZONE: "us-west1-b"}),
        CONFLICT,
    ),
    ("multi-zone label matched", make_pod("p").pvc("PVC_Multi").obj(), node(**{BETA_ZONE: "us-west1-b"}), None),
    (
        "multi-zone label doesn't match",
        make_pod("p").pvc("PVC_Multi").obj(),
        node(**{BETA_ZONE: "us-west1-c"}),
        CONFLICT,
    ),
    (
        "label zone failure domain matched",
        make_pod("p").pvc("PVC_3").obj(),
        node(**{BETA_REGION: "us-west1", "uselessLabel": "none"}),
        None,
    ),
    (
        "unbound PVC of a WaitForFirstConsumer class is skipped",
        make_pod("p").pvc("PVC_WaitSC").obj(),
        node(**{BETA_ZONE: "us-west1-a"}),
        None,
    ),
]


@pytest.mark.parametrize(("pod", "node_obj", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_volume_zone(pod, node_obj, want):
    snapshot = build_snapshot([node_obj])
    pl = new_plugin(volume_zone.new, None, snapshot, lister_with([*PVS, *PVCS, *CLASSES]))
    assert filter_statuses(pl, pod, snapshot, batch=False) == [want]


@pytest.mark.parametrize(
    ("claim", "want"),
    [
        ("PVC_not_exist", 'persistentvolumeclaim "PVC_not_exist" not found'),
        ("PVC_4", 'persistentvolume "Vol_not_exist" not found'),
        ("PVC_NoSC", "PersistentVolumeClaim had no pv name and storageClass name"),
        ("PVC_EmptySC", "PersistentVolumeClaim had no pv name and storageClass name"),
        ("PVC_FakeSC", 'storageclass.storage.k8s.io "Class_Fake" not found'),
        ("PVC_ImmediateSC", "PersistentVolume had no name"),
    ],
)
def test_with_binding_errors(claim, want):
    """TestWithBinding: what cannot be read is unresolvable, with the lister's words."""
    snapshot = build_snapshot([node(**{BETA_ZONE: "us-west1-a"})])
    pl = new_plugin(volume_zone.new, None, snapshot, lister_with([*PVS, *PVCS, *CLASSES]))
    got = filter_statuses(pl, make_pod("p").pvc(claim).obj(), snapshot, batch=False)
    assert got == [Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, want)]
