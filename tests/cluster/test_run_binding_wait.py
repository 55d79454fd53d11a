"""`kubesched run` waits for a device's binding conditions in PreBind without holding the scheduler: another pod is
scheduled and bound meanwhile, and the claim's update (a driver attaching the device) binds the waiting pod."""

from __future__ import annotations

import copy

import pytest
from tests.cluster.helpers import node, pod, wait_for
from tests.test_dra_binding_wait import ATTACHED, CLUSTER, DRIVER

from kubesched.framework.plugins.dynamicresources import dynamic_resources
from kubesched_testing.apiserver import FakeAPIServer


def bound(api: FakeAPIServer, name: str) -> str:
    return ((api.get("Pod", "default", name) or {}).get("spec") or {}).get("nodeName") or ""


def reserved(api: FakeAPIServer) -> bool:
    status = (api.get("ResourceClaim", "default", "fabric-gpu") or {}).get("status") or {}
    return bool(status.get("allocation")) and bool(status.get("reservedFor"))


def test_a_pod_waiting_for_binding_conditions_lets_others_bind(
    apiserver: FakeAPIServer, start_app, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dynamic_resources, "BINDING_POLL", 3600.0)  # only the claim's event can end the wait
    apiserver.create(node("node-a", **{"kubernetes.io/hostname": "node-a"}))
    for obj in CLUSTER:
        if obj["kind"] != "Node":
            apiserver.create(copy.deepcopy(obj))
    start_app()
    wait_for(lambda: reserved(apiserver), what="the claim allocated and reserved for the trainer (PreBind waits)")
    apiserver.create(pod("web"))
    wait_for(lambda: bound(apiserver, "web"), what="another pod bound while the trainer waits")
    assert not bound(apiserver, "trainer")
    notes = wait_for(
        lambda: [e["note"] for e in apiserver.list("Event") if e["reason"] == "BindingConditionsPending"],
        what="the BindingConditionsPending event",
    )
    assert notes == ["waiting for binding conditions for device on node node-a"]
    claim = apiserver.get("ResourceClaim", "default", "fabric-gpu")
    assert claim is not None
    claim["status"]["devices"] = [
        {
            "driver": DRIVER,
            "pool": "fabric",
            "device": "gpu-0",
            "conditions": [
                {
                    "type": ATTACHED,
                    "status": "True",
                    "reason": "Attached",
                    "message": "attached",
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                }
            ],
        }
    ]
    apiserver.update(claim)
    wait_for(lambda: bound(apiserver, "trainer"), what="the trainer bound once its device is attached")
