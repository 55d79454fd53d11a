"""DynamicResources waits for devices' binding conditions in PreBind, as v1.36 does, without holding up other pods:
the binding cycle is suspended (BindingWait) and resumed on the virtual clock, every 5s and as soon as the claim
changes, until bindingTimeout. Scenarios set the conditions as a driver would."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.framework.interface import BindingWait
from kubesched.simulator.load import LoadedInput, add_document, finish_loading
from kubesched.simulator.run import SimulationResult, build_config, simulate
from kubesched.simulator.scenario import API_VERSION

Obj = dict[str, Any]
DRIVER = "fabric.example.com"
ATTACHED, FAILED = "dra.example.com/attached", "dra.example.com/failed"
TIMEOUT = 'running PreBind plugin "DynamicResources": device binding timeout: context deadline exceeded'

CLUSTER: list[Obj] = [
    {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "node-a", "labels": {"kubernetes.io/hostname": "node-a"}},
        "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}},
    },
    {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": DRIVER},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
    },
    {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "fabric-pool"},
        "spec": {
            "driver": DRIVER,
            "pool": {"name": "fabric", "generation": 1, "resourceSliceCount": 1},
            "allNodes": True,
            "devices": [
                {
                    "name": "gpu-0",
                    "bindsToNode": True,
                    "bindingConditions": [ATTACHED],
                    "bindingFailureConditions": [FAILED],
                }
            ],
        },
    },
    {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "fabric-gpu", "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}},
    },
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "trainer", "namespace": "default"},
        "spec": {
            "containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}],
            "resourceClaims": [{"name": "gpu", "resourceClaimName": "fabric-gpu"}],
        },
    },
]


def web(name: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]},
    }


def condition(kind: str, reason: str, message: str) -> Obj:
    patch = {
        "status": {
            "devices": [
                {
                    "driver": DRIVER,
                    "pool": "fabric",
                    "device": "gpu-0",
                    "conditions": [
                        {
                            "type": kind,
                            "status": "True",
                            "reason": reason,
                            "message": message,
                            "lastTransitionTime": "2026-01-01T00:00:00Z",
                        }
                    ],
                }
            ]
        }
    }
    return {"kind": "ResourceClaim", "namespace": "default", "name": "fabric-gpu", "patch": patch}


def run(steps: list[Obj], until: float | None = None) -> SimulationResult:
    loaded = LoadedInput()
    for doc in (*CLUSTER, web("web"), {"apiVersion": API_VERSION, "kind": "Scenario", "steps": steps}):
        add_document(loaded, copy.deepcopy(doc), "test.yaml", 1)
    finish_loading(loaded)
    return simulate(loaded, build_config(loaded, None, ""), seed=1, until=until)


def messages(result: SimulationResult, pod: str) -> list[tuple[float, str, str | None]]:
    return [(e.time, e.type, e.message) for e in result.events if e.pod == pod]


SECOND_POD = {"at": "10s", "create": [web("web-2")]}


def test_condition_set_at_30s_binds_the_pod_then_and_others_meanwhile() -> None:
    result = run([SECOND_POD, {"at": "30s", "update": [condition(ATTACHED, "Attached", "attached")]}])
    assert 30.0 <= result.bound_at["default/trainer"] <= 35.0
    assert result.bound_at["default/web"] == 0.0
    assert result.bound_at["default/web-2"] == 10.0  # scheduled and bound while the trainer waits
    assert messages(result, "default/trainer") == [(0.0, "Scheduled", None), (30.0, "Bound", None)]
    sched = result.scheduler
    assert sched is not None and not sched.cycles.suspended_bindings


def test_the_claims_event_resumes_the_wait_between_polls() -> None:
    result = run([{"at": "32s", "update": [condition(ATTACHED, "Attached", "attached")]}])
    assert result.bound_at["default/trainer"] == 32.0


def test_polls_every_5s_when_no_event_names_the_claim(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the claim's event (here: no wake), the next poll, on the 5s grid from the wait's start, sees it."""
    original = BindingWait.__init__

    def no_wake(self: BindingWait, *args: Any, **kw: Any) -> None:
        kw.pop("wake", None)
        original(self, *args, **kw)

    monkeypatch.setattr(BindingWait, "__init__", no_wake)
    result = run([{"at": "32s", "update": [condition(ATTACHED, "Attached", "attached")]}])
    assert result.bound_at["default/trainer"] == 35.0


def test_failure_condition_fails_pre_bind_with_upstreams_message() -> None:
    result = run([SECOND_POD, {"at": "20s", "update": [condition(FAILED, "CableUnplugged", "fabric link down")]}], 25)
    assert messages(result, "default/trainer")[:2] == [
        (0.0, "Scheduled", None),
        (
            20.0,
            "Error",
            'running PreBind plugin "DynamicResources": device binding failed: claim=fabric-gpu, '
            'reason=CableUnplugged, message="fabric link down"',
        ),
    ]
    assert result.bound_at["default/web-2"] == 10.0
    assert "default/trainer" not in result.bound_at


def test_never_set_times_out_at_binding_timeout_and_the_run_ends() -> None:
    result = run([SECOND_POD])
    trainer = messages(result, "default/trainer")
    assert trainer[:2] == [(0.0, "Scheduled", None), (600.0, "Error", TIMEOUT)]
    # The next attempt finds the claim timed out, deallocates it (PostFilter) and waits again; with nothing else
    # left to happen the simulation ends there rather than waiting forever.
    assert trainer[2][:2] == (602.0, "Unschedulable") and "deallocation of ResourceClaim completed" in str(
        trainer[2][2]
    )
    assert trainer[3][:2] == (602.0, "Scheduled")
    assert result.end_time == 602.0
    assert result.bound_at == {"default/web": 0.0, "default/web-2": 10.0}


def test_a_deleted_pod_leaves_no_mark_of_its_expired_wait() -> None:
    delete = {"at": "700s", "delete": [{"kind": "Pod", "namespace": "default", "name": "trainer"}]}
    result = run([SECOND_POD, delete])
    assert ("default/trainer", "Deleted") in {(e.pod, e.type) for e in result.events}
    assert result.scheduler is not None and result.scheduler.cycles.expired_binding_waits == set()


def test_binding_timeout_from_the_plugin_args() -> None:
    loaded = LoadedInput()
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "pluginConfig": [{"name": "DynamicResources", "args": {"bindingTimeout": "1m"}}],
            }
        ],
    }
    for doc in (*CLUSTER, config):
        add_document(loaded, copy.deepcopy(doc), "test.yaml", 1)
    finish_loading(loaded)
    result = simulate(loaded, build_config(loaded, None, ""), seed=1, until=61)
    assert (60.0, "Error", TIMEOUT) in messages(result, "default/trainer")
