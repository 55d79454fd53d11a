"""resource.k8s.io objects in `kubesched simulate`: loading, the resourceclaim controller, a pod's claims."""

from __future__ import annotations

import copy
import random
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.backend.embedded.cluster import EmbeddedCluster
from kubesched.backend.embedded.controllers.controller_utils import NameGenerator
from kubesched.backend.embedded.controllers.resource_claim import FINALIZER, ResourceClaimController, generate_name
from kubesched.cli import main
from kubesched.dra.claims import pod_resource_claims
from kubesched.simulator.load import load_manifests
from kubesched.simulator.run import build_config, simulate

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "dra"
TEMPLATE: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaimTemplate",
    "metadata": {"name": "one-gpu", "namespace": "default"},
    "spec": {
        "metadata": {"labels": {"team": "ml"}},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
    },
}


def _pod(name: str, claims: list[dict[str, Any]], node: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i"}], "resourceClaims": claims}
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": name},
        "spec": spec,
    }


def _controller(cluster: EmbeddedCluster, warnings: list[str]) -> ResourceClaimController:
    return ResourceClaimController(cluster, NameGenerator(random.Random(1)), admit=lambda obj: "", warn=warnings.append)


def test_example_loads_and_gets_its_claims() -> None:
    loaded = load_manifests([str(EXAMPLE)])
    result = simulate(loaded, build_config(loaded, None, ""), seed=1)
    assert result.scheduler is not None
    cluster = result.scheduler.lister
    pods = {p["metadata"]["name"]: p for p in cluster.list("Pod")}
    training = pod_resource_claims(cluster, pods["training-0"])
    assert [e["name"] for e in training] == ["gpus"]
    assert re.fullmatch(r"default/training-0-gpus-[a-z0-9]{5}", training[0]["claim"])
    devices = training[0]["devices"]  # two whole GPUs of one model, on the node the pod is bound to
    assert len(devices) == 2 and {d["pool"] for d in devices} == {pods["training-0"]["spec"]["nodeName"]}
    claim = cluster.get("ResourceClaim", "default", training[0]["claim"].split("/")[1])
    assert claim is not None
    assert claim["metadata"]["annotations"] == {"resource.kubernetes.io/pod-claim-name": "gpus"}
    owner = claim["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("Pod", "training-0", True)
    assert claim["spec"]["devices"]["requests"][0]["exactly"]["count"] == 2
    shared = [n for n, p in pods.items() if n.startswith("shared-viewer")]
    assert len(shared) == 2
    assert all(pod_resource_claims(cluster, pods[n])[0]["claim"] == "default/shared-gpu" for n in shared)
    # Every claim is made once: one per template entry, plus the shared one.
    assert len(list(cluster.list("ResourceClaim"))) == 4
    # What plugins read through their listers: the slices (counters and devices) and the classes.
    assert sorted(s["metadata"]["name"] for s in cluster.list("ResourceSlice")) == [
        "gpu-node-a-gpu.example.com",
        "gpu-node-b-gpu.example.com",
        "gpu-node-c-counters",
        "gpu-node-c-devices",
    ]
    assert cluster.get("DeviceClass", "", "large-gpu.example.com") is not None


def test_generate_name_cuts_both_parts_in_proportion() -> None:
    assert generate_name("web-1", "gpu") == "web-1-gpu-"
    long = generate_name("p" * 60, "c" * 30)
    assert long == "p" * 37 + "-" + "c" * 18
    assert len(long) + 5 <= 63


def test_claim_made_once_recorded_in_status_and_deleted_with_its_pod() -> None:
    cluster = EmbeddedCluster()
    warnings: list[str] = []
    ctl = _controller(cluster, warnings)
    cluster.create(copy.deepcopy(TEMPLATE))
    ctl.start()
    cluster.create(_pod("web", [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]))
    pod = cluster.get("Pod", "default", "web")
    assert pod is not None
    statuses = pod["status"]["resourceClaimStatuses"]
    claims = list(cluster.list("ResourceClaim"))
    assert len(claims) == 1 and statuses == [{"name": "gpu", "resourceClaimName": claims[0]["metadata"]["name"]}]
    assert claims[0]["metadata"]["labels"] == {"team": "ml"}
    cluster.update(copy.deepcopy(pod))  # a later sync makes no second claim
    assert len(list(cluster.list("ResourceClaim"))) == 1
    cluster.delete("Pod", "default", "web")
    assert list(cluster.list("ResourceClaim")) == []
    assert warnings == []


def test_unreserved_claim_is_deallocated_when_its_last_consumer_goes() -> None:
    cluster = EmbeddedCluster()
    ctl = _controller(cluster, [])
    allocation = {"devices": {"results": [{"request": "gpu", "driver": "d.example.com", "pool": "n", "device": "g0"}]}}
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "shared", "namespace": "default", "finalizers": [FINALIZER]},
        "spec": TEMPLATE["spec"]["spec"],
        "status": {"allocation": allocation, "reservedFor": [{"resource": "pods", "name": "a", "uid": "a"}]},
    }
    cluster.create(claim)
    cluster.create(_pod("a", [{"name": "gpu", "resourceClaimName": "shared"}], node="n"))
    cluster.create(_pod("b", [{"name": "gpu", "resourceClaimName": "shared"}], node="n"))
    ctl.start()
    reserved = cluster.get("ResourceClaim", "default", "shared")["status"]["reservedFor"]  # type: ignore[index]
    assert [r["name"] for r in reserved] == ["a", "b"]  # a bound pod gets its allocated claim reserved
    cluster.delete("Pod", "default", "a")
    left = cluster.get("ResourceClaim", "default", "shared")
    assert left is not None and [r["name"] for r in left["status"]["reservedFor"]] == ["b"]
    assert left["status"]["allocation"] == allocation
    cluster.delete("Pod", "default", "b")
    gone = cluster.get("ResourceClaim", "default", "shared")
    assert gone is not None and "allocation" not in gone["status"] and "reservedFor" not in gone["status"]
    assert FINALIZER not in gone["metadata"].get("finalizers", [])


def test_missing_template_is_one_warning() -> None:
    cluster = EmbeddedCluster()
    warnings: list[str] = []
    ctl = _controller(cluster, warnings)
    ctl.start()
    cluster.create(_pod("web", [{"name": "gpu", "resourceClaimTemplateName": "nope"}]))
    cluster.update(copy.deepcopy(cluster.get("Pod", "default", "web")))  # type: ignore[arg-type]
    assert warnings == [
        "pod default/web: PodResourceClaim gpu: resource claim template 'nope': "
        'resourceclaimtemplates.resource.k8s.io "nope" not found'
    ]


def test_broken_selector_is_refused_with_upstreams_words(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = yaml.safe_load_all((EXAMPLE / "cluster.yaml").read_text())
    bad = [d for d in docs if d]
    bad[0]["spec"]["selectors"][0]["cel"]["expression"] = "device.drivr == 'x'"
    f = tmp_path / "in.yaml"
    f.write_text(yaml.safe_dump_all(bad))
    assert main(["simulate", str(f), "--output", "json"]) == 2
    err = capsys.readouterr().err
    assert "in.yaml, document 1 (DeviceClass gpu.example.com): spec.selectors[0].cel.expression: Invalid value: " in err
    assert "compilation failed: ERROR: <input>:1:7: undefined field 'drivr'" in err


def test_scenario_creates_dra_objects(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = {
        "apiVersion": "kubesched.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "s"},
        "steps": [
            {"at": "10s", "create": [TEMPLATE, _pod("late", [{"name": "g", "resourceClaimTemplateName": "one-gpu"}])]}
        ],
    }
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": {"capacity": {"pods": "10"}}}
    f = tmp_path / "in.yaml"
    f.write_text(yaml.safe_dump_all([node, scenario]))
    assert main(["simulate", str(f), "--output", "json"]) == 0
    assert "late" in capsys.readouterr().out


def test_pod_record_lists_allocated_devices_in_order() -> None:
    cluster = EmbeddedCluster()
    results = [
        {"request": "gpu/half", "driver": "gpu.example.com", "pool": "node-c", "device": "gpu-0-half-1"},
        {"request": "nic", "driver": "nic.example.com", "pool": "node-c", "device": "eth1", "adminAccess": False},
    ]
    cluster.create(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "web-gpu-abcde", "namespace": "ml"},
            "spec": {},
            "status": {"allocation": {"devices": {"results": results}}},
        }
    )
    pod = _pod("web", [{"name": "gpu", "resourceClaimTemplateName": "t"}, {"name": "other", "resourceClaimName": "x"}])
    pod["metadata"]["namespace"] = "ml"
    pod["status"] = {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "web-gpu-abcde"}]}
    assert pod_resource_claims(cluster, pod) == [
        {
            "name": "gpu",
            "claim": "ml/web-gpu-abcde",
            "devices": [
                {"request": "gpu/half", "driver": "gpu.example.com", "pool": "node-c", "device": "gpu-0-half-1"},
                {"request": "nic", "driver": "nic.example.com", "pool": "node-c", "device": "eth1"},
            ],
        },
        {"name": "other", "claim": "ml/x", "devices": []},
    ]
    assert pod_resource_claims(cluster, _pod("plain", [])) == []
