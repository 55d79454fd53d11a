"""A 100-point `kubesched sweep` on a modest cluster (50 nodes, 500 pods), timed as a user runs it.

    python3 bench/sweep.py [--workers 1 2] [--ray local]

Writes the cluster, a node template, a bin-packing configuration and the spec (grid: 5 node
counts x 2 configurations x 10 seeds) to a temporary folder, then runs the whole command
once per setting and reports its wall time, the CPU time of it and its workers (getrusage
of the children), the per-point simulation wall time (median and max), and a digest of the
answers (per point: scheduled, pending, nodes used, utilisation), equal across settings.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "testing"))  # kubesched_testing: not in the wheel
from kubesched_testing.configs import most_allocated  # noqa: E402 - after the paths to this tree

ZONES = ("zone-a", "zone-b", "zone-c")
SPEC = """\
base: [cluster.yaml]
template: node.yaml
grid:
  nodes: [0, 5, 10, 15, 20]
  config: [default, most-allocated.yaml]
  seed: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
"""
MOST_ALLOCATED = most_allocated()


def node(name: str, zone: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}},
        "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}},
    }


def deployment(name: str, replicas: int, cpu: str) -> dict[str, Any]:
    spread = {
        "maxSkew": 1,
        "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": {"app": name}},
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "topologySpreadConstraints": [spread],
                    "containers": [
                        {"name": "c", "image": name, "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}
                    ],
                },
            },
        },
    }


def cluster() -> list[dict[str, Any]]:
    """50 nodes of 8 CPUs in three zones; 300 Deployment pods and 200 bare pods asking ~450 CPUs in all."""
    rng = random.Random(1)
    docs = [node(f"node-{i:02d}", ZONES[i % 3]) for i in range(50)]
    docs += [deployment(f"app-{i}", 60, cpu) for i, cpu in enumerate(("500m", "1", "1", "500m", "1500m"))]
    for j in range(200):
        cpu = rng.choice(("250m", "500m", "1", "2"))
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"batch-{j:03d}", "labels": {"app": "batch"}},
                "spec": {"containers": [{"name": "c", "image": "b", "resources": {"requests": {"cpu": cpu}}}]},
            }
        )
    return docs


def run(spec: Path, extra: list[str]) -> dict[str, Any]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "kubesched", "sweep", str(spec), "--output", "json", *extra],
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    doc = json.loads(done.stdout)
    points = [p["wallSeconds"] for p in doc["points"]]
    answers = [[p["index"], p["scheduled"], p["pending"], p["nodesUsed"], p["utilisation"]] for p in doc["points"]]
    return {
        "setting": " ".join(extra),
        "points": len(points),
        "commandWall": round(wall, 2),
        "sweepWall": doc["wallSeconds"],
        "cpu": round((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 2),
        "pointMedian": round(statistics.median(points), 3),
        "pointMax": round(max(points), 3),
        "answers": hashlib.sha256(json.dumps(answers).encode()).hexdigest()[:12],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--ray", default=None, help="also run on Ray at this address (e.g. local)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        (root / "cluster.yaml").write_text(yaml.safe_dump_all(cluster(), sort_keys=False))
        (root / "node.yaml").write_text(yaml.safe_dump(node("extra", "zone-a")))
        (root / "most-allocated.yaml").write_text(yaml.safe_dump(MOST_ALLOCATED))
        (root / "sweep.yaml").write_text(SPEC)
        settings = [["--workers", str(w)] for w in args.workers]
        if args.ray:
            settings.append(["--ray", args.ray, "--workers", str(max(args.workers))])
        for extra in settings:
            print(json.dumps(run(root / "sweep.yaml", extra)), flush=True)


if __name__ == "__main__":
    main()
