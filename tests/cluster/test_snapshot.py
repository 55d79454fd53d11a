"""kubesched snapshot: what it writes, simulate reads as is."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
import yaml
from tests.cluster.helpers import node, pod

from kubesched.cli import main
from kubesched_testing.apiserver import FakeAPIServer


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


@pytest.fixture
def no_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No $KUBECONFIG, an empty home, not in a pod: the home directory, for the test to fill."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_PORT", raising=False)
    monkeypatch.setenv("HOME", str(home))
    return home


def snapshot_nodes(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str], str]:
    code = main(["snapshot", *args])
    out = capsys.readouterr()
    return code, [d["metadata"]["name"] for d in yaml.safe_load_all(out.out) if d], out.err


def test_credentials_as_kubectl_finds_them(
    apiserver: FakeAPIServer, kubeconfig: str, no_credentials: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    apiserver.create(node("n1", cpu="2"))
    code, _, err = snapshot_nodes(capsys)
    assert code == 2
    assert err == (
        "kubesched: snapshot: no --kubeconfig given, $KUBECONFIG is not set, no ~/.kube/config, "
        "and no in-cluster credentials (Service host/port is not set)\n"
    )
    (no_credentials / ".kube").mkdir()
    (no_credentials / ".kube" / "config").write_text(Path(kubeconfig).read_text())
    assert snapshot_nodes(capsys)[:2] == (0, ["n1"])  # ~/.kube/config
    monkeypatch.setenv("KUBECONFIG", f"{no_credentials / 'missing'}:{kubeconfig}")
    assert snapshot_nodes(capsys)[:2] == (0, ["n1"])  # the first file in $KUBECONFIG that exists
    monkeypatch.setenv("KUBECONFIG", str(no_credentials / "missing"))
    code, _, err = snapshot_nodes(capsys)  # a set $KUBECONFIG takes the place of ~/.kube/config, as for kubectl
    assert code == 2 and f"no file in $KUBECONFIG ({no_credentials / 'missing'}) exists" in err
    code, _, err = snapshot_nodes(capsys, "--kubeconfig", str(no_credentials / "nope"))
    assert code == 2 and err == f"kubesched: snapshot: kubeconfig {no_credentials / 'nope'}: no such file\n"


def test_run_reads_no_kubeconfig_it_is_not_given(kubeconfig: str, no_credentials: Path, monkeypatch, capsys) -> None:
    """kube-scheduler uses in-cluster credentials when --kubeconfig is empty, whatever $KUBECONFIG says."""
    monkeypatch.setenv("KUBECONFIG", kubeconfig)
    assert main(["run", "--secure-port", "0"]) == 2
    assert capsys.readouterr().err == (
        "kubesched: cannot reach the cluster: no --kubeconfig given and no in-cluster credentials "
        "(Service host/port is not set)\n"
    )


@pytest.mark.parametrize(
    ("target", "reason"),
    [
        ("missing/out.yaml", "No such directory: {tmp}/missing"),
        (".", "Is a directory"),
        ("file.txt/out.yaml", "Not a directory: {tmp}/file.txt"),
    ],
)
def test_output_path_is_checked_first(
    tmp_path: Path, no_credentials: Path, capsys, monkeypatch: pytest.MonkeyPatch, target: str, reason: str
) -> None:
    """Before any credentials are looked for: no credentials here, and the path is what is reported."""
    (tmp_path / "file.txt").write_text("x")
    path = str(tmp_path / target)
    assert main(["snapshot", "-o", path]) == 2
    assert capsys.readouterr().err == f"kubesched: snapshot: cannot write {path}: {reason.format(tmp=tmp_path)}\n"


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_output_path_without_permission(tmp_path: Path, no_credentials: Path, capsys) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    assert main(["snapshot", "-o", str(locked / "out.yaml")]) == 2
    assert capsys.readouterr().err == f"kubesched: snapshot: cannot write {locked / 'out.yaml'}: Permission denied\n"


def test_output_is_written_whole_or_not_at_all(
    apiserver: FakeAPIServer, kubeconfig: str, tmp_path: Path, capsys
) -> None:
    apiserver.create(node("n1", cpu="2"))
    out = tmp_path / "out" / "cluster.yaml"
    out.parent.mkdir()
    out.write_text("previous\n")
    out.chmod(0o640)
    assert main(["snapshot", "--kubeconfig", kubeconfig, "-o", str(out)]) == 0
    assert [d["metadata"]["name"] for d in yaml.safe_load_all(out.read_text())] == ["n1"]
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    assert os.listdir(out.parent) == ["cluster.yaml"]
    capsys.readouterr()
    out.write_text("previous\n")
    unreachable = tmp_path / "unreachable"
    unreachable.write_text(Path(kubeconfig).read_text().replace(apiserver.url, "http://127.0.0.1:1"))
    assert main(["snapshot", "--kubeconfig", str(unreachable), "-o", str(out)]) != 0
    assert out.read_text() == "previous\n"
    assert os.listdir(out.parent) == ["cluster.yaml"]  # no temporary file left behind


def test_master_holds_for_every_request_not_only_the_first(apiserver: FakeAPIServer, tmp_path: Path, capsys) -> None:
    """The kubeconfig loader puts the kubeconfig's server back before each request unless told not to."""
    apiserver.create(node("n1"))
    nowhere = tmp_path / "kubeconfig"
    nowhere.write_text(apiserver.kubeconfig().replace(apiserver.url, "http://127.0.0.1:1"))
    out = tmp_path / "snap.yaml"
    assert main(["snapshot", "--kubeconfig", str(nowhere), "--master", apiserver.url, "-o", str(out)]) == 0
    assert "n1" in out.read_text()
    lists = {p for m, p in apiserver.requests if m == "GET"}
    assert len(lists) >= 15  # every kind listed, from the server --master names


def test_snapshot_records_the_version_and_simulate_follows_it(
    apiserver: FakeAPIServer, kubeconfig: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """GET /version's gitVersion becomes the file's first line; simulate follows it (said once), a flag wins."""
    apiserver.version = "v1.34.7-eks-1234"
    apiserver.create(node("n1", cpu="4"))
    apiserver.create(node("n2", cpu="4"))  # two feasible nodes, so that scores are computed
    apiserver.create(pod("pending", cpu="3", memory="4Gi"))
    out = tmp_path / "cluster.yaml"
    assert main(["snapshot", "--kubeconfig", kubeconfig, "-o", str(out)]) == 0
    assert out.read_text().splitlines()[0] == "# kubesched snapshot of a Kubernetes cluster at v1.34.7-eks-1234"
    capsys.readouterr()
    assert main(["simulate", str(out), "--output", "json", "--seed", "1"]) == 0
    captured = capsys.readouterr()
    said = [line for line in captured.err.splitlines() if "records Kubernetes" in line]
    assert said == [
        f"kubesched: {out} records Kubernetes v1.34.7-eks-1234: following kube-scheduler v1.34 (--kubernetes-version)"
    ]
    scores = json.loads(captured.out)["pods"][0]["plugins"]["score"]["n1"]
    assert scores["NodeResourcesBalancedAllocation"] == 87  # v1.34's formula: the balance after the pod
    assert main(["simulate", str(out), "--output", "json", "--kubernetes-version", "1.36"]) == 0
    captured = capsys.readouterr()
    assert "records Kubernetes" not in captured.err
    assert json.loads(captured.out)["pods"][0]["plugins"]["score"]["n1"]["NodeResourcesBalancedAllocation"] == 68


def test_snapshot_without_version_writes_no_marker(apiserver: FakeAPIServer, kubeconfig: str, tmp_path: Path) -> None:
    apiserver.create(node("n1", cpu="4"))
    out = tmp_path / "cluster.yaml"
    assert main(["snapshot", "--kubeconfig", kubeconfig, "-o", str(out)]) == 0
    assert not out.read_text().startswith("#")
