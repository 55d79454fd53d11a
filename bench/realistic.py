"""A realistic cluster, simulated whole: `kubesched simulate` on 2,000 nodes and 20,000 pods.

    python3 bench/realistic.py                      # generate, then time the whole command
    python3 bench/realistic.py --nodes 500 --pods 5000 --keep out/   # smaller; keep the manifests
    python3 bench/realistic.py --nodes 32 --pods 300 --generate-only cluster.yaml   # only write them
    kubesched simulate <(python3 bench/realistic.py --nodes 32 --pods 300 --generate-only -)
    python3 bench/realistic.py --phases             # `simulate --output table`: CPU and peak RSS per phase
    python3 bench/realistic.py --phases --report    # and again with --report: what the report costs

The mix is what a production cluster holds, as `kubectl get -o yaml` would print it:
- nodes in three zones: a general pool, a tainted high-memory pool and a tainted GPU pool;
- DaemonSet pods, one per node per DaemonSet, pinned as the DaemonSet controller pins them
  (matchFields on metadata.name) and tolerating every taint;
- Deployments (ReplicaSets with their pods, so the system default spreading applies): zone
  spread with DoNotSchedule, required or preferred hostname anti-affinity, pods with affinity
  to a cache Deployment, high-memory pods tolerating their pool's taint, GPU pods.
Every pod is pending; the scheduler places all of them. Reported: wall and CPU seconds of the
whole command (load, schedule, write the JSON output), its peak RSS, and pods scheduled. With --phases,
bench/phases.py's figures instead: CPU seconds and peak RSS per phase of `simulate --output table`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

import yaml

Obj = dict[str, Any]
ZONES = ("zone-a", "zone-b", "zone-c")
DAEMONSETS = (("kube-proxy", "100m", "64Mi"), ("node-exporter", "50m", "32Mi"), ("log-agent", "100m", "128Mi"))


def node(i: int, pool: str) -> Obj:
    name = f"{pool}-{i:05d}"
    shape = {
        "general": {"cpu": "8", "memory": "32Gi", "pods": "110"},
        "highmem": {"cpu": "16", "memory": "128Gi", "pods": "110"},
        "gpu": {"cpu": "32", "memory": "256Gi", "pods": "110", "nvidia.com/gpu": "8"},
    }[pool]
    taints = {
        "general": [],
        "highmem": [{"key": "dedicated", "value": "highmem", "effect": "NoSchedule"}],
        "gpu": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
    }[pool]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "topology.kubernetes.io/zone": ZONES[i % len(ZONES)],
                "node.kubernetes.io/pool": pool,
            },
        },
        "spec": {"taints": taints} if taints else {},
        "status": {
            "capacity": dict(shape),
            "allocatable": dict(shape),
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def container(cpu: str, memory: str, extra: dict[str, str] | None = None) -> Obj:
    """Extended resources (GPUs) are not overcommitted: their limits equal the requests, as the API demands."""
    resources: Obj = {"requests": {"cpu": cpu, "memory": memory, **(extra or {})}}
    if extra:
        resources["limits"] = dict(extra)
    return {"name": "main", "image": "registry.example/app:1.0", "resources": resources}


def daemonset_pod(ds: str, cpu: str, memory: str, node_name: str) -> Obj:
    """As the DaemonSet controller creates it: pinned by matchFields, tolerating everything."""
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{ds}-{node_name}",
            "namespace": "kube-system",
            "labels": {"app": ds},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "DaemonSet",
                    "name": ds,
                    "uid": f"ds-{ds}",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "priorityClassName": "system-node-critical",
            "affinity": {
                "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
            },
            "tolerations": [{"operator": "Exists"}],
            "containers": [container(cpu, memory)],
        },
    }


def deployment(rng: random.Random, i: int, replicas: int, kind: str) -> list[Obj]:
    """A ReplicaSet and its pods; `kind` picks the scheduling constraints of the template."""
    app = f"app-{i:04d}"
    ns = f"team-{i % 20:02d}"
    labels = {"app": app, "pod-template-hash": f"h{i:04d}"}
    cpu = rng.choice(["100m", "250m", "500m", "1"])
    memory = rng.choice(["128Mi", "512Mi", "1Gi", "2Gi"])
    spec: Obj = {"containers": [container(cpu, memory)]}
    select = {"matchLabels": {"app": app}}
    if kind in ("spread", "spread-anti"):
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": select,
            },
            {
                "maxSkew": 2,
                "topologyKey": "kubernetes.io/hostname",
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": select,
            },
        ]
    if kind == "spread-anti":
        spec["affinity"] = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": select, "topologyKey": "kubernetes.io/hostname"}
                ]
            }
        }
    elif kind == "preferred-anti":
        spec["affinity"] = {
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 100,
                        "podAffinityTerm": {"labelSelector": select, "topologyKey": "kubernetes.io/hostname"},
                    }
                ]
            }
        }
    elif kind == "near-cache":
        spec["affinity"] = {
            "podAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 50,
                        "podAffinityTerm": {
                            "labelSelector": {"matchLabels": {"tier": "cache"}},
                            "topologyKey": "topology.kubernetes.io/zone",
                            "namespaceSelector": {},
                        },
                    }
                ]
            }
        }
    elif kind == "cache":
        labels["tier"] = "cache"
    elif kind == "highmem":
        spec["containers"] = [container("2", "16Gi")]
        spec["nodeSelector"] = {"node.kubernetes.io/pool": "highmem"}
        spec["tolerations"] = [{"key": "dedicated", "operator": "Equal", "value": "highmem", "effect": "NoSchedule"}]
    elif kind == "gpu":
        spec["containers"] = [container("4", "32Gi", {"nvidia.com/gpu": "1"})]
        spec["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    rs_name = f"{app}-h{i:04d}"
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": rs_name, "namespace": ns, "uid": f"rs-{i}", "labels": labels},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": spec},
        },
    }
    owner = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs_name, "uid": f"rs-{i}", "controller": True}]
    pods = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"{rs_name}-{j:05d}",
                "namespace": ns,
                "labels": dict(labels),
                "ownerReferences": owner,
            },
            "spec": json.loads(json.dumps(spec)),
        }
        for j in range(replicas)
    ]
    return [rs, *pods]


def cluster(nodes: int, pods: int, seed: int = 1) -> list[Obj]:
    return list(iter_cluster(nodes, pods, seed))


def iter_cluster(nodes: int, pods: int, seed: int = 1) -> Iterator[Obj]:
    """The objects one by one, so that a million pods are written without all being held."""
    rng = random.Random(seed)
    gpu, highmem = max(1, nodes // 20), max(1, nodes // 10)
    pools = [("general", nodes - gpu - highmem), ("highmem", highmem), ("gpu", gpu)]
    node_names = [f"{pool}-{i:05d}" for pool, n in pools for i in range(n)]
    for pool, n in pools:
        yield from (node(i, pool) for i in range(n))
    yield from ({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"team-{t:02d}"}} for t in range(20))
    for ds, cpu, memory in DAEMONSETS:
        yield from (daemonset_pod(ds, cpu, memory, n) for n in node_names)
    left = pods - len(DAEMONSETS) * len(node_names)
    kinds = ["spread"] * 4 + ["spread-anti"] * 2 + ["preferred-anti"] * 2 + ["near-cache"] * 2 + ["plain"] * 2
    i = 0
    for special, share in (("cache", 0.02), ("highmem", 0.03), ("gpu", 0.01)):
        n = max(1, int(left * share))
        yield from deployment(rng, i, n, special)
        i += 1
        left -= n
    while left > 0:
        replicas = min(left, rng.choice([3, 5, 10, 20, 50, 100]))
        kind = rng.choice(kinds)
        if kind == "spread-anti":
            replicas = min(replicas, 20)  # one per host among a few thousand hosts
        yield from deployment(rng, i, replicas, kind)
        i += 1
        left -= replicas


def write_manifests(objs: Iterable[Obj], out: TextIO) -> None:
    yaml.dump_all(objs, out, Dumper=yaml.CSafeDumper, sort_keys=False)


def generate_only(objs: Iterable[Obj], target: str) -> None:
    """Write the manifests without running anything: to a file (.yaml, .yml, .json), `-` (stdout), or as
    cluster.yaml in a directory; a line on stderr says what went where. The objects are counted as written."""
    counts: dict[str, int] = {}

    def counted() -> Iterator[Obj]:
        for o in objs:
            counts[o["kind"]] = counts.get(o["kind"], 0) + 1
            yield o

    if target == "-":
        try:
            write_manifests(counted(), sys.stdout)
            sys.stdout.flush()
        except BrokenPipeError:  # `| head`: the reader has what it wanted
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return
        where = "standard output"
    else:
        path = Path(target)
        if path.suffix not in (".yaml", ".yml", ".json") or path.is_dir():
            path.mkdir(parents=True, exist_ok=True)
            path = path / "cluster.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w") as f:
            write_manifests(counted(), f)
        where = str(path)
    made = ", ".join(f"{n} {kind}s" for kind, n in counts.items())
    print(f"realistic.py: wrote {sum(counts.values())} objects ({made}) to {where}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=2000)
    ap.add_argument("--pods", type=int, default=20000, help="all pods, DaemonSet pods included")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", type=Path, help="write the manifests and the output here instead of a temporary dir")
    ap.add_argument(
        "--generate-only",
        metavar="DIR|FILE",
        help="write the manifests (to FILE, DIR/cluster.yaml, or - for stdout) and run nothing",
    )
    ap.add_argument(
        "--phases", action="store_true", help="time `simulate --output table` phase by phase (bench/phases.py)"
    )
    ap.add_argument("--report", action="store_true", help="with --phases: run again with --report and compare")
    args = ap.parse_args(argv)
    if args.generate_only:
        generate_only(iter_cluster(args.nodes, args.pods, args.seed), args.generate_only)
        return 0
    objs = cluster(args.nodes, args.pods, args.seed)
    out = args.keep or Path(tempfile.mkdtemp(prefix="kubesched-realistic-"))
    out.mkdir(parents=True, exist_ok=True)
    manifests = out / "cluster.yaml"
    with manifests.open("w") as f:
        write_manifests(objs, f)
    n_pods = sum(1 for o in objs if o["kind"] == "Pod")
    if args.phases:
        return _phases(manifests, out, args.report)
    cmd = [sys.executable, "-m", "kubesched", "simulate", str(manifests), "--output", "json", "--record", "none"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with (out / "result.json").open("w") as sink:
        rc = subprocess.run(cmd, stdout=sink).returncode
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if rc != 0:
        print(f"kubesched simulate exited {rc}", file=sys.stderr)
        return 1
    doc = json.loads((out / "result.json").read_text())
    results: dict[str, int] = {}
    for p in doc["pods"]:
        results[p["result"]] = results.get(p["result"], 0) + 1
    report = {
        "nodes": args.nodes,
        "pods": n_pods,
        "results": results,
        "wall_s": round(wall, 1),
        "cpu_s": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1),
        "peak_rss_mb": round(after.ru_maxrss / 1024, 1),
        "manifest_mb": round(manifests.stat().st_size / 2**20, 1),
        "output_mb": round((out / "result.json").stat().st_size / 2**20, 1),
    }
    print(json.dumps(report))
    return 0


def _phases(manifests: Path, out: Path, report: bool) -> int:
    """bench/phases.py on the manifests (`--output table --seed 1`); with `report`, once more with --report."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from phases import measure

    plain = measure([str(manifests), "-q", "--output", "table", "--seed", "1"])
    print(json.dumps({"mode": "table", **plain}))
    if report:
        html = out / "report.html"
        with_report = measure([str(manifests), "-q", "--output", "table", "--seed", "1", "--report", str(html)])
        ratio = with_report.get("total_cpu_s", 0) / max(plain.get("total_cpu_s", 0), 1e-9)
        print(json.dumps({"mode": "table --report", **with_report, "cpu_ratio": round(ratio, 2)}))
    return 0 if plain.get("exit") == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
