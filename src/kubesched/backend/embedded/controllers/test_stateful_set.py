"""The StatefulSet controller's plans: which ordinal comes next, which goes first, and the claims."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.backend.embedded.controllers.stateful_set import sync

CLAIM = {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}


def sts(replicas: int, policy: str = "OrderedReady", **spec: Any) -> dict[str, Any]:
    return {
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "ns", "uid": "u"},
        "spec": {
            "replicas": replicas,
            "podManagementPolicy": policy,
            "selector": {"matchLabels": {"app": "db"}},
            "template": {"metadata": {"labels": {"app": "db"}}, "spec": {}},
            **spec,
        },
    }


def pod(ordinal: int, phase: str = "Running", **meta: Any) -> dict[str, Any]:
    return {"metadata": {"name": f"db-{ordinal}", **meta}, "spec": {}, "status": {"phase": phase}}


def names(objs: list[Any]) -> list[str]:
    return [o["metadata"]["name"] for o in objs]


@pytest.mark.parametrize(
    ("policy", "replicas", "pods", "created", "deleted"),
    [
        pytest.param("OrderedReady", 3, [], ["db-0"], [], id="ordered: the first"),
        pytest.param("OrderedReady", 3, [pod(0)], ["db-1"], [], id="ordered: next after a running pod"),
        pytest.param("OrderedReady", 3, [pod(0, "Pending")], [], [], id="ordered: wait for a pending pod"),
        pytest.param("Parallel", 3, [pod(0, "Pending")], ["db-1", "db-2"], [], id="parallel: all"),
        pytest.param("OrderedReady", 1, [pod(0), pod(1), pod(2)], [], ["db-2"], id="ordered: highest first"),
        pytest.param("Parallel", 1, [pod(0), pod(1), pod(2)], [], ["db-2", "db-1"], id="parallel: all at once"),
        pytest.param(
            "OrderedReady", 1, [pod(0), pod(1, "Pending"), pod(2)], [], ["db-2"], id="ordered: healthy highest first"
        ),
        pytest.param(
            "OrderedReady",
            1,
            [pod(0), pod(1, "Pending"), pod(2, "Pending")],
            [],
            [],
            id="ordered: waits while a lower condemned pod is unhealthy",
        ),
        pytest.param(
            "OrderedReady",
            3,
            [pod(0, deletionTimestamp="2026-01-01T00:00:00Z")],
            [],
            [],
            id="ordered: wait for termination",
        ),
    ],
)
def test_sync(policy: str, replicas: int, pods: list[Any], created: list[str], deleted: list[str]) -> None:
    plan, claims = sync(sts(replicas, policy), pods, lambda name: False, "db-rev")
    assert [n for n in names(plan.create)] == created
    assert names(plan.delete) == deleted
    assert claims == []


def test_claims_created_first_unless_there_and_deleted_when_scaled_away_with_delete_policy() -> None:
    s = sts(2, "Parallel", volumeClaimTemplates=[CLAIM], persistentVolumeClaimRetentionPolicy={"whenScaled": "Delete"})
    plan, _ = sync(s, [], lambda name: name == "data-db-1", "rev")
    assert [(o["kind"], o["metadata"]["name"]) for o in plan.create] == [
        ("PersistentVolumeClaim", "data-db-0"),
        ("Pod", "db-0"),
        ("Pod", "db-1"),
    ]
    plan, claims = sync({**s, "spec": {**s["spec"], "replicas": 1}}, [pod(0), pod(1)], lambda name: True, "rev")
    assert names(plan.delete) == ["db-1"] and claims == ["data-db-1"]


def test_claims_owned_by_the_set_when_deleted_with_it() -> None:
    s = sts(1, volumeClaimTemplates=[CLAIM], persistentVolumeClaimRetentionPolicy={"whenDeleted": "Delete"})
    plan, _ = sync(s, [], lambda name: False, "rev")
    assert plan.create[0]["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"
