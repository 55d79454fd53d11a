"""bench/scheduler_perf.py at 1/100 scale: every workload schedules all its measured pods, in-process and
through `kubesched simulate` on the manifests the command mode writes, so the benchmark cannot rot.
Steady-state workloads schedule at least two whole batches (the second after the first was deleted)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from kubesched.cli import main

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = Path("/work/shared/reference/scheduler-perf/workloads.yaml")


def _load_bench(name: str = "scheduler_perf") -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


bench = _load_bench()
realistic = _load_bench("realistic")
whole_command = _load_bench("whole_command")
cluster_e2e = _load_bench("cluster_e2e")
gangs = _load_bench("gangs")
SCRIPTS = sorted((ROOT / "bench").glob("*.py"))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_bench_script_imports_and_answers_help(script):
    """The bench scripts run by hand only: one whose imports broke when a module it uses was refactored
    (cluster_e2e.py and whole_command.py, once) would otherwise go unnoticed until someone measures."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        [sys.executable, str(script), "--help"], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith(f"usage: {script.name} "), proc.stdout[:200]


@pytest.mark.parametrize("name", list(whole_command.WORKLOADS))
@pytest.mark.parametrize("scale", [7, 100])
def test_whole_command_measured_counts_match_its_workloads(name, scale):
    """whole_command.py divides by MEASURED, which it keeps apart from the builders (the parent never builds the
    objects): the count must be the pods without priority the measured run adds, at any --scale."""
    w = whole_command.WORKLOADS[name](scale)
    added = [o for o in w.measured if o["kind"] == "Pod"]
    added += [o for d in w.measured if d["kind"] == "Scenario" for step in d["steps"] for o in step.get("create", [])]
    measured = [o for o in added if "priority" not in o["spec"]]
    assert len(measured) == whole_command.MEASURED[name](scale) > 0
    names = {(o["metadata"]["namespace"], o["metadata"]["name"]) for o in [*w.setup, *added] if o["kind"] == "Pod"}
    assert len(names) == len(w.setup) + len(added) - sum(o["kind"] == "Node" for o in w.setup)
    deleted = {
        (ref["namespace"], ref["name"])
        for d in w.measured
        if d["kind"] == "Scenario"
        for step in d["steps"]
        for ref in step.get("delete", [])
    }
    assert deleted <= names  # a churn step deletes setup pods by the names their template gives them


def test_cluster_e2e_both_paths_bind_every_measured_pod():
    """cluster_e2e.py at a tiny size: `kubesched run` against the stand-in API server in its own process, and the
    embedded-cluster row beside it, each binding every measured pod."""
    spec = cluster_e2e.workload(4, 6, 12)
    e2e = cluster_e2e.run(spec, 0)
    assert e2e["measured"] == 12 and e2e["pods_per_second"] > 0
    assert e2e["binding_posts"] >= 1 and e2e["informer_events_applied"] >= 4 + 6 + 12
    simulated = cluster_e2e.simulate(spec)
    assert simulated["workload"] == "SchedulingBasic/4Nodes/6Init/12Pods (simulate, embedded cluster)"
    assert simulated["bound"] == simulated["measured"] == 12


@pytest.mark.parametrize("spec", bench.SPECS, ids=lambda s: s.name)
def test_workload_schedules_all_measured_pods(spec, tmp_path, capsys):
    small = bench.scaled(spec, 100)
    setup = bench.run_setup(small)
    where = bench.placements(small, setup.cluster)
    result = bench.run_inprocess(small, setup, min_batches=2)
    if small.measure.steady:
        assert result["bound"] >= 2 * small.measure.total() > 0 and not result["stuck"]
    else:
        assert result["bound"] == small.measure.total() > 0

    assert len(where) == sum(p.total() for p in small.setup if "gated" not in p.template)
    _, files = bench.write_manifests(small, where, tmp_path)
    assert main(["simulate", *map(str, files), "--output", "json", "--record", "none", "--seed", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    measured = [p for p in out["pods"] if p["namespace"] == small.measure.namespace]
    batches = bench.steady_batches(small) if small.measure.steady else 1
    assert len(measured) == batches * small.measure.total()
    assert all(p["node"] for p in measured), [p for p in measured if not p["node"]][:3]
    if small.churn is not None or small.deletes is not None or small.measure.steady:
        assert (tmp_path / "scenario.yaml").exists()


def test_scaled_counts_and_names():
    spec = bench.BY_NAME["SchedulingRequiredPodAntiAffinityWithNSSelector/5000Nodes_2000Pods"]
    small = bench.scaled(spec, 100)
    assert small.name.endswith("@1/100") and small.target() is None and small.threshold == 140
    assert [g.count for g in small.nodes] == [60]
    assert [(p.count, p.namespaces) for p in small.setup] == [(40, 1)]
    assert small.measure.total() == 20
    assert bench.scaled(bench.BY_NAME["SchedulingDaemonset/15000Nodes"], 100).nodes[0].count == 1


@pytest.mark.skipif(not REFERENCE.exists(), reason="upstream reference workloads.yaml not present")
def test_bench_covers_every_thresholded_upstream_workload():
    """The bench's names and thresholds are upstream's, for every non-exotic workload with a threshold."""
    upstream = {
        w["name"]: w["threshold"]
        for w in yaml.safe_load(REFERENCE.read_text())
        if "threshold" in w and not w.get("exotic")
    }
    dra = {s.name for s in bench.DRA_SPECS}
    assert {s.name: s.threshold for s in bench.SPECS if s.name not in dra} == upstream


@pytest.mark.skipif(not REFERENCE.exists(), reason="upstream reference workloads.yaml not present")
def test_dra_thresholds_are_upstreams():
    """Each thresholded DRA workload of the reference list that v1.36 can run (queueing hints on) is here, with
    that threshold, and the DRA workloads here have no threshold upstream does not give."""
    upstream = {
        f"{case['testcase']}/{w['workload']}": w["threshold"]
        for case in yaml.safe_load(REFERENCE.read_text())
        if "/dra/" in (case.get("source") or {}).get("file", "")
        for w in case.get("workloads") or ()
        if "threshold" in w and (w.get("featureGates") or {}).get("SchedulerQueueingHints", True)
    }
    assert len(upstream) == 6
    ours = {s.name: s.threshold for s in bench.DRA_SPECS if s.threshold is not None}
    assert ours == upstream


def test_alloc_resource_claims_takes_distinct_devices():
    """allocResourceClaims in the setup: every init claim gets a device of its own, the rest stay free."""
    spec = bench.scaled(
        bench.BY_NAME["SteadyStateClusterResourceClaimTemplate/full_500nodes_QueueingHintsEnabled"], 100
    )
    objs = list(bench.setup_objects(spec))
    claims = [o for o in objs if o["kind"] == "ResourceClaim"]
    devices = [(r["pool"], r["device"]) for c in claims for r in c["status"]["allocation"]["devices"]["results"]]
    nodes = {o["metadata"]["name"] for o in objs if o["kind"] == "Node"}
    assert len(claims) == 49 and len(set(devices)) == 49 and {pool for pool, _ in devices} <= nodes
    assert len(nodes) * 10 - len(devices) == 1  # room for exactly one batch of one pod


def test_partitionable_init_claims_take_the_preallocated_partitions():
    spec = bench.scaled(bench.BY_NAME["Partitionable/2000pods_100nodes"], 100)
    claims = [o for o in bench.setup_objects(spec) if o["kind"] == "ResourceClaim"]
    results = [r for c in claims for r in c["status"]["allocation"]["devices"]["results"]]
    assert sorted((r["pool"], r["device"]) for r in results) == sorted(
        (f"resourceslice-{i}", "device-2-counters-1") for i in range(20)
    )


def test_realistic_generate_only(tmp_path, capsys):
    """bench/realistic.py --generate-only writes the manifests and runs nothing; they simulate whole, and every
    pod counts under its workload (DaemonSet pods too, whose owner reference is the controller's)."""
    folder = tmp_path / "out"
    assert realistic.main(["--nodes", "12", "--pods", "120", "--generate-only", str(folder)]) == 0
    assert sorted(p.name for p in folder.iterdir()) == ["cluster.yaml"]
    err = capsys.readouterr().err
    assert f"wrote 161 objects (12 Nodes, 20 Namespaces, 120 Pods, 9 ReplicaSets) to {folder / 'cluster.yaml'}" in err
    file = tmp_path / "cluster.yaml"
    assert realistic.main(["--nodes", "12", "--pods", "120", "--generate-only", str(file)]) == 0
    assert file.read_text() == (folder / "cluster.yaml").read_text()
    capsys.readouterr()
    assert realistic.main(["--nodes", "12", "--pods", "120", "--generate-only", "-"]) == 0
    assert capsys.readouterr().out == file.read_text()

    assert main(["simulate", str(file), "--output", "json", "--record", "none", "--seed", "1"]) == 0
    pods = json.loads(capsys.readouterr().out)["pods"]
    assert len(pods) == 120 and all(p["result"] == "Scheduled" for p in pods)
    owners = {p["owner"].split("/")[0] if p["owner"] else None for p in pods}
    assert owners == {"DaemonSet", "ReplicaSet"}
    daemons = sorted({p["owner"] for p in pods if p["namespace"] == "kube-system"})
    assert daemons == [f"DaemonSet/{ds}" for ds in sorted(d for d, _, _ in realistic.DAEMONSETS)]


def test_realistic_phases(tmp_path, capsys):
    """bench/realistic.py --phases --report: CPU and peak RSS per phase of the whole command, twice, and the ratio."""
    assert realistic.main(["--nodes", "12", "--pods", "120", "--keep", str(tmp_path), "--phases", "--report"]) == 0
    plain, with_report = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    for figures in (plain, with_report):
        assert figures["exit"] == 0
        assert {"load", "admit", "populate", "schedule", "output"} <= set(figures["cpu_s"])
        assert all(v >= 0 for v in figures["cpu_s"].values())
        assert 0 < sum(figures["cpu_s"].values()) <= figures["total_cpu_s"]
        assert max(figures["peak_rss_mb"].values()) <= figures["total_peak_rss_mb"]
    assert "report" not in plain["cpu_s"] and with_report["cpu_s"]["report"] > 0
    assert (tmp_path / "report.html").read_text().startswith("<!DOCTYPE html>")
    assert with_report["cpu_ratio"] > 0


def test_gangs_tiny_run_places_every_gang_whole_within_a_rack(capsys):
    """bench/gangs.py at 10 gangs of 4 on 40 nodes: every gang placed whole, each inside one rack; JSON on
    stdout, the human line on stderr."""
    assert gangs.main(["--gangs", "10", "--size", "4", "--nodes", "40", "--zones", "2", "--racks-per-zone", "2"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert (out["pods"], out["pods_placed"]) == (40, 40)
    assert (out["gangs_placed_whole"], out["gangs_waiting"], out["gangs_whole_within_one_domain"]) == (10, 0, 10)
    assert out["topology"] == "example.com/rack" and out["pods_per_second"] > 0 and out["peak_rss_mb"] > 0
    assert "10 whole, 0 waiting" in captured.err


def test_gangs_a_gang_that_cannot_fit_whole_is_reported_waiting(capsys):
    """Two racks of two 8-CPU nodes hold one gang of four 4-CPU pods each: the third gang places none of its pods
    (all or nothing) and waits. Without the topology constraint it is no different: the cluster is full."""
    small = ["--gangs", "3", "--size", "4", "--nodes", "4", "--zones", "1", "--racks-per-zone", "2", "--node-cpu", "8"]
    for extra in ([], ["--no-topology"]):
        assert gangs.main([*small, *extra]) == 0
        out = json.loads(capsys.readouterr().out)
        assert (out["gangs_placed_whole"], out["gangs_waiting"], out["pods_placed"]) == (2, 1, 8)
    assert out["topology"] is None


def test_gangs_whole_command_places_as_the_in_process_run(capsys):
    """--whole-command runs the CLI on a file as a child: every pod lands on the node simulate() in this process
    gives it, and the CPU seconds are the child's (more than nothing: it starts an interpreter)."""
    small = ["--gangs", "4", "--size", "3", "--nodes", "12", "--zones", "2", "--racks-per-zone", "2"]
    docs = gangs.documents(gangs.parser().parse_args(small))
    inside, child = gangs.in_process(docs, 1), gangs.whole_command(docs, 1)
    assert sorted(child[0], key=str) == sorted(inside[0], key=str)
    assert sum(1 for _, node in child[0] if node) == 12 and child[2] > 0 and child[3] > 0
    assert gangs.main([*small, "--whole-command"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["mode"], out["gangs_placed_whole"], out["gangs_whole_within_one_domain"]) == ("whole command", 4, 4)
