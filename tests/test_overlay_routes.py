"""Issue 29: every command takes --overlay as simulate does, and a configuration's mistake names its file and
field (and, in whatif compare, its side) on every route, as simulate --config does."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from kubesched.api.kinds import KINDS
from kubesched.cli import main
from kubesched.simulator.inputs import with_overlays
from kubesched.simulator.load import LoadedInput, _apply_overlays, add_document
from kubesched.ui.server import create_app
from kubesched.ui.workspace import Entry, InputError, Workspace, _overlaid
from kubesched.ui.workspace import identity as workspace_identity

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


# --- item 3: --overlay on whatif capacity, whatif compare, sweep (spec key) and ui --------------------------

EXTENDER_CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "extenders": [{"urlPrefix": "http://127.0.0.1:1/", "filterVerb": "filter"}],
}
REFUSED = 'extenders[0].urlPrefix: extender "http://127.0.0.1:1/" would be sent every pod; a configuration read as data'


def _json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> Any:
    assert main([*argv, "--output", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_capacity_with_an_overlay(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["whatif", "capacity", str(files / "cluster.yaml"), "--node-template", str(files / "node.yaml")]
    assert _json(argv, capsys)["nodes"] == 1  # p3 waits for a node without the overlay
    answer = _json([*argv, "--overlay", str(files / "bigger.yaml")], capsys)
    assert (answer["status"], answer["nodes"], answer["pendingBefore"]) == ("none-needed", 0, 0)


def test_capacity_reads_the_overlays_pods_for_what_no_node_can_place(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The pod alone on an empty template node is the overlay's (3 CPUs: it fits no 1-CPU node), not the FILEs'."""
    (files / "big-pod.yaml").write_text(yaml.safe_dump(pod("p3", cpu=3)))
    argv = ["whatif", "capacity", str(files / "cluster.yaml"), "--node-template", str(files / "node.yaml")]
    answer = _json([*argv, "--overlay", str(files / "big-pod.yaml"), "--max-nodes", "4"], capsys)
    assert answer["status"] == "blocked" and [b["pod"] for b in answer["blocked"]] == ["default/p3"]
    assert answer["blocked"][0]["reasons"] == {"NodeResourcesFit": "Insufficient cpu"}


def test_compare_with_overlays(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (files / "more.yaml").write_text(yaml.safe_dump(pod("p4")))
    argv = ["whatif", "compare", str(files / "cluster.yaml"), "--config", "default", "--config", "default"]
    assert _json(argv, capsys)["a"]["pending"] == 1
    both = _json([*argv, "--overlay", str(files / "bigger.yaml"), "--overlay", str(files / "more.yaml")], capsys)
    assert [(s["pods"], s["pending"]) for s in (both["a"], both["b"])] == [(4, 0), (4, 0)]


def test_sweep_overlays_are_resolved_against_the_spec(
    files: Path, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    spec = files / "spec.yaml"
    spec.write_text(yaml.safe_dump({"base": ["cluster.yaml"], "overlays": ["bigger.yaml"], "template": "node.yaml"}))
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    rows = _json(["sweep", str(spec), "--workers", "1"], capsys)["points"]
    assert [(r["pods"], r["pending"], r["clusterNodes"]) for r in rows] == [(3, 0, 1)]
    spec.write_text(yaml.safe_dump({"base": ["cluster.yaml"], "template": "node.yaml"}))
    assert _json(["sweep", str(spec), "--workers", "1"], capsys)["points"][0]["pending"] == 1


def test_a_sweep_scales_the_overlays_workloads(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Points vary the combination: scale 2 doubles the overlay's pending pod, not the FILEs' one it replaced."""
    (files / "fat.yaml").write_text(yaml.safe_dump(pod("p3", cpu=2)))
    spec = files / "spec.yaml"
    spec.write_text(yaml.safe_dump({"base": ["cluster.yaml"], "overlays": "fat.yaml", "grid": {"scale": [1, 2]}}))
    rows = _json(["sweep", str(spec), "--workers", "1"], capsys)["points"]
    assert [(r["pods"], r["pending"], r["utilisation"]["cpu"]) for r in rows] == [(3, 1, 1.0), (6, 4, 1.0)]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"base": ["cluster.yaml"], "overlays": ["nope.yaml"]}, "overlays: nope.yaml: no such file or directory"),
        ({"base": ["cluster.yaml"], "overlays": {"a": 1}}, "overlays: expected a list of files or directories"),
    ],
)
def test_a_bad_sweep_overlay_names_spec_and_field(
    spec: dict[str, Any], message: str, files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (files / "spec.yaml").write_text(yaml.safe_dump(spec))
    assert _error(["sweep", str(files / "spec.yaml"), "--workers", "1"], capsys).startswith(
        f"kubesched: {files / 'spec.yaml'}: {message}"
    )


def test_ui_with_overlays(files: Path) -> None:
    (files / "more.yaml").write_text(yaml.safe_dump(pod("p4")))
    ws = Workspace.from_files(
        [str(files / "cluster.yaml")], overlays=[str(files / "bigger.yaml"), str(files / "more.yaml")]
    )
    client = TestClient(create_app(ws), base_url=LOCAL)
    state = client.get("/api/state").json()
    assert "pending" not in state["counts"]
    assert state["counts"]["scheduled"] == 4 and state["counts"]["objects"] == 5
    assert state["warnings"] == [
        f"{files / 'bigger.yaml'}, document 1 (Node node-1) replaces the object in {files / 'cluster.yaml'}, document 1"
    ]
    node_entry = client.get("/api/node", params={"name": "node-1"}).json()["entry"]
    assert node_entry["origin"] == f"{files / 'bigger.yaml'}, document 1"
    assert "cpu: '4'" in client.get("/api/export").text


def test_ui_overlay_refusals(files: Path) -> None:
    twice = files / "twice.yaml"
    twice.write_text(yaml.safe_dump_all([pod("p9"), pod("p9")]))
    with pytest.raises(InputError, match=r"twice.yaml, document 2 \(Pod default/p9\): given twice among the overlays"):
        Workspace.from_files([str(files / "cluster.yaml")], overlays=[str(twice)])


@pytest.mark.parametrize("command", ["capacity", "compare", "sweep", "ui"])
def test_a_configuration_in_an_overlay_is_data_on_every_route(
    command: str, files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ext = files / "ext.yaml"
    ext.write_text(yaml.safe_dump(EXTENDER_CONFIG))
    cluster, overlay = str(files / "cluster.yaml"), ["--overlay", str(ext)]
    argv = {
        "capacity": ["whatif", "capacity", cluster, *overlay, "--node-template", str(files / "node.yaml")],
        "compare": ["whatif", "compare", cluster, *overlay, "--config", "default", "--config", "default"],
        "sweep": ["sweep", str(files / "spec.yaml"), "--workers", "1"],
        "ui": ["ui", cluster, *overlay, "--no-open", "--port", "0"],
    }[command]
    (files / "spec.yaml").write_text(yaml.safe_dump({"base": ["cluster.yaml"], "overlays": ["ext.yaml"]}))
    assert _error(argv, capsys).startswith(f"kubesched: {ext}, document 1: {REFUSED}")


def test_whatif_overlays_are_read_again_so_not_stdin(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["whatif", "compare", str(files / "cluster.yaml"), "--overlay", "-", "--config", "default"]
    err = _error([*argv, "--config", "default"], capsys)
    assert err.startswith("kubesched: -: standard input cannot be read again for each simulation")


# --- one combination, three implementations: the loader's, the what-if inputs', the UI's ------------------

_KINDS = ("Node", "Pod", "ConfigMap", "KubeSchedulerConfiguration")
_objects = st.lists(
    st.tuples(st.sampled_from(_KINDS), st.sampled_from(["a", "b", "c", ""]), st.sampled_from([None, "default", "x"])),
    max_size=8,
)


def _object(kind: str, name: str, namespace: str | None, tag: str) -> dict[str, Any]:
    """A named object, or one named by generateName (`name` empty); `tag` tells copies apart."""
    meta: dict[str, Any] = {"name": name} if name else {"generateName": "g-"}
    if namespace is not None:
        meta["namespace"] = namespace
    meta["annotations"] = {"tag": tag}
    api = "kubescheduler.config.k8s.io/v1" if kind == "KubeSchedulerConfiguration" else "v1"
    return {"apiVersion": api, "kind": kind, "metadata": meta}


def _unique(specs: list[tuple[str, str, str | None]], tag: str) -> list[dict[str, Any]]:
    """Objects as valid input has them: one per kind, namespace and name, and one configuration."""
    out: list[dict[str, Any]] = []
    seen: set[Any] = set()
    for i, (kind, name, namespace) in enumerate(specs):
        obj = _object(kind, name, namespace, f"{tag}{i}")
        key = (kind,) if kind == "KubeSchedulerConfiguration" else (kind, workspace_identity(obj))
        if name and key in seen or (kind == "KubeSchedulerConfiguration" and key in seen):
            continue
        seen.add(key)
        out.append(obj)
    return out


def _tags(objects: list[dict[str, Any]]) -> list[str]:
    return [o["metadata"]["annotations"]["tag"] for o in objects]


@settings(max_examples=200, deadline=None)
@given(_objects, _objects)
def test_every_route_combines_overlays_as_simulate_does(
    base_specs: list[tuple[str, str, str | None]], overlay_specs: list[tuple[str, str, str | None]]
) -> None:
    base, overlays = _unique(base_specs, "b"), _unique(overlay_specs, "o")
    loaded = LoadedInput()
    for i, obj in enumerate(copy.deepcopy(base), start=1):
        add_document(loaded, obj, "base.yaml", i)
    for i, obj in enumerate(copy.deepcopy(overlays), start=1):
        add_document(loaded, obj, "overlay.yaml", i, overlay=True)
    _apply_overlays(loaded)
    config = [loaded.config] if loaded.config is not None else []
    simulated = _tags(config) + _tags([so.obj for so in loaded.objects])

    stored = KINDS | {"KubeSchedulerConfiguration"}  # the loader skips the rest (ConfigMaps) and keeps the config apart
    combined = [o for o in with_overlays(base, overlays) if o["kind"] in stored]
    configs = [o for o in combined if o["kind"] == "KubeSchedulerConfiguration"]
    assert _tags(configs) + _tags([o for o in combined if o not in configs]) == simulated

    entries = [Entry(i, o, f"base {i}") for i, o in enumerate(base, 1) if o["kind"] != "KubeSchedulerConfiguration"]
    extra = [
        Entry(i, o, f"overlay {i}") for i, o in enumerate(overlays, 1) if o["kind"] != "KubeSchedulerConfiguration"
    ]
    in_ui, _ = _overlaid(entries, extra)
    assert _tags([e.obj for e in in_ui if e.obj["kind"] in KINDS]) == simulated[len(config) :]
    assert len({e.id for e in in_ui}) == len(in_ui)  # the page tells entries apart by id
