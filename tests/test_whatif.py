"""`kubesched whatif capacity|compare`: answers known by hand, found by repeated simulation."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.cli import main
from kubesched.simulator.inputs import NodeTemplate, scaled
from kubesched.simulator.whatif import SCAN_LIMIT, Trial, capacity, compare, find_minimum
from kubesched_testing.configs import most_allocated

ROOT = Path(__file__).resolve().parents[1]
ZONE = "topology.kubernetes.io/zone"


def node(name: str, cpu: int = 4, zone: str = "", **extra: Any) -> dict[str, Any]:
    labels = {ZONE: zone} if zone else {}
    labels.update(extra.pop("labels", {}))
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"allocatable": {"cpu": str(cpu), "memory": "16Gi", "pods": "110", **extra.pop("alloc", {})}},
    }
    if extra:
        obj["spec"] = extra
    return obj


def pod(name: str, cpu: float = 1, labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    limits = spec.pop("limits", None)
    resources: dict[str, Any] = {"requests": {"cpu": str(cpu)}}
    if limits:
        resources["limits"] = limits
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {**spec, "containers": [{"name": "c", "image": "app", "resources": resources}]},
    }


def write(tmp_path: Path, name: str, *docs: dict[str, Any]) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return str(path)


def test_five_pods_of_three_cpu_need_five_four_cpu_nodes(tmp_path: Path) -> None:
    pods = write(tmp_path, "pods.yaml", *(pod(f"p{i}", 3) for i in range(5)))
    template = write(tmp_path, "node.yaml", node("worker", 4, zone="zone-a"))
    answer = capacity([pods], template)
    assert answer.status == "found" and answer.nodes == 5
    assert answer.added == [f"worker-whatif-{i}" for i in range(1, 6)]
    assert answer.pending_before == 5 and not answer.blocked and not answer.non_monotone
    # exponential 1, 2, 4, 8, then binary search down to 5; 4 nodes checked to leave one pod pending
    assert [(t.nodes, t.pending) for t in answer.trials] == [(0, 5), (1, 4), (2, 3), (4, 1), (8, 0), (6, 0), (5, 0)]
    assert "checked: 4 node(s) leave 1 pod(s) pending" in answer.notes


def test_the_command_prints_the_same_answer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pods = write(tmp_path, "pods.yaml", *(pod(f"p{i}", 3) for i in range(5)))
    template = write(tmp_path, "node.yaml", node("worker", 4))
    assert main(["whatif", "capacity", pods, "--node-template", template, "--output", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "found" and doc["nodes"] == 5 and doc["template"]["allocatable"]["cpu"] == "4"
    assert main(["whatif", "capacity", pods, "--node-template", template, "--output", "table"]) == 0
    out = capsys.readouterr().out
    assert "Answer: 5 node(s) like worker let every pending pod schedule" in out


def test_added_nodes_keep_the_template_shape_with_their_own_names() -> None:
    tpl = node("big", 8, zone="zone-b", labels={"kubernetes.io/hostname": "big", "disk": "ssd"}, providerID="aws://x")
    made = NodeTemplate("t.yaml", tpl).nodes(3, taken={"big-whatif-2"})
    assert [n["metadata"]["name"] for n in made] == ["big-whatif-1", "big-whatif-3", "big-whatif-4"]
    for n in made:
        labels = n["metadata"]["labels"]
        assert labels == {ZONE: "zone-b", "disk": "ssd", "kubernetes.io/hostname": n["metadata"]["name"]}
        assert n["status"] == tpl["status"] and "providerID" not in n["spec"]
    assert tpl["metadata"]["labels"]["kubernetes.io/hostname"] == "big"  # the template itself is left alone


def test_a_pod_needing_a_gpu_the_template_lacks_is_named_with_the_plugin_reason(tmp_path: Path) -> None:
    gpu = pod("trainer", 1, limits={"nvidia.com/gpu": "1"})
    pods = write(tmp_path, "pods.yaml", pod("a", 2), pod("b", 2), gpu)
    template = write(tmp_path, "node.yaml", node("cpu-only", 4))
    answer = capacity([pods], template)
    assert answer.status == "blocked"
    assert [(b.pod, b.reasons) for b in answer.blocked] == [
        ("default/trainer", {"NodeResourcesFit": "Insufficient nvidia.com/gpu"})
    ]
    assert "Insufficient nvidia.com/gpu" in answer.blocked[0].message
    assert answer.nodes == 1  # the other two pods fit on one node


def test_a_node_selector_the_template_lacks_blocks_and_one_that_has_it_answers(tmp_path: Path) -> None:
    pods = write(tmp_path, "pods.yaml", pod("fast", 1, nodeSelector={"disk": "ssd"}))
    plain = write(tmp_path, "plain.yaml", node("plain", 4))
    answer = capacity([pods], plain)
    assert answer.status == "blocked" and answer.nodes == 0
    assert answer.blocked[0].reasons == {"NodeAffinity": "node(s) didn't match Pod's node affinity/selector"}
    ssd = write(tmp_path, "ssd.yaml", node("ssd", 4, labels={"disk": "ssd"}))
    answer = capacity([pods], ssd)
    assert answer.status == "found" and answer.nodes == 1 and not answer.blocked


def test_gated_pods_identical_pods_and_a_daemonset_too_big_for_the_template_are_blocked(tmp_path: Path) -> None:
    agent = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "a", "image": "a", "resources": {"requests": {"cpu": "6"}}}]},
            },
        },
    }
    gated = pod("waits", 1, schedulingGates=[{"name": "example.com/quota"}])
    gpus = [pod(f"gpu-{i}", 1, limits={"nvidia.com/gpu": "1"}) for i in range(3)]
    files = write(tmp_path, "cluster.yaml", node("big", 16), agent, gated, *gpus, pod("fits", 1))
    template = write(tmp_path, "node.yaml", node("small", 4))
    answer = capacity([files], template, max_nodes=4)
    assert [(b.pod, b.owner, b.pods, b.reasons) for b in answer.blocked] == [
        ("default/waits", None, 1, {"SchedulingGates": "waiting for scheduling gates"}),
        # the DaemonSet's pod runs on `big`; on each added node its pod would not fit
        (answer.blocked[1].pod, "DaemonSet/agent", 0, {"NodeResourcesFit": "Insufficient cpu"}),
        # three pods with one spec: one check, one row
        ("default/gpu-0", None, 3, {"NodeResourcesFit": "Insufficient nvidia.com/gpu"}),
    ]
    # `fits` schedules on big: no node is needed for the pods that can be placed
    assert answer.status == "blocked" and answer.nodes == 0


def test_required_affinity_to_pods_elsewhere_does_not_block(tmp_path: Path) -> None:
    """Alone on an empty node, a pod that must share a zone with `db` fails InterPodAffinity; in the cluster it fits."""
    db = pod("db", 1, labels={"app": "db"}, nodeName="e1")
    affinity = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": ZONE}
            ]
        }
    }
    files = write(tmp_path, "c.yaml", node("e1", 1, zone="zone-a"), db, pod("app", 2, affinity=affinity))
    template = write(tmp_path, "node.yaml", node("w", 4, zone="zone-a"))
    answer = capacity([files], template)
    assert answer.status == "found" and answer.nodes == 1 and not answer.blocked


def test_max_nodes_reached_lists_what_is_still_pending(tmp_path: Path) -> None:
    """Two pods that refuse to share a zone, and a template in a single zone: one of them never fits."""
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": ZONE}
            ]
        }
    }
    files = write(tmp_path, "c.yaml", *(pod(f"x{i}", 1, labels={"app": "x"}, affinity=anti) for i in range(2)))
    template = write(tmp_path, "node.yaml", node("w", 4, zone="zone-a"))
    answer = capacity([files], template, max_nodes=4)
    assert answer.status == "max-nodes" and answer.nodes is None
    assert [t.nodes for t in answer.trials] == [0, 1, 2, 4]
    assert [p for p, _ in answer.still_pending] == ["default/x1"]
    assert "anti-affinity" in answer.still_pending[0][1]


def test_more_nodes_can_leave_more_pods_pending_and_the_search_says_so(tmp_path: Path) -> None:
    """One small zone-c node takes `big` and opens a zone the web pods must spread into, but cannot hold them."""
    spread = [
        {
            "maxSkew": 1,
            "topologyKey": ZONE,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}},
        }
    ]
    docs = [node("a", 4, zone="zone-a"), node("b", 4, zone="zone-b"), pod("big", 2, nodeSelector={ZONE: "zone-c"})]
    docs += [pod(f"web-{i}", 1, labels={"app": "web"}, topologySpreadConstraints=spread) for i in range(6)]
    files = write(tmp_path, "c.yaml", *docs)
    template = write(tmp_path, "node.yaml", node("c", 2, zone="zone-c"))
    answer = capacity([files], template)
    assert [(t.nodes, t.pending) for t in answer.trials] == [(0, 1), (1, 4), (2, 0)]
    assert answer.status == "found" and answer.nodes == 2 and answer.non_monotone
    assert "non-monotone: 1 node(s) left 4 pod(s) pending, 0 left 1" in answer.notes


def _oracle(pending: dict[int, int], default: int = 0) -> Any:
    def trial(n: int) -> Trial:
        left = pending.get(n, default)
        return Trial(n, left, tuple((f"p{i}", "") for i in range(left)))

    return trial


def test_a_non_monotone_search_scans_below_its_answer() -> None:
    # bisection finds 6; 4 leaves more pending than 2 did, so 3 and 5 are simulated, and 3 is enough
    search = find_minimum(_oracle({0: 3, 1: 2, 2: 1, 3: 0, 4: 2, 5: 1}), 100)
    assert search.found == 3 and search.non_monotone
    assert [t.nodes for t in search.trials] == [0, 1, 2, 4, 8, 6, 5, 3]
    assert any("simulating below it 3 were enough" in n for n in search.notes)


def test_a_monotone_search_does_not_scan_and_stops_at_max_nodes() -> None:
    search = find_minimum(_oracle({0: 3, 1: 2, 2: 1}), 100)
    assert search.found == 3 and not search.non_monotone
    assert [t.nodes for t in search.trials] == [0, 1, 2, 4, 3]
    nothing = find_minimum(_oracle({}, default=1), 5)
    assert nothing.found is None and [t.nodes for t in nothing.trials] == [0, 1, 2, 4, 5]


def test_the_scan_below_is_bounded() -> None:
    top = 2 * SCAN_LIMIT + 8
    pending = {n: 1 for n in range(top)}
    pending[64] = 5  # more pending at 64 than at 32: the scan runs; nothing below the answer is enough
    search = find_minimum(_oracle(pending), 4 * SCAN_LIMIT)
    assert search.found == top
    assert any("were not simulated (scan limit" in n for n in search.notes)


def test_no_nodes_needed(tmp_path: Path) -> None:
    files = write(tmp_path, "c.yaml", node("n", 4), pod("p", 1))
    answer = capacity([files], write(tmp_path, "node.yaml", node("w", 4)))
    assert answer.status == "none-needed" and answer.nodes == 0 and len(answer.trials) == 1


# --- compare ------------------------------------------------------------------------------------------------

MOST_ALLOCATED = most_allocated([{"name": "cpu", "weight": 1}])


def test_compare_least_allocated_spreads_where_most_allocated_packs(tmp_path: Path) -> None:
    files = write(tmp_path, "c.yaml", node("a", 4, zone="zone-a"), node("b", 4, zone="zone-b"), pod("p1"), pod("p2"))
    most = write(tmp_path, "most.yaml", MOST_ALLOCATED)
    result = compare([files], ["default", most], seed=1)
    doc = result.to_json()
    first = result.a.sim.pod("p1").node
    assert result.b.sim.pod("p1").node == first  # equal scores, same seed: the same tie-break
    assert doc["moved"] == [
        {
            "pod": "default/p2",
            "nodeA": "b" if first == "a" else "a",
            "resultA": "Scheduled",
            "nodeB": first,
            "resultB": "Scheduled",
        }
    ]
    assert (doc["a"]["nodesUsed"], doc["b"]["nodesUsed"]) == (2, 1)
    assert doc["a"]["utilisation"]["cpu"] == doc["b"]["utilisation"]["cpu"] == pytest.approx(0.25)
    assert (doc["a"]["placedPerNode"]["range"], doc["b"]["placedPerNode"]["range"]) == (0, 2)
    assert doc["a"]["placedPerZone"]["counts"] == {"zone-a": 1, "zone-b": 1}
    assert sorted(doc["b"]["placedPerZone"]["counts"].values()) == [0, 2]
    assert doc["a"]["nodeUtilisation"]["cpu"]["range"] == 0
    assert doc["b"]["nodeUtilisation"]["cpu"]["range"] == pytest.approx(0.5)
    assert doc["a"]["pending"] == doc["b"]["pending"] == 0


def test_compare_command_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = write(tmp_path, "c.yaml", node("a", 4), node("b", 4), pod("p1"), pod("p2"), pod("huge", 16))
    most = write(tmp_path, "most.yaml", MOST_ALLOCATED)
    assert main(["whatif", "compare", files, "--config", "default", "--config", most, "--output", "table"]) == 0
    out = capsys.readouterr().out
    assert "Pods that land differently: 1 of 3" in out
    assert re.search(r"│ nodes with pods +│ +2 │ +1 │ +-1 │", out)
    assert re.search(r"│ pending +│ +1 │ +1 │ +\+0 │", out)


# --- scaling the workload (sweeps) ---------------------------------------------------------------------------


def test_scaled_multiplies_workloads_and_copies_pending_pods() -> None:
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {"replicas": 3}}
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {"completions": 4}}
    running = pod("running", nodeName="n")
    objects = [deploy, job, running, pod("p1"), pod("p2")]
    out = scaled(objects, 2.5)
    assert out[0]["spec"]["replicas"] == 8  # 7.5 rounds half up
    assert out[1]["spec"] == {"completions": 10, "parallelism": 3}  # parallelism defaults to 1
    assert out[2] is running
    assert [p["metadata"]["name"] for p in out[3:]] == ["p1", "p2", "p1-x1", "p2-x1", "p1-x2"]
    assert deploy["spec"] == {"replicas": 3}  # the inputs are left alone
    half = scaled(objects, 0.5)
    assert [p["metadata"]["name"] for p in half if p["kind"] == "Pod"] == ["running", "p1"]
    assert scaled(objects, 1) == objects


# --- bad input ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        pytest.param(
            ["capacity", "{files}", "--node-template", "nope.yaml"], ["nope.yaml: no such file"], id="no template"
        ),
        pytest.param(
            ["capacity", "{dir}/missing.yaml", "--node-template", "{template}"],
            ["missing.yaml: no such file or directory"],
            id="no manifests",
        ),
        pytest.param(
            ["capacity", "{files}", "--node-template", "{files}"],
            ["c.yaml: a node template must hold exactly one Node, found Node, Pod"],
            id="template not one node",
        ),
        pytest.param(
            ["capacity", "{files}", "--node-template", "{bad_node}"],
            ["bad-node.yaml, document 1 (Node x)", "status.allocatable[cpu]", "Invalid value"],
            id="template bad quantity",
        ),
        pytest.param(
            ["capacity", "{files}", "--node-template", "{template}", "--max-nodes", "0"],
            ["--max-nodes: must be at least 1"],
            id="max nodes",
        ),
        pytest.param(["capacity", "-", "--node-template", "{template}"], ["-: standard input"], id="stdin"),
        pytest.param(
            ["capacity", "{fifo}", "--node-template", "{template}"],
            ["pipe: a pipe cannot be read again for each simulation; save it to a file"],
            id="pipe",
        ),
        pytest.param(
            ["compare", "{files}", "--config", "default"], ["give exactly two configurations"], id="one config"
        ),
        pytest.param(
            ["compare", "{files}", "--config", "default", "--config", "{template}"],
            ["node.yaml", 'no kind "Node"'],
            id="config is a node",
        ),
    ],
)
def test_bad_input_exits_2_naming_file_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], needles: list[str]
) -> None:
    names = {
        "files": write(tmp_path, "c.yaml", node("n", 4), pod("p", 8)),
        "template": write(tmp_path, "node.yaml", node("w", 4)),
        "bad_node": str(tmp_path / "bad-node.yaml"),
        "dir": str(tmp_path),
        "fifo": str(tmp_path / "pipe"),
    }
    os.mkfifo(names["fifo"])  # refused before anything reads it
    (tmp_path / "bad-node.yaml").write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: x}\nstatus: {allocatable: {cpu: lots}}\n"
    )
    assert main(["whatif", *(a.format(**names) for a in args), "--output", "json"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kubesched: ") and "Traceback" not in err
    for needle in needles:
        assert needle in err


def test_starting_the_cli_does_not_import_the_whatif_modules() -> None:
    """`kubesched run` restarts fast: building the parser leaves what-if and sweeps unimported."""
    code = (
        "import sys, kubesched.cli as c; c._parser();"
        "print(sorted(m for m in sys.modules if m.split('.')[-1] in ('whatif', 'sweep', 'inputs', 'whatif_output')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert done.stdout.strip() == "[]"


# Gangs (PodGroups): sized whole.

GANG_GATES = "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true"


def pod_group(name: str, min_count: int, topology: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": min_count}}}
    if topology:
        spec["schedulingConstraints"] = {"topology": [{"key": topology}]}
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": name}, "spec": spec}


def gang(
    name: str, pods: int, cpu: float, min_count: int | None = None, topology: str | None = None, gates: bool = False
) -> list[Any]:
    members = [pod(f"{name}-{i}", cpu, schedulingGroup={"podGroupName": name}) for i in range(pods)]
    if gates:  # its last member waits for a gate nothing removes
        members[-1]["spec"]["schedulingGates"] = [{"name": "hold"}]
    return [pod_group(name, pods if min_count is None else min_count, topology), *members]


def test_a_gang_counts_only_once_placed_whole(tmp_path: Path) -> None:
    from kubesched.release import release

    files = write(tmp_path, "gang.yaml", node("n1"), node("n2"), *gang("train", 4, 3))
    template = write(tmp_path, "node.yaml", node("worker", 4))
    answer = capacity([files], template, release=release("1.36", GANG_GATES))
    assert answer.status == "found" and answer.nodes == 2 and not answer.blocked
    # With one node three of the four members would fit one by one: the gang places none, so it is not enough.
    assert [(t.nodes, t.pending) for t in answer.trials] == [(0, 4), (1, 4), (2, 0)]
    assert "checked: 1 node(s) leave 4 pod(s) pending" in answer.notes


@pytest.mark.parametrize(
    ("docs", "plugin", "why"),
    [
        (gang("big", 2, 5), "NodeResourcesFit", "Insufficient cpu"),
        (gang("gated", 2, 1, gates=True), "SchedulingGates", "waiting for scheduling gates"),
        (gang("short", 2, 1, min_count=3), "GangScheduling", "minCount 3, but the group has 2 pod(s)"),
        (
            gang("zoned", 2, 1, topology=ZONE),
            "TopologyPlacementGenerator",
            f"nodes like the template have no {ZONE} label, so none is in a domain the group may use",
        ),
        (
            gang("host", 2, 3, topology="kubernetes.io/hostname"),
            "TopologyPlacementGenerator",
            "each node like the template is its own kubernetes.io/hostname domain, and one cannot hold 2 members",
        ),
    ],
)
def test_a_gang_that_never_fits_whole_is_named_with_why(tmp_path: Path, docs: list[Any], plugin: str, why: str) -> None:
    from kubesched.release import release

    group = docs[0]["metadata"]["name"]
    fits = gang("fits", 2, 3)  # needs two more nodes, and gets them
    files = write(tmp_path, "gang.yaml", node("n1"), *docs, *fits)
    template = write(tmp_path, "node.yaml", node("worker", 4))
    answer = capacity([files], template, release=release("1.36", GANG_GATES))
    assert answer.status == "blocked" and answer.nodes == 1  # n1 and one more place "fits" whole
    (blocked,) = answer.blocked
    assert (blocked.pod_group, blocked.pods, blocked.reasons.get(plugin)) == (f"default/{group}", 2, why)
    entry = answer.to_json()["blocked"][0]
    assert entry["podGroup"] == f"default/{group}" and entry["pod"] == f"default/{group}-0"


def test_the_command_names_gangs_that_never_fit_whole(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["whatif", "capacity", str(ROOT / "examples" / "gangs"), "--feature-gates", GANG_GATES]
    args += ["--node-template", str(ROOT / "examples" / "whatif" / "zone-c-node.yaml")]
    assert main([*args, "--output", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["status"], doc["nodes"]) == ("blocked", 2)  # eval's four 3-CPU workers: zone a's two nodes and two
    assert {b["podGroup"]: sorted(b["reasons"]) for b in doc["blocked"]} == {
        "default/pair": ["NodeResourcesFit", "TopologyPlacementGenerator"],
        "default/tiny": ["GangScheduling"],
    }
    assert main([*args, "--output", "table"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "2 pod group(s) (4 pods) can never be placed whole; 2 node(s) place all the others" in out
    assert "Pod groups no number of these nodes can place whole" in out


def test_gangs_an_indexed_job_makes_are_tried_whole_from_the_job(tmp_path: Path) -> None:
    from kubesched.release import release

    def job(name: str, cpu: int) -> dict[str, Any]:
        template = {"spec": {"restartPolicy": "Never", "containers": [pod("x", cpu)["spec"]["containers"][0]]}}
        spec = {"parallelism": 4, "completions": 4, "completionMode": "Indexed", "template": template}
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": spec}

    files = write(tmp_path, "jobs.yaml", node("n1"), node("n2"), job("train", 3), job("huge", 5))
    template = write(tmp_path, "node.yaml", node("worker", 4))
    answer = capacity([files], template, release=release("1.36", GANG_GATES + ",WorkloadWithJob=true"))
    (blocked,) = answer.blocked
    assert blocked.pod_group is not None and blocked.pod_group.startswith("default/huge-")
    assert (blocked.pods, blocked.owner, blocked.reasons) == (4, "Job/huge", {"NodeResourcesFit": "Insufficient cpu"})
    assert answer.status == "blocked" and answer.nodes == 2  # train's four 3-CPU workers, one a node
