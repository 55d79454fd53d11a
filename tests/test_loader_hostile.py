"""`kubesched simulate` as the API server: hostile input gets one clear exit-2 message, never a traceback or a hang.

The verdicts in hostile_cases.CASES were taken from a real v1.36 API server (and are
checked against it again in tests/upstream/test_apiserver_verdicts.py); kubesched must
agree with each. The rest covers what the table cannot: YAML itself, duplicates across
documents and files, defaults that change schedules, and the command line.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hostile_cases import CASES, Case

from kubesched.cli import main
from kubesched.simulator.load import LoadedInput, LoadError, add_text

NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1"},
    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}},
}


def write(tmp_path: Path, docs: list[Any], name: str = "in.yaml") -> Path:
    f = tmp_path / name
    f.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return f


def simulate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["simulate", *args, "--output", "json"])
    out = capsys.readouterr()
    return code, out.out, out.err


def run_docs(tmp_path: Path, capsys: pytest.CaptureFixture[str], docs: list[Any]) -> tuple[int, str, str]:
    return simulate(capsys, str(write(tmp_path, docs)))


def run_with_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], config: dict[str, Any], docs: list[Any]
) -> tuple[int, str, str]:
    """The configuration as --config: only there may it name extenders."""
    return simulate(capsys, str(write(tmp_path, docs)), "--config", str(write(tmp_path, [config], "config.yaml")))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_kubesched_agrees_with_the_api_server(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: Case) -> None:
    docs = [NODE, *case.context, case.obj]
    code, out, err = run_docs(tmp_path, capsys, docs)
    if case.expected is None:
        assert code == 0, err
        assert "Traceback" not in err
        return
    assert code == 2, f"accepted what the API server refuses: {out[:300]}"
    assert out == ""
    assert case.expected in err, err
    assert f"in.yaml, document {len(docs)}" in err, err
    assert err.count("\n") == 1, err  # one line, no traceback


def test_errors_name_list_items(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2"}, "spec": {"unschedulable": "false"}}
    code, _, err = run_docs(tmp_path, capsys, [{"apiVersion": "v1", "kind": "List", "items": [NODE, bad]}])
    assert code == 2
    assert "in.yaml, document 1, items[1] (Node n2): spec.unschedulable: json: cannot unmarshal string" in err


# YAML and JSON themselves.


def nested(depth: int) -> str:
    return "a: " + "[" * depth + "]" * depth + "\n"


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        pytest.param(nested(100_000), "nesting deeper than 100 levels", id="deep flow YAML"),
        pytest.param(
            "".join("  " * i + "a:\n" for i in range(2000)), "nesting deeper than 100 levels", id="deep block YAML"
        ),
        pytest.param("[" * 100_000 + "]" * 100_000, "nesting deeper than 100 levels", id="deep JSON"),
        pytest.param(
            "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
            + "".join(
                f"{c}: &{c} [{', '.join([f'*{p}'] * 10)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True)
            ),
            "document contains excessive aliasing",
            id="alias bomb",
        ),
        pytest.param("a: &a [*a]\n", "anchor 'a' value contains itself", id="recursive alias"),
        pytest.param("kind: Node\nkind: Pod\n", 'key "kind" already set in map', id="key twice"),
        pytest.param("a: .nan\n", "NaN and infinities are not valid JSON numbers", id="NaN"),
        pytest.param('{"kind": "Node", "metadata": {"name": "n", "labels": {"a": NaN}}}', "NaN", id="JSON NaN"),
        pytest.param("a: !!binary aGVsbG8=\n", "unsupported tag", id="binary tag"),
        pytest.param("priority: " + "9" * 5000 + "\n", "cannot read", id="5000-digit integer"),
        pytest.param("? [a]\n: b\n", "a mapping key must be a string", id="list as a key"),
        pytest.param("a: [1, 2\n", "invalid YAML: line 2, column 1", id="unclosed list"),
        pytest.param("a: \x07\n", "invalid YAML", id="control character"),
    ],
)
def test_hostile_yaml(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, needle: str) -> None:
    f = tmp_path / "in.yaml"
    f.write_text(text)
    start = time.monotonic()
    code, out, err = simulate(capsys, str(f))
    assert time.monotonic() - start < 10
    assert code == 2 and out == ""
    assert needle in err and "in.yaml" in err, err
    assert "Traceback" not in err


def test_yes_in_a_label_is_a_boolean(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "in.yaml"
    f.write_text("apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels: {ssd: yes}\n")
    code, _, err = simulate(capsys, str(f))
    assert code == 2
    assert "metadata.labels[ssd]: json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels" in err
    f.write_text("apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels: {ssd: 'yes'}\n")
    assert simulate(capsys, str(f))[0] == 0


def test_yaml_merge_keys_and_aliases_make_copies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An alias is a copy, as go-yaml makes it: two pods sharing metadata through one stay two pods."""
    f = tmp_path / "in.yaml"
    f.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '4', pods: '10'}}\n---\n"
        "apiVersion: v1\nkind: List\nitems:\n"
        "- {apiVersion: v1, kind: Pod, metadata: &m {generateName: web-},\n"
        "   spec: &s {containers: [{name: c, resources: {limits: {cpu: '1'}}}]}}\n"
        "- {apiVersion: v1, kind: Pod, metadata: *m, spec: {<<: *s, priority: 0}}\n"
    )
    code, out, err = simulate(capsys, str(f))
    assert code == 0, err
    doc = json.loads(out)
    assert sorted(p["name"] for p in doc["pods"]) == ["web-00001", "web-00002"]
    assert doc["nodes"][0]["requested"]["cpu"] == "2"


def test_non_utf8_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    class Stdin:
        buffer = __import__("io").BytesIO(b"kind: Node\nmetadata: {name: \xff}\n")

    monkeypatch.setattr(sys, "stdin", Stdin())
    code, out, err = simulate(capsys, "-")
    assert code == 2 and out == ""
    assert err == "kubesched: <stdin>: not UTF-8 text (byte 28: 0xff)\n"


def test_non_utf8_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "cfg.yaml"
    cfg.write_bytes(b"\xfe\xff kind")
    code, _, err = simulate(capsys, str(write(tmp_path, [NODE])), "--config", str(cfg))
    assert code == 2 and "cfg.yaml: not UTF-8 text" in err


# Duplicates and identities.


def sc(name: str) -> dict[str, Any]:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name}, "provisioner": "x"}


def claim(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name}, "spec": {}}


def klass(name: str, value: int) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        pytest.param(NODE, 'nodes "n1" already exists (first in', id="Node"),
        pytest.param(sc("fast"), 'storageclasses.storage.k8s.io "fast" already exists', id="StorageClass"),
        pytest.param(claim("data"), 'persistentvolumeclaims "data" already exists', id="PersistentVolumeClaim"),
        pytest.param(klass("hi", 5), 'priorityclasses.scheduling.k8s.io "hi" already exists', id="PriorityClass"),
    ],
)
def test_duplicates(tmp_path: Path, capsys: pytest.CaptureFixture[str], obj: dict[str, Any], message: str) -> None:
    docs = [NODE, obj] if obj is not NODE else [NODE]
    code, _, err = run_docs(tmp_path, capsys, [*docs, obj])
    assert code == 2 and message in err and f"in.yaml, document {len(docs) + 1}" in err, err
    other = write(tmp_path, [obj], "other.yaml")
    code, _, err = simulate(capsys, str(write(tmp_path, docs)), str(other))
    assert code == 2 and message in err and "other.yaml, document 1" in err, err
    same = write(tmp_path, docs)
    code, _, err = simulate(capsys, str(same), str(same))
    assert code == 2, err
    assert f'nodes "n1" already exists (first in {same}, document 1; is the file given twice?)' in err


def test_same_name_in_other_namespaces_is_no_duplicate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = claim("data"), claim("data")
    b["metadata"]["namespace"] = "team"
    assert run_docs(tmp_path, capsys, [NODE, a, b])[0] == 0


def test_a_snapshot_may_hold_the_system_classes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_docs(tmp_path, capsys, [NODE, klass("system-node-critical", 2000001000)])
    assert code == 0, err
    code, _, err = run_docs(tmp_path, capsys, [NODE, klass("system-node-critical", 5)])
    assert code == 2 and "value of system-node-critical PriorityClass must be 2000001000" in err


def default_class(name: str) -> dict[str, Any]:
    return {**klass(name, 100), "globalDefault": True}


def test_a_default_class_given_twice_is_a_duplicate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The duplicate is what to fix: naming it (and --overlay) beats the second default it also makes."""
    first = write(tmp_path, [NODE, default_class("default-priority")], "platform.yaml")
    again = write(tmp_path, [default_class("default-priority")], "classes.yaml")
    code, out, err = simulate(capsys, str(first), str(again))
    assert code == 2 and out == ""
    assert err == (
        f"kubesched: {again}, document 1 (PriorityClass default-priority): priorityclasses.scheduling.k8s.io "
        f'"default-priority" already exists (first in {first}, document 2); to let {again} replace objects, '
        "give it with --overlay\n"
    )
    code, _, err = simulate(capsys, str(first), "--overlay", str(again))
    assert code == 0, err


def test_two_default_classes_name_both_places(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two different global defaults: the priority admission plugin's refusal, with where the first one is."""
    first = write(tmp_path, [NODE, default_class("default-priority")], "platform.yaml")
    other = write(tmp_path, [default_class("other-default")], "classes.yaml")
    code, _, err = simulate(capsys, str(first), str(other))
    assert code == 2
    assert err == (
        f"kubesched: {other}, document 1 (PriorityClass other-default): priorityclasses.scheduling.k8s.io "
        '"other-default" is forbidden: PriorityClass default-priority is already marked as default. '
        f"Only one default can exist (default-priority in {first}, document 2)\n"
    )


def gpu_pod(name: str, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, **meta},
        "spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]},
    }


GPU_NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "gpu"},
    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10", "nvidia.com/gpu": "1"}},
}


def test_limits_become_requests(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two pods with only `limits: {nvidia.com/gpu: 1}` do not share one GPU: the API server copies limits."""
    code, out, err = run_docs(tmp_path, capsys, [GPU_NODE, gpu_pod("a"), gpu_pod("b")])
    assert code == 0, err
    results = {p["name"]: p["result"] for p in json.loads(out)["pods"]}
    assert results == {"a": "Scheduled", "b": "Unschedulable"}


def test_limits_become_requests_for_init_containers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pod = gpu_pod("a")
    pod["spec"]["initContainers"] = [{"name": "i", "resources": {"limits": {"cpu": "3"}}}]
    code, out, _ = run_docs(tmp_path, capsys, [GPU_NODE, pod, gpu_pod("b")])
    assert json.loads(out)["nodes"][0]["requested"]["cpu"] == "3"


def test_pods_with_the_same_uid_stay_two(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    node = dict(GPU_NODE, status={"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10", "nvidia.com/gpu": "2"}})
    a, b = gpu_pod("a", uid="1234"), gpu_pod("b", uid="1234")
    code, out, err = run_docs(tmp_path, capsys, [node, a, b])
    assert code == 0, err
    doc = json.loads(out)
    assert [p["result"] for p in doc["pods"]] == ["Scheduled", "Scheduled"]
    assert doc["nodes"][0]["pods"] == 2


def test_finished_pods_hold_no_room(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    done = gpu_pod("done")
    done["spec"]["nodeName"] = "gpu"
    done["status"] = {"phase": "Succeeded"}
    code, out, err = run_docs(tmp_path, capsys, [GPU_NODE, done, gpu_pod("next")])
    assert code == 0, err
    doc = json.loads(out)
    assert [(p["name"], p["result"]) for p in doc["pods"]] == [("next", "Scheduled")]
    assert "1 Succeeded or Failed pod(s) left out" in doc["warnings"][0]


def test_a_pod_on_a_missing_node_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lost = gpu_pod("lost")
    lost["spec"]["nodeName"] = "gone"
    code, out, err = run_docs(tmp_path, capsys, [GPU_NODE, lost])
    assert code == 0
    assert 'pod default/lost is bound to node "gone", which is not in the input' in err
    assert json.loads(out)["warnings"] == [
        'pod default/lost is bound to node "gone", which is not in the input: its requests count on no node'
    ]


# Defaults the scheduler reads.


def test_api_server_defaults(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """DefaultTolerationSeconds, hostNetwork ports, the namespace name label and the default StorageClass."""
    from kubesched.simulator.load import load_manifests, prepare_objects

    default_sc = sc("standard")
    default_sc["metadata"]["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    host = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "h"},
        "spec": {"hostNetwork": True, "containers": [{"name": "c", "ports": [{"containerPort": 8080}]}]},
    }
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}
    f = write(tmp_path, [NODE, default_sc, claim("data"), host, ns])
    objs = {so.obj["kind"]: so.obj for so in prepare_objects(load_manifests([str(f)]))}
    assert objs["PersistentVolumeClaim"]["spec"] == {"storageClassName": "standard", "volumeMode": "Filesystem"}
    spec = objs["Pod"]["spec"]
    assert spec["containers"][0]["ports"] == [{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}]
    assert spec["tolerations"] == [
        {"key": k, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
        for k in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
    ]
    assert (spec["schedulerName"], spec["priority"], spec["preemptionPolicy"]) == (
        "default-scheduler",
        0,
        "PreemptLowerPriority",
    )
    assert objs["Namespace"]["metadata"]["labels"] == {"kubernetes.io/metadata.name": "team"}
    assert objs["StorageClass"]["volumeBindingMode"] == "Immediate"


def test_pod_level_requests_default_from_limits_and_containers(tmp_path: Path) -> None:
    """PodLevelResources defaulting, as v1.36's API server stored it (requests cpu from the pod's limit,
    memory from the containers')."""
    from kubesched.simulator.load import load_manifests, prepare_objects

    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {
            "resources": {"limits": {"cpu": "2"}},
            "containers": [{"name": "c"}],
            "initContainers": [{"name": "i", "resources": {"limits": {"memory": "1Gi", "example.com/foo": "2"}}}],
        },
    }
    f = write(tmp_path, [NODE, pod])
    objs = [so.obj for so in prepare_objects(load_manifests([str(f)]))]
    spec = objs[1]["spec"]
    assert spec["resources"] == {"limits": {"cpu": "2"}, "requests": {"cpu": "2", "memory": str(2**30)}}
    assert spec["initContainers"][0]["resources"]["requests"] == {"memory": "1Gi", "example.com/foo": "2"}


# Quantities, time and the command line.


def test_huge_allocatable_prints(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    node = dict(NODE, status={"allocatable": {"cpu": "1e5000", "memory": "100Ei", "pods": "1e999999999"}})
    start = time.monotonic()
    code, out, err = run_docs(tmp_path, capsys, [node, gpu_pod("a")])
    assert time.monotonic() - start < 10
    assert code == 0, err
    alloc = json.loads(out)["nodes"][0]["allocatable"]
    assert alloc == {"cpu": "9223372036854775807m", "memory": "9223372036854775807", "pods": "9223372036854775807"}


def test_a_pod_too_large_to_count(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pod = gpu_pod("a")
    pod["spec"]["containers"][0]["resources"] = {"requests": {"memory": "1e5000"}}
    code, _, err = run_docs(tmp_path, capsys, [NODE, pod])
    assert code == 2 and "spec.containers[0].resources.requests[memory]" in err and "int64" in err


def scenario(at: str) -> dict[str, Any]:
    return {
        "apiVersion": "kubesched.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "s"},
        "steps": [{"at": at, "delete": [{"kind": "Node", "name": "n1"}]}],
    }


@pytest.mark.parametrize("at", ["1000000h", "169h", "99999999999999999999h"])
def test_scenario_steps_within_a_week(tmp_path: Path, capsys: pytest.CaptureFixture[str], at: str) -> None:
    code, _, err = run_docs(tmp_path, capsys, [NODE, scenario(at)])
    assert code == 2 and f'steps[0].at: Invalid value: "{at}": must be between 0s and 168h' in err


def test_scenario_step_at_nan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "in.yaml"
    f.write_text(yaml.safe_dump_all([NODE, scenario("1s")]).replace("at: 1s", "at: .nan"))
    code, _, err = simulate(capsys, str(f))
    assert code == 2 and "NaN and infinities are not valid JSON numbers" in err


def test_unreachable_extender(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg: dict[str, Any] = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "extenders": [{"urlPrefix": "http://127.0.0.1:1/sched", "filterVerb": "filter"}],
    }
    code, out, err = run_with_config(tmp_path, capsys, cfg, [NODE, gpu_pod("a")])
    assert (code, out) == (2, "")
    assert err == (
        f"kubesched: {tmp_path / 'config.yaml'}: extenders[0].urlPrefix: cannot connect to "
        "'http://127.0.0.1:1/sched': Connection refused\n"
    )
    cfg["extenders"][0]["ignorable"] = True
    code, _, err = run_with_config(tmp_path, capsys, cfg, [NODE, gpu_pod("a")])
    assert code == 0 and "Traceback" not in err


@pytest.mark.parametrize(
    ("profile", "field", "message"),
    [
        (
            {"plugins": {"bind": {"disabled": [{"name": "DefaultBinder"}]}}},
            "profiles[0].plugins.bind",
            "at least one bind plugin is needed",
        ),
        (
            {"plugins": {"filter": {"enabled": [{"name": "Nope"}]}}},
            "profiles[0].plugins.filter.enabled[0].name",
            'FilterPlugin "Nope" does not exist',
        ),
        (
            {"plugins": {"score": {"enabled": [{"name": "NodeAffinity"}, {"name": "Foo"}]}}},
            "profiles[0].plugins.score.enabled[1].name",
            'ScorePlugin "Foo" does not exist',
        ),
        (
            {"plugins": {"multiPoint": {"enabled": [{"name": "NodeAffinity", "weight": 3}, {"name": "Foo"}]}}},
            "profiles[0].plugins.multiPoint.enabled[1].name",  # its index in the file, not in the merged list
            'PreFilterPlugin "Foo" does not exist',
        ),
        (
            {"plugins": {"filter": {"enabled": [{"name": "ImageLocality"}]}}},
            "profiles[0].plugins.filter.enabled[0].name",
            'plugin "ImageLocality" does not extend FilterPlugin plugin',
        ),
        (
            {"plugins": {"score": {"enabled": [{"name": "ImageLocality"}, {"name": "ImageLocality"}]}}},
            "profiles[0].plugins.score.enabled[1].name",
            'plugin "ImageLocality" already registered as "ScorePlugin"',
        ),
        (
            {"plugins": {"score": {"enabled": [{"name": "ImageLocality", "weight": -1}]}}},
            "profiles[0].plugins.score.enabled[0].weight",
            "total score of Score plugins could overflow",
        ),
        (
            {"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Nope"}}}]},
            "profiles[0].pluginConfig[0].args.scoringStrategy.type",
            'initializing plugin "NodeResourcesFit": scoringStrategy.type: Unsupported value: "Nope"',
        ),
    ],
)
def test_framework_errors_name_the_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], profile: dict[str, Any], field: str, message: str
) -> None:
    """Errors found building a profile name the file and the field, then upstream's words."""
    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": [profile]}
    code, _, err = run_docs(tmp_path, capsys, [cfg, NODE])
    assert code == 2 and err.startswith(
        f"kubesched: {tmp_path / 'in.yaml'}, document 1: {field}: initializing profiles:"
    )
    assert message in err
    path = write(tmp_path, [cfg], "cfg.yaml")
    code, _, err = simulate(capsys, str(write(tmp_path, [NODE])), "--config", str(path))
    assert code == 2 and err.startswith(f"kubesched: {path}: {field}: initializing profiles: creating profile for")
    assert message in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("config", "field"),
    [
        (
            {"profiles": [{"plugins": {"score": {"enabled": [{"name": "A"}, {"weight": "x"}]}}}]},
            "profiles[0].plugins.score.enabled[1].weight: json: cannot unmarshal string",
        ),
        (
            {"profiles": [{"pluginConfig": [{"name": "NodeAffinity", "args": {"addedAffinity": 5}}]}]},
            "profiles[0].pluginConfig[0].args.addedAffinity: decoding .profiles[0].pluginConfig[0]: ",
        ),
        (
            {"profiles": [{"pluginConfig": [{"name": "NodeAffinity", "args": [1]}]}]},
            "profiles[0].pluginConfig[0].args: decoding .profiles[0].pluginConfig[0]: ",
        ),
        (
            {"profiles": [{}, {"pluginConfig": [{"name": "InterPodAffinity", "args": {"kind": "Foo"}}]}]},
            "profiles[1].pluginConfig[0].args.kind: decoding .profiles[1].pluginConfig[0]: decoding args for plugin "
            'InterPodAffinity: no kind "Foo" is registered',
        ),
        ({"leaderElection": {"leaseDuration": 5}}, "leaderElection.leaseDuration: json: cannot unmarshal number"),
        ({"extenders": [{"urlPrefix": "x", "tlsConfig": {"caData": "a b"}}]}, "extenders[0].tlsConfig.caData: illegal"),
    ],
)
def test_decoding_errors_name_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], config: dict[str, Any], field: str
) -> None:
    """Go names the struct field without list indices; kubesched puts the path first."""
    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", **config}
    path = write(tmp_path, [cfg], "cfg.yaml")
    code, _, err = simulate(capsys, str(write(tmp_path, [NODE])), "--config", str(path))
    assert code == 2
    assert err.startswith(f"kubesched: {path}: invalid KubeSchedulerConfiguration: {field}"), err


def test_args_of_an_unknown_plugin_are_warned_about(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """kube-scheduler takes them and never reads them; a misspelled plugin name deserves a word."""
    cfg = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"pluginConfig": [{"name": "NodeAfinity", "args": {"addedAffinity": {}}}]}],
    }
    code, out, err = run_docs(tmp_path, capsys, [cfg, NODE])
    assert code == 0
    warning = (
        f'{tmp_path / "in.yaml"}, document 1: profiles[0].pluginConfig[0].name: no plugin "NodeAfinity" exists, '
        "so its args are not used"
    )
    assert json.loads(out)["warnings"] == [warning] and err == f"kubesched: warning: {warning}\n"


def test_extender_url_that_does_not_parse(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "extenders": [{"urlPrefix": "http://[::1", "filterVerb": "filter"}],
    }
    code, _, err = run_with_config(tmp_path, capsys, cfg, [NODE])
    assert code == 2
    assert err == (
        f"kubesched: {tmp_path / 'config.yaml'}: extenders[0].urlPrefix: cannot connect to 'http://[::1': "
        "Invalid IPv6 URL\n"
    )


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    import importlib.metadata

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"kubesched {importlib.metadata.version('kubesched')} (Kubernetes v1.36)\n"


def test_broken_pipe_is_quiet(tmp_path: Path) -> None:
    docs = [NODE, *(gpu_pod(f"p{i}") for i in range(200))]
    f = write(tmp_path, docs)
    proc = subprocess.run(
        f"{sys.executable} -m kubesched simulate {f} --output json | head -c 10",
        shell=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.stdout == '{\n "pods":'
    assert proc.stderr == ""


# --overlay: a later file that replaces objects instead of repeating them.


def pending(name: str, cpu: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]},
    }


def test_overlay_replaces_and_adds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    snapshot = write(tmp_path, [NODE, pending("a", "3"), pending("b", "3")], "snapshot.yaml")
    bigger = dict(NODE, status={"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "10"}})
    whatif = write(tmp_path, [pending("b", "1"), bigger, pending("c", "1")], "whatif.yaml")
    code, _, err = simulate(capsys, str(snapshot), str(whatif))
    assert code == 2
    assert f'{whatif}, document 1 (Pod default/b): pods "b" already exists (first in {snapshot}, document 3)' in err
    assert "give it with --overlay" in err
    code, out, err = simulate(capsys, str(snapshot), "--overlay", str(whatif))
    assert code == 0, err
    doc = json.loads(out)
    # b keeps its place in the queue with the overlay's requests; c is added after the FILEs' pods.
    assert [(p["name"], p["result"]) for p in doc["pods"]] == [
        ("a", "Scheduled"),
        ("b", "Scheduled"),
        ("c", "Scheduled"),
    ]
    assert doc["nodes"][0]["allocatable"]["cpu"] == "8" and doc["nodes"][0]["requested"]["cpu"] == "5"
    assert doc["warnings"] == [
        f"{whatif}, document 1 (Pod default/b) replaces the object in {snapshot}, document 3",
        f"{whatif}, document 2 (Node n1) replaces the object in {snapshot}, document 1",
    ]
    assert err.count("kubesched: warning:") == 2


@pytest.mark.parametrize(
    ("obj", "ident"),
    [
        (sc("fast"), "StorageClass fast"),
        (claim("data"), "PersistentVolumeClaim default/data"),
        (klass("hi", 5), "PriorityClass hi"),
    ],
    ids=["StorageClass", "PersistentVolumeClaim", "PriorityClass"],
)
def test_overlay_replaces_any_kind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], obj: dict[str, Any], ident: str
) -> None:
    base = write(tmp_path, [NODE, obj], "base.yaml")
    overlay = write(tmp_path, [{**obj, "metadata": {**obj["metadata"], "labels": {"changed": "yes"}}}], "overlay.yaml")
    code, out, err = simulate(capsys, str(base), "--overlay", str(overlay))
    assert code == 0, err
    assert json.loads(out)["warnings"] == [f"{overlay}, document 1 ({ident}) replaces the object in {base}, document 2"]


def test_overlay_duplicates_stay_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = write(tmp_path, [NODE], "base.yaml")
    overlay = write(tmp_path, [pending("a", "1")], "overlay.yaml")
    code, _, err = simulate(capsys, str(base), "--overlay", str(overlay), "--overlay", str(overlay))
    assert code == 2
    assert f'pods "a" already exists (first in {overlay}, document 1; is the file given twice?)' in err
    assert "--overlay" not in err.split("?)")[1]
    twice = write(tmp_path, [NODE, NODE], "twice.yaml")
    code, _, err = simulate(capsys, str(twice), "--overlay", str(overlay))
    assert code == 2 and f'nodes "n1" already exists (first in {twice}, document 1)' in err


def test_overlay_replaces_the_configuration(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    base = write(tmp_path, [cfg, NODE], "base.yaml")
    overlay = write(tmp_path, [{**cfg, "profiles": [{"schedulerName": "other"}]}, pending("a", "1")], "overlay.yaml")
    code, out, err = simulate(capsys, str(base), "--overlay", str(overlay))
    assert code == 0, err
    doc = json.loads(out)
    assert doc["pods"][0]["message"] == 'no profile for schedulerName "default-scheduler"'  # the overlay's profile
    assert (
        doc["warnings"][0]
        == f"{overlay}, document 1 (KubeSchedulerConfiguration) replaces the one in {base}, document 1"
    )


def test_stdin_only_once(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = simulate(capsys, "-", "--overlay", "-")
    assert code == 2 and err == "kubesched: -: standard input can be given only once\n"


# Lists as the API server returns them, and empty input.


def test_raw_typed_lists(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`kubectl get --raw /api/v1/nodes`: a NodeList whose items have no kind or apiVersion."""
    node = {k: v for k, v in NODE.items() if k not in ("kind", "apiVersion")}
    pod = {k: v for k, v in pending("a", "1").items() if k not in ("kind", "apiVersion")}
    f = tmp_path / "raw.json"
    f.write_text(json.dumps({"kind": "NodeList", "apiVersion": "v1", "metadata": {}, "items": [node]}))
    pods = write(tmp_path, [{"kind": "PodList", "apiVersion": "v1", "items": [pod]}], "pods.yaml")
    code, out, err = simulate(capsys, str(f), str(pods))
    assert code == 0, err
    assert [(p["name"], p["node"]) for p in json.loads(out)["pods"]] == [("a", "n1")]
    code, _, err = run_docs(tmp_path, capsys, [{"kind": "List", "apiVersion": "v1", "items": [node]}])
    assert code == 2 and "in.yaml, document 1, items[0]: kind: Required value" in err


def test_typed_list_items_keep_their_own_kind_and_are_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = {"metadata": {"name": "n2"}, "spec": {"unschedulable": "yes"}}
    code, _, err = run_docs(tmp_path, capsys, [{"kind": "NodeList", "apiVersion": "v1", "items": [NODE, bad]}])
    assert code == 2
    assert "in.yaml, document 1, items[1] (Node n2): spec.unschedulable: json: cannot unmarshal string" in err
    code, _, err = run_docs(tmp_path, capsys, [{"kind": "NodeList", "apiVersion": "apps/v1", "items": [bad]}])
    assert code == 2 and 'no matches for kind "Node" in version "apps/v1"' in err


@pytest.mark.parametrize(
    "inner",
    [
        pytest.param({"apiVersion": "v1", "kind": "List", "items": [NODE]}, id="List"),
        pytest.param({"apiVersion": "v1", "kind": "List"}, id="List-without-items"),
        pytest.param({"apiVersion": "v1", "kind": "NodeList", "items": [NODE]}, id="NodeList"),
    ],
)
def test_a_list_inside_a_list(tmp_path: Path, capsys: pytest.CaptureFixture[str], inner: dict[str, Any]) -> None:
    """kubectl apply refuses a nested List (`*unstructured.Unstructured is not a list`), so kubesched does too,
    saying so instead of calling "List" an unknown kind while listing it as supported."""
    code, out, err = run_docs(
        tmp_path, capsys, [{"apiVersion": "v1", "kind": "List", "items": [pending("a", "1"), inner]}]
    )
    assert code == 2 and out == ""
    assert err == (
        f"kubesched: {tmp_path / 'in.yaml'}, document 1, items[1]: a {inner['kind']} inside a List is not supported "
        "(kubectl apply refuses it too): give its items in the outer List's items\n"
    )


def test_a_scenario_step_cannot_create_a_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    step = {"at": "1s", "create": [{"apiVersion": "v1", "kind": "List", "items": [pending("a", "1")]}]}
    scenario = {"apiVersion": "kubesched.io/v1alpha1", "kind": "Scenario", "metadata": {"name": "s"}, "steps": [step]}
    code, _, err = run_docs(tmp_path, capsys, [NODE, scenario])
    assert code == 2
    assert err == (
        f"kubesched: {tmp_path / 'in.yaml'}, document 2, steps[0].create[0]: kind: a List is not an object: "
        "give its items one by one\n"
    )


# A Helm chart given where its rendered manifests belong.

TEMPLATE = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
spec:
  replicas: {{ .Values.replicas }}
"""


def chart(root: Path) -> Path:
    """A chart as `helm create` lays one out: Chart.yaml, values.yaml and templates."""
    (root / "templates").mkdir(parents=True)
    (root / "Chart.yaml").write_text("apiVersion: v2\nname: web\nversion: 0.1.0\n")
    (root / "values.yaml").write_text("replicas: 2\n")
    (root / "templates" / "deployment.yaml").write_text(TEMPLATE)
    (root / "templates" / "_helpers.tpl").write_text('{{- define "web.name" -}}web{{- end }}\n')
    return root


def test_a_chart_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    web = chart(tmp_path / "web")
    render = f"run `kubesched simulate <(helm template {web})`"
    nodes = write(tmp_path, [NODE])
    for args in ([str(web)], [str(nodes), str(web)], [str(web / "Chart.yaml")]):
        code, out, err = simulate(capsys, *args)
        assert code == 2 and out == ""
        assert err == f"kubesched: {web}: looks like a Helm chart ({web / 'Chart.yaml'}): {render}\n"
    # A chart among other manifests (a subchart under charts/) is named by its own folder.
    sub = chart(tmp_path / "deploy" / "charts" / "db")
    (tmp_path / "deploy" / "cluster.yaml").write_text(yaml.safe_dump(NODE))
    code, _, err = simulate(capsys, str(tmp_path / "deploy"))
    assert code == 2
    assert err == f"kubesched: {sub}: looks like a Helm chart ({sub / 'Chart.yaml'}): " + (
        f"run `kubesched simulate <(helm template {sub})`\n"
    )


def test_a_chart_template(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    web = chart(tmp_path / "web")
    template = web / "templates" / "deployment.yaml"
    for path in (template, web / "templates"):
        code, _, err = simulate(capsys, str(path))
        assert code == 2
        assert err == (
            f'kubesched: {template}: looks like a Helm chart template ("{{{{" on line 4), not a manifest: '
            f"run `kubesched simulate <(helm template {web})`\n"
        )
    # From standard input there is no folder to name; a template that parses but has no kind is caught too.
    monkeypatch.setattr("sys.stdin", io.StringIO('{{- include "web.labels" . }}\n---\nname: "{{ .Values.x }}"\n'))
    code, _, err = simulate(capsys, "-")
    assert code == 2
    assert err == (
        'kubesched: <stdin>: looks like a Helm chart template ("{{" on line 1), not a manifest: '
        "run `kubesched simulate <(helm template CHART)`\n"
    )


def test_prometheus_templates_are_no_helm_chart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`{{ $labels.x }}` in a ConfigMap of alerting rules is data: it loads, and a real mistake keeps its message."""
    rules = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "rules"},
        "data": {"alerts.yaml": "summary: '{{ $labels.instance }} is down ({{ $value }})'"},
    }
    code, _, err = run_docs(tmp_path, capsys, [NODE, rules])
    assert code == 0, err
    f = write(tmp_path, [NODE, rules])
    f.write_text(f.read_text() + "---\nkind: [\n")
    code, _, err = simulate(capsys, str(f))
    assert code == 2 and "invalid YAML" in err and "Helm" not in err


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(
        st.sampled_from(
            [
                "apiVersion: v1",
                "kind: Pod",
                "metadata:",
                "  name: {{ .Release.Name }}",
                '  labels: {{- include "labels" . | nindent 4 }}',
                "{{- if .Values.enabled }}",
                "{{- end }}",
                "spec: {{ toYaml .Values.spec }}",
                "  containers: []",
                "---",
                "# {{ $labels.x }} in a comment",
            ]
        ),
        min_size=1,
        max_size=12,
    )
)
def test_templates_load_or_say_helm(lines: list[str]) -> None:
    """Whatever a template's lines, loading it either works or names the first Helm action's line, in one line."""
    text = "\n".join(lines) + "\n"
    loaded = LoadedInput()
    try:
        add_text(loaded, "t.yaml", text)
    except LoadError as err:
        message = str(err)
        assert "\n" not in message
        if "Helm" in message:
            first = next(i for i, line in enumerate(lines, 1) if "{{" in line and "$labels" not in line)
            assert f'("{{{{" on line {first})' in message, message


@pytest.mark.parametrize("text", ["", "# nothing here\n", "---\n---\n# x\n...\n", "null\n"])
def test_empty_input_warns(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> None:
    f = tmp_path / "in.yaml"
    f.write_text(text)
    other = tmp_path / "other.yaml"
    other.write_text("")
    code, out, err = simulate(capsys, str(f), str(other))
    assert code == 0
    warning = f"no nodes or pods found in {f}, {other}: nothing to schedule"
    doc = json.loads(out)
    assert doc.pop("summary")["pods"]["total"] == 0
    assert doc == {"pods": [], "nodes": [], "events": [], "endTime": 0.0, "warnings": [warning]}
    assert err == f"kubesched: warning: {warning}\n"


def test_empty_directory_and_other_kinds_warn(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = simulate(capsys, str(empty))
    assert code == 0 and f"no nodes or pods found: no .yaml, .yml, .json file in {empty}" in err
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}
    code, _, err = run_docs(tmp_path, capsys, [ns, klass("hi", 5)])
    assert code == 0 and "no nodes or pods found in" in err
    # Pods and no nodes, or a workload alone, is a normal (Unschedulable) result: no warning.
    code, out, err = run_docs(tmp_path, capsys, [pending("a", "1")])
    assert code == 0 and err == "" and json.loads(out)["pods"][0]["result"] == "Unschedulable"


# Lone surrogates. A JSON `\ud800` escape with no partner is a code point no UTF-8 output can carry: Python's decoder
# keeps it, Go's (and so kube-apiserver, which was asked) stores U+FFFD instead, and go-yaml refuses the escape.

SURROGATE_NOTE = "lone \\ud800, low \\udc00x, two highs \\ud800\\ud800, a pair \\ud83d\\ude00"


def surrogate_input(tmp_path: Path, label: str = "web") -> Path:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"app": "LABEL"}, "annotations": {"note": "NOTE"}},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": [NODE, pod]})
    f = tmp_path / "in.json"
    f.write_text(text.replace("LABEL", label).replace("NOTE", SURROGATE_NOTE))
    return f


def test_lone_surrogate_escapes_are_replacement_characters(tmp_path: Path) -> None:
    from kubesched.simulator.load import load_manifests

    loaded = load_manifests([str(surrogate_input(tmp_path))])
    pod = next(so.obj for so in loaded.objects if so.obj["kind"] == "Pod")
    note = pod["metadata"]["annotations"]["note"]
    assert note == "lone \ufffd, low \ufffdx, two highs \ufffd\ufffd, a pair \U0001f600"


@pytest.mark.parametrize(
    "flags",
    [["--output", "json"], ["--output", "jsonl"], ["--output", "table"], ["--report", "REPORT"]],
    ids=["json", "jsonl", "table", "report"],
)
def test_lone_surrogates_in_every_output(tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str]) -> None:
    """Accepted in an annotation and printed wherever output goes; in a label, the API server's refusal, which
    shows the value as U+FFFD."""
    flags = [str(tmp_path / "r.html") if f == "REPORT" else f for f in flags]
    code = main(["simulate", str(surrogate_input(tmp_path)), *flags])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert out.out and "internal error" not in out.err
    code = main(["simulate", str(surrogate_input(tmp_path, label="\\udfff")), *flags])
    out = capsys.readouterr()
    assert code == 2 and out.out == ""
    assert 'items[1] (Pod default/p): metadata.labels: Invalid value: "\ufffd": a valid label must' in out.err


def test_surrogates_turned_alike_are_a_duplicate_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "in.json"
    f.write_text('{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n", "\\ud800": 1, "\\udc00": 2}}')
    code, _, err = simulate(capsys, str(f))
    assert code == 2 and 'duplicate field "\ufffd"' in err


def test_surrogate_escape_in_yaml_is_refused_as_go_yaml_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "in.yaml"
    f.write_text('apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  annotations: {a: "\\ud83d\\ude00"}\n')
    code, out, err = simulate(capsys, str(f))
    assert code == 2 and out == ""
    assert err == f"kubesched: {f}: invalid YAML: line 5, column 23: found invalid Unicode character escape code\n"


def test_python_api_objects_and_text_with_surrogates() -> None:
    import kubesched
    from kubesched.simulator.api import InputError

    annotated = {**NODE, "metadata": {"name": "n1", "annotations": {"note": "\ud800"}}}
    sim = kubesched.simulate([annotated])
    assert sim.to_json().encode()
    labelled = {**NODE, "metadata": {"name": "n1", "labels": {"x": "\udc00"}}}
    with pytest.raises(InputError, match='metadata.labels: Invalid value: "\ufffd"'):
        kubesched.simulate([labelled])
    with pytest.raises(InputError, match='metadata.labels: Invalid value: "\ufffd"'):
        kubesched.simulate(text=json.dumps(labelled, ensure_ascii=False))
