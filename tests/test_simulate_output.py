"""`kubesched simulate` output modes end to end: --explain, the summary, jsonl, tables, progress and -v logs."""

import io
import json
import logging

import pytest
from rich.console import Console

from kubesched import cli, klog
from kubesched.cli import main
from kubesched.simulator import commands
from kubesched.simulator import progress as progress_module

# node-10 sorts before node-2 as text, after it naturally; node-1 is tainted and has no zone.
CLUSTER = """
apiVersion: v1
kind: Node
metadata: {name: node-10, labels: {kubernetes.io/hostname: node-10, topology.kubernetes.io/zone: zone-a}}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-2, labels: {kubernetes.io/hostname: node-2, topology.kubernetes.io/zone: zone-b}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10", nvidia.com/gpu: "2"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-1, labels: {kubernetes.io/hostname: node-1}}
spec:
  taints: [{key: dedicated, value: infra, effect: NoSchedule}]
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: running, namespace: kube-system}
spec:
  nodeName: node-10
  containers: [{name: c, resources: {requests: {cpu: 500m}}}]
"""


def pod(name: str, requests: str, namespace: str = "default") -> str:
    return (
        f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: {namespace}}}\n"
        f"spec:\n  containers: [{{name: c, resources: {{requests: {requests}, limits: {requests}}}}}]\n"
    )


WEB = pod("web-1", "{cpu: '1', memory: 1Gi}")
GPU = pod("gpu-1", "{cpu: '1', nvidia.com/gpu: '1'}")
BIG = pod("big", "{cpu: '5'}")


@pytest.fixture
def wide(monkeypatch):
    """Output wide enough that no table cell folds (rich reads COLUMNS when not on a terminal)."""
    monkeypatch.setenv("COLUMNS", "250")


def run(tmp_path, capsys, text, *args):
    f = tmp_path / "cluster.yaml"
    f.write_text(text)
    code = main(["simulate", str(f), "--seed", "1", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def simulate_json(tmp_path, capsys, text, *args):
    code, out, err = run(tmp_path, capsys, text, "--output", "json", *args)
    assert code == 0, err
    return json.loads(out)


# --explain


def test_explain_shows_every_examined_node_and_why_it_lost(tmp_path, capsys, wide):
    code, out, _ = run(tmp_path, capsys, CLUSTER + WEB, "--output", "table", "--explain", "web-1")
    assert code == 0
    assert "default/web-1: Scheduled on node-2 after 1 attempt" in out
    text = " ".join(out.split())  # the table folds long cells over lines
    assert "chosen: highest total score" in text
    assert "filtered out by TaintToleration: node(s) had untolerated taint(s)" in text
    assert "passed every filter; scored" in text and "lower than node-2, mostly on" in text
    assert "total" in out and "NodeResourcesFit" in out and "TaintToleration" in out
    assert "Pods" not in out.splitlines()[0]  # the explanation replaces the pods and nodes tables
    assert "1/1 pending pods scheduled." in out


def test_explanation_fits_80_columns(tmp_path, capsys):
    explain = ["--explain", "web-1", "--explain", "big"]
    code, out, _ = run(tmp_path, capsys, CLUSTER + WEB + BIG, "--output", "table", *explain)
    assert code == 0 and "Score (final, weighted)" in out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert any("NodeResourcesBalancedAllocation" in line for line in out.splitlines())  # score lines stay whole


def test_explain_names_the_plugin_behind_the_lost_points(tmp_path, capsys, wide):
    code, out, _ = run(tmp_path, capsys, CLUSTER + WEB, "--output", "table", "--explain", "default/web-1")
    assert code == 0
    doc = simulate_json(tmp_path, capsys, CLUSTER + WEB)
    scores = doc["pods"][0]["plugins"]["finalScore"]
    chosen, other = scores["node-2"], scores["node-10"]
    diff = sum(chosen.values()) - sum(other.values())
    top = max(chosen, key=lambda p: (chosen[p] - other.get(p, 0), p))
    text = " ".join(out.split())
    assert f"scored {diff} lower than node-2, mostly on {top} ({chosen[top] - other[top]} lower)" in text


def test_explain_tie_break(tmp_path, capsys, wide):
    twins = "".join(
        f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: twin-{i}, labels: {{kubernetes.io/hostname: twin-{i}}}}}\n"
        'status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}\n'
        for i in (1, 2)
    )
    code, out, _ = run(tmp_path, capsys, twins + WEB, "--output", "table", "--explain", "web-1")
    assert code == 0
    text = " ".join(out.split())
    assert "chosen: tied with 1 other node(s) at" in text and "won the random tie-break" in text
    assert "and lost the random tie-break" in text


def test_explain_an_unschedulable_pod(tmp_path, capsys, wide):
    code, out, _ = run(tmp_path, capsys, CLUSTER + BIG, "--output", "table", "--explain", "big")
    assert code == 0
    text = " ".join(out.split())
    assert "default/big: Unschedulable after 1 attempt" in text
    assert "message: 0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu." in text
    assert text.count("filtered out by NodeResourcesFit: Insufficient cpu") == 2


PREEMPTION = """
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: low}
spec:
  priority: 1
  containers: [{name: c, resources: {requests: {cpu: "2"}}}]
---
apiVersion: kubesched.io/v1alpha1
kind: Scenario
metadata: {name: s}
steps:
- at: 10s
  create:
  - {apiVersion: v1, kind: Pod, metadata: {name: high},
     spec: {priority: 100, containers: [{name: c, resources: {requests: {cpu: "2"}}}]}}
"""


def test_explain_a_preemption(tmp_path, capsys, wide):
    code, out, _ = run(tmp_path, capsys, PREEMPTION, "--output", "table", "--explain", "high", "--explain", "low")
    assert code == 0
    high, low = out.split("default/low:")
    assert "default/high: Scheduled on n1 after 2 attempts" in high
    assert "nominated node: n1" in high and "preempted: default/low" in high
    assert "chosen: its nominated node, tried on its own first, passed every filter" in high
    assert "later preempted by default/high" in low


def test_explain_with_json_keeps_stdout_one_document(tmp_path, capsys, wide):
    code, out, err = run(tmp_path, capsys, CLUSTER + WEB, "--output", "json", "--explain", "web-1")
    assert code == 0
    assert json.loads(out)["pods"][0]["name"] == "web-1"
    assert "default/web-1: Scheduled on node-2" in err


def test_explain_keeps_its_record_with_record_none(tmp_path, capsys, wide):
    code, out, err = run(tmp_path, capsys, CLUSTER + WEB, "--output", "json", "--record", "none", "--explain", "web-1")
    assert code == 0
    assert "plugins" not in json.loads(out)["pods"][0]
    assert "chosen: highest total score" in " ".join(err.split())


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("web", "--explain default/web: no pending pod of that name was simulated; did you mean default/web-1"),
        ("other/web-1", "did you mean default/web-1"),
        ("kube-system/running", "already bound to node-10 in the input"),
    ],
)
def test_explain_unknown_pod_exits_2_with_close_names(tmp_path, capsys, name, needle):
    code, out, err = run(tmp_path, capsys, CLUSTER + WEB, "--output", "table", "--explain", name)
    assert code == 2
    assert needle in err
    assert out == ""


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("a/b/c/d", "expected NAMESPACE/POD or POD (namespace default), or NAMESPACE/KIND/NAME or KIND/NAME"),
        ("a//c", "expected NAMESPACE/POD or POD"),
        ("a/b/c", "unknown kind 'b'; accepted kinds: pod (po), deployment (deploy), replicaset (rs), statefulset"),
    ],
)
def test_explain_bad_name_exits_2_before_the_run(tmp_path, capsys, name, needle):
    code, out, err = run(tmp_path, capsys, CLUSTER + WEB, "--output", "json", "--explain", name)
    assert code == 2
    assert needle in err and out == "" and len(err.splitlines()) == 1


# The summary and nodes


def test_summary_counts_reasons_utilisation_and_fragmentation(tmp_path, capsys):
    doc = simulate_json(tmp_path, capsys, CLUSTER + WEB + GPU + BIG)
    s = doc["summary"]
    assert s["pods"] == {
        "total": 3,
        "scheduled": 2,
        "pending": 1,
        "deleted": 0,
        "byResult": {"Scheduled": 2, "Unschedulable": 1},
    }
    assert s["pendingByReason"] == {"Insufficient cpu": 1, "node(s) had untolerated taint(s)": 1}
    assert s["resources"]["nvidia.com/gpu"] == {"requested": "1", "allocatable": "2", "utilisation": 0.5}
    assert s["resources"]["cpu"] == {"requested": "2500m", "allocatable": "14", "utilisation": round(2.5 / 14, 4)}
    assert [z["zone"] for z in s["zones"]] == ["zone-a", "zone-b", "(no zone)"]
    assert s["zones"][1]["resources"]["nvidia.com/gpu"]["utilisation"] == 0.5
    # big (5 cpu) fits node-1 by its requests (8 cpu free; the taint is not about capacity),
    # not node-10 (1500m free) nor node-2 (2 free): their free capacity is stranded.
    frag = s["fragmentation"]
    assert frag["cpu"] == {"free": "11500m", "stranded": "3500m", "largestFree": "8", "largestFreeNode": "node-1"}
    assert frag["nvidia.com/gpu"] == {"free": "1", "stranded": "1", "largestFree": "1", "largestFreeNode": "node-2"}
    node2 = next(n for n in doc["nodes"] if n["name"] == "node-2")
    assert node2["requested"] == {"cpu": "2", "memory": "1Gi", "pods": "2", "nvidia.com/gpu": "1"}
    assert [n["name"] for n in doc["nodes"]] == ["node-1", "node-10", "node-2"]  # JSON order stays by name


def test_summary_nothing_pending_strands_nothing(tmp_path, capsys):
    s = simulate_json(tmp_path, capsys, CLUSTER + WEB)["summary"]
    assert s["pods"]["pending"] == 0 and s["pendingByReason"] == {}
    assert all(f["stranded"] == "0" for f in s["fragmentation"].values())


def test_summary_table_fits_80_columns_with_nodes_in_natural_order(tmp_path, capsys):
    long_name = pod("a-pod-with-a-rather-long-name-that-will-not-fit-in-one-column-" + "x" * 20, "{cpu: '1'}")
    code, out, _ = run(tmp_path, capsys, CLUSTER + WEB + GPU + BIG + long_name, "--output", "table")
    assert code == 0
    assert max(len(line) for line in out.splitlines()) <= 80
    rows = [line.split("│")[1].strip() for line in out.splitlines() if line.startswith("│ node-")]
    nodes_table = [r for r in rows if r in ("node-1", "node-2", "node-10")]
    assert nodes_table == ["node-1", "node-2", "node-10"]
    assert "Summary: 3 of 4 pods scheduled, 1 pending." in out
    assert "Pending pods by reason" in out and "Utilisation by zone" in out
    assert "nvidia.com/gpu 1/2 50%" in out


# jsonl


def test_jsonl_has_the_json_documents_entries_one_a_line(tmp_path, capsys):
    doc = simulate_json(tmp_path, capsys, CLUSTER + WEB + GPU + BIG)
    code, out, _ = run(tmp_path, capsys, CLUSTER + WEB + GPU + BIG, "--output", "jsonl")
    assert code == 0
    lines = [json.loads(line) for line in out.splitlines()]
    kinds = [line.pop("kind") for line in lines]
    assert kinds == ["pod"] * 3 + ["node"] * 3 + ["event"] * len(doc["events"]) + ["summary"]
    pods = lines[:3]
    assert [p["name"] for p in pods] == ["web-1", "gpu-1", "big"]  # bound as they finish, then the pending
    assert sorted(pods, key=lambda p: p["name"]) == sorted(doc["pods"], key=lambda p: p["name"])
    assert lines[3:6] == doc["nodes"]
    assert lines[6:-1] == doc["events"]
    assert lines[-1] == {"endTime": doc["endTime"], **doc["summary"]}


def test_jsonl_record_none_and_warnings(tmp_path, capsys):
    text = CLUSTER + WEB + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
    code, out, _ = run(tmp_path, capsys, text, "--output", "jsonl", "--record", "none")
    assert code == 0
    lines = [json.loads(line) for line in out.splitlines()]
    assert "plugins" not in lines[0]
    warnings = [line for line in lines if line["kind"] == "warning"]
    assert warnings and "ConfigMap" in warnings[0]["message"]


# Progress


def test_progress_bar_on_a_terminal(tmp_path, capsys, monkeypatch):
    buf = io.StringIO()
    monkeypatch.setattr(commands, "_stderr_console", lambda: Console(file=buf, force_terminal=True, width=120))
    monkeypatch.setattr(progress_module, "DELAY", 0.0)
    code, out, _ = run(tmp_path, capsys, CLUSTER + WEB + GPU + BIG, "--output", "json")
    assert code == 0 and json.loads(out)
    drawn = buf.getvalue()
    assert "scheduling" in drawn and "pods/s" in drawn and "pending" in drawn


def test_no_progress_bar_with_quiet(tmp_path, capsys, monkeypatch):
    buf = io.StringIO()
    monkeypatch.setattr(commands, "_stderr_console", lambda: Console(file=buf, force_terminal=True, width=120))
    monkeypatch.setattr(progress_module, "DELAY", 0.0)
    code, _, _ = run(tmp_path, capsys, CLUSTER + WEB + GPU + BIG, "--output", "json", "-q")
    assert code == 0 and buf.getvalue() == ""


def test_no_progress_bar_when_stderr_is_not_a_terminal(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(progress_module, "DELAY", 0.0)
    code, _, err = run(tmp_path, capsys, CLUSTER + WEB + GPU + BIG, "--output", "json")
    assert code == 0 and err == ""


# -v: upstream's log lines at upstream's verbosity


def _lines(caplog, level: int) -> list[tuple[str, dict[str, object]]]:
    return [
        (r.msg.text, r.msg.values)
        for r in caplog.records
        if r.name == "kubesched.schedule_one" and isinstance(r.msg, klog.Message) and r.levelno >= level
    ]


def test_v2_logs_each_binding_and_each_unschedulable_pod(tmp_path, capsys, caplog):
    caplog.set_level(klog.V(2), logger="kubesched.schedule_one")
    assert run(tmp_path, capsys, CLUSTER + WEB + BIG, "--output", "json", "-v=2")[0] == 0
    lines = _lines(caplog, klog.V(2))
    bound = {"pod": "default/web-1", "node": "node-2", "evaluatedNodes": 3, "feasibleNodes": 2}
    assert ("Successfully bound pod to node", bound) in lines
    message = simulate_json(tmp_path, capsys, CLUSTER + BIG)["pods"][0]["message"]
    assert [v for m, v in lines if m == "Unable to schedule pod; no fit; waiting"] == [
        {"pod": "default/big", "err": message}
    ]
    assert all(m != "Attempting to schedule pod" for m, _ in lines)  # V(3)


def test_v3_logs_each_attempt(tmp_path, capsys, caplog):
    caplog.set_level(klog.V(3), logger="kubesched.schedule_one")
    assert run(tmp_path, capsys, CLUSTER + WEB + BIG, "--output", "json", "-v=3")[0] == 0
    attempts = [v["pod"] for m, v in _lines(caplog, klog.V(3)) if m == "Attempting to schedule pod"]
    assert attempts == ["default/web-1", "default/big"]


@pytest.mark.parametrize(
    ("verbosity", "command", "level"),
    [(0, "simulate", logging.WARNING), (2, "simulate", klog.V(2)), (0, "run", logging.INFO), (4, "run", klog.V(4))],
)
def test_log_level(verbosity, command, level):
    assert cli._log_level(verbosity, command) == level


def test_log_lines_read_as_klogs():
    message = klog.Message(
        "Successfully bound pod to node", pod="default/p", node="n", evaluatedNodes=3, feasibleNodes=2
    )
    record = logging.LogRecord("kubesched.schedule_one", klog.V(2), __file__, 1, message, None, None)
    text = klog.TextFormatter("%(levelname)s %(name)s: %(message)s").format(record)
    assert text == (
        'INFO kubesched.schedule_one: "Successfully bound pod to node" pod="default/p" node="n" '
        "evaluatedNodes=3 feasibleNodes=2"
    )
    doc = json.loads(klog.JSONFormatter().format(record))
    assert doc["msg"] == "Successfully bound pod to node" and doc["v"] == 2 and doc["level"] == "INFO"
    assert (doc["pod"], doc["node"], doc["evaluatedNodes"], doc["feasibleNodes"]) == ("default/p", "n", 3, 2)
