"""`kubesched run` allocating devices on a real kube-apiserver v1.36, side by side with kube-scheduler v1.36.

Each scheduler has its own node with its own driver's ResourceSlice (two devices), and
its own ResourceClaims; the same pods go to both. What each wrote must match once the
side's name is set aside: the pods' nodes, and each claim's finalizer, allocation (which
devices, for which request, the node selector, an allocationTimestamp) and reservedFor;
for a pod asking for more devices than the node has, the same unschedulable condition.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from tests.upstream.test_live import Side, side_by_side, wait_for

from kubesched.backend.kube.api import KubeAPI
from kubesched_testing.controlplane import ControlPlane

pytestmark = pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")
RESOURCE = "/apis/resource.k8s.io/v1"
CLAIMS = f"{RESOURCE}/namespaces/default/resourceclaims"


class DRASide(Side):
    def driver(self) -> str:
        return f"{self.name}.example.com"

    def slice(self, devices: int) -> None:
        self.api.request(
            "POST",
            f"{RESOURCE}/resourceslices",
            body={
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"{self.name}-gpus"},
                "spec": {
                    "driver": self.driver(),
                    "nodeName": f"{self.name}-n1",
                    "pool": {"name": f"{self.name}-n1", "generation": 1, "resourceSliceCount": 1},
                    "devices": [{"name": f"gpu-{i}", "attributes": {"index": {"int": i}}} for i in range(devices)],
                },
            },
        )
        self.api.request(
            "POST",
            f"{RESOURCE}/deviceclasses",
            body={
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceClass",
                "metadata": {"name": self.driver()},
                "spec": {
                    "selectors": [{"cel": {"expression": f'device.driver == "{self.driver()}"'}}],
                    "extendedResourceName": f"{self.driver()}/gpu",
                },
            },
        )

    def claim(self, name: str, count: int, selector: str = "") -> None:
        exactly: dict[str, Any] = {"deviceClassName": self.driver(), "count": count}
        if selector:
            exactly["selectors"] = [{"cel": {"expression": selector}}]
        self.api.request(
            "POST",
            CLAIMS,
            body={
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": f"{self.name}-{name}"},
                "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}},
            },
        )

    def claim_pod(self, name: str, claim: str) -> None:
        spec: dict[str, Any] = {
            "schedulerName": self.name,
            "nodeSelector": {"side": self.name},
            "containers": [{"name": "c", "image": "busybox", "resources": {"claims": [{"name": "gpu"}]}}],
            "resourceClaims": [{"name": "gpu", "resourceClaimName": f"{self.name}-{claim}"}],
            "terminationGracePeriodSeconds": 0,
        }
        meta = {"name": f"{self.name}-{name}", "namespace": "default"}
        self.api.request(
            "POST", "/api/v1/namespaces/default/pods", body={"kind": "Pod", "metadata": meta, "spec": spec}
        )

    def extended_pod(self, name: str, count: int) -> None:
        """A pod asking for the class's extended resource: served by DRA, the nodes have no device plugin for it."""
        resources = {"requests": {f"{self.driver()}/gpu": str(count)}, "limits": {f"{self.driver()}/gpu": str(count)}}
        spec: dict[str, Any] = {
            "schedulerName": self.name,
            "nodeSelector": {"side": self.name},
            "containers": [{"name": "c", "image": "busybox", "resources": resources}],
            "terminationGracePeriodSeconds": 0,
        }
        meta = {"name": f"{self.name}-{name}", "namespace": "default"}
        self.api.request(
            "POST", "/api/v1/namespaces/default/pods", body={"kind": "Pod", "metadata": meta, "spec": spec}
        )

    def extended_claim_of(self, pod: str) -> dict[str, Any]:
        """The claim the scheduler made for the pod's extended resources, and what the pod's status says of it."""
        found = [
            c
            for c in self.api.request("GET", CLAIMS).get("items") or ()
            if any(r.get("name") == f"{self.name}-{pod}" for r in c["metadata"].get("ownerReferences") or ())
        ]
        assert len(found) == 1, found
        claim = found[0]
        assert claim["metadata"]["name"].startswith(f"{self.name}-{pod}-extended-resources-")
        status = (self.get(pod) or {}).get("status", {}).get("extendedResourceClaimStatus") or {}
        assert status.pop("resourceClaimName") == claim["metadata"]["name"]
        written = self.written_claim(claim["metadata"]["name"][len(self.name) + 1 :])
        return {
            "annotations": claim["metadata"].get("annotations"),
            "spec": self.plain_deep(claim["spec"]),
            "claim": written,
            "pod status": self.plain_deep(status),
        }

    def written_claim(self, name: str) -> dict[str, Any]:
        claim = self.api.request("GET", f"{CLAIMS}/{self.name}-{name}")
        status = copy.deepcopy(claim.get("status") or {})
        allocation = status.get("allocation")
        if allocation is not None:
            assert allocation.pop("allocationTimestamp", None), "the scheduler stamps the allocation"
        for ref in status.get("reservedFor") or ():
            assert ref.pop("uid")
        return {"finalizers": claim["metadata"].get("finalizers"), "status": self.plain_deep(status)}

    def plain_deep(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: self.plain_deep(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.plain_deep(v) for v in value]
        return self.plain(value)


@pytest.fixture
def dra_sides(control_plane: ControlPlane, admin_api: KubeAPI) -> Iterator[tuple[DRASide, DRASide]]:
    """The live side by side, with each side's DRA objects; reset_cluster removes those too."""
    with side_by_side(control_plane, admin_api, DRASide) as (ours, theirs, _):
        yield ours, theirs


def test_claims_allocated_and_reserved_as_upstream(dra_sides: tuple[DRASide, DRASide]) -> None:
    for side in dra_sides:
        side.node("n1", cpu="4")
        side.slice(4)
        side.claim("one", 1)
        side.claim("two", 2, selector="device.attributes[device.driver].index > 0")
        side.claim("shared", 1)
        side.claim("too-many", 3)
    for side in dra_sides:
        side.claim_pod("a", "two")
        side.claim_pod("b", "one")
        side.claim_pod("c", "too-many")
    ours, theirs = dra_sides
    for side in dra_sides:
        wait_for(
            lambda s=side: all((s.get(p) or {}).get("spec", {}).get("nodeName") for p in "ab"), f"{side.name} a, b"
        )
        wait_for(lambda s=side: any(c.get("reason") == "Unschedulable" for c in s.writes("c")["conditions"]), "c")
    for pod in "abc":
        assert ours.writes(pod)["node"] == theirs.writes(pod)["node"]
        assert ours.writes(pod)["conditions"] == theirs.writes(pod)["conditions"], pod
    for claim in ("one", "two", "too-many"):
        assert ours.written_claim(claim) == theirs.written_claim(claim), claim
    two = ours.written_claim("two")["status"]["allocation"]["devices"]["results"]
    assert [r["device"] for r in two] == ["gpu-1", "gpu-2"]
    # Two pods sharing one claim: both reserved, on the same node.
    for side in dra_sides:
        side.claim_pod("d", "shared")
        side.claim_pod("e", "shared")
    for side in dra_sides:
        wait_for(
            lambda s=side: all((s.get(p) or {}).get("spec", {}).get("nodeName") for p in "de"), f"{side.name} d, e"
        )
    ours_shared, theirs_shared = ours.written_claim("shared"), theirs.written_claim("shared")
    for written in (ours_shared, theirs_shared):
        written["status"]["reservedFor"].sort(key=lambda r: r["name"])
    assert ours_shared == theirs_shared
    assert [r["name"] for r in ours_shared["status"]["reservedFor"]] == ["<side>-d", "<side>-e"]


def test_extended_resources_backed_by_dra_as_upstream(dra_sides: tuple[DRASide, DRASide]) -> None:
    """A pod asking for `<driver>/gpu: 2`: the scheduler creates its claim, allocates it and names it in the pod."""
    for side in dra_sides:
        side.node("n1", cpu="4")
        side.slice(3)
    # y comes once x is bound, so that each scheduler tries x first whatever its queue's order.
    for side in dra_sides:
        side.extended_pod("x", 2)
    for side in dra_sides:
        wait_for(lambda s=side: (s.get("x") or {}).get("spec", {}).get("nodeName"), f"{side.name} x bound")
        side.extended_pod("y", 2)  # one device left: cannot fit
    ours, theirs = dra_sides
    for side in dra_sides:
        wait_for(lambda s=side: any(c.get("reason") == "Unschedulable" for c in s.writes("y")["conditions"]), "y")
    assert ours.writes("x")["node"] == theirs.writes("x")["node"]
    assert ours.writes("y")["conditions"] == theirs.writes("y")["conditions"]
    assert ours.extended_claim_of("x") == theirs.extended_claim_of("x")
