"""--kubernetes-version: each release's gates, default plugins, configuration checks and the behaviours that differ."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubesched.config import names as n
from kubesched.config.load import ConfigError, load_config
from kubesched.config.types import DynamicResourcesArgs, NodeResourcesBalancedAllocationArgs, ResourceSpec
from kubesched.framework.interface import Handle, ScorePlugin
from kubesched.framework.plugins.dynamicresources import dynamic_resources
from kubesched.framework.plugins.dynamicresources.dra_manager import allocator_features
from kubesched.framework.plugins.noderesources import balanced_allocation
from kubesched.framework.plugins.noderesources.util_test import make_node_res
from kubesched.framework.plugins.registry import new_in_tree_registry
from kubesched.release import LATEST, SUPPORTED, Release, ReleaseError, gate_specs, parse_version, release
from kubesched_testing.framework import build_snapshot, score_nodes
from kubesched_testing.wrappers import make_pod

V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def _multi_point(minor: str) -> list[tuple[str, int | None]]:
    cfg = load_config(None, release=release(minor))
    plugins = cfg.raw.profiles[0].plugins
    assert plugins is not None
    return [(p.name, p.weight) for p in plugins.multiPoint.enabled]


def test_versions_are_parsed_from_every_spelling() -> None:
    assert [parse_version(v) for v in ("1.34", "v1.35", "v1.36.3", "v1.35.7-gke.100", " 1.36 ")] == [
        "1.34",
        "1.35",
        "1.36",
        "1.35",
        "1.36",
    ]
    for bad in ("1.33", "2.0", "1", "latest", "v1.3x", ""):
        with pytest.raises(ReleaseError, match="unsupported Kubernetes version") as err:
            parse_version(bad)
        assert err.value.flag == "--kubernetes-version"
    assert release().minor == LATEST and SUPPORTED[-1] == LATEST


@pytest.mark.parametrize(
    ("minor", "gates", "message"),
    [
        ("1.35", "Foo=true", "unrecognized feature gate: Foo"),
        ("1.36", "Foo=maybe", 'invalid value of Foo=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax'),
        ("1.34", "NodeDeclaredFeatures=true", "unrecognized feature gate: NodeDeclaredFeatures"),
        ("1.34", "OpportunisticBatching=true", "unrecognized feature gate: OpportunisticBatching"),
        (
            "1.35",
            "DynamicResourceAllocation=false",
            "cannot set feature gate DynamicResourceAllocation to false, feature is locked to true",
        ),
        ("1.36", "DRAAdminAccess=false", "cannot set feature gate DRAAdminAccess to false, feature is locked to true"),
        (
            "1.35",
            "OpportunisticBatching=maybe",
            'invalid value of OpportunisticBatching=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax',
        ),
        ("1.35", "DRADeviceTaints", "missing bool value for DRADeviceTaints"),
        (
            "1.35",
            "kube:DRAPartitionableDevices=true,NodeDeclaredFeatures=true",
            "set kube feature gates with default empty prefix or kube: prefix consistently, do not mix use",
        ),
        (
            "1.36",
            "GangScheduling=true",
            "GangScheduling is enabled, but depends on features that are disabled: [GenericWorkload]",
        ),
        (
            "1.35",
            "GangScheduling=true",
            "GangScheduling is enabled, but depends on features that are disabled: [GenericWorkload]",
        ),
        (
            "1.35",
            "GenericWorkload=true,GangScheduling=true",
            "feature gate GenericWorkload=true is not implemented by kubesched for v1.35",
        ),
        ("1.34", "GenericWorkload=true", "unrecognized feature gate: GenericWorkload"),
        (
            "1.36",
            "DRANodeAllocatableResources=true",
            "feature gate DRANodeAllocatableResources=true is not implemented by kubesched",
        ),
        ("1.36", "SchedulerAsyncPreemption=false", "feature gate SchedulerAsyncPreemption=false is not implemented"),
    ],
)
def test_feature_gates_are_refused_as_the_release_refuses_them(minor: str, gates: str, message: str) -> None:
    with pytest.raises(ReleaseError) as err:
        release(minor, gates)
    assert str(err.value).startswith(message)


def test_feature_gates_apply_on_top_of_the_release() -> None:
    r = release("1.35", "kube:DRAPartitionableDevices=true, kube:NodeDeclaredFeatures=T")
    assert r.enabled("DRAPartitionableDevices") and r.enabled("NodeDeclaredFeatures")
    assert not release("1.35").enabled("DRAPartitionableDevices")
    assert release("1.36").enabled("DRAPartitionableDevices")
    assert not release("1.36", "DRAPartitionableDevices=false").enabled("DRAPartitionableDevices")
    assert r.describe() == "v1.35 (DRAPartitionableDevices=true,NodeDeclaredFeatures=true)"
    assert release(
        "1.35",
        "AllAlpha=true,GangScheduling=false,GenericWorkload=false,TaintTolerationComparison"
        "Operators=false,VolumeLimitScaling=false,DRADeviceTaintRules=false,StorageCapacityScoring=false",
    ).enabled("DRAConsumableCapacity")
    assert not release("1.35").enabled("NoSuchGate")


def test_v1_36_warns_about_unknown_gates_where_older_releases_refuse_them() -> None:
    r = release("1.36", "NoSuchGate=true,AlsoNot=false,NoSuchGate=false")
    assert r.warnings == ("unrecognized feature gate: AlsoNot", "unrecognized feature gate: NoSuchGate")
    assert r == release("1.36") and not r.enabled("NoSuchGate")


def test_a_simulation_lists_the_gates_v1_36_ignored(capsys: pytest.CaptureFixture[str]) -> None:
    import kubesched

    sim = kubesched.simulate("examples/cluster", feature_gates="NoSuchGate=true")
    assert "--feature-gates: unrecognized feature gate: NoSuchGate" in sim.warnings
    code, _, err = _main(capsys, "simulate", "examples/cluster", "--feature-gates", "NoSuchGate=true", "-q")
    assert code == 0 and err.count("unrecognized feature gate: NoSuchGate") == 1


def test_the_refused_gates_are_real_gates() -> None:
    from kubesched.release import NOT_IMPLEMENTED_OFF, NOT_IMPLEMENTED_ON

    known = {name for minor in SUPPORTED for name in gate_specs(minor)}
    assert NOT_IMPLEMENTED_ON | NOT_IMPLEMENTED_OFF <= known


def test_the_workload_gates_are_followed_on_v1_36() -> None:
    from kubesched.config.defaults import default_multi_point

    r = release("1.36", "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true")
    assert r.workload_aware and r.enabled("GangScheduling") and not r.enabled("WorkloadAwarePreemption")
    names = [name for name, _ in default_multi_point(r)]
    assert names[-3:] == ["GangScheduling", "TopologyPlacementGenerator", "PodGroupPodsCount"]
    assert "GangScheduling" not in [name for name, _ in default_multi_point(release("1.36"))]
    assert not release("1.36").workload_aware


def test_gate_tables_know_each_release() -> None:
    assert "OpportunisticBatching" not in gate_specs("1.34") and "GenericWorkload" not in gate_specs("1.34")
    assert gate_specs("1.35")["OpportunisticBatching"].default
    assert gate_specs("1.36")["DRAAdminAccess"].locked and not gate_specs("1.35")["DRAAdminAccess"].locked
    assert (
        gate_specs("1.36")["DRAPrioritizedList"].stage == "GA" and not gate_specs("1.36")["DRAPrioritizedList"].locked
    )
    assert gate_specs("1.34")["SchedulerQueueingHints"].stage == "GA"


def test_default_plugins_per_release() -> None:
    old, middle, new = (_multi_point(v) for v in SUPPORTED)
    assert (n.DYNAMIC_RESOURCES, None) in old and (n.DYNAMIC_RESOURCES, 2) in middle and (n.DYNAMIC_RESOURCES, 2) in new
    assert n.NODE_DECLARED_FEATURES not in dict(old) | dict(middle)
    assert new[-1] == (n.NODE_DECLARED_FEATURES, None)
    with_gate = load_config(None, release=release("1.35", "NodeDeclaredFeatures=true"))
    plugins = with_gate.raw.profiles[0].plugins
    assert plugins is not None and plugins.multiPoint.enabled[-1].name == n.NODE_DECLARED_FEATURES
    assert [p[0] for p in old] == [p[0] for p in middle]


def test_dynamic_resources_args_per_release() -> None:
    def args(r: Release) -> DynamicResourcesArgs:
        cfg = load_config(None, release=r)
        found = next(pc.args for pc in cfg.raw.profiles[0].pluginConfig if pc.name == n.DYNAMIC_RESOURCES)
        assert isinstance(found, DynamicResourcesArgs)
        return found

    assert args(release("1.36")).bindingTimeout == "10m0s"
    assert args(release("1.35")).bindingTimeout is None
    assert args(release("1.35", "DRADeviceBindingConditions=true")).bindingTimeout == "10m0s"
    assert args(release("1.34", "DRADeviceBindingConditions=true")).bindingTimeout is None


def test_binding_timeout_is_forbidden_where_its_gates_are_off() -> None:
    doc = {**V1, "profiles": [{"pluginConfig": [{"name": n.DYNAMIC_RESOURCES, "args": {"bindingTimeout": "5m"}}]}]}
    load_config(doc, release=release("1.36"))
    load_config(doc, release=release("1.35", "DRADeviceBindingConditions=true"))
    with pytest.raises(ConfigError) as err:
        load_config(doc, release=release("1.35"))
    assert err.value.message == (
        "profiles[0].pluginConfig[0].args.bindingTimeout: Forbidden: "
        "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled"
    )
    with pytest.raises(ConfigError) as err:
        load_config(doc, release=release("1.34"))
    assert err.value.message == (
        "strict decoding error: decoding .profiles[0].pluginConfig[0]: strict decoding error: decoding args for "
        'plugin DynamicResources: strict decoding error: unknown field "bindingTimeout"'
    )


def test_placement_points_are_v1_36_only() -> None:
    doc = {**V1, "profiles": [{"plugins": {"placementScore": {"disabled": [{"name": "*"}]}}}]}
    load_config(doc, release=release("1.36"))
    with pytest.raises(ConfigError) as err:
        load_config(doc, release=release("1.35"))
    assert err.value.message == 'strict decoding error: unknown field "profiles[0].plugins.placementScore"'


def test_registry_per_release() -> None:
    assert n.NODE_DECLARED_FEATURES not in new_in_tree_registry(release("1.34"))
    assert n.NODE_DECLARED_FEATURES in new_in_tree_registry(release("1.35"))
    old = dynamic_resources.new(None, Handle(release=release("1.34")))
    new = dynamic_resources.new(None, Handle(release=release("1.35")))
    assert not isinstance(old, ScorePlugin) and isinstance(new, ScorePlugin)


def test_dra_allocator_features_follow_the_gates() -> None:
    assert not allocator_features(release("1.35")).partitionable_devices
    assert allocator_features(release("1.36")).partitionable_devices
    f = allocator_features(release("1.36", "DRAResourceClaimDeviceStatus=false"))
    assert not f.device_binding_and_status and f.consumable_capacity


@pytest.mark.parametrize("batch", [False, True])
@pytest.mark.parametrize(("minor", "score"), [("1.34", 87), ("1.35", 87), ("1.36", 68)])
def test_balanced_allocation_formula_per_release(minor: str, score: int, batch: bool) -> None:
    """An empty node, a pod for 3/4 of its CPU and half its memory: balance 100 before, 87 after.

    v1.34 and v1.35 score the balance after (87); v1.36 the change, 50 + (50 + 87 - 100) // 2.
    Both the per-node and the vectorised path.
    """
    args = NodeResourcesBalancedAllocationArgs(
        resources=[ResourceSpec(name="cpu", weight=1), ResourceSpec(name="memory", weight=1)]
    )
    snap = build_snapshot([make_node_res("n", 4000, 10 * 2**30)])
    plugin = balanced_allocation.new(args, Handle(snapshot=snap, release=release(minor)))
    pod = make_pod().req({"cpu": "3", "memory": "5Gi"}).obj()
    assert score_nodes(plugin, pod, snap, batch=batch) == ([score], None)


def _main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    from kubesched.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["simulate", "examples/cluster", "--kubernetes-version", "1.33"], "--kubernetes-version: unsupported"),
        (
            ["simulate", "examples/cluster", "--kubernetes-version", "1.35", "--feature-gates", "Foo=true"],
            "--feature-gates: unrecognized",
        ),
        (["whatif", "compare", "examples/cluster", "--kubernetes-version", "1.3"], "--kubernetes-version: unsupported"),
        (["sweep", "examples/whatif/sweep.yaml", "--kubernetes-version", "2.0"], "--kubernetes-version: unsupported"),
        (["ui", "examples/cluster", "--kubernetes-version", "x", "--no-open"], "--kubernetes-version: unsupported"),
        (["run", "--kubernetes-version", "1.33"], "--kubernetes-version: unsupported"),
    ],
)
def test_bad_release_flags_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    code, _, err = _main(capsys, *argv)
    assert code == 2 and err.startswith(f"kubesched: {message}") and "Traceback" not in err


def test_upgrade_compare_names_the_changed_scores(capsys: pytest.CaptureFixture[str]) -> None:
    """examples/dra from v1.34 to v1.36: DRA's off-by-default gates in v1.34 keep gpu-node-c out, and its
    DynamicResources does not score; the notebook moves and the comparison says so."""
    code, out, _ = _main(
        capsys,
        "whatif",
        "compare",
        "examples/dra",
        "--kubernetes-version",
        "1.34",
        "--kubernetes-version",
        "1.36",
        "--output",
        "json",
    )
    assert code == 0
    doc = json.loads(out)
    assert (doc["a"]["kubernetesVersion"], doc["b"]["kubernetesVersion"]) == ("v1.34", "v1.36")
    notebook = next(m for m in doc["moved"] if m["pod"] == "default/notebook-0")
    assert (notebook["nodeA"], notebook["nodeB"]) == ("gpu-node-b", "gpu-node-c")
    why = {w["plugin"]: w for w in notebook["why"] if "scoresA" in w}
    assert why["DynamicResources"] == {
        "plugin": "DynamicResources",
        "scoresA": {"gpu-node-b": None},
        "scoresB": {"gpu-node-b": 174},
    }
    assert "TaintToleration" not in why  # the same on the node both sides scored
    assert (
        why["NodeResourcesBalancedAllocation"]["scoresA"]["gpu-node-b"]
        != why["NodeResourcesBalancedAllocation"]["scoresB"]["gpu-node-b"]
    )
    assert {"plugin": "DynamicResources", "node": "gpu-node-c", "filterA": "cannot allocate all claims"} in notebook[
        "why"
    ]
    code, out, _ = _main(
        capsys,
        "whatif",
        "compare",
        "examples/dra",
        "--kubernetes-version",
        "1.36",
        "--output",
        "table",
        "--config",
        "default",
        "--config",
        "default",
    )
    assert code == 0 and "Every pod lands on the same node" in out and "Why" not in out


def test_sweep_varies_the_release(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"base: [{Path('examples/dra').resolve()}]\ngrid:\n  kubernetesVersion: ['1.34', 1.36]\n")
    code, out, _ = _main(capsys, "sweep", str(spec), "--workers", "1", "--output", "json")
    assert code == 0
    rows = json.loads(out)["points"]
    assert [r["kubernetesVersion"] for r in rows] == ["1.34", "1.36"]
    assert rows[0]["scheduled"] < rows[1]["scheduled"]  # v1.34's DRA gates leave the shared viewers pending
    bad = tmp_path / "bad.yaml"
    bad.write_text(f"base: [{Path('examples/dra').resolve()}]\nkubernetesVersion: '1.2'\n")
    code, _, err = _main(capsys, "sweep", str(bad))
    assert code == 2 and "kubernetesVersion: unsupported Kubernetes version" in err


SNAPSHOT = """# kubesched snapshot of a Kubernetes cluster at v1.35.7
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 10Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status: {allocatable: {cpu: "4", memory: 10Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec: {containers: [{name: c, image: i, resources: {requests: {cpu: "3", memory: 5Gi}}}]}
"""


@pytest.mark.parametrize(("version", "score", "noted"), [(None, 87, True), ("1.36", 68, False), ("1.34", 87, False)])
def test_the_python_api_follows_a_snapshot_unless_told(
    tmp_path: Path, version: str | None, score: int, noted: bool
) -> None:
    import kubesched

    path = tmp_path / "cluster.yaml"
    path.write_text(SNAPSHOT)
    sim = kubesched.simulate(str(path), kubernetes_version=version, seed=1)
    note = f"{path} records Kubernetes v1.35.7: following kube-scheduler v1.35 (--kubernetes-version)"
    assert (note in sim.warnings) == noted
    pod = sim.pod("default/p")
    assert pod.plugins is not None and pod.plugins.score["n1"]["NodeResourcesBalancedAllocation"] == score


def test_a_snapshot_of_an_unknown_release_is_simulated_as_v1_36(tmp_path: Path) -> None:
    import kubesched

    path = tmp_path / "cluster.yaml"
    path.write_text(SNAPSHOT.replace("v1.35.7", "v1.33.2"))
    sim = kubesched.simulate(str(path), seed=1)
    assert f"{path} records Kubernetes v1.33.2; simulating v1.36 (--kubernetes-version to choose)" in sim.warnings


def test_the_ui_workspace_follows_its_release() -> None:
    """kubesched ui --kubernetes-version: every run of the workspace (edits too) follows the release."""
    from kubesched.ui.workspace import Workspace

    old = Workspace.from_files(["examples/dra"], kubernetes_version="1.34")
    new = Workspace.from_files(["examples/dra"], kubernetes_version="1.36")
    assert (len(old.view.sim.scheduled), len(new.view.sim.scheduled)) == (3, 5)
