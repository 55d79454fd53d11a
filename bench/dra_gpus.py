"""DRA at scale, in this process: GPU nodes publishing ResourceSlices, pods claiming GPUs from templates.

    python3 bench/dra_gpus.py                        # 1000 nodes x 8 GPUs, 2000 pods claiming 1-2 GPUs
    python3 bench/dra_gpus.py --nodes 200 --pods 400 --gpus 8

Every node's driver publishes one ResourceSlice of whole GPUs (model, index, driver
version, memory); one DeviceClass selects the driver's devices by CEL. Pods alternate
between a one-GPU and a two-GPU ResourceClaimTemplate; the resourceclaim controller
makes their claims and the scheduler allocates them. Reported: wall and CPU seconds of
the in-process `simulate` call (objects created, claims made, every pod scheduled and
its claim written), pods bound and GPUs allocated.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from kubesched.framework.plugins.dynamicresources.dra_manager import AllocationMemo  # noqa: E402
from kubesched.simulator.load import LoadedInput, add_document, finish_loading  # noqa: E402
from kubesched.simulator.run import build_config, simulate  # noqa: E402

Obj = dict[str, Any]
DRIVER = "gpu.example.com"


def node(i: int) -> Obj:
    name = f"gpu-node-{i:05d}"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"capacity": {"cpu": "64", "memory": "512Gi", "pods": "110"}},
    }


def resource_slice(i: int, gpus: int) -> Obj:
    name = f"gpu-node-{i:05d}"
    devices = [
        {
            "name": f"gpu-{g}",
            "attributes": {
                "model": {"string": "EX-80" if g % 2 == 0 else "EX-40"},
                "index": {"int": g},
                "driverVersion": {"version": "1.4.2"},
            },
            "capacity": {"memory": {"value": "80Gi" if g % 2 == 0 else "40Gi"}},
        }
        for g in range(gpus)
    ]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{name}-{DRIVER}"},
        "spec": {
            "driver": DRIVER,
            "nodeName": name,
            "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


def template(name: str, count: int) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER, "count": count}}]}}
        },
    }


def pod(i: int) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"trainer-{i:05d}", "namespace": "default"},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "registry.example/trainer",
                    "resources": {"requests": {"cpu": "1", "memory": "4Gi"}, "claims": [{"name": "gpu"}]},
                }
            ],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu" if i % 2 else "two-gpus"}],
        },
    }


def documents(nodes: int, gpus: int, pods: int) -> list[Obj]:
    docs: list[Obj] = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": DRIVER},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
        },
        template("one-gpu", 1),
        template("two-gpus", 2),
    ]
    for i in range(nodes):
        docs += [node(i), resource_slice(i, gpus)]
    docs += [pod(i) for i in range(pods)]
    return docs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--gpus", type=int, default=8, help="GPUs per node")
    ap.add_argument("--pods", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-memo", action="store_true", help="allocate on every node for every pod (no AllocationMemo)")
    args = ap.parse_args()
    AllocationMemo.enabled_by_default = not args.no_memo
    loaded = LoadedInput()
    for i, doc in enumerate(documents(args.nodes, args.gpus, args.pods)):
        add_document(loaded, doc, "bench", i)
    finish_loading(loaded)
    config = build_config(loaded, None, "")
    cpu0, start = time.process_time(), time.perf_counter()
    result = simulate(loaded, config, seed=args.seed, record=False)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu0
    bound = sum(1 for o in result.outcomes.values() if o.result == "Scheduled")
    sched = result.scheduler
    assert sched is not None
    allocated = sum(
        len(((c.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results") or ())
        for c in sched.lister.list("ResourceClaim")
    )
    print(
        json.dumps(
            {
                "nodes": args.nodes,
                "memo": not args.no_memo,
                "gpus_per_node": args.gpus,
                "pods": args.pods,
                "bound": bound,
                "gpus_allocated": allocated,
                "seconds": round(wall, 2),
                "cpu_seconds": round(cpu, 2),
                "pods_per_second": round(bound / wall, 1) if wall else 0.0,
                "pods_per_cpu_second": round(bound / cpu, 1) if cpu else 0.0,
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            },
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
