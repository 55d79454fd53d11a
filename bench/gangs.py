"""Workload-aware (gang) scheduling at scale, in this process: N gangs of K pods on M nodes in zones and racks.

    python3 bench/gangs.py                                     # 1000 gangs of 8 on 5000 nodes, topology on racks
    python3 bench/gangs.py --gangs 100 --size 8 --nodes 500
    python3 bench/gangs.py --gangs 10 --size 4 --nodes 40 --no-topology

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
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

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
    return ap


def run(args: argparse.Namespace) -> dict[str, Any]:
    docs = documents(args)
    cpu0, start = time.process_time(), time.perf_counter()
    sim = simulate(docs, seed=args.seed, record=False, feature_gates=GATES)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu0
    labels = {d["metadata"]["name"]: d["metadata"]["labels"] for d in docs if d["kind"] == "Node"}
    members: dict[str, list[str | None]] = defaultdict(list)
    for p in sim.pods:
        if p.pod_group is not None:
            members[p.pod_group].append(p.node)
    whole = [nodes for nodes in members.values() if len(nodes) == args.size and all(nodes)]
    key = KEYS[args.topology_key]
    in_one_domain = sum(1 for nodes in whole if len({labels[n][key] for n in nodes if n}) == 1)
    placed = sum(1 for p in sim.pods if p.scheduled)
    return {
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
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if min(args.gangs, args.size, args.nodes, args.zones, args.racks_per_zone) < 1:
        parser().error("--gangs, --size, --nodes, --zones and --racks-per-zone must be at least 1")
    out = run(args)
    print(json.dumps(out, indent=1))
    print(
        f"{out['gangs']} gangs x {out['size']} on {out['nodes']} nodes (topology {out['topology'] or 'none'}): "
        f"{out['gangs_placed_whole']} whole, {out['gangs_waiting']} waiting; {out['pods_placed']} pods in "
        f"{out['seconds']} s ({out['pods_per_second']} pods/s), {out['cpu_seconds']} CPU s, "
        f"peak RSS {out['peak_rss_mb']} MB",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
