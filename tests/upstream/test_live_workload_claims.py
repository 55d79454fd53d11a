"""Claims shared by a workload (DRAWorkloadResourceClaims) against kube-apiserver v1.36 with the gate on:
the API server's verdicts on PodGroups' resourceClaims (and their status) are kubesched's, word for word,
and `kubesched run` reserves a gang's shared claim for its PodGroup."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from kubesched.apiserver.workload_api import validate_pod_group
from kubesched.app import RunOptions, SchedulerApp
from kubesched.backend.kube.api import APIError, KubeAPI, load_configuration
from kubesched.config.load import load_config
from kubesched.config.trust import TRUSTED
from kubesched.release import release
from kubesched_testing.app_thread import AppThread
from kubesched_testing.controlplane import ControlPlane, assets_dir, control_plane, missing_assets_reason
from kubesched_testing.parity.gang import APISERVER_ARGS

pytestmark = [
    pytest.mark.skipif(assets_dir() is None, reason=missing_assets_reason()),
    pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning"),
]
GROUPS = "/apis/scheduling.k8s.io/v1alpha2/namespaces/default/podgroups"
GATES = "GenericWorkload=true,GangScheduling=true,DRAWorkloadResourceClaims=true"
Obj = dict[str, Any]


@pytest.fixture(scope="module")
def alpha_plane() -> Iterator[ControlPlane]:
    with control_plane(extra_apiserver_args=list(APISERVER_ARGS)) as cp:
        yield cp


def _group(name: str, claims: list[Obj]) -> Obj:
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha2",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 1}}, "resourceClaims": claims},
    }


def _ours(name: str, errors: list[str]) -> str:
    joined = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
    return f'PodGroup.scheduling.k8s.io "{name}" is invalid: {joined} (422 Invalid)'


BAD_CLAIMS: list[list[Obj]] = [
    [{"name": "a"}],
    [{"name": "a", "resourceClaimName": "x", "resourceClaimTemplateName": "y"}],
    [{"name": "A_b", "resourceClaimName": "x"}],
    [{"resourceClaimName": "x"}],
    [{"name": "a", "resourceClaimName": "x"}, {"name": "a", "resourceClaimTemplateName": "y"}],
    [{"name": f"c{i}", "resourceClaimName": "x"} for i in range(5)],
    [{"name": "a", "resourceClaimName": "Bad_Name"}],
    [{"name": "a", "resourceClaimTemplateName": ""}],
]


def test_the_servers_verdicts_on_pod_group_claims_are_kubescheds(alpha_plane: ControlPlane) -> None:
    api = KubeAPI(load_configuration(str(alpha_plane.kubeconfig_path)), qps=0, retries=0)
    for i, claims in enumerate(BAD_CLAIMS):
        group = _group(f"bad-{i}", claims)
        ours = validate_pod_group(group)
        assert ours, claims
        with pytest.raises(APIError) as err:
            api.request("POST", GROUPS, body=group)
        assert str(err.value) == _ours(f"bad-{i}", ours)
    made = api.request("POST", GROUPS, body=_group("with-status", [{"name": "a", "resourceClaimName": "x"}]))
    made["status"] = {"resourceClaimStatuses": [{"name": "a", "resourceClaimName": "Bad_"}, {"name": "zz"}]}
    ours = validate_pod_group(made)
    with pytest.raises(APIError) as err:
        api.request("PUT", f"{GROUPS}/with-status/status", body=made)
    assert str(err.value) == _ours("with-status", ours)


def _wait(check: Callable[[], bool], timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.2)
    return check()


def test_run_reserves_a_gangs_shared_claim_for_its_pod_group(alpha_plane: ControlPlane) -> None:
    api = KubeAPI(load_configuration(str(alpha_plane.kubeconfig_path)), qps=0)
    config = load_config(None, trust=TRUSTED, release=release("1.36", GATES))
    app = AppThread(SchedulerApp(config, RunOptions(kubeconfig=str(alpha_plane.kubeconfig_path), secure_port=-1)))
    try:
        for i in range(2):
            alloc = {"cpu": "4", "pods": "110"}
            node = {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": f"n{i}"},
                "status": {"capacity": alloc, "allocatable": alloc},
            }
            api.request("POST", "/api/v1/nodes", body=node)
        driver = "fabric.example.com"
        device_class = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "fabric"},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]},
        }
        api.request("POST", "/apis/resource.k8s.io/v1/deviceclasses", body=device_class)
        links = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "fabric"},
            "spec": {
                "driver": driver,
                "pool": {"name": "fabric", "generation": 1, "resourceSliceCount": 1},
                "allNodes": True,
                "devices": [{"name": "link-0"}],
            },
        }
        api.request("POST", "/apis/resource.k8s.io/v1/resourceslices", body=links)
        claim = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "shared"},
            "spec": {"devices": {"requests": [{"name": "link", "exactly": {"deviceClassName": "fabric"}}]}},
        }
        api.request("POST", "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims", body=claim)
        entry = {"name": "fabric", "resourceClaimName": "shared"}
        for i in range(3):
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"member-{i}"},
                "spec": {
                    "terminationGracePeriodSeconds": 0,
                    "schedulingGroup": {"podGroupName": "train"},
                    "resourceClaims": [entry],
                    "containers": [
                        {
                            "name": "c",
                            "image": "i",
                            "resources": {"requests": {"cpu": "1"}, "claims": [{"name": "fabric"}]},
                        }
                    ],
                },
            }
            api.request("POST", "/api/v1/namespaces/default/pods", body=pod)
        group = {
            **_group("train", [entry]),
            "spec": {"schedulingPolicy": {"gang": {"minCount": 3}}, "resourceClaims": [entry]},
        }
        made = api.request("POST", GROUPS, body=group)

        def bound() -> bool:
            items = api.request("GET", "/api/v1/namespaces/default/pods").get("items") or ()
            return len(items) == 3 and all(p["spec"].get("nodeName") for p in items)

        assert _wait(bound)
        status = api.request("GET", "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/shared")["status"]
        assert [r["device"] for r in status["allocation"]["devices"]["results"]] == ["link-0"]
        assert status["reservedFor"] == [
            {"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "train", "uid": made["metadata"]["uid"]}
        ]
    finally:
        app.stop()
