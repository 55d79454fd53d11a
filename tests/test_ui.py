"""kubesched ui's JSON endpoints, through Starlette's TestClient, and the command's refusals."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from starlette.testclient import TestClient

import kubesched
from kubesched.cli import main
from kubesched.ui.server import STATIC, create_app
from kubesched.ui.workspace import InputError, Workspace

ROOT = Path(__file__).resolve().parents[1]


def node(name: str, cpu: str = "2", zone: str = "zone-a") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
    }


def pod(name: str, cpu: str = "1", node_name: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def write_cluster(directory: Path) -> Path:
    """One 2-CPU node with a 1-CPU pod bound to it and two 1-CPU pods pending: pod-3 cannot fit."""
    listed = {"apiVersion": "v1", "kind": "List", "items": [node("node-1")]}
    (directory / "nodes.yaml").write_text(yaml.safe_dump(listed))
    (directory / "pods.yaml").write_text(
        yaml.safe_dump_all([pod("pod-1", node_name="node-1"), pod("pod-2"), pod("pod-3")])
    )
    return directory


@pytest.fixture
def client(tmp_path: Path) -> TestClient:
    return TestClient(create_app(Workspace.from_files([str(write_cluster(tmp_path))])))


def test_cluster_pods_and_why(client: TestClient) -> None:
    state = client.get("/api/state").json()
    assert state["counts"] == {"nodes": 1, "objects": 4, "scheduled": 1, "pending": 1, "running": 1}
    assert state["zones"] == [{"zone": "zone-a", "nodes": 1, "pods": 2, "cpu": 1.0, "memory": 0.0}]
    nodes = client.get("/api/nodes").json()
    assert [n["name"] for n in nodes["items"]] == ["node-1"] and nodes["items"][0]["requested"]["cpu"] == "2"
    assert client.get("/api/heatmap").json()["zones"] == [
        {"zone": "zone-a", "names": ["node-1"], "cpu": [1.0], "memory": [0.0]}
    ]
    detail = client.get("/api/node", params={"name": "node-1"}).json()
    assert sorted(p["key"] for p in detail["pods"]) == ["default/pod-1", "default/pod-2"]
    assert detail["labels"]["topology.kubernetes.io/zone"] == "zone-a" and detail["entry"]["origin"].endswith(
        "nodes.yaml, document 1, items[0]"
    )
    pending = client.get("/api/pods", params={"status": "pending"}).json()
    assert [p["key"] for p in pending["items"]] == ["default/pod-3"]
    assert "0/1 nodes are available: 1 Insufficient cpu." in pending["items"][0]["message"]
    assert [p["key"] for p in client.get("/api/pods", params={"status": "running"}).json()["items"]] == [
        "default/pod-1"
    ]
    assert client.get("/api/pods", params={"status": "all", "q": "POD-2"}).json()["total"] == 1


def test_a_pods_plugin_record(client: TestClient) -> None:
    rec = client.get("/api/pod/record", params={"key": "default/pod-3"}).json()
    assert rec["recorded"] and rec["examined"] == 1 and rec["feasible"] == 0
    assert rec["rejectedBy"] == {"NodeResourcesFit": 1}
    (row,) = rec["items"]
    assert row["node"] == "node-1" and row["filter"]["NodeResourcesFit"] == "Insufficient cpu"
    assert row["total"] is None and not row["chosen"]
    scheduled = client.get("/api/pod/record", params={"key": "default/pod-2"}).json()
    # One feasible node: scoring is skipped, as upstream; the node is still the chosen one.
    assert scheduled["feasible"] == 1 and scheduled["items"][0]["chosen"] and scheduled["scorePlugins"] == []
    running = client.get("/api/pod/record", params={"key": "default/pod-1"}).json()
    assert running["recorded"] is False


def test_add_a_node_like_this_one_then_the_pod_fits(client: TestClient) -> None:
    r = client.post("/api/node/clone", json={"name": "node-1", "count": 2})
    assert r.status_code == 200, r.text
    assert r.json()["created"] == ["node-2", "node-3"]
    assert r.json()["state"]["counts"].get("pending", 0) == 0
    placed = {p["key"]: p["node"] for p in client.get("/api/pods", params={"status": "scheduled"}).json()["items"]}
    assert placed["default/pod-3"] in ("node-2", "node-3")
    new = client.get("/api/node", params={"name": "node-2"}).json()
    assert new["labels"]["kubernetes.io/hostname"] == "node-2" and new["allocatable"]["cpu"] == "2"
    rec = client.get("/api/pod/record", params={"key": "default/pod-3"}).json()
    assert rec["feasible"] == 3 and rec["items"][0]["chosen"] and rec["items"][0]["total"] is not None
    assert set(rec["weights"]) >= {"NodeResourcesFit"}


def test_edit_change_and_delete_objects(client: TestClient) -> None:
    objects = client.get("/api/objects").json()
    assert objects["kinds"] == {"Node": 1, "Pod": 3} and objects["total"] == 4
    assert client.get("/api/objects", params={"kind": "Pod", "q": "pod-3"}).json()["total"] == 1
    pod3, node1 = (next(o for o in objects["items"] if o["name"] == name) for name in ("pod-3", "node-1"))
    text = client.get("/api/object", params={"id": node1["id"]}).json()["text"]
    assert yaml.safe_load(text)["status"]["allocatable"]["cpu"] == "2"
    r = client.post("/api/objects", json={"text": text.replace("cpu: '2'", "cpu: '3'")})
    assert r.status_code == 200, r.text
    assert r.json()["changed"] == [{"kind": "Node", "namespace": "", "name": "node-1", "change": "changed"}]
    assert r.json()["state"]["counts"]["objects"] == 4  # replaced, not added
    assert client.get("/api/pod", params={"key": "default/pod-3"}).json()["result"] == "Scheduled"
    added = client.post("/api/objects", json={"text": json.dumps(node("node-9", zone="zone-b"))}).json()
    assert [z["zone"] for z in added["state"]["zones"]] == ["zone-a", "zone-b"]
    r = client.delete("/api/object", params={"id": pod3["id"]})
    assert r.status_code == 200 and r.json()["deleted"]["name"] == "pod-3"
    assert client.get("/api/pod", params={"key": "default/pod-3"}).status_code == 404
    workload = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c"}]}},
        },
    }
    client.post("/api/objects", json={"text": yaml.safe_dump(workload)})
    owned = client.get("/api/pods", params={"status": "all", "q": "Deployment/web"}).json()
    assert owned["total"] == 2 and {p["owner"] for p in owned["items"]} == {"Deployment/web"}
    exported = client.get("/api/export")
    assert exported.headers["content-type"].startswith("application/yaml")
    again = kubesched.simulate(text=exported.text, seed=1)
    shown = client.get("/api/pods", params={"status": "all"}).json()["items"]
    assert again.placements() == {p["key"]: p["node"] for p in shown if p["result"] != "Running"}


def test_refused_input_is_the_simulators_message_and_changes_nothing(client: TestClient) -> None:
    before = client.get("/api/state").json()
    bad = yaml.safe_dump({**pod("bad", "-1"), "metadata": {"name": "bad"}})
    r = client.post("/api/objects", json={"text": bad})
    assert r.status_code == 400
    assert r.json()["error"].startswith("edited in the UI (Pod default/bad): spec.containers[0].resources.requests")
    r = client.post("/api/objects", json={"text": "a: [1,\n"})
    assert r.status_code == 400 and r.json()["error"].startswith("edited in the UI: invalid YAML: line 2, column 1")
    r = client.post("/api/objects", json={"text": "---\n- 1\n---\n"})
    assert r.status_code == 400 and "expected a Kubernetes object" in r.json()["error"]
    r = client.post("/api/objects", json={"text": "# nothing\n"})
    assert r.status_code == 400 and "no objects" in r.json()["error"]
    r = client.put("/api/config", json={"text": "apiVersion: kubescheduler.config.k8s.io/v1\nkind: Nope\n"})
    assert r.status_code == 400 and r.json()["error"]
    r = client.post("/api/node/clone", json={"name": "node-1", "count": 0})
    assert r.status_code == 400 and "count" in r.json()["error"]
    assert client.get("/api/state").json() == before


def test_bad_requests_get_clear_answers_not_tracebacks(client: TestClient) -> None:
    cases = [
        client.post("/api/objects", content=b"text=1", headers={"content-type": "text/plain"}),
        client.post("/api/objects", content=b"{nope", headers={"content-type": "application/json"}),
        client.post("/api/objects", json=[1, 2]),
        client.post("/api/objects", json={"text": 5}),
        client.post("/api/rerun", json={"seed": "x"}),
        client.post("/api/node/clone", json={"name": "nope"}),
        client.get("/api/pods", params={"offset": "ten"}),
        client.get("/api/pod", params={"key": "default/none"}),
        client.get("/api/pod"),
        client.get("/api/pod/record", params={"key": "x/y"}),
        client.get("/api/node", params={"name": "none"}),
        client.get("/api/object", params={"id": "99"}),
        client.delete("/api/object", params={"id": "99"}),
    ]
    assert [r.status_code for r in cases] == [415, 400, 400, 400, 400, 404, 400, 404, 400, 404, 404, 404, 404]
    for r in cases:
        assert r.json()["error"] and "Traceback" not in r.text


def test_lone_surrogates_in_a_request_are_replacement_characters(client: TestClient) -> None:
    """Python's JSON decoder keeps a lone `\\ud800` escape as a code point no UTF-8 answer can carry; Go's gives
    U+FFFD, and so does the UI, in names it echoes back and in the objects it takes."""

    def post(path: str, body: Any) -> Any:
        escaped = json.dumps(body).encode()  # ensure_ascii: a lone surrogate goes as the escape \\ud800
        return client.post(path, content=escaped, headers={"content-type": "application/json"})

    r = post("/api/node/clone", {"name": "node-\ud800"})
    assert r.status_code == 404 and "node-\ufffd" in r.json()["error"]
    annotated = node("node-9")
    annotated["metadata"]["annotations"] = {"note": "\ud800 and \udc00"}
    r = post("/api/objects", {"text": json.dumps(annotated)})
    assert r.status_code == 200, r.text
    labelled = node("node-8")
    labelled["metadata"]["labels"]["x"] = "\udfff"
    r = post("/api/objects", {"text": json.dumps(labelled)})
    assert r.status_code == 400 and 'metadata.labels: Invalid value: "\ufffd"' in r.json()["error"]


def test_configuration_and_rerun(client: TestClient) -> None:
    assert client.get("/api/config").json() == {"text": "", "origin": ""}
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"plugins": {"multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]}}}],
    }
    r = client.put("/api/config", json={"text": yaml.safe_dump(config)})
    assert r.status_code == 200, r.text
    assert client.get("/api/pod", params={"key": "default/pod-3"}).json()["node"] == "node-1"  # nothing checks cpu
    assert client.get("/api/config").json()["origin"] == "the configuration edited in the UI"
    r = client.put("/api/config", json={"text": yaml.safe_dump({**config, "percentageOfNodesToScore": 101})})
    assert r.status_code == 400 and r.json()["error"].startswith("the configuration edited in the UI: ")
    assert client.post("/api/rerun", json={"seed": 7}).json()["state"]["seed"] == 7
    assert client.put("/api/config", json={"text": ""}).status_code == 200
    assert client.get("/api/config").json()["origin"] == ""


def test_records_on_demand_match_a_full_record(tmp_path: Path) -> None:
    objs = [node(f"n{i}", zone=f"z{i % 2}") for i in range(4)] + [pod(f"p{i}", "900m") for i in range(10)]
    full = kubesched.simulate(objs, seed=1)
    (tmp_path / "c.yaml").write_text(yaml.safe_dump_all(objs))
    ws = Workspace.from_files([str(tmp_path)], record_pairs=1)
    assert ws.state()["record"] == "on demand" and not ws.view.records
    pending = [p.key for p in full.pending]
    assert pending and ws.record(pending[-1]) == full.pod(pending[-1]).plugins
    assert set(ws.view.records) == {pending[-1]}  # a batch of one pod: record_pairs // nodes
    assert ws.record("default/p0") == full.pod("p0").plugins
    assert set(ws.view.records) == {pending[-1], "default/p0"}


def test_timeline_of_a_scenario() -> None:
    ws = Workspace.from_files([str(ROOT / "examples/scenario")])
    page = ws.events_page(limit=1000)
    assert page["total"] == len(ws.view.sim.events) > 0 and "Scheduled" in page["types"]
    times = [e["time"] for e in page["items"]]
    assert times == sorted(times) and times[-1] > 0
    points = ws.pending_over_time()
    assert points and all(n >= 0 for _, n in points)
    assert ws.events_page(kind="Scheduled")["items"][0]["type"] == "Scheduled"


def test_files_are_refused_with_file_and_document(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(yaml.safe_dump_all([node("n1"), {**pod("p"), "spec": {"containers": 3}}]))
    with pytest.raises(InputError, match=r"a\.yaml, document 2 \(Pod default/p\): spec\.containers"):
        Workspace.from_files([str(tmp_path)])
    with pytest.raises(InputError, match="no such file or directory"):
        Workspace.from_files([str(tmp_path / "missing.yaml")])


def test_command_refuses_bad_input_and_a_taken_port(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bad.yaml").write_text("kind: Pod\nmetadata: {name: x}\nspec: {nodeName: [1]}\n")
    assert main(["ui", str(tmp_path / "bad.yaml"), "--no-open"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"kubesched: {tmp_path / 'bad.yaml'}, document 1 (Pod default/x): ")
    assert "Traceback" not in err
    (tmp_path / "good").mkdir()
    good = write_cluster(tmp_path / "good")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        assert main(["ui", str(good), "--port", str(port), "--no-open"]) == 2
    assert re.match(r"kubesched: ui: cannot listen on 127\.0\.0\.1:\d+: ", capsys.readouterr().err)
    assert main(["ui", str(good), "--port", "70000", "--no-open"]) == 2
    assert capsys.readouterr().err == "kubesched: ui: --port: 70000 is not a port number\n"
    config = tmp_path / "sched.yaml"
    config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nparallelism: -1\n")
    assert main(["ui", str(good), "--config", str(config), "--no-open"]) == 2
    assert capsys.readouterr().err.startswith(f"kubesched: {config}: ")


def test_only_this_server_as_host(tmp_path: Path) -> None:
    app = create_app(Workspace.from_files([str(write_cluster(tmp_path))]), ["127.0.0.1", "localhost"])
    assert TestClient(app, base_url="http://127.0.0.1:8080").get("/api/state").status_code == 200
    assert TestClient(app, base_url="http://attacker.example").get("/api/state").status_code == 400


def test_the_page_is_served_and_fetches_nothing_from_elsewhere(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and "default-src 'self'" in page.headers["content-security-policy"]
    for src in re.findall(r'(?:src|href)="([^"]+)"', page.text):
        if not src.startswith("#"):
            assert src.startswith(("/static/", "/api/")) and client.get(src).status_code == 200
    for f in STATIC.iterdir():
        text = f.read_text().replace('xmlns="http://www.w3.org/2000/svg"', "")
        assert not re.search(r"https?://|//cdn|@import", text), f.name


def test_kubesched_run_starts_without_the_web_packages() -> None:
    code = (
        "import sys, kubesched.cli; kubesched.cli._parser(); "
        "print([m for m in sys.modules if m.startswith(('starlette', 'uvicorn', 'kubesched.ui'))])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


def test_preempted_and_deleted_pods_leave_their_nodes() -> None:
    ws = Workspace.from_files([str(ROOT / "examples/scenario")])
    rows = {p["key"]: p for p in ws.pods_page("all")["items"]}
    assert rows["default/batch-b"]["result"] == "Preempted" and rows["default/batch-a"]["result"] == "Deleted"
    assert {p["key"] for p in ws.pods_page("gone")["items"]} == {"default/batch-a", "default/batch-b"}
    on = {key for n in ws.view.nodes for key in ws.view.pods_on.get(n["name"], [])}
    assert "default/batch-b" not in on and "default/ingest" in on
    assert sum(len(v) for v in ws.view.pods_on.values()) == sum(n["pods"] for n in ws.view.nodes)
    assert ws.record("default/batch-b") is None  # bound in the input: no attempt to show
