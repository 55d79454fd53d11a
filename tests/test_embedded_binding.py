"""The embedded cluster's pods/binding answers as v1.36's API server does (compared live in tests/upstream)."""

from __future__ import annotations

import pytest

from kubesched.backend.embedded.cluster import ConflictError, EmbeddedCluster
from kubesched.framework.types import new_pod_info
from kubesched_testing.cluster import stored

NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {
        "name": "n1",
        "labels": {"topology.kubernetes.io/zone": "z1", "topology.kubernetes.io/region": "r1", "disk": "ssd"},
    },
}


DELETED_AT = "2026-01-01T00:00:00Z"


def pod(name: str, **spec: object) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "a"}},
        "spec": {"containers": [{"name": "c", "image": "i"}], **spec},
        "status": {"nominatedNodeName": "n1"},
    }


def cluster() -> EmbeddedCluster:
    c = EmbeddedCluster()
    c.create(dict(NODE))
    return c


def test_binding_copies_topology_labels_clears_nomination_and_marks_scheduled() -> None:
    c = cluster()
    c.create(pod("p"))
    c.bind(new_pod_info(stored(c, "Pod", "default", "p")), "n1")
    got = stored(c, "Pod", "default", "p")
    assert got["spec"]["nodeName"] == "n1"
    assert got["metadata"]["labels"] == {
        "app": "a",
        "topology.kubernetes.io/zone": "z1",
        "topology.kubernetes.io/region": "r1",
    }
    assert "nominatedNodeName" not in got["status"]
    assert [(x["type"], x["status"]) for x in got["status"]["conditions"]] == [("PodScheduled", "True")]


def test_pod_created_bound_gets_topology_labels() -> None:
    c = cluster()
    c.create(pod("p", nodeName="n1"))
    assert stored(c, "Pod", "default", "p")["metadata"]["labels"]["topology.kubernetes.io/zone"] == "z1"


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        (pod("gated", schedulingGates=[{"name": "g"}]), "pod gated has non-empty .spec.schedulingGates"),
        (
            {**pod("going"), "metadata": {"name": "going", "namespace": "default", "deletionTimestamp": DELETED_AT}},
            "pod going is being deleted, cannot be assigned to a host",
        ),
        (pod("taken", nodeName="n0"), 'pod taken is already assigned to node "n0"'),
    ],
)
def test_binding_refusals(obj: dict, message: str) -> None:
    c = cluster()
    c.create(obj)
    with pytest.raises(ConflictError, match=message):
        c.bind(new_pod_info(stored(c, "Pod", "default", obj["metadata"]["name"])), "n1")


def _claim(allocation: dict | None, reserved: list | None = None) -> dict:
    status: dict = {}
    if allocation is not None:
        status["allocation"] = allocation
    if reserved is not None:
        status["reservedFor"] = reserved
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "gpu", "namespace": "default"},
        "spec": {},
        "status": status,
    }


def test_a_claims_allocation_once_set_is_immutable_as_the_api_server_says() -> None:
    cluster = EmbeddedCluster()
    first = {"devices": {"results": [{"request": "r", "driver": "d", "pool": "p", "device": "g0"}]}}
    cluster.create(_claim(None))
    cluster.update_status(_claim(first))  # setting it is allowed
    cluster.update_status(_claim(first, reserved=[{"resource": "pods", "name": "p", "uid": "u"}]))  # so is reserving
    stamped = {**first, "allocationTimestamp": "2026-01-01T00:00:00Z"}
    with pytest.raises(ValueError, match=r"status\.allocation: field is immutable"):
        cluster.update_status(_claim(stamped))
    cluster.update_status(_claim(None))  # and clearing it (deallocation)
