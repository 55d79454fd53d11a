"""The embedded PV controller binds claims as kube-controller-manager's does (issue 19, item 6)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.backend.embedded.cluster import EmbeddedCluster
from kubesched.cli import main


def pv(name: str, size: str = "1Gi", modes: tuple[str, ...] = ("ReadWriteOnce",), **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name, "labels": spec.pop("labels", {})},
        "spec": {"capacity": {"storage": size}, "accessModes": list(modes), "hostPath": {"path": "/x"}, **spec},
    }


def pvc(name: str, size: str = "1Gi", modes: tuple[str, ...] = ("ReadWriteOnce",), **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {"accessModes": list(modes), "resources": {"requests": {"storage": size}}, **spec},
    }


def bound_to(cluster: EmbeddedCluster, claim: str) -> str | None:
    obj = cluster.get("PersistentVolumeClaim", "default", claim)
    assert obj is not None
    return (obj.get("spec") or {}).get("volumeName") if (obj.get("status") or {}).get("phase") == "Bound" else None


def run(volumes: list[dict[str, Any]], claim: dict[str, Any]) -> tuple[EmbeddedCluster, str | None]:
    cluster = EmbeddedCluster()
    for v in volumes:
        cluster.create(v)
    cluster.create(claim)
    return cluster, bound_to(cluster, claim["metadata"]["name"])


@pytest.mark.parametrize(
    ("volumes", "claim", "expected"),
    [
        pytest.param([pv("rwo")], pvc("c", modes=("ReadWriteOncePod",)), None, id="RWOP claim, RWO volume"),
        pytest.param(
            [pv("rwo"), pv("rwop", modes=("ReadWriteOncePod",))],
            pvc("c", modes=("ReadWriteOncePod",)),
            "rwop",
            id="RWOP claim, RWOP volume",
        ),
        pytest.param(
            [pv("many", "1Gi", ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany")), pv("one", "10Gi")],
            pvc("c"),
            "one",
            id="fewest access modes first, then size",
        ),
        pytest.param([pv("small", "1Gi"), pv("big", "5Gi")], pvc("c", "2Gi"), "big", id="large enough"),
        pytest.param([pv("a", "3Gi"), pv("b", "2Gi")], pvc("c", "2Gi"), "b", id="smallest that fits"),
        pytest.param([pv("v", storageClassName="fast")], pvc("c"), None, id="class differs"),
        pytest.param([pv("v", storageClassName="fast")], pvc("c", storageClassName="fast"), "v", id="same class"),
        pytest.param([pv("v", volumeMode="Block")], pvc("c"), None, id="volume mode differs"),
        pytest.param(
            [pv("v", labels={"tier": "gold"}), pv("w", labels={"tier": "silver"})],
            pvc("c", selector={"matchLabels": {"tier": "silver"}}),
            "w",
            id="selector",
        ),
        pytest.param(
            [
                pv(
                    "v",
                    nodeAffinity={
                        "required": {
                            "nodeSelectorTerms": [
                                {"matchExpressions": [{"key": "z", "operator": "In", "values": ["a"]}]}
                            ]
                        }
                    },
                )
            ],
            pvc("c"),
            "v",
            id="node affinity is the scheduler's business",
        ),
        pytest.param(
            [pv("pre", claimRef={"namespace": "default", "name": "c"}, modes=("ReadOnlyMany",))],
            pvc("c"),
            None,
            id="pre-bound volume without the claim's access modes",
        ),
        pytest.param(
            [pv("pre", "1Gi", claimRef={"namespace": "default", "name": "c"}, storageClassName="other"), pv("free")],
            pvc("c"),
            "pre",
            id="pre-bound volume wins over class",
        ),
        pytest.param([pv("v", "1Gi")], pvc("c", "2Gi", volumeName="v"), None, id="named volume too small"),
        pytest.param([pv("v", "2Gi")], pvc("c", "2Gi", volumeName="v"), "v", id="named volume"),
        pytest.param(
            [pv("v", modes=("ReadWriteOnce",))],
            pvc("c", modes=("ReadWriteMany",), volumeName="v"),
            None,
            id="named volume without the access mode",
        ),
    ],
)
def test_matching(volumes: list[dict[str, Any]], claim: dict[str, Any], expected: str | None) -> None:
    cluster, got = run(volumes, claim)
    assert got == expected
    if expected is not None:
        volume = cluster.get("PersistentVolume", "", expected)
        assert volume is not None
        assert volume["status"]["phase"] == "Bound"
        assert volume["spec"]["claimRef"]["uid"] == "uid-c"


def test_free_volumes_become_available() -> None:
    cluster = EmbeddedCluster()
    cluster.create(pv("v"))
    volume = cluster.get("PersistentVolume", "", "v")
    assert volume is not None and volume["status"]["phase"] == "Available"


@pytest.mark.parametrize(
    "volume",
    [
        {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "bare"}},
        {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "bare"}, "spec": None, "status": None},
        {"kind": "PersistentVolume", "metadata": {"name": "bare", "labels": {"topology.kubernetes.io/zone": "a"}}},
    ],
)
def test_partial_volumes_never_raise(volume: dict[str, Any]) -> None:
    cluster = EmbeddedCluster()
    cluster.create(volume)
    cluster.create(pvc("c", modes=()))
    assert bound_to(cluster, "c") is None  # a volume without capacity holds nothing
    small = pvc("zero", modes=())
    del small["spec"]["resources"]
    cluster.create(small)
    assert bound_to(cluster, "zero") == "bare"


def test_a_rwop_pod_waits_for_its_claim(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A ReadWriteOncePod claim with only a ReadWriteOnce volume stays unbound, and its pod with it (as upstream)."""
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}},
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {
            "containers": [{"name": "c"}],
            "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "c"}}],
        },
    }
    f = tmp_path / "in.yaml"
    f.write_text(yaml.safe_dump_all([node, pv("rwo"), pvc("c", modes=("ReadWriteOncePod",)), pod]))
    assert main(["simulate", str(f), "--output", "json"]) == 0
    result = json.loads(capsys.readouterr().out)["pods"][0]
    assert result["result"] == "Unschedulable"
    assert "pod has unbound immediate PersistentVolumeClaims" in result["message"]
