"""bench/live_side_by_side.py: upstream kube-scheduler and `kubesched run` through one real API server.

The whole script runs at a tiny size (both schedulers, all three workloads) and must
report every pod bound within the rules; its placement check is also tried on
placements that break each rule, so that a clean report means something.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kubesched_testing.controlplane import ASSETS_ENV, assets_dir, missing_assets_reason

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import live_side_by_side as sbs  # noqa: E402


def test_both_schedulers_bind_every_pod_of_every_workload() -> None:
    if assets_dir() is None:
        pytest.skip(missing_assets_reason())
    nodes, init, pods = 20, 5, 15  # anti-affinity: one green pod on every node
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "live_side_by_side.py"), "--json"]
        + ["--nodes", str(nodes), "--init-pods", str(init), "--pods", str(pods)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, ASSETS_ENV: str(assets_dir())},
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rounds = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert sorted((r["workload"], r["scheduler"]) for r in rounds) == sorted(
        (w, s) for w in sbs.WORKLOADS for s in ("upstream", "kubesched")
    )
    for r in rounds:
        assert r["bound"] == pods, r
        assert r["problems"] == [], r
        # Upstream's event broadcaster may still hold the last few when it is stopped; kubesched flushes on exit.
        assert set(r["events"]) == {"Scheduled"}, r
        if r["scheduler"] == "kubesched":
            assert r["events"]["Scheduled"] == pods, r
        assert r["scheduler_cpu_s"] >= 0 and r["seconds"] > 0, r
        assert r["scheduler_cpu_with_events_s"] >= r["scheduler_cpu_s"], r


def test_pods_created_before_the_start_and_a_baseline_tree() -> None:
    """--precreated: every pod waits before the scheduler starts, whose CPU then counts from its start (imports and
    lists included); --scheduler baseline runs kubesched from another src (here this one)."""
    if assets_dir() is None:
        pytest.skip(missing_assets_reason())
    pods = 12
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "live_side_by_side.py"), "--workload", "SchedulingBasic"]
        + ["--nodes", "5", "--init-pods", "0", "--pods", str(pods), "--precreated"]
        + ["--scheduler", "upstream", "baseline", "--baseline-src", str(ROOT / "src")],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, ASSETS_ENV: str(assets_dir())},
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rounds = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert [r["scheduler"] for r in rounds] == ["upstream", "baseline"]
    for r in rounds:
        assert r["precreated"] and r["bound"] == pods and r["problems"] == [], r
        assert r["events_written"] == pods, r  # the wait for events saw them all
        assert r["scheduler_cpu_with_events_s"] > 0, r
        assert r["cpu_per_1000"] == round(1000 * r["scheduler_cpu_with_events_s"] / pods, 2), r
    assert rounds[1]["scheduler_cpu_with_events_s"] > 0.2, rounds[1]  # the Python process's imports are counted
    assert "CPU s / 1,000 pods" in done.stdout and "SchedulingBasic baseline: median" in done.stdout


class FakeClient:
    """What check_placement lists: nodes, and pods by namespace."""

    def __init__(self, nodes: list[dict[str, Any]], pods: list[dict[str, Any]]) -> None:
        self.nodes, self.pods = nodes, pods

    def list_items(self, path: str) -> list[dict[str, Any]]:
        if path == "/api/v1/nodes":
            return self.nodes
        ns = path.split("/")[4]
        return [p for p in self.pods if p["metadata"]["namespace"] == ns]


def _placed(w: sbs.Workload, nodes: list[dict[str, Any]], hosts: list[int], init: int) -> list[dict[str, Any]]:
    """The workload's init pods then measured pods, pod i on nodes[hosts[i]]."""
    pods = [w.init_pod(i) for i in range(init)] + [w.measured_pod(i) for i in range(len(hosts) - init)]
    for pod, host in zip(pods, hosts, strict=True):
        pod["spec"]["nodeName"] = nodes[host]["metadata"]["name"]
    return pods


def _check(name: str, hosts: list[int], init: int, nodes: int = 6) -> list[str]:
    w = sbs.WORKLOADS[name]
    made = w.nodes(nodes)
    client = FakeClient(made, _placed(w, made, hosts, init))
    return sbs.check_placement(client, w, init, len(hosts) - init)  # type: ignore[arg-type]


def test_placement_check_passes_a_valid_placement() -> None:
    assert _check("SchedulingBasic", [0, 1, 2, 0, 1], init=2) == []
    assert _check("SchedulingPodAntiAffinity", [0, 1, 2, 3, 4, 5], init=2) == []
    assert _check("TopologySpreading", [0, 1, 2, 3, 4], init=2) == []


def test_placement_check_finds_each_broken_rule() -> None:
    assert any("share hosts" in p for p in _check("SchedulingPodAntiAffinity", [0, 1, 2, 3, 3], init=2))
    # Six spread pods all in the first zone (nodes 0 and 3 of six, zones round robin): skew 6 > maxSkew 5.
    assert any("zone skew" in p for p in _check("TopologySpreading", [1, 0, 3, 0, 3, 0, 3], init=1))
    # pod-default asks 100m CPU: 41 pods on one 4-CPU node are over its allocatable.
    assert any("over capacity" in p for p in _check("SchedulingBasic", [0] * 41, init=1))


def test_placement_check_finds_unbound_and_missing_pods() -> None:
    w = sbs.WORKLOADS["SchedulingBasic"]
    made = w.nodes(2)
    pods = _placed(w, made, [0, 1, 0], init=1)
    del pods[2]["spec"]["nodeName"]
    problems = sbs.check_placement(FakeClient(made, pods), w, 1, 3)  # type: ignore[arg-type]
    assert problems == [f"namespace-2: 2 pods of 3, unbound ['{pods[2]['metadata']['name']}']"]


def test_installed_copy_holds_every_module_with_its_bytecode(tmp_path: Path) -> None:
    """The schedulers start from a byte-compiled copy of the tree, as an installed wheel: every module is there
    with bytecode Python accepts for it (so no start compiles a module), and the checkout is left as it was."""
    import importlib.util

    src = ROOT / "src"
    copy = sbs.installed_copy(src, tmp_path / "tree")
    modules = sorted(p.relative_to(src) for p in (src / "kubesched").rglob("*.py"))
    assert sorted(p.relative_to(copy) for p in (copy / "kubesched").rglob("*.py")) == modules
    for rel in modules:
        assert (copy / rel).read_bytes() == (src / rel).read_bytes(), rel
        # What the import system checks before it takes bytecode instead of compiling: its magic number, and the
        # source's modification time and size recorded in the header (PEP 552's timestamp-based .pyc).
        header = Path(importlib.util.cache_from_source(str(copy / rel))).read_bytes()[:16]
        stat = (copy / rel).stat()
        assert header[:4] == importlib.util.MAGIC_NUMBER, rel
        assert int.from_bytes(header[4:8], "little") == 0, rel
        assert int.from_bytes(header[8:12], "little") == int(stat.st_mtime) & 0xFFFFFFFF, rel
        assert int.from_bytes(header[12:16], "little") == stat.st_size & 0xFFFFFFFF, rel
