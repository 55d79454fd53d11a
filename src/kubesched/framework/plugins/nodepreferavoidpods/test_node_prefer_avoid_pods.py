"""NodePreferAvoidPods: upstream's TestNodePreferAvoidPods table."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubesched.framework.plugins.nodepreferavoidpods import node_prefer_avoid_pods as napods
from kubesched_testing.framework import build_snapshot, new_plugin, score_nodes
from kubesched_testing.wrappers import make_node, make_pod


def avoid(kind: str, uid: str) -> str:
    ctl = {"apiVersion": "v1", "kind": kind, "name": "foo", "uid": uid, "controller": True}
    entry = {"podSignature": {"podController": ctl}, "reason": "some reason", "message": "some message"}
    return json.dumps({"preferAvoidPods": [entry]})


def node(name: str, annotation: str | None) -> dict[str, Any]:
    obj = make_node(name).obj()
    if annotation is not None:
        obj["metadata"]["annotations"] = {napods.PREFER_AVOID_PODS_ANNOTATION: annotation}
    return obj


NODES = [
    node("machine1", avoid("ReplicationController", "abcdef123456")),
    node("machine2", avoid("ReplicaSet", "qwert12345")),
    node("machine3", None),
]


def owned(kind: str, uid: str, controller: bool = True) -> dict[str, Any]:
    obj = make_pod("p").obj()
    ref: dict[str, Any] = {"kind": kind, "name": "foo", "uid": uid}
    if controller:
        ref["controller"] = True
    obj["metadata"]["ownerReferences"] = [ref]
    return obj


CASES = [
    (
        "pod managed by ReplicationController avoids machine1",
        owned("ReplicationController", "abcdef123456"),
        [0, 100, 100],
    ),
    ("ownership by random controller is ignored", owned("RandomController", "abcdef123456"), [100, 100, 100]),
    ("owner without controller set is ignored", owned("ReplicationController", "abcdef123456", False), [100, 100, 100]),
    ("pod managed by ReplicaSet avoids machine2", owned("ReplicaSet", "qwert12345"), [100, 0, 100]),
]


@pytest.mark.parametrize(("name", "pod_obj", "want"), CASES, ids=[c[0] for c in CASES])
def test_node_prefer_avoid_pods(name: str, pod_obj: dict[str, Any], want: list[int]) -> None:
    snap = build_snapshot(NODES)
    plugin = new_plugin(napods.new, None, snap)
    scores, status = score_nodes(plugin, pod_obj, snap, nodes=["machine1", "machine2", "machine3"])
    assert status is None and scores == want


def test_unreadable_annotation_avoids_nothing() -> None:
    snap = build_snapshot([node("machine1", "{not json")])
    plugin = new_plugin(napods.new, None, snap)
    scores, _ = score_nodes(plugin, owned("ReplicaSet", "qwert12345"), snap)
    assert scores == [100]
