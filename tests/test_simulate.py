"""End to end through `kubesched simulate`: the contract's JSON, records and scheduling decisions."""

import json

from kubesched.cli import main

NODES = """
apiVersion: v1
kind: Node
metadata: {name: node-a, labels: {kubernetes.io/hostname: node-a}}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-b, labels: {kubernetes.io/hostname: node-b}}
spec:
  taints: [{key: dedicated, value: infra, effect: NoSchedule}]
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "10"}}
"""


def simulate(tmp_path, capsys, text, *extra):
    f = tmp_path / "cluster.yaml"
    f.write_text(text)
    assert main(["simulate", str(f), "--output", "json", "--seed", "3", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def pod(name, cpu, priority=None, extra=""):
    prio = f"  priority: {priority}\n" if priority is not None else ""
    return (
        f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n{prio}{extra}"
        f"  containers: [{{name: c, resources: {{requests: {{cpu: '{cpu}'}}}}}}]\n"
    )


def test_records_and_fit_error(tmp_path, capsys):
    doc = simulate(tmp_path, capsys, NODES + pod("small", "1") + pod("big", "3"))
    small, big = doc["pods"]
    assert small["node"] == "node-a" and small["result"] == "Scheduled" and small["attempts"] == 1
    # One feasible node: no scoring, as upstream.
    assert small["plugins"]["score"] == {}
    assert small["plugins"]["filter"]["node-b"] == {
        "NodeUnschedulable": "passed",
        "NodeName": "passed",
        "TaintToleration": "node(s) had untolerated taint(s)",
    }
    assert set(small["plugins"]["filter"]["node-a"].values()) == {"passed"}
    assert big["result"] == "Unschedulable" and big["node"] is None
    assert big["message"] == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s). "
        "no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )
    assert big["plugins"]["filter"]["node-a"]["NodeResourcesFit"] == "Insufficient cpu"
    assert doc["nodes"][0] == {
        "name": "node-a",
        "pods": 1,
        "requested": {"cpu": "1", "memory": "0", "pods": "1"},
        "allocatable": {"cpu": "2", "memory": "4Gi", "pods": "10"},
    }


def test_priority_then_document_order(tmp_path, capsys):
    text = NODES + pod("first", "1500m") + pod("urgent", "1500m", priority=100)
    doc = simulate(tmp_path, capsys, text)
    assert [p["name"] for p in doc["pods"]] == ["urgent", "first"]
    assert doc["pods"][0]["node"] == "node-a" and doc["pods"][1]["result"] == "Unschedulable"


def test_scores_are_recorded_with_weights(tmp_path, capsys):
    tol = "  tolerations: [{key: dedicated, operator: Exists}]\n"
    doc = simulate(tmp_path, capsys, NODES + pod("p", "1", extra=tol))
    rec = doc["pods"][0]["plugins"]
    assert set(rec["score"]) == {"node-a", "node-b"}
    for node in ("node-a", "node-b"):
        assert rec["finalScore"][node]["TaintToleration"] == 3 * rec["normalizedScore"][node]["TaintToleration"]
    # LeastAllocated: node-a (1 of 2 cpu used, 200Mi of 4Gi) vs node-b (1 of 8).
    assert rec["score"]["node-a"]["NodeResourcesFit"] < rec["score"]["node-b"]["NodeResourcesFit"]
    assert doc["pods"][0]["node"] == "node-b"


def test_record_none_leaves_out_plugins(tmp_path, capsys):
    doc = simulate(tmp_path, capsys, NODES + pod("p", "1"), "--record", "none")
    assert "plugins" not in doc["pods"][0]


def test_pod_affinity_pod_retried_after_its_target_lands(tmp_path, capsys):
    """A high-priority pod wanting to sit next to a lower-priority one is retried once that one is bound."""
    follower = (
        "  affinity:\n    podAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        "      - labelSelector: {matchLabels: {app: db}}\n        topologyKey: kubernetes.io/hostname\n"
    )
    leader = pod("db", "100m").replace("metadata: {name: db}", "metadata: {name: db, labels: {app: db}}")
    doc = simulate(tmp_path, capsys, NODES + pod("proxy", "100m", priority=10, extra=follower) + leader)
    by = {p["name"]: p for p in doc["pods"]}
    assert by["db"]["node"] == "node-a"
    assert by["proxy"]["node"] == "node-a" and by["proxy"]["attempts"] == 2


def test_profiles_by_scheduler_name(tmp_path, capsys):
    cfg = (
        "---\napiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- schedulerName: default-scheduler\n- schedulerName: packer\n  pluginConfig:\n  - name: NodeResourcesFit\n"
        "    args: {scoringStrategy: {type: MostAllocated}}\n"
    )
    tol = "  schedulerName: packer\n  tolerations: [{key: dedicated, operator: Exists}]\n"
    doc = simulate(tmp_path, capsys, NODES + cfg + pod("p", "1", extra=tol))
    rec = doc["pods"][0]["plugins"]["score"]
    assert rec["node-a"]["NodeResourcesFit"] > rec["node-b"]["NodeResourcesFit"]


def test_same_seed_same_result(tmp_path, capsys):
    nodes = "".join(
        f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: n{i}}}\n"
        "status: {allocatable: {cpu: '4', pods: '10'}}\n"
        for i in range(6)
    )
    text = nodes + "".join(pod(f"p{i}", "100m") for i in range(10))
    a = simulate(tmp_path, capsys, text)
    b = simulate(tmp_path, capsys, text)
    assert [p["node"] for p in a["pods"]] == [p["node"] for p in b["pods"]]


def test_existing_anti_affinity_of_a_pod_bound_during_the_run(tmp_path, capsys):
    """p1 lands on a node that already held a pod with required anti-affinity; its own anti-affinity must
    then keep p2 away. (The snapshot once kept a stale copy of such a node for the symmetric check.)"""
    node = (
        "apiVersion: v1\nkind: Node\nmetadata: {name: node-a, labels: {kubernetes.io/hostname: node-a}}\n"
        "status: {allocatable: {cpu: '8', memory: 8Gi, pods: '10'}}\n"
    )

    def anti(app):
        return (
            "  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
            f"      - {{labelSelector: {{matchLabels: {{app: {app}}}}}, topologyKey: kubernetes.io/hostname}}\n"
        )

    def labelled(name, app, extra):
        return pod(name, "100m", extra=extra).replace(f"{{name: {name}}}", f"{{name: {name}, labels: {{app: {app}}}}}")

    text = node + labelled("p0", "db", "  nodeName: node-a\n" + anti("other"))
    text += labelled("p1", "cache", anti("web")) + labelled("p2", "web", "")
    doc = simulate(tmp_path, capsys, text)
    by_name = {p["name"]: p for p in doc["pods"]}
    assert by_name["p1"]["node"] == "node-a"
    assert by_name["p2"]["result"] == "Unschedulable"
    assert "didn't satisfy existing pods anti-affinity rules" in by_name["p2"]["message"]
