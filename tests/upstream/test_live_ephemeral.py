"""Generic ephemeral volumes under `kubesched run`, side by side with kube-scheduler v1.36 on a real API server.

The control plane has no kube-controller-manager, so the test plays its part: it makes a
pod's claim `<pod>-<volume>` as the ephemeral volume controller would (owned by the pod)
and binds it to a volume as the PV controller would. Both schedulers must say the same
while the claim is missing or belongs to someone else, and bind the pod once it is there.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from functools import partial
from typing import Any

import pytest
from tests.upstream.test_live import PODS, Side, side_by_side, wait_for

from kubesched.backend.kube.api import KubeAPI
from kubesched_testing.controlplane import ControlPlane

pytestmark = pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")
PVCS = "/api/v1/namespaces/default/persistentvolumeclaims"
CLAIM_SPEC = {"accessModes": ["ReadWriteOnce"], "storageClassName": "", "resources": {"requests": {"storage": "1Gi"}}}


class VolumeSide(Side):
    def ephemeral_pod(self, name: str) -> dict[str, Any]:
        spec = {
            "schedulerName": self.name,
            "nodeSelector": {"side": self.name},
            "containers": [{"name": "c", "image": "busybox"}],
            "terminationGracePeriodSeconds": 0,
            "volumes": [{"name": "work", "ephemeral": {"volumeClaimTemplate": {"spec": CLAIM_SPEC}}}],
        }
        meta = {"name": f"{self.name}-{name}", "namespace": "default"}
        return self.api.request("POST", PODS, body={"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})

    def claim(self, pod: str, owner: dict[str, Any] | None = None, volume: str = "") -> dict[str, Any]:
        """The claim of `pod`'s volume `work`: as the ephemeral volume controller makes it when `owner` is the pod."""
        meta: dict[str, Any] = {"name": f"{self.name}-{pod}-work", "namespace": "default"}
        spec = dict(CLAIM_SPEC)
        if owner is not None:
            ref = {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"],
            }
            meta["ownerReferences"] = [{**ref, "controller": True, "blockOwnerDeletion": True}]
        if volume:
            spec["volumeName"] = volume
            meta["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
        body = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec}
        return self.api.request("POST", PVCS, body=body)

    def bound_volume(self, pod: dict[str, Any]) -> None:
        """A local volume on this side's nodes, and the pod's claim bound to it, as the PV controller leaves them."""
        name = f"{self.name}-pv"
        affinity = {
            "required": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "side", "operator": "In", "values": [self.name]}]}]
            }
        }
        pv = {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": name},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "",
                "local": {"path": "/mnt/disk"},
                "nodeAffinity": affinity,
            },
        }
        self.api.request("POST", "/api/v1/persistentvolumes", body=pv)
        claim = self.claim(pod["metadata"]["name"].removeprefix(f"{self.name}-"), owner=pod, volume=name)
        ref = {"kind": "PersistentVolumeClaim", "namespace": "default", "name": claim["metadata"]["name"]}
        patch = {"spec": {"claimRef": {**ref, "uid": claim["metadata"]["uid"]}}}
        self.api.request(
            "PATCH", f"/api/v1/persistentvolumes/{name}", body=patch, content_type="application/merge-patch+json"
        )
        for path in (f"/api/v1/persistentvolumes/{name}/status", f"{PVCS}/{claim['metadata']['name']}/status"):
            body = {"status": {"phase": "Bound"}}
            self.api.request("PATCH", path, body=body, content_type="application/merge-patch+json")


@pytest.fixture
def sides(control_plane: ControlPlane, admin_api: KubeAPI) -> Iterator[tuple[VolumeSide, VolumeSide]]:
    with side_by_side(control_plane, admin_api, VolumeSide) as (ours, theirs, _):
        for side in (ours, theirs):
            side.node("a")
        yield ours, theirs


def _written(side: Side, name: str, what: str) -> Any:
    return side.writes(name)[what]


def _notes(side: Side, name: str) -> list[str]:
    return [e[3] for e in side.writes(name)["events"]]


def test_a_missing_claim_is_waited_for_then_the_pod_binds(sides: tuple[VolumeSide, VolumeSide]) -> None:
    pods = {side.name: side.ephemeral_pod("p") for side in sides}
    for side in sides:
        wait_for(partial(_written, side, "p", "events"), f"{side.name}'s FailedScheduling")
    ours, theirs = (side.writes("p") for side in sides)
    assert ours == theirs, f"ours:   {ours}\ntheirs: {theirs}"
    assert (
        'waiting for ephemeral volume controller to create the persistentvolumeclaim "<side>-p-work"'
        in ours["events"][0][3]
    )
    for side in sides:
        side.bound_volume(pods[side.name])
    for side in sides:
        wait_for(partial(_written, side, "p", "node"), f"{side.name}'s pod bound")
    ours, theirs = (_retries_as_one(side.writes("p")) for side in sides)
    assert ours == theirs, f"ours:   {ours}\ntheirs: {theirs}"  # in full: the messages differ deep inside
    assert ours["node"] == "<side>-a"


def _retries_as_one(writes: dict[str, Any]) -> dict[str, Any]:
    """The writes with back-to-back repeats of one event as one. The volume and its claim reach a scheduler by
    two watches: when the volume's event comes first, the retry it starts fails the same way once more, which
    is timing, not a decision."""
    events = writes["events"]
    kept = [e for i, e in enumerate(events) if i == 0 or e != events[i - 1]]
    return {**writes, "events": kept}


def test_a_claim_the_pod_does_not_own_is_refused_alike(sides: tuple[VolumeSide, VolumeSide]) -> None:
    for side in sides:
        side.claim("q")
    # The claim and the pod come on two watches: a scheduler that sees the pod first waits for the claim
    # instead (the test above), whichever scheduler it is. The claims go a second ahead of the pods.
    time.sleep(1.0)
    for side in sides:
        side.ephemeral_pod("q")
    for side in sides:
        wait_for(partial(_written, side, "q", "events"), f"{side.name}'s FailedScheduling")
    ours, theirs = (side.writes("q") for side in sides)
    assert ours == theirs, f"ours:   {ours}\ntheirs: {theirs}"
    assert (
        "PVC default/<side>-q-work was not created for pod default/<side>-q (pod is not owner)"
        in _notes(sides[0], "q")[0]
    )
