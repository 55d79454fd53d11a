"""`kubesched sweep SPEC.yaml`: grids and samples of simulations, on processes and on Ray."""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.cli import main
from kubesched.simulator.sweep import load_spec, sweep
from kubesched_testing.configs import most_allocated

ROOT = Path(__file__).resolve().parents[1]
TIMINGS = ("wallSeconds", "cpuSeconds")


def _node(name: str, cpu: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"topology.kubernetes.io/zone": "zone-a"}},
        "status": {"allocatable": {"cpu": str(cpu), "memory": "16Gi", "pods": "110"}},
    }


def _pod(name: str, cpu: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "app", "resources": {"requests": {"cpu": str(cpu)}}}]},
    }


MOST_ALLOCATED = most_allocated()


@pytest.fixture
def spec_dir(tmp_path: Path) -> Path:
    """Five pending pods of 3 CPUs and no nodes; templates of 4 CPUs; a bin-packing configuration."""
    (tmp_path / "pods.yaml").write_text(yaml.safe_dump_all([_pod(f"p{i}", 3) for i in range(5)]))
    (tmp_path / "node.yaml").write_text(yaml.safe_dump(_node("worker", 4)))
    (tmp_path / "big.yaml").write_text(yaml.safe_dump(_node("big", 8)))
    (tmp_path / "most.yaml").write_text(yaml.safe_dump(MOST_ALLOCATED))
    return tmp_path


def _spec(d: Path, text: str) -> str:
    (d / "sweep.yaml").write_text(text)
    return str(d / "sweep.yaml")


GRID = """\
base: [pods.yaml]
template: node.yaml
grid:
  nodes: [0, 1, 2, 3, 4, 5]
  config: [default, most.yaml]
"""


def _without_timings(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in row.items() if k not in TIMINGS} for row in rows]


def test_a_grid_on_two_processes(spec_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = _spec(spec_dir, GRID)
    assert main(["sweep", spec, "--workers", "2", "--output", "json"]) == 0
    out = capsys.readouterr()
    doc = json.loads(out.out)
    assert doc["engine"] == "processes" and doc["workers"] == 2 and "12 point(s)" in out.err
    rows = doc["points"]
    assert [(r["index"], r["nodes"], r["config"]) for r in rows[:3]] == [
        (0, 0, "default"),
        (1, 0, "most.yaml"),
        (2, 1, "default"),
    ]
    # each 4-CPU node holds one 3-CPU pod, whatever the scoring
    assert [r["pending"] for r in rows] == [5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0]
    assert all(r["pods"] == 5 and r["error"] is None and r["wallSeconds"] > 0 for r in rows)
    assert rows[2]["utilisation"]["cpu"] == pytest.approx(0.75)
    assert rows[10]["scheduled"] == 5 and rows[10]["clusterNodes"] == 5 and rows[10]["nodesUsed"] == 5
    # one process gives the same answers
    single = sweep(spec, workers=1)
    assert _without_timings(single.rows) == _without_timings(rows)


def test_templates_and_scale(spec_dir: Path) -> None:
    spec = _spec(
        spec_dir, "base: [pods.yaml]\ngrid:\n  nodes: [2]\n  template: [node.yaml, big.yaml]\n  scale: [0.4, 2]\n"
    )
    rows = sweep(spec, workers=1).rows
    assert [(r["template"], r["scale"], r["pods"], r["pending"]) for r in rows] == [
        ("node.yaml", 0.4, 2, 0),  # in the spec's order; 5 * 0.4 = 2 pods
        ("node.yaml", 2.0, 10, 8),
        ("big.yaml", 0.4, 2, 0),
        ("big.yaml", 2.0, 10, 6),  # two 8-CPU nodes hold two 3-CPU pods each
    ]


def test_a_sample_is_reproducible_and_within_its_ranges(spec_dir: Path) -> None:
    text = (
        "base: [pods.yaml]\ntemplate: node.yaml\n"
        "sample:\n  n: 8\n  randomSeed: 3\n  nodes: {min: 1, max: 6}\n  scale: {min: 0.5, max: 1.5}\n"
        "  config: [default, most.yaml]\n  seed: {min: 10, max: 20}\n"
    )
    spec = load_spec(_spec(spec_dir, text))
    again = load_spec(_spec(spec_dir, text))
    assert spec.points == again.points and len(spec.points) == 8
    for p in spec.points:
        assert 1 <= p.nodes <= 6 and 0.5 <= p.scale <= 1.5 and 10 <= p.seed <= 20 and p.config in spec.configs
    assert len({p.nodes for p in spec.points}) > 1
    rows = sweep(spec.path, workers=1).rows
    for p, row in zip(spec.points, rows, strict=True):
        pods = int(5 * p.scale + 0.5)
        assert row["pods"] == pods and row["pending"] == max(0, pods - p.nodes)


def test_csv_and_table_output(spec_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = _spec(spec_dir, GRID)
    assert main(["sweep", spec, "--workers", "1", "--output", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 12 and rows[3]["config"] == "most.yaml" and rows[3]["pending"] == "4"
    assert float(rows[3]["utilisation.cpu"]) == pytest.approx(0.75)
    # The same as --output json, flattened: every field of a point is a column, with its value.
    assert main(["sweep", spec, "--workers", "1", "--output", "json"]) == 0
    points = json.loads(capsys.readouterr().out)["points"]
    for row, point in zip(rows, points, strict=True):
        flat = {k: v for k, v in point.items() if k != "utilisation"}
        flat.update({f"utilisation.{r}": u for r, u in point["utilisation"].items()})
        assert set(row) == set(flat)
        assert {k: row[k] for k in flat if k not in TIMINGS} == {
            k: "" if v is None else str(v) for k, v in flat.items() if k not in TIMINGS
        }
    assert rows[3]["clusterNodes"] == "1"
    assert main(["sweep", spec, "--workers", "1", "--output", "table"]) == 0
    table = capsys.readouterr().out
    assert "12 point(s)" in table and "most.yaml" in table and "75.0%" in table


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("grid: {nodes: [1]}\n", "sweep.yaml: base: Required value"),
        ("base: [pods.yaml]\nfoo: 1\n", "sweep.yaml: foo: unknown field"),
        (
            "base: [pods.yaml]\ntemplate: node.yaml\ngrid: {nodes: [1, x]}\n",
            "sweep.yaml: grid.nodes[1]: expected a non-negative integer",
        ),
        ("base: [pods.yaml]\ngrid: {nodes: [1]}\n", "sweep.yaml: template: Required value"),
        ("base: [pods.yaml]\ngrid: {nodez: [1]}\n", "sweep.yaml: grid.nodez: unknown field"),
        ("base: [pods.yaml]\ngrid: {seed: []}\n", "sweep.yaml: grid.seed: expected a non-empty list"),
        ("base: [gone.yaml]\n", "sweep.yaml: base: gone.yaml: no such file or directory"),
        ("base: [pods.yaml]\ngrid: {config: [gone.yaml]}\n", "sweep.yaml: config: gone.yaml: no such file"),
        (
            "base: [pods.yaml]\ngrid: {config: [node.yaml]}\n",
            'node.yaml: invalid KubeSchedulerConfiguration: no kind "Node"',
        ),
        (
            "base: [pods.yaml]\ntemplate: most.yaml\ngrid: {nodes: [1]}\n",
            "most.yaml: a node template must hold exactly one Node",
        ),
        ("base: [pods.yaml]\ngrid: {}\nsample: {n: 2}\n", "sweep.yaml: grid, sample: give one of them"),
        ("base: [pods.yaml]\nsample: {n: 0}\n", "sweep.yaml: sample.n: expected 1 to"),
        (
            "base: [pods.yaml]\nsample: {n: 2, scale: {min: 2, max: 1}}\n",
            "sweep.yaml: sample.scale: min 2.0 is above max 1.0",
        ),
        ("base: [pods.yaml]\nsample: {n: 2, seed: {min: 2}}\n", "sweep.yaml: sample.seed: a range needs min and max"),
        (
            "base: [pods.yaml]\nsample: {n: 2, config: {min: 1, max: 2}}\n",
            "sweep.yaml: sample.config: expected a non-empty list",
        ),
        ("[1, 2]\n", "sweep.yaml: a sweep spec is one YAML mapping"),
        ("base: [pods.yaml\n", "sweep.yaml: invalid YAML"),
    ],
)
def test_a_bad_spec_exits_2_naming_file_and_field(
    spec_dir: Path, capsys: pytest.CaptureFixture[str], text: str, needle: str
) -> None:
    assert main(["sweep", _spec(spec_dir, text), "--output", "json"]) == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err.startswith("kubesched: ") and needle in out.err, out.err


def test_missing_spec_and_bad_workers(spec_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", str(spec_dir / "none.yaml")]) == 2
    assert "none.yaml: cannot read" in capsys.readouterr().err
    assert main(["sweep", _spec(spec_dir, GRID), "--workers", "0"]) == 2
    assert "--workers: must be at least 1" in capsys.readouterr().err


def test_ray_missing_is_a_clear_error(
    spec_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError, as where it is not installed
    assert main(["sweep", _spec(spec_dir, GRID), "--ray", "local"]) == 2
    assert "pip install 'kubesched[ray]'" in capsys.readouterr().err


@pytest.mark.skipif(
    importlib.util.find_spec("ray") is None,
    reason="Ray is not installed (pip install 'kubesched[ray]'); CI installs only '.[test]'",
)
def test_the_same_grid_on_a_local_ray(spec_dir: Path) -> None:
    """A new Ray instance on this machine (ray.init(address='local')), in its own process, as a user would run it."""
    spec = _spec(spec_dir, GRID)
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    done = subprocess.run(
        [sys.executable, "-m", "kubesched", "sweep", spec, "--ray", "local", "--workers", "2", "--output", "json"],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["engine"] == "ray" and doc["workers"] == 2
    assert _without_timings(doc["points"]) == _without_timings(sweep(spec, workers=1).rows)
