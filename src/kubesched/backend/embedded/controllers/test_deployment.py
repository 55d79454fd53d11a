"""The Deployment controller's plans: its new ReplicaSet and the end of a rollout."""

from __future__ import annotations

from typing import Any

from kubesched.backend.embedded.controllers.deployment import POD_TEMPLATE_HASH, equal_ignore_hash, max_surge, sync

TEMPLATE: dict[str, Any] = {
    "metadata": {"labels": {"app": "web"}},
    "spec": {"containers": [{"name": "c", "image": "v1"}]},
}


def deployment(replicas: int = 3, template: dict[str, Any] = TEMPLATE, **spec: Any) -> dict[str, Any]:
    return {
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "ns", "uid": "u", "annotations": {"team": "a"}},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}}, "template": template, **spec},
    }


def rs(name: str, replicas: int, template: dict[str, Any], created: str) -> dict[str, Any]:
    t = {**template, "metadata": {"labels": {**template["metadata"]["labels"], POD_TEMPLATE_HASH: name[4:]}}}
    return {
        "kind": "ReplicaSet",
        "metadata": {"name": name, "namespace": "ns", "creationTimestamp": created},
        "spec": {"replicas": replicas, "template": t},
    }


def test_equal_ignore_hash_and_empty_values() -> None:
    hashed = {
        "metadata": {"labels": {"app": "web", POD_TEMPLATE_HASH: "x"}},
        "spec": {**TEMPLATE["spec"], "volumes": []},
    }
    assert equal_ignore_hash(hashed, TEMPLATE)
    assert not equal_ignore_hash({**TEMPLATE, "spec": {"containers": [{"name": "c", "image": "v2"}]}}, TEMPLATE)


def test_max_surge() -> None:
    assert max_surge(deployment(10)) == 3  # 25% rounded up
    assert max_surge(deployment(10, strategy={"type": "Recreate"})) == 0
    assert max_surge(deployment(10, strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 2}})) == 2


def test_first_replica_set() -> None:
    plan = sync(deployment(), [], lambda name: False)
    (new,) = plan.create
    pod_hash = new["metadata"]["labels"][POD_TEMPLATE_HASH]
    assert new["metadata"]["name"] == f"web-{pod_hash}"
    assert new["metadata"]["annotations"]["team"] == "a"
    assert new["metadata"]["ownerReferences"][0]["kind"] == "Deployment"
    assert new["spec"]["replicas"] == 3


def test_a_taken_name_bumps_the_collision_count() -> None:
    first = sync(deployment(), [], lambda name: False).create[0]["metadata"]["name"]
    second = sync(deployment(), [], lambda name: name == first).create[0]["metadata"]["name"]
    assert second != first and second.startswith("web-")


def test_template_change_ends_the_rollout_at_once() -> None:
    old = rs("web-old", 3, TEMPLATE, "2026-01-01T00:00:00Z")
    changed = {**TEMPLATE, "spec": {"containers": [{"name": "c", "image": "v2"}]}}
    plan = sync(deployment(template=changed), [old], lambda name: False)
    assert plan.create[0]["spec"]["replicas"] == 3
    assert plan.create[0]["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    assert [(r["metadata"]["name"], r["spec"]["replicas"]) for r in plan.update] == [("web-old", 0)]


def test_scaling_the_new_replica_set_and_pausing() -> None:
    current = rs("web-cur", 3, TEMPLATE, "2026-01-01T00:00:00Z")
    plan = sync(deployment(5), [current], lambda name: False)
    assert plan.create == [] and [(r["metadata"]["name"], r["spec"]["replicas"]) for r in plan.update] == [
        ("web-cur", 5)
    ]
    assert not sync(deployment(5, paused=True), [current], lambda name: False)
    assert not sync(deployment(3), [current], lambda name: False)
