"""Scenarios over virtual time, end to end through `kubesched simulate` (the contract's "Scenarios over time")."""

import json

import pytest

from kubesched.cli import main
from kubesched.framework.interface import PermitPlugin
from kubesched.framework.runtime.registry import Registry
from kubesched.framework.status import Code, Status
from kubesched.simulator.load import load_manifests
from kubesched.simulator.report import to_json
from kubesched.simulator.run import build_config, simulate


def node(name, cpu="1", labels=""):
    return (
        f"---\napiVersion: v1\nkind: Node\n"
        f"metadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}{labels}}}}}\n"
        f'status: {{allocatable: {{cpu: "{cpu}", memory: 4Gi, pods: "10"}}}}\n'
    )


def pod(name, cpu, *, priority=None, node_name=None, labels=None, extra=""):
    spec = ""
    if priority is not None:
        spec += f"  priority: {priority}\n"
    if node_name:
        spec += f"  nodeName: {node_name}\n"
    meta = f"{{name: {name}, labels: {json.dumps(labels)}}}" if labels else f"{{name: {name}}}"
    return (
        f"---\napiVersion: v1\nkind: Pod\nmetadata: {meta}\nspec:\n{spec}{extra}"
        f"  containers: [{{name: c, resources: {{requests: {{cpu: '{cpu}'}}}}}}]\n"
    )


def scenario(steps):
    return "---\napiVersion: kubesched.io/v1alpha1\nkind: Scenario\nmetadata: {name: s}\nsteps:\n" + steps


def run(tmp_path, capsys, text, *extra):
    f = tmp_path / "cluster.yaml"
    f.write_text(text)
    assert main(["simulate", str(f), "--output", "json", "--seed", "1", *extra]) == 0
    doc = json.loads(capsys.readouterr().out)
    return doc, {p["name"]: p for p in doc["pods"]}


def timeline(doc, pod):
    return [(e["time"], e["type"], e.get("node")) for e in doc["events"] if e["pod"] == f"default/{pod}"]


def test_node_added_later_makes_a_pending_pod_schedulable(tmp_path, capsys):
    steps = (
        "- at: 1m30s\n  create:\n"
        "  - {apiVersion: v1, kind: Node, metadata: {name: big}, status: {allocatable: {cpu: '4', pods: '10'}}}\n"
    )
    doc, pods = run(tmp_path, capsys, node("small") + pod("web", "2") + scenario(steps))
    assert pods["web"]["node"] == "big" and pods["web"]["boundAt"] == 90.0
    assert pods["web"]["attempts"] == 2
    assert timeline(doc, "web") == [
        (0.0, "Unschedulable", None),
        (90.0, "Scheduled", "big"),
        (90.0, "Bound", "big"),
    ]


def test_deleting_a_pod_requeues_only_pods_the_hints_say_it_helps(tmp_path, capsys):
    text = (
        node("n1")
        + pod("running", "1", node_name="n1")
        + pod("needs-cpu", "500m")
        + pod("needs-label", "100m", extra="  nodeSelector: {disk: ssd}\n")
        + pod("other-pending", "5")
        + scenario(
            "- at: 10s\n  delete: [{kind: Pod, name: other-pending}]\n"
            "- at: 20s\n  delete: [{kind: Pod, name: running}]\n"
        )
    )
    doc, pods = run(tmp_path, capsys, text)
    # Deleting an unscheduled pod frees nothing: needs-cpu is not retried at 10 s.
    assert [t for t, kind, _ in timeline(doc, "needs-cpu")] == [0.0, 20.0, 20.0]
    assert pods["needs-cpu"]["node"] == "n1" and pods["needs-cpu"]["attempts"] == 2
    # NodeAffinity rejected needs-label; a pod deletion is not an event it cares about.
    assert pods["needs-label"]["attempts"] == 1 and pods["needs-label"]["result"] == "Unschedulable"
    assert (10.0, "Deleted", None) in timeline(doc, "other-pending")


def test_removing_a_scheduling_gate(tmp_path, capsys):
    text = (
        node("n1")
        + pod("gated", "100m", extra="  schedulingGates: [{name: example.com/approval}]\n")
        + scenario("- at: 4m\n  update:\n  - {kind: Pod, name: gated, patch: {spec: {schedulingGates: null}}}\n")
    )
    doc, pods = run(tmp_path, capsys, text)
    assert timeline(doc, "gated") == [(0.0, "Gated", None), (240.0, "Scheduled", "n1"), (240.0, "Bound", "n1")]
    assert pods["gated"]["result"] == "Scheduled" and pods["gated"]["attempts"] == 1


def test_cordoned_node_and_bind_latency(tmp_path, capsys):
    text = (
        node("n1", cpu="4")
        + node("n2", cpu="4")
        + scenario(
            "- at: 1m\n  update: [{kind: Node, name: n1, patch: {spec: {unschedulable: true}}}]\n"
            "- at: 2m\n  create:\n"
            "  - {apiVersion: v1, kind: Pod, metadata: {name: late}, spec: {containers: [{name: c}]}}\n"
        )
    )
    doc, pods = run(tmp_path, capsys, text, "--bind-latency", "500ms")
    assert pods["late"]["node"] == "n2" and pods["late"]["boundAt"] == 120.5


def test_until_stops_the_clock(tmp_path, capsys):
    text = node("n1") + scenario(
        "- at: 1h\n  create:\n"
        "  - {apiVersion: v1, kind: Pod, metadata: {name: later}, spec: {containers: [{name: c}]}}\n"
    )
    doc, pods = run(tmp_path, capsys, text, "--until", "30m")
    assert "later" not in pods and doc["endTime"] == 1800.0


def test_preemption_respects_a_pod_disruption_budget(tmp_path, capsys):
    text = (
        node("n1", cpu="2")
        + node("n2", cpu="2")
        + pod("guarded", "2", priority=10, node_name="n1", labels={"app": "db"})
        + pod("batch", "2", priority=10, node_name="n2", labels={"app": "batch"})
        + "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: db}\n"
        "spec: {minAvailable: 1, selector: {matchLabels: {app: db}}}\n" + pod("urgent", "2", priority=1000)
    )
    doc, pods = run(tmp_path, capsys, text)
    urgent = pods["urgent"]
    assert urgent["victims"] == ["default/batch"] and urgent["nominatedNode"] == "n2"
    assert urgent["node"] == "n2" and urgent["result"] == "Scheduled" and urgent["attempts"] == 2
    kinds = [k for _, k, _ in timeline(doc, "urgent")]
    assert kinds == ["Unschedulable", "Nominated", "Scheduled", "Bound"]
    assert ("Preempted", "n2") in [(e["type"], e.get("node")) for e in doc["events"] if e["pod"] == "default/batch"]


def test_preemption_policy_never_and_not_helpful_messages(tmp_path, capsys):
    text = (
        node("n1", cpu="1")
        + pod("low", "1", priority=0, node_name="n1")
        + pod("polite", "1", priority=100, extra="  preemptionPolicy: Never\n")
        + pod("too-big", "8", priority=100)
    )
    doc, pods = run(tmp_path, capsys, text)
    assert pods["polite"]["message"] == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "no new claims to deallocate, preemption: not eligible due to preemptionPolicy=Never."
    )
    assert pods["too-big"]["message"] == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )


class WaitForever(PermitPlugin):
    NAME = "WaitForever"

    def permit(self, state, pod, node_name):
        return Status(Code.WAIT), 10.0


def test_permit_wait_times_out(tmp_path):
    f = tmp_path / "c.yaml"
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {"schedulerName": "default-scheduler", "plugins": {"permit": {"enabled": [{"name": "WaitForever"}]}}}
        ],
    }
    f.write_text(node("n1") + pod("p", "100m"))
    loaded = load_manifests([str(f)])
    reg = Registry()
    reg.register("WaitForever", lambda args, handle: WaitForever())
    result = simulate(loaded, build_config(loaded, config, "test"), registry=reg, seed=1)
    doc = to_json(result, record=False)
    p = doc["pods"][0]
    assert p["result"] == "Unschedulable" and p["boundAt"] is None
    assert p["message"] == "0/1 nodes are available: rejected due to timeout after waiting 10s at plugin WaitForever."
    assert [(e["time"], e["type"]) for e in doc["events"]] == [(0.0, "Scheduled"), (10.0, "Unschedulable")]
    assert result.scheduler is not None
    cluster_pod = result.scheduler.lister.get("Pod", "default", "p")
    assert cluster_pod is not None
    cond = cluster_pod["status"]["conditions"][0]
    assert (cond["type"], cond["status"], cond["reason"]) == ("PodScheduled", "False", "Unschedulable")


@pytest.mark.parametrize(
    ("step", "error"),
    [
        ("- at: 3x\n", 'steps[0].at: invalid duration "3x"'),
        ("- at: 1s\n  delete: [{kind: Gizmo, name: a}]\n", 'steps[0].delete[0].kind: unknown kind "Gizmo"'),
        ("- at: 1s\n  update: [{kind: Node, name: a, patch: 3}]\n", "steps[0].update[0].patch: expected an object"),
        (
            "- at: 1s\n  create: [{apiVersion: v1, kind: Pod, metadata: {name: x},\n"
            "    spec: {containers: [{name: c, resources: {requests: {cpu: 2x}}}]}}]\n",
            "steps[0].create[0] (Pod default/x): spec.containers[0].resources.requests[cpu]",
        ),
    ],
)
def test_bad_scenarios_name_file_document_and_field(tmp_path, capsys, step, error):
    f = tmp_path / "s.yaml"
    f.write_text(node("n1") + scenario(step))
    assert main(["simulate", str(f), "--output", "json"]) == 2
    err = capsys.readouterr().err
    assert str(f) in err and "document 2" in err and error in err
