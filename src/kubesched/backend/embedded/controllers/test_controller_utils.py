"""Names, hashes, ownership and the order in which controllers delete surplus pods."""

from __future__ import annotations

import random
import re
from datetime import UTC, datetime
from typing import Any

import pytest

from kubesched.api.selectors import parse_label_selector
from kubesched.backend.embedded.controllers.controller_utils import (
    ALPHANUMS,
    NameGenerator,
    active_pods_order,
    claim,
    compute_hash,
    pod_from_template,
    pods_to_delete,
    safe_encode_string,
)

NOW = datetime(2026, 1, 1, 1, 0, tzinfo=UTC)


def test_generated_names_follow_the_api_server() -> None:
    names = NameGenerator(random.Random(1))
    assert re.fullmatch(f"web-[{ALPHANUMS}]{{5}}", names.generate("web-"))
    long = names.generate("x" * 80)
    assert len(long) == 63 and long.startswith("x" * 58)
    assert NameGenerator(random.Random(1)).generate("a-") == NameGenerator(random.Random(1)).generate("a-")


def test_hashes_use_the_name_alphabet_and_change_with_the_template_and_collisions() -> None:
    assert safe_encode_string("0123456789") == "456789bcdf"  # as apimachinery's SafeEncodeString maps digits
    t = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c"}]}}
    h = compute_hash(t)
    assert re.fullmatch("[4-9bcdf]{1,10}", h)
    assert compute_hash({"spec": t["spec"], "metadata": t["metadata"]}) == h  # key order does not matter
    assert compute_hash(t, 1) != h
    assert compute_hash({**t, "spec": {"containers": [{"name": "d"}]}}) != h


def test_pod_from_template() -> None:
    owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs", "namespace": "ns", "uid": "u"}}
    template: dict[str, Any] = {
        "metadata": {"labels": {"a": "b"}, "annotations": {"k": "v"}, "finalizers": ["f"]},
        "spec": {"containers": [{"name": "c"}]},
    }
    pod = pod_from_template(template, owner)
    assert pod == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "namespace": "ns",
            "generateName": "rs-",
            "labels": {"a": "b"},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": "rs",
                    "uid": "u",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "annotations": {"k": "v"},
            "finalizers": ["f"],
        },
        "spec": {"containers": [{"name": "c"}]},
    }
    pod["spec"]["containers"][0]["name"] = "changed"
    assert template["spec"]["containers"][0]["name"] == "c"  # a copy


def _pod(name: str, **kw: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "uid": kw.pop("uid", name)}
    for key in ("labels", "ownerReferences", "creationTimestamp", "annotations", "deletionTimestamp"):
        if key in kw:
            meta[key] = kw.pop(key)
    return {"kind": "Pod", "metadata": meta, "spec": {"nodeName": kw.pop("node", "")}, "status": kw}


OWNER = {"kind": "ReplicaSet", "metadata": {"name": "rs", "namespace": "ns", "uid": "u"}}
MINE = [{"kind": "ReplicaSet", "name": "rs", "uid": "u", "controller": True}]
THEIRS = [{"kind": "ReplicaSet", "name": "other", "uid": "o", "controller": True}]


def test_claim_keeps_adopts_and_releases() -> None:
    pods = [
        _pod("owned", labels={"app": "x"}, ownerReferences=MINE),
        _pod("stray", labels={"app": "y"}, ownerReferences=MINE),
        _pod("orphan", labels={"app": "x"}),
        _pod("dying-orphan", labels={"app": "x"}, deletionTimestamp="2026-01-01T00:00:00Z"),
        _pod("someone-elses", labels={"app": "x"}, ownerReferences=THEIRS),
        _pod("unrelated", labels={"app": "y"}),
    ]
    out = claim(OWNER, parse_label_selector({"matchLabels": {"app": "x"}}), pods)
    assert [p["metadata"]["name"] for p in out.owned] == ["owned", "orphan"]
    assert [p["metadata"]["name"] for p in out.adopt] == ["orphan"]
    assert [p["metadata"]["name"] for p in out.release] == ["stray"]


def test_replica_set_deletion_order() -> None:
    pods = [
        _pod("running-old", node="n1", phase="Running", creationTimestamp="2026-01-01T00:00:00Z"),
        _pod("running-new", node="n1", phase="Running", creationTimestamp="2026-01-01T00:59:00Z"),
        _pod("pending", phase="Pending"),
        _pod("alone", node="n3", phase="Running", creationTimestamp="2026-01-01T00:59:00Z"),
        _pod(
            "cheap",
            node="n2",
            phase="Running",
            creationTimestamp="2026-01-01T00:00:00Z",
            annotations={"controller.kubernetes.io/pod-deletion-cost": "-10"},
        ),
    ]
    order = [p["metadata"]["name"] for p in pods_to_delete(pods, pods, 4, NOW)]
    # Unscheduled first; then the lower deletion cost; then more pods of the owner on the node (n1 has two,
    # n3 one: "alone" stays); then newer.
    assert order == ["pending", "cheap", "running-new", "running-old"]


def test_job_deletion_order_prefers_unscheduled_then_newer() -> None:
    pods = [
        _pod("old", node="n", phase="Running", creationTimestamp="2026-01-01T00:00:00Z"),
        _pod("new", node="n", phase="Running", creationTimestamp="2026-01-01T00:30:00Z"),
        _pod("pending", phase="Pending"),
    ]
    assert [p["metadata"]["name"] for p in active_pods_order(pods)] == ["pending", "new", "old"]


@pytest.mark.parametrize("count", [0, 3, 10])
def test_deleting_as_many_as_there_are(count: int) -> None:
    pods = [_pod(f"p{i}") for i in range(3)]
    assert len(pods_to_delete(pods, pods, count, NOW)) == min(count, 3)
