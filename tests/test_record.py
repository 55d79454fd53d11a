"""`kubesched record` without a cluster: what a trace holds, and that `simulate` replays it."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.backend.kube.resources import SNAPSHOT
from kubesched.cli import main
from kubesched.shadow.record import Trace, for_trace, merge_diff, node_patch, update_patch
from kubesched.simulator.api import simulate
from kubesched.simulator.scenario import merge_patch


def _node(name: str, cpu: str = "4", **spec: Any) -> dict[str, Any]:
    alloc = {"cpu": cpu, "memory": "8Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}, "resourceVersion": "7"},
        "spec": spec,
        "status": {"allocatable": alloc, "capacity": alloc, "conditions": [{"type": "Ready", "status": "True"}]},
    }


def _pod(name: str, cpu: str = "1", node: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]}
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": f"u-{name}", "managedFields": [{}]},
        "spec": spec,
        "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False"}]},
    }


@pytest.mark.parametrize(
    ("change", "patch"),
    [
        ({"spec": {"unschedulable": True}}, {"spec": {"unschedulable": True}}),
        (
            {"spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]}},
            {"spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]}},
        ),
        # the hostname label is gone: a merge patch says so with null
        (
            {"metadata": {"labels": {"zone": "a"}}},
            {"metadata": {"labels": {"kubernetes.io/hostname": None, "zone": "a"}}},
        ),
        ({"metadata": {"resourceVersion": "8"}}, {}),  # nothing scheduling reads
        ({"status": {"conditions": []}}, {}),
    ],
)
def test_node_changes_scheduling_reads_become_patches(change: dict[str, Any], patch: dict[str, Any]) -> None:
    old = _node("n1")
    new = {k: {**v, **change.get(k, {})} if isinstance(v, dict) else v for k, v in old.items()}
    assert node_patch(old, new) == patch


def test_uncordon_and_resize() -> None:
    assert node_patch(_node("n1", unschedulable=True), _node("n1")) == {"spec": {"unschedulable": None}}
    grown = node_patch(_node("n1"), _node("n1", cpu="8"))
    assert grown["status"]["allocatable"]["cpu"] == "8" and grown["status"]["capacity"]["cpu"] == "8"


def test_objects_are_cleaned_and_workloads_lose_their_template() -> None:
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": {"spec": {}}},
    }
    assert for_trace(rs, SNAPSHOT["ReplicaSet"])["spec"] == {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}}
    created = for_trace(_pod("p"), SNAPSHOT["Pod"], created=True)
    assert "status" not in created and "managedFields" not in created["metadata"]
    assert for_trace(_pod("p"), SNAPSHOT["Pod"])["status"] == {"phase": "Pending"}


def _trace() -> Trace:
    trace = Trace(server="https://example:6443", began="2026-11-28T10:00:00Z", seconds=10.0)
    trace.start = [
        for_trace(_node("n1", cpu="2"), SNAPSHOT["Node"]),
        for_trace(_pod("old", "1", "n1"), SNAPSHOT["Pod"]),
    ]
    trace.add(1.0, "create", for_trace(_pod("a", "1"), SNAPSHOT["Pod"], created=True))
    trace.add(1.0, "create", for_trace(_pod("b", "1"), SNAPSHOT["Pod"], created=True))  # same second: same step
    trace.add(2.5, "create", for_trace(_node("n2", cpu="4"), SNAPSHOT["Node"], created=True))
    trace.add(3.0, "delete", {"kind": "Pod", "namespace": "default", "name": "old"})
    trace.add(4.0, "update", {"kind": "Node", "name": "n1", "patch": {"spec": {"unschedulable": True}}})
    trace.add(5.0, "create", for_trace(_pod("c", "1"), SNAPSHOT["Pod"], created=True))
    return trace


def test_a_trace_replays_on_the_virtual_clock(tmp_path: Path) -> None:
    trace = _trace()
    assert [s["at"] for s in trace.steps] == ["1.000s", "2.500s", "3.000s", "4.000s", "5.000s"]
    assert trace.counts() == {"objects": 2, "steps": 5, "create": 4, "update": 1, "delete": 1}
    out = io.StringIO()
    trace.write(out)
    docs = list(yaml.safe_load_all(out.getvalue()))
    assert (
        docs[-1]["kind"] == "Scenario" and docs[-1]["metadata"]["annotations"]["kubesched.io/recorded-for"] == "10.000s"
    )
    path = tmp_path / "trace.yaml"
    path.write_text(out.getvalue())
    placed = simulate(path, seed=1).placements()
    # n1 has 2 cpus and `old` takes one: a takes the other, b waits for n2 (at 2.5s); c comes after `old` left
    # and n1 was cordoned: n2.
    assert placed == {"default/a": "n1", "default/b": "n2", "default/c": "n2"}


def test_record_refuses_an_unwritable_output_before_reaching_the_cluster(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["record", "--kubeconfig", str(tmp_path / "none"), "-o", str(tmp_path / "no" / "t.yaml")]) == 2
    assert (
        capsys.readouterr().err == f"kubesched: record: cannot write {tmp_path / 'no' / 't.yaml'}: no such directory\n"
    )
    assert main(["record", "--kubeconfig", str(tmp_path / "none"), "-o", str(tmp_path / "t.yaml")]) == 2
    assert "no such file" in capsys.readouterr().err


_labels = st.dictionaries(st.sampled_from(["a", "b", "zone"]), st.sampled_from(["x", "y"]), max_size=3)
_taints = st.lists(
    st.fixed_dictionaries(
        {"key": st.sampled_from(["k1", "k2"]), "effect": st.sampled_from(["NoSchedule", "NoExecute"])}
    ),
    max_size=2,
)


@settings(max_examples=60, deadline=None)
@given(
    before=st.tuples(_labels, st.booleans(), _taints, st.sampled_from(["2", "4"])),
    after=st.tuples(_labels, st.booleans(), _taints, st.sampled_from(["2", "4"])),
)
def test_a_node_patch_applied_gives_the_new_node_as_scheduling_reads_it(before: Any, after: Any) -> None:
    def node(fields: Any) -> dict[str, Any]:
        labels, unschedulable, taints, cpu = fields
        obj = _node("n1", cpu=cpu)
        obj["metadata"]["labels"] = labels
        if unschedulable:
            obj["spec"]["unschedulable"] = True
        if taints:
            obj["spec"]["taints"] = taints
        return obj

    old, new = node(before), node(after)
    patched = merge_patch(old, node_patch(old, new))
    for path in (("metadata", "labels"), ("spec", "unschedulable"), ("spec", "taints"), ("status", "allocatable")):
        assert (patched.get(path[0], {}).get(path[1]) or None) == (new[path[0]].get(path[1]) or None), path


_json = st.recursive(
    st.one_of(st.booleans(), st.integers(-3, 3), st.sampled_from(["a", "b", ""])),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["k", "l", "m"]), inner, max_size=3)
    ),
    max_leaves=12,
)
_docs = st.dictionaries(st.sampled_from(["metadata", "spec", "status", "x"]), _json, max_size=4)


@settings(max_examples=200, deadline=None)
@given(before=_docs, after=_docs)
def test_a_merge_diff_applied_gives_the_new_document(before: dict[str, Any], after: dict[str, Any]) -> None:
    patch = merge_diff(before, after)
    assert merge_patch(before, patch) == after
    assert (patch == {}) == (before == after)


def _claim(phase: str = "Pending", volume: str = "", selected: str = "") -> dict[str, Any]:
    annotations = {"volume.kubernetes.io/selected-node": selected} if selected else {}
    spec: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    if volume:
        spec["volumeName"] = volume
        annotations["pv.kubernetes.io/bind-completed"] = "yes"
    meta: dict[str, Any] = {"name": "data", "namespace": "default", "resourceVersion": "3"}
    if annotations:
        meta["annotations"] = annotations
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": meta,
        "spec": spec,
        "status": {"phase": phase},
    }


def _volume(phase: str, claim: bool) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "capacity": {"storage": "1Gi"},
        "accessModes": ["ReadWriteOnce"],
        "hostPath": {"path": "/d"},
    }
    if claim:
        spec["claimRef"] = {"namespace": "default", "name": "data"}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "pv1"},
        "spec": spec,
        "status": {"phase": phase},
    }


def _nothing(namespace: str, name: str) -> dict[str, Any] | None:
    return None


def test_changes_to_other_objects_become_patches_and_the_schedulers_own_do_not() -> None:
    pvc = SNAPSHOT["PersistentVolumeClaim"]
    # bound by the volume controller on its own (no selected node): the replay repeats it
    assert update_patch(pvc, _claim(), _claim("Bound", "pv1"), _nothing) == {
        "metadata": {"annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
        "spec": {"volumeName": "pv1"},
        "status": {"phase": "Bound"},
    }
    # a binding the cluster's scheduler started: the replay's scheduler decides it again
    assert update_patch(pvc, _claim(selected="n1"), _claim("Bound", "pv1", selected="n1"), _nothing) == {}
    assert update_patch(pvc, _claim(), _claim(selected="n1"), _nothing) == {}

    def selected(namespace: str, name: str) -> dict[str, Any] | None:
        return _claim(selected="n1") if (namespace, name) == ("default", "data") else None

    pv = SNAPSHOT["PersistentVolume"]
    assert update_patch(pv, _volume("Available", False), _volume("Bound", True), _nothing) == {
        "spec": {"claimRef": {"namespace": "default", "name": "data"}},
        "status": {"phase": "Bound"},
    }
    assert update_patch(pv, _volume("Available", False), _volume("Bound", True), selected) == {}
    rs_spec: dict[str, Any] = {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": {"spec": {}}}
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": rs_spec,
        "status": {"replicas": 3},
    }
    scaled = {**rs, "spec": {**rs_spec, "replicas": 5, "template": {"spec": {"x": 1}}}, "status": {"replicas": 4}}
    assert update_patch(SNAPSHOT["ReplicaSet"], rs, scaled, _nothing) == {"spec": {"replicas": 5}}
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "gpu", "namespace": "default"},
        "spec": {"devices": {"requests": []}},
    }
    allocated = {**claim, "status": {"allocation": {"devices": {"results": []}}, "reservedFor": [{"name": "p"}]}}
    assert update_patch(SNAPSHOT["ResourceClaim"], claim, allocated, _nothing) == {}
    gated = _pod("g")
    gated["spec"]["schedulingGates"] = [{"name": "wait"}]
    ungated = _pod("g")
    ungated["metadata"]["labels"] = {"app": "g"}
    ungated["status"] = {"phase": "Pending", "nominatedNodeName": "n1"}  # the scheduler's: not recorded
    assert update_patch(SNAPSHOT["Pod"], gated, ungated, _nothing) == {
        "metadata": {"labels": {"app": "g"}},
        "spec": {"schedulingGates": None},
    }


def test_recorded_changes_of_other_objects_replay(tmp_path: Path) -> None:
    """A gated pod ungated at 2s, a priority class and a claim bound on their own: simulate applies each update
    without a warning, and the ungated pod is placed after it."""
    trace = Trace(server="https://example:6443", began="2026-11-28T10:00:00Z", seconds=5.0)
    gated = _pod("g")
    gated["spec"]["schedulingGates"] = [{"name": "wait"}]
    priority = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "high"},
        "value": 1000,
    }
    trace.start = [
        for_trace(_node("n1"), SNAPSHOT["Node"]),
        for_trace(_volume("Available", False), SNAPSHOT["PersistentVolume"]),
        for_trace(_claim(), SNAPSHOT["PersistentVolumeClaim"]),
        for_trace(priority, SNAPSHOT["PriorityClass"]),
        for_trace(gated, SNAPSHOT["Pod"]),
    ]
    changes = [
        ("Pod", gated, _pod("g")),
        ("PriorityClass", priority, {**priority, "description": "for the few"}),
        ("PersistentVolumeClaim", _claim(), _claim("Bound", "pv1")),
        ("PersistentVolume", _volume("Available", False), _volume("Bound", True)),
    ]
    for kind, old, new in changes:
        patch = update_patch(SNAPSHOT[kind], old, new, _nothing)
        assert patch, kind
        ref = {"kind": kind, "name": new["metadata"]["name"]}
        if SNAPSHOT[kind].namespaced:
            ref["namespace"] = "default"
        trace.add(2.0, "update", {**ref, "patch": patch})
    path = tmp_path / "trace.yaml"
    with path.open("w") as out:
        trace.write(out)
    result = simulate(path, seed=1)
    assert result.warnings == ()
    assert result.placements() == {"default/g": "n1"}
    assert [e.time for e in result.events if e.pod == "default/g" and e.type == "Scheduled"] == [2.0]
