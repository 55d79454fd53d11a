"""Bounded work: the budget of pods, objects and input a simulation may take, refused before anything is built.

The headline case is a six-kilobyte file of twenty Deployments asking for 100,000 replicas
each, which used to run until memory ran out; it must end in one line and exit 2 within a
small, measured amount of memory.
"""

from __future__ import annotations

import io
import json
import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

import kubesched
from kubesched.apiserver.documents import MAX_OBJECT_NODES, DocumentError, parse_documents
from kubesched.cli import main
from kubesched.simulator.api import InputError
from kubesched.simulator.budget import DEFAULT_MAX_PODS, Budget
from kubesched.simulator.sweep import sweep
from kubesched.ui.server import create_app
from kubesched.ui.workspace import Workspace

ROOT = Path(__file__).resolve().parents[1]
TWO_GB_KB = 2 * 1024 * 1024  # ru_maxrss is in kilobytes on Linux


def node(name: str, cpu: str = "64") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": cpu, "memory": "256Gi", "pods": "1000"}},
    }


def pod(name: str, owner: tuple[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if owner is not None:
        meta["labels"] = {"app": owner[1]}
        meta["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1], "uid": f"uid-{owner[1]}", "controller": True}
        ]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": [{"name": "c", "image": "x"}]}}


def _template(app: str) -> dict[str, Any]:
    return {"metadata": {"labels": {"app": app}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}


def workload(kind: str, name: str, count: int | None = None, **spec: Any) -> dict[str, Any]:
    """A workload whose pod count is `count` (replicas, or a Job's parallelism); None leaves the default."""
    body: dict[str, Any] = {"template": _template(name), **spec}
    if kind == "Job":
        body["template"]["spec"]["restartPolicy"] = "Never"
        if count is not None:
            body["parallelism"] = count
    else:
        body["selector"] = {"matchLabels": {"app": name}}
        if count is not None and kind != "DaemonSet":
            body["replicas"] = count
    api = "batch/v1" if kind == "Job" else "v1" if kind == "ReplicationController" else "apps/v1"
    if kind == "ReplicationController":
        body["selector"] = {"app": name}
    return {"apiVersion": api, "kind": kind, "metadata": {"name": name, "namespace": "default"}, "spec": body}


def write(tmp_path: Path, docs: list[Any], name: str = "in.yaml") -> Path:
    f = tmp_path / name
    f.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return f


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main([*args])
    out = capsys.readouterr()
    return code, out.out, out.err


# ---------------------------------------------------------------------- the headline case


def test_twenty_deployments_of_100000_are_refused_in_one_line_and_little_memory(tmp_path: Path) -> None:
    docs = [node("n1")] + [workload("Deployment", f"web-{i}", 100_000) for i in range(20)]
    f = write(tmp_path, docs)
    assert f.stat().st_size < 8_000
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    proc = subprocess.run(
        [sys.executable, "-m", "kubesched", "simulate", "-q", str(f)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    peak = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith(
        "kubesched: 20 workloads would create 2,000,000 pods, over the budget of 1,000,000 (--max-pods)"
    ), proc.stderr
    assert proc.stderr.rstrip().endswith("raise it with --max-pods N")
    assert peak < TWO_GB_KB, f"peak RSS {peak} KB"


# ---------------------------------------------------------------------- pods and objects, on the command line


def _small(tmp_path: Path) -> Path:
    """Seven pods: one listed, and three workloads of two."""
    docs = [
        node("n1"),
        pod("bare"),
        workload("Deployment", "web", 2),
        workload("StatefulSet", "db", 2),
        workload("Job", "batch", 2),
    ]
    return write(tmp_path, docs)


def test_just_under_the_pod_budget_runs_and_one_over_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = str(_small(tmp_path))
    code, out, err = run(capsys, "simulate", f, "--output", "json", "--max-pods", "7")
    assert code == 0, err
    assert len(json.loads(out)["pods"]) == 7
    code, out, err = run(capsys, "simulate", f, "--output", "json", "--max-pods", "6")
    assert code == 2 and out == ""
    assert err == (
        "kubesched: 1 pod and 3 workloads would create 7 pods, over the budget of 6 (--max-pods); "
        "the largest, Deployment default/web, has 2; raise it with --max-pods N\n"
    )


def test_the_object_budget(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Five objects read, six pods and a ReplicaSet made: twelve."""
    f = str(_small(tmp_path))
    code, _, err = run(capsys, "simulate", f, "--output", "json", "--max-objects", "12")
    assert code == 0, err
    code, out, err = run(capsys, "simulate", f, "--output", "json", "--max-objects", "11")
    assert code == 2 and out == ""
    assert "would hold 12 objects (5 read, 7 made by workloads), over the budget of 11 (--max-objects)" in err
    assert err.count("\n") == 1


def test_objects_are_counted_as_they_are_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = write(tmp_path, [pod(f"p{i}") for i in range(50)])
    code, _, err = run(capsys, "simulate", str(f), "--max-objects", "10")
    assert code == 2
    assert "document 11 (Pod default/p10): more than 10 objects in the input" in err, err


def test_daemonsets_count_a_pod_per_node_and_steps_count_what_they_add(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = {
        "apiVersion": "kubesched.io/v1alpha1",
        "kind": "Scenario",
        "steps": [
            {"at": "10s", "create": [node("n4")]},
            {"at": "20s", "update": [{"kind": "Deployment", "name": "web", "patch": {"spec": {"replicas": 5}}}]},
            {"at": "30s", "update": [{"kind": "Deployment", "name": "web", "patch": {"spec": {"replicas": 1}}}]},
        ],
    }
    docs = [node("n1"), node("n2"), node("n3"), workload("DaemonSet", "agent"), workload("Deployment", "web", 2)]
    f = str(write(tmp_path, [*docs, scenario]))
    # 4 nodes (one from a step) x 1 DaemonSet, and the Deployment's 2 scaled up to 5 (down to 1 adds none).
    assert run(capsys, "simulate", f, "--max-pods", "9")[0] == 0
    code, _, err = run(capsys, "simulate", f, "--max-pods", "8")
    assert code == 2 and "2 workloads would create 9 pods" in err, err


def test_a_rollout_counts_a_new_set_of_pods_and_a_cronjob_its_job() -> None:
    new_image = {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "y"}]}}}}
    scenario = {
        "apiVersion": "kubesched.io/v1alpha1",
        "kind": "Scenario",
        "steps": [{"at": "10s", "update": [{"kind": "Deployment", "name": "web", "patch": new_image}]}],
    }
    rollout = [node("n1"), workload("Deployment", "web", 4), scenario]
    assert len(kubesched.simulate(rollout, record=False, max_pods=8).pods) == 8  # four old, four new
    with pytest.raises(InputError, match="1 workload would create 8 pods, over the budget of 7"):
        kubesched.simulate(rollout, record=False, max_pods=7)
    cron_job = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "cj", "namespace": "default"},
        "spec": {
            "schedule": "* * * * *",
            "jobTemplate": {"spec": {"parallelism": 3, "template": workload("Job", "j")["spec"]["template"]}},
        },
    }
    # two objects read; three pods and the Job made
    assert len(kubesched.simulate([node("n1"), cron_job], record=False, max_pods=3, max_objects=6).pods) == 3
    with pytest.raises(InputError, match=r"would hold 6 objects \(2 read, 4 made by workloads\)"):
        kubesched.simulate([node("n1"), cron_job], record=False, max_objects=5)


def test_pods_a_workload_owns_count_toward_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A snapshot holds a Deployment, its ReplicaSet and their pods: three pods, not nine."""
    rs = workload("ReplicaSet", "web-abc", 3)
    rs["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "uid-web", "controller": True}
    ]
    rs["spec"]["template"] = _template("web")
    rs["spec"]["selector"] = {"matchLabels": {"app": "web"}}
    pods = [pod(f"web-abc-{i}", ("ReplicaSet", "web-abc")) for i in range(3)]
    for p in pods:
        p["metadata"]["labels"] = {"app": "web"}
        p["spec"]["nodeName"] = "n1"
    f = str(write(tmp_path, [node("n1"), workload("Deployment", "web", 3), rs, *pods]))
    code, _, err = run(capsys, "simulate", f, "--max-pods", "3")
    assert code == 0, err
    code, _, err = run(capsys, "simulate", f, "--max-pods", "2")
    assert code == 2 and "1 workload would create 3 pods" in err, err


def test_flags_refuse_what_is_not_a_count(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["simulate", "x.yaml", "--max-pods", "-1"])
    assert exit_.value.code == 2
    assert "--max-pods: -1: expected a whole number, 0 or more" in capsys.readouterr().err


# ---------------------------------------------------------------------- input bytes and YAML structure


def test_stdin_over_its_byte_budget(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    text = yaml.safe_dump_all([pod(f"p{i}") for i in range(20)]).encode()
    assert len(text) > 1000
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text)))
    code, out, err = run(capsys, "simulate", "-", "--max-input-bytes", "1000")
    assert code == 2 and out == ""
    assert err == (
        "kubesched: <stdin>: over the input budget of 1,000 bytes (--max-input-bytes); "
        "raise it with --max-input-bytes N\n"
    )


def test_a_file_and_a_pipe_over_the_byte_budget(tmp_path: Path) -> None:
    """A regular file is refused on its size; a pipe (50 MB of it) is read to one byte past the budget."""
    big = write(tmp_path, [pod(f"p{i}") for i in range(20)], "big.yaml")
    small = write(tmp_path, [pod("p")], "small.yaml")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    command = f'{sys.executable} -m kubesched simulate --max-input-bytes 1000 "$1" <(yes "# filler" | head -c 50000000)'
    for first, culprit in ((big, str(big)), (small, "/dev/fd/")):
        proc = subprocess.run(
            ["bash", "-c", command, "bash", str(first)], capture_output=True, text=True, timeout=120, env=env
        )
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith(f"kubesched: {culprit}"), proc.stderr
        assert "over the input budget of 1,000 bytes (--max-input-bytes)" in proc.stderr
        assert proc.stderr.count("\n") == 1, proc.stderr


def _measured(tmp_path: Path, text: str) -> tuple[subprocess.CompletedProcess[str], int]:
    f = tmp_path / "in.yaml"
    f.write_text(text)
    proc = subprocess.run(
        [sys.executable, "-m", "kubesched", "simulate", "-q", str(f)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    return proc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss


def test_billion_laughs_is_refused_in_little_memory(tmp_path: Path) -> None:
    """Nine levels of ten aliases each (a billion copies of `lol`): refused at the first million copied."""
    lines = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for p, c in zip("abcdefghi", "bcdefghij", strict=True):
        lines.append(f"{c}: &{c} [{', '.join([f'*{p}'] * 10)}]")
    proc, peak = _measured(tmp_path, "\n".join(lines) + "\n")
    assert proc.returncode == 2, proc.stderr
    assert "document contains excessive aliasing" in proc.stderr
    assert peak < TWO_GB_KB


@pytest.mark.parametrize("flow", ["yaml", "json"])
def test_millions_of_empty_mappings_in_one_object_are_refused(tmp_path: Path, flow: str) -> None:
    """A ConfigMap of two million `{}` (6 MB): over the values one object may hold, whether YAML or JSON."""
    many = ",".join(["{}"] * 2_000_000)
    if flow == "json":
        text = '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"x": [' + many + "]}}"
    else:
        text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  x: [" + many + "]\n"
    proc, peak = _measured(tmp_path, text)
    assert proc.returncode == 2, proc.stderr
    assert f"an object of more than {MAX_OBJECT_NODES:,} YAML values" in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 1
    assert peak < TWO_GB_KB


def test_values_per_input_follow_the_byte_budget() -> None:
    """One value per 8 bytes of the budget: a stream of small documents stops at the first value over."""
    text = "---\n{}\n" * 200_000
    budget = Budget(max_input_bytes=800_000)
    assert budget.max_input_nodes == 100_000
    with pytest.raises(DocumentError, match=r"more than 100,000 YAML values .* in one input.*--max-input-bytes"):
        parse_documents(text, max_nodes=budget.max_input_nodes)
    assert len(parse_documents(text, max_nodes=Budget(max_input_bytes=1_600_000).max_input_nodes)) == 200_000


_trees = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text("ab", max_size=2),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text("xyz", min_size=1), children, max_size=4),
    max_leaves=40,
)


def _values(tree: Any) -> int:
    """YAML values in a tree, as the parser counts them: every mapping, list, key and scalar."""
    if isinstance(tree, dict):
        return 1 + sum(1 + _values(v) for v in tree.values())
    if isinstance(tree, list):
        return 1 + sum(_values(v) for v in tree)
    return 1


@settings(max_examples=200, deadline=None)
@given(tree=_trees, limit=st.integers(1, 60), style=st.sampled_from(["block", "flow", "json"]))
def test_refused_exactly_when_the_values_are_over_the_limit(tree: Any, limit: int, style: str) -> None:
    if style == "json":
        text = json.dumps(tree)
    else:
        text = yaml.safe_dump(tree, default_flow_style=style == "flow")
    if _values(tree) > limit:
        with pytest.raises(DocumentError, match=f"more than {limit:,} YAML values"):
            parse_documents(text, max_nodes=limit)
    else:
        assert parse_documents(text, max_nodes=limit) == [tree]


def test_list_items_are_objects_of_their_own() -> None:
    """A `kubectl get -o yaml` List of many items is many objects: the per-object bound is per item."""
    item = "  - {" + ", ".join(f"k{i}: v" for i in range(50)) + "}\n"
    text = "apiVersion: v1\nkind: List\nitems:\n" + item * 25_000  # 2.5 million values, 101 an item
    docs = parse_documents(text, max_nodes=10_000_000)
    assert len(docs[0]["items"]) == 25_000


# ---------------------------------------------------------------------- the Python API


def test_the_python_api_takes_the_budget(tmp_path: Path) -> None:
    f = _small(tmp_path)
    assert len(kubesched.simulate(f, max_pods=7).pods) == 7
    with pytest.raises(InputError, match=r"would create 7 pods, over the budget of 6 \(--max-pods\)"):
        kubesched.simulate(f, max_pods=6)
    with pytest.raises(InputError, match="max_objects: expected a whole number, 0 or more, got -1"):
        kubesched.simulate(f, max_objects=-1)
    with pytest.raises(InputError, match=r"<text>: over the input budget of 100 bytes"):
        kubesched.simulate(text=yaml.safe_dump(pod("p")), max_input_bytes=100)


# ---------------------------------------------------------------------- whatif and sweep


def test_whatif_and_sweep_keep_the_budget(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = str(_small(tmp_path))
    (tmp_path / "template.yaml").write_text(yaml.safe_dump(node("t")))
    capacity = ["whatif", "capacity", f, "--node-template", str(tmp_path / "template.yaml"), "--output", "json"]
    assert run(capsys, *capacity, "--max-pods", "7")[0] == 0
    code, out, err = run(capsys, *capacity, "--max-pods", "6")
    assert code == 2 and out == "" and "over the budget of 6 (--max-pods)" in err, err
    code, _, err = run(capsys, "whatif", "compare", f, "--config", "default", "--config", "default", "--max-pods", "6")
    assert code == 2 and "over the budget of 6 (--max-pods)" in err, err
    spec = tmp_path / "sweep.yaml"
    grid = {"scale": [1, 2], "nodes": [0, 5, 20]}
    spec.write_text(yaml.safe_dump({"base": ["in.yaml"], "template": "template.yaml", "grid": grid}))
    rows = sweep(str(spec), workers=1, budget=Budget(max_pods=10, max_objects=16)).rows
    errors = {(r["scale"], r["nodes"]): r["error"] for r in rows}
    assert errors[(1.0, 0)] is None
    # twice over: 2 bare pods, 3 workloads of 4
    assert "2 pods and 3 workloads would create 14 pods, over the budget of 10 (--max-pods)" in errors[(2.0, 0)]
    # 10 objects read with 5 added nodes, 6 pods and a ReplicaSet made
    assert "would hold 17 objects (10 read, 7 made by workloads), over the budget of 16" in errors[(1.0, 5)]
    # refused before the 20 nodes are made
    assert errors[(1.0, 20)] == (
        "20 added nodes: 25 objects, over the budget of 16 (--max-objects); raise it with --max-objects N"
    )


# ---------------------------------------------------------------------- the UI


def _ui(tmp_path: Path, budget: Budget) -> TestClient:
    f = write(tmp_path, [node("n1"), pod("p1")])
    # on loopback, as `kubesched ui` serves by default
    return TestClient(create_app(Workspace.from_files([str(f)], budget=budget)), base_url="http://127.0.0.1:8080")


def test_ui_body_over_the_budget_is_413_before_and_while_reading(tmp_path: Path) -> None:
    client = _ui(tmp_path, Budget(max_input_bytes=2000))
    big = {"text": yaml.safe_dump(pod("p2")) + "#" * 3000}
    r = client.post("/api/objects", json=big)
    assert r.status_code == 413
    assert "over the input budget of 2,000 bytes" in r.json()["error"]

    def chunks() -> Any:  # no Content-Length: counted as it streams in
        for _ in range(10):
            yield b" " * 500

    r = client.post("/api/objects", content=chunks(), headers={"Content-Type": "application/json"})
    assert r.status_code == 413
    r = client.post("/api/objects", json={"text": yaml.safe_dump(pod("p2"))})
    assert r.status_code == 200, r.text


def test_ui_edit_over_the_budget_is_400_and_changes_nothing(tmp_path: Path) -> None:
    client = _ui(tmp_path, Budget(max_pods=5))
    before = client.get("/api/state").json()["counts"]
    r = client.post("/api/objects", json={"text": yaml.safe_dump(workload("Deployment", "web", 10))})
    assert r.status_code == 400
    assert r.json()["error"].startswith("1 pod and 1 workload would create 11 pods, over the budget of 5 (--max-pods)")
    assert client.get("/api/state").json()["counts"] == before
    r = client.post("/api/objects", json={"text": yaml.safe_dump(workload("Deployment", "web", 4))})
    assert r.status_code == 200, r.text


def test_ui_edit_of_a_configmap_of_a_million_empty_mappings_is_400(tmp_path: Path) -> None:
    client = _ui(tmp_path, Budget())
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  x: [" + ",".join(["{}"] * 1_100_000) + "]\n"
    r = client.post("/api/objects", json={"text": text})
    assert r.status_code == 400
    assert f"an object of more than {MAX_OBJECT_NODES:,} YAML values" in r.json()["error"]


# ---------------------------------------------------------------------- the property


KINDS = ("Deployment", "ReplicaSet", "ReplicationController", "StatefulSet", "Job", "DaemonSet", "Pod")
_workloads = st.lists(
    st.tuples(st.sampled_from(KINDS), st.none() | st.integers(0, 4), st.none() | st.integers(0, 4)),
    max_size=6,
)


def _expected(items: list[tuple[str, int | None, int | None]], nodes: int) -> int:
    """The pods the set expands to, worked out here apart from the code under test."""
    total = 0
    for kind, count, completions in items:
        if kind == "Pod":
            total += 1
        elif kind == "DaemonSet":
            total += nodes
        elif kind == "Job":
            parallelism = 1 if count is None else count
            total += parallelism if completions is None else min(parallelism, completions)
        else:
            total += 1 if count is None else count
    return total


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=_workloads, nodes=st.integers(1, 3), budget=st.integers(0, 20))
def test_refused_exactly_when_the_expanded_pods_are_over_the_budget(
    items: list[tuple[str, int | None, int | None]], nodes: int, budget: int
) -> None:
    objects: list[dict[str, Any]] = [node(f"n{i}") for i in range(nodes)]
    for i, (kind, count, completions) in enumerate(items):
        if kind == "Pod":
            objects.append(pod(f"p{i}"))
            continue
        obj = workload(kind, f"w{i}", count)
        if kind == "Job" and completions is not None:
            obj["spec"]["completions"] = completions
        objects.append(obj)
    expected = _expected(items, nodes)
    try:
        sim = kubesched.simulate(objects, max_pods=budget, record=False, seed=1)
    except InputError as err:
        assert expected > budget, str(err)
        assert f"would create {expected:,} pods, over the budget of {budget:,} (--max-pods)" in str(err)
        return
    assert expected <= budget
    # With room on the nodes every pod is made (a StatefulSet waits for each pod to run before the next):
    # the count is what the workloads make, not only a bound on it.
    assert len(sim.pods) == expected


def test_the_default_budget_is_documented_in_the_flags(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    assert f"default {DEFAULT_MAX_PODS}" in capsys.readouterr().out
