"""Issue 29: every command takes --overlay as simulate does, and a configuration's mistake names its file and
field (and, in whatif compare, its side) on every route, as simulate --config does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from starlette.testclient import TestClient

from kubesched.cli import main
from kubesched.ui.server import create_app
from kubesched.ui.workspace import Workspace

LOCAL = "http://127.0.0.1:8080"  # the UI answers only to loopback names
BAD_FIELD = "profiles[0].plugins.score.enabled[0].name: initializing profiles: "
BAD_CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {"schedulerName": "default-scheduler", "plugins": {"score": {"enabled": [{"name": "NodeResourcesFitt"}]}}}
    ],
}


def node(name: str, cpu: int = 2) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": str(cpu), "memory": "8Gi", "pods": "110"}},
    }


def pod(name: str, cpu: int = 1) -> dict[str, Any]:
    spec = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": str(cpu)}}}]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


@pytest.fixture
def files(tmp_path: Path) -> Path:
    """cluster.yaml: one 2-CPU node and three 1-CPU pods (one stays pending); bad.yaml: a misspelt score plugin;
    bigger.yaml: the same node with 4 CPUs; node.yaml: a node template."""
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all([node("node-1"), pod("p1"), pod("p2"), pod("p3")]))
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(BAD_CONFIG))
    (tmp_path / "bigger.yaml").write_text(yaml.safe_dump(node("node-1", cpu=4)))
    (tmp_path / "node.yaml").write_text(yaml.safe_dump(node("template", cpu=1)))
    return tmp_path


def _error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    return err


# --- item 4: a configuration's mistake names file and field everywhere -----------------------------------


def test_simulate_names_file_and_field(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = _error(["simulate", str(files / "cluster.yaml"), "--config", str(files / "bad.yaml")], capsys)
    assert err.startswith(f"kubesched: {files / 'bad.yaml'}: {BAD_FIELD}")


def test_capacity_names_file_and_field(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["whatif", "capacity", str(files / "cluster.yaml"), "--node-template", str(files / "node.yaml")]
    err = _error([*argv, "--config", str(files / "bad.yaml")], capsys)
    assert err.startswith(f"kubesched: {files / 'bad.yaml'}: {BAD_FIELD}")


@pytest.mark.parametrize("side", ["A", "B"])
def test_compare_names_side_file_and_field(side: str, files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = str(files / "bad.yaml")
    configs = ["--config", bad, "--config", "default"] if side == "A" else ["--config", "default", "--config", bad]
    err = _error(["whatif", "compare", str(files / "cluster.yaml"), *configs], capsys)
    assert err.startswith(f"kubesched: {bad} (config {side}): {BAD_FIELD}")


def test_compare_side_of_a_missing_file(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = str(files / "missing.yaml")
    err = _error(["whatif", "compare", str(files / "cluster.yaml"), "--config", "default", "--config", missing], capsys)
    assert err.startswith(f"kubesched: {missing} (config B): ")


def test_sweep_names_file_and_field(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (files / "spec.yaml").write_text(
        yaml.safe_dump({"base": ["cluster.yaml"], "grid": {"config": ["default", "bad.yaml"]}})
    )
    err = _error(["sweep", str(files / "spec.yaml"), "--workers", "1"], capsys)
    assert err.startswith(f"kubesched: {files / 'bad.yaml'}: {BAD_FIELD}")


def test_ui_config_names_file_and_field(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["ui", str(files / "cluster.yaml"), "--config", str(files / "bad.yaml"), "--no-open", "--port", "0"]
    err = _error(argv, capsys)
    assert err.startswith(f"kubesched: {files / 'bad.yaml'}: {BAD_FIELD}")


def test_ui_config_edit_names_the_edit_and_field(files: Path) -> None:
    client = TestClient(create_app(Workspace.from_files([str(files / "cluster.yaml")])), base_url=LOCAL)
    r = client.put("/api/config", json={"text": yaml.safe_dump(BAD_CONFIG)})
    assert r.status_code == 400
    assert r.json()["error"].startswith(f"the configuration edited in the UI: {BAD_FIELD}")
    assert client.get("/api/config").json()["origin"] == ""  # refused: the configuration stays as it was
