"""Which nodes a DaemonSet runs on (NodeShouldRunDaemonPod), and how its pods are pinned."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.backend.embedded.controllers.daemon_set import node_should_run, pinned_affinity, sync, target_node


def ds(**pod_spec: Any) -> dict[str, Any]:
    return {
        "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "kube-system", "uid": "u"},
        "spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": pod_spec},
        },
    }


def node(
    name: str = "n", labels: dict[str, str] | None = None, taints: list[dict[str, str]] | None = None
) -> dict[str, Any]:
    return {"kind": "Node", "metadata": {"name": name, "labels": labels or {}}, "spec": {"taints": taints or []}}


@pytest.mark.parametrize(
    ("pod_spec", "target", "expected"),
    [
        pytest.param({}, node(), (True, True), id="plain node"),
        pytest.param({"nodeSelector": {"pool": "x"}}, node(labels={"pool": "y"}), (False, False), id="selector misses"),
        pytest.param({"nodeName": "other"}, node(), (False, False), id="template names another node"),
        pytest.param({}, node(taints=[{"key": "k", "effect": "NoSchedule"}]), (False, True), id="NoSchedule taint"),
        pytest.param({}, node(taints=[{"key": "k", "effect": "NoExecute"}]), (False, False), id="NoExecute taint"),
        pytest.param({}, node(taints=[{"key": "k", "effect": "PreferNoSchedule"}]), (True, True), id="preference only"),
        pytest.param(
            {"tolerations": [{"key": "k", "operator": "Exists"}]},
            node(taints=[{"key": "k", "effect": "NoExecute"}]),
            (True, True),
            id="tolerated",
        ),
        pytest.param(
            {},
            node(taints=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]),
            (True, True),
            id="cordoned",
        ),
        pytest.param(
            {},
            node(taints=[{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}]),
            (True, True),
            id="not ready",
        ),
        pytest.param(
            {},
            node(taints=[{"key": "node.kubernetes.io/network-unavailable", "effect": "NoSchedule"}]),
            (False, True),
            id="network unavailable",
        ),
        pytest.param(
            {"hostNetwork": True},
            node(taints=[{"key": "node.kubernetes.io/network-unavailable", "effect": "NoSchedule"}]),
            (True, True),
            id="network unavailable, host network",
        ),
        pytest.param(
            {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["m"]}]}
                            ]
                        }
                    }
                }
            },
            node(),
            (False, False),
            id="affinity to another node's name",
        ),
    ],
)
def test_node_should_run(pod_spec: dict[str, Any], target: dict[str, Any], expected: tuple[bool, bool]) -> None:
    assert node_should_run(ds(**pod_spec), target) == expected


def test_pinned_affinity_keeps_the_rest() -> None:
    affinity: dict[str, Any] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": []}]},
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1}],
        },
        "podAntiAffinity": {"x": 1},
    }
    out = pinned_affinity(affinity, "n1")
    assert out["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]
    }
    assert out["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] == [{"weight": 1}]
    assert out["podAntiAffinity"] == {"x": 1}
    assert affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == {
        "nodeSelectorTerms": [{"matchExpressions": []}]
    }
    assert target_node({"spec": {"affinity": out}}) == "n1"


def test_sync_creates_deletes_and_keeps_the_oldest() -> None:
    def pod(name: str, node_name: str, created: str) -> dict[str, Any]:
        return {"metadata": {"name": name, "creationTimestamp": created}, "spec": {"nodeName": node_name}, "status": {}}

    nodes = [node("a"), node("b"), node("c", taints=[{"key": "k", "effect": "NoExecute"}])]
    pods = [
        pod("b-new", "b", "2026-01-01T00:01:00Z"),
        pod("b-old", "b", "2026-01-01T00:00:00Z"),
        pod("c-pod", "c", "2026-01-01T00:00:00Z"),
    ]
    plan = sync(ds(), nodes, pods, "h")
    assert [target_node(p) for p in plan.create] == ["a"]
    assert [p["metadata"]["name"] for p in plan.delete] == ["b-new", "c-pod"]
