"""Workload-aware (gang) scheduling at scale, in this process: N gangs of K pods on M nodes in zones and racks.

    python3 bench/gangs.py                                     # 1000 gangs of 8 on 5000 nodes, topology on racks
    python3 bench/gangs.py --gangs 100 --size 8 --nodes 500
    python3 bench/gangs.py --gangs 10 --size 4 --nodes 40 --no-topology
    python3 bench/gangs.py --whole-command                     # `python3 -m kubesched simulate` on a file

Nodes are labelled `topology.kubernetes.io/zone` (--zones zones) and `example.com/rack`
(--racks-per-zone racks in each zone), round robin. Each gang is a PodGroup
(`scheduling.k8s.io/v1alpha2`) with a gang policy of minCount K and, unless --no-topology,
a topology constraint on --topology-key (the rack by default), and K identical pods naming
it. The pods run through `kubesched.simulate` with the gates GenericWorkload, GangScheduling
and TopologyAwareWorkloadScheduling on (docs/workload-aware.md).

Reported as JSON on stdout, one short line on stderr: wall and CPU seconds
(time.process_time) of the `simulate` call (objects decoded and validated, every gang
tried, the result built), pods placed per second of each, gangs placed whole and gangs
waiting (fewer than K placed), whether each whole gang is within one domain of the key,
and the process's peak RSS.

With --whole-command the objects are written to one JSON file in a temporary directory and
`python3 -m kubesched simulate --output json --record none` runs on it as a child process,
as a user would run it: its wall time and CPU seconds (utime + stime of the child, from
getrusage(RUSAGE_CHILDREN)) cover the interpreter's start, the imports, reading and
validating the file, the run and writing the JSON result; the peak RSS is the child's.
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
from collections import defaultdict
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parents[1] / "src"
sys.path.insert(0, str(SRC))

from kubesched.simulator.api import simulate  # noqa: E402

Obj = dict[str, Any]
GATES = "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true"
ZONE = "topology.kubernetes.io/zone"
RACK = "example.com/rack"
KEYS = {"zone": ZONE, "rack": RACK, "host": "kubernetes.io/hostname"}


def node(i: int, zones: int, racks_per_zone: int, cpu: int) -> Obj:
    name = f"node-{i:05d}"
    zone = i % zones
    rack = (i // zones) % racks_per_zone
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, ZONE: f"zone-{zone}", RACK: f"zone-{zone}-rack-{rack}"},
        },
        "status": {"allocatable": {"cpu": str(cpu), "memory": f"{cpu * 4}Gi", "pods": "110"}},
    }


def pod_group(g: int, size: int, topology_key: str | None) -> Obj:
    spec: Obj = {"schedulingPolicy": {"gang": {"minCount": size}}}
    if topology_key is not None:
        spec["schedulingConstraints"] = {"topology": [{"key": topology_key}]}
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha2",
        "kind": "PodGroup",
        "metadata": {"name": f"gang-{g:05d}", "namespace": "default"},
        "spec": spec,
    }


def pod(g: int, k: int, cpu: int) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"gang-{g:05d}-{k}", "namespace": "default"},
        "spec": {
            "schedulingGroup": {"podGroupName": f"gang-{g:05d}"},
            "containers": [
                {
                    "name": "trainer",
                    "image": "registry.example/trainer",
                    "resources": {"requests": {"cpu": str(cpu), "memory": f"{cpu * 2}Gi"}},
                }
            ],
        },
    }


def documents(args: argparse.Namespace) -> list[Obj]:
    key = KEYS[args.topology_key] if args.topology else None
    docs: list[Obj] = [node(i, args.zones, args.racks_per_zone, args.node_cpu) for i in range(args.nodes)]
    gangs: list[Obj] = []
    for g in range(args.gangs):
        gangs.append(pod_group(g, args.size, key))
        gangs += [pod(g, k, args.pod_cpu) for k in range(args.size)]
    # The groups arrive in a seeded order (each group's pods after it): the queue is not handed gang-00000 first.
    order = list(range(args.gangs))
    random.Random(args.seed).shuffle(order)
    per = args.size + 1
    return docs + [o for g in order for o in gangs[g * per : (g + 1) * per]]


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="gangs.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--gangs", type=int, default=1000, help="PodGroups (default 1000)")
    ap.add_argument("--size", type=int, default=8, help="pods per gang, its minCount (default 8)")
    ap.add_argument("--nodes", type=int, default=5000, help="nodes (default 5000)")
    ap.add_argument("--zones", type=int, default=10, help="zones the nodes are spread over (default 10)")
    ap.add_argument("--racks-per-zone", type=int, default=10, help="racks in each zone (default 10)")
    ap.add_argument("--topology", action=argparse.BooleanOptionalAction, default=True, help="topology constraint")
    ap.add_argument(
        "--topology-key", choices=sorted(KEYS), default="rack", help="the constraint's label (default rack)"
    )
    ap.add_argument("--node-cpu", type=int, default=32, help="CPUs per node (default 32)")
    ap.add_argument("--pod-cpu", type=int, default=4, help="CPUs each pod requests (default 4)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--whole-command",
        action="store_true",
        help="run `python3 -m kubesched simulate` on a file as a child process instead of calling simulate()",
    )
    return ap


Placements = list[tuple[str | None, str | None]]  # (pod group, node or None) for every pod


def in_process(docs: list[Obj], seed: int) -> tuple[Placements, float, float, float]:
    """simulate() in this process: placements, wall and CPU seconds of the call, this process's peak RSS in MB."""
    cpu0, start = time.process_time(), time.perf_counter()
    sim = simulate(docs, seed=seed, record=False, feature_gates=GATES)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return [(p.pod_group, p.node) for p in sim.pods], wall, cpu, rss


def whole_command(docs: list[Obj], seed: int) -> tuple[Placements, float, float, float]:
    """The CLI on a file, as a child: placements, its wall and CPU seconds (utime + stime), its peak RSS in MB."""
    with tempfile.TemporaryDirectory(prefix="gangs-") as tmp:
        path = Path(tmp) / "cluster.json"
        path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}))
        cmd = [sys.executable, "-m", "kubesched", "simulate", "-q", "--output", "json", "--record", "none"]
        cmd += ["--seed", str(seed), "--feature-gates", GATES, str(path)]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")])))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"gangs.py: {' '.join(cmd[:4])} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    pods = json.loads(done.stdout)["pods"]
    return [(p.get("podGroup"), p.get("node")) for p in pods], wall, cpu, after.ru_maxrss / 1024


def run(args: argparse.Namespace) -> dict[str, Any]:
    docs = documents(args)
    placements, wall, cpu, rss = (whole_command if args.whole_command else in_process)(docs, args.seed)
    labels = {d["metadata"]["name"]: d["metadata"]["labels"] for d in docs if d["kind"] == "Node"}
    members: dict[str, list[str | None]] = defaultdict(list)
    for group, node_name in placements:
        if group is not None:
            members[group].append(node_name)
    whole = [nodes for nodes in members.values() if len(nodes) == args.size and all(nodes)]
    key = KEYS[args.topology_key]
    in_one_domain = sum(1 for nodes in whole if len({labels[n][key] for n in nodes if n}) == 1)
    placed = sum(1 for _, node_name in placements if node_name)
    return {
        "mode": "whole command" if args.whole_command else "in process",
        "gangs": args.gangs,
        "size": args.size,
        "nodes": args.nodes,
        "zones": args.zones,
        "racks": args.zones * args.racks_per_zone,
        "topology": KEYS[args.topology_key] if args.topology else None,
        "seed": args.seed,
        "pods": args.gangs * args.size,
        "pods_placed": placed,
        "gangs_placed_whole": len(whole),
        "gangs_waiting": args.gangs - len(whole),
        "gangs_whole_within_one_domain": in_one_domain,
        "seconds": round(wall, 2),
        "cpu_seconds": round(cpu, 2),
        "pods_per_second": round(placed / wall, 1) if wall else 0.0,
        "pods_per_cpu_second": round(placed / cpu, 1) if cpu else 0.0,
        "peak_rss_mb": round(rss, 1),
    }


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if min(args.gangs, args.size, args.nodes, args.zones, args.racks_per_zone) < 1:
        parser().error("--gangs, --size, --nodes, --zones and --racks-per-zone must be at least 1")
    out = run(args)
    print(json.dumps(out, indent=1))
    print(
        f"{out['mode']}: {out['gangs']} gangs x {out['size']} on {out['nodes']} nodes "
        f"(topology {out['topology'] or 'none'}): "
        f"{out['gangs_placed_whole']} whole, {out['gangs_waiting']} waiting; {out['pods_placed']} pods in "
        f"{out['seconds']} s ({out['pods_per_second']} pods/s), {out['cpu_seconds']} CPU s, "
        f"peak RSS {out['peak_rss_mb']} MB",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
