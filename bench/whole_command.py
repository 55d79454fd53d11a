"""Time the whole `kubesched simulate` command on scheduler_perf-sized manifests.

    python3 bench/whole_command.py SchedulingBasic            # 5000 nodes, 5000 init, 50000 measured pods
    python3 bench/whole_command.py all --output json table
    python3 bench/whole_command.py SchedulingBasic --write /tmp/basic.yaml   # only write the input
    python3 bench/whole_command.py all --scale 100           # every count / 100: a quick check, no figures

Each workload is written as one YAML file (a `kind: List`, as `kubectl get -o yaml` prints,
or `--multi` for one document per object), then `kubesched simulate FILE --record none` runs
in a child process twice (--seed 1): with the setup objects only and with everything.
pods/s is the marginal rate over the measured pods, measured / (full - setup), in wall
seconds and in CPU seconds (steadier on a shared machine); CPU seconds and peak RSS come
from the child's rusage. `--src` runs another source tree (say, an older checkout) for a
before/after on the same inputs. Workloads with churn express it as a
Scenario (docs/scenarios.md) on the virtual clock, its steps from 1 s on (the setup objects
are scheduled by then). Run by hand, not in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scheduler_perf import Nodes, Pods, Spec, _make, node_objects  # noqa: E402

Obj = dict[str, Any]
SRC = Path(__file__).resolve().parent.parent / "src"
D = "pod-default"


def _nodes(group: Nodes) -> list[Obj]:
    """The nodes of one createNodes op, named and built as scheduler_perf.py builds them."""
    return node_objects(Spec("whole-command", None, (group,), (), Pods(0, D, "")))


def _pods(template: str, namespace: str, indexes: range) -> list[Obj]:
    """Pods `indexes` of a scheduler_perf.py pod template."""
    return [_make(template, namespace, i) for i in indexes]


def _scenario(steps: list[Obj]) -> Obj:
    return {"apiVersion": "kubesched.io/v1alpha1", "kind": "Scenario", "metadata": {"name": "churn"}, "steps": steps}


def _ms(t: int) -> str:
    return f"{t}ms"


@dataclass
class Workload:
    """Setup objects (timed alone for the baseline) and what the measured run adds."""

    setup: list[Obj]
    measured: list[Obj]  # plain objects and Scenario documents


def _div(n: int, scale: int) -> int:
    """A count divided by --scale, at least 1."""
    return max(1, n // scale)


def basic(scale: int = 1) -> Workload:
    """SchedulingBasic/5000Nodes_50000Pods: everything at time 0."""
    setup = [*_nodes(Nodes(_div(5000, scale))), *_pods(D, "namespace-1", range(_div(5000, scale)))]
    return Workload(setup, _pods(D, "namespace-2", range(_div(50000, scale))))


def unschedulable(scale: int = 1) -> Workload:
    """Unschedulable/5kNodes/100Init/10kPods: a 9-CPU priority-10 pod that never fits every 200 ms, while the
    measured pods arrive 100 per 200 ms (so the unschedulable pool grows as they schedule)."""
    setup = [*_nodes(Nodes(_div(5000, scale))), *_pods(D, "namespace-1", range(_div(100, scale)))]
    steps = [
        {
            "at": _ms(1000 + 200 * s),
            "create": [
                _make("pod-high-priority-large-cpu", "namespace-2", s),
                *_pods(D, "namespace-3", range(100 * s, 100 * s + 100)),
            ],
        }
        for s in range(_div(100, scale))
    ]
    return Workload(setup, [_scenario(steps)])


def gated(scale: int = 1) -> Workload:
    """SchedulingWhileGated/1Node_10000GatedPods: the measured light pods arrive 50 a second while 50 init
    pods a second are deleted; 10000 gated pods wait throughout."""
    setup = [
        *_nodes(Nodes(1, "node-with-name")),
        *_pods("gated-pod", "namespace-1", range(_div(10000, scale))),
        *_pods("light-pod", "namespace-3", range(_div(20000, scale))),
    ]
    steps = [
        {
            "at": f"{s + 1}s",
            "create": _pods("light-pod", "namespace-5", range(50 * s, 50 * s + 50)),
            "delete": [
                {"kind": "Pod", "namespace": "namespace-3", "name": p["metadata"]["name"]}
                for p in _pods("light-pod", "namespace-3", range(50 * s, 50 * s + 50))
            ],
        }
        for s in range(_div(400, scale))
    ]
    return Workload(setup, [_scenario(steps)])


def preemption_async(scale: int = 1) -> Workload:
    """PreemptionAsync/5000Nodes: nodes filled by 20000 low-priority pods; a 3-CPU priority-10 pod every 200 ms
    preempts, while the measured pods arrive 100 per 200 ms."""
    setup = [*_nodes(Nodes(_div(5000, scale))), *_pods("pod-low-priority", "namespace-1", range(_div(20000, scale)))]
    steps = [
        {
            "at": _ms(1000 + 200 * s),
            "create": [
                _make("pod-high-priority", "namespace-2", s),
                *_pods(D, "namespace-3", range(100 * s, 100 * s + 100)),
            ],
        }
        for s in range(_div(50, scale))
    ]
    return Workload(setup, [_scenario(steps)])


MEASURED: dict[str, Callable[[int], int]] = {
    "SchedulingBasic": lambda scale: _div(50000, scale),
    "Unschedulable": lambda scale: 100 * _div(100, scale),
    "SchedulingWhileGated": lambda scale: 50 * _div(400, scale),
    "PreemptionAsync": lambda scale: 100 * _div(50, scale),
}
"""How many measured pods each workload's pods/s counts, at a --scale: known without building the objects,
which only the children that write the inputs hold (their memory would count as the runs')."""
WORKLOADS: dict[str, Callable[[int], Workload]] = {
    "SchedulingBasic": basic,
    "Unschedulable": unschedulable,
    "SchedulingWhileGated": gated,
    "PreemptionAsync": preemption_async,
}


def write(path: Path, objects: list[Obj], multi: bool) -> None:
    """A List (as `kubectl get -o yaml` prints) of the plain objects, Scenario documents after it; or one
    document per object."""
    plain = [o for o in objects if o["kind"] != "Scenario"]
    listed = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": plain}
    docs = plain if multi else [listed]
    docs += [o for o in objects if o["kind"] == "Scenario"]
    with path.open("w", encoding="utf-8") as f:
        yaml.dump_all(docs, f, Dumper=yaml.CSafeDumper, sort_keys=False)


def run(path: Path, output: str, out: Path, src: Path) -> dict[str, float]:
    """One `kubesched simulate` in a child process: wall and CPU seconds, peak RSS, output bytes."""
    cmd = [sys.executable, "-m", "kubesched", "simulate", str(path), "--output", output, "--record", "none"]
    cmd += ["--seed", "1"]
    env = {**os.environ, "PYTHONPATH": str(src)}
    start = time.perf_counter()
    with out.open("wb") as f:
        proc = subprocess.Popen(cmd, stdout=f, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed with status {os.waitstatus_to_exitcode(status)}")
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "output_mb": round(out.stat().st_size / 1e6, 2),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("workload", choices=[*WORKLOADS, "all"])
    ap.add_argument("--output", nargs="+", choices=("json", "table"), default=["json"])
    ap.add_argument("--multi", action="store_true", help="one YAML document per object instead of a List")
    ap.add_argument("--write", type=Path, help="only write the input to this file")
    ap.add_argument("--setup-only", action="store_true", help="with --write: the setup objects alone")
    ap.add_argument("--keep", type=Path, help="directory to keep inputs and outputs in")
    ap.add_argument("--src", type=Path, default=SRC, help="the kubesched source tree to run (default: this one)")
    ap.add_argument("--scale", type=int, default=1, help="divide node, pod and churn-step counts by this")
    args = ap.parse_args()
    if args.scale < 1:
        ap.error("--scale must be at least 1")
    names = list(WORKLOADS) if args.workload == "all" else [args.workload]
    if args.write:
        w = WORKLOADS[names[0]](args.scale)
        write(args.write, w.setup if args.setup_only else [*w.setup, *w.measured], args.multi)
        return 0
    work = args.keep or Path(tempfile.mkdtemp(prefix="whole-command-"))
    work.mkdir(parents=True, exist_ok=True)
    for name in names:
        setup_file, full_file = work / f"{name}-setup.yaml", work / f"{name}.yaml"
        # Written by a child: a child forked from a parent holding the objects would count its memory as theirs.
        for path, only in ((setup_file, ["--setup-only"]), (full_file, [])):
            multi = ["--multi"] if args.multi else []
            scale = ["--scale", str(args.scale)]
            subprocess.run([sys.executable, __file__, name, "--write", str(path), *only, *multi, *scale], check=True)
        for output in args.output:
            base = run(setup_file, output, work / f"{name}-setup.{output}", args.src)
            full = run(full_file, output, work / f"{name}.{output}", args.src)
            wall, cpu = full["wall_s"] - base["wall_s"], full["cpu_s"] - base["cpu_s"]
            row = {
                "workload": name if args.scale == 1 else f"{name}@1/{args.scale}",
                "output": output,
                "input_mb": round(full_file.stat().st_size / 1e6, 1),
                "setup": base,
                "full": full,
                "pods_per_s": round(MEASURED[name](args.scale) / wall, 1) if wall > 0 else None,
                "pods_per_cpu_s": round(MEASURED[name](args.scale) / cpu, 1) if cpu > 0 else None,
            }
            print(json.dumps(row), flush=True)
        if not args.keep:
            for f in work.glob(f"{name}*"):
                f.unlink()
    if not args.keep:
        work.rmdir()
    return 0


if __name__ == "__main__":
    sys.exit(main())
