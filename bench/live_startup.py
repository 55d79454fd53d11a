"""CPU of `kubesched run` from process start to its first scheduling cycle, phase by phase.

    export KUBESCHED_K8S_ASSETS=/root/.cache/kubesched-k8s/v1.36
    python3 bench/live_startup.py --nodes 1000 --pods 3000 --repeat 3 [--baseline-src OTHER/src]

One control plane (kubesched_testing.controlplane) with the nodes and pods created first, as
bench/live_side_by_side.py's --precreated rounds; then `python -m kubesched run` starts again and
again (alternating with the tree of --baseline-src when given) under a wrapper that notes the process's
CPU (utime + stime since exec, interpreter start included) and the main thread's at each phase and
ends the process at the first scheduling cycle: interpreter start, `import kubesched.cli`, building
SchedulerApp (kubeconfig, clients, informers started, scheduler), informers synced (the first lists,
decoded on their own threads), the first lists drained into store, cache and queue. `--importtime`
adds `-X importtime` and prints the modules that took longest; `--profile DIR` writes a cProfile of
each start (its figures then include the profiler's own cost). Each tree runs from a byte-compiled
copy (live_side_by_side.installed_copy) unless --from-checkout. Run by hand, not in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import yaml  # noqa: E402
from live_side_by_side import (  # noqa: E402
    WORKLOADS,
    Client,
    Creator,
    create_nodes,
    ensure_namespaces,
    installed_copy,
    pod_bodies,
    scheduler_config,
    started_control_plane,
)

# Runs inside the scheduler's process: marks phases by wrapping the methods that end them.
WRAPPER = r"""
import json, os, sys, time
marks = [("interpreter", time.process_time(), time.thread_time())]
profile = None
if os.environ.get("LIVE_STARTUP_PROFILE"):
    import cProfile
    profile = cProfile.Profile()
    profile.enable()
def mark(name):
    marks.append((name, time.process_time(), time.thread_time()))
import kubesched.cli
mark("import kubesched.cli")
import kubesched.app as app
from kubesched.backend.kube.cluster import ClusterStore
mark("import kubesched.app")
def after(cls, name, label, first_only=True):
    orig = getattr(cls, name)
    done = []
    def wrapped(self, *a, **kw):
        out = orig(self, *a, **kw)
        if not (first_only and done):
            done.append(1)
            mark(label)
        return out
    setattr(cls, name, wrapped)
after(app.SchedulerApp, "__init__", "SchedulerApp built")
after(ClusterStore, "wait_for_cache_sync", "informers synced")
after(ClusterStore, "drain", "first lists drained")
def first_cycle(self, *a, **kw):
    mark("first cycle reached")
    if profile is not None:
        profile.disable()
        profile.dump_stats(os.environ["LIVE_STARTUP_PROFILE"])
    with open(os.environ["LIVE_STARTUP_OUT"], "w") as f:
        json.dump(marks, f)
    sys.stderr.flush()
    os._exit(0)
app.SchedulerApp._loop = first_cycle
sys.argv = ["kubesched"] + sys.argv[1:]
sys.exit(kubesched.cli.main())
"""


def one_start(
    src: Path, config: Path, importtime: bool, profile: Path | None = None
) -> tuple[list[tuple[str, float, float]], str]:
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        env = {**os.environ, "PYTHONPATH": str(src), "LIVE_STARTUP_OUT": out.name}
        if profile is not None:
            env["LIVE_STARTUP_PROFILE"] = str(profile)
        args = [sys.executable, *(["-X", "importtime"] if importtime else []), "-c", WRAPPER]
        args += ["run", f"--config={config}", "--secure-port=0"]
        proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
        text = Path(out.name).read_text()
        if not text:
            raise RuntimeError(f"no marks from {src}: {proc.stderr[-2000:]}")
        return [tuple(m) for m in json.loads(text)], proc.stderr


def slowest_imports(stderr: str, top: int) -> str:
    rows = []
    for line in stderr.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if line.startswith("import time:") and len(parts) == 3 and parts[0].strip().isdigit():
            rows.append((int(parts[1]), int(parts[0]), parts[2].rstrip()))
    rows.sort(reverse=True)
    return "\n".join(
        f"{cum / 1000:8.1f} ms cumulative {self / 1000:7.1f} self  {name}" for cum, self, name in rows[:top]
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--pods", type=int, default=3000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--baseline-src", type=Path, default=None)
    ap.add_argument("--from-checkout", action="store_true", help="run the trees as they are, not compiled copies")
    ap.add_argument("--profile", type=Path, default=None, metavar="DIR", help="cProfile each start into DIR")
    ap.add_argument("--importtime", action="store_true", help="run under -X importtime, print the slowest imports")
    ap.add_argument("--importtime-log", type=Path, default=None, help="with --importtime: the first run's whole log")
    args = ap.parse_args(argv)
    trees = [("kubesched", ROOT / "src")] + ([("baseline", args.baseline_src)] if args.baseline_src else [])
    results: dict[str, list[list[tuple[str, float, float]]]] = {name: [] for name, _ in trees}
    if args.profile is not None:
        args.profile.mkdir(parents=True, exist_ok=True)
    with started_control_plane(None) as cp:
        client = Client(cp.apiserver_port)
        w = WORKLOADS["SchedulingBasic"]
        ensure_namespaces(client, w.namespaces)
        create_nodes(client, w, args.nodes)
        creator = Creator(client.port, pod_bodies(w.measured_pod, args.pods))
        creator.start()
        creator.join()
        if not args.from_checkout:
            trees = [(name, installed_copy(src, cp.workdir / "trees" / name)) for name, src in trees]
        config = cp.workdir / "scheduler-config.yaml"
        config.write_text(yaml.safe_dump(scheduler_config(cp.kubeconfig_path)))
        for rep in range(args.repeat):
            for name, src in trees if rep % 2 == 0 else list(reversed(trees)):
                profile = args.profile / f"{name}-{rep}.prof" if args.profile is not None else None
                marks, stderr = one_start(src, config, args.importtime, profile)
                results[name].append(marks)
                line = ", ".join(f"{label} {proc:.3f}/{thread:.3f}" for label, proc, thread in marks)
                print(f"{name} #{rep}: {line}", file=sys.stderr)
                if args.importtime and rep == 0:
                    print(slowest_imports(stderr, 40), file=sys.stderr)
                    if args.importtime_log is not None:
                        args.importtime_log.write_text(stderr)
    print(f"\nload average {os.getloadavg()[0]:.2f}; CPU s (process / main thread) at the end of each phase, median")
    for name, runs in results.items():
        labels = [label for label, _, _ in runs[0]]
        cells = []
        for i, label in enumerate(labels):
            proc = statistics.median(r[i][1] for r in runs)
            thread = statistics.median(r[i][2] for r in runs)
            cells.append(f"{label} {proc:.3f}/{thread:.3f}")
        print(f"{name}: " + "; ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
