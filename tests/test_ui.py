"""kubesched ui's JSON endpoints, through Starlette's TestClient, and the command's refusals."""

from __future__ import annotations

import http.client
import json
import os
import re
import socket
import string
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

import kubesched
from kubesched.cli import main
from kubesched.ui.guard import is_loopback, server_names
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


LOCAL = "http://127.0.0.1:8080"
"""Where the TestClient says it talks to: the server answers only to its own names (loopback's by default)."""


@pytest.fixture
def client(tmp_path: Path) -> TestClient:
    return TestClient(create_app(Workspace.from_files([str(write_cluster(tmp_path))])), base_url=LOCAL)


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


def test_a_node_like_an_eks_one_is_its_own_host_in_the_same_domain(tmp_path: Path) -> None:
    """Not ip-10-0-0-10.eu-west-1.compute.internal-2 with the original's instance, pod range and addresses."""
    eks = node("ip-10-0-0-10.eu-west-1.compute.internal")
    eks["metadata"]["uid"] = "4a1c1a7e"
    eks["spec"] = {"providerID": "aws:///eu-west-1a/i-0abc", "podCIDR": "10.244.1.0/24", "podCIDRs": ["10.244.1.0/24"]}
    eks["status"]["addresses"] = [{"type": "InternalIP", "address": "10.0.0.10"}]
    taken = node("ip-10-0-0-10-2.eu-west-1.compute.internal")
    (tmp_path / "nodes.yaml").write_text(yaml.safe_dump_all([eks, taken]))
    client = TestClient(create_app(Workspace.from_files([str(tmp_path)])), base_url=LOCAL)
    r = client.post("/api/node/clone", json={"name": "ip-10-0-0-10.eu-west-1.compute.internal", "count": 2})
    assert r.status_code == 200, r.text
    created = ["ip-10-0-0-10-3.eu-west-1.compute.internal", "ip-10-0-0-10-4.eu-west-1.compute.internal"]
    assert r.json()["created"] == created  # -2 is taken
    ids = {o["name"]: o["id"] for o in client.get("/api/objects", params={"kind": "Node"}).json()["items"]}
    for name in created:
        made = yaml.safe_load(client.get("/api/object", params={"id": ids[name]}).json()["text"])
        assert made["metadata"] == {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": "zone-a"},
        }
        assert made["spec"] == {} and "addresses" not in made["status"]
        assert made["status"]["allocatable"] == eks["status"]["allocatable"]
        assert client.get("/api/node", params={"name": name}).json()["zone"] == "zone-a"


def test_a_copy_skips_the_names_scenario_steps_give_nodes(tmp_path: Path) -> None:
    step = {
        "apiVersion": "kubesched.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "grow"},
        "steps": [{"at": "1s", "create": [node("node-2")]}],
    }
    (tmp_path / "all.yaml").write_text(yaml.safe_dump_all([node("node-1"), step]))
    client = TestClient(create_app(Workspace.from_files([str(tmp_path)])), base_url=LOCAL)
    assert [n["name"] for n in client.get("/api/nodes").json()["items"]] == ["node-1", "node-2"]
    r = client.post("/api/node/clone", json={"name": "node-1"})
    assert r.status_code == 200, r.text
    assert r.json()["created"] == ["node-3"]


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


# ---------------------------------------------------------------------- who may talk to the server

TOKEN = "t0ken-for-the-tests-0123456789"
REMOTE = "http://kubesched.example:8080"
"""A server off loopback, as the TestClient reaches it: a name of the machine's, a token needed."""


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return Workspace.from_files([str(write_cluster(tmp_path))])


@pytest.fixture
def remote(workspace: Workspace) -> TestClient:
    app = create_app(workspace, ["kubesched.example", "10.1.2.3"], token=TOKEN, cookie="kubesched-ui-8080")
    return TestClient(app, base_url=REMOTE, follow_redirects=False)


def test_only_this_server_as_host(tmp_path: Path) -> None:
    app = create_app(Workspace.from_files([str(write_cluster(tmp_path))]), ["127.0.0.1", "localhost", "::1"])
    for url in ("http://127.0.0.1:8080", "http://localhost", "http://LOCALHOST:1", "http://[::1]:8080"):
        assert TestClient(app, base_url=url).get("/api/state").status_code == 200, url
    evil = TestClient(app, base_url="http://attacker.example")
    for path in ("/api/state", "/", "/static/app.js", "/api/export", "/api/pod-groups"):
        r = evil.get(path)
        assert r.status_code == 400 and "'attacker.example' does not name this server" in r.json()["error"], path
    assert evil.post("/api/rerun", json={}).status_code == 400
    local = TestClient(app, base_url="http://127.0.0.1:8080")
    with pytest.raises(WebSocketDisconnect):  # the UI has no websockets; none gets past the checks
        local.websocket_connect("/").__enter__()
    for host in ("127.0.0.1.attacker.example", "localhost.attacker.example:8080", "127.0.0.1:80:80", "", "[::1"):
        assert local.get("/api/state", headers={"host": host}).status_code == 400, host


def test_the_default_allow_list_is_loopback(workspace: Workspace) -> None:
    app = create_app(workspace)
    assert TestClient(app, base_url="http://localhost:8080").get("/api/heatmap").status_code == 200
    assert TestClient(app).get("/api/heatmap").status_code == 400  # TestClient's own "testserver"


@given(st.text(alphabet=string.ascii_letters + string.digits + ".-:[]_@", max_size=40))
@example("localhost:http")
@example("[::1]x")
@example("evil@localhost")
@example("LocalHost:8080")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_no_other_host_is_answered(workspace: Workspace, host: str) -> None:
    """A Host the URL parser itself would not read as a loopback name, with at most a port, is refused."""
    app = create_app(workspace)
    r = TestClient(app, base_url=LOCAL).get("/api/heatmap", headers={"host": host})
    try:
        parsed = urlsplit(f"http://{host}")
        name, _ = parsed.hostname, parsed.port
    except ValueError:
        name = None
    if r.status_code == 200:
        assert name in ("localhost", "127.0.0.1", "::1") and "@" not in host, host
    else:
        assert r.status_code == 400 and r.json()["error"], host


def test_changes_from_another_site_are_refused_on_loopback(client: TestClient) -> None:
    before = client.get("/api/state").json()
    evil = [
        {"origin": "http://attacker.example"},
        {"origin": "null"},
        {"origin": "http://127.0.0.1:9999"},  # another port is another origin
        {"origin": "http://127.0.0.1:8080", "sec-fetch-site": "cross-site"},
        {"sec-fetch-site": "same-site"},
        {"sec-fetch-site": "cross-site"},
    ]
    for headers in evil:
        for r in (
            client.post("/api/rerun", json={"seed": 9}, headers=headers),
            client.post("/api/node/clone", json={"name": "node-1"}, headers=headers),
            client.put("/api/config", json={"text": ""}, headers=headers),
            client.delete("/api/object", params={"id": 1}, headers=headers),
        ):
            assert r.status_code == 403, (headers, r.request.method, r.text)
            assert r.json()["error"].startswith("refused a change from another site")
    assert client.get("/api/state").json() == before
    # Reading is not a change: another site's page may send it, but the browser keeps the answer from it.
    assert client.get("/api/state", headers={"origin": "http://attacker.example"}).status_code == 200
    own = {"origin": LOCAL, "sec-fetch-site": "same-origin"}
    assert client.post("/api/rerun", json={"seed": 9}, headers=own).json()["state"]["seed"] == 9
    assert client.post("/api/rerun", json={"seed": 8}).json()["state"]["seed"] == 8  # curl sends neither


def test_off_loopback_nothing_without_the_token(remote: TestClient) -> None:
    for path in ("/api/state", "/api/export", "/static/app.js", "/static/favicon.svg", "/api/pods?status=all"):
        r = remote.get(path)
        assert r.status_code == 401 and "needs its access token" in r.json()["error"], path
        assert r.headers["www-authenticate"].startswith("Bearer")
    page = remote.get("/")
    assert page.status_code == 401 and '<form method="get" action="/">' in page.text
    assert "default-src 'none'" in page.headers["content-security-policy"]
    assert remote.post("/api/rerun", json={"seed": 3}).status_code == 401
    wrong = [
        remote.get("/api/state", params={"token": TOKEN[:-1]}),
        remote.get("/", params={"token": TOKEN + "x"}),
        remote.get("/api/state", headers={"authorization": f"Bearer {TOKEN[:-1]}"}),
        remote.get("/api/state", headers={"authorization": f"Basic {TOKEN}"}),
        remote.get("/api/state", headers={b"authorization": "Bearer ünïcödé".encode()}),
        remote.get("/api/state", headers={"cookie": f"kubesched-ui-8080={TOKEN}0"}),
        remote.get("/api/state", headers={"cookie": f"kubesched-ui-9090={TOKEN}"}),  # another server's
    ]
    assert [r.status_code for r in wrong] == [401] * len(wrong)
    assert "that token is not this server's" in wrong[1].text


def test_the_token_in_the_url_sets_a_cookie_then_the_page_works(remote: TestClient) -> None:
    r = remote.get("/", params={"token": TOKEN})
    assert r.status_code == 303 and r.headers["location"] == "/"  # the token leaves the address bar
    cookie = r.headers["set-cookie"]
    assert cookie.startswith(f"kubesched-ui-8080={TOKEN};")
    assert {"httponly", "samesite=strict", "path=/"} <= {p.strip().lower() for p in cookie.split(";")}
    assert remote.get("/").status_code == 200 and remote.get("/static/app.js").status_code == 200
    assert remote.get("/api/state").json()["counts"]["nodes"] == 1
    own = {"origin": REMOTE, "sec-fetch-site": "same-origin"}
    assert remote.post("/api/node/clone", json={"name": "node-1"}, headers=own).json()["created"] == ["node-2"]
    assert remote.post("/api/rerun", json={}, headers={"origin": "http://attacker.example"}).status_code == 403
    kept = remote.get("/api/pods", params={"status": "all", "token": TOKEN, "q": "pod"})
    assert kept.status_code == 303 and kept.headers["location"] == "/api/pods?status=all&q=pod"


def test_scripts_send_the_token_as_bearer(remote: TestClient) -> None:
    bearer = {"authorization": f"Bearer {TOKEN}"}
    assert remote.get("/api/state", headers=bearer).status_code == 200
    assert remote.post("/api/rerun", json={"seed": 4}, headers=bearer).json()["state"]["seed"] == 4
    assert remote.get("/api/state").status_code == 401  # no cookie was set
    ip = TestClient(remote.app, base_url="http://10.1.2.3:8080")
    assert ip.get("/api/state", headers=bearer).status_code == 200
    assert ip.get("/api/state", headers={**bearer, "host": "10.9.9.9:8080"}).status_code == 400


def test_a_token_on_loopback_when_asked(workspace: Workspace) -> None:
    app = create_app(workspace, token=TOKEN)
    local = TestClient(app, base_url=LOCAL, follow_redirects=False)
    assert local.get("/api/state").status_code == 401
    assert local.get("/api/state", headers={"authorization": f"bearer {TOKEN}"}).status_code == 200


def test_one_change_at_a_time(workspace: Workspace) -> None:
    """A change while another is simulating is a 409 and changes nothing; reading goes on meanwhile."""
    started, release = threading.Event(), threading.Event()
    real = workspace._run

    def slow(*args: Any, **kw: Any) -> Any:
        started.set()
        assert release.wait(30)
        return real(*args, **kw)

    workspace._run = slow  # type: ignore[method-assign]
    client = TestClient(create_app(workspace), base_url=LOCAL)
    answers: list[Any] = []
    first = threading.Thread(target=lambda: answers.append(client.post("/api/node/clone", json={"name": "node-1"})))
    first.start()
    try:
        assert started.wait(30)
        second = [
            client.post("/api/rerun", json={"seed": 5}),
            client.post("/api/objects", json={"text": json.dumps(node("node-9"))}),
            client.delete("/api/object", params={"id": 1}),
            client.put("/api/config", json={"text": ""}),
        ]
        for r in second:
            assert r.status_code == 409, r.text
            assert r.json()["error"].startswith("another change (POST /api/node/clone) has been simulating for ")
        assert client.get("/api/state").json()["counts"]["nodes"] == 1
    finally:
        release.set()
        first.join(30)
    assert answers[0].status_code == 200 and answers[0].json()["created"] == ["node-2"]
    workspace._run = real  # type: ignore[method-assign]
    r = client.post("/api/rerun", json={"seed": 5})
    assert r.status_code == 200 and r.json()["state"]["seed"] == 5 and r.json()["state"]["counts"]["nodes"] == 2


def test_edits_and_reruns_do_not_interleave_in_the_workspace(workspace: Workspace) -> None:
    """Straight on the Workspace (no 409 there): a re-run waits for the edit being simulated, and keeps it."""
    started, release = threading.Event(), threading.Event()
    real = workspace._run
    calls: list[int] = []

    def slow(c: Any, record: Any) -> Any:
        calls.append(c.seed)
        if len(calls) == 1:
            started.set()
            assert release.wait(30)
        return real(c, record)

    workspace._run = slow  # type: ignore[method-assign]
    edit = threading.Thread(target=workspace.apply, args=(json.dumps(node("node-9")),))
    rerun = threading.Thread(target=workspace.rerun, args=(7,))
    edit.start()
    assert started.wait(30)
    rerun.start()
    rerun.join(0.5)
    assert rerun.is_alive() and calls == [1]  # waiting for the edit, not simulating beside it
    release.set()
    edit.join(30)
    rerun.join(30)
    assert calls == [1, 7]
    assert workspace.seed == 7 and {n["name"] for n in workspace.view.nodes} == {"node-1", "node-9"}


def test_allowed_names(monkeypatch: pytest.MonkeyPatch) -> None:
    assert server_names("127.0.0.1", []) == {"localhost", "127.0.0.1", "::1"}
    assert server_names("::1", ["Proxy.Example", "[fe80::1]"]) == {
        "localhost",
        "127.0.0.1",
        "::1",
        "proxy.example",
        "fe80::1",
    }
    monkeypatch.setattr(socket, "gethostname", lambda: "box")
    monkeypatch.setattr(socket, "getfqdn", lambda name="": "box.lan.example")
    addresses = {"box": "10.1.2.3", "box.lan.example": "10.1.2.3", "0.0.0.0": "0.0.0.0"}

    def getaddrinfo(name: str, *_: Any, **__: Any) -> list[Any]:
        if name not in addresses:
            raise socket.gaierror("unknown")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (addresses[name], 0))]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    names = server_names("0.0.0.0", [])
    assert names >= {"0.0.0.0", "box", "box.lan.example", "10.1.2.3", "localhost", "127.0.0.1"}
    assert "localhost" not in server_names("10.1.2.3", [])  # only on a wildcard address does it listen there
    assert is_loopback("127.0.0.2") and is_loopback("localhost") and not is_loopback("0.0.0.0")


def test_command_refuses_bad_names_and_tokens(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    good = str(write_cluster(tmp_path))
    assert main(["ui", good, "--no-open", "--allowed-host", "http://x.example:80/"]) == 2
    assert capsys.readouterr().err == (
        "kubesched: ui: --allowed-host: 'http://x.example:80/' is not a host name or address "
        "(no scheme, port or path)\n"
    )
    assert main(["ui", good, "--no-open", "--token", "s3cret"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kubesched: ui: --token: expected at least 16 letters") and "s3cret" not in err
    monkeypatch.setenv("KUBESCHED_UI_TOKEN", "has spaces in it, too many")
    assert main(["ui", good, "--no-open"]) == 2
    assert capsys.readouterr().err.startswith("kubesched: ui: KUBESCHED_UI_TOKEN: expected at least 16")


def test_the_command_prints_a_token_url_and_checks_it(tmp_path: Path) -> None:
    """The real server (uvicorn) with --require-token: the printed URL works, nothing else does."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("KUBESCHED_UI_TOKEN", None)
    cmd = [sys.executable, "-m", "kubesched", "ui", str(write_cluster(tmp_path)), "--port", "0", "--no-open"]
    proc = subprocess.Popen([*cmd, "--require-token"], stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        found = re.search(r"http://127\.0\.0\.1:(\d+)/\?token=([A-Za-z0-9_-]{43}) ", line)
        assert found, line
        port, token = int(found[1]), found[2]

        def get(path: str, **headers: str) -> tuple[int, dict[str, str]]:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            try:
                conn.request("GET", path, headers=headers)
                r = conn.getresponse()
                r.read()
                return r.status, dict(r.getheaders())
            finally:
                conn.close()

        assert get("/api/state")[0] == 401
        assert get("/api/state", Host="attacker.example")[0] == 400
        status, headers = get(f"/?token={token}")
        assert status == 303 and headers["set-cookie"].startswith(f"kubesched-ui-{port}={token};")
        assert get("/api/state", Cookie=f"kubesched-ui-{port}={token}")[0] == 200
        assert get("/api/state", Authorization=f"Bearer {token}")[0] == 200
    finally:
        proc.terminate()
        proc.wait(30)
        assert proc.stderr is not None
        rest = proc.stderr.read()
        proc.stderr.close()
    assert "Traceback" not in rest, rest


GANG_GATES = "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true"


def test_pod_groups_are_served_as_the_simulations_digest() -> None:
    gangs = str(ROOT / "examples" / "gangs")
    ws = Workspace.from_files([gangs], feature_gates=GANG_GATES)
    client = TestClient(create_app(ws), base_url=LOCAL)
    assert client.get("/api/state").json()["podGroups"] == 4
    page = client.get("/api/pod-groups").json()
    expected = list(kubesched.simulate(gangs, seed=1, feature_gates=GANG_GATES).pod_groups)
    assert page["total"] == 4 and page["items"] == expected  # the same entries as --output json's podGroups
    waiting = client.get("/api/pod-groups", params={"state": "Waiting"}).json()["items"]
    assert sorted(g["name"] for g in waiting) == ["eval", "pair", "tiny"]
    (train,) = client.get("/api/pod-groups", params={"q": "TRAIN"}).json()["items"]
    assert (train["state"], train["domains"], train["topologyKey"]) == (
        "Scheduled",
        {"b": 3},
        "topology.kubernetes.io/zone",
    )
    pod = client.get("/api/pod", params={"key": "default/eval-0"}).json()
    assert pod["podGroup"] == "eval" and pod["group"]["name"] == "eval" and pod["group"]["placed"] == 0
    assert pod["group"]["holdingBack"].startswith("blocked by: 0/5 nodes are available")
    members = client.get("/api/pods", params={"status": "all", "q": "tiny"}).json()["items"]
    assert {(p["key"], p["podGroup"], p["result"]) for p in members} == {
        ("default/tiny-0", "tiny", "Gated"),
        ("default/tiny-1", "tiny", "Gated"),
    }


def test_a_run_without_groups_serves_none(client: TestClient) -> None:
    assert client.get("/api/state").json()["podGroups"] == 0
    assert client.get("/api/pod-groups").json()["items"] == []
    pod = client.get("/api/pod", params={"key": "default/pod-3"}).json()
    assert pod["podGroup"] is None and pod["group"] is None
