"""Generic ephemeral volumes in `kubesched simulate`: the embedded ephemeral volume controller makes each pod's
claim `<pod>-<volume>`, owned by the pod, so the pods schedule; a claim of that name the pod does not own keeps
the pod pending with upstream's message; the pod's claims go when it is deleted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from tests.test_controllers import Run as ControllersRun

from kubesched.api.volumes import ephemeral_owner_error
from kubesched.cli import main
from kubesched.simulator.budget import expansion

Obj = dict[str, Any]


def node(name: str, zone: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}},
        "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "20"}},
    }


def storage_class(
    name: str, *, provisioner: str = "ebs.csi.aws.com", mode: str = "WaitForFirstConsumer", **kw: Any
) -> Obj:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name, "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
        "provisioner": provisioner,
        "volumeBindingMode": mode,
        **kw,
    }


def ephemeral(name: str = "work", size: str = "10Gi", **template_meta: Any) -> Obj:
    template: Obj = {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}}}
    if template_meta:
        template["metadata"] = template_meta
    return {"name": name, "ephemeral": {"volumeClaimTemplate": template}}


def pod_spec(*volumes: Obj) -> Obj:
    return {
        "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}],
        "volumes": list(volumes),
    }


def pod(name: str, *volumes: Obj, uid: str | None = None) -> Obj:
    meta: Obj = {"name": name, "namespace": "default"}
    if uid:
        meta["uid"] = uid
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": pod_spec(*volumes)}


def deployment(name: str, replicas: int, *volumes: Obj) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec(*volumes)},
        },
    }


def local_pv(name: str, node_name: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {
            "capacity": {"storage": "100Gi"},
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "local",
            "local": {"path": "/mnt/disk"},
            "nodeAffinity": {
                "required": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "kubernetes.io/hostname", "operator": "In", "values": [node_name]}
                            ]
                        }
                    ]
                }
            },
        },
    }


def scenario(*steps: Obj) -> Obj:
    return {"apiVersion": "kubesched.io/v1alpha1", "kind": "Scenario", "metadata": {"name": "s"}, "steps": list(steps)}


class Run(ControllersRun):
    """One simulation (seed 1): the contract's JSON and the embedded cluster it ended with."""

    def __init__(self, tmp_path: Path, docs: list[Obj], seed: int = 1) -> None:
        super().__init__(tmp_path, docs, seed)

    def claims(self) -> dict[str, Obj]:
        return {c["metadata"]["name"]: c for c in self.cluster.list("PersistentVolumeClaim")}

    def placed(self) -> dict[str, str | None]:
        return {p["name"]: p["node"] for p in self.doc["pods"]}

    def pod(self, name: str) -> Obj:
        return next(p for p in self.doc["pods"] if p["name"] == name)


ZONES = [node("node-a", "zone-a"), node("node-b", "zone-b")]


def test_a_deployment_with_an_ephemeral_volume_schedules_with_one_owned_claim_per_pod(tmp_path: Path) -> None:
    run = Run(tmp_path, [*ZONES, storage_class("standard"), deployment("scratch", 3, ephemeral(labels={"t": "x"}))])
    assert all(p["result"] == "Scheduled" for p in run.doc["pods"]) and len(run.doc["pods"]) == 3
    claims = run.claims()
    assert sorted(claims) == sorted(f"{p['name']}-work" for p in run.doc["pods"])
    for p in run.cluster.list("Pod"):
        claim = claims[f"{p['metadata']['name']}-work"]
        meta = claim["metadata"]
        assert meta["ownerReferences"] == [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": p["metadata"]["name"],
                "uid": p["metadata"]["uid"],
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
        assert meta["labels"] == {"t": "x"} and meta["uid"] and meta["uid"] != p["metadata"]["uid"]
        # The default class was filled in, the scheduler chose the node, and the claim was provisioned there.
        assert claim["spec"]["storageClassName"] == "standard"
        assert meta["annotations"]["volume.kubernetes.io/selected-node"] == p["spec"]["nodeName"]
        assert claim["status"]["phase"] == "Bound"
    assert run.doc["warnings"] == []


def test_static_local_volumes_decide_where_the_pods_go(tmp_path: Path) -> None:
    docs = [
        *ZONES,
        storage_class("local", provisioner="kubernetes.io/no-provisioner"),
        local_pv("disk-b", "node-b"),
        pod("p1", ephemeral()),
        pod("p2", ephemeral()),
    ]
    run = Run(tmp_path, docs)
    assert run.placed() == {"p1": "node-b", "p2": None}
    assert "didn't find available persistent volumes to bind" in run.pod("p2")["message"]
    assert run.claims()["p1-work"]["spec"]["volumeName"] == "disk-b"


def test_an_immediate_class_provisions_at_creation_and_the_volume_decides_the_zone(tmp_path: Path) -> None:
    zonal = storage_class(
        "zonal",
        mode="Immediate",
        allowedTopologies=[{"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone", "values": ["zone-b"]}]}],
    )
    run = Run(tmp_path, [*ZONES, zonal, pod("p", ephemeral(), uid="11111111-2222-3333-4444-555555555555")])
    assert run.placed() == {"p": "node-b"}
    claim = run.claims()["p-work"]
    assert "volume.kubernetes.io/selected-node" not in (claim["metadata"].get("annotations") or {})
    assert claim["metadata"]["ownerReferences"][0]["uid"] == "11111111-2222-3333-4444-555555555555"


def test_a_claim_the_pod_does_not_own_keeps_it_pending_with_upstreams_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stranger = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "p-work", "namespace": "default"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    f = tmp_path / "in.yaml"
    f.write_text(yaml.safe_dump_all([*ZONES, storage_class("standard"), stranger, pod("p", ephemeral())]))
    assert main(["simulate", str(f), "--output", "json", "--seed", "1"]) == 0
    doc = json.loads(capsys.readouterr().out)
    message = "PVC default/p-work was not created for pod default/p (pod is not owner)"
    assert doc["pods"][0]["node"] is None
    assert message in doc["pods"][0]["message"]
    assert doc["warnings"] == [f"pod default/p: ephemeral volume work: {message}"]


def test_a_listed_claim_the_pod_owns_is_used_not_made_again(tmp_path: Path) -> None:
    owned = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": "p-work",
            "namespace": "default",
            "uid": "c1",
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u1", "controller": True}],
        },
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    run = Run(tmp_path, [*ZONES, storage_class("standard"), owned, pod("p", ephemeral(), uid="u1")])
    assert run.placed() == {"p": "node-a"}
    assert run.claims()["p-work"]["metadata"]["uid"] == "c1"


def test_scenario_pods_get_their_claims_and_lose_them_when_deleted(tmp_path: Path) -> None:
    steps = scenario(
        {"at": "30s", "create": [pod("late", ephemeral("a"), ephemeral("b"))]},
        {"at": "40s", "update": [{"kind": "Deployment", "name": "web", "patch": {"spec": {"replicas": 2}}}]},
        {"at": "1m", "delete": [{"kind": "Pod", "namespace": "default", "name": "late"}]},
    )
    run = Run(tmp_path, [*ZONES, storage_class("standard"), deployment("web", 1, ephemeral()), steps])
    bound = sorted((p["boundAt"], p["owner"] or p["name"]) for p in run.doc["pods"])
    assert bound == [(0, "Deployment/web"), (30, "late"), (40, "Deployment/web")]
    web = {p["metadata"]["name"] for p in run.cluster.list("Pod")}
    assert len(web) == 2
    assert sorted(run.claims()) == sorted(f"{name}-work" for name in web)  # late-a and late-b were collected


def test_a_deleted_claim_of_a_live_pod_is_made_again(tmp_path: Path) -> None:
    steps = scenario(
        {"at": "10s", "delete": [{"kind": "PersistentVolumeClaim", "namespace": "default", "name": "p-work"}]}
    )
    run = Run(tmp_path, [*ZONES, storage_class("standard"), pod("p", ephemeral(), uid="u1"), steps])
    claim = run.claims()["p-work"]
    assert claim["metadata"]["creationTimestamp"] == "2026-01-01T00:00:10Z"
    assert claim["metadata"]["ownerReferences"][0]["uid"] == "u1"


def test_a_claim_with_another_live_owner_outlives_the_pod(tmp_path: Path) -> None:
    both = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": "p-work",
            "namespace": "default",
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u1", "controller": True},
                {"apiVersion": "v1", "kind": "Pod", "name": "keeper", "uid": "u2"},
            ],
        },
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    steps = scenario({"at": "10s", "delete": [{"kind": "Pod", "namespace": "default", "name": "p"}]})
    docs = [*ZONES, storage_class("standard"), both, pod("p", ephemeral(), uid="u1"), pod("keeper", uid="u2"), steps]
    run = Run(tmp_path, docs)
    assert "p-work" in run.claims()


_BAD_MODE = {
    "name": "work",
    "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteSometimes"]}}},
}


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (
            deployment("web", 1, _BAD_MODE),
            "(Deployment default/web): spec.template.spec.volumes[0].ephemeral.volumeClaimTemplate.spec.accessModes: "
            'Unsupported value: "ReadWriteSometimes"',
        ),
        (
            pod("p", {"name": "v", "ephemeral": {}}),
            "(Pod default/p): spec.volumes[0].ephemeral.volumeClaimTemplate: Required value",
        ),
    ],
)
def test_a_claim_template_the_api_server_refuses_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], obj: Obj, expected: str
) -> None:
    f = tmp_path / "in.yaml"
    f.write_text(yaml.safe_dump_all([*ZONES, obj]))
    assert main(["simulate", str(f)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert expected in err


def test_the_budget_counts_one_claim_per_ephemeral_volume_of_each_pod() -> None:
    counts = expansion([deployment("web", 3, ephemeral("a"), ephemeral("b")), pod("p", ephemeral())])
    with_none = expansion([deployment("web", 3), pod("p")])
    assert counts.objects - with_none.objects == 3 * 2 + 1


def test_the_example_schedules(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "examples/ephemeral", "--output", "json", "--seed", "1"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [p["result"] for p in doc["pods"]] == ["Scheduled"] * 3


_uids = st.sampled_from(["u1", "u2", "", "default/p"])
_refs = st.lists(
    st.fixed_dictionaries(
        {"uid": _uids, "kind": st.sampled_from(["Pod", "ReplicaSet"])},
        optional={"controller": st.sampled_from([True, False, None, "true"])},
    ),
    max_size=3,
)


@given(refs=_refs, pod_uid=st.sampled_from(["u1", None]), namespace=st.sampled_from(["default", "other", None]))
def test_volume_is_for_pod_means_the_first_controller_reference_is_the_pods(
    refs: list[Obj], pod_uid: str | None, namespace: str | None
) -> None:
    """Hostile owner references never raise; the claim is the pod's exactly when upstream's IsControlledBy says so."""
    the_pod: Obj = {"metadata": {"name": "p", "namespace": "default", **({"uid": pod_uid} if pod_uid else {})}}
    claim: Obj = {
        "metadata": {"name": "p-work", "ownerReferences": refs, **({"namespace": namespace} if namespace else {})}
    }
    controller = next((r for r in refs if r.get("controller") is True), None)
    expected_uid = pod_uid or "default/p"
    owned = (namespace or "default") == "default" and controller is not None and controller["uid"] == expected_uid
    problem = ephemeral_owner_error(the_pod, claim)
    assert (problem == "") == owned
    if not owned:
        assert problem == f"PVC {namespace or 'default'}/p-work was not created for pod default/p (pod is not owner)"


def test_whatif_capacity_counts_pods_with_ephemeral_volumes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "cluster.yaml").write_text(
        yaml.safe_dump_all([ZONES[0], storage_class("standard"), deployment("scratch", 6, ephemeral())])
    )
    (tmp_path / "node.yaml").write_text(yaml.safe_dump(node("extra", "zone-b")))
    args = ["whatif", "capacity", str(tmp_path / "cluster.yaml"), "--node-template", str(tmp_path / "node.yaml")]
    assert main([*args, "--max-nodes", "4", "--output", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["status"], doc["nodes"], doc["pendingBefore"]) == ("found", 1, 2)


def test_ui_edit_adding_a_pod_with_an_ephemeral_volume_schedules_it(tmp_path: Path) -> None:
    pytest.importorskip("starlette", reason="kubesched ui's web packages are not installed")
    from starlette.testclient import TestClient

    from kubesched.ui.server import create_app
    from kubesched.ui.workspace import Workspace

    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all([*ZONES, storage_class("standard")]))
    client = TestClient(create_app(Workspace.from_files([str(tmp_path)])), base_url="http://127.0.0.1:8080")
    r = client.post("/api/objects", json={"text": yaml.safe_dump(pod("p", ephemeral()))})
    assert r.status_code == 200, r.text
    shown = client.get("/api/pod", params={"key": "default/p"}).json()
    assert shown["result"] == "Scheduled", shown


def test_a_preempted_pods_claim_goes_with_it(tmp_path: Path) -> None:
    def priority(name: str, value: int) -> Obj:
        return {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
        }

    victim, preemptor = pod("victim", ephemeral()), pod("preemptor", ephemeral())
    for p, cls in ((victim, "low"), (preemptor, "high")):
        p["spec"]["priorityClassName"] = cls
        p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "3"
    steps = scenario({"at": "10s", "create": [preemptor]})
    run = Run(
        tmp_path, [ZONES[0], priority("low", 1), priority("high", 1000), storage_class("standard"), victim, steps]
    )
    assert [p["metadata"]["name"] for p in run.cluster.list("Pod")] == ["preemptor"]
    assert sorted(run.claims()) == ["preemptor-work"]
