"""Property-based tests of `kubesched simulate` (issue 19, part 2).

1. Anything in, a result or one clear exit-2 line out: valid clusters, configurations,
   scenarios and flags are generated, then mutated (wrong types, bad quantities,
   unknown enum values and fields, missing names, duplicates, aliases, garbage bytes);
   every run must end, within seconds, in a JSON result or a single `kubesched: ...`
   line naming the file, never a traceback or an internal error.
2. Invariants on random valid clusters: every pending pod is reported once, and the
   placements respect allocatable, host ports, node selectors, required node affinity
   and taints.

Profiles (the root conftest.py): `ci` (the default, about a minute in all) and `thorough` (HYPOTHESIS_PROFILE=thorough).
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.cli import main
from kubesched_testing.paths import object_paths

RUN_LIMIT_S = 10.0
ZONES = ("a", "b", "c")
DISKS = ("ssd", "hdd")
TAINT_KEYS = ("dedicated", "gpu")

# Building blocks of valid clusters.


@st.composite
def nodes(draw: st.DrawFn) -> list[dict[str, Any]]:
    out = []
    for i in range(draw(st.integers(1, 5))):
        labels = {"topology.kubernetes.io/zone": draw(st.sampled_from(ZONES)), "disk": draw(st.sampled_from(DISKS))}
        spec: dict[str, Any] = {}
        if draw(st.booleans()) and draw(st.booleans()):
            spec["taints"] = [
                {
                    "key": draw(st.sampled_from(TAINT_KEYS)),
                    "value": "x",
                    "effect": draw(st.sampled_from(("NoSchedule", "NoExecute", "PreferNoSchedule"))),
                }
            ]
        alloc = {
            "cpu": f"{draw(st.integers(1, 8))}",
            "memory": f"{draw(st.integers(1, 16))}Gi",
            "pods": str(draw(st.integers(1, 6))),
        }
        if draw(st.booleans()):
            alloc["example.com/gpu"] = str(draw(st.integers(0, 2)))
        out.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": f"node-{i}", "labels": labels},
                "spec": spec,
                "status": {"allocatable": alloc},
            }
        )
    return out


@st.composite
def pods(draw: st.DrawFn) -> list[dict[str, Any]]:
    out = []
    for i in range(draw(st.integers(1, 12))):
        resources: dict[str, Any] = {}
        cpu, mem = f"{draw(st.integers(0, 3000))}m", f"{draw(st.integers(0, 4096))}Mi"
        kind = draw(st.sampled_from(("requests", "limits", "both", "none")))
        if kind in ("requests", "both"):
            resources["requests"] = {"cpu": cpu, "memory": mem}
        if kind in ("limits", "both"):
            resources["limits"] = {"cpu": cpu, "memory": mem}
        if draw(st.booleans()) and draw(st.booleans()):
            gpus = str(draw(st.integers(1, 2)))
            resources.setdefault("limits", {})["example.com/gpu"] = gpus
            if "requests" in resources:
                resources["requests"]["example.com/gpu"] = gpus
        container: dict[str, Any] = {"name": "c", "image": "busybox", "resources": resources}
        if draw(st.booleans()) and draw(st.booleans()):
            container["ports"] = [{"containerPort": 80, "hostPort": draw(st.sampled_from((8080, 9090)))}]
        spec: dict[str, Any] = {"containers": [container]}
        if draw(st.booleans()):
            spec["nodeSelector"] = {"disk": draw(st.sampled_from(DISKS))}
        if draw(st.booleans()):
            zones = draw(st.lists(st.sampled_from(ZONES), min_size=1, max_size=2, unique=True))
            term = {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": zones}]}
            spec["affinity"] = {
                "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
            }
        if draw(st.booleans()):
            spec["tolerations"] = [{"key": draw(st.sampled_from(TAINT_KEYS)), "operator": "Exists"}]
        out.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"pod-{i}", "labels": {"app": "web"}},
                "spec": spec,
            }
        )
    return out


EXTRAS = [
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000},
    {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "local"},
        "provisioner": "kubernetes.io/no-provisioner",
        "volumeBindingMode": "WaitForFirstConsumer",
    },
    {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "pv-1"},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "local",
            "hostPath": {"path": "/d"},
        },
    },
    {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "local",
            "resources": {"requests": {"storage": "1Gi"}},
        },
    },
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}},
    {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "pdb"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
    },
    {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": 50,
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {"score": {"enabled": [{"name": "NodeResourcesFit", "weight": 2}]}},
            }
        ],
    },
    {
        "apiVersion": "kubesched.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "s"},
        "steps": [
            {"at": "30s", "update": [{"kind": "Node", "name": "node-0", "patch": {"spec": {"unschedulable": True}}}]},
            {
                "at": "1m",
                "create": [
                    {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "metadata": {"name": "late"},
                        "spec": {"containers": [{"name": "c"}]},
                    }
                ],
            },
        ],
    },
]

# Mutations.

HOSTILE_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(
        (
            "-1",
            "1e5000",
            "1e999999999",
            "8Ei",
            "1.2.3",
            "1K",
            "0x10",
            "yes",
            "NoSchedul",
            "Equals",
            "",
            " ",
            "ReadWriteSometimes",
            "Later",
            "a/b/c",
            "-a",
            "x" * 300,
            "1e-5000",
            "100000h",
            ".nan",
            "-1s",
        )
    ),
    st.lists(st.integers(0, 3), max_size=3),
    st.dictionaries(st.sampled_from(("a", "key", "operator", "name")), st.integers(0, 3), max_size=2),
)


def _set(root: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    parent = root
    for p in path[:-1]:
        parent = parent[p]
    parent[path[-1]] = value
    return root


def mutate(draw: Callable[[st.SearchStrategy[Any]], Any], docs: list[Any]) -> list[Any]:
    docs = copy.deepcopy(docs)
    for _ in range(draw(st.integers(1, 3))):
        what = draw(st.sampled_from(("value", "unknown field", "delete", "duplicate", "name", "wrong kind")))
        i = draw(st.integers(0, len(docs) - 1))
        if what == "duplicate":
            docs.append(copy.deepcopy(docs[i]))
            continue
        if what in ("wrong kind", "name") and not isinstance(docs[i], dict):
            continue  # an earlier mutation replaced the whole document
        if what == "wrong kind":
            docs[i] = _set(docs[i], ("kind",), draw(st.sampled_from(("Gizmo", "Pod", "Node", "List", 5, None))))
            continue
        if what == "name":
            docs[i] = _set(
                docs[i], ("metadata",), draw(st.sampled_from(({}, {"name": ""}, {"generateName": "g-"}, None, "x")))
            )
            continue
        path = draw(st.sampled_from(object_paths(docs[i])))
        if what == "value":
            docs[i] = _set(docs[i], path, draw(HOSTILE_VALUES))
        elif what == "unknown field":
            target = docs[i]
            for p in path:
                target = target[p]
            if isinstance(target, dict):
                target[draw(st.sampled_from(("reqeusts", "nodeselector", "x", "Effect")))] = draw(HOSTILE_VALUES)
        elif path:
            parent = docs[i]
            for p in path[:-1]:
                parent = parent[p]
            del parent[path[-1]]
    return docs


def mangle_text(draw: Callable[[st.SearchStrategy[Any]], Any], text: str) -> bytes:
    """Byte-level damage: garbage inserted, a slice cut or repeated, aliases and anchors sprinkled."""
    data = text.encode()
    how = draw(st.sampled_from(("insert", "cut", "repeat", "anchor", "none")))
    at = draw(st.integers(0, len(data)))
    if how == "insert":
        data = data[:at] + draw(st.binary(min_size=1, max_size=20)) + data[at:]
    elif how == "cut":
        data = data[:at] + data[at + draw(st.integers(1, 40)) :]
    elif how == "repeat":
        data = data[:at] + data[at : at + 60] * draw(st.integers(2, 4)) + data[at:]
    elif how == "anchor":
        data = b"x: &a [1, 2]\ny: &b [*a, *a, *a]\n" + data[:at] + b" *b " + data[at:]
    return data


FLAGS = st.lists(
    st.sampled_from(
        (
            ["--seed", "3"],
            ["--seed", "x"],
            ["--until", "10m"],
            ["--until", "-1"],
            ["--until", "1e999h"],
            ["--bind-latency", "200ms"],
            ["--bind-latency", "nan"],
            ["--record", "none"],
            ["--record", "some"],
            ["--output", "table"],
            ["--output", "xml"],
            ["--feature-gates", "Foo=true"],
            ["--algorithm-provider", "Nope"],
            ["-v", "2"],
            ["-v", "x"],
        )
    ),
    max_size=3,
)


def run_cli(path: Path, flags: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str, float]:
    start = time.monotonic()
    try:
        code = main(["simulate", str(path), "--output", "json", *flags])
    except SystemExit as exit_:  # argparse
        code = int(exit_.code or 0)
    elapsed = time.monotonic() - start
    out = capsys.readouterr()
    return code, out.out, out.err, elapsed


def assert_clear_outcome(code: int, out: str, err: str, elapsed: float, path: Path) -> None:
    assert elapsed < RUN_LIMIT_S, f"took {elapsed:.1f}s"
    assert "Traceback" not in err and "internal error" not in err, err
    assert code in (0, 2), (code, err)
    if code == 2:
        assert out == ""
        lines = [line for line in err.splitlines() if line.strip()]
        usage = err.startswith("usage: ")  # argparse's own answer to a bad flag
        assert usage or (len(lines) == 1 and lines[0].startswith("kubesched: ")), err
        assert usage or path.name in err or "--" in err, err


@given(data=st.data())
def test_hostile_input_ends_in_a_result_or_a_clear_error(
    tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str], data: st.DataObject
) -> None:
    docs: list[Any] = [*data.draw(nodes()), *data.draw(pods())]
    docs += data.draw(st.lists(st.sampled_from(EXTRAS), max_size=3, unique_by=lambda d: d["kind"]))
    docs = mutate(data.draw, docs)
    text = yaml.safe_dump_all(docs, sort_keys=False)
    path = tmp_path_factory.mktemp("hostile") / "in.yaml"
    path.write_bytes(mangle_text(data.draw, text) if data.draw(st.booleans()) else text.encode())
    flags = [f for pair in data.draw(FLAGS) for f in pair]
    code, out, err, elapsed = run_cli(path, flags, capsys)
    assert_clear_outcome(code, out, err, elapsed, path)
    outputs = [flags[i + 1] for i, f in enumerate(flags) if f == "--output"]
    if code == 0 and outputs[-1:] != ["table"]:
        json.loads(out)


# Invariants on valid clusters.


def _amount(q: str) -> float:
    from kubesched.api.quantity import parse_quantity

    return float(parse_quantity(q))


def _requests(pod: dict[str, Any]) -> dict[str, float]:
    res = pod["spec"]["containers"][0]["resources"]
    merged = {**res.get("limits", {}), **res.get("requests", {})}  # the API server copies missing requests
    return {k: _amount(v) for k, v in merged.items()}


def _tolerated(pod: dict[str, Any], taint: dict[str, Any]) -> bool:
    return taint["effect"] == "PreferNoSchedule" or any(
        t["key"] == taint["key"] for t in pod["spec"].get("tolerations", ())
    )


@given(cluster_nodes=nodes(), cluster_pods=pods(), seed=st.integers(0, 5))
def test_valid_clusters_keep_the_invariants(
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
    cluster_nodes: list[dict[str, Any]],
    cluster_pods: list[dict[str, Any]],
    seed: int,
) -> None:
    path = tmp_path_factory.mktemp("valid") / "in.yaml"
    path.write_text(yaml.safe_dump_all([*cluster_nodes, *cluster_pods]))
    code, out, err, elapsed = run_cli(path, ["--seed", str(seed)], capsys)
    assert code == 0 and elapsed < RUN_LIMIT_S, err
    doc = json.loads(out)
    reported = [p["name"] for p in doc["pods"]]
    assert sorted(reported) == sorted(p["metadata"]["name"] for p in cluster_pods), "each pending pod reported once"
    by_name = {p["metadata"]["name"]: p for p in cluster_pods}
    placed: dict[str, list[dict[str, Any]]] = {n["metadata"]["name"]: [] for n in cluster_nodes}
    for p in doc["pods"]:
        assert (p["result"] == "Scheduled") == (p["node"] is not None), p
        if p["node"] is not None:
            placed[p["node"]].append(by_name[p["name"]])
    for n in cluster_nodes:
        name, labels = n["metadata"]["name"], n["metadata"]["labels"]
        on_node = placed[name]
        alloc = {k: _amount(v) for k, v in n["status"]["allocatable"].items()}
        assert len(on_node) <= alloc["pods"]
        for resource in ("cpu", "memory", "example.com/gpu"):
            used = sum(_requests(p).get(resource, 0) for p in on_node)
            assert used <= alloc.get(resource, 0) or used == 0, (name, resource, used, alloc)
        ports = [port["hostPort"] for p in on_node for port in p["spec"]["containers"][0].get("ports", ())]
        assert len(ports) == len(set(ports)), ("host port conflict", name, ports)
        for p in on_node:
            assert all(labels.get(k) == v for k, v in p["spec"].get("nodeSelector", {}).items())
            affinity = p["spec"].get("affinity")
            if affinity:
                term = affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][
                    0
                ]
                expr = term["matchExpressions"][0]
                assert labels.get(expr["key"]) in expr["values"]
            for taint in n["spec"].get("taints", ()):
                assert _tolerated(p, taint), (name, taint, p["metadata"]["name"])


# Any code point in labels, annotations and names, lone surrogates included, through every output.

SURROGATES = st.sampled_from(["\ud800", "\udbff", "\udc00", "\udfff", "\ud83d\ude00", "\ud800\ud800"])
ANY_TEXT = st.lists(st.characters(exclude_categories=()) | SURROGATES, max_size=12).map("".join)
LABEL_VALUES = ANY_TEXT | st.from_regex(r"[a-z0-9]([a-z0-9.-]{0,8}[a-z0-9])?", fullmatch=True)
OUTPUTS = st.sampled_from(
    (
        ["--output", "json"],
        ["--output", "jsonl"],
        ["--output", "table"],
        ["--output", "table", "--explain", "default/stuck"],
        ["--output", "json", "--record", "none", "--report", "REPORT"],
    )
)


@settings(max_examples=60)
@given(
    label=LABEL_VALUES,
    annotation=ANY_TEXT,
    key=st.just("note") | ANY_TEXT,
    name=st.just("p") | ANY_TEXT,
    image=ANY_TEXT,
    flags=OUTPUTS,
)
def test_any_code_point_prints_in_every_output(
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
    label: str,
    annotation: str,
    key: str,
    name: str,
    image: str,
    flags: list[str],
) -> None:
    """JSON in (a lone surrogate travels as its escape), a result or one clear line out; nothing written fails."""
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1", "labels": {"app": label}, "annotations": {key or "k": annotation}},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}},
    }
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": label}, "annotations": {"a": annotation}},
        "spec": {"containers": [{"name": "c", "image": image or "i"}], "nodeSelector": {"app": label}},
    }
    stuck = {**pod, "metadata": {"name": "stuck", "namespace": "default"}}
    stuck["spec"] = {**pod["spec"], "nodeSelector": {"app": label + "x"}}
    folder = tmp_path_factory.mktemp("codepoints")
    path = folder / "in.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [node, pod, stuck]}))
    report = folder / "report.html"
    flags = [str(report) if f == "REPORT" else f for f in flags]
    code, out, err, elapsed = run_cli(path, flags, capsys)
    assert_clear_outcome(code, out, err, elapsed, path)
    out.encode("utf-8")
    err.encode("utf-8")
    if code == 0 and "table" not in flags:
        for line in out.splitlines() if "jsonl" in flags else [out]:
            json.loads(line)
    if code == 0 and "--report" in flags:
        report.read_text(encoding="utf-8")


# DRA CEL selectors of any shape: accepted, or refused naming the file, the object and the field.

CEL_WRAPPERS = [("(", ")"), ("!", ""), ("[", "][0]"), ("{'k': ", "}['k']"), ("[1].all(x, ", ")"), ("true ? ", ":false")]
CEL_TAILS = [" && true", " || false", ".lowerAscii()", " + 1", " == true"]


@st.composite
def selectors(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(("true", "device.driver == 'gpu.example.com'", "1")) | ANY_TEXT.map(repr))
    for _ in range(draw(st.integers(1, 3))):
        n = draw(st.integers(1, 1200))
        if draw(st.booleans()):
            text += draw(st.sampled_from(CEL_TAILS)) * n
        else:
            prefix, suffix = draw(st.sampled_from(CEL_WRAPPERS))
            text = prefix * n + text + suffix * n
    return text


@settings(max_examples=30)
@given(expression=selectors(), flags=OUTPUTS)
def test_any_selector_is_accepted_or_refused_by_field(
    tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str], expression: str, flags: list[str]
) -> None:
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}},
    }
    klass = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu"},
        "spec": {"selectors": [{"cel": {"expression": expression}}]},
    }
    folder = tmp_path_factory.mktemp("selectors")
    path = folder / "in.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [node, klass]}))
    flags = [str(folder / "report.html") if f == "REPORT" else f for f in flags]
    code, out, err, elapsed = run_cli(path, [f for f in flags if f != "--explain" and f != "default/stuck"], capsys)
    assert elapsed < RUN_LIMIT_S, f"took {elapsed:.1f}s"
    assert "Traceback" not in err and "internal error" not in err, err
    assert code in (0, 2), (code, err)
    if code == 2:
        first = err.splitlines()[0]
        assert first.startswith(f"kubesched: {path}, document 1, items[1] (DeviceClass gpu): "), err
        assert "spec.selectors[0].cel.expression: " in first, err
