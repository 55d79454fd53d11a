"""`kubesched simulate --explain NAMESPACE/KIND/NAME`: a workload's pods, grouped by outcome, end to end.

The cluster has room for three of the four pods each workload asks for (two on n1, one on
n2), so every explanation has both groups: where the pods went and why one waits.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from kubesched.cli import main
from kubesched.simulator.explain import KINDS, POD, ExplainError, target

Obj = dict[str, Any]
CPU = "1500m"  # n1 (4 cpu) takes two such pods, n2 (2 cpu) one


def node(name: str, cpu: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "20"}},
    }


NODES = [node("n1", "4"), node("n2", "2")]


def pod_spec(cpu: str = CPU, **extra: Any) -> Obj:
    return {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}], **extra}


def template(name: str, **extra: Any) -> Obj:
    return {"metadata": {"labels": {"app": name}}, "spec": pod_spec(**extra)}


def selected(name: str) -> Obj:
    return {"selector": {"matchLabels": {"app": name}}, "template": template(name)}


def obj(api: str, kind: str, name: str, spec: Obj) -> Obj:
    return {"apiVersion": api, "kind": kind, "metadata": {"name": name, "namespace": "default"}, "spec": spec}


JOB = {"parallelism": 4, "completions": 4, "template": template("batch", restartPolicy="Never")}
WORKLOADS: dict[str, Obj] = {
    "Deployment": obj("apps/v1", "Deployment", "web", {"replicas": 4, **selected("web")}),
    "ReplicaSet": obj("apps/v1", "ReplicaSet", "web", {"replicas": 4, **selected("web")}),
    "StatefulSet": obj(
        "apps/v1",
        "StatefulSet",
        "web",
        {"replicas": 4, "serviceName": "web", "podManagementPolicy": "Parallel", **selected("web")},
    ),
    "Job": obj("batch/v1", "Job", "web", JOB),
    "CronJob": obj("batch/v1", "CronJob", "web", {"schedule": "0 3 * * *", "jobTemplate": {"spec": JOB}}),
    "ReplicationController": obj(
        "v1", "ReplicationController", "web", {"replicas": 4, "selector": {"app": "web"}, "template": template("web")}
    ),
}


def dump(objects: list[Obj]) -> str:
    return yaml.safe_dump_all(objects)


def run(tmp_path: Path, capsys: pytest.CaptureFixture[str], objects: list[Obj], *args: str) -> tuple[int, str, str]:
    f = tmp_path / "cluster.yaml"
    f.write_text(dump(objects))
    code = main(["simulate", str(f), "--seed", "1", "-q", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def rows(text: str, title: str) -> list[list[str]]:
    """The body rows of the first table titled `title`, as lists of cell texts (cells do not fold: COLUMNS is
    wide)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    header = next(i for i in range(start, len(lines)) if lines[i].startswith("┡"))
    body = lines[header + 1 :]
    out = []
    for line in body:
        if line.startswith("└"):
            break
        out.append([cell.strip() for cell in line.strip("│").split("│")])
    return out


@pytest.fixture
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")


@pytest.mark.parametrize(
    ("kind", "names"),
    [
        ("Deployment", ["default/deployment/web", "deploy/web", "deployments/web", "Deployment.apps/web"]),
        ("ReplicaSet", ["replicaset/web", "rs/web", "default/ReplicaSets/web"]),
        ("StatefulSet", ["statefulset/web", "STS/web", "statefulsets.apps/web"]),
        ("Job", ["job/web", "default/jobs/web", "job.batch/web"]),
        ("CronJob", ["cronjob/web", "cj/web", "default/CronJobs.batch/web"]),
        ("ReplicationController", ["replicationcontroller/web", "rc/web", "replicationcontrollers/web"]),
    ],
)
def test_a_workload_s_pods_by_outcome(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], wide: None, kind: str, names: list[str]
) -> None:
    for name in names:
        code, out, err = run(tmp_path, capsys, [*NODES, WORKLOADS[kind]], "--output", "table", "--explain", name)
        assert code == 0, err
        assert f"{kind} default/web: 4 pods: 3 Scheduled, 1 Unschedulable" in out, name
        placed = rows(out, "Where its pods went")
        assert [(r[0], r[1]) for r in placed] == [("n1", "2"), ("n2", "1")]
        assert all(r[3] and "not recorded" not in r[3] for r in placed)  # what won the node, for every node
        assert rows(out, "Why its other pods wait") == [["1", "Unschedulable", "Insufficient cpu"]]
        # One full explanation for each outcome: a scheduled pod's and the waiting pod's.
        assert out.count("Nodes examined for default/web-") == 2
        assert "Unschedulable after 1 attempt" in out and "filtered out by NodeResourcesFit: Insufficient cpu" in out
        assert "3/4 pending pods scheduled." in out


def test_a_daemon_set_s_pods_by_outcome(tmp_path: Path, capsys: pytest.CaptureFixture[str], wide: None) -> None:
    """One pod a node: n2 (2 cpu) cannot take a 3-cpu pod, and its pod waits."""
    ds = obj("apps/v1", "DaemonSet", "agent", {"selector": {"matchLabels": {"app": "agent"}}})
    ds["spec"]["template"] = {"metadata": {"labels": {"app": "agent"}}, "spec": pod_spec("3")}
    for name in ("daemonset/agent", "ds/agent", "default/DaemonSets/agent"):
        code, out, err = run(tmp_path, capsys, [*NODES, ds], "--output", "table", "--explain", name)
        assert code == 0, err
        assert "DaemonSet default/agent: 2 pods: 1 Scheduled, 1 Unschedulable" in out
        placed = rows(out, "Where its pods went")
        assert [(r[0], r[1], r[3]) for r in placed] == [("n1", "1", "the only feasible node (1 pod)")]
        (waiting,) = rows(out, "Why its other pods wait")
        assert waiting[:2] == ["1", "Unschedulable"] and "Insufficient cpu" in waiting[2]


def test_a_workload_whose_pods_all_wait(tmp_path: Path, capsys: pytest.CaptureFixture[str], wide: None) -> None:
    """Gated pods wait for their gates: one group, with the gate's message; no table of placements."""
    deploy = obj("apps/v1", "Deployment", "web", {"replicas": 3, **selected("web")})
    deploy["spec"]["template"]["spec"]["schedulingGates"] = [{"name": "example.com/wait"}]
    code, out, _ = run(tmp_path, capsys, [*NODES, deploy], "--output", "table", "--explain", "deploy/web")
    assert code == 0
    assert "Deployment default/web: 3 pods: 3 Gated" in out and "Where its pods went" not in out
    assert rows(out, "Why its pods wait") == [["3", "Gated", "waiting for scheduling gates: [example.com/wait]"]]
    assert out.count("Gated after 0 attempts") == 1


@pytest.mark.parametrize("name", ["pod/lone", "po/lone", "default/Pods/lone", "default/lone", "lone"])
def test_pod_as_a_kind_is_the_pod_s_own_explanation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], wide: None, name: str
) -> None:
    lone = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "lone"}, "spec": pod_spec()}
    code, out, _ = run(tmp_path, capsys, [*NODES, lone], "--output", "table", "--explain", name)
    assert code == 0
    assert out.startswith("default/lone: Scheduled on n1 after 1 attempt")
    assert "Where its pods went" not in out


def test_the_deciding_plugin_and_its_lead(tmp_path: Path, capsys: pytest.CaptureFixture[str], wide: None) -> None:
    """Two pods on empty nodes of unequal size: the larger node wins on free cpu; the summary says by how much."""
    deploy = obj("apps/v1", "Deployment", "web", {"replicas": 1, **selected("web")})
    code, out, _ = run(tmp_path, capsys, [*NODES, deploy], "--output", "table", "--explain", "deploy/web")
    assert code == 0
    doc = run(tmp_path, capsys, [*NODES, deploy], "--output", "json")[1]
    scores = json.loads(doc)["pods"][0]["plugins"]["finalScore"]
    lead = {p: scores["n1"][p] - scores["n2"].get(p, 0) for p in scores["n1"]}
    top = max(lead, key=lambda p: (lead[p], p))
    total = sum(scores["n1"].values())
    assert rows(out, "Where its pods went") == [["n1", "1", str(total), f"{top} (1 pod: +{lead[top]})"]]


def test_a_workload_s_records_are_kept_with_record_none_and_jsonl(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], wide: None
) -> None:
    """Its pods' names are made during the run: their records are kept all the same, and the stream's lines
    keep no records (--record none)."""
    objects = [*NODES, WORKLOADS["Deployment"]]
    code, out, err = run(tmp_path, capsys, objects, "--output", "jsonl", "--record", "none", "--explain", "deploy/web")
    assert code == 0
    assert all("plugins" not in json.loads(line) for line in out.splitlines())
    assert "Deployment default/web: 4 pods: 3 Scheduled, 1 Unschedulable" in err
    assert "no attempt examined any node" not in err
    assert "chosen:" in err and "filtered out by NodeResourcesFit: Insufficient cpu" in err
    code, out, err = run(tmp_path, capsys, objects, "--output", "json", "--record", "none", "--explain", "deploy/web")
    assert code == 0 and "plugins" not in json.loads(out)["pods"][0]
    assert "chosen:" in err


def test_a_workload_s_records_are_kept_with_table_and_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], wide: None
) -> None:
    """Table output with --report lets each record go once counted, but those --explain shows."""
    pytest.importorskip("matplotlib")
    report = tmp_path / "r.html"
    objects = [*NODES, WORKLOADS["Deployment"]]
    code, out, err = run(
        tmp_path, capsys, objects, "--output", "table", "--report", str(report), "--explain", "deploy/web"
    )
    assert code == 0, err
    assert "no attempt examined any node" not in out and "chosen:" in out and report.exists()


def test_a_workload_s_bound_pods_but_the_first_let_their_records_go(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, wide: None
) -> None:
    """What decided each bound pod is kept as it is bound; its record (every node examined) is not, but the
    first's, which the explanation shows, and the waiting pods'."""
    from kubesched.simulator import run as run_module

    kept: dict[str, bool] = {}
    original = run_module.simulate

    def spy(*args: Any, **kwargs: Any) -> run_module.SimulationResult:
        result = original(*args, **kwargs)
        kept.update((f"{o.result}/{o.pod.name}", o.record is not None) for o in result.outcomes.values())
        return result

    monkeypatch.setattr(run_module, "simulate", spy)
    code, out, _ = run(
        tmp_path, capsys, [*NODES, WORKLOADS["Deployment"]], "--output", "table", "--explain", "deploy/web"
    )
    assert code == 0
    assert sorted((k.split("/")[0], v) for k, v in kept.items()) == [
        ("Scheduled", False),
        ("Scheduled", False),
        ("Scheduled", True),
        ("Unschedulable", True),
    ]
    shown = next(k.split("/")[1] for k, v in kept.items() if v and k.startswith("Scheduled/"))
    assert f"default/{shown}: Scheduled on" in out


@pytest.mark.parametrize("output", ["json", "jsonl"])
def test_a_workload_s_explanation_leaves_every_record_in_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], output: str
) -> None:
    code, out, err = run(
        tmp_path, capsys, [*NODES, WORKLOADS["Deployment"]], "--output", output, "--explain", "deploy/web"
    )
    assert code == 0 and "Deployment default/web: 4 pods" in err
    lines = out.splitlines() if output == "jsonl" else []
    pods = [json.loads(x) for x in lines if '"kind":"pod"' in x] if lines else json.loads(out)["pods"]
    assert len(pods) == 4 and all(p["plugins"]["filter"] for p in pods)


def test_only_the_explained_workload_s_records_are_kept(tmp_path: Path) -> None:
    from kubesched.simulator.load import load_manifests
    from kubesched.simulator.run import build_config, simulate

    other = obj("apps/v1", "Deployment", "other", {"replicas": 1, **selected("other")})
    f = tmp_path / "in.yaml"
    f.write_text(dump([*NODES, WORKLOADS["Deployment"], other]))
    loaded = load_manifests([str(f)])
    result = simulate(loaded, build_config(loaded, None, ""), seed=1, record=[target("deploy/web").key])
    kept = {o.pod.name.rsplit("-", 2)[0]: o.record is not None for o in result.outcomes.values()}
    assert kept == {"web": True, "other": False}


@pytest.mark.parametrize(
    ("objects", "name", "message"),
    [
        (
            [obj("apps/v1", "Deployment", "web", {"replicas": 0, **selected("web")})],
            "deploy/web",
            "--explain default/deployment/web: Deployment default/web has no pods "
            "(its controller made none to schedule)",
        ),
        (
            [
                obj(
                    "batch/v1",
                    "CronJob",
                    "web",
                    {"schedule": "0 3 * * *", "suspend": True, "jobTemplate": {"spec": JOB}},
                )
            ],
            "cj/web",
            "--explain default/cronjob/web: CronJob default/web has no pods (its controller made none to schedule)",
        ),
        (
            [WORKLOADS["Job"]],
            "deploy/wbe",
            "--explain default/deployment/wbe: no Deployment wbe in namespace default",
        ),
        (
            [WORKLOADS["Job"]],
            "deploy/web",
            "--explain default/deployment/web: no Deployment web in namespace default; did you mean default/job/web?",
        ),
        (
            [WORKLOADS["Deployment"]],
            "other/deploy/web",
            "--explain other/deployment/web: no Deployment web in namespace other; "
            "did you mean default/deployment/web?",
        ),
    ],
)
def test_a_workload_without_pods_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], objects: list[Obj], name: str, message: str
) -> None:
    code, out, err = run(tmp_path, capsys, [*NODES, *objects], "--output", "table", "--explain", name)
    assert code == 2 and out == ""
    assert err.splitlines() == [f"kubesched: {message}"]


def test_a_workload_whose_pods_were_bound_in_the_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rs = obj("apps/v1", "ReplicaSet", "old", {"replicas": 1, **selected("old")})
    rs["metadata"]["uid"] = "rs-uid"
    bound = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "old-1",
            "namespace": "default",
            "labels": {"app": "old"},
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "old", "uid": "rs-uid", "controller": True}
            ],
        },
        "spec": {"nodeName": "n1", **pod_spec()},
    }
    code, out, err = run(tmp_path, capsys, [*NODES, rs, bound], "--output", "table", "--explain", "rs/old")
    assert code == 2 and out == ""
    assert err.splitlines() == [
        "kubesched: --explain default/replicaset/old: its 1 pod(s) were already bound in the input; "
        "only pending pods are scheduled"
    ]


def test_a_namespace_named_like_a_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str], wide: None) -> None:
    """KIND/NAME wins over NAMESPACE/POD, as in kubectl; NAMESPACE/pod/POD names the pod."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "job"}, "spec": pod_spec()}
    code, _, err = run(tmp_path, capsys, [*NODES, pod], "--output", "table", "--explain", "job/p")
    assert code == 2 and "--explain default/job/p: no Job p in namespace default" in err
    code, out, _ = run(tmp_path, capsys, [*NODES, pod], "--output", "table", "--explain", "job/pod/p")
    assert code == 0 and out.startswith("job/p: Scheduled on n1")


@given(alias=st.sampled_from(sorted(KINDS)), flips=st.lists(st.booleans(), min_size=40, max_size=40))
def test_kind_names_in_any_case(alias: str, flips: list[bool]) -> None:
    name = "".join(c.upper() if flip else c for c, flip in zip(alias, flips, strict=False))
    for text, namespace in ((f"{name}/x", "default"), (f"ns/{name}/x", "ns")):
        t = target(text)
        assert (t.namespace, t.kind, t.name) == (namespace, KINDS[alias], "x")
        assert t.key == (f"{namespace}/x" if t.kind == POD else f"{namespace}/{t.kind}/x")


@given(st.text(alphabet="ab/.Dx-", max_size=12))
def test_any_name_is_a_target_or_one_clear_line(text: str) -> None:
    try:
        t = target(text)
    except ExplainError as err:
        assert len(str(err).splitlines()) == 1 and str(err).startswith("--explain ")
    else:
        assert t.name and t.namespace and "/" not in t.name
