"""VolumeRestrictions: upstream's disk-conflict tables (GCE PD, AWS EBS, RBD, ISCSI) and ReadWriteOncePod cases."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.plugins.volumerestrictions import volume_restrictions
from kubesched.framework.plugins.volumerestrictions.volume_restrictions import (
    ERR_REASON_DISK_CONFLICT,
    ERR_REASON_RWOP_CONFLICT,
)
from kubesched.framework.status import Code, Status
from kubesched.framework.types import new_pod_info
from kubesched_testing.framework import build_snapshot, filter_statuses, lister_with, new_plugin
from kubesched_testing.volumes import make_pvc
from kubesched_testing.wrappers import make_node, make_pod

CONFLICT = Status(Code.UNSCHEDULABLE, ERR_REASON_DISK_CONFLICT)


def pod_with(*volumes: dict[str, Any], name: str = "p", node: str = "") -> dict[str, Any]:
    w = make_pod(name)
    for i, v in enumerate(volumes):
        w.volume({"name": f"v{i}", **v})
    if node:
        w.node(node)
    return w.obj()


GCE_FOO = {"gcePersistentDisk": {"pdName": "foo"}}
GCE_BAR = {"gcePersistentDisk": {"pdName": "bar"}}
EBS_FOO = {"awsElasticBlockStore": {"volumeID": "foo"}}
EBS_BAR = {"awsElasticBlockStore": {"volumeID": "bar"}}
RBD_1 = {"rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar"}}
RBD_2 = {"rbd": {"monitors": ["c", "d"], "pool": "foo", "image": "bar"}}
RBD_3 = {"rbd": {"monitors": ["b", "e"], "pool": "foo", "image": "bar"}}
ISCSI_1 = {"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:storage.target01", "lun": 0}}
ISCSI_2 = {"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2017-12.server:storage.target01", "lun": 0}}


def ro(v: dict[str, Any]) -> dict[str, Any]:
    (kind, src), *_ = v.items()
    return {kind: dict(src, readOnly=True)}


@pytest.mark.parametrize(
    ("pod", "existing", "want"),
    [
        (pod_with(), [], None),
        (pod_with(), [GCE_FOO], None),
        (pod_with(GCE_FOO), [GCE_FOO], CONFLICT),
        (pod_with(GCE_BAR), [GCE_FOO], None),
        (pod_with(ro(GCE_FOO)), [ro(GCE_FOO)], None),
        (pod_with(ro(GCE_FOO)), [GCE_FOO], CONFLICT),
        (pod_with(EBS_FOO), [EBS_FOO], CONFLICT),
        (pod_with(ro(EBS_FOO)), [ro(EBS_FOO)], CONFLICT),
        (pod_with(EBS_BAR), [EBS_FOO], None),
        (pod_with(RBD_1), [RBD_1], CONFLICT),
        (pod_with(RBD_3), [RBD_1], CONFLICT),
        (pod_with(RBD_2), [RBD_1], None),
        (pod_with(ro(RBD_1)), [ro(RBD_1)], None),
        (pod_with(ISCSI_1), [ISCSI_1], CONFLICT),
        (pod_with(ISCSI_2), [ISCSI_1], None),
        (pod_with(ro(ISCSI_1)), [ro(ISCSI_1)], None),
    ],
    ids=[
        "nothing",
        "one state",
        "same gce state",
        "different gce state",
        "gce both read-only",
        "gce one read-only",
        "same ebs state",
        "ebs read-only still conflicts",
        "different ebs state",
        "same rbd state",
        "rbd monitors overlap",
        "different rbd monitors",
        "rbd both read-only",
        "same iscsi state",
        "different iscsi iqn",
        "iscsi both read-only",
    ],
)
def test_disk_conflicts(pod, existing, want):
    node = make_node("n").obj()
    pods = [pod_with(*existing, name="existing", node="n")] if existing else []
    snapshot = build_snapshot([node], pods)
    pl = new_plugin(volume_restrictions.new, None, snapshot, lister_with())
    assert filter_statuses(pl, pod, snapshot, batch=False) == [want]


def rwop_pod(name: str, *claims: str, node: str = "") -> dict[str, Any]:
    w = make_pod(name)
    for c in claims:
        w.pvc(c)
    if node:
        w.node(node)
    return w.obj()


RWOP_1 = make_pvc("claim-with-rwop-1", access_modes=("ReadWriteOncePod",))
RWOP_2 = make_pvc("claim-with-rwop-2", access_modes=("ReadWriteOncePod",))
RWX = make_pvc("claim-with-rwx", access_modes=("ReadWriteMany",))


@pytest.mark.parametrize(
    ("pod", "existing", "want_pre_filter", "want_filter"),
    [
        (rwop_pod("p", "claim-with-rwop-1"), [], Status(Code.SKIP), None),
        (rwop_pod("p", "claim-with-rwx"), [rwop_pod("e", "claim-with-rwx", node="n")], Status(Code.SKIP), None),
        (
            rwop_pod("p", "claim-with-rwop-1"),
            [rwop_pod("e", "claim-with-rwop-1", node="n"), rwop_pod("f", "claim-with-rwx", node="n")],
            None,
            Status(Code.UNSCHEDULABLE, ERR_REASON_RWOP_CONFLICT),
        ),
        (
            rwop_pod("p", "claim-with-rwop-1", "claim-with-rwop-2"),
            [rwop_pod("e", "claim-with-rwop-1", "claim-with-rwop-2", node="n")],
            None,
            Status(Code.UNSCHEDULABLE, ERR_REASON_RWOP_CONFLICT),
        ),
        (
            rwop_pod("p", "missing"),
            [],
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'persistentvolumeclaim "missing" not found'),
            None,
        ),
    ],
    ids=["no conflict", "no rwop claims", "access mode conflict", "two conflicts", "claim missing"],
)
def test_read_write_once_pod(pod, existing, want_pre_filter, want_filter):
    snapshot = build_snapshot([make_node("n").obj()], existing)
    pl = new_plugin(volume_restrictions.new, None, snapshot, lister_with([RWOP_1, RWOP_2, RWX]))
    state = CycleState()
    info = new_pod_info(pod)
    _, s = pl.pre_filter(state, info, snapshot.node_info_list)
    assert s == want_pre_filter
    if s is None:
        assert pl.filter(state, info, snapshot.node_info_list[0]) == want_filter


def test_rwop_conflict_disappears_when_the_holder_is_removed_in_a_dry_run():
    """AddPod/RemovePod keep the conflict count in step with preemption's what-ifs."""
    holder = rwop_pod("e", "claim-with-rwop-1", node="n")
    snapshot = build_snapshot([make_node("n").obj()], [holder])
    pl = new_plugin(volume_restrictions.new, None, snapshot, lister_with([RWOP_1]))
    state = CycleState()
    info = new_pod_info(rwop_pod("p", "claim-with-rwop-1"))
    pl.pre_filter(state, info, snapshot.node_info_list)
    ni = snapshot.node_info_list[0]
    pl.remove_pod(state, info, new_pod_info(holder), ni)
    assert pl.filter(state, info, ni) is None
    pl.add_pod(state, info, new_pod_info(holder), ni)
    assert pl.filter(state, info, ni) == Status(Code.UNSCHEDULABLE, ERR_REASON_RWOP_CONFLICT)
