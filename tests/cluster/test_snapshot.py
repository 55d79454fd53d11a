"""kubesched snapshot: what it writes, simulate reads as is."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from tests.cluster.helpers import node, pod

from kubesched.cli import main
from kubesched.testing.apiserver import FakeAPIServer


def test_snapshot_feeds_simulate(apiserver: FakeAPIServer, kubeconfig: str, tmp_path: Path, capsys) -> None:
    apiserver.create(node("n1", cpu="2"))
    apiserver.create(node("n2", cpu="2", zone="b"))
    apiserver.create({"kind": "Namespace", "metadata": {"name": "default", "labels": {"team": "a"}}})
    running = pod("running", cpu="1500m", nodeName="n1")
    running["status"] = {"phase": "Running", "podIP": "10.0.0.1", "conditions": [{"type": "Ready", "status": "True"}]}
    running["metadata"]["annotations"] = {"kubectl.kubernetes.io/last-applied-configuration": "{}", "keep": "me"}
    apiserver.create(running)
    done = pod("done", nodeName="n2")
    done["status"] = {"phase": "Succeeded"}
    apiserver.create(done)
    apiserver.create(pod("pending", cpu="1"))
    out = tmp_path / "cluster.yaml"
    assert main(["snapshot", "--kubeconfig", kubeconfig, "-o", str(out)]) == 0
    docs = list(yaml.safe_load_all(out.read_text()))
    kinds = [d["kind"] for d in docs]
    assert kinds == ["Namespace", "Node", "Node", "Pod", "Pod"]
    pods = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Pod"}
    assert set(pods) == {"running", "pending"}  # finished pods are not in the scheduler's view
    assert pods["running"]["status"] == {"phase": "Running"}
    assert pods["running"]["metadata"]["annotations"] == {"keep": "me"}
    assert "resourceVersion" not in pods["running"]["metadata"]
    capsys.readouterr()
    assert main(["simulate", str(out), "--output", "json", "--seed", "1"]) == 0
    result = json.loads(capsys.readouterr().out)
    placed = {p["name"]: p["node"] for p in result["pods"]}
    assert placed == {"pending": "n2"}  # n1 has 500m left
