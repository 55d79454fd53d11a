"""DRA end to end through `kubesched simulate`: examples/dra gets its GPUs, the JSON names the devices, and a
pod asking for more GPUs than any node has waits with upstream's message. The AllocationMemo (a node's
allocation reused for later pods) must not change a decision: random clusters give the same placements,
allocations and messages with it and without it, for pods with claims from templates and pods asking for an
extended resource that DRA serves where no device plugin does."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.cli import main
from kubesched.dra import cel
from kubesched.framework.plugins.dynamicresources.dra_manager import AllocationMemo, shared_manager
from kubesched.simulator.load import LoadedInput, add_document, finish_loading, load_manifests
from kubesched.simulator.report import to_json
from kubesched.simulator.run import SimulationResult, build_config, simulate

# celpy raises the recursion limit when its environment is first made; Hypothesis refuses a test during which
# that happens, so it is made now.
cel.compile_expression('device.driver == "x"')

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "dra"
DRIVER = "gpu.example.com"
Obj = dict[str, Any]


def run_json(paths: list[str], capsys: pytest.CaptureFixture[str]) -> Obj:
    assert main(["simulate", *paths, "--seed", "1", "--output", "json"]) == 0
    doc: Obj = json.loads(capsys.readouterr().out)
    return doc


def slice_devices() -> dict[tuple[str, str], Obj]:
    loaded = load_manifests([str(EXAMPLE)])
    out: dict[tuple[str, str], Obj] = {}
    for so in loaded.objects:
        if so.obj["kind"] == "ResourceSlice":
            for d in so.obj["spec"].get("devices") or ():
                out[(so.obj["spec"]["pool"]["name"], d["name"])] = d
    return out


def node_slice(node: str, devices: list[Obj]) -> Obj:
    """One node's ResourceSlice of DRIVER, in a pool named after the node."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": node},
        "spec": {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


def device_class(name: str, expression: str, extended: str = "") -> Obj:
    spec: Obj = {"selectors": [{"cel": {"expression": expression}}]}
    if extended:
        spec["extendedResourceName"] = extended
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


def simulated(docs: list[Obj]) -> SimulationResult:
    """`simulate` in this process on (a copy of) these manifests, without recording."""
    loaded = LoadedInput()
    for i, doc in enumerate(copy.deepcopy(docs)):
        add_document(loaded, doc, "test", i)
    finish_loading(loaded)
    return simulate(loaded, build_config(loaded, None, ""), seed=1, record=False)


def test_example_pods_get_gpus(capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json([str(EXAMPLE)], capsys)
    devices = slice_devices()
    pods = {p["name"]: p for p in doc["pods"]}
    assert all(p["result"] == "Scheduled" for p in pods.values()), pods
    taken: list[tuple[str, str]] = []
    for p in pods.values():
        [entry] = p["resourceClaims"]
        assert entry["devices"], p["name"]
        for d in entry["devices"]:
            assert d["driver"] == DRIVER and d["pool"] == p["node"]  # every node's GPUs are its own pool
            if entry["claim"] != "default/shared-gpu":
                taken.append((d["pool"], d["device"]))
    assert len(taken) == len(set(taken))  # no GPU twice
    training = pods["training-0"]["resourceClaims"][0]["devices"]
    models = {devices[(d["pool"], d["device"])]["attributes"]["model"]["string"] for d in training}
    assert len(training) == 2 and len(models) == 1  # matchAttribute: one model
    [notebook] = pods["notebook-0"]["resourceClaims"][0]["devices"]
    assert notebook["request"] in ("gpu/half", "gpu/whole")  # a firstAvailable alternative, named as upstream
    shared = [p for n, p in pods.items() if n.startswith("shared-viewer")]
    assert len(shared) == 2 and len({p["node"] for p in shared}) == 1  # one claim, so one node
    assert shared[0]["resourceClaims"] == shared[1]["resourceClaims"]
    assert all(not w.startswith("DRA") and "claims are ignored" not in w for w in doc["warnings"])


def test_pod_asking_for_more_gpus_than_any_node_has(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "big.yaml").write_text(
        "apiVersion: resource.k8s.io/v1\n"
        "kind: ResourceClaimTemplate\n"
        "metadata: {name: five-gpus}\n"
        "spec:\n"
        "  spec:\n"
        "    devices:\n"
        "      requests: [{name: gpus, exactly: {deviceClassName: gpu.example.com, count: 5}}]\n"
        "---\n"
        "apiVersion: v1\n"
        "kind: Pod\n"
        "metadata: {name: too-big}\n"
        "spec:\n"
        "  containers: [{name: c, image: i, resources: {claims: [{name: gpus}]}}]\n"
        "  resourceClaims: [{name: gpus, resourceClaimTemplateName: five-gpus}]\n"
    )
    doc = run_json([str(EXAMPLE / "cluster.yaml"), str(tmp_path / "big.yaml")], capsys)
    [pod] = doc["pods"]
    assert pod["result"] == "Unschedulable"
    assert pod["message"] == (
        "0/3 nodes are available: 3 cannot allocate all claims. still not schedulable, "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
    assert {n: r["DynamicResources"] for n, r in pod["plugins"]["filter"].items()} == dict.fromkeys(
        ("gpu-node-a", "gpu-node-b", "gpu-node-c"), "cannot allocate all claims"
    )
    [entry] = pod["resourceClaims"]
    assert entry["name"] == "gpus" and entry["claim"].startswith("default/too-big-gpus-") and entry["devices"] == []


def test_pods_without_claims_have_an_empty_list(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {capacity: {cpu: '1', pods: '10'}}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: i}]}\n"
    )
    doc = run_json([str(tmp_path / "a.yaml")], capsys)
    assert doc["pods"][0]["resourceClaims"] == []
    assert list(doc["pods"][0]).index("resourceClaims") == list(doc["pods"][0]).index("victims") + 1


# The memo's twin: random GPU clusters, with and without reuse.


@st.composite
def clusters(draw: st.DrawFn) -> list[Obj]:
    docs: list[Obj] = [
        device_class("gpu", f'device.driver == "{DRIVER}"'),
        device_class("big-gpu", f'device.attributes["{DRIVER}"].mem >= 80', "example.com/gpu"),
    ]
    for i in range(draw(st.integers(1, 5))):
        name = f"node-{i}"
        capacity = {"cpu": str(draw(st.integers(2, 8))), "memory": "64Gi", "pods": "110"}
        if draw(st.booleans()) and draw(st.booleans()):
            capacity["example.com/gpu"] = str(draw(st.integers(0, 2)))  # a device plugin serves it here
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                "status": {"capacity": capacity},
            }
        )
        devices = [
            {
                "name": f"gpu-{g}",
                "attributes": {
                    "model": {"string": draw(st.sampled_from(["a", "b"]))},
                    "mem": {"int": draw(st.sampled_from([24, 80]))},
                },
            }
            for g in range(draw(st.integers(0, 4)))
        ]
        docs.append(node_slice(name, devices))
    big = f'device.attributes["{DRIVER}"].mem >= 80'
    shapes = {
        "one": [{"name": "g", "exactly": {"deviceClassName": "gpu"}}],
        "two-same": [{"name": "g", "exactly": {"deviceClassName": "gpu", "count": 2}}],
        "big": [{"name": "g", "exactly": {"deviceClassName": "gpu", "selectors": [{"cel": {"expression": big}}]}}],
        "big-or-any": [
            {
                "name": "g",
                "firstAvailable": [
                    {"name": "big", "deviceClassName": "gpu", "selectors": [{"cel": {"expression": big}}]},
                    {"name": "any", "deviceClassName": "gpu", "count": 2},
                ],
            }
        ],
    }
    for shape, requests in shapes.items():
        spec: Obj = {"devices": {"requests": requests}}
        if shape == "two-same":
            spec["devices"]["constraints"] = [{"matchAttribute": f"{DRIVER}/model"}]
        docs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaimTemplate",
                "metadata": {"name": shape},
                "spec": {"spec": spec},
            }
        )
    for p in range(draw(st.integers(1, 14))):
        requests = {"cpu": "1"}
        gpus = draw(st.sampled_from([0, 0, 1, 2]))
        if gpus:
            requests["example.com/gpu"] = str(gpus)
        resources: Obj = {"requests": requests}
        if gpus:
            resources["limits"] = {"example.com/gpu": str(gpus)}  # extended resources are not overcommitted
        pod_spec: Obj = {"containers": [{"name": "c", "image": "i", "resources": resources}]}
        if not gpus or draw(st.booleans()):
            pod_spec["resourceClaims"] = [
                {"name": "g", "resourceClaimTemplateName": draw(st.sampled_from(list(shapes)))}
            ]
        docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"pod-{p}"}, "spec": pod_spec})
    return docs


def outcome(docs: list[Obj], memo: bool, monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    monkeypatch.setattr(AllocationMemo, "enabled_by_default", memo)
    result = simulated(docs)
    doc = to_json(result, record=False)
    assert result.scheduler is not None
    claims = sorted(  # with those for extended resources, which the pods' resourceClaims do not list
        (c["metadata"]["name"], str(((c.get("status") or {}).get("allocation") or {}).get("devices")))
        for c in result.scheduler.lister.list("ResourceClaim")
    )
    return [(p["name"], p["node"], p["message"], _devices(p)) for p in doc["pods"]] + [("claims", claims)]


def _devices(p: Obj) -> list[tuple[tuple[str, str, str], ...]]:
    return [tuple((d["request"], d["pool"], d["device"]) for d in e["devices"]) for e in p["resourceClaims"]]


@settings(max_examples=60, deadline=None)
@given(clusters())
def test_memo_changes_no_decision(docs: list[Obj]) -> None:
    with pytest.MonkeyPatch.context() as mp:
        assert outcome(docs, True, mp) == outcome(docs, False, mp)


@pytest.mark.parametrize("extended", [False, True], ids=["template", "extended-resource"])
def test_memo_is_used(extended: bool) -> None:
    """The bench's shape: pods from one template (or asking for one extended resource) on many nodes mostly
    reuse answers."""
    result = simulated(clusters_for_reuse(extended))
    assert result.scheduler is not None
    memo = shared_manager(result.scheduler.profiles["default-scheduler"].handle).memo
    assert memo.hits > memo.misses
    assert sum(o.result == "Scheduled" for o in result.outcomes.values()) == 20


def clusters_for_reuse(extended: bool) -> list[Obj]:
    docs: list[Obj] = [
        device_class("gpu", f'device.driver == "{DRIVER}"', "example.com/gpu"),
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one"},
            "spec": {"spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu"}}]}}},
        },
    ]
    for i in range(10):
        name = f"node-{i}"
        docs.append(
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "status": {"capacity": {"pods": "110"}}}
        )
        docs.append(node_slice(name, [{"name": f"gpu-{g}"} for g in range(4)]))
    one_gpu = {"example.com/gpu": "1"}
    for p in range(20):
        spec: Obj = {"containers": [{"name": "c", "image": "i"}]}
        if extended:
            spec["containers"][0]["resources"] = {"requests": one_gpu, "limits": one_gpu}
        else:
            spec["resourceClaims"] = [{"name": "g", "resourceClaimTemplateName": "one"}]
        docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"pod-{p}"}, "spec": spec})
    return docs
