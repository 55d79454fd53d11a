"""bench/scheduler_perf.py at 1/100 scale: every workload schedules all its measured pods, in-process and
through `kubesched simulate` on the manifests the command mode writes, so the benchmark cannot rot."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from kubesched.cli import main

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = Path("/work/shared/reference/scheduler-perf/workloads.yaml")


def _load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("scheduler_perf", ROOT / "bench" / "scheduler_perf.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


bench = _load_bench()


@pytest.mark.parametrize("spec", bench.SPECS, ids=lambda s: s.name)
def test_workload_schedules_all_measured_pods(spec, tmp_path, capsys):
    small = bench.scaled(spec, 100)
    setup = bench.run_setup(small)
    where = bench.placements(small, setup.cluster)
    result = bench.run_inprocess(small, setup)
    assert result["bound"] == small.measure.total() > 0

    assert len(where) == sum(p.total() for p in small.setup if "gated" not in p.template)
    _, files = bench.write_manifests(small, where, tmp_path)
    assert main(["simulate", *map(str, files), "--output", "json", "--record", "none", "--seed", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    measured = [p for p in out["pods"] if p["namespace"] == small.measure.namespace]
    assert len(measured) == small.measure.total()
    assert all(p["node"] for p in measured), [p for p in measured if not p["node"]][:3]
    if small.churn is not None or small.deletes is not None:
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
    assert {s.name: s.threshold for s in bench.SPECS} == upstream
