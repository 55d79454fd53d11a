"""Where the whole `kubesched simulate` command spends its CPU and memory, phase by phase.

    python3 bench/phases.py cluster.yaml                       # simulate --output table, one line of JSON
    python3 bench/phases.py cluster.yaml -- --output json --record none
    python3 bench/realistic.py --phases                        # the realistic cluster, generated first

The command runs in a child process (so its peak RSS is its own), as `kubesched simulate` runs, with
timers around its phases: load (read and parse the YAML, check kinds and names), admit (decoding
against the schema, defaulting, admission, validation, parsing), populate (the embedded cluster filled:
the informers' events, the workload controllers started), schedule (the scheduling and binding cycles),
output (the table or JSON written) and report (--report's HTML). CPU is process time (user + system
of the process, so other jobs on the machine do not count); peak RSS after each phase is the high-water
mark so far (it never falls). `total_cpu_s` is the child's whole CPU time, interpreter start included.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

PHASES = ("load", "admit", "populate", "schedule", "output", "report")


def _child(argv: list[str], skip_schedule: bool = False) -> int:
    """Run `kubesched simulate ARGV` here, timing its phases; the figures go to fd 3's file as JSON.
    `skip_schedule`: the scheduling loop returns at once (every pod stays pending), to measure the rest."""
    import kubesched.cli as cli
    import kubesched.scheduler as scheduler
    import kubesched.simulator.commands as commands
    import kubesched.simulator.load as load
    import kubesched.simulator.run as run

    cpu: dict[str, float] = {}
    rss: dict[str, float] = {}

    def timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kw: Any) -> Any:
            start = time.process_time()
            try:
                return fn(*args, **kw)
            finally:
                cpu[name] = cpu.get(name, 0.0) + time.process_time() - start
                rss[name] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

        return wrapper

    load.load_manifests = timed("load", load.load_manifests)
    run.prepare_objects = timed("admit", run.prepare_objects)
    run.simulate = timed("simulate", run.simulate)
    loop = (lambda self, until=None: None) if skip_schedule else scheduler.Scheduler.run
    scheduler.Scheduler.run = timed("schedule", loop)  # type: ignore[method-assign]
    commands._write = timed("output", commands._write)
    commands._write_report = timed("report", commands._write_report)
    code = cli.main(["simulate", *argv])
    sim = cpu.pop("simulate", None)
    rss.pop("simulate", None)
    if sim is not None and "schedule" in cpu:
        cpu["populate"] = sim - cpu.get("admit", 0.0) - cpu["schedule"]
        rss["populate"] = rss["schedule"]  # the peak seen when scheduling ends covers populating
    usage = resource.getrusage(resource.RUSAGE_SELF)
    figures = {
        "exit": code,
        **({"schedule": "skipped"} if skip_schedule else {}),
        "cpu_s": {p: round(cpu[p], 2) for p in PHASES if p in cpu},
        "peak_rss_mb": {p: round(rss[p], 1) for p in PHASES if p in rss},
        "total_cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "total_peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
    }
    with os.fdopen(3, "w") as sink:
        json.dump(figures, sink)
    return code


def measure(argv: list[str], stdout: Any = subprocess.DEVNULL, skip_schedule: bool = False) -> dict[str, Any]:
    """The phases of `kubesched simulate ARGV`, run in a child process (standard output to `stdout`)."""
    read, write = os.pipe()
    start = time.perf_counter()
    child = ["--child-skip-schedule" if skip_schedule else "--child"]
    proc = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), *child, *argv],
        stdout=stdout,
        pass_fds=(write,),
        env={**os.environ, "KUBESCHED_PHASES_FD": str(write)},
    )
    os.close(write)
    with os.fdopen(read) as source:
        text = source.read()
    proc.wait()
    figures: dict[str, Any] = json.loads(text) if text else {"exit": proc.returncode}
    figures["wall_s"] = round(time.perf_counter() - start, 1)
    return figures


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] in (["--child"], ["--child-skip-schedule"]):
        fd = int(os.environ["KUBESCHED_PHASES_FD"])
        if fd != 3:
            os.dup2(fd, 3)
        return _child(argv[1:], skip_schedule=argv[0] == "--child-skip-schedule")
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", metavar="FILE", help="manifests, as `kubesched simulate` takes them")
    ap.add_argument("--out", help="write the command's standard output here (default: discarded)")
    ap.add_argument(
        "--skip-schedule",
        action="store_true",
        help="the scheduling loop returns at once: load, admit, populate and output of every pod pending",
    )
    args, rest = ap.parse_known_args(argv)
    rest = [a for a in rest if a != "--"]
    if "--output" not in rest:
        rest = ["--output", "table", *rest]
    if args.out:
        with open(args.out, "w") as sink:
            figures = measure([*args.files, "-q", *rest], stdout=sink, skip_schedule=args.skip_schedule)
    else:
        figures = measure([*args.files, "-q", *rest], stdout=subprocess.DEVNULL, skip_schedule=args.skip_schedule)
    print(json.dumps(figures))
    return 0 if figures.get("exit") == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
