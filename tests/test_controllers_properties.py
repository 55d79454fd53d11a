"""Property-based tests of the workload controllers in `kubesched simulate`.

1. Random valid workloads, with some of their pods already listed (owned, or orphans
   their selector adopts), end with exactly the pods their controllers want: `replicas`,
   `min(parallelism, completions)`, one per eligible node.
2. Damaged workloads end in a result or one clear exit-2 line, never a traceback.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from tests.test_loader_properties import assert_clear_outcome, run_cli

from kubesched.simulator.load import load_manifests
from kubesched.simulator.run import build_config, simulate
from kubesched_testing.paths import object_paths

Obj = dict[str, Any]
APPS = ("web", "db", "api")
NAMESPACES = ("default", "team")


def _node(i: int, pool: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": f"n{i}", "labels": {"pool": pool}},
        "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110"}},
    }


@st.composite
def workloads(draw: st.DrawFn) -> tuple[list[Obj], dict[tuple[str, str, str], int]]:
    """Nodes, workloads and some of their pods; the pods each workload must end with."""
    pools = draw(st.lists(st.sampled_from(("a", "b")), min_size=1, max_size=4))
    docs: list[Obj] = [_node(i, pool) for i, pool in enumerate(pools)]
    expected: dict[tuple[str, str, str], int] = {}
    used: set[tuple[str, str]] = set()
    for i in range(draw(st.integers(1, 4))):
        kind = draw(
            st.sampled_from(("Deployment", "ReplicaSet", "ReplicationController", "StatefulSet", "DaemonSet", "Job"))
        )
        app, ns = f"{draw(st.sampled_from(APPS))}{i}", draw(st.sampled_from(NAMESPACES))
        if (ns, app) in used:
            continue
        used.add((ns, app))
        labels = {"app": app}
        pod_spec: Obj = {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "10m"}}}]}
        spec: Obj = {"template": {"metadata": {"labels": dict(labels)}, "spec": pod_spec}}
        if kind == "ReplicationController":
            spec["selector"] = dict(labels)
        elif kind != "Job":
            spec["selector"] = {"matchLabels": dict(labels)}
        replicas = draw(st.integers(0, 6))
        want = replicas
        if kind == "Job":
            pod_spec["restartPolicy"] = "Never"
            parallelism, completions = draw(st.integers(0, 5)), draw(st.one_of(st.none(), st.integers(0, 5)))
            spec["parallelism"] = parallelism
            if completions is not None:
                spec["completions"] = completions
            want = parallelism if completions is None else min(parallelism, completions)
        elif kind == "DaemonSet":
            pool = draw(st.sampled_from(("a", "b", None)))
            if pool is not None:
                pod_spec["nodeSelector"] = {"pool": pool}
            want = sum(1 for p in pools if pool in (None, p))
        else:
            spec["replicas"] = replicas
            if kind == "StatefulSet":
                spec["podManagementPolicy"] = draw(st.sampled_from(("OrderedReady", "Parallel")))
                spec["serviceName"] = app
        api = {"Job": "batch/v1", "ReplicationController": "v1"}.get(kind, "apps/v1")
        meta = {"name": app, "namespace": ns, "uid": f"uid-{app}"}
        docs.append({"apiVersion": api, "kind": kind, "metadata": meta, "spec": spec})
        expected[(kind, ns, app)] = want
        if kind in ("ReplicaSet", "ReplicationController"):
            for j in range(draw(st.integers(0, 4))):
                pod_meta: Obj = {"name": f"{app}-listed{j}", "namespace": ns, "labels": dict(labels)}
                if draw(st.booleans()):
                    ref = {"apiVersion": api, "kind": kind, "name": app, "uid": f"uid-{app}", "controller": True}
                    pod_meta["ownerReferences"] = [ref]
                docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": copy.deepcopy(pod_spec)})
    return docs, expected


def _owner_chain(cluster: Any, obj: Obj) -> tuple[str, str, str] | None:
    ns = obj["metadata"].get("namespace") or "default"
    top = None
    while True:
        refs = [r for r in obj["metadata"].get("ownerReferences") or () if r.get("controller")]
        if not refs:
            return top
        top = (refs[0]["kind"], ns, refs[0]["name"])
        parent = cluster.get(refs[0]["kind"], ns, refs[0]["name"])
        if parent is None:
            return top
        obj = parent


@given(case=workloads())
def test_workloads_end_with_the_pods_their_controllers_want(
    tmp_path_factory: pytest.TempPathFactory, case: Any
) -> None:
    docs, expected = case
    f = tmp_path_factory.mktemp("w") / "in.yaml"
    f.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    loaded = load_manifests([str(f)])
    result = simulate(loaded, build_config(loaded, None, ""), seed=1)
    assert result.scheduler is not None
    cluster: Any = result.scheduler.lister
    counts: dict[tuple[str, str, str], int] = {}
    for pod in cluster.list("Pod"):
        owner = _owner_chain(cluster, pod)
        assert owner is not None, pod["metadata"]["name"]  # every pod here belongs to a workload
        counts[owner] = counts.get(owner, 0) + 1
        assert pod["spec"].get("nodeName"), pod["metadata"]["name"]  # room for all
    assert counts == {k: v for k, v in expected.items() if v}


HOSTILE = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from(
        (-1, 0, 2**31, 2**63, 2**70, 1.5, "3", "", "x", "*/0 * * * *", "99 * * * *", [], {}, [1], {"a": 1})
    ),
)


@given(case=workloads(), data=st.data())
def test_damaged_workloads_end_in_a_result_or_a_clear_error(
    tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str], case: Any, data: st.DataObject
) -> None:
    docs, _ = case
    docs = copy.deepcopy(docs)
    targets = [d for d in docs if d["kind"] not in ("Node", "Pod")]
    for _ in range(data.draw(st.integers(1, 3))):
        target = data.draw(st.sampled_from(targets))
        path = data.draw(st.sampled_from(object_paths(target)[1:]))
        if data.draw(st.booleans()):
            # A copy: sampled_from hands out the same [] or {} each time, and the same list set inside itself by a
            # later mutation would make a cycle no manifest can have.
            _set(target, path, copy.deepcopy(data.draw(HOSTILE)))
            continue
        parent = target
        for p in path[:-1]:
            parent = parent[p]
        del parent[path[-1]]
    manifest = tmp_path_factory.mktemp("h") / "in.yaml"
    manifest.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    code, out, err, elapsed = run_cli(manifest, ["--seed", "1"], capsys)
    assert_clear_outcome(code, out, err, elapsed, manifest)


def _set(root: Any, path: tuple[Any, ...], value: Any) -> None:
    parent = root
    for p in path[:-1]:
        parent = parent[p]
    parent[path[-1]] = value


def test_a_stray_huge_replica_count_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 2**31 - 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}},
        },
    }
    f = tmp_path / "in.yaml"
    f.write_text(yaml.safe_dump(d))
    code, out, err, elapsed = run_cli(f, [], capsys)
    assert code == 2
    assert "spec.replicas: Invalid value: 2147483647: kubesched simulates at most 100000 pods per workload" in err
